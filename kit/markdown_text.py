"""Text from a record, a script or a command line, shown as text and nothing more: on a terminal and in markdown.

`inert` is the one rule for a terminal: a program's output and exit message,
a record's reason and a file name may hold escape sequences (OSC 52 writes
the clipboard, OSC 8 hides a link, CSI clears the screen), other control
characters, or bidi overrides (U+202E shows text reversed); each is written
out (``\\x1b``, ``\\u202e``) instead, at every edge where text leaves the kit:
its console (kit/cli.py's streams and log), and every markdown file it writes
(`text`, `code`, `kit.atomic_files`).

A record is data a stranger may have written: its ``reproduce`` holding a
backtick ends the code span around it, a raw ``<a href>`` renders as a link,
and a ``cpu_model`` of HTML passes through, unless every field is escaped
where a report prints it. `text` escapes what markdown or HTML would read as
markup (GitHub's flavour: ``|`` included, since the reports are tables);
`code` makes one inline code span that holds any text whole.
"""

from __future__ import annotations

import re

# Every control character but tab and newline (C0, DEL, C1), and the characters that reorder or break a line as a
# terminal or a browser shows it: the bidi embeddings, overrides and isolates, the marks, and the line separators.
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_CONTROL}]")
_COLOUR_OR_UNSAFE = re.compile(f"\x1b\\[[0-9;]*m|[{_CONTROL}]")
"""A colour (SGR: ESC [ digits m) is the one sequence a child's echoed output keeps."""


def inert(value: object, colours: bool = False) -> str:
    """``value`` as text that shows as itself: each control or reordering character written out (``\\x1b``).

    ``colours``: keep colour codes (a check's own output echoed to the console); nowhere else.
    """
    found = _COLOUR_OR_UNSAFE if colours else _UNSAFE
    return found.sub(_written_out, str(value))


def _written_out(match: re.Match[str]) -> str:
    char = match.group()
    if len(char) > 1:  # a colour code, kept
        return char
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


# What ends or starts markup inside a line: '_' only where it could open emphasis (not inside a word, so
# key figures such as all_gathers=1 read as they are), and a ']' only where a link or image would follow
# (``](`` or ``][``): inside a line there is no link definition for a lone ``[cut 2 kB]`` to name.
_SPECIAL = re.compile(r"[\\`*|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\](?=[(\[])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def text(value: object) -> str:
    """``value`` as markdown text that renders as exactly those characters, on one line."""
    flat = inert(str(value).replace("\r", " ").replace("\n", " "))
    escaped = "".join(_HTML.get(char, char) for char in flat)
    return _SPECIAL.sub(lambda match: "\\" + match.group(0), escaped)


def code(value: object, in_table: bool = False) -> str:
    """``value`` as one inline code span: fenced by more backticks than it holds in a row, on one line.

    ``in_table``: inside a table cell, where GitHub ends the cell at any ``|``, code span or not.
    """
    flat = inert(str(value).replace("\r", " ").replace("\n", " "))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") else flat
    span = f"{fence}{padded}{fence}"
    return span.replace("|", "\\|") if in_table else span


def fenced(value: object) -> list[str]:
    """``value`` as a fenced code block's lines, whole: fenced by more backticks than it holds in a row (at least
    three), so a command holding backticks is shown as it is, not rewritten to fit the fence."""
    body = inert(value)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, body, fence]
