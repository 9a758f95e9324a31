"""kit.explain: the program run as the user runs it, its dump read, the answer, the tables (no JAX needed).

The program here stands in for XLA: it copies HLO text captured from real
releases (tests/data/hlo) into the folder ``--xla_dump_to`` names, with the
files newer dumps write beside them, then ends as the case asks.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path

import pytest

from kit.check_settings import CheckKind, ExplainedProgram
from kit import explain
from kit.commands import interpreter_path as cli_interpreter_path
from kit.config import load_matrix
from kit.errors import UsageError
from kit.explain import capture as capture_module
from kit.explain import options as explain_options
from kit.explain.known import load as load_known
from kit.install import ExistingPython
from kit.install.environment import Environment, Prepared, prepare_existing
from tests.fake_interpreter import RELEASE, fake_interpreter

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "hlo"

_FAKE_XLA = '''
import os, re, shutil, sys, time
folder = re.search(r"--xla_dump_to=(\\S+)", os.environ["XLA_FLAGS"]).group(1)
assert "--xla_force_host_platform_device_count=4" in os.environ["XLA_FLAGS"]
# A computation loaded from JAX's persistent cache is not compiled, so nothing of it would be dumped.
assert os.environ["JAX_ENABLE_COMPILATION_CACHE"] == "false"
os.makedirs(folder, exist_ok=True)
data, release, program = {data!r}, {release!r}, {program!r}
for stage, name in (("before_optimizations", "before_optimizations"), ("after_optimizations", "cpu_after_optimizations")):
    shutil.copy(f"{{data}}/jax-{{release}}-{{program}}.{{stage}}.txt", f"{{folder}}/module_0037.jit_loss.{{name}}.txt")
open(f"{{folder}}/module_0037.jit_loss.obj-file.part_00.o", "wb").write(b"\\0" * 4096)
open(f"{{folder}}/module_0037.jit_loss.cpu_after_optimizations-buffer-assignment.txt", "w").write("x")
print("args", sys.argv[1:], "cwd", os.path.basename(os.getcwd()), flush=True)
{ending}
'''


FIXTURE_CATALOGUE = Path(__file__).resolve().parent / "fixtures" / "known"


def _program(folder: Path, release: str, program: str = "train_slogdet", ending: str = "") -> Path:
    path = folder / f"{program}.py"
    path.write_text(textwrap.dedent(_FAKE_XLA.format(data=str(DATA), release=release, program=program,
                                                     ending=ending)))
    return path


@pytest.fixture
def matrix(tmp_path: Path):  # type: ignore[no-untyped-def]
    return dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")


def _explain(monkeypatch: pytest.MonkeyPatch, matrix, folder: Path, programs: dict[str, str], argv: list[str],  # type: ignore[no-untyped-def]
             capsys: pytest.CaptureFixture[str], hlo_of: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """Run ``explain`` where each release's "environment" is this Python and its program copies that release's HLO
    (or, for a release in ``hlo_of``, the HLO of the release it names)."""
    def prepare(matrix, request, log):  # type: ignore[no-untyped-def]
        assert request.script.kind is CheckKind.EXPLAIN  # the command's program is an explain check, by its tag
        _program(folder, (hlo_of or {}).get(request.version, request.version), programs.get("name", "train_slogdet"),
                 programs.get(request.version, ""))
        env = Environment(python=Path(sys.executable), versions={"jax": request.version}, obtained="reused")
        return Prepared(plan=None, resolution=None, environment=env, jax=request.version)

    monkeypatch.setattr(capture_module.runner, "prepare", prepare)
    # A fixed catalogue (tests/fixtures/known): the answer must not change with each entry the kit gains.
    monkeypatch.setattr(explain, "catalogue_folders", lambda matrix: [FIXTURE_CATALOGUE])
    (folder / f"{programs.get('name', 'train_slogdet')}.py").write_text("pass\n")  # there (and a statement) when the command line is read
    code = explain.main(matrix, ["--called-from", str(folder), *argv], log=lambda line: None, reproduce="nox -s explain")
    return code, capsys.readouterr().out.splitlines()


def test_the_thread_program_is_whole_on_0_4_35_split_on_0_6_0_and_the_answer_picks_the_known_fix(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    code, lines = _explain(monkeypatch, matrix, tmp_path, {}, ["train_slogdet.py", "--releases", "0.6.0,0.4.35"], capsys)
    assert code == 0 and len(lines) <= 12, lines
    text = "\n".join(lines)
    assert "0.4.35: 2 op(s) hold the whole batch" in text
    assert "every device factorises all 1024 matrices (LU, forward) and solves all 1024 (triangular solves, backward)" in text
    assert "fed by an all-gather of 256 KiB" in text
    assert "0.6.0: every linalg op split (lu, triangular_solve)" in text
    assert ("known problem sharded-slogdet (matches all 4 parts: op lu, state gathered, fed by all-gather, on cpu): "
            "measured cpu: present in 0.4.13, 0.4.35; absent in 0.5.3") in text
    assert "; upstream fix f93c2a1aa5 (first in 0.5.3); workaround shard_map" in text
    assert "pick jax >= 0.5.3" in lines[-2]
    reports = tmp_path / "reports"
    record = json.loads((reports / "explain-train_slogdet-0.4.35.json").read_text())
    assert record["status"] == "ran"
    assert record["identity"]["subject"]["explain"] == "train_slogdet.py"
    assert record["dump"]["dropped_count"] == 0
    assert [m["name"] for m in record["modules"]] == ["jit_loss"]
    assert "args [] cwd " + tmp_path.name in " ".join(record["run"]["output_tail"])
    for page in reports.glob("explain-*.md"):
        assert str(tmp_path) not in page.read_text()
        assert "/home/user" not in page.read_text()


def test_releases_alike_below_a_fix_match_the_fixed_problem(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    # Found from a clean clone on 2026-12-06: explain on 0.4.13 and 0.4.18 together (both gathered, nothing differs
    # between them) named only the open TPU entry, matched in part, and not sharded-slogdet, whose range holds both.
    code, lines = _explain(monkeypatch, matrix, tmp_path, {}, ["train_slogdet.py", "--releases", "0.4.34,0.4.35"],
                           capsys, hlo_of={"0.4.34": "0.4.35"})
    assert code == 0, lines
    text = "\n".join(lines)
    assert "0.4.34, 0.4.35: 2 op(s) hold the whole batch" in text
    assert "known problem sharded-slogdet (matches all 4 parts" in text
    # The same flag on releases at or past the fix is not that problem.
    _, past = _explain(monkeypatch, matrix, tmp_path, {}, ["train_slogdet.py", "--releases", "0.5.3,0.6.0"],
                       capsys, hlo_of={"0.5.3": "0.4.35", "0.6.0": "0.4.35"})
    assert not [line for line in past if line.startswith("known problem sharded-slogdet")], past


def test_the_mixed_program_names_both_lines_and_labels_the_gradient_all_reduce_expected(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    _, lines = _explain(monkeypatch, matrix, tmp_path, {"name": "train_mixed"},
                        ["train_mixed.py", "--releases", "0.4.35,0.6.0"], capsys)
    text = "\n".join(lines)
    assert "train_mixed.py:40 `slogdet`" in text
    assert "train_mixed.py:42 `cholesky`" in text
    assert "expected, not flagged: the all-reduces that combine the devices' parts (sums, gradients, maxima, a loop's trip count) at train_mixed.py:28" in text
    table = (tmp_path / "reports" / "explain-train_mixed.md").read_text()
    assert "| train_mixed.py:42 | cholesky | cholesky | forward | gathered (1024/1024) | split (256/1024) |" in table


def test_what_compiled_before_a_crash_counts_and_the_sentence_says_how_it_ended(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    code, lines = _explain(monkeypatch, matrix, tmp_path, {"0.4.35": "raise SystemExit('broke after compiling')"},
                           ["train_slogdet.py", "--releases", "0.4.35", "--lr", "3"], capsys)
    assert code == 0
    assert "the program exited 1 (broke after compiling)" in lines[1]
    assert "what compiled before it ended counts" in lines[1]
    assert "LU, forward" in lines[2]
    record = json.loads((tmp_path / "reports" / "explain-train_slogdet-0.4.35.json").read_text())
    assert record["status"] == "partial"
    assert record["args"] == ["--lr", "3"]


@pytest.mark.real_time  # waits out a real time limit
def test_a_program_that_never_ends_is_stopped_at_the_timeout_and_what_it_compiled_is_read(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    code, lines = _explain(monkeypatch, matrix, tmp_path, {"0.6.0": "time.sleep(120)"},
                           ["train_slogdet.py", "--releases", "0.6.0", "--timeout", "10"], capsys)
    assert code == 0
    assert "did not end within 10 s" in lines[1]
    assert "every linalg op split" in lines[1]


def test_a_program_that_compiles_nothing_gets_one_sentence_and_exit_1(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "plain.py").write_text("print('no jax here')\n")
    monkeypatch.setattr(capture_module.runner, "prepare", lambda matrix, request, log: Prepared(
        plan=None, resolution=None, jax="0.6.0",
        environment=Environment(python=Path(sys.executable), versions={}, obtained="reused")))
    code = explain.main(matrix, ["--called-from", str(tmp_path), "plain.py", "--releases", "0.6.0"], log=lambda _: None)
    out = capsys.readouterr().out
    assert code == 1
    assert "0.6.0: the program ran to its end, and compiled nothing: there is no HLO to explain" in out


def test_options_take_the_kits_flags_anywhere_and_leave_the_rest_to_the_program(matrix, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "train.py").write_text("")
    options = explain_options.parse(matrix, ["train.py", "--epochs", "3", "--devices", "2", "--", "--devices", "8"],
                                    cwd=tmp_path)
    assert options.args == ("--epochs", "3", "--devices", "8")
    assert options.devices == 2
    assert options.cwd == tmp_path
    assert options.releases == (max((r.version for r in matrix.releases), key=explain_options._order),)
    with pytest.raises(UsageError, match="explain needs a program"):
        explain_options.parse(matrix, ["--devices", "2"], cwd=tmp_path)
    with pytest.raises(UsageError, match="the program missing.py"):
        explain_options.parse(matrix, ["missing.py"], cwd=tmp_path)
    with pytest.raises(UsageError, match="one release"):
        explain_options.parse(matrix, ["train.py", "--python", "py", "--releases", "0.4.35,0.6.0"], cwd=tmp_path)


def _tpu_interpreter(folder: Path) -> Path:
    """A stand-in JAX that *reports* one TPU v5e chip (no TPU here: the kit's logic is tested, not a TPU)."""
    return fake_interpreter(folder, RELEASE, backend="tpu", kind="TPU v5 lite", count=1)


def test_with_python_alone_explain_runs_on_the_backend_that_jax_reports(matrix, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The default --backend cpu was taken as asked, and the existing TPU JAX refused for running on tpu.
    (tmp_path / "train.py").write_text("")
    python = _tpu_interpreter(tmp_path / "tpu-node")
    options = explain_options.parse(matrix, ["train.py", "--python", str(python)], cwd=tmp_path)
    assert (options.backend, options.devices, options.python) == ("tpu", None, python)  # no forced host devices
    prepared = prepare_existing(matrix, ExistingPython(python, None, options.backend), "explain", lambda line: None)
    assert prepared.backend == "tpu"
    with pytest.raises(UsageError, match="runs on tpu, not cpu"):  # one asked for is still checked
        options = explain_options.parse(matrix, ["train.py", "--python", str(python), "--backend", "cpu"],
                                        cwd=tmp_path)
        prepare_existing(matrix, ExistingPython(python, None, options.backend), "explain", lambda line: None)


def test_explain_finds_python_by_name_on_path_as_run_does(matrix, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # explain looked for ./python3 in the folder it was called from, where run found python3 on PATH.
    (tmp_path / "train.py").write_text("")
    python = _tpu_interpreter(tmp_path / "tpu-node")
    monkeypatch.setenv("PATH", str(python.parent))
    options = explain_options.parse(matrix, ["train.py", "--python", "python"], cwd=tmp_path)
    assert options.python == python
    assert options.python == cli_interpreter_path("python")


def test_the_known_problem_carries_its_fingerprint() -> None:
    known = {k.key: k for k in load_known([ROOT / "known"], "cpu")}
    problem = known["sharded-slogdet"]
    assert "lu" in problem.sign.ops
    assert problem.sign.fed_by == "all-gather"
    assert problem.fix_release == "0.5.3"
    assert "cumsum-bool-dtype" not in known  # an entry without a [fingerprint] is never matched by explain


def test_an_explain_check_of_matrix_toml_is_affected_where_an_op_holds_the_whole_batch(tmp_path: Path) -> None:
    from kit.run import runner, script_runs

    (tmp_path / "matrix.toml").write_text('[[release]]\nversion = "0.4.35"\n\n[[release]]\nversion = "0.6.0"\n\n'
                                          '[checks.mine]\nexplain = "train_slogdet.py"\nhost_devices = 4\n')
    _program(tmp_path, "0.4.35")
    matrix = load_matrix(tmp_path / "matrix.toml")
    assert matrix.checks["mine"].explain == ExplainedProgram() and matrix.checks["mine"].kind is CheckKind.EXPLAIN
    verdicts = {}
    for release in ("0.4.35", "0.6.0"):
        _program(tmp_path, release)
        env = Environment(python=Path(sys.executable), versions={"jax": release}, obtained="reused")
        prepared = Prepared(plan=None, resolution=None, environment=env, jax=release)
        record, _ = runner.run_check(matrix, runner.RunRequest(check="mine", version=release), lambda _: None,
                                     prepared=prepared)
        verdicts[release] = (record["verdict"], record["evidence"]["summary"]["gathered_ops"], record["reason"])
        assert record["parameters"]["explain"] is True
        assert record["parameters"]["script"] == "train_slogdet.py"
    assert verdicts["0.4.35"][:2] == ("affected", 1)
    assert "train_slogdet.py:39 slogdet lu" in verdicts["0.4.35"][2]
    assert verdicts["0.6.0"] == ("unaffected", 0, "every linalg op is split across devices (2 of them)")


def test_bisect_explain_makes_the_program_a_script_check_judged_by_its_hlo_and_op_narrows_it(matrix) -> None:  # type: ignore[no-untyped-def]
    from kit.bisect.options import parse_options

    program = ROOT / "examples" / "programs" / "train_mixed.py"
    options = parse_options(matrix, ["--explain", str(program), "--op", "train_mixed.py:42",
                                     "--good", "0.6.0", "--bad", "0.4.35"])
    check = options.script_check
    assert check is not None
    assert check.script == program
    assert check.host_devices == 4
    assert check.explain == ExplainedProgram(op="train_mixed.py:42") and check.kind is CheckKind.EXPLAIN
    with pytest.raises(UsageError, match="--op applies to --explain"):
        parse_options(matrix, ["--script", str(program), "--op", "x.py:1", "--good", "0.6.0", "--bad", "0.4.35"])


def test_an_explain_check_with_an_op_is_judged_by_that_line_alone(tmp_path: Path) -> None:
    from kit.check_settings import script_check
    from kit.run import runner, script_runs
    from kit.run.explained import run_explained

    env = Environment(python=Path(sys.executable), versions={"jax": "0.4.35"}, obtained="reused")
    reasons = {}
    for op in ("train_mixed.py:42", "train_mixed.py:28", "train_mixed.py:99", "train_mixed.py:40:triangular_solve"):
        check = script_check("mine", _program(tmp_path, "0.4.35", "train_mixed"), host_devices=4,
                             explain=ExplainedProgram(op=op))
        fields = run_explained(script_runs.run_script, script_runs.scratch_dir, env, check, "cpu", 60, lambda _: None)
        reasons[op] = (fields.verdict, fields.reason)
    assert reasons["train_mixed.py:42"][0] == "affected"
    assert "train_mixed.py:42 cholesky" in reasons["train_mixed.py:42"][1]
    assert reasons["train_mixed.py:28"] == ("unaffected", "no linalg op holds a sharded batch whole")
    assert reasons["train_mixed.py:99"][0] == "inconclusive"
    assert reasons["train_mixed.py:40:triangular_solve"][0] == "affected"
    assert "1 op(s)" in reasons["train_mixed.py:40:triangular_solve"][1]


def test_bisects_of_two_ops_of_one_program_read_one_run_of_each_release(tmp_path: Path) -> None:
    from kit.check_settings import script_check
    from kit.run import runner, script_runs
    from kit.run.explained import run_explained

    counter = tmp_path / "runs.txt"
    program = _program(tmp_path, "0.4.35", "train_mixed", ending=f"open({str(counter)!r}, 'a').write('ran\\n')")
    env = Environment(python=Path(sys.executable), versions={"jax": "0.4.35"}, obtained="reused")
    verdicts = []
    for op in ("train_mixed.py:40:lu", "train_mixed.py:42:cholesky", "train_mixed.py:28"):
        check = script_check("mine", program, host_devices=4, explain=ExplainedProgram(op=op))
        fields = run_explained(script_runs.run_script, script_runs.scratch_dir, env, check, "cpu", 60, lambda _: None,
                               shared=tmp_path / "shared")
        verdicts.append(fields.verdict)
    assert verdicts == ["affected", "affected", "unaffected"]
    assert counter.read_text() == "ran\n"
    overlaid = dataclasses.replace(env, pythonpath=(tmp_path,))  # a commit laid over: never shared
    check = script_check("mine", program, host_devices=4, explain=ExplainedProgram(op="train_mixed.py:40:lu"))
    run_explained(script_runs.run_script, script_runs.scratch_dir, overlaid, check, "cpu", 60, lambda _: None,
                  shared=tmp_path / "shared")
    assert counter.read_text() == "ran\nran\n"


def test_bisect_explain_without_op_bisects_each_op_that_changed_and_answers_one_line_each(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from kit.bisect import per_op
    from kit.bisect.options import parse_options
    from kit.run import runner, script_runs

    def prepare(matrix, request, log, index=None):  # type: ignore[no-untyped-def]
        _program(tmp_path, request.version, "train_mixed")
        env = Environment(python=Path(sys.executable), versions={"jax": request.version}, obtained="reused")
        return Prepared(plan=None, resolution=None, environment=env, jax=request.version)

    monkeypatch.setattr(runner, "prepare", prepare)
    program = _program(tmp_path, "0.6.0", "train_mixed")
    argv = ["--explain", str(program), "--good", "0.6.0", "--bad", "0.4.35", "--out", str(tmp_path / "out")]
    options = parse_options(matrix, argv)
    assert per_op.wanted(options.specs)
    asked = []

    def bisect(matrix, argv, log):  # type: ignore[no-untyped-def]
        op = argv[-1]
        asked.append(op)
        mine = parse_options(matrix, argv)
        (tmp_path / "out").mkdir(exist_ok=True)
        summary = ["# Bisect", f"- **Answer:** first good release **jax 0.5.3** ({op}): https://x", "- **Reproduce:** y"]
        (tmp_path / "out" / f"bisect-{mine.subject}-good0.6.0-bad0.4.35-cpu.json").write_text(
            json.dumps({"summary": summary}))
        return 0

    assert per_op.bisect_each_op(matrix, options.specs, argv, lambda _: None, bisect) == 0
    assert asked == ["train_mixed.py:40:lu", "train_mixed.py:40:triangular_solve", "train_mixed.py:42:cholesky",
                     "train_mixed.py:42:triangular_solve"]
    lines = capsys.readouterr().out.splitlines()
    assert lines[-4:] == [f"{op}: Answer: first good release jax 0.5.3 ({op})" for op in asked]


def test_help_exits_0_and_a_near_miss_of_an_option_is_refused_not_passed_to_the_program(
        matrix, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert explain.main(matrix, ["--help"], log=lambda line: None) == 0
    assert "--target T" in capsys.readouterr().out
    # As README says it: `nox -s explain -- --help`, whose session puts --called-from DIR first (it said "explain
    # needs a program (not '--help')"); reduce's session alike.
    assert explain.main(matrix, ["--called-from", str(tmp_path), "--help"], log=lambda line: None) == 0
    assert "--target T" in capsys.readouterr().out
    from kit.reduce.command import main as reduce_main

    reduce_main(matrix, ["--called-from", str(tmp_path), "--help"], lambda line: None)
    assert "--bad" in capsys.readouterr().out
    (tmp_path / "p.py").write_text("pass\n")
    with pytest.raises(UsageError, match="did you mean --releases") as typo:
        explain_options.parse(matrix, ["p.py", "--relases", "0.6.0"], cwd=tmp_path)
    assert "after --" in typo.value.tip
    # The program's own options pass, and a look-alike after -- is the program's.
    options = explain_options.parse(matrix, ["p.py", "--lr", "0.1", "--", "--relases"], cwd=tmp_path)
    assert options.args == ("--lr", "0.1", "--relases")


def test_a_jax_platforms_that_keeps_jax_off_the_backend_is_refused_before_the_program_runs(
        monkeypatch: pytest.MonkeyPatch, matrix, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A held-out fault trial: JAX_PLATFORMS=cuda on this CPU machine ran the program, JAX died at its start and
    # explain recorded "compiled nothing (AssertionError:)" against the release; audit and checks refuse it.
    (tmp_path / "plain.py").write_text("print('no jax here')\n")
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    monkeypatch.setattr(capture_module.runner, "prepare", lambda *a, **k: pytest.fail("nothing may be installed"))
    with pytest.raises(UsageError, match="JAX_PLATFORMS=cuda in the environment keeps JAX off cpu"):
        explain.main(matrix, ["--called-from", str(tmp_path), "plain.py", "--releases", "0.6.0"], log=lambda _: None)
