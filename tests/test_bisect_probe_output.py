"""kit.bisect.probe.output: a probe's output kept whole in its log, quoted bounded in the report."""

from __future__ import annotations

from pathlib import Path

from kit.bisect.probe.output import output_tail


def test_the_tail_is_the_last_lines_each_bounded(tmp_path: Path) -> None:
    log = tmp_path / "probe.log"
    log.write_text("".join(f"line {n}\n" for n in range(40)) + "\n   \n" + "x" * 1000 + "\n")
    tail = output_tail(log, lines=3, width=10)
    assert tail == ["line 38", "line 39", "xxxxxxxxxx… [cut 990 bytes]"]  # blank lines say nothing
    assert output_tail(tmp_path / "missing.log") == []

