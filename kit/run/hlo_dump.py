"""XLA's HLO dump of a program's compiles: the flags that ask for it, and a folder kept to what is read.

XLA writes, per module it compiles, the HLO before and after optimizations
and, on newer releases, buffer assignments, memory reports, LLVM IR and
object files beside them. `Dump` watches the folder while the program runs:
every file but the two HLO texts is deleted as it appears, and the texts
are kept up to `LIMIT_BYTES` in all; a module past that is deleted and named
(`Dump.dropped`), so a program that compiles thousands of modules cannot
fill the disk, and what compiled before a crash, an exit or a timeout is
still there to read.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

LIMIT_BYTES = 512 * 1024 * 1024
POLL_S = 0.2
AFTER, BEFORE = "after_optimizations.txt", "before_optimizations.txt"
_MODULE = re.compile(r"^module_(\d+)\.(.+?)\.(?:[\w.\-]*_)?(?:after|before)_optimizations\.txt$")


def dump_flags(folder: Path, flags: str) -> str:
    """``flags`` (an XLA_FLAGS value, kept) with the dump asked into ``folder``, as HLO text."""
    kept = re.sub(r"--xla_dump_(?:to|hlo_as_text)(?:=\S*)?", "", flags).split()
    return " ".join([*kept, f"--xla_dump_to={folder}", "--xla_dump_hlo_as_text"])


@dataclass(frozen=True)
class DumpedModule:
    """One compiled module's two texts (``before`` is None where XLA wrote none, or it was dropped)."""

    number: int
    name: str
    after: Path
    before: Path | None


@dataclass
class Dump:
    """The dump folder, pruned on a thread while the program runs; a context manager around the run."""

    folder: Path
    limit_bytes: int = LIMIT_BYTES
    kept_bytes: int = 0
    dropped: list[str] = field(default_factory=list)
    _kept: dict[str, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Dump:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._watch, name="hlo-dump", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.prune()  # what the program wrote after the last look

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            self.prune()

    def prune(self) -> None:
        """Delete every file not read; keep HLO texts while they fit in the limit, name the rest dropped."""
        try:
            entries = sorted(os.scandir(self.folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name in self._kept:
                continue
            keep = entry.is_file(follow_symlinks=False) and entry.name.endswith((AFTER, BEFORE))
            size = entry.stat(follow_symlinks=False).st_size if keep else 0
            if keep and self.kept_bytes + size <= self.limit_bytes:
                self._kept[entry.name] = size
                self.kept_bytes += size
                continue
            if keep:
                self.dropped.append(entry.name)
            _remove(Path(entry.path))

    def modules(self) -> list[DumpedModule]:
        """Each module that has an after-optimizations text, in the order XLA numbered them."""
        return [DumpedModule(number, name, paths["after"], paths.get("before"))
                for (number, name), paths in self._texts() if "after" in paths]

    def uncompiled(self) -> list[DumpedModule]:
        """Each module with a text before optimizations and none after: lowered, and then its compile failed (a
        target's compiler refused it), or its text after was past the limit. ``after`` is its text before."""
        return [DumpedModule(number, name, paths["before"], paths["before"])
                for (number, name), paths in self._texts() if "after" not in paths]

    def _texts(self) -> list[tuple[tuple[int, str], dict[str, Path]]]:
        found: dict[tuple[int, str], dict[str, Path]] = {}
        for name in self._kept:
            matched = _MODULE.match(name)
            if matched and (self.folder / name).is_file():
                stage = "after" if name.endswith(AFTER) else "before"
                found.setdefault((int(matched.group(1)), matched.group(2)), {})[stage] = self.folder / name
        return sorted(found.items())


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            for child in path.iterdir():
                _remove(child)
            path.rmdir()
        else:
            path.unlink()
    except OSError:
        pass  # gone already, or still being written: the next look takes it
