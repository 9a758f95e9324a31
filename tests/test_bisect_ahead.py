"""kit/bisect/ahead.py: which candidates a release search resolves ahead, and with which install key.

tests/test_install_prefetch.py checks the default depth on nine releases with a known end and a yanked one; here
are the depth's boundaries, a short list, and a candidate the index's metadata already rules out. The prefetch's
own threads are stood in for: what is checked is the list `resolve_ahead` hands them.
"""

from __future__ import annotations

from typing import Any

import dataclasses

import pytest

from kit.bisect import ahead
from kit.bisect.candidates import Candidate
from kit.bisect.options import BisectOptions
from kit.bisect.run_spec import run_spec
from kit.config import parse_matrix
from kit.install.key import InstallKey

MATRIX = parse_matrix({"release": [{"version": "0.6.0"}], "checks": {"scaling": {}}})
OPTIONS = BisectOptions(check="scaling", script=None, good=None, bad=None, backend="cuda", find_links=("wheels/",))
SPEC = run_spec(MATRIX, OPTIONS.specs.runs)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[str, InstallKey]]]:
    """Each list the prefetch was asked to start on (no resolve runs)."""
    asked: list[list[tuple[str, InstallKey]]] = []
    monkeypatch.setattr(ahead.Prefetch, "start", lambda self, wanted: asked.append(list(wanted)))
    return asked


def candidates(count: int, **changes: dict[str, Any]) -> list[Candidate]:
    made = []
    for n in range(count):
        version = f"0.4.{30 + n}"
        fields: dict[str, Any] = {"python": "3.11" if n % 2 else "3.12", **changes.get(version, {})}
        made.append(Candidate(version, (f"jax=={version}",), None, fields.pop("python"), version, **fields))
    return made


def versions(started: list[list[tuple[str, InstallKey]]]) -> list[str]:
    (wanted,) = started
    return [version for version, _key in wanted]


@pytest.mark.parametrize(("rounds", "expected"), [
    (0, ["0.4.30", "0.4.38"]),  # the ends alone
    (1, ["0.4.30", "0.4.38", "0.4.34"]),  # and the first midpoint
    (3, ["0.4.30", "0.4.38", "0.4.34", "0.4.32", "0.4.36", "0.4.31", "0.4.33", "0.4.35", "0.4.37"]),
])
def test_each_round_adds_its_midpoints_and_no_more(started: list[list[tuple[str, InstallKey]]], rounds: int,
                                                  expected: list[str]) -> None:
    ahead.resolve_ahead(MATRIX, SPEC, candidates(9), {}, index=None,  # type: ignore[arg-type]
                        rounds=rounds)
    assert versions(started) == expected


def test_two_candidates_are_both_resolved_and_none_is_no_work(started: list[list[tuple[str, InstallKey]]]) -> None:
    ahead.resolve_ahead(MATRIX, SPEC, candidates(2), {}, index=None)  # type: ignore[arg-type]
    ahead.resolve_ahead(MATRIX, SPEC, [], {}, index=None)  # type: ignore[arg-type]
    assert [[version for version, _key in wanted] for wanted in started] == [["0.4.30", "0.4.31"], []]


def test_a_candidate_the_metadata_rules_out_is_not_resolved(started: list[list[tuple[str, InstallKey]]]) -> None:
    # No wheels for this machine: its probe is answered from the metadata, a resolve would be a wasted uv run.
    listed = candidates(3, **{"0.4.32": {"problem": "no jaxlib wheel for this platform"}})
    ahead.resolve_ahead(MATRIX, SPEC, listed, {}, index=None)  # type: ignore[arg-type]
    assert versions(started) == ["0.4.30", "0.4.31"]


def test_each_is_resolved_with_the_key_its_probe_will_use(started: list[list[tuple[str, InstallKey]]]) -> None:
    # A key that differs from the probe's (another Python, other extras) would resolve a question never asked.
    with_extras = dataclasses.replace(SPEC, install=dataclasses.replace(SPEC.install, requires=("flax<0.5",)))
    ahead.resolve_ahead(MATRIX, with_extras, candidates(3), {}, index=None)  # type: ignore[arg-type]
    (wanted,) = started
    assert dict(wanted)["0.4.31"] == InstallKey("cuda", ("wheels/",), (), ("flax<0.5",), "3.11")
    assert dict(wanted)["0.4.30"].python == "3.12"
