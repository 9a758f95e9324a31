"""kit.bisect.bounds: the two ends, their direction decided once, and their source kept."""

from __future__ import annotations

import pytest

from kit.bisect.bounds import COMMAND_LINE, Bounds
from kit.bisect.options import parse_options
from kit.bisect.search import ProbeOutcome
from kit.config import load_matrix
from tests.bisect_machine import ROOT


@pytest.mark.parametrize(("good", "bad", "fix", "older", "old_outcome"), [
    ("0.6.0", "0.4.35", True, "0.4.35", ProbeOutcome.BAD),   # the bug went away: bad is older
    ("0.4.35", "0.6.0", False, "0.4.35", ProbeOutcome.GOOD),  # it appeared: good is older
    ("0.4.9", "0.4.10", False, "0.4.9", ProbeOutcome.GOOD),   # numbers, not strings: "0.4.10" > "0.4.9"
])
def test_the_direction_is_read_from_the_versions_once(good: str, bad: str, fix: bool, older: str,
                                                      old_outcome: ProbeOutcome) -> None:
    bounds = Bounds.of_releases(good, bad)
    assert (bounds.fix, bounds.regression, bounds.older, bounds.old_outcome) == (fix, not fix, older, old_outcome)
    assert (bounds.flag(good), bounds.flag(bad), bounds.other(good), bounds.other(bad)) == ("--good", "--bad", bad, good)


def test_both_flags_given_are_the_bounds_as_the_command_line_said() -> None:
    matrix = load_matrix(ROOT / "matrix.toml")
    given = Bounds.given(parse_options(matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35"]).specs.search)
    assert given == Bounds("0.6.0", "0.4.35", True, COMMAND_LINE, "bounds from the command line: good 0.6.0, bad 0.4.35")
