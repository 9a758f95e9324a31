"""Several catalogue checks in one interpreter: each read as `python SCRIPT` would exit, the results kept as they come."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.config import Matrix
from kit.install.bytecode import PYCACHE
from kit.install.environment import REUSED, Environment, Prepared
from kit.known import batch
from kit.known.batch import _measurement, audit_runs, measured_runs
from kit.known.catalogue import Entry, read_entry
from kit.known.measured import Measurement, Presence
from kit.known.runs import run_entry
from kit.log_events import Log
from kit.run import runner
from kit.run.child_processes import Ended
from repro.known_batch import run_one
from tests.faults.script_checks import prepared_here, script_matrix


@pytest.mark.parametrize(("body", "code"), [("x = 1\n", 0), ("import sys\nsys.exit(3)\n", 3),
                                            ("raise ValueError('no')\n", 1), ("import sys\nsys.exit('bye')\n", 1),
                                            ("import sys\nsys.exit(None)\n", 0), ("import sys\nsys.exit(125)\n", 125)])
def test_a_script_exits_in_the_batch_as_it_would_alone(tmp_path: Path, body: str, code: int) -> None:
    script = tmp_path / "check.py"
    script.write_text(body)
    assert run_one(str(script))["exit"] == code


def test_a_script_runs_as_main_with_its_own_argv_and_its_output_is_kept(tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text("import sys\nprint(__name__, sys.argv)\nraise RuntimeError('boom')\n")
    result = run_one(str(script))
    assert result["tail"][0] == f"__main__ ['{script}']"
    assert result["tail"][-1] == "RuntimeError: boom"
    assert result["exit"] == 1


@pytest.mark.parametrize(("code", "outcome"), [(0, Presence.ABSENT), (1, Presence.PRESENT), (125, Presence.UNTESTED),
                                               (127, Presence.PRESENT), (200, Presence.UNTESTED), (None, Presence.UNTESTED)])
def test_the_script_protocol_reads_a_batch_result(code: object, outcome: Presence) -> None:
    said = _measurement({"exit": code, "tail": ["last line"]}, "0.4.35", "cpu")
    assert said.outcome is outcome
    assert said.reason.endswith("last line")


# known --measure and --verify: each batched answer is the record a run alone writes (kit/known/batch_records.py).

ENTRY = """title = "t"
kind = "wrong-values"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_note = "none yet"
shows_on = ["cpu"]
measure_on = ["0.6.0"]
"""


def entries(folder: Path, bodies: dict[str, str]) -> list[Entry]:
    """Catalogue entries whose checks are ``bodies`` (by id)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in bodies.items():
        (folder / f"{name}.py").write_text(body)
        (folder / f"{name}.toml").write_text(ENTRY)
    return [read_entry(folder / f"{name}.toml") for name in bodies]


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Prepared:
    """This interpreter with a stand-in jax as the release's environment, for the batch and for a run alone."""
    prepared = prepared_here(tmp_path)
    monkeypatch.setattr(batch, "prepare", lambda *_a, **_k: prepared)
    monkeypatch.setattr(runner, "prepare", lambda *_a, **_k: prepared)
    return prepared


def record_of(folder: Path, name: str) -> dict[str, Any]:
    """What a record says that does not depend on when or how fast it ran."""
    record: dict[str, Any] = json.loads((folder / name).read_text())
    for key in ("created", "duration_s"):
        record.pop(key)
    record["evidence"].pop("output_tail", None)  # a batch's tail lacks what JAX's import printed, and has runpy's frames
    record["evidence"].get("exception", {}).pop("traceback", None)
    return record


@pytest.mark.parametrize("body", ["print('same')\n", "print('differs')\nraise SystemExit(1)\n",
                                  "raise ValueError('wrong values')\n", "print('too old')\nraise SystemExit(125)\n",
                                  "raise SystemExit(200)\n", "import jax.nonexistent\n", "def (:\n"])
def test_a_batched_check_is_recorded_as_the_same_check_run_alone(tmp_path: Path, here: Prepared, body: str) -> None:
    [entry] = entries(tmp_path / "known", {"one": body})
    matrix = script_matrix(tmp_path, entry.check)
    batched = measured_runs(matrix, [entry], print, tmp_path / "batched", version="0.6.0")[0]
    alone = run_entry(matrix, entry, print, tmp_path / "alone", version="0.6.0")
    assert (batched.release, batched.backend, batched.outcome, batched.reason) == \
        (alone.release, alone.backend, alone.outcome, alone.reason)
    assert record_of(tmp_path / "batched", batched.record) == record_of(tmp_path / "alone", alone.record)


