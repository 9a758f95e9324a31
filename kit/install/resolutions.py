"""Resolutions kept for reuse: asked of the index once per run, and once ever for an era that is closed.

Resolving a plan is a ``uv pip compile`` that waits on the index (12 s of a
20 s cold probe, measured). Two things make most of those calls needless:

* In one run the same plan is asked for again and again (a bisect lists its
  candidates and then prepares some of them; a prefetch resolves what the next
  rounds may need while a probe runs, and the probe may then ask for the same
  plan while the prefetch is still waiting on uv). `Once` answers each key
  once per process; a second asker waits for the first one's answer.
* A plan whose era is cut off (``--exclude-newer``) at a date already past has
  one answer: nothing uploaded since can enter it. `ResolutionStore` keeps
  such an answer on disk with its inputs (the plan, the Python, the platform)
  and the time it was made, so a later run, or a release whose environment
  was deleted, resolves without uv. ``--refresh`` asks the index again.

What is kept is only an answer that installs (a release that does not
resolve is asked again each run: the index may get its wheels back), and a
file that cannot be read is no answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime, timezone
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, Generic, Hashable, TypeVar

from repro.contract import strict_json

from ..atomic_files import atomic_write_text
from ..json_types import JsonObject
from ..records import JsonTextError, read_json

STORE_SCHEMA = 3
# 2: answers uv gave offline are kept only where it passed over no version of the era for want of its metadata
# (`kit.install.plan._PASSED_OVER`); schema 1 may hold such an older version (optax 0.2.3 for jax 0.6.0's era).
# 3: the answer names the resolved versions ``versions``; schema 2 called them ``pins`` and is read as it was
# (`_migrated`). The schema changes, not only the key, so an older kit passes over a new file (and asks uv)
# instead of failing on the key it looks for.

_T = TypeVar("_T")


class Once(Generic[_T]):
    """Each key's answer computed once per process, however many threads ask for it at once.

    A computation that raises leaves no answer: the next asker computes it
    again (a network failure is said by whoever needed the answer, not kept).
    """

    def __init__(self, answers: dict[Hashable, _T] | None = None) -> None:
        self.answers: dict[Hashable, _T] = {} if answers is None else answers
        self._asking: dict[Hashable, threading.Event] = {}
        self._guard = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        while True:
            with self._guard:
                if key in self.answers:
                    return self.answers[key]
                asking = self._asking.get(key)
                if asking is None:
                    asking = self._asking[key] = threading.Event()
                    break
            asking.wait()  # another thread is asking uv the same question: its answer is ours
        try:
            answer = compute()
            with self._guard:
                self.answers[key] = answer
            return answer
        finally:
            with self._guard:
                self._asking.pop(key, None)
            asking.set()


def era_closed(exclude_newer: str | None, now: datetime | None = None) -> bool:
    """True when the era's cut-off is in the past, so no upload can change what resolves under it."""
    if not exclude_newer:
        return False
    try:
        cutoff = datetime.strptime(exclude_newer, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return False
    return cutoff < (now or datetime.now(timezone.utc))


@dataclass(frozen=True)
class KeptAnswer:
    """An answer the store kept: every package's resolved version and its files' hashes, and when it was made."""

    versions: dict[str, str]
    hashes: dict[str, tuple[str, ...]]
    resolved_at: str


class ResolutionStore:
    """Answers of closed eras on disk, one file per question, each with its inputs and when it was made."""

    def __init__(self, folder: Path, read: bool = True) -> None:
        self.folder = Path(folder)
        self.read = read
        """False for ``--refresh``: kept answers are not given back (and are replaced)."""

    def path(self, inputs: JsonObject) -> Path:
        digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:20]
        return self.folder / f"{digest}.json"

    def get(self, inputs: JsonObject) -> KeptAnswer | None:
        """The kept answer to exactly these inputs, or None (none kept, torn, or not an answer)."""
        if not self.read:
            return None
        try:
            data: object = read_json(self.path(inputs))
        except JsonTextError:
            return None  # missing, torn or unreadable: ask again
        if not isinstance(data, dict) or data.get("schema") not in (2, STORE_SCHEMA) \
                or data.get("inputs") != _plain(inputs):
            return None
        return _answer(data)

    def put(self, inputs: JsonObject, versions: dict[str, str], hashes: dict[str, tuple[str, ...]],
            source: str) -> None:
        """Keep the answer; a store that cannot be written costs the next run a resolve, never this one."""
        answer = {"versions": versions, "hashes": hashes}
        data = {"schema": STORE_SCHEMA, "inputs": _plain(inputs), "answer": answer, "source": source,
                "resolved_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        try:
            atomic_write_text(self.path(inputs), strict_json(data))
        except OSError:
            pass


def _answer(data: JsonObject) -> KeptAnswer | None:
    """A kept answer, read in this schema's form (schema 2's ``pins`` are the resolved ``versions``); None where
    the file holds no versions, or values of other kinds than the kit writes."""
    answer = data.get("answer")
    if not isinstance(answer, dict):
        return None
    versions = answer.get("pins") if data["schema"] == 2 and "pins" in answer else answer.get("versions")
    hashes = answer.get("hashes", {})
    if not isinstance(versions, dict) or not isinstance(hashes, dict):
        return None
    if not all(isinstance(name, str) and isinstance(version, str) for name, version in versions.items()):
        return None
    if not all(isinstance(found, list) and all(isinstance(h, str) for h in found) for found in hashes.values()):
        return None
    return KeptAnswer(dict(versions), {str(name): tuple(found) for name, found in hashes.items()},
                      str(data.get("resolved_at", "")))


def _plain(inputs: JsonObject) -> object:
    """``inputs`` as they read back from JSON (tuples as lists), to compare with what a file holds."""
    return json.loads(json.dumps(inputs, sort_keys=True))
