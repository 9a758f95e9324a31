"""kit/run/child_output.py: chunks of a child's output become bounded lines, echoed and kept in a bounded tail."""

from __future__ import annotations

from kit.run.child_output import Lines, Tail
from kit.text_bounds import LINE_ECHO_BYTES, LINE_KEEP_BYTES, TAIL_BYTES, TAIL_LINES


def _lines(tail: Tail | None = None, prefix: str = "") -> tuple[Lines, list[str]]:
    echoed: list[str] = []
    return Lines(tail if tail is not None else Tail(), prefix, echo=echoed.append), echoed


def test_a_line_split_over_chunks_is_one_line() -> None:
    # Guards against emitting a line per chunk instead of per newline.
    lines, echoed = _lines()
    for chunk in (b"hel", b"lo wo", b"rld\nsec", b"ond\n"):
        lines.feed(chunk)
    assert echoed == ["hello world", "second"]
    assert lines.tail.lines() == ["hello world", "second"]


def test_several_lines_in_one_chunk_and_empty_lines_are_kept_in_order() -> None:
    # An empty line is a line: dropping it would shift what a bad_if or a reader sees.
    lines, echoed = _lines()
    lines.feed(b"a\n\nb\n")
    assert echoed == ["a", "", "b"]


def test_a_last_line_without_newline_counts_only_at_close() -> None:
    lines, echoed = _lines()
    lines.feed(b"done\npartial")
    assert echoed == ["done"]
    lines.close()
    assert echoed == ["done", "partial"]


def test_close_after_a_newline_adds_no_empty_line() -> None:
    # Guards against close() always emitting, which would add a phantom "" to every tail.
    lines, echoed = _lines()
    lines.feed(b"x\n")
    lines.close()
    lines.close()
    assert echoed == ["x"]


def test_windows_line_endings_lose_their_carriage_return() -> None:
    lines, echoed = _lines()
    lines.feed(b"one\r\ntwo\r\n")
    assert echoed == ["one", "two"]


def test_the_prefix_goes_on_every_echoed_and_kept_line() -> None:
    lines, echoed = _lines(prefix="[p1] ")
    lines.feed(b"a\nb\n")
    assert echoed == ["[p1] a", "[p1] b"]
    assert lines.tail.lines() == ["[p1] a", "[p1] b"]


def test_a_line_of_exactly_the_echo_limit_is_echoed_whole_and_kept_cut() -> None:
    # Boundary: an off-by-one would mark a whole line as cut (or keep one byte too many).
    lines, echoed = _lines()
    lines.feed(b"x" * LINE_ECHO_BYTES + b"\n")
    assert echoed == ["x" * LINE_ECHO_BYTES]
    kept = lines.tail.lines()[0]
    assert kept == "x" * LINE_KEEP_BYTES + f"… [cut {(LINE_ECHO_BYTES - LINE_KEEP_BYTES) / 1000:.1f} kB]"


def test_a_line_of_exactly_the_keep_limit_is_kept_whole() -> None:
    lines, _echoed = _lines()
    lines.feed(b"y" * LINE_KEEP_BYTES + b"\n")
    assert lines.tail.lines() == ["y" * LINE_KEEP_BYTES]


def test_a_long_line_counts_every_byte_it_dropped_even_over_many_chunks() -> None:
    # The bytes past the first LINE_ECHO_BYTES are only counted; the count must add up across chunks.
    lines, echoed = _lines()
    for _ in range(100):
        lines.feed(b"z" * 10_000)
    lines.feed(b"\nnext\n")
    assert echoed[0] == "z" * LINE_ECHO_BYTES + "… [cut 992.0 kB]"
    assert lines.tail.lines()[0] == "z" * LINE_KEEP_BYTES + "… [cut 998.0 kB]"
    assert echoed[1] == "next"  # the count restarts with the next line


def test_a_multibyte_character_split_by_the_keep_limit_is_left_out_not_garbled() -> None:
    # 1999 ASCII bytes, then 2-byte characters: the keep limit falls inside one.
    lines, _echoed = _lines()
    lines.feed(("a" * (LINE_KEEP_BYTES - 1) + "é" * 10 + "\n").encode())
    # The split character's first byte counts as cut: 1 + 19 bytes past the limit.
    assert lines.tail.lines() == ["a" * (LINE_KEEP_BYTES - 1) + "… [cut 20 bytes]"]


def test_bytes_that_are_not_utf8_become_replacement_characters_not_an_error() -> None:
    lines, echoed = _lines()
    lines.feed(b"bad \xff\xfe bytes\n")
    assert echoed == ["bad \ufffd\ufffd bytes"]


def test_no_echo_still_keeps_the_tail() -> None:
    tail = Tail()
    lines = Lines(tail, echo=None)
    lines.feed(b"quiet\n")
    assert tail.lines() == ["quiet"]


def test_the_tail_keeps_only_the_last_lines() -> None:
    tail = Tail(max_lines=3)
    for i in range(10):
        tail.add(f"line {i}")
    assert tail.lines() == ["line 7", "line 8", "line 9"]


def test_the_tail_drops_its_oldest_lines_to_stay_within_its_bytes() -> None:
    tail = Tail(max_lines=100, max_bytes=10)
    for text in ("aaaa", "bbbb", "cccc"):
        tail.add(text)
    assert tail.lines() == ["bbbb", "cccc"]  # 12 bytes would be over 10


def test_the_tail_counts_bytes_not_characters() -> None:
    # "é" is 2 bytes: counting characters would keep 16 bytes under a 10-byte bound.
    tail = Tail(max_lines=100, max_bytes=10)
    tail.add("éééé")
    tail.add("éééé")
    assert tail.lines() == ["éééé"]


def test_a_single_line_over_the_byte_bound_is_still_kept() -> None:
    # The newest line is never dropped: an empty tail would hide the one line that explains a failure.
    tail = Tail(max_lines=100, max_bytes=10)
    tail.add("x" * 50)
    assert tail.lines() == ["x" * 50]


def test_the_default_tail_holds_its_documented_bounds() -> None:
    tail = Tail()
    for i in range(TAIL_LINES + 5):
        tail.add(str(i))
    assert len(tail.lines()) == TAIL_LINES
    assert tail.lines()[-1] == str(TAIL_LINES + 4)
    for _ in range(TAIL_LINES):
        tail.add("w" * LINE_KEEP_BYTES)
    assert sum(len(line) for line in tail.lines()) <= TAIL_BYTES


def test_lines_of_two_children_share_one_tail() -> None:
    tail = Tail()
    first, second = Lines(tail, "[0] ", echo=None), Lines(tail, "[1] ", echo=None)
    first.feed(b"a\n")
    second.feed(b"b\n")
    first.feed(b"c\n")
    assert tail.lines() == ["[0] a", "[1] b", "[0] c"]
