"""Harvested entries beside the hand-written ones: what ``known`` and ``known --json`` list of the harvest.

An entry is a commit whose pair confirmed a test (``confirmed``) or showed it
passing on both sides (``binary``, unconfirmed by overlay); commits that came
to nothing stay in the store for the yield, never in the catalogue. Ranges
over releases are not measured here yet: ``ranges`` is None until the
release bisect of a confirmed test (the hook `kit.known.measure` is growing
for the hand entries) writes them.
"""

from __future__ import annotations

from pathlib import Path

from ...json_types import JsonObject
from .store import Store
from .verdicts import BINARY, CONFIRMED

HARVESTED = "harvested"
"""The folder of the catalogue the harvest writes (probes in ``harvested/probes/``)."""


def harvested_entries(catalogue: Path) -> list[JsonObject]:
    """The harvest's entries kept beside ``catalogue``, each marked ``harvested``, oldest fix first."""
    return [{**result, "harvested": True} for result in Store(catalogue / HARVESTED).results()
            if result.get("status") in (CONFIRMED, BINARY)]


def harvested_line(entries: list[JsonObject]) -> str:
    """One line for the text listing: how many, of which kind, and where they are listed in full."""
    confirmed = sum(1 for e in entries if e.get("status") == CONFIRMED)
    return (f"{len(entries)} harvested entries ({confirmed} confirmed by their test at the fix and its parent, "
            f"{len(entries) - confirmed} binary, unconfirmed by overlay): known --json lists them")
