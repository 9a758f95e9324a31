"""kit.known.boundaries: a range's two boundaries found by the kit's release bisect, stepped round by round.

A table of cases (what a catalogue entry meets: present from the oldest, open, releases that do not install
between the two sides, a check that cannot decide on the oldest or newest releases), and a property test over
every monotone truth with unknown points: the search ends, never asks twice, and each boundary it names is
the truth's, with exactly the undecided releases between its two sides as its uncertainty.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kit.known.boundaries import Boundary, RangeSearch, search_range
from kit.known.measured import Presence

P, A, U = Presence.PRESENT, Presence.ABSENT, Presence.UNTESTED


def releases(n: int) -> list[str]:
    return [f"0.{i}.0" for i in range(n)]


def run(truth: Sequence[Presence], known: Mapping[int, Presence] | None = None
        ) -> tuple[RangeSearch, list[list[str]]]:
    """The search stepped to its end over ``truth``, measuring what it wants each round; its rounds."""
    candidates = releases(len(truth))
    seen = {candidates[i]: o for i, o in (known or {}).items()}
    rounds: list[list[str]] = []
    for _ in range(4 * len(truth) + 4):
        search = search_range(candidates, seen)
        if search.done:
            return search, rounds
        assert not set(search.wanted) & set(seen), "asked for a release already measured"
        rounds.append(list(search.wanted))
        seen.update({r: truth[candidates.index(r)] for r in search.wanted})
    raise AssertionError("the search did not end")


def b(kind: str, before: int | None, after: int | None, unknown: Sequence[int] = ()) -> Boundary:
    name = lambda i: None if i is None else f"0.{i}.0"  # noqa: E731
    return Boundary(kind, name(before), name(after), tuple(f"0.{i}.0" for i in unknown))


CASES = [
    # truth, a seed (index -> outcome), introduced, fixed
    ("present from the oldest, fixed", [P, P, P, A, A, A, A, A], {}, b("introduced", None, 0), b("fixed", 2, 3)),
    ("introduced and fixed", [A, A, P, P, P, P, A, A], {3: P}, b("introduced", 1, 2), b("fixed", 5, 6)),
    ("open on the newest", [A, A, A, A, A, P, P, P], {6: P}, b("introduced", 4, 5), b("fixed", 7, None)),
    ("releases that do not install between", [P, U, U, U, U, A, A, A, A], {}, b("introduced", None, 0),
     b("fixed", 0, 5, [1, 2, 3, 4])),
    ("the check cannot decide on the oldest", [U, U, U, P, P, A, A], {4: P}, b("introduced", None, 3, [0, 1, 2]),
     b("fixed", 4, 5)),
    ("the check cannot decide on the newest", [P, P, P, P, U, U], {}, b("introduced", None, 0),
     b("fixed", 3, None, [4, 5])),
    ("a seed inside the range", [A] * 10 + [P] * 5 + [A] * 20, {12: P}, b("introduced", 9, 10), b("fixed", 14, 15)),
]


@pytest.mark.parametrize("truth, seed, introduced, fixed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_boundary_is_found(truth: list[Presence], seed: dict[int, Presence], introduced: Boundary,
                                fixed: Boundary) -> None:
    search, _ = run(truth, seed)
    assert (search.introduced, search.fixed, search.note) == (introduced, fixed, "")


def test_the_ends_come_first_and_both_boundaries_are_searched_in_one_round() -> None:
    candidates = releases(9)
    first = search_range(candidates, {"0.4.0": P})
    assert first.wanted == ("0.0.0", "0.8.0") and first.introduced is first.fixed is None
    second = search_range(candidates, {"0.0.0": A, "0.4.0": P, "0.8.0": A})
    assert second.wanted == ("0.2.0", "0.6.0")  # one probe for each bisect: measured together


def test_seeds_are_measured_with_the_ends_so_a_search_without_kept_outcomes_finds_its_present_release() -> None:
    candidates = releases(9)
    assert search_range(candidates, {}, seeds=["0.4.0", "0.9.9"]).wanted == ("0.0.0", "0.4.0", "0.8.0")
    search = search_range(candidates, {"0.0.0": A, "0.4.0": P, "0.8.0": A}, seeds=["0.4.0", "0.5.0"])
    assert search.wanted == ("0.2.0", "0.6.0")  # a release holding it is known: the other seeds are not needed


def test_a_problem_present_nowhere_is_said_not_searched() -> None:
    search, rounds = run([A, A, A, A, A, A])
    assert rounds == [["0.0.0", "0.5.0"]] and search.done
    assert "present on no release measured" in search.note and search.introduced is search.fixed is None


def test_an_exact_boundary_and_a_blurred_one() -> None:
    assert b("fixed", 2, 3).exact and not b("fixed", 0, 5, [1, 2]).exact and not b("fixed", 3, None).exact


def test_outcomes_outside_the_candidates_are_ignored_and_duplicates_refused() -> None:
    assert search_range(["1", "2"], {"1": P, "2": A, "9": P}).fixed == Boundary("fixed", "1", "2")
    with pytest.raises(ValueError, match="distinct"):
        search_range(["1", "1"], {})
    assert search_range([], {}).note == "no release to search"


@st.composite
def truths(draw: st.DrawFn) -> tuple[list[Presence], int]:
    """A monotone truth (absent, present, absent: each part possibly empty, present not) with undecided releases
    sprinkled in (releases that do not install, a check that cannot tell there), and one present release to seed the search with (as a stored measurement or a report gives)."""
    before, during, after = draw(st.integers(0, 25)), draw(st.integers(1, 25)), draw(st.integers(0, 25))
    truth = [A] * before + [P] * during + [A] * after
    seed = draw(st.integers(before, before + during - 1))
    for i in draw(st.sets(st.integers(0, len(truth) - 1), max_size=len(truth) // 3)):
        if i != seed:
            truth[i] = U
    return truth, seed


def _truth_boundary(truth: Sequence[Presence], kind: str) -> tuple[int | None, int | None]:
    """The truth's (last old-side, first new-side) decided indices around the present block."""
    decided = [i for i, o in enumerate(truth) if o is not U]
    present = [i for i in decided if truth[i] is P]
    if kind == "introduced":
        older = [i for i in decided if i < present[0]]
        return (older[-1] if older else None), present[0]
    newer = [i for i in decided if i > present[-1]]
    return present[-1], (newer[0] if newer else None)


