"""A long line whose echo limit falls inside a multibyte character (docs/faults.md, "Output"): the console line
leaves the split character out and counts it as cut; it never shows a replacement character the script did not
print."""

from __future__ import annotations

from kit.run.child_output import Lines, Tail
from kit.text_bounds import LINE_ECHO_BYTES


def test_an_echoed_line_cut_inside_a_character_leaves_it_out() -> None:
    echoed: list[str] = []
    lines = Lines(Tail(), echo=echoed.append)
    # 7,999 ASCII bytes, then ten 2-byte characters: the 8,000-byte echo limit splits the first "é".
    lines.feed(("a" * (LINE_ECHO_BYTES - 1) + "é" * 10 + "\n").encode())
    assert echoed == ["a" * (LINE_ECHO_BYTES - 1) + "… [cut 20 bytes]"]
