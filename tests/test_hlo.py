"""kit.hlo: HLO text from real releases' dumps → each linalg op and collective, split or whole."""

from __future__ import annotations

from pathlib import Path

from kit.hlo import fingerprints, parse_module, read_module

DATA = Path(__file__).parent / "data" / "hlo"


def _states(release: str, program: str) -> dict[tuple[str, ...], str]:
    after = read_module(DATA / f"jax-{release}-{program}.after_optimizations.txt")
    before = read_module(DATA / f"jax-{release}-{program}.before_optimizations.txt")
    return {f.key: f.state for f in fingerprints(after, before)}


def test_on_0_4_35_the_slogdet_lu_is_fed_by_an_all_gather_and_the_backward_solves_hold_the_whole_batch() -> None:
    after = read_module(DATA / "jax-0.4.35-train_slogdet.after_optimizations.txt")
    before = read_module(DATA / "jax-0.4.35-train_slogdet.before_optimizations.txt")
    found = {f.key: f for f in fingerprints(after, before)}
    lu = found[("train_slogdet.py:39", "slogdet", "lu", "forward")]
    assert (lu.state, lu.global_batch, lu.device_batch, lu.fed_by) == ("gathered", 1024, 1024, ["all-gather"])
    assert lu.bytes_per_device == 1024 * 8 * 8 * 4
    assert lu.targets == ["lapack_sgetrf_ffi"]
    solve = found[("train_slogdet.py:39", "slogdet", "triangular_solve", "backward")]
    assert (solve.state, solve.global_batch, solve.device_batch) == ("whole", 1024, 1024)


def test_on_0_6_0_every_linalg_op_of_both_programs_is_split() -> None:
    for program in ("train_slogdet", "train_mixed"):
        linalg = {key: state for key, state in _states("0.6.0", program).items() if "all-" not in key[2]}
        assert linalg and set(linalg.values()) == {"split"}, (program, linalg)


def test_the_mixed_program_names_its_slogdet_and_its_cholesky_lines_and_the_gradient_sum_is_expected() -> None:
    states = _states("0.4.35", "train_mixed")
    assert states[("train_mixed.py:40", "slogdet", "lu", "forward")] == "gathered"
    assert states[("train_mixed.py:42", "cholesky", "cholesky", "forward")] == "gathered"
    assert states[("train_mixed.py:42", "cholesky", "triangular_solve", "backward")] == "whole"
    # W's gradient sum: backward, as 0.12.0.1's `transpose(jvp())/dot_general` says (0.4.35 names no pass there)
    assert states[("train_mixed.py:28", "dot_general", "all-reduce", "backward")] == "expected"


def test_stack_frame_tables_of_newer_releases_give_the_source_line() -> None:
    states = _states("0.12.0.1", "train_mixed")
    assert states[("train_mixed.py:40", "slogdet", "lu", "forward")] == "split"
    assert states[("train_mixed.py:42", "cholesky", "triangular_solve", "backward")] == "split"
    # One all-reduce of a tuple of every gradient, SPMD-generated: still expected.
    assert [s for k, s in states.items() if k[2] == "all-reduce"] == ["expected"]


def test_a_combined_all_reduce_counts_the_bytes_of_every_operand_on_0_12() -> None:
    # XLA 0.12 sums the six gradients in one `(f32[64,32], f32[64], f32[64,64], ...) all-reduce`: 41,728 bytes a
    # device, where its largest array alone is 16,384.
    states = {f.key: f for f in fingerprints(read_module(DATA / "jax-0.12.0.1-train_mixed.after_optimizations.txt"),
                                             read_module(DATA / "jax-0.12.0.1-train_mixed.before_optimizations.txt"))}
    (gradients,) = [f for key, f in states.items() if key[2] == "all-reduce"]
    assert (gradients.count, gradients.bytes_per_device) == (1, (64 * 32 + 64 * 64 * 2 + 64 * 3) * 4)
    # tests/data/hlo/two_sums.py: the sums of x and y in one all-reduce; the cholesky of x's sum is fed by it.
    found = {f.key: f for f in fingerprints(read_module(DATA / "jax-0.12.0.1-two_sums.after_optimizations.txt"),
                                            read_module(DATA / "jax-0.12.0.1-two_sums.before_optimizations.txt"))}
    assert found[("two_sums.py:5", "reduce_sum", "all-reduce", "forward")].bytes_per_device == (8 * 8 + 32) * 4
    cholesky = found[("two_sums.py:7", "cholesky", "cholesky", "forward")]
    assert (cholesky.state, cholesky.fed_by) == ("gathered", ["all-reduce"])


_SPMD = """HloModule jit_f, num_partitions=2

ENTRY main_spmd {
  param = f32[4,8,8]{2,1,0} parameter(0), sharding={devices=[2,1,1]<=[2]}, metadata={op_name="x"}
  all-gather = f32[8,8,8]{2,1,0} all-gather(param), channel_id=1, replica_groups=[1,2]<=[2], dimensions={0}, metadata={op_name="x"}
  ROOT potrf = (f32[8,8,8]{2,1,0}, s32[8]{0}) custom-call(all-gather), custom_call_target="lapack_spotrf_ffi", metadata={op_name="jit(f)/cholesky" source_file="/u/p.py" source_line=7}
}
"""

_SPMD_BEFORE = """HloModule jit_f, num_partitions=2

ENTRY main {
  Arg_0 = f32[8,8,8]{2,1,0} parameter(0), sharding={devices=[2,1,1]<=[2]}, metadata={op_name="x"}
  ROOT potrf = (f32[8,8,8]{2,1,0}, s32[8]{0}) custom-call(Arg_0), custom_call_target="lapack_spotrf_ffi", metadata={op_name="jit(f)/cholesky" source_file="/u/p.py" source_line=7}
}
"""


