"""repro.hlo_text, the one HLO reader: the scaling repro (`repro.hlo`) and the kit (`kit.hlo`) both read through it.

Pinned on HLO that real releases compiled, one of each era and compiler: jax 0.4.13 (shapes inline in operand lists,
inline metadata, no num_partitions in the header), 0.6.0 (inline metadata), 0.12.0.1 (stack frame tables), the TPU
compiler's (libtpu of 0.12.0.1, and of 0.5.3, which drops its linalg custom calls' metadata) and the GPU compiler's
(4 A100s on 0.12.0.1). tests/fixtures/hlo and tests/data/hlo say how each was captured.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

import kit.hlo
from kit.hlo import fingerprints
from kit.install.envs import find_interpreter
from repro import hlo, hlo_text
from repro.hlo_text import parse_module, read_module

TESTS = Path(__file__).parent
ROOT = TESTS.parent

# file → (its name, partitions, whether the header names them, {instruction: (opcode or target's kind, source line,
# how the line is given: "inline", "frame" or "none", inline operand shapes)})
ERAS = {
    "fixtures/hlo/jax-0.4.13-slogdet-batch-sharded-4dev.txt": ("jit_mean_slogdet", 4, False, {
        "custom-call.1": ("lu", 59, "inline", ("s32[]", "s32[]", "s32[]", "f32[4096,32,32]{1,2,0}")),
        "all-reduce": ("all-reduce", None, "none", ("f32[4096,32,32]{2,1,0}",))}),
    "data/hlo/jax-0.6.0-train_slogdet.after_optimizations.txt": ("jit_loss_det", 4, True, {
        "custom-call.8": ("lu", 39, "inline", ()), "custom-call.9": ("triangular_solve", 39, "inline", ()),
        "all-reduce.4": ("all-reduce", 30, "inline", ())}),
    "data/hlo/jax-0.12.0.1-train_slogdet.after_optimizations.txt": ("jit_loss_det", 4, True, {
        "custom-call": ("lu", 39, "frame", ()), "custom-call.1": ("triangular_solve", 39, "frame", ()),
        "all-reduce.6": ("all-reduce", 30, "frame", ())}),
    "data/hlo/jax-0.12.0.1-tpu-train_slogdet.after_optimizations.txt": ("jit_loss_det", 4, True, {
        "lu.20": ("lu", 39, "frame", ()), "custom-call.18": ("triangular_solve", 39, "frame", ()),
        "custom-call.17": ("triangular_solve", 39, "frame", ()), "all-gather.5": ("all-gather", 38, "frame", ())}),
    "data/hlo/jax-0.12.0.1-gpu-train_slogdet.after_optimizations.txt": ("jit_loss_det", 4, True, {
        "custom-call": ("lu", 39, "frame", ()), "triangular-solve": ("triangular_solve", 39, "frame", ()),
        "custom-call.1": ("lu_pivots_to_permutation", 39, "frame", ()),
        "all-reduce.10": ("all-reduce", 30, "frame", ())}),
    "data/hlo/jax-0.5.3-tpu-qr_eigh_svd.after_optimizations.txt": ("jit_loss", 4, True, {
        "custom-call.88": ("qr", None, "none", ()), "custom-call.90": ("eigh", None, "none", ()),
        "custom-call.91": ("eigh", None, "none", ()), "all-reduce.1": ("all-reduce", 8, "inline", ())}),
}


def _what(instruction: hlo_text.Instruction) -> str:
    return hlo_text.linalg_kind(instruction.target) if instruction.target else instruction.opcode


@pytest.mark.parametrize("name", sorted(ERAS))
def test_every_era_and_compiler_reads_its_partitions_sources_and_ops(name: str) -> None:
    module_name, partitions, in_header, expected = ERAS[name]
    path = TESTS / name
    module = read_module(path)
    assert (module.name, module.partitions, module.cut) == (module_name, partitions, "")
    assert ("num_partitions=" in path.read_text(encoding="utf-8").splitlines()[0]) == in_header
    found = {i.name: i for _, i in module.instructions()}
    for instruction_name, (what, line, how, inline) in expected.items():
        instruction = found[instruction_name]
        given = "none" if instruction.source is None else "frame" if instruction.frame_id is not None else "inline"
        assert (_what(instruction), instruction.source and instruction.source[1], given,
                instruction.operand_shapes) == (what, line, how, inline), instruction_name
    # The compiled text of a program, as the repro reads it, is the same module as the dump file.
    assert hlo_text.read_text(path.read_text(encoding="utf-8")) == module


def test_collectives_give_their_kind_bytes_dimensions_and_operand_sizes() -> None:
    # The TPU's gather of the batch before the LU (0.12.0.1, v5e 2x2): each chip's 256 of 1024 8x8 matrices in.
    module = read_module(TESTS / "data/hlo/jax-0.12.0.1-tpu-train_slogdet.after_optimizations.txt")
    found = {i.name: i for _, i in module.instructions()}
    gather = found["all-gather.5"]
    assert (hlo_text.collective_kind(gather.opcode), gather.bytes, gather.dimensions) == ("all-gather", 1024 * 256, (0,))
    (operand,) = gather.operands
    assert found[operand].arrays == (hlo_text.Array("f32", (256, 8, 8)),)
    # An async pair is one collective: the -start is it, the -done is nothing.
    assert [hlo_text.collective_kind(op) for op in ("all-gather-start", "all-gather-done", "add")] == ["all-gather", "", ""]
    # 0.4.13 prints the operand's shape inline: the padded batch summed over the devices.
    old = read_module(TESTS / "fixtures/hlo/jax-0.4.13-slogdet-batch-sharded-4dev.txt")
    reduce = next(i for _, i in old.instructions() if i.opcode == "all-reduce")
    assert [a.dims for a in hlo_text.arrays_of(reduce.operand_shapes[0])] == [(4096, 32, 32)]


def test_a_combined_all_reduce_delivers_every_operand_and_its_elements_lead_back_to_it() -> None:
    # jax 0.12.0.1, 4 host devices (tests/data/hlo/two_sums.py): the sums of x (line 5) and y (line 6) over the
    # sharded batch are combined into one `(f32[8,8], f32[32]) all-reduce(a, b)`; its users name `%all-reduce.2#0`.
    text = (TESTS / "data/hlo/jax-0.12.0.1-two_sums.after_optimizations.txt").read_text()
    found = {i.name: i for _, i in hlo_text.read_text(text).instructions()}
    combined = found["all-reduce.2"]
    assert len(combined.operands) == 2
    assert [a.dims for a in hlo_text.delivered(combined)] == [(8, 8), (32,)]  # both, not the one largest
    assert found["multiply_copy_fusion"].operands == ("all-reduce.2",)
    assert found["broadcast_multiply_fusion"].operands == ("all-reduce.2",)
    # So the cholesky of x's sum is fed by the all-reduce (it read as fed by nothing when the #0 hid it).
    (call,) = hlo.read_evidence(text).linalg_calls
    assert (call.kind, call.fed_by) == ("cholesky", ("all-reduce",))
    # An async start's shape is (operands, results, contexts): its results are what it delivers.
    start = hlo_text.parse_instruction(
        "  %ags = ((f32[4]{0}, f32[8]{0}), (f32[16]{0}, f32[32]{0})) all-gather-start(%a, %b), dimensions={0}")[0]
    assert start is not None and [a.dims for a in hlo_text.delivered(start)] == [(16,), (32,)]
    older = hlo_text.parse_instruction("  %ags = (f32[4]{0}, f32[16]{0}) all-gather-start(f32[4]{0} %a#0)")[0]
    assert older is not None and older.operands == ("a",) and older.operand_shapes == ("f32[4]{0}",)


# Every custom call target the fixtures hold, and what the reader takes it for ("": not linear algebra).
TARGETS = {
    "lapack_sgetrf": "lu", "lapack_sgetrf_ffi": "lu", "lapack_strsm_ffi": "triangular_solve",
    "lapack_spotrf_ffi": "cholesky", "cusolver_getrf_ffi": "lu", "__cublas$triangularSolve": "triangular_solve",
    "cu_lu_pivots_to_permutation": "lu_pivots_to_permutation", "LuDecomposition": "lu", "LuDecompositionBlock": "lu",
    "LuRealDecompositionBlock": "lu", "InvertDiagBlocksLowerTriangular": "triangular_solve",
    "InvertDiagBlocksUpperTriangular": "triangular_solve", "Cholesky": "cholesky", "Qr": "qr",
    "QrDecompositionBlock": "qr", "ProductOfElementaryHouseholderReflectors": "householder_product", "Eigh": "eigh",
    "EighTpu": "eigh", "CompactWyHelper": "", "AllocateBuffer": "", "AsyncCollectiveStart": "",
    "AsyncCollectiveDone": "", "ConcatBitcast": "", "GatherScatterIndicesBitpacked": "", "Sharding": "",
    "cusolver_geqrf_ffi": "qr", "cusolver_orgqr_ffi": "householder_product", "cusolver_syevd_ffi": "eigh",
    "__cublas$gemm": "", "lapack_sgeqrf_ffi": "qr", "lapack_sorgqr_ffi": "householder_product",
    "lapack_sgesdd_ffi": "svd",
}


def test_every_custom_call_target_in_the_fixtures_is_named_for_what_it_computes() -> None:
    held = {i.target for path in sorted(TESTS.glob("*/hlo/**/*.txt")) for _, i in read_module(path).instructions()
            if i.opcode == "custom-call"}
    assert held == set(TARGETS)  # a new fixture's new target is placed here
    assert {target: hlo_text.linalg_kind(target) for target in held} == TARGETS
    # Names the fixtures lack, from the other LAPACK / cuSOLVER / libtpu routines.
    assert [hlo_text.linalg_kind(t) for t in ("cusolver_syevd_ffi", "Svd", "hipsolver_potrf",
                                              "SomeWeighting", "")] == ["eigh", "svd", "cholesky", "", ""]


def test_the_scaling_repro_and_the_kit_read_through_the_one_reader() -> None:
    assert kit.hlo.read_module is hlo_text.read_module and kit.hlo.parse_module is hlo_text.parse_module
    # Nothing else in kit/ or repro/ reads HLO's syntax itself.
    syntax = ("custom_call_target", "source_line=", "stack_frame_id", "num_partitions", "HloModule")
    readers = sorted(str(path.relative_to(ROOT)) for folder in ("kit", "repro") for path in (ROOT / folder).rglob("*.py")
                     if any(word in path.read_text(encoding="utf-8") for word in syntax))
    assert readers == ["repro/hlo_text.py"]
    # And the two read one compile alike: the TPU's LU on the gathered batch, 1024 on every chip.
    after = TESTS / "data/hlo/jax-0.12.0.1-tpu-train_slogdet.after_optimizations.txt"
    before = TESTS / "data/hlo/jax-0.12.0.1-tpu-train_slogdet.before_optimizations.txt"
    evidence = hlo.read_evidence(after.read_text(encoding="utf-8"))
    lu = next(f for f in fingerprints(read_module(after), read_module(before)) if f.op == "lu")
    assert evidence.lu_batch == lu.device_batch == 1024
    assert evidence.lu_calls[0].target == lu.targets[0] == "LuRealDecompositionBlock"


OLDEST = find_interpreter("3.9")


@pytest.mark.skipif(OLDEST is None, reason="no Python 3.9 here")
def test_the_oldest_python_a_release_runs_reads_it_alike() -> None:
    # jax 0.4.13's environments run Python 3.9: the reader runs inside them (stdlib only, 3.9's syntax).
    fixture = TESTS / "fixtures/hlo/jax-0.4.13-slogdet-batch-sharded-4dev.txt"
    code = ("import sys; from repro import hlo, scaling_figures; "
            "print(scaling_figures.structure_record(hlo.read_evidence(open(sys.argv[1]).read())))")
    done = subprocess.run([str(OLDEST), "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); {code}",
                           str(fixture)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    from repro import scaling_figures

    assert done.stdout.strip() == str(scaling_figures.structure_record(hlo.read_evidence(fixture.read_text())))


# Moved from tests/test_hlo.py with the reader they test (kit/hlo/text.py, now repro/hlo_text.py).

_SPMD = """HloModule jit_f, num_partitions=2

