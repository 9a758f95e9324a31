"""Issue 58's held-out trial t9 (`lowrank_sgd.py`, here): on jax 0.4.35, CPU, 4 host devices, as XLA's dump wrote the
program's own run (tests/data/hlo/lowrank_sgd-cpu-0.4.35/, README.md there).

* ``step``'s gradient of the replicated ``w`` is summed over the devices by an all-reduce named
  ``jit(main)/dot_general``: 0.4.35 marks no pass outside a named jit, and the sum was said "forward" where 0.12.0's
  ``transpose(jvp(vmap()))/dot_general`` says "backward" for the same sum (two rows for one op).
* ``compress`` takes ``step``'s output f32[256,8,4] replicated (step's solves gathered it), so each device runs all
  256 SVDs: "replicated" in its module alone, "whole" for the program (0.5.3's word for the same work), and the
  console's list of ops that hold the whole batch left it out.
"""

from __future__ import annotations

from pathlib import Path

from kit.hlo import Fingerprint, FingerprintState, extents, fingerprints, read_module, whole_where_the_program_shards

DATA = Path(__file__).parent / "data" / "hlo" / "lowrank_sgd-cpu-0.4.35"
MODULES = ("module_0029.jit_step", "module_0033.jit__lambda_")


def _read(name: str) -> tuple[tuple[set[int], set[int]], list[Fingerprint]]:
    lines = (DATA / "lowrank_sgd.py").read_text(encoding="utf-8").splitlines()
    after = read_module(DATA / f"{name}.cpu_after_optimizations.txt")
    before = read_module(DATA / f"{name}.before_optimizations.txt")
    prints = fingerprints(after, before, read_line=lambda file, n: lines[n - 1] if file.endswith(
        "/lowrank_sgd.py") and 0 < n <= len(lines) else None)
    return extents(after, before), prints


def test_a_replicated_parameters_gradient_sum_is_the_backward_pass_where_the_names_mark_none() -> None:
    _, prints = _read(MODULES[0])
    sums = [(f.location, f.op, f.pass_, f.state) for f in prints if f.op == "all-reduce"]
    assert sums == [("lowrank_sgd.py:17", "all-reduce", "backward", FingerprintState.EXPECTED)]
    assert all(f.op_path == "dot_general" for f in prints if f.op == "all-reduce")  # no pass in its name: the trap


def test_an_op_whose_module_took_the_programs_batch_gathered_holds_it_whole() -> None:
    read = [_read(name) for name in MODULES]
    svd = [f for f in read[1][1] if f.op == "svd"]
    assert [f.state for f in svd] == [FingerprintState.REPLICATED]  # its module alone: the trap is real
    whole_where_the_program_shards(read)
    assert [(f.location, f.state) for f in svd] == [("lowrank_sgd.py:28", FingerprintState.WHOLE)]
    # step's own states are its module's
    assert {f.op: f.state for f in read[0][1] if f.pass_ == "forward" and f.op == "triangular_solve"} == {
        "triangular_solve": FingerprintState.GATHERED}


def test_a_program_that_splits_nothing_keeps_its_replicated_ops() -> None:
    (_, held), prints = _read(MODULES[1])
    whole_where_the_program_shards([((set(), held), prints)])
    assert [f.state for f in prints if f.op == "svd"] == [FingerprintState.REPLICATED]
