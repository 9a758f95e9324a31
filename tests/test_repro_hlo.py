"""repro.hlo on compiled HLO captured from real releases (tests/fixtures/hlo/capture.py).

Captured on CPU with 4 forced host devices, slogdet of a (4096, 32, 32)
float32 batch. What the fixtures show:

* 0.4.13 replicates via a zero-padded all-reduce (no all-gather at all) and
  passes the old lapack_sgetrf its scalar batch/m/n operands first;
* 0.4.35 all-gathers the batch before lapack_sgetrf_ffi, shapes inline;
* 0.5.3, 0.6.0 and the newest factorise 1024 per device, print operands as
  bare names, and have an all-reduce *after* the LU (the mean) that must not
  count as feeding it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

from repro import hlo
from repro.hlo import batch_of, parse_shape, read_evidence

FIXTURES = Path(__file__).parent / "fixtures" / "hlo"
NEWEST = "0.12.0.1"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# fixture → (nonzero collectives, LU target, LU batch, collectives feeding the LU)
CASES: Dict[str, Tuple[Dict[str, int], str, int, Tuple[str, ...]]] = {
    "jax-0.4.13-slogdet-batch-sharded-4dev.txt": ({"all-reduce": 1}, "lapack_sgetrf", 4096, ("all-reduce",)),
    "jax-0.4.13-slogdet-rows-sharded-4dev.txt": ({"all-reduce": 1}, "lapack_sgetrf", 4096, ("all-reduce",)),
    "jax-0.4.13-slogdet-1dev.txt": ({}, "lapack_sgetrf", 4096, ()),
    "jax-0.4.13-mlp-slogdet-grad-batch-sharded-4dev.txt": ({"all-reduce": 7}, "lapack_sgetrf", 4096, ("all-reduce",)),
    "jax-0.4.35-slogdet-batch-sharded-4dev.txt": ({"all-gather": 1}, "lapack_sgetrf_ffi", 4096, ("all-gather",)),
    "jax-0.4.35-slogdet-rows-sharded-4dev.txt": ({"all-gather": 1}, "lapack_sgetrf_ffi", 4096, ("all-gather",)),
    "jax-0.4.35-slogdet-1dev.txt": ({}, "lapack_sgetrf_ffi", 4096, ()),
    "jax-0.4.35-mlp-slogdet-grad-batch-sharded-4dev.txt": (
        {"all-gather": 4, "all-reduce": 3}, "lapack_sgetrf_ffi", 4096, ("all-gather",)),
    "jax-0.5.3-slogdet-batch-sharded-4dev.txt": ({"all-reduce": 1}, "lapack_sgetrf_ffi", 1024, ()),
    "jax-0.5.3-slogdet-rows-sharded-4dev.txt": ({"all-gather": 1}, "lapack_sgetrf_ffi", 4096, ("all-gather",)),
    "jax-0.5.3-slogdet-1dev.txt": ({}, "lapack_sgetrf_ffi", 4096, ()),
    "jax-0.5.3-mlp-slogdet-grad-batch-sharded-4dev.txt": ({"all-reduce": 2}, "lapack_sgetrf_ffi", 1024, ()),
    "jax-0.6.0-slogdet-batch-sharded-4dev.txt": ({"all-reduce": 1}, "lapack_sgetrf_ffi", 1024, ()),
    "jax-0.6.0-slogdet-rows-sharded-4dev.txt": ({"all-gather": 1}, "lapack_sgetrf_ffi", 4096, ("all-gather",)),
    "jax-0.6.0-slogdet-1dev.txt": ({}, "lapack_sgetrf_ffi", 4096, ()),
    "jax-0.6.0-mlp-slogdet-grad-batch-sharded-4dev.txt": ({"all-reduce": 2}, "lapack_sgetrf_ffi", 1024, ()),
    f"jax-{NEWEST}-slogdet-batch-sharded-4dev.txt": ({"all-reduce": 1}, "lapack_sgetrf_ffi", 1024, ()),
    f"jax-{NEWEST}-slogdet-rows-sharded-4dev.txt": ({"all-gather": 1}, "lapack_sgetrf_ffi", 4096, ("all-gather",)),
    f"jax-{NEWEST}-slogdet-1dev.txt": ({}, "lapack_sgetrf_ffi", 4096, ()),
    f"jax-{NEWEST}-mlp-slogdet-grad-batch-sharded-4dev.txt": ({"all-reduce": 1}, "lapack_sgetrf_ffi", 1024, ()),
}


def test_every_fixture_is_covered() -> None:
    assert sorted(path.name for path in FIXTURES.glob("*.txt")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_captured_release(name: str) -> None:
    collectives, target, lu_batch, fed_by = CASES[name]
    evidence = read_evidence(fixture(name))

    assert {op: count for op, count in evidence.collectives.items() if count} == collectives
    assert evidence.all_gathers == collectives.get("all-gather", 0)
    assert [call.target for call in evidence.lu_calls] == [target]
    lu = evidence.lu_calls[0]
    assert lu.operand_shape == (lu_batch, 32, 32)
    assert lu.shape_source in ("operand", "resolved operand")  # never the result fallback
    assert evidence.lu_batch == lu_batch
    assert tuple(sorted(set(lu.fed_by))) == fed_by


def test_newer_releases_also_show_their_triangular_solves() -> None:
    evidence = read_evidence(fixture("jax-0.6.0-mlp-slogdet-grad-batch-sharded-4dev.txt"))
    solves = [call for call in evidence.linalg_calls if call.kind == "triangular_solve"]
    assert [call.batch for call in solves] == [1024, 1024]


# Hand-written snippets for forms the fixtures above do not print.

ASYNC_AND_SCALARS = """\
HloModule m, num_partitions=2

