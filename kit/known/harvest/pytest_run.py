"""One side of a confirming pair: a commit's tests run by pytest, in one process, in an environment laid over.

The test files come from the fix commit (both sides run the fix's version of
the test); the environment is the build with the commit's or the parent's
Python laid over it. `select_plugin` keeps the asked test functions only and
writes each case's outcome; a test function's outcome is its cases': failed
where any failed, passed where any passed and none failed, skipped where all
were skipped, ``uncollected`` where pytest found none (its file did not import).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from ...install import Environment
from ...json_types import JsonObject, as_list
from ...records import JsonTextError, read_json
from ...run.child_processes import repro_env
from .changed_tests import TestFunction
from .reused_compiles import CALLERS_CACHE, cache_env

PLUGIN = "kit_harvest_select"
GENERATED_CASES = 4
"""``JAX_NUM_GENERATED_CASES``: how many cases each of JAX's sampled parametrisations runs (JAX's CI: 10 to 25)."""
HOST_DEVICES = 8
"""CPU devices, as JAX's CPU CI forces them: a sharding test skips with fewer."""
TIMEOUT_S = 1200

PASSED, FAILED, SKIPPED, UNCOLLECTED = "passed", "failed", "skipped", "uncollected"
NOT_RUN = "not run"
"""A parent's side left out because no test passed at the fix (`kit.known.harvest.confirm`)."""


UNFINISHED, NO_RESULTS = "pytest did not finish in", "pytest wrote no results"
"""How a test's message begins where its process ended before it: no outcome of the test itself."""


def ended_early(message: str) -> bool:
    """Whether a test not collected was not collected because its process ended early (`UNFINISHED`, `NO_RESULTS`),
    not because its file did not import."""
    return message.startswith((UNFINISHED, NO_RESULTS))


class SideInterrupted(Exception):
    """The side's pytest was stopped (Ctrl-C, a signal): nothing of it is kept, so a resumed harvest runs it again."""


@dataclass(frozen=True)
class TestOutcome:
    """What one test function did on one side: its outcome, how many cases, the first message that explains it."""

    __test__ = False  # a name pytest would otherwise try to collect

    outcome: str
    cases: int = 0
    message: str = ""

    def to_json(self) -> JsonObject:
        return {"outcome": self.outcome, "cases": self.cases, "message": self.message}

    @staticmethod
    def of(data: object) -> TestOutcome:
        if not isinstance(data, dict):
            return TestOutcome(UNCOLLECTED, 0, "no record")
        return TestOutcome(str(data.get("outcome", UNCOLLECTED)), int(data.get("cases", 0) or 0),
                           str(data.get("message", "")))


@dataclass
class SideRun:
    """One pytest process: each asked test function's outcome, what the process said when it ended badly, and
    the seconds each test file's cases took (``file_seconds``)."""

    outcomes: dict[str, TestOutcome] = field(default_factory=dict)
    seconds: float = 0.0
    exit_code: int | None = None
    problem: str = ""
    file_seconds: dict[str, float] = field(default_factory=dict)


Entry = Sequence[tuple[TestFunction, str]]
"""A harvested entry as a release probe runs it: each of its tests, with its message at the fix's parent."""

