"""One probe cache, keyed by what ran, shared by every bisect on this machine.

A probe's observation is kept under the key of what produced it: the check
and its parameters (with the kit version, whose repro ran) or the script's
content hash; the release; the backend; the Python and the jaxlib it ran
with; the machine. The bounds and the bisect's name are not in the key, so a
second bisect over overlapping releases (other bounds, ``--all``) re-runs
nothing already known, and an interrupted bisect resumes where it stopped.
Check probes also write a record, as the matrix does; records stay the
matrix's currency and are consulted too (see :mod:`.probes`).

A remembered timeout is reused only under a timeout no longer than the one
it hit: a longer ``--timeout`` deserves a new try. One file per key, written
atomically, so bisects running side by side never lose each other's probes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from .. import __version__
from ..run import records, runner
from ..config import Matrix
from .options import Options
from .outcomes import Observation

PROBE_SCHEMA = 1


def subject_key(matrix: Matrix, options: Options) -> dict[str, Any]:
    """What a probe runs, apart from the release: the check and its parameters, or the script's content."""
    if options.check:
        request = runner.RunRequest(check=options.check, version="0", backend=options.backend, preset=options.preset)
        key = {"check": options.check, "parameters": runner.parameters_for(matrix, request), "kit_version": __version__}
    else:
        assert options.script is not None
        key = {"script_sha256": hashlib.sha256(options.script.read_bytes()).hexdigest()}
    return json.loads(json.dumps(key))  # as it reads back from a file


@dataclass(frozen=True)
class ProbeKey:
    subject: Mapping[str, Any]
    jax: str
    backend: str
    python: str | None
    jaxlib: str | None
    machine: str

    def digest(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True, default=dict).encode()
        return hashlib.sha256(blob).hexdigest()[:24]


class ProbeCache:
    """Observations on disk, one file per :class:`ProbeKey`."""

    def __init__(self, folder: Path, read: bool = True) -> None:
        self.folder = folder
        self.read = read
        """False for ``--fresh``: earlier observations are ignored (and replaced)."""

    def get(self, key: ProbeKey, timeout_s: int) -> Observation | None:
        """The observation kept under ``key``, if it still answers a probe under ``timeout_s``."""
        if not self.read:
            return None
        try:
            saved = json.loads((self.folder / f"{key.digest()}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent, or torn by a crash: probe again
        if saved.get("schema") != PROBE_SCHEMA or saved.get("key") != json.loads(json.dumps(asdict(key))):
            return None
        observation = Observation.from_json(saved.get("observation", {}))
        if observation.status == "timed-out" and (observation.timeout_s or 0) < timeout_s:
            return None  # it only ran out of a shorter time
        return observation

    def put(self, key: ProbeKey, observation: Observation) -> None:
        data = {"schema": PROBE_SCHEMA, "key": asdict(key), "observation": observation.to_json()}
        records.atomic_write_text(self.folder / f"{key.digest()}.json",
                                  json.dumps(data, indent=2, sort_keys=True, default=dict) + "\n")
