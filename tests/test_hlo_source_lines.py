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
from kit.hlo.source_lines import UNTOLD, SourceLines, backward_call, located
from repro.hlo_text import Module

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


# tests/data/hlo/portfolio_risk-tpu-v5e-2x2/: issue 58's held-out trial program `portfolio_risk.py` (here), its
# `nll` and `spectrum` value_and_grad compiled by hand for tpu:v5e:2x2 with jax 0.8.0 (libtpu 0.0.24), 0.8.3 (libtpu
# 0.0.32.1) and 0.10.2 (libtpu 0.0.42.1) on 2026-12-06; `backend_config` dropped and paths made /home/user/.
PORTFOLIO = Path(__file__).parent / "data" / "hlo" / "portfolio_risk-tpu-v5e-2x2"
# 0.8.3-dump/: the same two modules as the kit's own `explain --target tpu:v5e:2x2 --releases 0.8.3` dumped them
# (XLA's dump: the module before optimizations with its metadata, which a hand `as_text()` leaves out).
DUMPED = "0.8.3-dump"


def _program_line(file: str, number: int) -> str | None:
    """The trial program's line, wherever the module says the program was."""
    if not file.endswith("/portfolio_risk.py"):
        return None
    return (PORTFOLIO / "portfolio_risk.py").read_text(encoding="utf-8").splitlines()[number - 1]


def _portfolio(release: str, name: str) -> dict[tuple[str | None, str, str, str], str]:
    after = read_module(PORTFOLIO / release / f"{name}.after.hlo.txt")
    before = read_module(PORTFOLIO / release / f"{name}.before.hlo.txt")
    return {(f.location, f.function, f.op, f.pass_): f.state
            for f in fingerprints(after, before, read_line=_program_line) if f.op in LINALG_OPS}


LINALG_OPS = ("cholesky", "lu", "eigh", "triangular_solve")


@pytest.mark.parametrize("name, wrong, true", [
    ("spectrum", {"portfolio_risk.py:22"}, {"portfolio_risk.py:40"}),
    ("nll", {"portfolio_risk.py:22", "portfolio_risk.py:27"},
     {"portfolio_risk.py:15", "portfolio_risk.py:16", "portfolio_risk.py:28"})])
def test_on_0_8_3_for_tpu_a_line_the_frames_misplace_is_said_unknown_never_wrong(name: str, wrong: set[str],
                                                                                  true: set[str]) -> None:
    # libtpu 0.0.32.1 writes stack-frame ids that point at wrong rows of the module's own tables: eigh's ops
    # resolve to line 22 (which calls none of them; the truth is 40), slogdet's to 27 (truth 28). Walked as
    # written, the answer named "portfolio_risk.py:22 eigh" (the held-out trial's 12 wrong statements). A line
    # that names none of the op's functions is doubted only on evidence (a wrapper such as cho_factor calls
    # cholesky by another name): here the module before optimizations has its Eigh at :40, and nll's tables
    # are shown wrong on two lines. Where the module before places the op path on one line that calls what it
    # names, that line is told (its nested jits' op names read in full: `jit(_cholesky)` within `jit(cholesky)`).
    after = read_module(PORTFOLIO / DUMPED / f"{name}.after.hlo.txt")
    before = read_module(PORTFOLIO / DUMPED / f"{name}.before.hlo.txt")
    as_written = {f.location for f in fingerprints(after, before) if f.op in LINALG_OPS}
    assert wrong <= as_written  # the tables alone (the program unread) still say the wrong lines: the trap is real
    found = _portfolio(DUMPED, name)
    assert found and not wrong & {location for location, *_ in found}
    assert {location for location, *_ in found} <= {UNTOLD, None} | true
    assert ("portfolio_risk.py:40", "eigh", "eigh", "forward") in found or name != "spectrum"


