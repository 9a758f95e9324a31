"""``audit RELEASE --harvested``: the confirmed harvested entries on one installation, pytest processes side by side.

The release's environment with JAX's test harness of its era runs every
confirmed entry's tests as of its fix, each entry from its own folder
(`kit.known.harvest.release_runs.probe_release`: the release's own copies
in a second process only where the fix's do not import), the files shared
out among one process per core (`kit.known.harvest.shared_out`): so the
audit's cost is an interpreter per core and one import per file, not one
per entry; compiles are reused from the last audit where that cannot change
an answer (`kit.known.harvest.reused_compiles`). What each
test did decides present, absent or untested as the ranges' bisect does.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from ...config import Matrix
from ...errors import UsageError
from ...history.source import History
from ...install import InstallKey, prepare
from ...log_events import Log
from ..measured import Presence
from .harness import harness_requirements
from .kinds import entry_kind
from .listing import HARVESTED
from .ranges import fix_held, holding_fix, range_entries
from .release_runs import RangeEntry, ReleaseProbe, probe_release
from .reused_compiles import cache_folder
from .store import Store


def harvested_to_audit(catalogue: Path, kinds: Sequence[str]) -> list[RangeEntry]:
    """The confirmed harvested entries of ``catalogue`` (only those of ``kinds`` where given)."""
    store = Store(catalogue / HARVESTED)
    if not kinds:
        return range_entries(store)
    of_kind = {str(r["id"]) for r in store.results() if entry_kind(r)[0] in kinds}
    return [e for e in range_entries(store) if e.id in of_kind]


def audit_harvested(matrix: Matrix, release: str, history: History, entries: Sequence[RangeEntry], log: Log,
                    say: Callable[[str], None]) -> list[ReleaseProbe]:
    """Each entry's probe on ``release``; said as it comes, with the seconds the whole took."""
    started = time.monotonic()
    tag = f"jax-v{release}"
    prepared = prepare(matrix, release, InstallKey(requires=harness_requirements(history, tag)), log)
    if prepared.environment is None:
        raise UsageError(f"jax {release}'s environment with JAX's test harness could not be prepared: "
                         f"{prepared.problem}", "audit another release, or leave --harvested out")
    cache = cache_folder(matrix.envs_dir, prepared.environment)
    say(f"running the tests of {len(entries)} harvested entries, pytest processes side by side on every core "
        f"(jax {release})" + (", compiles reused from the last audit where that cannot change an answer (an entry "
                              "whose tests look at compiling, or that did not pass every test, runs without them)"
                              if cache is not None else ""))
    probes = [_fix_held(history, release, entry, probe)
              for entry, probe in zip(entries, probe_release(history, prepared.environment, release, entries,
                                                             shared=True, compile_cache=cache))]
    for entry, probe in zip(entries, probes):
        say(f"  {entry.id}: {probe.outcome.value} ({probe.reason[:160]})")
    counts = {p: sum(1 for probe in probes if probe.outcome is p) for p in Presence}
    say(f"{len(entries)} harvested entries in {time.monotonic() - started:.1f} s: "
        + ", ".join(f"{n} {p.value}" for p, n in counts.items()))
    return probes


def _fix_held(history: History, release: str, entry: RangeEntry, probe: ReleaseProbe) -> ReleaseProbe:
    """A failure "as at the parent" on a release that holds the fix is not the bug's, as the ranges judge it
    (`kit.known.harvest.ranges.fix_held`): t13, harvest-c77c877054 on 0.12.1 said present with "safe release
    jax >= 0.11.0" (a later pretty-print failing the fix's snapshot test, no exception named either side)."""
    if probe.outcome is not Presence.PRESENT:
        return probe  # asking git which tags hold the commit costs a process: only where it could change the answer
    judged = fix_held(probe.to_json(), holding_fix(history, entry.commit, [release]), entry.commit)
    if judged["outcome"] == probe.outcome.value:
        return probe
    return replace(probe, outcome=Presence.UNTESTED, reason=str(judged["reason"]))
