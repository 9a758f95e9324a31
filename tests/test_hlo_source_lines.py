"""Every linalg op placed on the program's source line, on every release explain supports (issue 58).

tests/data/hlo/ops_loop-tpu-v5e-2x2/0.8.0: `tests/data/hlo/ops_loop.py` (issue 58's program: a dict of linalg losses,
each ``jax.jit(jax.value_and_grad(f))``) run on CPU with `repro/target_site` armed and compiled by
``python -m repro.target_compile`` in the jax[tpu] 0.8.0 environment for tpu:v5e:2x2, compile-only; modules 1
(slogdet), 2 (inv) and 4 (qr), ``backend_config`` dropped, paths made /home/user/ (the same fingerprints as the whole
files). The TPU compiler of 0.7.0 to 0.8.3 keeps ``op_name`` on its LU custom call and drops the line; the fused
computations of the solves and the Householder product name none either: every such op was placed in "(JAX's own
code)", so ``bisect --op ops_loop.py:16`` passed over those releases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.hlo import fingerprints, read_module

DUMP = Path(__file__).parent / "data" / "hlo" / "ops_loop-tpu-v5e-2x2" / "0.8.0"


def _prints(module: int) -> dict[tuple[str | None, str, str], str]:
    after = read_module(DUMP / f"module_{module:04d}.jit__lambda_.after_optimizations.txt")
    before = read_module(DUMP / f"module_{module:04d}.jit__lambda_.before_optimizations.txt")
    return {(f.location, f.op, f.pass_): f.state for f in fingerprints(after, before, number=module)
            if f.op not in ("all-gather", "all-reduce")}


@pytest.mark.parametrize("module, line, expected", [
    (1, 15, {("lu", "forward"): "gathered", ("triangular_solve", "backward"): "gathered"}),
    (2, 16, {("lu", "forward"): "gathered", ("triangular_solve", "forward"): "gathered",
             ("triangular_solve", "backward"): "whole"}),
    (4, 18, {("geqrf", "forward"): "split", ("householder_product", "forward"): "split",
             ("triangular_solve", "backward"): "split"}),
])
def test_on_0_8_0_for_tpu_every_linalg_op_is_on_its_source_line(module: int, line: int,
                                                                 expected: dict[tuple[str, str], str]) -> None:
    found = _prints(module)
    assert found == {(f"ops_loop.py:{line}", op, pass_): state for (op, pass_), state in expected.items()}


def test_on_0_8_3_for_tpu_qr_is_on_its_line_not_on_the_kits_compile() -> None:
    # jax 0.8.3 for tpu:v5e:2x2, module 4 (qr): its ops were said to be at "target_compile.py:65" (the kit's jit
    # of the exported call), a line of the kit's, not the program's.
    folder = DUMP.parent / "0.8.3"
    after = read_module(folder / "module_0004.jit__lambda_.after_optimizations.txt")
    before = read_module(folder / "module_0004.jit__lambda_.before_optimizations.txt")
    found = {(f.location, f.op, f.pass_): f.state for f in fingerprints(after, before, number=4)}
    assert found == {("ops_loop.py:18", "geqrf", "forward"): "split",
                     ("ops_loop.py:18", "householder_product", "forward"): "split",
                     ("ops_loop.py:18", "triangular_solve", "backward"): "split",
                     ("ops_loop.py:18", "all-reduce", "forward"): "expected"}


def test_on_0_12_an_all_gather_is_placed_on_the_programs_line_never_the_kits_compile() -> None:
    # jax 0.12.0.1 for tpu:v5e:2x2, module 6 (eigh): stack-frame tables. The all-gather the partitioner inserted is
    # used first by the Sharding call the kit's compile of the export made (its frames: repro/target_compile.py,
    # under <frozen runpy>): it was said to be at "target_compile.py:136", a line of the kit's, not the program's.
    folder = DUMP.parent / "0.12.0.1"
    after = read_module(folder / "module_0006.jit__lambda_.after_optimizations.txt")
    before = read_module(folder / "module_0006.jit__lambda_.before_optimizations.txt")
    found = {(f.location, f.op): f.state for f in fingerprints(after, before, number=6)}
    assert found == {("ops_loop.py:20", "all-gather"): "communication", ("ops_loop.py:20", "eigh"): "gathered",
                     ("ops_loop.py:20", "all-reduce"): "expected"}
    assert not any(i.source and "target_compile" in i.source[0] for _, i in after.instructions())


def test_a_stack_frame_chain_is_walked_out_to_the_programs_own_file() -> None:
    # A library installed in site-packages called from the program: the op's own frame is the library's; the line
    # said is the program's call into it. XLA prints parent_frame_id one past the parent's id (1: none).
    from repro.hlo_text import read_text

    module = read_text("\n".join([
        "HloModule jit_f, num_partitions=4", "",
        "FileNames", '1 "/home/user/train.py"', '2 "/venv/lib/python3.12/site-packages/lib/ops.py"', "",
        "FunctionNames", '1 "<module>"', '2 "helper"', "",
        "FileLocations", "1 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=1 end_column=1}",
        "2 {file_name_id=2 function_name_id=2 line=40 end_line=40 column=1 end_column=1}", "",
        "StackFrames", "1 {file_location_id=1 parent_frame_id=1}", "2 {file_location_id=2 parent_frame_id=2}", "",
        "ENTRY %main {",
        '  ROOT %lu = f32[4,8,8]{2,1,0} custom-call(), custom_call_target="lapack_sgetrf_ffi", '
        'metadata={op_name="jit(f)/lu" stack_frame_id=2}',
        "}"]))
    assert module.computations["main"].instructions["lu"].source == ("/home/user/train.py", 12)