def test_on_0_8_3_a_sum_the_wrong_tables_place_is_not_told_either() -> None:
    # The tables that put slogdet and cholesky on lines calling neither also placed the loss's all-reduce
    # (`jvp()/reduce_sum`, which names no function to check) on cholesky's line 15 (held-out trial t3, minor).
    after = read_module(PORTFOLIO / DUMPED / "nll.after.hlo.txt")
    before = read_module(PORTFOLIO / DUMPED / "nll.before.hlo.txt")
    # The compiled module's frames alone (the module before not read) say :15; the module before has that path on
    # the loss's line :29 alone (the truth), so that line is told (t9's fix), never :15.
    as_written = {(f.location, f.op) for f in fingerprints(after)}
    assert ("portfolio_risk.py:15", "all-reduce") in as_written
    told = {(f.location, f.op) for f in fingerprints(after, before, read_line=_program_line)}
    assert ("portfolio_risk.py:15", "all-reduce") not in told and ("portfolio_risk.py:29", "all-reduce") in told
    # spectrum's tables are wrong on eigh's line alone: its loss's sum stays on :41, where it is.
    after = read_module(PORTFOLIO / DUMPED / "spectrum.after.hlo.txt")
    before = read_module(PORTFOLIO / DUMPED / "spectrum.before.hlo.txt")
    told = {(f.location, f.op) for f in fingerprints(after, before, read_line=_program_line)}
    assert ("portfolio_risk.py:41", "all-reduce") in told


def test_a_wrappers_line_that_names_the_op_otherwise_is_kept() -> None:
    # t5's thermal_implicit.py:30, `c_low = cho_factor(cond + 0.1 * jnp.eye(NODES), lower=True)`: the Cholesky's
    # path is `jit(_cholesky)/cholesky`, a word the line does not hold; no other op's function is on it and the
    # module before optimizations has the Cholesky there too. It was "(line cannot be told)" on every release.
    from repro.hlo_text import read_text

    def module(line: int) -> Module:
        return read_text("\n".join([
            "HloModule jit_steady, num_partitions=4", "", "ENTRY %main {",
            '  %p = f32[128,8,8]{2,1,0} parameter(0)',
            '  ROOT %c = f32[128,8,8]{2,1,0} custom-call(%p), custom_call_target="lapack_spotrf_ffi", '
            f'metadata={{op_name="jit(steady)/jit(_cholesky)/cholesky" source_file="/home/user/t.py" source_line={line}}}',
            "}"]))

    program = {30: "    c_low = cho_factor(cond + 0.1 * jnp.eye(NODES), lower=True)",
               31: "    x = cho_solve(c_low, rhs)", 40: "    w = jnp.linalg.eigh(a)"}
    lines = SourceLines(module(30), module(30), lambda f: Path(f).name, lambda _f, n: program.get(n))
    assert located(lines.after.computations["main"].instructions["c"], lines.show) == "t.py:30"
    # Where the module before optimizations has it elsewhere, the compiled module's line is not told.
    lines = SourceLines(module(31), module(30), lambda f: Path(f).name, lambda _f, n: program.get(n))
    assert lines.after.computations["main"].instructions["c"].source == (UNTOLD, 0)


def test_on_0_10_2_a_sum_keeps_its_line() -> None:
    after = read_module(PORTFOLIO / "0.10.2" / "nll.after.hlo.txt")
    before = read_module(PORTFOLIO / "0.10.2" / "nll.before.hlo.txt")
    told = {(f.location, f.op) for f in fingerprints(after, before, read_line=_program_line)}
    assert UNTOLD not in {location for location, _op in told}