%fused (param_0: f32[8,4,4]) -> f32[8,4,4] {
  ROOT %param_0 = f32[8,4,4]{2,1,0} parameter(0)
}

ENTRY %main (p: f32[4,4,4]) -> f32[8,4,4] {
  %p = f32[4,4,4]{2,1,0} parameter(0)
  %ags = (f32[4,4,4]{2,1,0}, f32[8,4,4]{2,1,0}) all-gather-start(%p), dimensions={0}
  %agd = f32[8,4,4]{2,1,0} all-gather-done(%ags)
  %ars = f32[8,4,4]{2,1,0} all-reduce-start(%agd), to_apply=%add
  %ard = f32[8,4,4]{2,1,0} all-reduce-done(%ars)
  %cp = f32[8,4,4]{2,1,0} collective-permute(%ard), source_target_pairs={{0,1}}
  %f = f32[8,4,4]{2,1,0} fusion(%cp), kind=kLoop, calls=%fused
  %b = s32[] constant(8)
  %n = s32[] constant(4)
  ROOT %lu = (f32[8,4,4]{1,2,0}, s32[8,4]{1,0}, s32[8]{0}) custom-call(%b, %n, %n, %f), custom_call_target="cusolver_getrf"
}
"""


def test_async_pairs_count_once_and_scalars_are_skipped() -> None:
    evidence = read_evidence(ASYNC_AND_SCALARS)
    assert evidence.collectives == {
        "all-gather": 1, "all-reduce": 1, "all-to-all": 0, "collective-permute": 1, "reduce-scatter": 0,
    }
    (lu,) = evidence.lu_calls
    assert (lu.target, lu.operand_shape, lu.batch, lu.shape_source) == ("cusolver_getrf", (8, 4, 4), 8, "resolved operand")
    assert lu.fed_by == ("collective-permute", "all-reduce", "all-gather")


CALLED_COMPUTATION = """\
HloModule m

%body (x: f32[16,8,8]) -> (f32[16,8,8]{1,2,0}, s32[16,8]{1,0}) {
  %x = f32[16,8,8]{2,1,0} parameter(0)
  ROOT %qr = (f32[16,8,8]{1,2,0}, f32[16,8]{1,0}) custom-call(%x), custom_call_target="lapack_sgeqrf_ffi"
}

