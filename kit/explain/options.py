"""``explain PROGRAM [ARGS...]``'s command line, read once into `Options`.

The kit's own options are taken wherever they stand; every other word after
PROGRAM is the program's, and everything after ``--`` is the program's even
where it looks like one of the kit's (``explain train.py -- --devices 2``).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..arguments import Parser
from ..config import BACKENDS, Matrix, release_number, timeout_seconds
from ..errors import UsageError
from ..install import inspect_interpreter
from ..targets import JAX_PLATFORM
from ..user_paths import file_problem, interpreter_path

DEFAULT_DEVICES = 4
DEFAULT_TIMEOUT_S = 600
USAGE = ("nox -s explain -- PROGRAM [ARGS...] [--releases A,B] [--python PATH] [--devices N] [--timeout S] "
         "[--backend cpu|cuda|tpu]")
_TIP = "e.g. nox -s explain -- examples/programs/train_slogdet.py --releases 0.4.35,0.6.0 (docs/explain.md)"


@dataclass(frozen=True)
class Options:
    program: Path
    """Absolute; the program runs as ``python PROGRAM ARGS`` in ``cwd``."""
    args: tuple[str, ...]
    cwd: Path
    releases: tuple[str, ...]
    """Releases to explain on ("" for ``--python``'s own interpreter, as it is)."""
    python: Path | None
    devices: int | None
    """Forced host devices on CPU; None on a GPU (its real devices)."""
    backend: str
    timeout_s: int
    shown: str
    """The program as reports name it: relative to the folder it was called from."""


def parse(matrix: Matrix, argv: Sequence[str], cwd: Path | None = None) -> Options:
    """The options, each checked where it enters; UsageError with one sentence and a tip otherwise."""
    words = list(argv)
    tail = words[words.index("--") + 1:] if "--" in words else []
    words = words[:words.index("--")] if "--" in words else words
    parser = Parser(prog="nox -s explain --", tip=_TIP, allow_abbrev=False, add_help=False)
    parser.add_argument("--releases", default=None, metavar="A,B")
    parser.add_argument("--python", default=None, metavar="PATH")
    parser.add_argument("--devices", type=int, default=DEFAULT_DEVICES, metavar="N")
    parser.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS")
    parser.add_argument("--backend", default=None, choices=BACKENDS)
    parser.add_argument("--called-from", default=None, help=argparse.SUPPRESS)
    known, rest = parser.parse_known_args(words)
    if not rest or rest[0].startswith("-"):
        raise UsageError(f"explain needs a program{f' (not {rest[0]!r})' if rest else ''}", f"use: {USAGE}")
    folder = Path(known.called_from or cwd or os.getcwd())
    program = Path(os.path.abspath(folder / os.path.expanduser(rest[0])))
    problem = file_problem(program)
    if problem:
        raise UsageError(f"the program {rest[0]} {problem}", "give the path of a Python file, as you would run it")
    if known.devices < 1:
        raise UsageError(f"--devices must be 1 or more, got {known.devices}", "e.g. --devices 4")
    releases = _releases(matrix, known.releases, known.python is not None)
    python = _interpreter(known.python, folder)
    backend = _backend(known.backend, python)
    return Options(program=program, args=tuple(rest[1:] + tail), cwd=folder, releases=releases,
                   python=python, devices=known.devices if backend == "cpu" else None,
                   backend=backend, timeout_s=known.timeout, shown=_shown(program, folder))


def _releases(matrix: Matrix, text: str | None, existing: bool) -> tuple[str, ...]:
    if text is None:
        if existing:
            return ("",)
        if not matrix.releases:
            raise UsageError("matrix.toml names no [[release]] to explain on", "give --releases A,B")
        return (max((r.version for r in matrix.releases), key=_order),)
    parts = [part.strip() for part in text.split(",") if part.strip()]
    releases = tuple(dict.fromkeys(release_number(part, "--releases") for part in parts))
    if not releases:
        raise UsageError("--releases names no release", "e.g. --releases 0.4.35,0.6.0")
    if existing and len(releases) > 1:
        raise UsageError("--python runs one interpreter as it is: it holds one release",
                         "give at most one --releases with --python (the release it must hold)")
    return tuple(sorted(releases, key=_order))


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def _interpreter(text: str | None, folder: Path) -> Path | None:
    return None if text is None else interpreter_path(text, folder)  # as `run --python` finds it


def _backend(asked: str | None, python: Path | None) -> str:
    """``--backend`` as given; with ``--python`` alone, the one that interpreter's JAX reports (tpu on a TPU).

    The default ``cpu`` must not be taken as asked with ``--python``: the
    existing JAX would be refused for running on its own TPU or GPU.
    Forced host devices follow from the answer (CPU only). The probe is the
    same one the run starts with; a JAX that does not report leaves ``cpu``,
    and the run then says why.
    """
    if asked is not None or python is None:
        return asked or "cpu"
    reported = inspect_interpreter(python).backend
    return next((name for name, jax_name in JAX_PLATFORM.items() if jax_name == reported), "cpu")


def _shown(program: Path, folder: Path) -> str:
    try:
        return os.path.relpath(program, folder)
    except ValueError:
        return program.name