def test_on_0_10_2_for_tpu_every_line_checks_out_and_stays() -> None:
    assert _portfolio("0.10.2", "spectrum") == {("portfolio_risk.py:40", "eigh", "eigh", "forward"): "gathered"}
    assert _portfolio("0.10.2", "nll") == {
        ("portfolio_risk.py:15", "cholesky", "cholesky", "forward"): "split",
        ("portfolio_risk.py:15", "cholesky", "triangular_solve", "backward"): "split",
        ("portfolio_risk.py:16", "_solve_triangular", "triangular_solve", "forward"): "split",
        ("portfolio_risk.py:28", "slogdet", "lu", "forward"): "gathered",  # the async all-gather fusion feeds it
        ("portfolio_risk.py:28", "slogdet", "triangular_solve", "backward"): "split"}
    after = read_module(PORTFOLIO / "0.10.2" / "nll.after.hlo.txt")
    before = read_module(PORTFOLIO / "0.10.2" / "nll.before.hlo.txt")
    lu = next(f for f in fingerprints(after, before, read_line=_program_line) if f.op == "lu")
    assert lu.bytes_per_device == 256 * 12 * 12 * 4  # one chained all-gather of 144 KiB, counted once


def test_a_line_that_calls_another_function_is_never_an_ops_line() -> None:
    # 0.8.0 for TPU: inline lines, right for the ops that carry one; `jit(_solve_triangular)`'s forward solve
    # carries none, and the line one up (cholesky's, 15) is no evidence of it: its backward ops' line (16) is.
    found = _portfolio("0.8.0", "nll")
    assert ("portfolio_risk.py:15", "cholesky", "cholesky", "forward") in found
    assert ("portfolio_risk.py:28", "slogdet", "lu", "forward") in found
    assert ("portfolio_risk.py:16", "_solve_triangular", "triangular_solve", "forward") in found
    assert not any(location == "portfolio_risk.py:15" and function == "_solve_triangular"
                   for location, function, *_ in found)


def test_the_backward_call_of_an_op_path() -> None:
    assert backward_call("jvp(jit(_solve_triangular))/triangular_solve") == "transpose(jvp(jit(_solve_triangular)))"
    assert (backward_call("jvp()/while/body/closed_call/jit(_solve_triangular)/triangular_solve")
            == "transpose(jvp())/while/body/closed_call/jit(_solve_triangular)")
    assert backward_call("transpose(jvp(jit(inv)))/lu") == ""  # already the backward pass
    assert backward_call("jvp()/add") == ""  # names no call


def test_an_ops_line_borrowed_by_its_op_path_must_call_what_the_path_names() -> None:
    lines = SourceLines(read_module(PORTFOLIO / "0.8.0" / "nll.after.hlo.txt"), None, lambda path: path,
                        read_line=_program_line)
    program = "/home/user/project/portfolio_risk.py"
    assert lines.calls((program, 15), "jvp(jit(_solve_triangular))/triangular_solve") is False
    assert lines.calls((program, 16), "jvp(jit(_solve_triangular))/triangular_solve") is True
    assert lines.calls((program, 40), "jvp(jit(eigh))/eigh") is True
    assert lines.calls((program, 22), "jvp(jit(eigh))/eigh") is False
    assert lines.calls((program, 22), "jvp()/add") is None  # no function named: no evidence either way
    assert lines.calls(("/elsewhere/unread.py", 22), "jvp(jit(eigh))/eigh") is None