ENTRY main_spmd {
  param = f32[4,8,8]{2,1,0} parameter(0), sharding={devices=[2,1,1]<=[2]}, metadata={op_name="x"}
  all-gather = f32[8,8,8]{2,1,0} all-gather(param), channel_id=1, replica_groups=[1,2]<=[2], dimensions={0}, metadata={op_name="x"}
  ROOT potrf = (f32[8,8,8]{2,1,0}, s32[8]{0}) custom-call(all-gather), custom_call_target="lapack_spotrf_ffi", metadata={op_name="jit(f)/cholesky" source_file="/u/p.py" source_line=7}
}
"""


def test_an_overlong_line_is_read_only_in_part_and_the_instructions_after_it_still_count() -> None:
    huge = "  c = f32[4]{0} constant({" + "1, " * 400_000 + "1})\n"
    module_text = _SPMD.replace("ENTRY main_spmd {\n", "ENTRY main_spmd {\n" + huge)
    module = hlo_text.parse_module(hlo_text._bounded_lines(io.StringIO(module_text)))
    assert module.entry is not None
    assert {"c", "param", "all-gather", "potrf"} <= set(module.entry.instructions)


def test_instructions_past_the_limit_are_dropped_and_the_module_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hlo_text, "INSTRUCTION_LIMIT", 2)
    module = parse_module(_SPMD.splitlines())
    assert module.entry is not None
    assert len(module.entry.instructions) == 2
    assert "first 2" in module.cut


def test_older_operand_syntax_and_closing_comments_parse() -> None:
    module = parse_module(["HloModule m", "c {", "  a = f32[2]{0} parameter(0)",
                           "  ROOT b = f32[2]{0} add(f32[2]{0} a, f32[2]{0} a)", "} // c"])
    assert module.computations["c"].instructions["b"].operands == ("a", "a")
    assert module.computations["c"].root == "b"


def test_partitions_come_from_the_module_where_its_header_names_none() -> None:
    # jax 0.4.13 writes no num_partitions= in the header: its sharding and replica groups say 4 (issue 49).
    fixtures = Path(__file__).parent / "fixtures" / "hlo"
    assert read_module(fixtures / "jax-0.4.13-slogdet-batch-sharded-4dev.txt").partitions == 4
    assert read_module(fixtures / "jax-0.4.13-slogdet-1dev.txt").partitions == 1

    def partitions(body: str) -> int:
        return parse_module(["HloModule m, entry_computation_layout={()->f32[]}", "", "ENTRY %main () -> f32[] {",
                             body, "}"]).partitions

    assert partitions('  ROOT %a = f32[8] all-reduce(f32[8] %p), replica_groups=[1,4]<=[4], to_apply=%add') == 4
    assert partitions('  ROOT %a = f32[8] all-reduce(f32[8] %p), replica_groups={{0,1},{2,3}}, to_apply=%add') == 4
    assert partitions('  ROOT %p = f32[8,4] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}') == 8
    assert partitions('  ROOT %p = f32[8] parameter(0)') == 1
    # A header that names them is believed.
    assert parse_module(["HloModule m, num_partitions=2", "ENTRY %main () -> f32[] {",
                         '  ROOT %a = f32[8] all-reduce(f32[8] %p), replica_groups={{0,1,2,3}}', "}"]).partitions == 2