ENTRY %main (a: f32[4,8,8]) -> f32[16,8,8] {
  %a = f32[4,8,8]{2,1,0} parameter(0)
  %g = f32[16,8,8]{2,1,0} all-gather(%a), dimensions={0}
  %c = (f32[16,8,8]{1,2,0}, f32[16,8]{1,0}) call(%g), to_apply=%body
  ROOT %lu = (f32[2,3,8,8]{3,2,1,0}, s32[2,3,8]{2,1,0}) custom-call(), custom_call_target="cublas_getrf_batched"
}
"""


def test_data_flow_leaves_called_computations_and_result_shape_is_the_last_resort() -> None:
    evidence = read_evidence(CALLED_COMPUTATION)
    qr, lu = evidence.linalg_calls
    assert (qr.kind, qr.batch, qr.fed_by) == ("qr", 16, ("all-gather",))
    assert (lu.kind, lu.operand_shape, lu.batch, lu.shape_source) == ("lu", (2, 3, 8, 8), 6, "result")
    assert lu.fed_by == ()


def test_no_linalg_call_means_no_lu_batch() -> None:
    evidence = read_evidence("ENTRY %e (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n")
    assert evidence.linalg_calls == []
    assert evidence.lu_batch is None
    assert evidence.collective_count == 0


@pytest.mark.parametrize(
    "shape, expected",
    [
        ("f32[1024,32,32]{1,2,0}", [(1024, 32, 32)]),
        ("(f32[4,32,32]{1,2,0}, s32[4]{0})", [(4, 32, 32), (4,)]),
        ("s32[]", [()]),
        ("f32[<=8,4,4]", [(8, 4, 4)]),
    ],
)
def test_parse_shape(shape: str, expected: list) -> None:
    assert parse_shape(shape) == expected


@pytest.mark.parametrize("dims, batch", [((32, 32), 1), ((4096, 32, 32), 4096), ((2, 3, 8, 8), 6)])
def test_batch_of(dims: Tuple[int, ...], batch: Optional[int]) -> None:
    assert batch_of(dims) == batch


def test_a_programs_digest_ignores_where_its_instructions_came_from_in_the_source() -> None:
    """An executable read back from the persistent cache (0.10.2) numbers its source frames in another order."""
    text = ("HloModule jit_f, is_scheduled=true\n\nFileNames\n1 \"f.py\"\n\nStackFrames\n"
            "1 {file_location_id=%s parent_frame_id=1}\n\nENTRY %%main {\n"
            "  %%p = f32[8]{0} parameter(0), metadata={op_name=\"x\" stack_frame_id=%s}\n"
            "  ROOT %%a = f32[8]{0} all-gather(%%p), dimensions={0}\n}\n")
    assert hlo.program_digest(text % (1, 1)) == hlo.program_digest(text % (2, 3))
    assert "metadata" not in hlo.program_text(text % (1, 1))
    assert "StackFrames" not in hlo.program_text(text % (1, 1))
    assert hlo.program_digest(text % (1, 1)) != hlo.program_digest((text % (1, 1)).replace("f32[8]", "f32[4]"))
    assert hlo.read_evidence(text % (1, 1)).program == hlo.program_digest(text % (2, 2))


# The TPU compiler's own HLO (libtpu from jax[tpu] 0.12.0.1, for TPU v5e 2x2's 4 compile-only devices, on a
# machine without a TPU: tests/fixtures/hlo/tpu/capture.py). Its custom calls are not LAPACK's names.
TPU = FIXTURES / "tpu"
TPU_CASES: Dict[str, Tuple[Dict[str, int], Tuple[Tuple[str, str, Tuple[int, ...], Tuple[str, ...]], ...]]] = {
    # batch sharded: every chip gathers the whole batch and factorises it (the bug, as on CPU)
    "jax-0.12.0.1-tpu-v5e-slogdet-batch-sharded-4dev.txt": (
        {"all-gather": 1}, (("LuRealDecompositionBlock", "lu", (4096, 32, 32), ("all-gather",)),)),
    # the positive control: rows sharded must be gathered, a collective the detector sees
    "jax-0.12.0.1-tpu-v5e-slogdet-rows-sharded-4dev.txt": (
        {"all-gather": 1}, (("LuRealDecompositionBlock", "lu", (4096, 32, 32), ("all-gather",)),)),
    # the gradient: the LU, then the triangular inverses, all on the gathered batch
    "jax-0.12.0.1-tpu-v5e-slogdet-grad-batch-sharded-4dev.txt": (
        {"all-gather": 1}, (("LuRealDecompositionBlock", "lu", (4096, 32, 32), ("all-gather",)),
                            ("InvertDiagBlocksUpperTriangular", "triangular_solve", (4096, 1, 32, 32), ("all-gather",)),
                            ("InvertDiagBlocksLowerTriangular", "triangular_solve", (4096, 1, 32, 32), ("all-gather",)))),
    # cholesky, which libtpu splits: each chip its quarter, no gather before it (the mean's all-reduce after)
    "jax-0.12.0.1-tpu-v5e-cholesky-batch-sharded-4dev.txt": (
        {"all-reduce": 1}, (("Cholesky", "cholesky", (1024, 32, 32), ()),)),
}


def test_every_tpu_fixture_is_covered() -> None:
    assert sorted(path.name for path in TPU.glob("*.txt")) == sorted(TPU_CASES)


@pytest.mark.parametrize("name", sorted(TPU_CASES))
def test_the_tpu_compilers_custom_calls_are_read_as_their_linalg_ops(name: str) -> None:
    collectives, calls = TPU_CASES[name]
    evidence = read_evidence((TPU / name).read_text(encoding="utf-8"))
    assert {op: count for op, count in evidence.collectives.items() if count} == collectives
    assert [(call.target, call.kind, call.operand_shape, tuple(sorted(set(call.fed_by))))
            for call in evidence.linalg_calls] == list(calls)
    assert all(call.shape_source == "resolved operand" for call in evidence.linalg_calls)


def test_the_tpu_lu_of_releases_up_to_0_10_2_is_read_too() -> None:
    # Up to jax 0.10.2 libtpu's LU target is LuDecompositionBlock; the layout suffixes are TPU tiling.
    text = """ENTRY %main (p: f32[1024,16,16]) -> f32[] {
  %p = f32[1024,16,16]{0,2,1:T(8,128)S(1)} parameter(0)
  %all-gather.1 = f32[4096,16,16]{0,2,1:T(8,128)S(1)} all-gather(%p), channel_id=1, replica_groups=mesh['batch'=4] {'batch'}, dimensions={0}
  %lu.2 = (f32[4096,16,16]{0,2,1:T(8,128)S(1)}, s32[4096,16]{1,0}, s32[4096,16]{1,0}) custom-call(%all-gather.1), custom_call_target="LuDecompositionBlock"
  ROOT %r = f32[] constant(0)
}
"""
    evidence = read_evidence(text)
    assert [(call.kind, call.batch, call.fed_by) for call in evidence.lu_calls] == [("lu", 4096, ("all-gather",))]