def test_a_check_that_kills_its_process_costs_only_itself_and_nothing_runs_alone(
        tmp_path: Path, here: Prepared, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = entries(tmp_path / "known", {"first": "raise SystemExit(1)\n",
                                          "killer": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
                                          "last": "print('fine')\n"})
    alone: list[str] = []

    def counted(matrix: Matrix, entry: Entry, log: Log, records: Path, **kw: Any) -> Measurement:
        alone.append(entry.id)
        return run_entry(matrix, entry, log, records, **kw)

    monkeypatch.setattr(batch, "run_entry", counted)
    said = measured_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "results",
                         version="0.6.0")
    assert alone == []  # each check is a fork of the batch's interpreter: the kill ended that fork only
    assert [m.outcome for m in said] == [Presence.PRESENT, Presence.UNTESTED, Presence.ABSENT]
    assert said[1].reason.startswith("the script was killed by signal 9")
    assert all((tmp_path / "results" / m.record).is_file() for m in said)


def test_the_checks_after_a_batch_that_dies_run_alone_each_with_its_record(
        tmp_path: Path, here: Prepared, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = entries(tmp_path / "known", {"first": "raise SystemExit(1)\n", "second": "print('fine')\n",
                                          "last": "print('fine')\n"})

    def batch_process(cmd: list[str], *_a: Any, **_k: Any) -> Ended:
        """The batch's own process killed from outside after its first answer."""
        answers = [{"script": str(listed[0].check), "exit": 1, "tail": ["x"], "seconds": 0.1}]
        Path(cmd[cmd.index("--out") + 1]).write_text(json.dumps({"results": answers}))
        return Ended(-9)

    monkeypatch.setattr(batch, "run_child", batch_process)
    alone: list[str] = []

    def counted(matrix: Matrix, entry: Entry, log: Log, records: Path, **kw: Any) -> Measurement:
        alone.append(entry.id)
        return run_entry(matrix, entry, log, records, **kw)

    monkeypatch.setattr(batch, "run_entry", counted)
    said = measured_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "results",
                         version="0.6.0")
    assert alone == ["second", "last"]
    assert [m.outcome for m in said] == [Presence.PRESENT, Presence.ABSENT, Presence.ABSENT]


def test_a_check_past_its_own_timeout_in_the_batch_runs_alone(
        tmp_path: Path, here: Prepared, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = entries(tmp_path / "known", {"quick": "print('fine')\n", "slow": "print('fine')\n"})

    def batch_process(cmd: list[str], *_a: Any, **_k: Any) -> Ended:
        """The batch as repro/known_batch.py answers, the second check having run longer than its timeout."""
        answers = [{"script": cmd[-2], "exit": 0, "tail": ["fine"], "seconds": 1.0},
                   {"script": cmd[-1], "exit": 0, "tail": ["fine"], "seconds": listed[1].timeout_s + 1.0}]
        Path(cmd[cmd.index("--out") + 1]).write_text(json.dumps({"results": answers}))
        return Ended(0)

    monkeypatch.setattr(batch, "run_child", batch_process)
    alone: list[str] = []
    monkeypatch.setattr(batch, "run_entry", lambda matrix, entry, *a, **k: alone.append(entry.id) or
                        Measurement("0.6.0", "cpu", Presence.UNTESTED, "the script did not finish"))
    said = measured_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "results",
                         version="0.6.0")
    assert alone == ["slow"]  # alone, it would have timed out: the run alone says so
    assert [m.outcome for m in said] == [Presence.ABSENT, Presence.UNTESTED]


