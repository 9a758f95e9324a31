"""Harvested entries beside the hand-written ones: what ``known`` and ``known --json`` list of the harvest.

An entry is a commit whose pair confirmed a test (``confirmed``) or showed it
passing on both sides (``binary``, unconfirmed by overlay); commits that came
to nothing stay in the store for the yield, never in the catalogue. Each
entry carries its kind (`kit.known.harvest.kinds`) and, once ``known
--harvest --ranges`` bisected its confirmed tests over the releases
(`kit.known.harvest.ranges`), its range: the releases measured present,
absent and untested, each boundary, and every probe; ``ranges`` is None
until then (a binary entry has no failing test to bisect).
"""

from __future__ import annotations

from pathlib import Path

from ...markdown_text import inert
from ...json_types import JsonObject
from ...json_types import as_list, as_object
from ...records import JsonTextError, read_json
from .kinds import entry_kind
from .store import Store
from .verdicts import BINARY, CONFIRMED

HARVESTED = "harvested"
"""The folder of the catalogue the harvest writes (probes in ``harvested/probes/``)."""


def harvested_entries(catalogue: Path) -> list[JsonObject]:
    """The harvest's entries kept beside ``catalogue``, each marked ``harvested``, oldest fix first."""
    store = Store(catalogue / HARVESTED)
    entries = []
    for result in store.results():
        if result.get("status") not in (CONFIRMED, BINARY):
            continue
        kind, why = entry_kind(result)
        entries.append({**result, "harvested": True, "kind": kind, "kind_from": why,
                        "ranges": measured_range(store, str(result["commit"]))})
    return entries


def measured_range(store: Store, commit: str) -> JsonObject | None:
    """What ``known --harvest --ranges`` kept of the commit's entry: the releases by outcome, the boundaries, every
    probe; None where it never ran (or its file is not readable)."""
    try:
        data = read_json(store.folder / "ranges" / f"{commit[:12]}.json")
    except (OSError, JsonTextError):
        return None
    if not isinstance(data, dict):
        return None
    probes = [as_object(p) for p in as_list(data.get("probes"))]
    by_outcome = {outcome: [str(p.get("release")) for p in probes if p.get("outcome") == outcome]
                  for outcome in ("present", "absent", "untested")}
    bisection = as_object(data.get("bisection"))
    return {**by_outcome, "summary": data.get("summary"), "introduced": bisection.get("introduced"),
            "fixed": bisection.get("fixed"), "done": bisection.get("done"), "probes": probes}


def harvested_line(entries: list[JsonObject]) -> str:
    """One line for the text listing: how many, of which kind, and where they are listed in full."""
    confirmed = sum(1 for e in entries if e.get("status") == CONFIRMED)
    ranged = sum(1 for e in entries if as_object(e.get("ranges")).get("done"))
    kinds: dict[str, int] = {}
    for entry in entries:
        if entry.get("kind"):
            kinds[str(entry["kind"])] = kinds.get(str(entry["kind"]), 0) + 1
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda item: -item[1]))
    return (f"{len(entries)} harvested entries ({confirmed} confirmed by their test at the fix and its parent, "
            f"{len(entries) - confirmed} binary, unconfirmed by overlay; {ranged} with their range bisected over "
            f"the releases; kinds: {said or 'none'}): known --json lists them")


def harvested_entry_lines(entry: JsonObject) -> list[str]:
    """One harvested entry for ``known --only harvest-ID``: its fix, kind, test and measured range (inert)."""
    ranges = as_object(entry.get("ranges"))
    tests = [str(as_object(t).get("node_id", "")) for t in as_list(entry.get("tests"))
             if as_object(t).get("verdict") == CONFIRMED]
    return [f"{entry.get('id')}: {inert(str(entry.get('title', '')))}",
            f"  fix {str(entry.get('fix_commit') or entry.get('commit', ''))[:10]}"
            + (f" ({inert(str(entry['upstream']))})" if entry.get("upstream") else "")
            + f"; kind {entry.get('kind') or 'binary (none seen)'}; {entry.get('status')}",
            *(f"  test {inert(node)}" for node in tests[:3]),
            f"  range: {inert(str(ranges.get('summary') or 'not bisected yet (known --harvest --ranges)'))}"]
