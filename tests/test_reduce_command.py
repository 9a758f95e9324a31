"""reduce's flow around the reduction, with the releases' runs stood in for: Ctrl-C keeps the best so far, says so
and exits 130; the progress is said after every batch judged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kit.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from kit.reduce import command, issue
from kit.reduce.problem import found_problem
from kit.reduce.program import Program
from kit.reduce.trials import Counts
from kit.reduce.runs import Seen
from kit.triage import block_outcome

def seen(release: str, printed: str) -> Seen:
    return Seen(release, block_outcome.outcome(0, printed), printed, "", 0.1)


START = Program.parse("import jax\nx = 1\ny = 2\nprint(x)\n")


class StoppedReducer:
    """Takes one step, tells one batch, then is stopped as Ctrl-C stops it."""

    def __init__(self, start: Program, judge: Any, deadline: float, progress: Any) -> None:
        self.best = start
        self.progress = progress
        self.batch: Any = None
        self.out_of_time = False

    def reduce(self) -> Program:
        self.batch("ddmin", 4, False)
        self.best = Program.parse("import jax\nprint(1)\n")
        self.progress(self.best, "ddmin")
        raise KeyboardInterrupt


def test_ctrl_c_keeps_the_best_so_far_says_so_and_the_files_are_written_from_it(monkeypatch: pytest.MonkeyPatch,
                                                                                 tmp_path: Path) -> None:
    written: dict[str, Any] = {}
    problem = SimpleNamespace(sentence=lambda: "TypeError on jax 0.5.0; no exception on jax 0.5.1",
                              bad=SimpleNamespace(seconds=2.0), good=SimpleNamespace(seconds=9.5))
    monkeypatch.setattr(command, "problem_of", lambda options, tester, start: problem)
    monkeypatch.setattr(command, "Reducer", StoppedReducer)

    def fake_written(matrix: Any, options: Any, envs: Any, problem: Any, start: Program, best: Program, tester: Any,
                     seconds: float, stopped: bool, log: Any, out_of_time: bool = False) -> command.Handed:
        written.update(best=best.text, stopped=stopped)
        return EXIT_INTERRUPTED, None, None

    monkeypatch.setattr(command, "_written", fake_written)
    said: list[str] = []
    options = SimpleNamespace(bad="0.5.0", good="0.5.1", program=tmp_path / "prog.py", timeout_s=60, op="", jobs=2,
                              time_limit_s=200)
    pool = SimpleNamespace(warm=lambda release: 1.0)
    code, _, _ = command._reduce(None, options, {}, START, pool, tmp_path,  # type: ignore[arg-type]
                                 said.append)
    assert code == EXIT_INTERRUPTED
    assert any(line.startswith("a candidate's run is stopped after 38 s") for line in said)
    assert written == {"best": "import jax\nprint(1)\n", "stopped": True}
    assert any("ddmin: 4 judged, none kept" in line and "4 statements left" in line for line in said)
    assert any(line.startswith("stopped (Ctrl-C): keeping the best so far, 2 statements") for line in said)


def test_a_stopped_reduction_exits_130_even_where_its_best_is_confirmed(tmp_path: Path) -> None:
    files = issue.Files.of(tmp_path, "prog")
    options = SimpleNamespace(bisect=True, op="", good="0.5.1", bad="0.5.0", commits=False)
    said: list[str] = []
    best = Program.parse("print(1)\n")
    assert command.ending(options, files, best, True, True, said.append)[0] == EXIT_INTERRUPTED  # type: ignore[arg-type]
    assert said == ["interrupted: prog_min.py is the best so far (1 statements), not the end of the reduction"]
    code, bisect, _ = command.ending(options, files, best, False, True, said.append)  # type: ignore[arg-type]
    assert code == EXIT_OK and bisect is not None and bisect[:2] == ["--script", str(files.check)]


@pytest.mark.parametrize(("bad", "good", "limit", "seconds"), [(2.0, 9.5, 120, 38), (0.5, 0.4, 120, 20),
                                                               (50.0, 10.0, 120, 120), (1.0, 1.0, 10, 10)])
def test_a_candidate_may_take_a_few_times_the_originals_slowest_run(bad: float, good: float, limit: int,
                                                                     seconds: int) -> None:
    problem = SimpleNamespace(bad=SimpleNamespace(seconds=bad), good=SimpleNamespace(seconds=good))
    assert command.candidate_timeout(limit, problem) == seconds  # type: ignore[arg-type]


class OutOfTimeReducer(StoppedReducer):
    """Takes one step, then runs out of time as the time limit ends a reduction."""

    def reduce(self) -> Program:
        self.best = Program.parse("import jax\nprint(1)\n")
        self.out_of_time = True
        return self.best


def test_a_reduction_ended_by_the_time_limit_says_so_and_the_issue_text_too(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    problem = found_problem((seen("0.5.0", "x 1"),) * 2, (seen("0.5.1", "x 2"),) * 2)
    monkeypatch.setattr(command, "problem_of", lambda options, tester, start: problem)
    monkeypatch.setattr(command, "Reducer", OutOfTimeReducer)
    handed: dict[str, Any] = {}

    def fake_written(*args: Any, out_of_time: bool = False) -> command.Handed:
        handed.update(out_of_time=out_of_time, stopped=args[8])
        return EXIT_OK, None, None

    monkeypatch.setattr(command, "_written", fake_written)
    said: list[str] = []
    options = SimpleNamespace(bad="0.5.0", good="0.5.1", program=tmp_path / "prog.py", timeout_s=60, op="", jobs=2,
                              time_limit_s=200, shown="prog.py")
    pool = SimpleNamespace(warm=lambda release: 1.0)
    command._reduce(None, options, {}, START, pool, tmp_path, said.append)  # type: ignore[arg-type]
    assert "stopped by the time limit (200 s) with the best so far: more time (--time-limit) may cut further" in said
    assert handed == {"out_of_time": True, "stopped": False}

    (tmp_path / "prog.py").write_text(START.text)
    best = Program.parse("import jax\nprint(1)\n")
    runs = {"0.5.0": seen("0.5.0", "x 1"), "0.5.1": seen("0.5.1", "x 2")}
    report = issue.ReductionReport(options, problem, START, best, runs, {}, None, Counts(), 201.0,  # type: ignore[arg-type]
                                   False, True, out_of_time=True)
    made = issue._made(report, issue.Files.of(tmp_path, "prog"))
    assert "The reduction was stopped by the time limit (200 s) with the best so far: more time may cut further." in made


def test_the_environment_is_printed_under_the_host_device_count_the_reproducer_sets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    from kit.reduce import trials
    sharded = Program.parse("import os\nos.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'\n"
                            "import jax\nprint(jax.devices())\n")
    assert command.devices_set(sharded) == 4 and command.devices_set(START) is None
    monkeypatch.setattr(trials, "ENVIRONMENT_INFO", "import os; print(os.environ.get('XLA_FLAGS'))")
    env = SimpleNamespace(python=sys.executable)
    assert trials.environment_info(env, 4) == "--xla_force_host_platform_device_count=4"  # type: ignore[arg-type]
    assert trials.environment_info(env) == "None"  # type: ignore[arg-type]


def test_a_reduced_program_not_confirmed_is_never_said_kept_and_the_command_fails(monkeypatch: pytest.MonkeyPatch,
                                                                                  tmp_path: Path) -> None:
    # The held-out trial's `acct` (t4, case b, run 2): the reduced program printed the same line on both releases.
    problem = found_problem((seen("0.4.33", "active by day 90: 5/0"),) * 2, (seen("0.4.34", "active by day 90: 7/0"),) * 2)
    same = "Q1: accounts active by day 90: 3917859687/1 (0.0 ms)"
    monkeypatch.setattr(command, "plain_run", lambda env, release, file, timeout: seen(release, same))
    monkeypatch.setattr(command, "environment_info", lambda env, devices: "jax: x")
    monkeypatch.setattr(issue, "known_match", lambda matrix, problem, plain, explained, reproducer: [])
    (tmp_path / "acct.py").write_text(START.text)
    options = SimpleNamespace(bad="0.4.33", good="0.4.34", program=tmp_path / "acct.py", timeout_s=60, op="",
                              shown="acct.py", out=tmp_path / "out", bisect=True, commits=False, time_limit_s=200)
    tester = SimpleNamespace(counts=Counts())
    said: list[str] = []
    code, bisect, written = command._written(None, options, {"0.4.33": None, "0.4.34": None},  # type: ignore[arg-type]
                                             problem, START, Program.parse("import jax\nprint(1)\n"), tester,
                                             55.0, False, said.append)
    assert code == EXIT_FAILED and code != EXIT_OK and bisect is None
    assert written is not None
    text = written.read_text()
    assert text.startswith("# NOT confirmed: the reduced acct_min.py does not show the difference between jax 0.4.33 "
                           "and jax 0.4.34\n")
    assert "The problem kept" not in text and "different values printed" not in text
    assert ("The problem was NOT confirmed: the reduced program's confirming runs do not show jax 0.4.33 behave as "
            "the original did and jax 0.4.34 not; they ran alike on jax 0.4.33 and jax 0.4.34 (the same exit code "
            "and printed lines)") in text
    told = [line for line in said if "confirmed" in line]
    assert len(told) == 1 and told[0].startswith("NOT confirmed: as python acct_min.py, the reduced program's "
                                                 "confirming runs do not show")
    assert "they ran alike" in told[0] and "differ" not in told[0].split("the original's runs showed")[0]


def test_a_title_is_cut_at_a_word_and_an_output_keeps_its_leading_spaces(tmp_path: Path) -> None:
    from kit.reduce.problem import cut
    message = "Checking for NaNs in the output of jit(log) and/or config.jax_debug_nans is True, at the line below"
    assert cut(message, 60) == "Checking for NaNs in the output of jit(log) and/or…"
    assert cut("short", 60) == "short" and cut("x" * 80, 10) == "x" * 10 + "…"
    indented = seen("0.4.33", "   active fraction day 30/60/90: 0.00 0.00 0.75")
    assert issue._shown_output(indented, issue.Files.of(tmp_path, "acct")) == (
        "   active fraction day 30/60/90: 0.00 0.00 0.75")


def test_a_reproducer_calling_a_catalogued_function_as_its_check_does_names_that_entry() -> None:
    from kit.reduce import same_call
    root = Path(__file__).resolve().parent.parent
    reproducer = ("import numpy as np\nimport jax\n"
                  "print(jax.numpy.sum(jax.numpy.cumsum(jax.numpy.array([1, -1]), dtype=np.bool_)))\n")
    entry = root / "known" / "cumsum-bool-dtype.py"
    assert same_call.matching(reproducer, entry) == "jax.numpy.cumsum(dtype=bool)"
    assert same_call.matching(reproducer.replace("np.bool_", "np.int32"), entry) is None  # another dtype: no match
    assert same_call.matching("import jax.numpy as jnp\nprint(jnp.cumsum(jnp.ones(3)))\n", entry) is None
    assert same_call.matching("import jax.numpy as jnp\nprint(jnp.sum(jnp.ones(3)))\n",
                              root / "known" / "gamma-pdf-debug-nans.py") is None  # a common call names nothing
