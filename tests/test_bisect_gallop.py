"""kit.bisect.gallop: one bound given, the other found (pure cases), and end to end on the fake machine."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Callable, Dict, List, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.bisect.report import changelog
from kit.bisect import driver
from kit.bisect.gallop import Galloped, _first_skip, bounds_found, gallop
from kit.bisect.specs import HowToSearch
from kit.bisect.search import ProbeOutcome
from kit.errors import UsageError
from tests.fake_releases import FakeReleases
from tests.bisect_machine import CHECKS, RELEASES, report_json, verdicts

G, B, S = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP


class Probe:
    """Answers from a list by index and records every call."""

    def __init__(self, outcomes: Sequence[ProbeOutcome]) -> None:
        self.outcomes, self.calls = list(outcomes), []  # type: ignore[var-annotated]

    def __call__(self, index: int) -> ProbeOutcome:
        self.calls.append(index)
        return self.outcomes[index]


def run_gallop(outcomes: Sequence[ProbeOutcome], given_outcome: ProbeOutcome = B, known: Dict[int, ProbeOutcome] | None = None,
               far_first: bool = True) -> tuple[Galloped[int], List[int]]:
    probe = Probe(outcomes)
    return gallop(list(range(len(outcomes))), given_outcome, probe, dict(known or {}), far_first), probe.calls


def test_the_newest_is_probed_first_then_doubling_steps_from_the_bound() -> None:
    # Fixed at index 6 of 20: newest (19) good; then 0, 2, 6 (1, 3, 7 away from the bound).
    result, calls = run_gallop([B] * 6 + [G] * 14)
    assert calls == [19, 0, 2, 6]
    assert (result.found, result.near, result.far_end) == (6, 2, 19)


def test_a_change_next_to_the_bound_costs_two_probes() -> None:
    result, calls = run_gallop([G] * 20)
    assert calls == [19, 0]
    assert (result.found, result.near) == (0, None)


def test_still_bad_at_the_far_end_stops_after_one_probe() -> None:
    result, calls = run_gallop([B] * 12)
    assert calls == [11]
    assert result.found is None
    assert result.far_end == 11


def test_untestable_newest_releases_fall_back_toward_the_bound() -> None:
    result, calls = run_gallop([B, B, G, G, G, S, S])
    assert calls[:3] == [6, 5, 4]
    assert result.far_end == 4
    assert result.found == 2


def test_known_outcomes_are_used_without_a_probe() -> None:
    # The cache already knows 9 is good and 4 bad: the gallop starts from 4 and never probes past 9.
    result, calls = run_gallop([B] * 7 + [G] * 13, known={4: B, 9: G, 19: G})
    assert 19 not in calls
    assert 4 not in calls
    assert 9 not in calls
    assert calls == [5, 7]
    assert (result.found, result.near) == (7, 5)


def test_going_older_has_no_far_end_first() -> None:
    # The known bound is the newest: side runs older; a regression 5 releases back.
    result, calls = run_gallop([G] * 0 + [B] * 5 + [G] * 10, given_outcome=B, far_first=False)
    assert calls[0] == 0
    assert result.far_end is None
    assert result.found == 6
    assert result.near == 2


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=40), st.data())
def test_the_bound_found_is_a_true_change(n: int, data: st.DataObject) -> None:
    """For any single change point, the gallop's pair brackets it exactly or from outside, never the wrong way."""
    change = data.draw(st.integers(min_value=0, max_value=n))
    outcomes = [B] * change + [G] * (n - change)
    result, calls = run_gallop(outcomes)
    assert len(calls) == len(set(calls))  # nothing probed twice
    if change == n:
        assert result.found is None
        return
    assert result.found is not None
    assert outcomes[result.found] is G
    assert result.near is None or (outcomes[result.near] is B and result.near < result.found)
    assert result.found >= change
    assert result.near is None or result.near < change


# --------------------------------------------------------------------------
# End to end


@pytest.fixture
def machine(fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeReleases]:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))

    def make(behaviour: Dict[str, str]) -> FakeReleases:
        made = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
        for version, result in behaviour.items():
            made.behave(version, result)
        return made

    return make


