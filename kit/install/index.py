"""Which JAX releases the package index has, and when each was published.

Reads the index's JSON simple API (PEP 691), which every modern index serves,
so a private mirror configured in matrix.toml works the same as PyPI. Answers
are cached on disk for an hour: a bisect lists candidates many times, and the
machines we run on are often offline-ish clusters with slow proxies.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import Message
from email.parser import Parser
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from .. import http
from ..atomic_files import atomic_write_text
from ..errors import IndexUnreachable, PackageIndexError
from ..json_types import JsonObject
from .wheel_metadata import remote_metadata

_T = TypeVar("_T")

_ACCEPT = "application/vnd.pypi.simple.v1+json"
_CACHE_TTL_S = 3600.0

# How long to wait for the index before calling it unreachable (uv would retry for minutes).
PROBE_TIMEOUT_S = http.PROBE_TIMEOUT_S


@dataclass(frozen=True)
class DistFile:
    filename: str
    version: Version
    url: str
    upload_time: datetime | None
    yanked: bool
    python_tags: tuple[str, ...]
    size: int | None = None
    metadata: bool = False
    """The index serves this wheel's METADATA on its own (PEP 658 / 714)."""
    yanked_reason: str = ""


@dataclass(frozen=True)
class Project:
    name: str
    files: tuple[DistFile, ...]

    def versions(self, include_yanked: bool = False) -> list[Version]:
        """Final (non-pre) releases that have at least one file not yanked (or any file), oldest first."""
        found = {f.version for f in self.files
                 if (include_yanked or not f.yanked) and not f.version.is_prerelease}
        return sorted(found)

    def yanked(self, version: str | Version) -> str | None:
        """Why every file of ``version`` was yanked (PEP 592), or None when one is still served."""
        v = Version(str(version))
        files = [f for f in self.files if f.version == v]
        if not files or not all(f.yanked for f in files):
            return None
        return next((f.yanked_reason for f in files if f.yanked_reason), "") or "yanked"

    def has(self, version: str | Version) -> bool:
        v = Version(str(version))
        return any(f.version == v and not f.yanked for f in self.files)

    def first_upload(self, version: str | Version) -> datetime | None:
        v = Version(str(version))
        times = [f.upload_time for f in self.files if f.version == v and f.upload_time]
        return min(times) if times else None

    def files_for(self, version: str | Version) -> list[DistFile]:
        v = Version(str(version))
        return [f for f in self.files if f.version == v and not f.yanked]


class PackageIndex:
    """A read-only view of one package index, with an on-disk cache."""

    def __init__(self, url: str = "https://pypi.org/simple", cache_dir: Path | None = None) -> None:
        self.url = url.rstrip("/")
        self.cache_dir = cache_dir or Path(os.environ.get("KIT_CACHE_DIR", ".cache/kit"))
        self._projects: dict[str, Project] = {}
        self._reachable = False

    def check_reachable(self) -> None:
        """Ask the index once, quickly, before uv does; raise `IndexUnreachable` if it does not answer.

        Asked of the network even when the pages are cached: uv, called next,
        goes to the network regardless, and would spend minutes retrying.
        """
        if self._reachable:
            return
        url = f"{self.url}/jax/"
        why = http.unreachable(url, timeout=PROBE_TIMEOUT_S)  # any answer, a refused HEAD too, means the network is fine
        if why:
            raise _unreachable(url, why)
        self._reachable = True

    def project(self, name: str) -> Project:
        if name not in self._projects:
            self._projects[name] = _parse_project(name, self._fetch_json(name), f"{self.url}/{name}/")
        return self._projects[name]

    def jax_releases(self, include_yanked: bool = False) -> list[Version]:
        return self.project("jax").versions(include_yanked)

    def unknown_release(self, version: str) -> str:
        """"" when jax==version is on the index (yanked too: uv installs an exact pin of one);
        otherwise one sentence saying so and naming the newest."""
        project = self.project("jax")
        if project.has(version) or project.yanked(version):
            return ""
        releases = self.jax_releases()
        newest = f"; newest is {releases[-1]}" if releases else ""
        return f"jax {version} is not a JAX release on {self.url}{newest}"

    def release_date(self, version: str) -> datetime | None:
        """When jax==version was first uploaded: the start of its era."""
        return self.project("jax").first_upload(version)

    def installable_jaxlibs(self) -> list[Version]:
        return self.project("jaxlib").versions()

    def neighbours(self, version: str) -> list[str]:
        """The nearest releases below and above whose jaxlib the index still has."""
        target = Version(version)
        jaxlibs = set(self.installable_jaxlibs())
        candidates = [v for v in self.jax_releases() if v in jaxlibs and v != target]
        below = [v for v in candidates if v < target]
        above = [v for v in candidates if v > target]
        return [str(v) for v in ([below[-1]] if below else []) + ([above[0]] if above else [])]

    def jax_extras(self, version: str) -> set[str]:
        """The extras jax==version declares (cpu, cuda12, cuda12_pip, cuda13, ...).

        Read from the wheel's METADATA, because the extras that install a GPU
        build changed names over the years and only the release itself knows.
        """
        wheels = [f for f in self.project("jax").files_for(version) if f.filename.endswith(".whl")]
        if not wheels:
            raise PackageIndexError(f"the index has no jax {version} wheel", "check the version number")
        return set(self.core_metadata(wheels[0]).get_all("Provides-Extra") or [])

    def core_metadata(self, file: DistFile) -> Message:
        """The wheel's METADATA, fetched once ever (a file on an index never changes) and kept on disk."""
        cache = self.cache_dir / "metadata" / f"{file.filename}.METADATA"
        if not cache.exists():
            atomic_write_text(cache, _read(file.url, lambda: remote_metadata(file.url, file.size, file.metadata)))
        return Parser().parsestr(cache.read_text(encoding="utf-8"))

    def _fetch_json(self, name: str) -> JsonObject:
        cache = self.cache_dir / "simple" / f"{_cache_name(self.url)}-{name}.json"
        if cache.exists() and time.time() - cache.stat().st_mtime < _CACHE_TTL_S:
            try:
                kept = json.loads(cache.read_text(encoding="utf-8"))
                if isinstance(kept, dict):
                    return kept
            except ValueError:
                pass  # a torn cache file: fetch again
        url = f"{self.url}/{name}/"
        data = json_page(url, _download(url, accept=_ACCEPT))
        atomic_write_text(cache, json.dumps(data))
        return data


