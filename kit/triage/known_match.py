"""The catalogue entries a triage's difference matches: the exception, its message, a printed line.

Where triage decides by difference (kit/triage/difference.py), the run that behaves
as the bug is held against each entry's ``[difference]`` (`kit.known.signs`): its
exception's type, a pattern of its message, a pattern of the lines it printed
that differ from the other run's. Each entry matched is said with how well, the
range the kit measured and its workaround; an entry without a ``[difference]`` is
never matched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..known.catalogue import Entry, load_catalogues
from ..known.listing import range_text
from ..known.measured import load_measurements, ranges
from ..known.signs import Match, Raised, difference_match
from . import block_outcome
from .check_writer import Judged

SHOWN = 2
"""Entries named in the answer (the best first); the rest are counted."""


def matched_entries(folders: Sequence[Path], judged: Judged) -> list[tuple[Entry, Match]]:
    """The entries whose declared difference the bad run shows, full matches first, then by the parts agreed."""
    lines = [block_outcome.filled(judged.bad["lines"][f["bad"]]) for f in judged.features
             if f["what"] == "line" and f["bad"] is not None]
    found = []
    for entry in load_catalogues(folders):
        if entry.difference is not None:
            match = difference_match(entry.id, entry.difference, _raised(judged.bad), _raised(judged.good), lines)
            if match is not None:
                found.append((entry, match))
    return sorted(found, key=lambda pair: (pair[1].full, len(pair[1].agreed), pair[0].id), reverse=True)


def _raised(outcome: block_outcome.BlockOutcome) -> Raised | None:
    raised = outcome["exception"]
    return Raised(raised["type"], raised["text"]) if raised is not None else None


def known_lines(folders: Sequence[Path], judged: Judged | None) -> list[str]:
    """The answer's lines for the entries matched ([] where triage did not decide by difference)."""
    if judged is None:
        return []
    matched = matched_entries(folders, judged)
    lines = [sentence(entry, match) for entry, match in matched[:SHOWN]]
    if len(matched) > SHOWN:
        lines.append(f"and {len(matched) - SHOWN} more catalogue entries in part: "
                     + ", ".join(entry.id for entry, _ in matched[SHOWN:]))
    return lines


def sentence(entry: Entry, match: Match) -> str:
    """``known problem ID (matches all 2 parts: ...): measured cpu: ...; workaround ...``."""
    spans = ranges(load_measurements(entry.check.parent, entry.id))
    said = f"known problem {entry.id} ({match.how_well()}): "
    said += "measured " + "; ".join(range_text(span) for span in spans) if spans else "never measured"
    return said + (f"; workaround {entry.workaround}" if entry.workaround else "")