def test_an_op_whose_line_cannot_be_told_is_the_same_op_other_releases_place_and_said_by_its_own_call() -> None:
    # The held-out trial's explain across 0.7.0, 0.8.3 and 0.10.2 (after the line check above) answered "none of the
    # measured releases splits (line cannot be told) eigh, (line cannot be told) lu, (line cannot be told) lu and 3
    # more op(s)": 0.8.3's untold ops counted apart from the same ops at :28 and :40, and its console line said
    # eigh's and slogdet's work as one call, `slogdet`.
    from kit.explain.answer import flagged_lines, table
    from kit.explain.capture import Capture

    def capture(release: str) -> Capture:
        prints = []
        for name in ("nll", "spectrum"):
            folder = PORTFOLIO / (DUMPED if release == "0.8.3" else release)
            after = read_module(folder / f"{name}.after.hlo.txt")
            before = read_module(folder / f"{name}.before.hlo.txt")
            prints += fingerprints(after, before, read_line=_program_line)
        return Capture(release, {"modules": [{"name": "jit_nll", "partitions": 4}]}, prints)

    rows = {row.name: row.states for row in table([capture("0.8.3"), capture("0.10.2")]).rows}
    assert not any(name.startswith(UNTOLD + " eigh") or name.startswith(UNTOLD + " lu") for name in rows)
    assert rows["portfolio_risk.py:40 eigh"] == {"0.8.3": "whole", "0.10.2": "whole"}
    assert rows["portfolio_risk.py:28 lu"] == {"0.8.3": "whole", "0.10.2": "whole"}
    flagged = flagged_lines(capture("0.8.3"), PORTFOLIO)
    untold = [line for line in flagged if line.location == UNTOLD]
    assert sorted(line.call for line in untold) == sorted({line.call for line in untold})  # one call per line
    # the module before optimizations places them (t7's fix): each said on its own line, by its own call
    assert {("portfolio_risk.py:40", "jnp.linalg.eigh"), ("portfolio_risk.py:28", "jnp.linalg.slogdet")} <= {
        (line.location, line.call) for line in flagged}


def test_a_collective_that_names_its_op_path_and_no_line_is_placed_by_that_path() -> None:
    # libtpu 0.7.0 (t5's thermal_implicit.py): the all-gather feeding lu_factor's LU names
    # "jit(advance)/jit(lu_factor)/lu" and no line; its first user is on the fori_loop's line 25, where the
    # table put it ("thermal_implicit.py:25 | while | all-gather"), where the module places that path on :22.
    from repro.hlo_text import read_text

    def meta(path: str, line: int | None) -> str:
        return f'metadata={{op_name="{path}"' + (f' source_file="/home/user/t.py" source_line={line}}}' if line else "}")

    module = read_text("\n".join([
        "HloModule jit_advance, num_partitions=4", "", "ENTRY %main {",
        "  %p = f32[32,8,8]{2,1,0} parameter(0)",
        "  %ag = f32[128,8,8]{2,1,0} all-gather(%p), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, "
        + meta("jit(advance)/jit(lu_factor)/lu", None),
        "  %add = f32[128,8,8]{2,1,0} add(%ag, %ag), " + meta("jit(advance)/while/body/add", 25),
        '  %lu = (f32[128,8,8]{2,1,0}, s32[128,8]{1,0}) custom-call(%ag), custom_call_target="LuDecompositionBlock", '
        + meta("jit(advance)/jit(lu_factor)/lu", 22),
        "  ROOT %t = (f32[128,8,8]{2,1,0}, (f32[128,8,8]{2,1,0}, s32[128,8]{1,0})) tuple(%add, %lu)",
        "}"]))
    found = {(f.location, f.function, f.op, f.pass_) for f in fingerprints(module, None) if f.op == "all-gather"}
    assert found == {("t.py:22", "lu_factor", "all-gather", "forward")}, found


def test_jaxs_own_inner_jits_are_no_evidence_that_good_tables_are_wrong() -> None:
    # rolling's scan body on 0.10.2 for TPU (hand compile, t3): `jnp.roll` makes ops of `jit(_roll_dynamic)` and
    # `jit(remainder)`, the scan `jit(dynamic_index_in_dim)`: no word of their lines. Counted as wrong lines they
    # made the module's right tables look wrong, and the loss's sums at :22 and :48 went untold.
    after = read_module(PORTFOLIO / "0.10.2" / "rolling.after.hlo.txt")
    before = read_module(PORTFOLIO / "0.10.2" / "rolling.before.hlo.txt")
    told = {(f.location, f.op) for f in fingerprints(after, before, read_line=_program_line)}
    assert not {location for location, _op in told} & {UNTOLD}, told
    assert ("portfolio_risk.py:22", "all-reduce") in told


