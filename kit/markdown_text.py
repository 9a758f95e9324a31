"""Text from a record, a script or a command line, printed into markdown as text and nothing more.

A record is data a stranger may have written: its ``reproduce`` holding a
backtick ends the code span around it, a raw ``<a href>`` renders as a link,
and a ``cpu_model`` of HTML passes through, unless every field is escaped
where a report prints it. `text` escapes what markdown or HTML would read as
markup (GitHub's flavour: ``|`` included, since the reports are tables);
`code` makes one inline code span that holds any text whole.
"""

from __future__ import annotations

import re

# What ends or starts markup inside a line: '_' only where it could open emphasis (not inside a word, so
# key figures such as all_gathers=1 read as they are), and a ']' only where a link or image would follow
# (``](`` or ``][``): inside a line there is no link definition for a lone ``[cut 2 kB]`` to name.
_SPECIAL = re.compile(r"[\\`*|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\](?=[(\[])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def text(value: object) -> str:
    """``value`` as markdown text that renders as exactly those characters, on one line."""
    flat = str(value).replace("\r", " ").replace("\n", " ")
    escaped = "".join(_HTML.get(char, char) for char in flat)
    return _SPECIAL.sub(lambda match: "\\" + match.group(0), escaped)


def code(value: object, in_table: bool = False) -> str:
    """``value`` as one inline code span: fenced by more backticks than it holds in a row, on one line.

    ``in_table``: inside a table cell, where GitHub ends the cell at any ``|``, code span or not.
    """
    flat = str(value).replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") else flat
    span = f"{fence}{padded}{fence}"
    return span.replace("|", "\\|") if in_table else span
