"""``bisect --explain PROGRAM --op FILE:LINE --target T``: which release first split an op on a chip this machine lacks.

Each probe installs the release with the chip's compiler, runs the program on CPU host devices with its exports
armed, compiles them for the target, and judges that compiler's HLO for the op. The compile stands in for libtpu
here as in tests/test_explain_target.py: HLO the TPU compiler really wrote (tests/data/hlo/jax-*-tpu-*).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from kit.bisect.options import parse_options
from kit.records import RunOutcome, Status
from kit.config import parse_matrix
from kit.check_settings import CheckKind, ExplainedProgram, script_check
from kit.errors import UsageError
from kit.install.environment import Environment
from kit.run import explained, runner, script_runs, shared_runs, targeted
from kit.targets import parse_target

DATA = Path(__file__).parent / "data" / "hlo"
BOUNDS = ["--good", "0.12.0.1", "--bad", "0.5.3"]


def _judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, op: str) -> tuple[RunOutcome, list[Any]]:
    """One probe of jax 0.12.0.1's train_slogdet for ``op``, compiled for TPU v5e 2x2."""
    program = tmp_path / "train_slogdet.py"
    program.write_text("print('ran')\n")
    check = script_check("script-train_slogdet", program, host_devices=4, explain=ExplainedProgram(op=op))
    runs: list[Any] = []

    def run_script(env: Any, check: Any, backend: str, timeout: int, log: Any, output_log: Any = None,
                   echo: bool = True, extra_env: Any = None, args: Any = (), cwd: Any = None) -> RunOutcome:
        runs.append((backend, dict(extra_env or {})))
        return RunOutcome(Status.RAN)

    def compile_exports(run_child: Any, env: Any, target: Any, exports: Path, scratch: Path, dump: Path,
                        timeout: int, log: Any) -> dict[str, Any]:
        assert run_child is script_runs.run_child  # the runner hands its own down to the compile
        for stage in ("before_optimizations", "after_optimizations"):
            shutil.copy(DATA / f"jax-0.12.0.1-tpu-train_slogdet.{stage}.txt", dump / f"module_0001.jit_loss.{stage}.txt")
        return {"modules": [{"number": 1, "name": "jit_loss"}], "failed": [], "devices": {"count": 4}}

    monkeypatch.setattr(targeted, "compile_exports", compile_exports)
    env = Environment(python=Path(sys.executable), versions={"jax": "0.12.0.1"}, obtained="reused")
    probe = explained.explain_runner(run_script, script_runs.scratch_dir, None, script_runs.run_child,
                                     parse_target("tpu:v5e:2x2"))
    return probe(env, check, "tpu", 60, lambda line: None), runs


def test_a_probe_judges_the_ops_line_from_the_tpu_compilers_hlo(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    fields, runs = _judge(monkeypatch, tmp_path, "train_slogdet.py:39:lu")
    assert fields.verdict == "affected", fields.reason
    assert "1024 of 1024" in fields.reason
    assert fields.reason.endswith("computation(s) compiled for TPU v5e 2x2 (4 devices), not run")
    assert fields.evidence["target"]["name"] == "tpu:v5e:2x2"
    [(backend, told)] = runs
    assert backend == "cpu" and told["KIT_TARGET_PLATFORM"] == "tpu"  # the program ran on CPU, exports armed
    solves, _ = _judge(monkeypatch, tmp_path, "train_slogdet.py:39:triangular_solve")
    assert solves.verdict == "unaffected", solves.reason  # the backward solves are split on the chip


def test_bisect_explain_takes_a_target_and_installs_the_chips_compiler(tmp_path: Path) -> None:
    matrix = parse_matrix({"release": [{"version": "0.5.3"}, {"version": "0.12.0.1"}], "checks": {"scaling": {}}},
                          tmp_path / "matrix.toml")
    (tmp_path / "train.py").write_text("pass\n")
    options = parse_options(matrix, ["--explain", str(tmp_path / "train.py"), "--op", "train.py:39",
                                     "--target", "tpu:v5e:2x2", *BOUNDS])
    assert options.backend == "tpu"  # jax[tpu]: libtpu compiles, nothing runs
    assert options.script_check is not None and options.script_check.kind is CheckKind.EXPLAIN
    # The target is the probes' typed value, never the check's text: it becomes text in each probe's record alone.
    assert options.script_check.explain == ExplainedProgram(op="train.py:39")
    assert options.script_check.parameters == {}
    assert options.target == parse_target("tpu:v5e:2x2")
    request = runner.RunRequest(check="script-train", version="0.12.0.1", script=options.script_check,
                                target=options.target)
    said = runner.parameters_for(matrix, request)
    assert json.loads(str(said["target"]))["name"] == "tpu:v5e:2x2"
    assert said["target"] == options.target.as_parameter and {"explain": True, "op": "train.py:39"}.items() <= said.items()
    assert runner.too_old_for_target(runner.RunRequest(check="script-train", version="0.5.0", target=options.target)
                                     ).startswith("jax 0.5.0 cannot compile for")
    with pytest.raises(UsageError, match="goes with --check scaling or --explain"):
        parse_options(matrix, ["--script", str(tmp_path / "train.py"), "--target", "tpu:v5e:2x2", *BOUNDS])


def test_a_kept_run_of_a_program_is_one_per_target(tmp_path: Path) -> None:
    """Two TPU slices share a release's environment: one slice's compile must never answer the other's probe."""
    (tmp_path / "train.py").write_text("pass\n")
    env = Environment(python=Path(sys.executable), versions={"jax": "0.12.0.1"}, obtained="reused")

    def kept(target: str) -> Path | None:
        check = script_check("s", tmp_path / "train.py", explain=ExplainedProgram(op="train.py:39"))
        return shared_runs.path(tmp_path, env, check, "tpu", parse_target(target) if target else None)

    assert len({kept("tpu:v5e:2x2"), kept("tpu:v5e:2x4"), kept("")}) == 3
