"""The harvest's store: every probe kept as a file, so a harvest stopped by Ctrl-C or a crash resumes where it was.

One file per side of a confirming pair (``probes/COMMIT-fix-BUILD.json``
and ``...-parent-...``), written atomically once its pytest process ended;
a commit whose two sides are there for the build is not run again. The
build's key (release, jaxlib, interpreter, harness, overlay format) is in
the name, so another build probes again. What a commit came to (an entry:
confirmed or binary; or unrun and why) is ``COMMIT.json`` beside them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ...atomic_files import atomic_write_text
from ...json_types import JsonObject
from ...records import JsonTextError, read_json

FIX, PARENT = "fix", "parent"
SIDES = (FIX, PARENT)


@dataclass(frozen=True)
class BuildKey:
    """The build both sides run on, as a probe names it."""

    release: str
    jaxlib: str
    python: str
    harness: tuple[str, ...]
    overlay_format: int

    def to_json(self) -> JsonObject:
        return {"release": self.release, "jaxlib": self.jaxlib, "python": self.python,
                "harness": list(self.harness), "overlay_format": self.overlay_format}

    @property
    def tag(self) -> str:
        text = json.dumps(self.to_json(), sort_keys=True)
        return f"jaxlib-{self.jaxlib}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class Store:
    folder: Path

    @property
    def probes(self) -> Path:
        return self.folder / "probes"

    def probe_path(self, commit: str, side: str, build: BuildKey) -> Path:
        return self.probes / f"{commit[:12]}-{side}-{build.tag}.json"

    def probe(self, commit: str, side: str, build: BuildKey) -> JsonObject | None:
        """A side kept earlier for this build, or None (absent, torn by another tool, not ours)."""
        try:
            data = read_json(self.probe_path(commit, side, build))
        except (OSError, JsonTextError):
            return None
        return data if isinstance(data, dict) and data.get("commit") == commit and data.get("side") == side else None

    def put_probe(self, commit: str, side: str, build: BuildKey, record: JsonObject) -> None:
        self.probes.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.probe_path(commit, side, build),
                          json.dumps({"commit": commit, "side": side, "build": build.to_json(), **record}, indent=1))

    def result_path(self, commit: str) -> Path:
        return self.folder / f"{commit[:12]}.json"

    def put_result(self, commit: str, result: JsonObject) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.result_path(commit), json.dumps(result, indent=1) + "\n")

    def results(self) -> list[JsonObject]:
        """Every commit's result kept here, oldest commit date first."""
        found = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                data = read_json(path)
            except (OSError, JsonTextError):
                continue
            if isinstance(data, dict) and isinstance(data.get("commit"), str):
                found.append(data)
        return sorted(found, key=lambda d: (str(d.get("date", "")), str(d.get("commit"))))
