"""Tests for kit.bisect.search: a table of cases, probe caching and a property test."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kit.bisect.search import (
    ProbeOutcome,
    bisect,
    bisect_taking_old_end,
    expected_probes,
    ksect,
    non_monotonic,
    probe_round,
    scan_all,
    section_points,
    verify_bounds,
)

G, B, S = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP


class CountingProbe:
    """Answers from a fixed list and counts calls, so caching can be checked."""

    def __init__(self, outcomes: Sequence[ProbeOutcome]) -> None:
        self.outcomes = list(outcomes)
        self.calls: List[int] = []
        self.rounds: List[List[int]] = []

    def __call__(self, candidate: int) -> ProbeOutcome:
        self.calls.append(candidate)
        return self.outcomes[candidate]

    def many(self, batch: Sequence[int]) -> Dict[int, ProbeOutcome]:
        """Several candidates at once, as SLURM jobs side by side would answer them."""
        self.rounds.append(list(batch))
        return {candidate: self(candidate) for candidate in batch}


@dataclass
class Case:
    id: str
    outcomes: str  # one letter per candidate: g, b or s
    old: ProbeOutcome
    last_same: int
    first_different: int
    ambiguous: List[int]


def parse(letters: str) -> List[ProbeOutcome]:
    return [{"g": G, "b": B, "s": S}[c] for c in letters]


CASES = [
    Case("regression", "gggggbbbbb", G, 4, 5, []),
    Case("fix", "bbbgggggg", B, 2, 3, []),
    Case("change-at-first-after-oldest", "gbbbbbbb", G, 0, 1, []),
    Case("change-at-newest", "gggggggb", G, 6, 7, []),
    Case("two-candidates", "gb", G, 0, 1, []),
    Case("two-candidates-fix", "bg", B, 0, 1, []),
    Case("skip-at-midpoint", "gggsbbbb", G, 2, 4, [3]),
    Case("skip-at-midpoint-exact", "ggsgbbbb", G, 3, 4, []),
    Case("skips-next-to-answer", "gggssbbbb", G, 2, 5, [3, 4]),
    Case("skips-either-side", "ggsgsbsbb", G, 3, 5, [4]),
    Case("all-skip", "gssssb", G, 0, 5, [1, 2, 3, 4]),
    Case("fix-with-skips", "bbssgg", B, 1, 4, [2, 3]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bisect_table(case: Case) -> None:
    outcomes = parse(case.outcomes)
    probe = CountingProbe(outcomes)
    result = bisect(list(range(len(outcomes))), probe, old_outcome=case.old)
    assert (result.last_same, result.first_different, result.ambiguous) == (
        case.last_same,
        case.first_different,
        case.ambiguous,
    )
    assert result.exact == (not case.ambiguous)
    assert result.probes == probe.calls
    assert 0 not in probe.calls and len(outcomes) - 1 not in probe.calls, "ends are the caller's to verify"


def test_bisect_works_on_version_strings() -> None:
    versions = ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35", "0.4.36"]
    bad_from = versions.index("0.4.34")
    result = bisect(versions, lambda v: B if versions.index(v) >= bad_from else G)
    assert (result.last_same, result.first_different) == ("0.4.33", "0.4.34")
    assert [*result.ambiguous, result.first_different] == ["0.4.34"]


def test_each_candidate_probed_at_most_once() -> None:
    outcomes = parse("gsgsgsbsbsbsbb")
    probe = CountingProbe(outcomes)
    cache: Dict[int, ProbeOutcome] = {}
    candidates = list(range(len(outcomes)))
    assert verify_bounds(candidates, probe, cache) is None
    bisect(candidates, probe, cache=cache)
    scan_all(candidates, probe, cache)
    assert sorted(probe.calls) == sorted(set(probe.calls))
    assert len(probe.calls) == len(outcomes)


def test_resumed_bisect_reuses_cache() -> None:
    outcomes = parse("g" * 20 + "b" * 12)
    candidates = list(range(len(outcomes)))
    first = bisect(candidates, CountingProbe(outcomes))
    again = CountingProbe(outcomes)
    resumed = bisect(candidates, again, cache=dict(first.cache))
    assert again.calls == []
    assert resumed.probes == []
    assert (resumed.last_same, resumed.first_different) == (first.last_same, first.first_different)


def test_partial_cache_narrows_the_search() -> None:
    outcomes = parse("g" * 20 + "b" * 12)
    candidates = list(range(len(outcomes)))
    probe = CountingProbe(outcomes)
    result = bisect(candidates, probe, cache={17: G, 22: B})
    assert result.first_different == 20
    assert all(17 < c < 22 for c in probe.calls)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 100, 257])
def test_probe_count_is_logarithmic(k: int) -> None:
    bound = math.ceil(math.log2(k)) + 1
    for change in range(1, k):
        probe = CountingProbe([G] * change + [B] * (k - change))
        bisect(list(range(k)), probe)
        assert len(probe.calls) <= bound, (k, change)
        assert len(probe.calls) + 2 <= expected_probes(k)


@pytest.mark.parametrize(("k", "expected"), [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (8, 5), (9, 6), (100, 9)])
def test_expected_probes(k: int, expected: int) -> None:
    assert expected_probes(k) == expected


def test_bisect_rejects_contradicting_cache() -> None:
    with pytest.raises(ValueError, match="verify_bounds"):
        bisect([0, 1, 2], CountingProbe(parse("ggb")), cache={0: B})


@pytest.mark.parametrize(
    ("letters", "old", "fragment"),
    [
        ("gggbb", G, None),
        ("bbggg", B, None),
        ("bbbbb", G, "start from an older version"),
        ("ggggg", G, "end at a newer version"),
        ("bbggg", G, "swap the direction"),
        ("sgggb", G, "oldest version 0 could not be tested"),
        ("ggggs", G, "newest version 4 could not be tested"),
        ("g", G, "at least two"),
    ],
)
def test_verify_bounds(letters: str, old: ProbeOutcome, fragment: str | None) -> None:
    outcomes = parse(letters)
    problem = verify_bounds(list(range(len(outcomes))), CountingProbe(outcomes), old_outcome=old)
    if fragment is None:
        assert problem is None
    else:
        assert problem is not None
        assert fragment in problem.message


def test_scan_all_reports_every_change() -> None:
    outcomes = parse("ggbbsggsbb")
    transitions = scan_all(list(range(len(outcomes))), CountingProbe(outcomes))
    assert [(t.before, t.after, t.skipped_between) for t in transitions] == [(1, 2, []), (3, 5, [4]), (6, 8, [7])]
    assert [(t.outcome_before, t.outcome_after) for t in transitions] == [(G, B), (B, G), (G, B)]
    assert non_monotonic(transitions)


def test_scan_all_monotonic() -> None:
    outcomes = parse("sggsbb")
    transitions = scan_all(list(range(len(outcomes))), CountingProbe(outcomes))
    assert [(t.before, t.after, t.skipped_between) for t in transitions] == [(2, 4, [3])]
    assert not non_monotonic(transitions)


@st.composite
def monotonic_with_skips(draw: st.DrawFn) -> tuple[List[ProbeOutcome], ProbeOutcome, int]:
    """Ends testable, one true change at ``change``, any interior point may skip."""
    n = draw(st.integers(min_value=2, max_value=60))
    change = draw(st.integers(min_value=1, max_value=n - 1))
    old = draw(st.sampled_from([G, B]))
    new = B if old is G else G
    truth = [old] * change + [new] * (n - change)
    skips = draw(st.lists(st.booleans(), min_size=n - 2, max_size=n - 2))
    observed = [truth[0]] + [S if s else t for s, t in zip(skips, truth[1:-1])] + [truth[-1]]
    return observed, old, change


@settings(deadline=None)
@given(monotonic_with_skips())
def test_bisect_matches_linear_scan(data: tuple[List[ProbeOutcome], ProbeOutcome, int]) -> None:
    observed, old, change = data
    probe = CountingProbe(observed)
    candidates = list(range(len(observed)))
    result = bisect(candidates, probe, old_outcome=old)
    # Brute force: the first testable candidate that differs, and the last same before it.
    first_seen = next(i for i, o in enumerate(observed) if o not in (old, S))
    last_same = max(i for i in range(first_seen) if observed[i] is old)
    assert result.first_different == first_seen
    assert result.last_same == last_same
    assert result.ambiguous == list(range(last_same + 1, first_seen))
    assert all(observed[i] is S for i in result.ambiguous)
    assert change in [*result.ambiguous, result.first_different]
    assert len(probe.calls) == len(set(probe.calls)) <= len(observed) - 2
    if S not in observed:
        assert result.exact
        assert len(probe.calls) <= math.ceil(math.log2(len(observed)))
    transitions = scan_all(candidates, probe, result.cache)
    assert len(transitions) == 1
    assert transitions[0].after == first_seen


# --------------------------------------------------------------------------
# The oldest end taken as given until the answer rests on it


@pytest.mark.parametrize(("letters", "old", "oldest_run", "answer", "fragment"), [
    ("bbbbbgggg", B, False, (4, 5), None),  # the change is between probed commits: 0 never runs
    ("bggggggg", B, True, (0, 1), None),  # the answer is next to the oldest end: it runs, and holds
    ("gggggggg", B, True, None, "start from an older version"),  # it runs, contradicts: judged as verify_bounds does
    ("sggggggg", B, True, None, "oldest version 0 could not be tested"),
    ("bbbbbbbb", B, True, None, "end at a newer version"),  # a wrong newest end: the oldest is run to say why
    ("ggggbbbbbb", G, False, (3, 4), None),
])
def test_bisect_taking_old_end(letters: str, old: ProbeOutcome, oldest_run: bool, answer: tuple[int, int] | None,
                               fragment: str | None) -> None:
    outcomes = parse(letters)
    probe = CountingProbe(outcomes)
    cache: Dict[int, ProbeOutcome] = {}
    problem, result, taken = bisect_taking_old_end(list(range(len(outcomes))), probe, cache, old_outcome=old)
    assert (0 in probe.calls) == oldest_run
    assert taken == (not oldest_run)
    assert (0 in cache) == oldest_run
    assert (result.last_same, result.first_different) == answer if result else answer is None
    assert (problem is None) == (fragment is None)
    assert fragment is None or fragment in problem.message


def test_bisect_taking_old_end_runs_before_between_the_ends_and_the_search() -> None:
    outcomes = parse("bbbbbbbbbgg")
    probe = CountingProbe(outcomes)
    cache: Dict[int, ProbeOutcome] = {}
    _problem, result, taken = bisect_taking_old_end(list(range(11)), probe, cache, old_outcome=B,
                                                    before=lambda: cache.setdefault(8, probe(8)))
    assert probe.calls[:2] == [10, 8]
    assert taken
    assert result is not None
    assert result.first_different == 9


@settings(deadline=None)
@given(monotonic_with_skips())
def test_bisect_taking_old_end_answers_as_verify_then_bisect(data: tuple[List[ProbeOutcome], ProbeOutcome, int]) -> None:
    observed, old, _change = data
    candidates = list(range(len(observed)))
    plain = bisect(candidates, CountingProbe(observed), old_outcome=old)
    probe = CountingProbe(observed)
    problem, result, taken = bisect_taking_old_end(candidates, probe, {}, old_outcome=old)
    assert problem is None
    assert result is not None
    assert (result.last_same, result.first_different, result.ambiguous) == (
        plain.last_same, plain.first_different, plain.ambiguous)
    assert taken == (result.last_same != 0)
    assert len(probe.calls) == len(plain.probes) + 2 - taken


# --------------------------------------------------------------------------
# k-section: K probes per round, run together


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_ksect_table(case: Case, k: int) -> None:
    outcomes = parse(case.outcomes)
    probe = CountingProbe(outcomes)
    result = ksect(list(range(len(outcomes))), probe.many, k, old_outcome=case.old)
    assert (result.last_same, result.first_different, result.ambiguous) == (
        case.last_same, case.first_different, case.ambiguous)
    assert all(len(batch) <= k for batch in probe.rounds)
    assert result.rounds == probe.rounds
    assert result.probes == probe.calls
    assert 0 not in probe.calls
    assert len(outcomes) - 1 not in probe.calls


@pytest.mark.parametrize(("lo", "hi", "k", "skipped", "points"), [
    (0, 9, 1, set(), [4]),             # bisection's midpoint
    (0, 9, 2, set(), [3, 6]),           # thirds
    (0, 12, 3, set(), [3, 6, 9]),       # quarters
    (0, 9, 2, {3}, [2, 6]),             # a skip is stepped around, to the lower neighbour on a tie
    (0, 3, 5, set(), [1, 2]),           # fewer left than asked
    (0, 4, 3, {1, 2, 3}, []),           # only skips left
])
def test_section_points(lo: int, hi: int, k: int, skipped: set[int], points: List[int]) -> None:
    assert section_points(lo, hi, k, skipped) == points


def test_ksect_with_one_job_probes_what_bisect_probes() -> None:
    outcomes = parse("ggsggggsgbbbbbsbbbbbbbbbbbbb")
    one = CountingProbe(outcomes)
    bisect(list(range(len(outcomes))), one)
    many = CountingProbe(outcomes)
    ksect(list(range(len(outcomes))), many.many, 1)
    assert one.calls == many.calls


def expected_rounds(k: int, jobs: int) -> int:
    """Rounds of ksect over ``k`` candidates with ``jobs`` probes per round, the bounds' round included: each round
    cuts the range left into ``jobs + 1`` parts (an upper bound when nothing is skipped)."""
    if k <= 1:
        return k
    length, rounds = k - 1, 1  # the round that tests both ends
    while length > 1:
        length = -(-length // (jobs + 1))  # the longest part left after one round
        rounds += 1
    return rounds


@pytest.mark.parametrize(("k", "jobs", "expected"), [
    (0, 3, 0), (1, 3, 1), (2, 3, 1), (5, 1, 3), (24, 1, 6), (24, 3, 4), (24, 7, 3), (100, 3, 5)])
def test_expected_rounds(k: int, jobs: int, expected: int) -> None:
    assert expected_rounds(k, jobs) == expected


def test_probe_round_probes_only_the_unknown_and_checks_the_answers() -> None:
    probe = CountingProbe(parse("gggbb"))
    cache = {1: G}
    probes: List[int] = []
    assert probe_round([1, 2, 2, 3], probe.many, cache, probes) == [2, 3]
    assert probe.rounds == [[2, 3]]
    assert cache == {1: G, 2: G, 3: B}
    assert probes == [2, 3]
    with pytest.raises(TypeError, match="not a ProbeOutcome"):
        probe_round([4], lambda batch: {}, cache, probes)


@settings(deadline=None)
@given(monotonic_with_skips(), st.integers(min_value=1, max_value=6))
def test_ksect_matches_linear_scan_in_fewer_rounds(data: tuple[List[ProbeOutcome], ProbeOutcome, int], k: int) -> None:
    observed, old, change = data
    probe = CountingProbe(observed)
    result = ksect(list(range(len(observed))), probe.many, k, old_outcome=old)
    first_seen = next(i for i, o in enumerate(observed) if o not in (old, S))
    last_same = max(i for i in range(first_seen) if observed[i] is old)
    assert (result.last_same, result.first_different) == (last_same, first_seen)
    assert result.ambiguous == list(range(last_same + 1, first_seen))
    assert change in [*result.ambiguous, result.first_different]
    assert len(probe.calls) == len(set(probe.calls)) <= len(observed) - 2
    if S not in observed:
        # Rounds, not probes, are what waiting costs: log_{k+1}, the bounds' round aside.
        assert result.exact
        assert len(result.rounds) <= expected_rounds(len(observed), k) - 1


def test_likely_probes_lists_each_candidate_once_ends_first_then_each_round_s_midpoints() -> None:
    from kit.bisect.search import likely_probes

    assert likely_probes([]) == []
    assert likely_probes(["a"]) == ["a"]
    assert likely_probes(["a", "b"]) == ["a", "b"]
    assert likely_probes(list(range(9))) == [0, 8, 4, 2, 6, 1, 3, 5, 7]
    for n in range(3, 40):
        order = likely_probes(list(range(n)))
        assert sorted(order) == list(range(n))
        # The first midpoint is the one bisect probes first, whatever the outcomes.
        probed: list[int] = []
        bisect(list(range(n)), lambda c: (probed.append(c), ProbeOutcome.GOOD if c < n // 3 else ProbeOutcome.BAD)[1])
        assert order[2] == probed[0]
