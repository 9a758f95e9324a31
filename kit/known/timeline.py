"""reports/known.md: the catalogue at a glance, one row per entry and one column per release, and the releases
ranked by the known problems each still has.

Every cell is a measurement the kit kept: a hand entry's runs on CPU
(``known/measured/ID.json``, `kit.known.measured`), a harvested entry's
release probes (``known/harvested/ranges/``, `kit.known.harvest.ranges`).
What no probe decided is said as untested (``?``: measured, nothing
decided; blank: never measured there), never as absent. Written by the
report step beside matrix.md, from the committed files alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..json_types import JsonObject, as_list, as_object
from ..markdown_text import text
from ..records import release_key
from .catalogue import Entry
from .harvest.listing import HARVESTED, harvested_entries
from .measured import load_measurements

CELLS = {"present": "✗", "absent": "✓", "untested": "?"}
LEGEND = ("✗ present (the problem shows on that release), ✓ absent, ? measured and undecided (not installable, "
          "skipped, a failure of another kind), blank: never measured there. A harvested entry is measured by its "
          "confirmed test as of the fix (`known --harvest --ranges`), a hand entry by its check.")


def rows(entries: Sequence[Entry], folders: Sequence[Path]) -> list[tuple[str, str, str, dict[str, str]]]:
    """``(id, kind, title, {release: present|absent|untested})`` per entry: the hand ones, then the harvested."""
    found = []
    for entry in entries:
        seen = {m.release: m.outcome.value for m in load_measurements(entry.check.parent, entry.id)
                if m.backend == "cpu" and not m.target}
        found.append((entry.id, entry.kind, entry.title, seen))
    for folder in dict.fromkeys(Path(f).resolve() for f in folders):
        if not (folder / HARVESTED).is_dir():
            continue
        for harvested in harvested_entries(folder):
            found.append((str(harvested["id"]), str(harvested.get("kind") or "binary"), str(harvested["title"]),
                          _probed(harvested)))
    return found


def _probed(harvested: JsonObject) -> dict[str, str]:
    measured = harvested.get("ranges")
    return {str(as_object(p)["release"]): str(as_object(p)["outcome"])
            for p in as_list(as_object(measured).get("probes"))} if measured else {}


def ranking(found: Sequence[tuple[str, str, str, dict[str, str]]]) -> list[tuple[str, int, int, int]]:
    """``(release, present, absent, untested)`` per release measured, fewest known problems present first."""
    newest_first = sorted({r for *_, seen in found for r in seen}, key=release_key, reverse=True)

    def count(release: str, outcome: str) -> int:
        return sum(1 for *_, seen in found if seen.get(release) == outcome)
    counted = [(r, count(r, "present"), count(r, "absent"), count(r, "untested")) for r in newest_first]
    return sorted(counted, key=lambda row: (row[1], -row[2]))  # stable: a tie keeps the newest release first


def render(entries: Sequence[Entry], folders: Sequence[Path]) -> str:
    found = rows(entries, folders)
    releases = sorted({r for *_, seen in found for r in seen}, key=release_key)
    measured = sum(1 for *_, seen in found if seen)
    lines = ["# Known problems across releases", "",
             f"{len(found)} entries ({measured} with a measured release), {len(releases)} releases measured. "
             + LEGEND, "",
             "## Releases ranked by the known problems they still have", "",
             "Fewest present first, then most absent; what a release's rank does not know is its untested and "
             "never measured entries (a release measured for few entries ranks high on little).", "",
             "| release | present | absent | untested | never measured |", "|---|---|---|---|---|"]
    lines += [f"| {r} | {p} | {a} | {u} | {len(found) - p - a - u} |" for r, p, a, u in ranking(found)]
    lines += ["", "## Timeline", "", "| entry | kind | " + " | ".join(releases) + " |",
              "|---|---|" + "---|" * len(releases)]
    for entry_id, kind, title, seen in found:
        label = f"{entry_id}: {text(title[:70])}"
        lines.append(f"| {label} | {kind} | " + " | ".join(CELLS.get(seen.get(r, ""), "") for r in releases) + " |")
    return "\n".join(lines) + "\n"