_CALLER_PYTEST_SETTINGS = ("CI", "BUILD_NUMBER", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DEBUG")


def run_side(environment: Environment, workdir: Path, tests: Sequence[TestFunction],
             timeout: int = TIMEOUT_S, extra_args: Sequence[str] = (), own: Path | None = None,
             bytecode: Mapping[str, str] | None = None, entries: Sequence[Entry] = (),
             compile_cache: Path | None = None) -> SideRun:
    """Run ``tests`` (files under ``workdir``) with ``environment``'s Python and path, one pytest process
    (``extra_args`` before the files: ``--import-mode=importlib`` where two copies of one file run together).
    ``own``: the run's own folder for its results and plugin, where ``workdir`` is shared (default: ``workdir``);
    ``bytecode``: where the imports' bytecode goes (default: a folder of ``own``, thrown away with it);
    ``entries`` (a release probe's): each entry's tests with their messages at the fix's parent, so that an
    entry's tests stop once one shows it present (`select_plugin`); ``compile_cache``: the folder of compiles
    reused (`kit.known.harvest.reused_compiles`; None: every compile is the process's own)."""
    own = own or workdir
    results = own / f"results-{time.monotonic_ns()}.json"
    plugin_dir = own / "kit-plugin"
    plugin_dir.mkdir(exist_ok=True)
    shutil.copyfile(Path(__file__).with_name("select_plugin.py"), plugin_dir / f"{PLUGIN}.py")
    shutil.copyfile(Path(__file__).with_name("failure_signatures.py"), plugin_dir / "kit_harvest_signatures.py")
    files = sorted({test.path for test in tests})
    told = {**environment.isolating_env(), "KIT_HARVEST_SELECT": json.dumps([t.to_json() for t in tests]),
            "KIT_HARVEST_RESULTS": str(results), "JAX_NUM_GENERATED_CASES": str(GENERATED_CASES),
            "KIT_HARVEST_ENTRIES": str(_entries_file(own, entries)),
            "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_force_host_platform_device_count={HOST_DEVICES}",
            **(bytecode if bytecode is not None else {"PYTHONPYCACHEPREFIX": str(own / "pycache")})}
    env = repro_env(told, (*environment.pythonpath, plugin_dir))
    # pytest prints whole diffs where CI or BUILD_NUMBER is set, and the caller's PYTEST_ADDOPTS changes what it
    # prints too: the failure messages kept (their last E lines) are compared with those recorded elsewhere, so
    # they must not depend on who runs the kit (under CI the assert line fell out and a present bug read untested).
    # Nor the caller's compilation cache: a run reuses the kit's compiles where asked, none otherwise.
    for name in (*_CALLER_PYTEST_SETTINGS, *CALLERS_CACHE):
        env.pop(name, None)
    env.update(cache_env(compile_cache))
    # A file that does not import is its tests' outcome (not collected), not the end of the others' run.
    command = [str(environment.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN,
               "--continue-on-collection-errors",
               "--rootdir", str(workdir), *extra_args, *files]
    started = time.monotonic()
    side = SideRun()
    try:
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, errors="replace",
                              timeout=timeout, stdin=subprocess.DEVNULL)
        side.exit_code = done.returncode
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        side.problem, tail = f"{UNFINISHED} {timeout} s", []
    side.seconds = time.monotonic() - started
    try:
        data = read_json(results)
    except (OSError, JsonTextError):
        side.problem = side.problem or f"{NO_RESULTS} (exit {side.exit_code}): {' | '.join(tail)}"[:600]
        data = {}
    if (side.exit_code is not None and side.exit_code < 0) or (isinstance(data, dict) and data.get("interrupted")):
        raise SideInterrupted(f"pytest was stopped (exit {side.exit_code}) after {side.seconds:.0f} s")
    side.outcomes = summarised(tests, data if isinstance(data, dict) else {}, side.problem)
    timed = data.get("seconds") if isinstance(data, dict) else None
    side.file_seconds = {str(k): float(v) for k, v in timed.items()
                         if isinstance(v, (int, float))} if isinstance(timed, dict) else {}
    folders = {environment.python.parent.parent: "<env>", workdir: "<tests>", own: "<tests>",
               **{path: "<overlay>" for path in environment.pythonpath}}
    side.outcomes = {node: replace(outcome, message=named_folders(outcome.message, folders))
                     for node, outcome in side.outcomes.items()}
    return side


def _entries_file(own: Path, entries: Sequence[Entry]) -> Path:
    """The entries written where the plugin reads them: a file, not a variable (one variable is at most 128 KiB
    on Linux, and each test's message at the parent is up to 1,000 characters: 79 KB for today's 136 entries)."""
    path = own / f"entries-{time.monotonic_ns()}.json"
    path.write_text(json.dumps([[[*test.to_json(), parent] for test, parent in entry] for entry in entries]),
                    encoding="utf-8")
    return path


def named_folders(text: str, folders: Mapping[Path, str]) -> str:
    """``text`` with this machine's folders named by what they are (``<env>/lib/...``): the messages are kept in
    the catalogue's data and shown in audit reports pasted into bug threads (the data held /root/... and /tmp/...)."""
    for folder, name in sorted(folders.items(), key=lambda pair: -len(str(pair[0]))):
        for form in dict.fromkeys((str(folder), str(folder.resolve()))):
            text = text.replace(form, name)
    return text


def summarised(tests: Sequence[TestFunction], data: dict[str, object], problem: str = "") -> dict[str, TestOutcome]:
    """Each test function's outcome from the plugin's cases (see the module's docstring)."""
    cases = [c for c in as_list(data.get("cases")) if isinstance(c, list) and len(c) == 6]
    errors = [e for e in as_list(data.get("collect_errors")) if isinstance(e, list) and len(e) == 2]
    out: dict[str, TestOutcome] = {}
    for test in tests:
        own = [c for c in cases if (c[0], c[1], c[2]) == (test.path, test.cls, test.name)]
        failed = [c for c in own if c[4] in (FAILED, "error")]
        if failed:
            out[test.node_id] = TestOutcome(FAILED, len(own), str(failed[0][5]))
        elif any(c[4] == PASSED for c in own):
            out[test.node_id] = TestOutcome(PASSED, len(own))
        elif own:
            out[test.node_id] = TestOutcome(SKIPPED, len(own), str(own[0][5]))
        else:
            said = next((str(e[1]) for e in errors if str(e[0]).startswith(test.path)), problem)
            out[test.node_id] = TestOutcome(UNCOLLECTED, 0, said or "pytest collected no case of it")
    return out


