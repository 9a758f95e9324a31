"""The lock of a built environment: the plan, exact versions and file hashes it was resolved to.

Resolving a release asks the index and uv (seconds to a minute, and nothing
at all when the network is down). Once a release's environment is built, the
answer is kept here, keyed by the install settings that decide it, so the
next session goes straight from matrix.toml to the repro: no index, no uv.

It is resolved again only when asked (``--refresh``) or when those settings
change: the release's block in matrix.toml, the ``[install]`` section, the
backend, extra ``--find-links``, or the kit's way of planning (`PLAN_FORMAT`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from repro.contract import strict_json

from ..atomic_files import atomic_write_text
from ..config import Matrix, Release
from ..json_types import JsonObject
from ..records import JsonTextError, read_json
from .key import InstallKey
from .plan import InstallPlan, Resolution

LOCK_SCHEMA = 2
"""2: the resolved versions are ``versions``; schema 1 called them ``pins`` (beside the settings' ``pins``, the
user's ``--pin`` holds) and still reads, so no lock made before is resolved again. The on-disk word changed
with the Python one, so the two meanings never share a name in one file; an older kit meets a schema it does
not know and resolves again, as for any lock it cannot trust."""
_READ_SCHEMAS = {1: "pins", LOCK_SCHEMA: "versions"}
"""Each schema read, and its key for the resolved versions."""

# Bump when plan_install would plan the same settings differently, so every
# lock made by the older planning is resolved again.
PLAN_FORMAT = 2


@dataclass(frozen=True)
class Lock:
    path: Path
    plan: InstallPlan
    resolution: Resolution
    resolved_at: str


LockSettings = JsonObject
"""The settings a lock is made under, as its file holds them: only ever hashed (its name), compared with a
file's and written, so they stay the JSON object they are written as."""


def install_settings(matrix: Matrix, release: Release, key: InstallKey) -> LockSettings:
    """Everything in matrix.toml and on the command line that decides how the release installs.

    The run's `InstallKey` (backend, extra find-links, packages held with
    ``--pin``, a check's extra packages) is one part: each pin set and
    requirement set has its own lock.
    """
    settings: LockSettings = {
        "plan_format": PLAN_FORMAT,
        "jax": release.version,
        "release": {"python": release.python, "find_links": list(release.find_links),
                    "extra_index_urls": list(release.extra_index_urls)},
        "install": json.loads(json.dumps(asdict(matrix.install))),
        **key.settings(),
    }
    return settings


def lock_path(envs_dir: Path, settings: LockSettings) -> Path:
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    return Path(envs_dir) / "locks" / f"jax-{settings['jax']}-{settings['backend']}-{digest}.json"


def read_lock(envs_dir: Path, settings: LockSettings) -> Lock | None:
    """The lock made under exactly these settings, or None (missing, torn, or other settings)."""
    path = lock_path(envs_dir, settings)
    try:
        data: object = read_json(path)
        if not isinstance(data, dict):
            return None
        schema = data.get("schema")
        if not isinstance(schema, int) or schema not in _READ_SCHEMAS or data.get("settings") != settings:
            return None
        plan = _plan(data["plan"])
        hashes = data.get("hashes", {})
        resolution = Resolution(python=_text(data["python"]), ok=True,
                                versions=_text_map(data[_READ_SCHEMAS[schema]]),
                                hashes={name: _texts(found) for name, found in _object(hashes).items()})
    except (JsonTextError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing, torn or hand-edited: resolve again
    return Lock(path, plan, resolution, str(data.get("resolved_at", "")))


_PLAN_LISTS = ("extra_index_urls", "find_links", "pythons", "notes", "pins", "requires")
"""The plan's lists that a lock may leave out (their defaults); ``requirements`` it always holds."""


def _plan(value: object) -> InstallPlan:
    """The plan a lock holds, checked field by field; ValueError or KeyError where it is not one."""
    data = _object(value)
    unknown = set(data) - {"jax", "backend", "requirements", "exclude_newer", "index_url", *_PLAN_LISTS}
    if unknown:
        raise ValueError(f"not a plan's fields: {sorted(unknown)}")
    cut = data["exclude_newer"]
    return InstallPlan(jax=_text(data["jax"]), backend=_text(data["backend"]),
                       requirements=_texts(data["requirements"]), exclude_newer=None if cut is None else _text(cut),
                       index_url=_text(data["index_url"]),
                       **{name: _texts(data[name]) for name in _PLAN_LISTS if name in data})


def _object(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return {str(key): item for key, item in value.items()}


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _texts(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError("not a list")
    return tuple(_text(item) for item in value)


def _text_map(value: object) -> dict[str, str]:
    return {name: _text(item) for name, item in _object(value).items()}


# What this process read of each lock, with the file's stamp then (see `current_lock`).
_READ: dict[Path, tuple[tuple[int, ...] | None, str, Lock | None]] = {}
_READ_GUARD = threading.Lock()


def current_lock(envs_dir: Path, settings: LockSettings) -> Lock | None:
    """`read_lock`, read again only when the file changed since this process last read it.

    One bisect asks for a release's lock where it looks for a remembered probe,
    where it resolves ahead and where it prepares (each one read, 19 reads of 9
    files on a 5-probe bisect, before this). A lock another process writes meanwhile (a second bisect
    building the same release) must still be seen: without it this process
    resolves on its own, and where the index answers otherwise now it builds
    the environment the other one uses again. So no answer is kept blind: each
    question costs a stat of the file, and a file that appeared, went or changed
    since is read again. The kit writes a lock by replacing it with a new file
    (`atomic_write_text`), so every write is a new inode; a hand edit in place
    changes its size or modification time.
    """
    path = lock_path(envs_dir, settings)
    stamp = _stamp(path)
    wanted = json.dumps(settings, sort_keys=True)
    with _READ_GUARD:  # the resolve-ahead threads ask too: one read each, not one per thread
        known = _READ.get(path)
        if known is not None and known[:2] == (stamp, wanted):
            return known[2]
        lock = read_lock(envs_dir, settings) if stamp is not None else None
        _READ[path] = (stamp, wanted, lock)  # the stamp from before the read: a write in between is read next time
    return lock


def _stamp(path: Path) -> tuple[int, ...] | None:
    """What changes whenever the file at ``path`` is replaced or written; None where there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def write_lock(envs_dir: Path, settings: LockSettings, plan: InstallPlan, resolution: Resolution) -> Path:
    path = lock_path(envs_dir, settings)
    data = {
        "schema": LOCK_SCHEMA,
        "settings": settings,
        "plan": plan.to_json(),
        "python": resolution.python,
        "versions": dict(sorted(resolution.versions.items())),
        "hashes": {name: list(found) for name, found in sorted(resolution.hashes.items())},
        "resolved_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    atomic_write_text(path, strict_json(data))
    with _READ_GUARD:
        _READ.pop(path, None)  # the next question reads what was written
    return path