def test_a_collective_the_partitioner_inserted_is_attributed_through_its_consumer() -> None:
    found = {f.key: f for f in fingerprints(parse_module(_SPMD.splitlines()), parse_module(_SPMD_BEFORE.splitlines()))}
    gather = found[("p.py:7", "cholesky", "all-gather", "forward")]
    assert (gather.state, gather.bytes_per_device, gather.dims) == ("communication", 8 * 8 * 8 * 4, [0])
    assert found[("p.py:7", "cholesky", "cholesky", "forward")].state == "gathered"


def test_a_tpu_linalg_call_without_metadata_is_named_by_its_twin_before_optimizations() -> None:
    # jax 0.5.3 for TPU v5e 2x2 (libtpu 0.0.11 drops the linalg custom calls' metadata), tests/data/hlo/qr_eigh_svd.py:
    # qr on line 5, eigh on 6, svd on 7 of 512 16x16 matrices sharded 4 ways. XLA fuses the sort after eigh's EighTpu
    # with svd's into one fusion of line 7: named through its users, line 6's eigh went under line 7. Its operands
    # come from line 6, where the module before optimizations has an Eigh.
    found = {(f.location, f.function, f.op): f for f in fingerprints(
        read_module(DATA / "jax-0.5.3-tpu-qr_eigh_svd.after_optimizations.txt"),
        read_module(DATA / "jax-0.5.3-tpu-qr_eigh_svd.before_optimizations.txt"))}
    eigh = found[("qr_eigh_svd.py:6", "eigh", "eigh")]
    # Fed by the all-gathers libtpu runs inside a fusion (four chains of f32[128,8,8] -> f32[512,8,8]), as svd's is.
    assert (eigh.state, eigh.count, eigh.device_batch, eigh.global_batch) == ("gathered", 1, 512, 512)
    assert eigh.bytes_per_device == 4 * 512 * 8 * 8 * 4
    in_svd = found[("qr_eigh_svd.py:7", "svd", "eigh")]
    assert (in_svd.state, in_svd.count, in_svd.fed_by) == ("gathered", 1, ["all-gather"])
    # The QR takes its twin's primitive (geqrf), so its custom call and what surrounds it are one op, split.
    qr = found[("qr_eigh_svd.py:5", "qr", "geqrf")]
    assert (qr.state, qr.count, qr.device_batch, qr.global_batch, qr.targets) == (
        "split", 1, 128, 512, ["QrDecompositionBlock"])
    assert not any(op in ("qr", "eigh_jacobi") or op.startswith(("Qr", "Eigh")) for _, _, op in found)


def test_a_call_named_for_its_primitive_and_then_its_own_name_is_that_primitive() -> None:
    # libtpu 0.0.42 (jax 0.10.2, tpu:v5e:2x2) names geqrf's QrDecompositionBlock "jvp(jit(qr))/geqrf/custom-call.2":
    # read from its target it was a second op, "qr", that no op before optimizations matched: a "replicated" row
    # beside the split geqrf (held-out trial t3's sensor_calib.py:17).
    from repro.hlo_text import Instruction

    from kit.hlo.instructions import primitive

    def call(op_name: str) -> Instruction:
        return Instruction("custom-call.104", "custom-call", "f32[128,32,8]", ("copy.663",), op_name=op_name,
                           target="QrDecompositionBlock")

    assert primitive(call("jit(fit)/jvp(jit(qr))/geqrf/custom-call.2")) == "geqrf"
    assert primitive(call("jit(fit)/jvp(jit(qr))/geqrf")) == "geqrf"
    assert primitive(call("jit(fit)/jvp(jit(qr))/custom-call.2")) == "qr"  # nothing names it: what it computes


def test_an_op_fed_the_whole_batch_by_an_all_gather_is_gathered_though_no_parameter_looks_sharded() -> None:
    # kernel_ridge.py (tests/data/hlo/README.md) as the kit's explain compiled it for tpu:v5e:2x2 on jax 0.12.0.1:
    # the export's arguments come in replicated and a `Sharding` call splits them inside, so no entry parameter
    # looks sharded; inv's LuRealDecompositionBlock takes %all-gather.5, f32[128,10,10], the whole batch, and was
    # said "replicated": the answer read "every op is split on 0.12.0.1".
    folder = DATA / "kernel_ridge-tpu-v5e-2x2-0.12.0.1"
    found = {f.op: f for f in fingerprints(read_module(folder / "leverage.after.hlo.txt"),
                                           read_module(folder / "leverage.before.hlo.txt"))}
    assert (found["lu"].state, found["lu"].device_batch, found["lu"].global_batch) == ("gathered", 128, 128)
    assert found["triangular_solve"].state == "split"


def test_a_lines_sentence_is_named_for_its_linalg_op_not_the_gather_before_it() -> None:
    from pathlib import Path as _Path

    from kit.explain.answer import flagged_lines
    from kit.explain.capture import Capture

    folder = DATA / "kernel_ridge-tpu-v5e-2x2-0.12.0.1"
    prints = fingerprints(read_module(folder / "leverage.after.hlo.txt"), read_module(folder / "leverage.before.hlo.txt"))
    line = next(line for line in flagged_lines(Capture("0.12.0.1", {}, prints), _Path("/nonexistent")))
    assert line.call != "add", line.call