@given(truths())
def test_the_search_finds_the_truths_boundaries_and_names_its_unknowns(case: tuple[list[Presence], int]) -> None:
    truth, seed = case
    search, rounds = run(truth, {seed: P})
    candidates = releases(len(truth))
    probed = [r for round_ in rounds for r in round_]
    assert len(probed) == len(set(probed))  # never measured twice
    for found in (search.introduced, search.fixed):
        assert found is not None
        index = {None: None, **{c: i for i, c in enumerate(candidates)}}
        before, after = index[found.before], index[found.after]
        measured = {candidates.index(r) for r in probed} | {seed}
        if found.before is None:  # present from the oldest release that decided: all below it unknown
            assert after is not None and truth[after] is P and after <= seed
            assert all(truth[i] is U for i in measured if i < after)
            assert found.unknown == tuple(candidates[:after])
        elif found.after is None:  # open on the newest release that decided: all above it unknown
            assert before is not None and truth[before] is P and before >= seed
            assert all(truth[i] is U for i in measured if i > before)
            assert found.unknown == tuple(candidates[before + 1:])
        else:
            old, new = _truth_boundary(truth, found.kind)
            assert (before, after) == (old, new)
            assert all(truth[i] is U for i in range(old + 1, new))
            assert found.unknown == tuple(candidates[old + 1:new])


@given(st.integers(0, 40), st.integers(1, 40), st.integers(0, 40), st.data())
def test_a_search_without_unknowns_costs_two_bisects_at_most(before: int, during: int, after: int,
                                                             data: st.DataObject) -> None:
    truth = [A] * before + [P] * during + [A] * after
    seed = data.draw(st.integers(before, before + during - 1))
    search, rounds = run(truth, {seed: P})
    assert search.introduced is not None and search.fixed is not None
    bisects = math.ceil(math.log2(len(truth)))  # one bisect's most halvings over all the releases
    assert len(rounds) <= 1 + bisects  # the ends' round, then both bisects side by side
    assert sum(map(len, rounds)) <= 2 + 2 * bisects
