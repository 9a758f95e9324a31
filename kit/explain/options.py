"""``explain PROGRAM [ARGS...]``'s command line, read once into `ExplainOptions`.

The kit's own options are taken wherever they stand; every other word after
PROGRAM is the program's, and everything after ``--`` is the program's even
where it looks like one of the kit's (``explain train.py -- --devices 2``).
"""

from __future__ import annotations

import argparse
import difflib
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from .. import launch
from ..arguments import Parser
from ..config import Matrix, release_number
from ..check_settings import timeout_seconds
from ..targets import BACKENDS
from ..errors import UsageError
from ..install import inspect_interpreter
from ..targets import JAX_PLATFORM, Target, named_targets, parse_target
from ..user_paths import file_problem, interpreter_path

DEFAULT_DEVICES = 4
DEFAULT_TIMEOUT_S = 600
USAGE = ("nox -s explain -- PROGRAM [ARGS...] [--releases A,B] [--python PATH] [--devices N] [--timeout S] "
         "[--backend cpu|cuda|tpu] [--target tpu:v5e:2x2|gpu:a100:4|...] [--processes N [--launcher local|srun|ssh] "
         "[--hosts A,B]]")
_TIP = "e.g. nox -s explain -- examples/programs/train_slogdet.py --releases 0.4.35,0.6.0 (docs/explain.md)"


@dataclass(frozen=True)
class ExplainOptions:
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
    target: Target | None
    """A chip to compile for without having it (``--target``): the program runs on ``devices`` CPU host devices."""
    shown: str
    """The program as reports name it: relative to the folder it was called from."""
    processes: int = 1
    """Run as this many processes joined by jax.distributed (``--processes``), ``devices`` split equally over them."""
    launcher: str = "local"
    """How they start (`kit.launch`): ``local``, ``srun``, ``ssh``."""
    hosts: tuple[str, ...] = ()

    @property
    def launch_spec(self) -> launch.LaunchSpec:
        per_process = self.devices // self.processes if self.devices else None
        return launch.LaunchSpec(self.processes, per_process, self.hosts)