def test_bad_alone_finds_a_good_bound_and_the_fix(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.3", fix=True))
    lines: List[str] = []
    assert driver.main(releases.matrix, ["--check", "scaling", "--bad", "0.4.35"], lines.append) == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"]) == ("0.5.2", "0.5.3")
    found = next(line for line in lines if "found by galloping" in line)
    assert "--bad 0.4.35 given; --good found by galloping newer (newest first: jax 0.6.0 is good)" in found
    assert "cost" in found
    assert "probes" in found
    assert data["reproduce"].endswith("--check scaling --bad 0.4.35 --good " + data["good"])
    assert len(releases.runs) <= 7  # the newest, a doubling gallop, then a short bisect


def test_fresh_runs_each_release_once_the_gallop_s_probes_answer_the_search(
        machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.3", fix=True))
    assert driver.main(releases.matrix, ["--check", "scaling", "--bad", "0.4.35", "--fresh"], lambda _l: None) == 0
    ran = [version for version, _check in releases.runs]
    assert len(ran) == len(set(ran))
    assert report_json(releases)["first_different"] == "0.5.3"


def test_bad_alone_reuses_what_an_earlier_bisect_probed(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.3", fix=True))
    driver.main(releases.matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35"], lambda _line: None)
    ran = len(releases.runs)
    lines: List[str] = []
    assert driver.main(releases.matrix, ["--check", "scaling", "--bad", "0.4.35"], lines.append) == 0
    assert report_json(releases)["first_different"] == "0.5.3"
    assert len(releases.runs) - ran <= 1  # at most one release the first bisect had not probed


def test_bad_alone_when_nothing_fixed_it_says_so_after_one_probe(machine: Callable[..., FakeReleases]) -> None:
    releases = machine({v: "affected" for v in RELEASES})
    with pytest.raises(UsageError, match=r"--bad 0\.4\.35 alone: the newest release, jax 0\.6\.0, is bad") as stop:
        driver.main(releases.matrix, ["--check", "scaling", "--bad", "0.4.35"], lambda _line: None)
    assert "not fixed in any release yet" in (stop.value.tip or "")
    assert [version for version, _check in releases.runs] == ["0.6.0"]


def test_good_alone_at_the_newest_release_gallops_back(machine: Callable[..., FakeReleases]) -> None:
    releases = machine(verdicts("0.5.0", fix=True))  # bad before 0.5.0, good from it on
    assert driver.main(releases.matrix, ["--check", "scaling", "--good", "0.6.0"], lambda _line: None) == 0
    data = report_json(releases)
    assert (data["last_same"], data["first_different"]) == ("0.4.38", "0.5.0")
    assert "galloping older" in data["bounds_from"]
    assert "newest first" not in data["bounds_from"]
    assert "0.4.34" not in {version for version, _check in releases.runs}  # the oldest end is not asked first


# Issue 58's trial (W3): report C from Python 3.13, `--bad 0.10.2` alone; every release after it raised the fix's
# better error (a ValueError), each a skip. The probes, the order and the skip reason are the trial's own.
TRIAL_PROBED = ["0.12.1", "0.12.0.1", "0.12.0", "0.11.0", "0.11.1"]
TRIAL_SKIP = ("the script failed otherwise: it raised ValueError: vmap in_axes specification must be a tree prefix "
              "of the corresponding value;, and its output does not match bad_if '(?m)^(?:...)'")


def test_bad_alone_where_every_later_release_failed_otherwise_says_nothing_was_judged_not_unfixed() -> None:
    known = {version: ProbeOutcome.SKIP for version in TRIAL_PROBED}
    prober = SimpleNamespace(observations={version: SimpleNamespace(found=SimpleNamespace(reason=TRIAL_SKIP))
                                             for version in TRIAL_PROBED})
    unjudged = _first_skip(TRIAL_PROBED, known, prober)  # type: ignore[arg-type]
    assert unjudged == ("jax 0.12.1: the script failed otherwise: it raised ValueError: vmap in_axes specification "
                        "must be a tree prefix of the corresponding value;")
    search = HowToSearch(good=None, bad="0.10.2")
    with pytest.raises(UsageError) as stop:
        bounds_found(search, True, ["0.10.2", *TRIAL_PROBED], True, Galloped(None, None, TRIAL_PROBED, None), 39.1, 0,
                     unjudged)
    assert "no release after jax 0.10.2 could be judged" in str(stop.value)
    assert "jax 0.12.1: the script failed otherwise: it raised ValueError: vmap in_axes" in str(stop.value)
    tip = stop.value.tip or ""
    assert "not fixed" not in tip
    assert "whether and where it was fixed cannot be told by this check" in tip and "--good" in tip
    # where one of them was judged (bad), the far end's answer stands
    known["0.12.1"] = ProbeOutcome.BAD
    assert _first_skip(TRIAL_PROBED, known, prober) == ""  # type: ignore[arg-type]
