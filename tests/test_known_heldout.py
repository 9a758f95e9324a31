"""Held-out fixes: where the harvest confirmed the commit a hand entry names as its fix, the range its bisect found
agrees with the hand entry's measured one (issue 59's "held-out fixes measured by hand come out with the right
ranges"). Read from the committed data alone: the hand entries' known/measured/ and the harvest's store."""

from __future__ import annotations

from pathlib import Path

from kit.json_types import as_object
from kit.known.catalogue import load_catalogue
from kit.known.harvest.listing import harvested_entries
from kit.known.measured import load_measurements, ranges

KNOWN = Path(__file__).resolve().parent.parent / "known"
HELD_OUT_AT_LEAST = 4
"""Pairs bisected when this test was written (xlogy-nan-y, heaviside-nan, attention-float64-mask-debug-infs,
expon-ppf-scale): fewer means data was lost."""


def _pairs() -> list[tuple[str, dict[str, str], str | None, dict[str, object]]]:
    """``(hand id, its CPU outcomes by release, its fixed-in, the harvested entry's ranges)`` per held-out pair."""
    harvested = {str(e["commit"]): e for e in harvested_entries(KNOWN) if as_object(e.get("ranges")).get("done")}
    found = []
    for entry in load_catalogue(KNOWN):
        match = next((e for commit, e in harvested.items() if entry.fix_commit and commit.startswith(entry.fix_commit)),
                     None)
        if match is None:
            continue
        measured = [m for m in load_measurements(KNOWN, entry.id) if m.backend == "cpu" and not m.target]
        cpu = next((r for r in ranges(measured) if r.backend == "cpu" and not r.target), None)
        found.append((entry.id, {m.release: m.outcome.value for m in measured}, cpu.fixed_in if cpu else None,
                      as_object(match["ranges"])))
    return found


def test_held_out_fixes_are_bisected_to_the_release_the_hand_entry_measured_fixed() -> None:
    pairs = _pairs()
    assert len(pairs) >= HELD_OUT_AT_LEAST, [p[0] for p in pairs]
    for hand_id, _outcomes, fixed_in, harvested in pairs:
        fixed = as_object(harvested.get("fixed"))
        assert fixed.get("after") == fixed_in and not fixed.get("unknown"), (hand_id, fixed, fixed_in)


def test_where_both_decided_a_release_the_harvest_and_the_hand_entry_agree() -> None:
    for hand_id, outcomes, _fixed_in, harvested in _pairs():
        for outcome in ("present", "absent"):
            for release in harvested.get(outcome) or []:  # type: ignore[attr-defined]
                if outcomes.get(release) in ("present", "absent"):
                    assert outcomes[release] == outcome, (hand_id, release, outcome, outcomes[release])
