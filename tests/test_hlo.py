"""kit.hlo: HLO text from real releases' dumps → each linalg op and collective, split or whole."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kit.hlo import fingerprints, parse_module, read_module
from kit.hlo import text as hlo_text

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
    assert states[("train_mixed.py:28", "dot_general", "all-reduce", "forward")] == "expected"


def test_stack_frame_tables_of_newer_releases_give_the_source_line() -> None:
    states = _states("0.12.0.1", "train_mixed")
    assert states[("train_mixed.py:40", "slogdet", "lu", "forward")] == "split"
    assert states[("train_mixed.py:42", "cholesky", "triangular_solve", "backward")] == "split"
    # One all-reduce of a tuple of every gradient, SPMD-generated: still expected.
    assert [s for k, s in states.items() if k[2] == "all-reduce"] == ["expected"]


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
