"""kit.bisect.report.advice: a tip that follows the evidence; pure cases, then end to end."""

from __future__ import annotations

from typing import Callable, List

import pytest

from kit.bisect.report import changelog
from kit.bisect import driver
from kit.bisect.report.advice import changes_seen, scan_argv, scan_tip
from kit.bisect.options import BisectOptions
from kit.bisect.search import ProbeOutcome
from kit.errors import UsageError
from tests.fake_releases import FakeReleases
from tests.bisect_machine import CHECKS, RELEASES, record_run

G, B, S = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP
OPTIONS = BisectOptions(check="scaling", script=None, good="0.6.0", bad="0.4.35",
                  argv=("--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35", "--commits",
                        "--jax-repo", "../jax"))


def test_changes_are_counted_over_the_known_outcomes_inside_the_bounds_skips_left_out() -> None:
    outcomes = {"0.4.30": B, "0.4.35": G, "0.5.0": S, "0.5.1": B, "0.5.2": B, "0.6.0": G, "0.7.0": B}
    assert changes_seen(outcomes, "0.4.35", "0.6.0") == [("0.4.35", G), ("0.5.1", B), ("0.6.0", G)]


def test_one_change_is_no_reason_for_all() -> None:
    assert scan_tip({"0.4.35": B, "0.5.2": B, "0.5.3": G, "0.6.0": G}, "0.6.0", "0.4.35", OPTIONS.quoted_argv) is None


def test_two_changes_give_the_all_command_without_commits() -> None:
    tip = scan_tip({"0.4.35": G, "0.5.0": B, "0.6.0": G}, "0.6.0", "0.4.35", OPTIONS.quoted_argv)
    assert tip is not None
    assert "changing 2 times inside the bounds (jax 0.4.35 good → jax 0.5.0 bad → jax 0.6.0 good)" in tip
    assert tip.endswith("`nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35 --all`")
    assert list(scan_argv(OPTIONS.quoted_argv)) == ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35", "--all"]


@pytest.fixture
def releases(fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> FakeReleases:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    return fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)


def test_a_bug_that_came_and_went_gets_all_not_move_bad(releases: FakeReleases) -> None:
    """--bad 0.4.35 tests good, and the records show 0.5.0 bad in between: moving --bad would hide that."""
    for version, verdict in (("0.4.35", "unaffected"), ("0.5.0", "affected"), ("0.6.0", "unaffected")):
        releases.behave(version, verdict)
    record_run(releases, "0.5.0", "affected")
    lines: List[str] = []
    with pytest.raises(UsageError, match=r"--bad 0\.4\.35 is good \(unaffected\), not bad") as stop:
        driver.main(releases.matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35"], lines.append)
    tip = stop.value.tip or ""
    assert "move --bad" not in tip
    assert "jax 0.4.35 good → jax 0.5.0 bad → jax 0.6.0 good" in tip
    assert tip.endswith("--check scaling --good 0.6.0 --bad 0.4.35 --all`")


def test_without_such_evidence_the_tip_still_says_move_the_bound(releases: FakeReleases) -> None:
    for version in RELEASES:
        releases.behave(version, "unaffected")
    with pytest.raises(UsageError) as stop:
        driver.main(releases.matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35"], lambda _l: None)
    assert (stop.value.tip or "").startswith("move --bad away from 0.6.0")