def test_a_release_that_does_not_install_runs_each_entry_alone_so_each_record_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = entries(tmp_path / "known", {"one": "print('fine')\n", "two": "print('fine')\n"})
    monkeypatch.setattr(batch, "prepare", lambda *_a, **_k: Prepared(None, None, None, "no jaxlib 0.6.0 wheels"))
    monkeypatch.setattr(batch, "_batch", lambda *_a: pytest.fail("nothing to batch without an installation"))
    alone: list[str] = []
    monkeypatch.setattr(batch, "run_entry", lambda matrix, entry, *a, **k: alone.append(entry.id) or
                        Measurement("0.6.0", "cpu", Presence.UNTESTED, "no jaxlib 0.6.0 wheels", f"{entry.id}.json"))
    said = measured_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "results",
                         version="0.6.0")
    assert alone == ["one", "two"] and [m.record for m in said] == ["one.json", "two.json"]
    # An audit says the same without a record per check, as before.
    assert [m.reason for m in audit_runs(script_matrix(tmp_path, listed[0].check), listed, print,
                                         tmp_path / "results", version="0.6.0")] == ["no jaxlib 0.6.0 wheels"] * 2
    assert alone == ["one", "two"]


def test_a_batch_is_told_what_a_run_alone_is_told_its_release_s_imports_only_and_its_kept_bytecode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    env = Environment(tmp_path / "env" / "bin" / "python", {"jax": "0.6.0"}, REUSED)
    [entry] = entries(tmp_path / "known", {"one": "print('fine')\n"})
    told: dict[str, str] = {}

    def batch_process(cmd: list[str], timeout: int, log: Log, extra: dict[str, str], *_a: Any, **_k: Any) -> Ended:
        told.update(extra)
        return Ended(0)

    monkeypatch.setattr(batch, "run_child", batch_process)
    assert batch._batch(env, [entry], "cpu", print) == batch.Batch({})  # it wrote nothing: nothing answered
    assert told["PYTHONPATH"] == ""  # not the caller's: a jax there would be imported instead of the release's
    assert told["PYTHONPYCACHEPREFIX"] == str((tmp_path / "env" / PYCACHE).absolute())
    assert "KIT_RESULT" in told


def test_no_shipped_check_writes_kit_result_which_a_batch_does_not_read() -> None:
    """A batched check's record is read off its exit and output alone (kit/known/batch_records.py): a check that
    wrote KIT_RESULT would say more run alone than batched. None of the catalogue's does."""
    shipped = Path(__file__).resolve().parents[1] / "known"
    assert [p.name for p in sorted(shipped.glob("*.py")) if "KIT_RESULT" in p.read_text() or "kitcheck" in p.read_text()] \
        == []


# Two checks side by side, each in its own fork; one that reads the clock with nothing beside it.

SIDE_BY_SIDE = """import os, sys, time
mine, theirs = sys.argv[0] + ".started", {other!r}
open(mine, "w").close()
for _ in range(6000):  # a minute at most, in sleeps: a check that reads no clock
    if os.path.exists(theirs):
        break
    time.sleep(0.01)
sys.exit(0 if os.path.exists(theirs) else 1)
"""


def test_two_checks_run_side_by_side(tmp_path: Path) -> None:
    from repro.known_batch import _run_all

    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text(SIDE_BY_SIDE.format(other=f"{second}.started"))
    second.write_text(SIDE_BY_SIDE.format(other=f"{first}.started"))
    results: list[dict[str, Any]] = []
    _run_all(str(tmp_path / "out.json"), [str(first), str(second)], [120.0, 120.0], results)
    assert sorted(r["exit"] for r in results) == [0, 0]  # each saw the other start: they ran at once


def test_a_check_that_reads_the_clock_runs_with_nothing_beside_it(tmp_path: Path) -> None:
    from repro.known_batch import _run_all, reads_the_clock

    log = tmp_path / "log"
    body = ("import sys, time\nopen({log!r}, 'a').write(sys.argv[0] + ' start\\n')\n"
            "t = time.perf_counter()\ntime.sleep(0.5)\nopen({log!r}, 'a').write(sys.argv[0] + ' end\\n')\n")
    quiet = body.replace("t = time.perf_counter()\n", "")
    scripts = [tmp_path / "a.py", tmp_path / "timed.py", tmp_path / "c.py"]
    for script, text in zip(scripts, (quiet, body, quiet)):
        script.write_text(text.format(log=str(log)))
    assert [reads_the_clock(str(s)) for s in scripts] == [False, True, False]
    _run_all(str(tmp_path / "out.json"), [str(s) for s in scripts], [60.0] * 3, [])
    lines = [line.split()[1] + " " + Path(line.split()[0]).stem for line in log.read_text().splitlines()]
    at = lines.index("start timed")
    assert lines[at + 1] == "end timed"  # nothing started or ended while it ran
