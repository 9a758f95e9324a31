"""kit/bisect/specs.py: the command line split into what runs, how to search and what to report.

Every setting lands in exactly one part, and nothing below the driver takes the whole command line.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from kit.bisect.options import BisectOptions, parse_options
from kit.bisect.specs import HowToSearch, Specs, WhatRuns, WhatToReport, bisect_name
from kit.slurm.jobs import SlurmOptions
from tests.bisect_machine import PLAIN_MATRIX

KIT = Path(__file__).resolve().parent.parent / "kit"
EDGE = {"kit/bisect/options.py", "kit/bisect/driver.py"}
"""Where the whole command line may be read: where it is parsed, and the driver that splits it."""


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_every_setting_of_the_command_line_lands_in_exactly_one_part() -> None:
    parts = [_fields(WhatRuns), _fields(HowToSearch), _fields(WhatToReport)]
    for name in _fields(BisectOptions):
        assert sum(name in part for part in parts) == 1, name
    assert _fields(WhatRuns) - _fields(BisectOptions) == {"timed"}  # what --metric asks of a run, said as such


def test_the_split_carries_each_value_through() -> None:
    options = BisectOptions(check="scaling", script=None, good="0.6.0", bad="0.4.35", backend="cuda", preset="big",
                      crash="bad", confirm=2, scan=True, timeout=30, find_links=("wheels/",), fresh=True,
                      argv=("--check", "scaling"), metric="t_ms", factor=2.0, jobs=3, slurm=SlurmOptions("gpu"),
                      pins=("numpy==2.2.1",), verbose=True, out=Path("/tmp/out"), command="jax-kit bisect")
    specs = options.specs
    assert specs.runs == WhatRuns(check="scaling", backend="cuda", preset="big", timeout=30,
                                  find_links=("wheels/",), pins=("numpy==2.2.1",), timed=True)
    assert (specs.search.good, specs.search.bad, specs.search.crash, specs.search.confirm) == ("0.6.0", "0.4.35",
                                                                                               "bad", 2)
    assert (specs.search.scan, specs.search.fresh, specs.search.factor, specs.search.together) == (True, True, 2.0, True)
    assert (specs.report.verbose, specs.report.out, specs.report.command) == (True, Path("/tmp/out"), "jax-kit bisect")
    assert specs.report.quoted_argv == ("--check", "scaling")
    assert not BisectOptions(check="scaling", script=None, good=None, bad=None).specs.runs.timed


def test_a_script_s_subject_and_op_come_from_what_runs(tmp_path: Path) -> None:
    program = tmp_path / "train.py"
    program.write_text("pass\n")
    options = parse_options(PLAIN_MATRIX, ["--explain", str(program), "--op", "train.py:37:lu",
                                           "--good", "0.6.0", "--bad", "0.4.35"])
    runs = options.specs.runs
    assert runs.subject == options.subject == "script-train-op-train_py_37_lu"
    assert runs.explained_op == "lu"
    assert bisect_name(options.specs, "0.6.0", "0.4.35") == "script-train-op-train_py_37_lu-good0.6.0-bad0.4.35-cpu"


def test_nothing_below_the_driver_imports_the_command_line() -> None:
    """A module below the driver takes the part it reads (a spec), never `BisectOptions` (docs/architecture.md)."""
    readers = []
    for path in sorted((KIT / "bisect").rglob("*.py")):
        shown = str(path.relative_to(KIT.parent))
        if shown in EDGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "options" \
                    and any(alias.name in ("BisectOptions", "parse_options") for alias in node.names):
                readers.append(shown)
    assert readers == []


def test_specs_are_frozen() -> None:
    specs = Specs(WhatRuns("scaling"), HowToSearch(), WhatToReport())
    for part in (specs, specs.runs, specs.search, specs.report):
        assert dataclasses.is_dataclass(part) and type(part).__dataclass_params__.frozen  # type: ignore[attr-defined]
