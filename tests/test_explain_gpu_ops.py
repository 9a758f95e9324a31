"""explain --target gpu:a100:4 of issue 58's program, on the HLO the CUDA plugin really wrote (no JAX needed).

tests/data/hlo/ops_loop-gpu-a100-4/{0.5.1,0.5.3}: `ops_loop.py` (a dict of six linalg losses, each
``jax.jit(jax.value_and_grad(f))`` in a loop, over 256 8x8 matrices sharded four ways) run on CPU with
`repro/target_site` armed and compiled by ``python -m repro.target_compile`` in the CUDA plugin's 0.5.1 and 0.5.3
environments for 4 A100s, compile-only; XLA's dump whole (paths made /home/user/), and the compile's result. The
cholesky's compile failed on both ("cuSolver internal error": cuSOLVER's potrf cannot be compiled without a GPU
there): only its text before optimizations is there.

Ground truth (compiled by hand, before these tests): on 0.5.1 every linalg op holds the whole batch; on 0.5.3 the
LU (getrf), QR and eigh are split and the triangular solves after the LU are still whole.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from kit import explain
from kit.config import load_matrix
from kit.explain import capture as capture_module
from kit.explain.answer import sentence, flagged_lines
from kit.explain.capture import Capture
from kit.hlo import fingerprints, read_module, uncompiled
from kit.install.environment import Environment, Prepared
from kit.run import targeted

ROOT = Path(__file__).resolve().parent.parent
DUMPS = Path(__file__).parent / "data" / "hlo" / "ops_loop-gpu-a100-4"
CATALOGUE = Path(__file__).parent / "fixtures" / "known"
_PROGRAM = ('import os\nassert os.environ["KIT_TARGET_PLATFORM"] == "cuda"\n'
            'assert os.environ["JAX_ENABLE_COMPILATION_CACHE"] == "false"\nprint("ran on cpu", flush=True)\n')


def _prints(release: str, module: int) -> dict[tuple[str, str, str], Any]:
    folder = DUMPS / release
    after = folder / f"module_{module:04d}.jit__lambda_.after_optimizations.txt"
    before = read_module(folder / f"module_{module:04d}.jit__lambda_.before_optimizations.txt")
    found = fingerprints(read_module(after), before, number=module) if after.exists() else uncompiled(before)
    return {(str(f.location), f.op, f.pass_): f for f in found}


def test_an_async_all_gather_counts_what_it_delivers_once_however_many_ops_it_feeds() -> None:
    # 0.5.3's inv: one all-gather-start of two f32[64,8,8] into two f32[256,8,8] (128 KiB a device) feeds the forward
    # and the backward triangular solves. Its shape holds its operands too: 160 KiB each op was said, 320 KiB the line.
    inv = _prints("0.5.3", 2)
    forward, backward = inv[("ops_loop.py:16", "triangular_solve", "forward")], \
        inv[("ops_loop.py:16", "triangular_solve", "backward")]
    assert (forward.state, forward.device_batch, forward.global_batch) == ("gathered", 256, 256)
    assert forward.bytes_per_device == backward.bytes_per_device == 2 * 256 * 8 * 8 * 4
    assert inv[("ops_loop.py:16", "all-gather", "forward")].bytes_per_device == 2 * 256 * 8 * 8 * 4
    line = next(line for line in flagged_lines(Capture("0.5.3", {}, list(inv.values())), ROOT)
                if line.location == "ops_loop.py:16")
    assert "fed by an all-gather of 128 KiB" in sentence(line)
    # 0.5.1's slogdet: one all-gather of 64 KiB feeds the LU.
    lu = _prints("0.5.1", 1)[("ops_loop.py:15", "lu", "forward")]
    assert (lu.state, lu.bytes_per_device, lu.fed_by) == ("gathered", 256 * 8 * 8 * 4, ["all-gather"])


def test_as_compiled_by_hand_0_5_1_holds_every_op_whole_and_0_5_3_splits_the_lu_not_the_solves() -> None:
    for module, line in ((1, 15), (2, 16), (3, 17)):
        old, new = _prints("0.5.1", module), _prints("0.5.3", module)
        assert old[(f"ops_loop.py:{line}", "lu", "forward")].state == "gathered"
        assert new[(f"ops_loop.py:{line}", "lu", "forward")].state == "split"
        assert new[(f"ops_loop.py:{line}", "triangular_solve", "backward")].state == "gathered"
        # The program's outer jit of a lambda (``jit(<lambda>)``) is not the function: the linalg call is.
        assert old[(f"ops_loop.py:{line}", "lu", "forward")].function == ["slogdet", "inv", "solve"][module - 1]
    assert _prints("0.5.3", 4)[("ops_loop.py:18", "geqrf", "forward")].state == "split"
    assert _prints("0.5.3", 6)[("ops_loop.py:20", "eigh", "forward")].state == "split"


def test_a_computation_the_compiler_refused_is_cannot_tell_never_split() -> None:
    cholesky = _prints("0.5.3", 5)
    assert {key: f.state for key, f in cholesky.items()} == {
        ("ops_loop.py:19", "cholesky", "forward"): "cannot tell",
        ("ops_loop.py:19", "triangular_solve", "backward"): "cannot tell"}


def _explain(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, releases: str,
             capsys: pytest.CaptureFixture[str]) -> list[str]:
    def prepare(matrix: Any, request: Any, log: Any) -> Prepared:
        env = Environment(python=Path(sys.executable), versions={"jax": request.version}, obtained="reused")
        return Prepared(plan=None, resolution=None, environment=env, jax=request.version)

    def compile_exports(run_child: Any, env: Environment, target: Any, exports: Path, scratch: Path, dump: Path,
                        timeout: int, log: Any) -> dict[str, Any]:
        folder = DUMPS / env.versions["jax"]
        for text in folder.glob("module_*.txt"):
            shutil.copy(text, dump / text.name)
        result: dict[str, Any] = json.loads((folder / "result.json").read_text())
        return result

    matrix = dataclasses.replace(load_matrix(ROOT / "matrix.toml"), results_dir=tmp_path / "reports" / "results")
    monkeypatch.setattr(capture_module.runner, "prepare", prepare)
    monkeypatch.setattr(explain, "catalogue_folders", lambda matrix: [CATALOGUE])
    monkeypatch.setattr(targeted, "compile_exports", compile_exports)
    (tmp_path / "ops_loop.py").write_text(_PROGRAM)
    code = explain.main(matrix, ["--called-from", str(tmp_path), "ops_loop.py", "--releases", releases,
                                 "--target", "gpu:a100:4"], log=lambda line: None, reproduce="nox -s explain")
    assert code == 0
    return capsys.readouterr().out.splitlines()


def test_the_answer_agrees_with_the_tables_and_says_what_could_not_be_compiled(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _explain(monkeypatch, tmp_path, "0.5.1,0.5.3", capsys)
    text = "\n".join(lines)
    assert len(lines) <= 12, lines
    # The cholesky's failed compile is on the console, as cannot tell, never split.
    assert "cannot tell: 1 computation(s) of the program could not be compiled or examined" in text
    assert "cuSolver internal error" in text and "ops_loop.py:19 cholesky" in text
    # Per op, the lowest measured release that splits it: the LU from 0.5.3; the solves on neither.
    per_op = next(line for line in lines if line.startswith("per op,"))
    # cuSOLVER's pivots-to-permutation beside each LU: whole s32[1024,8] on 0.5.1, split on 0.5.3 (truth/t1 B).
    assert ("split from 0.5.3: ops_loop.py:15 lu, ops_loop.py:15 lu_pivots_to_permutation, ops_loop.py:16 lu, "
            "ops_loop.py:16 lu_pivots_to_permutation and 5 more") in per_op
    assert "split on none of 0.5.1..0.5.3: ops_loop.py:15 triangular_solve (backward)," in per_op
    assert ("cannot tell on 0.5.1, 0.5.3 (not compiled): ops_loop.py:19 cholesky, ops_loop.py:19 triangular_solve "
            "(backward)") in per_op
    assert lines[-2] == ("answer: for 4 NVIDIA A100 GPUs (compiled for it, not run), none of the measured releases "
                         "0.5.1..0.5.3 splits ops_loop.py:15 triangular_solve (backward), ops_loop.py:16 "
                         "triangular_solve (backward), ops_loop.py:16 triangular_solve and 3 more op(s); releases "
                         "after 0.5.3 were not measured")
    assert "no release is safe" not in text and "every op is split" not in text
    # The catalogue's own GPU entry, cited on a GPU target (it said "not: on cuda (it shows on cpu, gpu)").
    known = next(line for line in lines if line.startswith("known problem"))
    assert known.startswith("known problem gpu-sharded-slogdet-getrf (matches all 4 parts: op lu, state gathered, "
                            "fed by all-gather, on gpu): measured gpu:a100:4")
    assert "also matched in full: sharded-slogdet" in known and "on cuda" not in known


def test_a_release_whose_computation_could_not_be_compiled_is_never_said_to_split_every_op(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _explain(monkeypatch, tmp_path, "0.5.3", capsys)
    assert not any("every op is split" in line or "pick jax" in line for line in lines), lines
    record = json.loads((tmp_path / "reports" / "explain-ops_loop-0.5.3-gpu-a100-4.json").read_text())
    assert ("6 jitted computation(s) called; 5 computation(s) compiled for 4 NVIDIA A100 GPUs, not run; 1 could not "
            "be compiled for it, so what they do there cannot be told (e.g. XlaRuntimeError: INTERNAL: cuSolver "
            "internal error)") in record["reason"]


def test_the_table_across_releases_shows_cannot_tell_over_split() -> None:
    from kit.explain.report import across_rows
    from kit.hlo import Fingerprint

    def op(state: str) -> Fingerprint:
        return Fingerprint("jit_f", "train.py:19", "cholesky", "cholesky", "forward", state, "cholesky", count=1,
                           device_batch=64 if state == "split" else None, global_batch=256)

    # One release holding the op twice, once compiled and split, once in a module whose compile failed.
    rows = across_rows([Capture("0.7.0", {}, [op("split"), op("cannot tell")])])
    assert [row.states for row in rows] == [{"0.7.0": "cannot tell"}]


def test_a_module_dropped_whole_from_the_dump_keeps_its_release_from_being_called_clean() -> None:
    from kit.explain.answer import unseen
    from kit.hlo import Fingerprint

    split = Fingerprint("jit_f", "train.py:15", "slogdet", "lu", "forward", "split", "lu", count=1, device_batch=64,
                        global_batch=256)
    record = {"modules": [{"number": 1, "name": "jit_f", "partitions": 4}],
              "dump": {"dropped": ["module_0002.jit_g.before_optimizations.txt",
                                   "module_0002.jit_g.cpu_after_optimizations.txt"], "dropped_count": 2}}
    assert unseen(Capture("0.7.0", record, [split])) == 1
    assert unseen(Capture("0.7.0", {**record, "dump": {"dropped": [], "dropped_count": 0}}, [split])) == 0
