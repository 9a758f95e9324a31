"""One probe cache, keyed by a probe's identity, shared by every bisect on this machine (or cluster).

A probe's observation is kept under its identity (`kit.records.identity`):
what ran (the check and its parameters, or the script's content), the release
or commit, every installed package, the backend, the hardware and the JAX/XLA
variables that were set; the same identity the matrix asks of its records.
The bounds and the bisect's name are not in it, so a second bisect over
overlapping releases (other bounds, ``--all``) re-runs nothing already known,
and an interrupted bisect resumes where it stopped.

Files are kept by question (what ran, on which release, which backend), one
folder each, one file per identity in it: ``<question>/<identity>.json``, the
probe's whole output beside it as ``<identity>.log``. A probe of another
identity is never reused; the folder is where `why_not` finds it and says what
differs, so a report can say why a release was probed again.

A remembered timeout is reused only under a timeout no longer than the one
it hit: a longer ``--timeout`` deserves a new try. One file per identity,
written atomically, so bisects running side by side never lose each other's probes.

A cache that cannot be written (a read-only or full ``reports/bisect/``) is
said once and the bisect goes on: its probes are only not kept for the next
run, and their logs go to a temp folder instead.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from repro.contract import strict_json

from ...records import Status
from ...atomic_files import atomic_write_text
from ...records import Identity, JsonTextError, mismatch, read_json
from ..observation import Observation

PROBE_SCHEMA = 3
"""Schema 1 keyed probes by release, Python and jaxlib alone; its files are not read. Schema 2 kept the
observation as one flat object: read, migrated by :meth:`Observation.from_json`."""
READABLE_SCHEMAS = (2, PROBE_SCHEMA)


@dataclass(frozen=True)
class Kept:
    """A probe on disk: the identity it ran under and what it observed."""

    path: Path
    identity: Identity
    observation: Observation


class ProbeCache:
    """Observations on disk, one file per identity."""

    def __init__(self, folder: Path, read: bool = True, log: Callable[[str], None] | None = None) -> None:
        self.folder = folder
        self.read = read
        """False for ``--fresh``: earlier observations are ignored (and replaced)."""
        self.log = log or (lambda message: None)
        self.unusable: dict[Path, str] = {}
        """Files that could not be used, and why (each is said once, then probed again)."""
        self.unwritable = ""
        """Why the cache could not be written, once it could not ("" while it can): said once."""
        self._logs_elsewhere: Path | None = None

    def path(self, identity: Identity) -> Path:
        return self.folder / identity.question() / f"{identity.digest()}.json"

    def log_path(self, identity: Identity) -> Path:
        """Where the probe's whole output is kept: beside its observation, or in a temp folder if that is not writable."""
        path = self.path(identity).with_suffix(".log")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if os.access(path.parent, os.W_OK):
                return path
            raise PermissionError(f"{path.parent} is not writable")
        except OSError as exc:
            self._cannot_write(exc)
        elsewhere = self.logs_elsewhere() / identity.question() / path.name
        elsewhere.parent.mkdir(parents=True, exist_ok=True)
        return elsewhere

    def logs_elsewhere(self) -> Path:
        """A folder made fresh in the temp folder (`mkdtemp`, mode 0700) for the logs the cache cannot keep: never a
        fixed name, which another user of the temp folder could make first, or link to a folder of theirs."""
        if self._logs_elsewhere is None:
            self._logs_elsewhere = Path(tempfile.mkdtemp(prefix="jax-kit-probe-logs-"))
        return self._logs_elsewhere

    def _cannot_write(self, exc: OSError) -> None:
        """Say once that probes are not kept: a cache costs time when missing, never the bisect."""
        if self.unwritable:
            return
        self.unwritable = exc.strerror or str(exc)
        self.log(f"could not keep probes in the probe cache {self.folder} ({self.unwritable}); the bisect goes on, "
                 f"but a rerun probes them again (their logs go to {self.logs_elsewhere()})")

    def get(self, identity: Identity, timeout_s: int) -> Observation | None:
        """The observation kept under ``identity``, if it still answers a probe under ``timeout_s``.

        Whatever a cache file holds, a file that cannot be used is named once
        with its reason and the probe runs again: never a traceback.
        """
        if not self.read:
            return None
        # Where this kit files it, then where a kit of an earlier identity schema did (read back migrated).
        found = (self._load(self.path(form)) for form in (identity, *identity.earlier_forms()))
        kept = next((kept for kept in found if kept is not None and kept.identity.to_json() == identity.to_json()),
                    None)
        if kept is None:
            return None  # none, unusable, or a hash collision
        observation = kept.observation
        if observation.found.status == Status.TIMED_OUT and (observation.cost.timeout_s or 0) < timeout_s:
            return None  # it only ran out of a shorter time
        if observation.found.reason.startswith(_CRASH_MADE_INCONCLUSIVE):
            return None  # an older kit's: a crash under bad_if made "inconclusive", which ignored --crash
        return observation

    def why_not(self, identity: Identity) -> str:
        """Why earlier probes of the same question were not reused: the nearest one's differences ("" if none).

        Said for the probe that differs least (fewest differences), newest first on a tie.
        """
        if not self.read:
            return ""
        folder = self.path(identity).parent
        others = [kept for path in sorted(folder.glob("*.json")) if path != self.path(identity)
                  for kept in [self._load(path)] if kept is not None]
        if not others:
            return ""
        nearest = min(others, key=lambda k: (len(mismatch(k.identity, identity)), _newest_first(k.observation)))
        differs = mismatch(nearest.identity, identity)
        more = f" ({len(others)} earlier probes of it, none the same)" if len(others) > 1 else ""
        by = f" by {nearest.observation.came_from.by}" if nearest.observation.came_from.by else ""
        return f"an earlier probe{by} ({nearest.observation.came_from.ran_at or 'undated'}) was not reused: " \
               f"{'; '.join(differs)}{more}"

    def put(self, identity: Identity, observation: Observation) -> Path | None:
        """Keep ``observation`` under ``identity``; where it went (None: the cache could not be written, said once)."""
        data = {"schema": PROBE_SCHEMA, "identity": identity.to_json(), "observation": observation.to_json()}
        path = self.path(identity)
        try:
            atomic_write_text(path, strict_json(data, default=dict))
        except OSError as exc:
            self._cannot_write(exc)
            return None
        return path

    def _load(self, path: Path) -> Kept | None:
        if not path.exists():
            return None
        try:
            saved = read_json(path)
            if not isinstance(saved, dict) or saved.get("schema") not in READABLE_SCHEMAS:
                raise ValueError(f"not a probe of this kit (schema {PROBE_SCHEMA})")
            return Kept(path, Identity.from_json(saved.get("identity")), Observation.from_json(saved.get("observation")))
        except (JsonTextError, ValueError) as error:
            if path not in self.unusable:
                self.unusable[path] = str(error)
                self.log(f"skipped the probe cache file {path}: {error} (the release is probed again)")
            return None


_CRASH_MADE_INCONCLUSIVE = "the script failed otherwise: it was killed by signal"
"""How a kit before issue 58 said a crash whose output did not match bad_if; such a probe is run again, as a crash
now stays one (kit/run/failures.py) and counts as --crash says."""


def _newest_first(observation: Observation) -> str:
    """A sort key putting newer probes first (ISO 8601 times sort as text)."""
    return "".join(chr(0x10FFFF - ord(c)) for c in observation.came_from.ran_at)