def parse(matrix: Matrix, argv: Sequence[str], cwd: Path | None = None) -> ExplainOptions:
    """The options, each checked where it enters; UsageError with one sentence and a tip otherwise."""
    words = list(argv)
    tail = words[words.index("--") + 1:] if "--" in words else []
    words = words[:words.index("--")] if "--" in words else words
    parser = Parser(prog="nox -s explain --", tip=_TIP, allow_abbrev=False, add_help=False)
    parser.add_argument("--releases", default=None, metavar="A,B")
    parser.add_argument("--python", default=None, metavar="PATH")
    parser.add_argument("--devices", type=int, default=None, metavar="N")
    parser.add_argument("--timeout", type=timeout_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS")
    parser.add_argument("--backend", default=None, choices=BACKENDS)
    parser.add_argument("--target", default=None, metavar="TARGET")
    parser.add_argument("--processes", type=int, default=1, metavar="N")
    parser.add_argument("--launcher", default=None, metavar="NAME")
    parser.add_argument("--hosts", default=None, metavar="A,B")
    parser.add_argument("--called-from", default=None, help=argparse.SUPPRESS)
    known, rest = parser.parse_known_args(words)
    _refuse_near_misses(rest, [o for action in parser._actions for o in action.option_strings])
    if not rest or rest[0].startswith("-"):
        raise UsageError(f"explain needs a program{f' (not {rest[0]!r})' if rest else ''}", f"use: {USAGE}")
    folder = Path(known.called_from or cwd or os.getcwd())
    program = Path(os.path.abspath(folder / os.path.expanduser(rest[0])))
    problem = file_problem(program)
    if problem:
        raise UsageError(f"the program {rest[0]} {problem}", "give the path of a Python file, as you would run it")
    if known.devices is not None and known.devices < 1:
        raise UsageError(f"--devices must be 1 or more, got {known.devices}", "e.g. --devices 4")
    target = _target(known.target, known.backend or "cpu", folder)
    devices = known.devices or (target.devices if target else DEFAULT_DEVICES)
    if target and devices > target.devices:
        raise UsageError(f"--devices {devices} is more than {target.title} has",
                         f"give --devices {target.devices} or fewer (the program's mesh must fit the target)")
    releases = _releases(matrix, known.releases, known.python is not None)
    python = _interpreter(known.python, folder)
    backend = "cpu" if target else _backend(known.backend, python)
    options = ExplainOptions(program=program, args=tuple(rest[1:] + tail), cwd=folder, releases=releases,
                      python=python, devices=devices if backend == "cpu" else None,
                      backend=backend, timeout_s=known.timeout, target=target, shown=_shown(program, folder))
    return _processes(options, known.processes, known.launcher, known.hosts)


def _processes(options: ExplainOptions, processes: int, launcher: str | None, hosts: str | None) -> ExplainOptions:
    """``--processes N [--launcher NAME] [--hosts A,B]``: checked before anything is built."""
    if processes < 1:
        raise UsageError(f"--processes must be 1 or more, got {processes}", "e.g. --processes 2")
    names = tuple(dict.fromkeys(h.strip() for h in (hosts or "").split(",") if h.strip()))
    if processes == 1 and not launcher and not names:
        return options
    if options.target:
        raise UsageError("--target compiles one process's program for a chip: it cannot go with --processes",
                         "drop --processes (or --target)")
    if options.devices and options.devices % processes:
        raise UsageError(f"--devices {options.devices} does not split over {processes} processes",
                         f"give --devices {processes * max(1, options.devices // processes)} (the devices of all "
                         "processes together, an equal share each)")
    name = launcher or ("ssh" if names else "local")
    options = replace(options, processes=processes, launcher=name, hosts=names)
    launch.checked(name, options.launch_spec)
    return options


HELP = f"""usage: {USAGE}

Runs PROGRAM unmodified on each release with XLA's dump on and says which op is not split across devices.
The kit's options stand anywhere; every other word is the program's (after -- even where it looks like one).

  --releases A,B   releases to explain on (default: the newest in matrix.toml)
  --python PATH    your own interpreter, as it is (a name is looked up on PATH)
  --devices N      CPU host devices (default 4, or the target's)
  --timeout S      stop the program after S seconds (default {DEFAULT_TIMEOUT_S})
  --backend B      cpu, cuda or tpu: where the program runs (with --python: what its JAX reports)
  --target T       compile for a chip this machine lacks, not run: {', '.join(named_targets())},
                   or FILE.toml describing your own (docs/targets.md)
  --processes N    run it as N processes joined by jax.distributed, --devices split over them (default 1)
  --launcher NAME  how they start: {', '.join(f"{n} ({l.summary})" for n, l in launch.LAUNCHERS.items())}
  --hosts A,B      the hosts for --launcher ssh (docs/cluster.md)

docs/explain.md, docs/targets.md, docs/cluster.md"""


def _refuse_near_misses(rest: list[str], options: list[str]) -> None:
    """A word that is almost one of the kit's options (``--relases``) is a typo, not the program's: refused."""
    for word in rest[1:] if rest and not rest[0].startswith("-") else rest:
        name = word.split("=", 1)[0]
        if not name.startswith("--") or name in options:
            continue
        near = difflib.get_close_matches(name, options, n=1, cutoff=0.8)
        if near:
            raise UsageError(f"{name} is not an option of explain; did you mean {near[0]}?",
                             "the program's own options that look like the kit's go after -- "
                             f"(explain PROGRAM -- {name} ...)")


def _target(text: str | None, backend: str, folder: Path) -> Target | None:
    """``--target``: compiled for, not run, so the program itself runs on this machine's CPU (a target file read
    from ``folder``, where the program's path is)."""
    if text is None:
        return None
    if backend != "cpu":
        raise UsageError(f"--target compiles for {text} from a run on CPU: it cannot go with --backend {backend}",
                         "drop --backend (the program runs on CPU host devices, the target's compiler does the rest)")
    # With --python the interpreter must hold the target's compiler itself (jax[tpu] on a TPU machine, the CUDA
    # plugin); the run says so where it does not. Its program still runs on CPU host devices, as without it.
    return parse_target(text, folder)


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

