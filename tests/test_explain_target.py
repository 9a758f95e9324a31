"""explain --target: the program runs on CPU host devices, its exports are compiled for the target (no JAX needed).

The target's compile stands in for libtpu here: `kit.run.targeted.compile_exports` copies HLO the TPU compiler
really wrote (tests/data/hlo/jax-*-tpu-*: compiled for TPU v5e 2x2 from the programs' exports on jax 0.12.0.1 and
0.5.3) into the dump folder, as `repro.target_compile` writes it.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kit import explain
from kit.config import load_matrix
from kit.errors import UsageError
from kit.explain import capture as capture_module
from kit.explain import options as explain_options
from kit.hlo import fingerprints, read_module
from kit.install.environment import Environment, Prepared
from kit.run import targeted
from kit.targets import parse_target

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "hlo"

# The program checks what the kit told it: CPU only, its exports folder, the target's platform, 4 host devices.
_PROGRAM = '''
import os
assert os.environ["JAX_PLATFORMS"] == "cpu"
assert os.path.isdir(os.environ["KIT_TARGET_EXPORTS"])
assert os.environ["KIT_TARGET_PLATFORM"] == "tpu"
assert "--xla_force_host_platform_device_count=4" in os.environ["XLA_FLAGS"]
assert "target_site" in os.environ["PYTHONPATH"]
print("ran on cpu for the target", flush=True)
'''


FIXTURE_CATALOGUE = Path(__file__).resolve().parent / "fixtures" / "known"
REQUESTS: list[Any] = []
"""What explain asked runner.prepare for, latest last."""


@pytest.fixture
def matrix(tmp_path: Path):  # type: ignore[no-untyped-def]
    return dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")


def _explain(monkeypatch: pytest.MonkeyPatch, matrix: Any, folder: Path, program: str, argv: list[str],
             capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], list[Any]]:
    installs: list[Any] = []

    def prepare(matrix: Any, request: Any, log: Any) -> Prepared:
        installs.append(request.install)
        REQUESTS.append(request)
        env = Environment(python=Path(sys.executable), versions={"jax": request.version}, obtained="reused")
        return Prepared(plan=None, resolution=None, environment=env, jax=request.version)

    def compile_exports(run_child: Any, env: Environment, target: Any, exports: Path, scratch: Path, dump: Path,
                        timeout: int, log: Any) -> dict[str, Any]:
        release = env.versions["jax"]
        for stage in ("before_optimizations", "after_optimizations"):
            shutil.copy(DATA / f"jax-{release}-tpu-{program}.{stage}.txt", dump / f"module_0001.jit_loss.{stage}.txt")
        return {"modules": [{"number": 1, "name": "jit_loss"}], "failed": [], "devices": {"count": 4}}

    monkeypatch.setattr(capture_module.runner, "prepare", prepare)
    # A fixed catalogue (tests/fixtures/known): the answer must not change with each entry the kit gains.
    monkeypatch.setattr(explain, "catalogue_folders", lambda matrix: [FIXTURE_CATALOGUE])
    monkeypatch.setattr(targeted, "compile_exports", compile_exports)
    (folder / f"{program}.py").write_text(textwrap.dedent(_PROGRAM))
    code = explain.main(matrix, ["--called-from", str(folder), *argv], log=lambda line: None,
                        reproduce="nox -s explain")
    return code, capsys.readouterr().out.splitlines(), installs


def test_compiled_for_a_tpu_the_thread_program_gathers_its_lu_and_no_release_is_called_safe(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, installs = _explain(monkeypatch, matrix, tmp_path, "train_slogdet",
                                     ["train_slogdet.py", "--releases", "0.12.0.1", "--target", "tpu:v5e:2x2"], capsys)
    text = "\n".join(lines)
    assert code == 0 and len(lines) <= 12, lines
    assert "compiled for TPU v5e 2x2 (4 devices), not run; the program ran on cpu, 4 host devices" in lines[0]
    assert "train_slogdet.py:39 `slogdet`: every device factorises all 1024 matrices (LU, forward)" in text
    assert "fed by an all-gather of 256 KiB" in text
    assert ("known problem tpu-sharded-slogdet-lu (matches all 3 parts: op lu, state gathered, on tpu): not measured "
            "on this platform; no fix upstream yet; workaround shard_map") in text
    # The CPU/GPU problem, fixed in 0.5.3, is not the TPU's: named in part only, and its fix is never the pick.
    assert "; sharded-slogdet (matches 3 of 4 parts; not: on tpu (it shows on cpu, gpu))" in text
    # Nothing claimed past what was measured (issue 58: "no release is safe" said of releases never compiled).
    assert lines[-2] == ("answer: for TPU v5e 2x2 (4 devices) (compiled for it, not run), the measured release "
                         "0.12.0.1 does not split train_slogdet.py:39 lu; releases after 0.12.0.1 were not measured; "
                         "tpu-sharded-slogdet-lu has no fix upstream: try shard_map")
    assert "no release is safe" not in text
    assert [key.backend for key in installs] == ["tpu"]  # jax[tpu]: the release with the target's compiler
    record = json.loads((tmp_path / "reports" / "explain-train_slogdet-0.12.0.1-tpu-v5e-2x2.json").read_text())
    assert record["target"]["name"] == "tpu:v5e:2x2" and record["requested"]["target"] == "tpu:v5e:2x2"
    assert "compiled for TPU v5e 2x2 (4 devices), not run" in record["reason"]
    assert "ran on cpu for the target" in " ".join(record["run"]["output_tail"])
    page = (tmp_path / "reports" / "explain-train_slogdet-0.12.0.1-tpu-v5e-2x2.md").read_text()
    assert "not run" in page and "/home/user" not in page


def test_on_a_tpu_machine_its_own_interpreter_compiles_for_a_slice(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The chip's interpreter reports tpu; its program runs on CPU host devices for the target, so that backend is
    # not asked to agree with cpu (on the chip, 2026-12-05: "the JAX in python3 runs on tpu, not cpu", exit 2).
    code, lines, _ = _explain(monkeypatch, matrix, tmp_path, "train_slogdet",
                              ["train_slogdet.py", "--python", sys.executable, "--releases", "0.12.0.1",
                               "--target", "tpu:v5e:2x2"], capsys)
    assert code == 0, lines
    assert REQUESTS[-1].existing is not None and REQUESTS[-1].existing.backend is None
    assert REQUESTS[-1].backend == "cpu"
    assert "every device factorises all 1024 matrices" in "\n".join(lines)


def test_a_release_whose_tpu_build_the_index_lacks_is_said_before_anything_installs(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, installs = _explain(monkeypatch, matrix, tmp_path, "train_mixed",
                                     ["train_mixed.py", "--releases", "0.4.35,0.5.3", "--target", "tpu:v5e:2x2"],
                                     capsys)
    text = "\n".join(lines)
    assert code == 0
    assert "0.4.35: jax 0.4.35 cannot compile for TPU v5e 2x2 (4 devices) here" in text
    assert "libtpu-nightly" in text
    assert len(installs) == 1  # 0.4.35 was never prepared
    assert "train_mixed.py:40 `slogdet`: every device factorises all 1024 matrices (LU, forward)" in text
    record = json.loads((tmp_path / "reports" / "explain-train_mixed-0.4.35-tpu-v5e-2x2.json").read_text())
    assert record["status"] == "not-installable"


def test_the_tpu_compilers_hlo_reads_per_source_line_on_both_forms_of_metadata() -> None:
    def prints(release: str, program: str) -> dict[tuple[str, str, str], tuple[str, Any, Any]]:
        after = read_module(DATA / f"jax-{release}-tpu-{program}.after_optimizations.txt")
        before = read_module(DATA / f"jax-{release}-tpu-{program}.before_optimizations.txt")
        return {(str(f.location), f.op, f.pass_): (f.state, f.device_batch, f.global_batch)
                for f in fingerprints(after, before)}

    # 0.12.0.1: stack-frame tables; LuRealDecompositionBlock, the triangular solves as InvertDiagBlocks*.
    new = prints("0.12.0.1", "train_slogdet")
    assert new[("train_slogdet.py:39", "lu", "forward")] == ("gathered", 1024, 1024)
    assert new[("train_slogdet.py:39", "triangular_solve", "backward")] == ("split", 256, 1024)
    # 0.5.3 (libtpu 0.0.11): LuDecompositionBlock without metadata, named through its users; cholesky split.
    old = prints("0.5.3", "train_mixed")
    assert old[("train_mixed.py:40", "lu", "forward")][0] in ("whole", "gathered")
    assert old[("train_mixed.py:42", "cholesky", "forward")] == ("split", 256, 1024)
    assert not any(op.startswith(("Lu", "Invert")) for _, op, _ in old)  # every TPU custom call has its primitive


def test_target_options_are_checked_where_they_enter(matrix: Any, tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("pass\n")

    def parse(*words: str) -> explain_options.ExplainOptions:
        return explain_options.parse(matrix, ["p.py", *words], cwd=tmp_path)

    options = parse("--target", "tpu:v5e:2x4")
    assert options.target == parse_target("tpu:v5e:2x4") and options.devices == 8  # the target's devices
    assert parse("--target", "gpu:a100:4", "--devices", "2").devices == 2
    with pytest.raises(UsageError, match="unknown --target 'tpu:v5e:2x3x'") as unknown:
        parse("--target", "tpu:v5e:2x3x")
    assert "did you mean tpu:v5e:2x" in unknown.value.tip and "gpu:a100:N" in unknown.value.tip
    with pytest.raises(UsageError, match="more than TPU v5e 2x2"):
        parse("--target", "tpu:v5e:2x2", "--devices", "8")
    with pytest.raises(UsageError, match="cannot go with --backend cuda"):
        parse("--target", "tpu:v5e:2x2", "--backend", "cuda")
    # On a TPU machine the user's own interpreter holds libtpu: --python goes with --target, and the program
    # runs on CPU host devices there too (its JAX is not asked which backend it would pick).
    mine = parse("--target", "tpu:v5e:2x2", "--python", sys.executable)
    assert (mine.backend, mine.devices, mine.python) == ("cpu", 4, Path(sys.executable))


def test_targets_name_their_hardware_and_refuse_what_they_do_not_know() -> None:
    tpu = parse_target("TPU:v5e:2x2")
    assert (tpu.platform, tpu.devices, tpu.install_extra) == ("tpu", 4, "tpu")
    assert tpu.compiled_not_run == "compiled for TPU v5e 2x2 (4 devices), not run"
    gpu = parse_target("gpu:h100:8")
    assert (gpu.platform, gpu.devices, gpu.topology, gpu.description) == ("cuda", 8, "1x8x1", "h100.txtpb")
    assert gpu.title == "8 NVIDIA H100 GPUs"
    assert parse_target(json.dumps(tpu.to_json()) and "tpu:v5e:2x2") == type(tpu).from_json(tpu.to_json())
    for bad in ("gpu:a100:0", "gpu:a100:9", "gpu:v100:4", "tpu:v9:2x2", "cpu"):
        with pytest.raises(UsageError):
            parse_target(bad)
    assert targeted.release_too_old(tpu, "0.5.0") and not targeted.release_too_old(tpu, "0.5.3")
    assert not targeted.release_too_old(tpu, "")  # --python: what that interpreter holds decides


def test_the_gpu_compilers_one_concatenated_gradient_sum_is_expected_and_every_op_is_split() -> None:
    # jax 0.12.0.1 for 4 A100s: cusolver getrf on 256 per device; the six gradients summed as one f32[10432]
    # all-reduce, sliced apart again, is data parallelism, not communication.
    after = read_module(DATA / "jax-0.12.0.1-gpu-train_slogdet.after_optimizations.txt")
    before = read_module(DATA / "jax-0.12.0.1-gpu-train_slogdet.before_optimizations.txt")
    found = {(f.op, f.pass_): f for f in fingerprints(after, before)}
    assert found[("lu", "forward")].state == "split" and found[("lu", "forward")].targets == ["cusolver_getrf_ffi"]
    assert found[("triangular_solve", "backward")].state == "split"
    reduced = found[("all-reduce", "backward")]
    assert reduced.state == "expected" and reduced.bytes_per_device == 10432 * 4


def test_a_known_fix_a_later_measured_release_contradicts_is_never_the_pick() -> None:
    from kit.explain.answer import choice
    from kit.explain.capture import Capture
    from kit.explain.known import KnownFingerprint
    from kit.known.signs import FingerprintSign
    from kit.hlo import Fingerprint

    def capture(release: str, state: str) -> Capture:
        solve = Fingerprint("jit_loss", "train.py:39", "slogdet", "triangular_solve", "backward", state, "p",
                            count=1, device_batch=1024 if state == "whole" else 256, global_batch=1024)
        return Capture(release, {"modules": [{"name": "jit_loss", "partitions": 4}]}, [solve])

    fix = KnownFingerprint("sharded-slogdet", "", FingerprintSign(("lu",), ("whole",)), "0.5.3", "f93c2a1aa5", "")
    gpu = parse_target("gpu:a100:4")
    # As measured for 4 A100s: 0.6.0 splits the LU (the fix) but solves the whole batch backward; 0.12.0.1 splits.
    said = choice([capture("0.5.0", "whole"), capture("0.6.0", "whole"), capture("0.12.0.1", "split")], [fix], gpu)
    assert "pick jax >= 0.12.0.1" in said and "0.6.0, above the known fix in 0.5.3, still holds ops whole" in said
    assert "pick jax >= 0.5.3" not in said
    # Uncontradicted, the fix is still the pick.
    said = choice([capture("0.5.0", "whole"), capture("0.12.0.1", "split")], [fix], gpu)
    assert said.endswith("pick jax >= 0.5.3") and "4 NVIDIA A100 GPUs (compiled for it, not run)" in said


def test_a_run_on_one_device_is_never_called_split() -> None:
    from kit.explain.answer import choice
    from kit.explain.capture import Capture

    # As on a single real TPU chip (the device tool's v5e, 2026-12-05): one module, not partitioned.
    single = Capture("0.10.2", {"modules": [{"name": "jit_loss", "partitions": 1}]}, [])
    said = choice([single], [])
    assert "nothing was partitioned over devices" in said and "split on" not in said


def test_on_tpu_qr_is_split_and_eigh_is_gathered_as_the_compiler_names_them() -> None:
    # jax 0.12.0.1 for TPU v5e 2x2, a program of qr, eigh and svd of 512 16x16 matrices sharded 4 ways:
    # QrDecompositionBlock gets 128 per chip; EighTpu (also inside svd) gets all 512 after an all-gather.
    after = read_module(DATA / "jax-0.12.0.1-tpu-qr_eigh_svd.after_optimizations.txt")
    before = read_module(DATA / "jax-0.12.0.1-tpu-qr_eigh_svd.before_optimizations.txt")
    found = {(str(f.location), f.op): f for f in fingerprints(after, before)}
    assert (found[("other.py:5", "geqrf")].state, found[("other.py:5", "geqrf")].device_batch) == ("split", 128)
    eigh = found[("other.py:6", "eigh")]
    assert (eigh.state, eigh.device_batch, eigh.targets, eigh.fed_by) == ("gathered", 512, ["EighTpu"], ["all-gather"])



@pytest.mark.parametrize("release, named", [("0.5.3", ["qr_eigh_svd.py:7", "qr_eigh_svd.py:6"]),
                                            ("0.12.0.1", ["other.py:6", "other.py:7"])])
def test_on_tpu_explain_says_which_eigh_line_every_chip_diagonalises_whole(
        monkeypatch: pytest.MonkeyPatch, matrix: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], release: str,
        named: list[str]) -> None:
    # qr, eigh and svd on lines 5, 6 and 7 (tests/data/hlo/qr_eigh_svd.py; "other.py" in 0.12.0.1's compile), for TPU
    # v5e 2x2: eigh's own line and svd's are named, also on 0.5.3, whose libtpu writes EighTpu without metadata.
    code, lines, _ = _explain(monkeypatch, matrix, tmp_path, "qr_eigh_svd",
                              ["qr_eigh_svd.py", "--releases", release, "--target", "tpu:v5e:2x2"], capsys)
    assert code == 0, lines
    said = [line.split()[0] for line in lines if "diagonalises all 512 matrices (eigh, forward)" in line]
    assert said == named
    answer = lines[-2]
    assert answer.startswith(f"answer: for TPU v5e 2x2 (4 devices) (compiled for it, not run), the measured release "
                             f"{release} does not split ") and all(f"{line} eigh" in answer for line in named)
    assert answer.endswith(f"releases after {release} were not measured")
