"""A release's dumped run of a program, kept so that another op's bisect probe reads it instead of running again.

``bisect --explain --op FILE:LINE`` is one bisect per op, each with its own
probes (the op is in a probe's identity). What a release compiles of the
program does not depend on the op, so the first probe of a release keeps its
`DumpedRun` here, keyed by everything the compile depends on: the
interpreter and its pinned packages, the program's content, the devices, the
backend, our XLA_FLAGS and the kit's version. A run in an environment with a
commit laid over it (its identity is not in the environment's paths) or in a
user's own interpreter (its packages can change under it) is never kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..atomic_files import atomic_write_text
from ..check_settings import Check
from ..hlo import Fingerprint
from ..install import Environment
from ..records import EXISTING, RunOutcome
from ..targets import Target, target_parameter
from ..json_types import JsonObject, as_object


@dataclass
class DumpedRun:
    outcome: RunOutcome
    """The run's outcome, as `script_runs.run_script` gives it."""
    modules: list[JsonObject] = field(default_factory=list)
    fingerprints: list[Fingerprint] = field(default_factory=list)
    dump: JsonObject = field(default_factory=dict)
    output_tail: list[str] = field(default_factory=list)
    target: JsonObject | None = None
    """With a target: what it is and how its compile went (`kit.run.targeted`)."""
    program: JsonObject = field(default_factory=dict)
    """What the program did that the kit must say (`kit.run.explained.program_facts`): XLA_FLAGS it set, its
    devices."""
    processes: JsonObject | None = None
    """Run as several processes (`kit.run.explained_ranks`): how they were launched, each rank, whether they agree."""


def partitions(module: JsonObject) -> int:
    """How many partitions a module read was compiled over (1 where it says none: one device)."""
    count = module.get("partitions")
    return count if isinstance(count, int) and count > 0 else 1


def path(folder: Path, env: Environment, check: Check, backend: str, target: Target | None = None) -> Path | None:
    """Where this run is kept, or None where it must not be (a commit overlaid, a user's own interpreter)."""
    if env.pythonpath or env.obtained == EXISTING or check.script is None:
        return None
    try:
        program = hashlib.sha256(check.script.read_bytes()).hexdigest()
    except OSError:
        return None
    # "pins" is this key's old word for the installed versions, kept so that runs kept before still answer.
    key = json.dumps({"python": str(env.python), "pins": dict(sorted(env.versions.items())), "program": program,
                      "devices": check.host_devices, "backend": backend, "kit": __version__,
                      "xla_flags": os.environ.get("XLA_FLAGS", ""),
                      # Compiled for a chip: one per target (two TPU slices share an environment).
                      **target_parameter(target)},
                     sort_keys=True)
    return folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def save(where: Path, run: DumpedRun) -> None:
    """Keep ``run`` (a disk that refuses is no reason to fail the probe: the next one runs again)."""
    # "fields": the word of the runs kept before the outcome had a type, so those still load (`load`).
    text = json.dumps({"fields": run.outcome.to_json(), "modules": run.modules, "dump": run.dump,
                       "output_tail": run.output_tail, "program": run.program,
                       "fingerprints": [f.to_json() for f in run.fingerprints]})
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(where, text)
    except OSError:
        pass


def load(where: Path) -> DumpedRun | None:
    """The kept run, or None where there is none or it does not read back whole."""
    try:
        data = as_object(json.loads(where.read_text(encoding="utf-8")))
        modules, tail, prints = data["modules"], data["output_tail"], data["fingerprints"]
        if not (isinstance(modules, list) and isinstance(tail, list) and isinstance(prints, list)):
            raise TypeError("not a kept run")
        return DumpedRun(outcome=RunOutcome.from_json(as_object(data["fields"])), modules=[as_object(m) for m in modules],
                         dump=as_object(data["dump"]), output_tail=[str(line) for line in tail],
                         program=as_object(data.get("program")),
                         fingerprints=[Fingerprint.from_json(as_object(f)) for f in prints])
    except (OSError, ValueError, KeyError, TypeError):
        return None
