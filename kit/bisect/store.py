"""The probes file: finished probes kept on disk, so an interrupted bisect resumes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__, records, runner
from ..config import Matrix
from .candidates import Candidate
from .options import Options
from .options import Log
from .outcomes import Observation, classify
from .search import Outcome

PROBES_SCHEMA = 1


def bisect_name(options: Options, good: str, bad: str) -> str:
    """The file-name-safe name of one bisect: what, the ends, the backend and the mode."""
    name = f"{options.subject}-good{good}-bad{bad}-{options.backend}"
    if options.preset:
        name += f"-{options.preset}"
    if options.scan:
        name += "-all"
    if options.metric:
        name += f"-{options.metric}-x{options.factor:g}"
    return "".join(c if c.isalnum() or c in ".-_" else "_" for c in name)


def probes_key(matrix: Matrix, options: Options) -> dict[str, Any]:
    """What must not change for saved probes to stay valid."""
    key: dict[str, Any] = {"subject": options.subject, "backend": options.backend,
                           "machine": records.machine_id(), "kit_version": __version__}
    if options.check:
        request = runner.RunRequest(check=options.check, version="0", backend=options.backend, preset=options.preset)
        key["parameters"] = runner.parameters_for(matrix, request)
    if options.metric:
        key["metric"], key["factor"] = options.metric, options.factor
    if options.script:
        key["script_sha256"] = hashlib.sha256(options.script.read_bytes()).hexdigest()
    return json.loads(json.dumps(key))  # as it reads back from the file


@dataclass
class ProbeStore:
    """Finished probes of one bisect, written atomically after each probe."""

    path: Path
    key: dict[str, Any]
    candidates: list[Candidate] = field(default_factory=list)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def open(cls, path: Path, key: dict[str, Any], fresh: bool, log: Log) -> ProbeStore:
        store = cls(path, key)
        if fresh or not path.exists():
            return store
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            log(f"ignoring unreadable {path} ({error}); probing from scratch")
            return store
        if saved.get("schema") != PROBES_SCHEMA or saved.get("key") != key:
            log(f"ignoring {path}: it was made with other parameters, script, kit version or machine")
            return store
        store.candidates = [Candidate(**{**c, "requirements": tuple(c["requirements"])})
                            for c in saved.get("candidates", [])]
        store.probes = dict(saved.get("probes", {}))
        log(f"resuming from {path}: {len(store.probes)} finished probes")
        return store

    def save(self) -> None:
        data = {"schema": PROBES_SCHEMA, "key": self.key, "candidates": [asdict(c) for c in self.candidates],
                "probes": self.probes}
        records.atomic_write_text(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def outcomes(self, crash: str) -> dict[str, Outcome]:
        """The saved probes as a bisection cache, mapped under today's ``--crash`` mode."""
        return {v: classify(Observation.from_json(p), crash) for v, p in self.probes.items()}
