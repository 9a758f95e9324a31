"""kit/matrix/progress.py: a sweep's progress line and its clock text (the sweep's own lines: test_matrix_sweep)."""

from __future__ import annotations

import pytest

from kit.matrix.progress import ETA_AFTER, Progress, clock_text


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (0.4, "0s"), (59.4, "59s"), (59.6, "1m00s"), (60, "1m00s"),
                                           (64, "1m04s"), (3599, "59m59s"), (3599.6, "1h00m"), (3600, "1h00m"),
                                           (7380, "2h03m"), (90_000, "25h00m")])
def test_clock_text_at_its_unit_boundaries(seconds: float, text: str) -> None:
    # Rounding before choosing the unit: 59.6 s must not read "60s", nor 3599.6 s "60m00s".
    assert clock_text(seconds) == text


def test_elapsed_counts_from_the_first_cell_not_from_construction() -> None:
    now = [100.0]
    shown = Progress(total=2, clock=lambda: now[0])
    now[0] = 250.0  # the sweep planned for 150 s before its first cell
    assert shown.starting("a") == "[1/2] a (1 more after it, 0s elapsed)"
    now[0] = 262.0
    shown.finished(12.0)
    assert shown.starting("b") == "[2/2] b (0 more after it, 12s elapsed)"


def test_the_eta_is_the_mean_cell_times_the_cells_left_including_this_one() -> None:
    # Cells of 10, 20 and 30 s: mean 20 s; at cell 4 of 5 two cells are left (this one and the next).
    now = [0.0]
    shown = Progress(total=5, clock=lambda: now[0])
    for seconds in (10.0, 20.0, 30.0):
        shown.starting("c")
        now[0] += seconds
        shown.finished(seconds)
    assert shown.starting("d") == "[4/5] d (1 more after it, 1m00s elapsed, ETA 40s)"


def test_no_eta_before_enough_cells_ran() -> None:
    shown = Progress(total=10, clock=lambda: 0.0)
    for _ in range(ETA_AFTER - 1):
        shown.starting("c")
        shown.finished(5.0)
    assert "ETA" not in shown.starting("c")
    shown.finished(5.0)
    assert shown.starting("c").endswith(", ETA 35s)")  # 7 cells of 5 s left
