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
from typing import Any, Callable, Mapping

from repro.contract import strict_json

from .. import __version__
from ..atomic_files import atomic_write_text
from ..records import JsonTextError, read_json
from ..run import runner
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

    def __init__(self, folder: Path, read: bool = True, log: Callable[[str], None] | None = None) -> None:
        self.folder = folder
        self.read = read
        """False for ``--fresh``: earlier observations are ignored (and replaced)."""
        self.log = log or (lambda message: None)
        self.unusable: dict[Path, str] = {}
        """Files that could not be used, and why (each is said once, then probed again)."""

    def get(self, key: ProbeKey, timeout_s: int) -> Observation | None:
        """The observation kept under ``key``, if it still answers a probe under ``timeout_s``.

        Whatever a cache file holds, a file that cannot be used is named once
        with its reason and the probe runs again: never a traceback.
        """
        if not self.read:
            return None
        path = self.folder / f"{key.digest()}.json"
        if not path.exists():
            return None
        try:
            observation = self._read(path, key)
        except (JsonTextError, ValueError) as error:
            if path not in self.unusable:
                self.unusable[path] = str(error)
                self.log(f"skipped the probe cache file {path}: {error} (the release is probed again)")
            return None
        if observation is None or (observation.status == "timed-out" and (observation.timeout_s or 0) < timeout_s):
            return None  # another key's file, or it only ran out of a shorter time
        return observation

    @staticmethod
    def _read(path: Path, key: ProbeKey) -> Observation | None:
        saved = read_json(path)
        if not isinstance(saved, dict) or saved.get("schema") != PROBE_SCHEMA:
            raise ValueError(f"not a probe of this kit (schema {PROBE_SCHEMA})")
        if saved.get("key") != json.loads(json.dumps(asdict(key))):
            return None
        return Observation.from_json(saved.get("observation"))

    def put(self, key: ProbeKey, observation: Observation) -> None:
        data = {"schema": PROBE_SCHEMA, "key": asdict(key), "observation": observation.to_json()}
        atomic_write_text(self.folder / f"{key.digest()}.json", strict_json(data, default=dict))
