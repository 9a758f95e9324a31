"""An audit's test files kept beside the release's environment, so that its imports reuse their bytecode.

An audit with ``--harvested`` imports some two hundred of JAX's test modules
(``api_test.py`` is 12,000 lines): laid out afresh in a scratch folder each
time, with the bytecode written under that folder too, every audit compiled
all of them and all of JAX again, and rewrote every module's assertions
(pytest), a third of its CPU. Kept here, in the environment's own folder
(deleted with it), each file as of its commit or tag is written once: a
commit's file never changes, so its bytecode, kept under the environment's
``PYTHONPYCACHEPREFIX`` (`kit.install.release_bytecode_env`) and checked by
Python and pytest against the file's size and time stamp, stays valid. The
pytest settings text names its folder, so two audits side by side share files
but never overwrite each other's settings; each file is moved into place
whole, so a file there is complete.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Sequence

from ...atomic_files import atomic_write_text
from ...history.export import export_files
from ...history.source import History
from ...install import Environment, release_bytecode_env

KEPT = ".kit-harvest-tests"


def kept_home(environment: Environment) -> Path | None:
    """Where ``environment`` keeps an audit's test files: a folder of its own (None: it keeps no bytecode, not
    being one the kit built)."""
    if not release_bytecode_env(environment):
        return None
    return environment.python.parent.parent / KEPT


def kept_root(environment: Environment, settings: str | None) -> Path | None:
    """The folder an audit's test files are kept in for ``environment`` and the pytest ``settings`` text (its
    ``pyproject.toml``, written there; None: no settings file); None where nothing is kept (`kept_home`)."""
    home = kept_home(environment)
    if home is None:
        return None
    root = home / (hashlib.sha256(settings.encode()).hexdigest()[:16] if settings is not None else "no-settings")
    root.mkdir(parents=True, exist_ok=True)
    if settings is not None and not (root / "pyproject.toml").is_file():
        atomic_write_text(root / "pyproject.toml", settings)
    return root


def kept_file(environment: Environment, name: str) -> Path | None:
    """A file of `kept_home`, shared by every settings text (``function-trees.json``); None where nothing is kept."""
    home = kept_home(environment)
    if home is None:
        return None
    home.mkdir(parents=True, exist_ok=True)
    return home / name


def lay_out(history: History, source: str, paths: Sequence[str], folder: Path) -> None:
    """``paths`` (and its ``conftest.py``) as of ``source`` in ``folder``, each written only where it is not
    there yet: rewriting a file would change its time stamp and throw its bytecode away (GitFailed: ``source``
    has none of them)."""
    missing = [path for path in paths if not (folder / path).is_file()]
    if not missing:
        return
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".part-", dir=folder.parent) as part:
        for path in export_files(history, source, [*missing, "conftest.py"], Path(part)):
            target = folder / path
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(Path(part) / path, target)
