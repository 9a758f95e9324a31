"""Whether two versions of a test function are the same, from a digest of its syntax tree, parsed once per file
version and kept where an audit's files are kept.

An audit asks it for each harvested test (may the newest copy of a file run it? is the release's copy the
fix's?): parsing JAX's big test modules (``ast.parse`` of ``api_test.py``: a quarter of a second) and dumping
every function in them was most of the audit's own CPU, 20 s of it on this machine. A version of a file is
its git blob, whose id is its content's hash: the digest of one function of one blob never changes, so the
digests kept beside the environment (`kit.known.harvest.kept_tests`) are reused by every later audit, and a
blob is parsed once for all the tests the audit wants of it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from pathlib import Path
from typing import Iterable

from ...atomic_files import atomic_write_text
from ...history.git import GitFailed, git
from ...history.source import History
from ...records import JsonTextError, read_json
from .changed_tests import TestFunction, parsed_tests
from .compiling_tests import RULES
from .compiling_tests import looks_at_compiling as _looks_at_compiling

NO_BLOB = "none at "
ABSENT = ""
"""The digest said of a test that a version of its file lacks."""
COMPILING, LOOKS = f"compiling-{RULES}:", "looks"
"""The kept key of whether a test looks at compiling by today's rules (its digest's key after it), and its value
where it does."""


class FunctionTrees:
    """Digests of the ``wanted`` test functions' trees, per blob; read from and written to ``kept`` if given."""

    def __init__(self, history: History, wanted: Iterable[TestFunction], kept: Path | None = None) -> None:
        self.history, self.kept = history, kept
        self.wanted: dict[str, set[TestFunction]] = {}
        for test in wanted:
            self.wanted.setdefault(test.path, set()).add(test)
        self.digests: dict[str, str] = _read(kept) if kept is not None else {}
        self.changed = False

    def tree(self, ref: str, test: TestFunction) -> str | None:
        """The digest of ``test``'s tree in ``ref``'s copy of its file; None where that copy lacks it."""
        blob = blob_at(self.history.path, ref, test.path)
        if blob.startswith(NO_BLOB):
            return None
        key = _key(blob, test)
        if key not in self.digests:
            self._parse(blob, test)
        return self.digests[key] or None

    def looks_at_compiling(self, ref: str, test: TestFunction) -> bool:
        """Whether ``ref``'s copy of ``test`` names anything that sees XLA's compile
        (`kit.known.harvest.compiling_tests`); False where that copy lacks it. Kept beside the
        digests, found in the same parse."""
        blob = blob_at(self.history.path, ref, test.path)
        if blob.startswith(NO_BLOB):
            return False
        key = COMPILING + _key(blob, test)
        if key not in self.digests:
            self._parse(blob, test)
        return self.digests.get(key) == LOOKS

    def save(self) -> None:
        if self.kept is not None and self.changed:
            atomic_write_text(self.kept, json.dumps(self.digests, sort_keys=True))

    def _parse(self, blob: str, asked: TestFunction) -> None:
        try:
            nodes, module = parsed_tests(git(self.history.path, "cat-file", "blob", blob), asked.path)
        except GitFailed:
            nodes, module = {}, None
        for test in self.wanted.get(asked.path, set()) | {asked}:
            node = nodes.get(test)
            self.digests[_key(blob, test)] = hashlib.sha256(ast.dump(node).encode()).hexdigest() if node else ABSENT
            self.digests[COMPILING + _key(blob, test)] = LOOKS if node and _looks_at_compiling(node, module) else ""
        self.changed = True


def _key(blob: str, test: TestFunction) -> str:
    return f"{blob}:{test.cls}:{test.name}"


def _read(path: Path) -> dict[str, str]:
    try:
        data = read_json(path)
    except (OSError, JsonTextError):
        return {}  # none kept yet (or torn by a crash: it is only a cache)
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


@functools.lru_cache(maxsize=1024)
def blob_at(clone: Path, ref: str, path: str) -> str:
    """The id of ``path``'s blob at ``ref`` (``none at REF`` where it has none)."""
    try:
        return git(clone, "rev-parse", f"{ref}:{path}").strip()
    except GitFailed:
        return f"{NO_BLOB}{ref}"