def test_a_line_that_calls_another_jax_linalg_function_is_not_the_ops() -> None:
    # t7's sensor_fit.py on TPU 0.7.0: svd's ops inside `norm(ord=2)` of `conditioning` carried line 19, the lstsq
    # line of another function (JAX reused a cached svd trace), and the table put them there.
    root = ('f32[64,8,8]{2,1,0} custom-call(%p), custom_call_target="Cholesky", metadata={op_name='
            '"jit(conditioning)/jit(norm)/jit(svd)/jit(_svd_tall_and_square_input)/jit(qdwh)/cholesky" '
            'source_file="/home/user/s.py" source_line=19}')
    program = {19: "        coef = jax.vmap(lambda ai, yi: jnp.linalg.lstsq(ai, yi)[0])(a, y)"}
    assert _one_op_source("jit_conditioning", "f32[64,8,8]{2,1,0}", root, program) == (UNTOLD, 0)


def test_a_line_in_pythons_own_frozen_modules_is_never_the_programs() -> None:
    # t8's stiffness_audit.py on 0.8.3 for TPU, as the kit's explain dumped it: the wrong stack-frame ids lead out
    # of the program into the kit's compile under runpy, and the LU of line 14 was said at `<frozen runpy>:88`.
    folder = Path(__file__).parent / "data" / "hlo" / "stiffness_audit-tpu-v5e-2x2-0.8.3"
    after = read_module(folder / "pivot_growth.after.hlo.txt")
    before = read_module(folder / "pivot_growth.before.hlo.txt")
    assert any(i.source and i.source[0] == "<frozen runpy>" for _, i in after.instructions())  # the trap is real
    program = (folder / "stiffness_audit.py").read_text(encoding="utf-8").splitlines()
    told = fingerprints(after, before, read_line=lambda file, n: program[n - 1] if file.endswith(
        "/stiffness_audit.py") and 0 < n <= len(program) else None)
    assert not any(f.location and "<frozen" in f.location for f in told)
    assert {f.location for f in told if f.op == "lu"} <= {UNTOLD, "stiffness_audit.py:14"}


def test_an_inline_collective_on_another_linalg_functions_line_is_not_told_there() -> None:
    # t8 on CPU 0.4.35: apply's solve gathers carried `source_line=14`, the `jax.vmap(jsl.lu)` line of another
    # function, and the table put "stiffness_audit.py:14 | solve | all-gather" there.
    root = ("f32[512,8]{1,0} all-gather(%p), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, "
            'metadata={op_name="jit(apply)/jit(main)/jit(solve)/vmap(while)/body/gather" source_file="/home/user/s.py" '
            "source_line=14}")
    program = {14: "    p, l, u = jax.vmap(jsl.lu)(k)"}
    assert _one_op_source("jit_apply", "f32[128,8]{1,0}", root, program) == (UNTOLD, 0)


def _one_op_source(jit: str, parameter: str, root: str, program: dict[int, str]) -> tuple[str, int] | None:
    """The source SourceLines leaves on the one op (``ROOT %c = root``) of a module of one parameter, the program's
    lines as ``program`` holds them."""
    from repro.hlo_text import read_text

    module = read_text("\n".join([f"HloModule {jit}, num_partitions=4", "", "ENTRY %main {",
                                  f"  %p = {parameter} parameter(0)", f"  ROOT %c = {root}", "}"]))
    lines = SourceLines(module, module, lambda f: Path(f).name, lambda _f, n: program.get(n))
    return lines.after.computations["main"].instructions["c"].source


def test_a_fifo_named_in_the_metadata_is_never_read(tmp_path: Path) -> None:
    # Reading a line to vet it must not block on a FIFO (or read a device) that a module's metadata names.
    import os

    from kit.hlo.source_lines import source_line_text

    fifo = tmp_path / "program.py"
    os.mkfifo(fifo)
    assert source_line_text(str(fifo), 1) is None
    assert source_line_text("/dev/zero", 1) is None