def json_page(url: str, body: bytes) -> JsonObject:
    """A project page of the JSON simple API (PEP 691), or `PackageIndexError` saying what came instead.

    An index that serves only the HTML pages (PEP 503) gives no upload
    times, and without them no release's era can be cut off: one sentence, not
    a guess without the cut-off.
    """
    try:
        data = json.loads(body)
    except ValueError:  # UnicodeDecodeError too
        data = None
    if isinstance(data, dict) and isinstance(data.get("files", []), list):
        return data
    tip = ("point install.index_url in matrix.toml at an index that serves the JSON simple API (PEP 691), "
           "as PyPI and most mirrors do")
    if re.search(rb"<\s*(!doctype|html|a\s)", body[:65536], re.IGNORECASE):
        raise PackageIndexError(f"{url} answered with an HTML page (PEP 503), not the JSON simple API (PEP 691) the "
                                "kit reads: only the JSON pages give each file's upload time, which cuts off a "
                                "release's era", tip)
    raise PackageIndexError(f"{url} answered with something other than a project page of the JSON simple API "
                            f"(PEP 691): {body[:80]!r}", tip)


def _download(url: str, accept: str | None = None) -> bytes:
    return _read(url, lambda: http.get(url, {"Accept": accept} if accept else {}).body)


def _read(url: str, read: Callable[[], _T]) -> _T:
    """``read()``, with its failures in the kit's words: the network's (exit 4) or the index's answer (exit 2)."""
    try:
        return read()
    except http.HttpError as exc:
        if exc.status >= 500 or exc.status == 429:  # the server failed, or asks to wait: nothing about the release
            raise IndexUnreachable(f"{url} answered with HTTP {exc.status} ({exc.reason}): the index, or a proxy "
                                   "before it, is failing, which says nothing about the release",
                                   "run the same command again later; releases whose environment is already built "
                                   "run without the index") from None
        raise PackageIndexError(str(exc), "check install.index_url in matrix.toml") from None
    except http.Unreachable as exc:
        raise _unreachable(url, exc.reason) from None


def _unreachable(url: str, why: str) -> IndexUnreachable:
    return IndexUnreachable(
        f"{url} could not be reached over the network ({why})",
        "check the network (and HTTPS_PROXY) or set install.index_url in matrix.toml to a reachable "
        "index; releases whose environment is already built run without it",
    )


def _parse_project(name: str, data: JsonObject, page_url: str) -> Project:
    """The project's files; their URLs made absolute (PEP 691 lets a page give them relative to itself)."""
    files = []
    listed = data.get("files", [])
    for item in listed if isinstance(listed, list) else []:
        filename = item.get("filename", "") if isinstance(item, dict) else ""
        parsed = _parse_filename(filename) if isinstance(filename, str) else None
        if parsed is None:
            continue  # not a file of a release (or not a file entry at all)
        version, tags = parsed
        url, uploaded, size = item.get("url", ""), item.get("upload-time"), item.get("size")
        files.append(
            DistFile(
                filename=filename,
                version=version,
                url=urllib.parse.urljoin(page_url, url if isinstance(url, str) else ""),
                upload_time=_parse_time(uploaded if isinstance(uploaded, str) else None),
                yanked=bool(item.get("yanked")),
                python_tags=tags,
                size=size if isinstance(size, int) and not isinstance(size, bool) else None,
                metadata=bool(item.get("core-metadata") or item.get("data-dist-info-metadata")),
                yanked_reason=item["yanked"] if isinstance(item.get("yanked"), str) else "",
            )
        )
    return Project(name=name, files=tuple(files))


def _parse_filename(filename: str) -> tuple[Version, tuple[str, ...]] | None:
    try:
        if filename.endswith(".whl"):
            _, version, _, tags = parse_wheel_filename(filename)
            return version, tuple(sorted({t.interpreter for t in tags}))
        _, version = parse_sdist_filename(filename)
        return version, ()
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def _cache_name(url: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in url)[-60:]


def versions_between(versions: Iterable[Version], low: str, high: str) -> list[Version]:
    """Versions v with low <= v <= high, oldest first."""
    lo, hi = sorted((Version(low), Version(high)))
    return sorted(v for v in versions if lo <= v <= hi)
