"""Data-parallel sums XLA combines into one all-reduce are expected; a sum that holds the batch is not (issue 58).

tests/data/hlo/trial-t1: modules of the held-out trial of ``jax-kit explain`` (ground truth compiled by hand, not
by the kit), paths made /home/user/. Each program keeps its parameters replicated and shards its batch:

* A1-0.8.0-cholesky: gp_objectives.py on jax 0.8.0, 4 CPU devices, batch 512. XLA sums the loss, two parameter
  gradients and an f32[8,8] partial gradient in ONE tuple all-reduce ``(f32[], f32[], f32[3], f32[8,8])`` at :26;
  the kit called it "communication (276 B)" and the release "unexpected collectives".
* B-gpu-a100-4-0.7.0-lu: group_regression.py compiled for 4 A100s by jax 0.7.0, batch 1024: the sums
  concatenated into one f32[65] all-reduce-start.
* A2-0.8.0-det: spectral_windows.py on jax 0.8.0, batch 256: det's backward all-reduces the whole batch
  ``(f32[], f32[256,6,6])`` (36 KiB per device): unexpected, as the truth says.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from kit import explain
from kit.explain.capture import Capture
from kit.hlo import Fingerprint, fingerprints, read_module

DATA = Path(__file__).parent / "data" / "hlo" / "trial-t1"


def _prints(name: str, number: int = 1) -> list[Fingerprint]:
    after = read_module(DATA / f"{name}.after.txt")
    before = read_module(DATA / f"{name}.before.txt")
    return fingerprints(after, before, number=number)


def _collectives(name: str) -> dict[tuple[str | None, str], tuple[str, int]]:
    return {(f.location, f.op): (f.state, f.bytes_per_device) for f in _prints(name) if f.op.startswith("all-")}


def _release_lines(prints: list[Fingerprint]) -> list[str]:
    capture = Capture("0.8.0", {"status": "ran", "modules": [{"name": "m", "compiled": True}]}, prints)
    return explain._release_lines(capture, SimpleNamespace(cwd=DATA), 8)  # type: ignore[arg-type]


def test_a_tuple_all_reduce_of_gradient_and_loss_sums_is_expected() -> None:
    assert _collectives("A1-0.8.0-cholesky") == {("gp_objectives.py:26", "all-reduce"): ("expected", 276)}


def test_a_concatenated_all_reduce_of_the_sums_on_gpus_is_expected() -> None:
    found = _collectives("B-gpu-a100-4-0.7.0-lu")
    assert [state for state, _ in found.values()] == ["expected"]
    assert [size for _, size in found.values()] == [65 * 4]


def test_an_all_reduce_that_holds_the_batch_stays_unexpected_beside_a_parameter_sum() -> None:
    found = _collectives("A2-0.8.0-det")
    assert found[("spectral_windows.py:38", "all-reduce")] == ("communication", 4 + 256 * 6 * 6 * 4)
    assert found[("spectral_windows.py:17", "all-reduce")] == ("expected", 6 * 6 * 4)


def test_the_batch_part_of_a_combined_all_reduce_is_said_with_its_own_pass() -> None:
    # The tuple is named for its first part, the loss sum (jvp()/reduce_sum, forward); the f32[256,6,6] part is
    # det's backward (transpose(jvp(jit(det)))/scatter-add): the trial's 0.8.0 line said "forward".
    prints = [f for f in _prints("A2-0.8.0-det") if f.state == "communication"]
    assert [(f.location, f.op, f.pass_, f.function) for f in prints] == [
        ("spectral_windows.py:38", "all-reduce", "backward", "det")]


def test_a_release_whose_ops_are_all_split_says_so_beside_its_unexpected_collective() -> None:
    # The trial's 0.8.0 said only "unexpected collectives", leaving out that every linalg op was split there.
    lines = _release_lines(_prints("A2-0.8.0-det"))
    assert lines[0] == ": every linalg op split (lu, triangular_solve); unexpected collectives"
    assert lines[1] == ("  spectral_windows.py:38 `det`: all-reduce of 36 KiB per device (1x, backward)")


def test_an_op_of_a_function_compiled_twice_is_counted_once() -> None:
    # A program that rebuilds its jitted functions each epoch compiles each module twice: the same ops, said once.
    folder = DATA.parent
    after = read_module(folder / "jax-0.4.35-train_slogdet.after_optimizations.txt")
    before = read_module(folder / "jax-0.4.35-train_slogdet.before_optimizations.txt")
    twice = fingerprints(after, before, number=1) + fingerprints(after, before, number=2)
    assert _release_lines(twice)[0] == ": 2 op(s) hold the whole batch on every device"
    # each call's, not 512 KiB, and in how many modules (t5 read a call's 128 KiB as the whole program's)
    assert _release_lines(twice)[1].endswith("fed by an all-gather of 256 KiB, in each of the 2 modules compiled from it")
    assert _release_lines(fingerprints(after, before, number=1))[1].endswith("fed by an all-gather of 256 KiB")
    det = _prints("A2-0.8.0-det", 1) + _prints("A2-0.8.0-det", 2)  # and its collective said once (A2 said it twice)
    assert _release_lines(det)[1] == ("  spectral_windows.py:38 `det`: all-reduce of 36 KiB per device (1x, backward; "
                                      "the same in 2 modules)")


def test_an_op_named_by_the_kits_export_wrapper_is_never_on_the_kits_line_nor_a_neighbours() -> None:
    # B's group_regression.py run on jax 0.5.3 (4 CPU devices) with the kit's target export armed as it was before
    # the fix: jax.scipy's jit(_solve_triangular), built with the wrapped jax.jit, was called from the wrapper, and
    # JAX named its ops "target_export.py:117". The line is not in the module: said unknown, not the cholesky's :26.
    from kit.hlo.fingerprints import uncompiled

    name = "B-cpu-0.5.3-kit-export-cholesky"
    before = read_module(DATA / f"{name}.before.txt")
    for prints in (_prints(name), uncompiled(before)):
        placed = {(f.op_path.rsplit("/", 2)[0], f.pass_): f.location for f in prints if f.op == "triangular_solve"}
        assert placed == {("jvp(jit(_solve_triangular))", "forward"): None,
                          ("transpose(jvp(jit(_solve_triangular)))", "backward"): None,
                          ("transpose(jvp(jit(cholesky)))", "backward"): "group_regression.py:26"}


def test_the_expected_sums_say_each_lines_own_size_on_its_own_releases() -> None:
    # jit_nll_cholesky: 0.4.35 sums each gradient in its own all-reduce (:16 f32[3], :18 f32[] and f32[8,8]);
    # 0.8.0 sums them and the loss in one of 276 B at :26. The trial's line said ":16 (12 B per device) ... on
    # 0.4.35, 0.5.3" beside an 0.8.0 that had none at :16, and would say "on every release" of these two.
    from kit.explain.answer import expected_sentence

    old, new = (Capture(release, {"status": "ran"}, _prints(f"A1-{release}-cholesky")) for release in ("0.4.35", "0.8.0"))
    assert expected_sentence([old, new]) == (
        "expected, not flagged: the all-reduces that combine the devices' parts (sums, gradients, maxima, a loop's trip count) at gp_objectives.py:16 (12 B per "
        "device on 0.4.35; none on 0.8.0), gp_objectives.py:18 (260 B per device on 0.4.35; none on 0.8.0), "
        "gp_objectives.py:26 (none on 0.4.35; 276 B per device on 0.8.0)")
    same = Capture("0.4.36", {"status": "ran"}, old.fingerprints)
    assert expected_sentence([old, same]).endswith("gp_objectives.py:18 (260 B per device), on every release")


def test_a_backward_solve_xla_expanded_to_one_column_per_matrix_is_in_the_table() -> None:
    # jax 0.4.35 on CPU expands triangular solves into loops; of solve_triangular's backward (rhs f32[512,8,1])
    # only a dynamic-update-slice f32[512,8] keeps its op name. The trial's 0.4.35 table left it out; the truth
    # has it whole, 512 of 512 on every device, the forward solve's rhs fed by an all-gather f32[128,8,1] ->
    # f32[512,8,1] named for that solve (gathered).
    found = {(f.location, f.pass_): (f.state, f.device_batch, f.global_batch)
             for f in _prints("A1-0.4.35-cholesky") if f.op == "triangular_solve"}
    assert found == {("gp_objectives.py:23", "backward"): ("whole", 512, 512),
                     ("gp_objectives.py:24", "forward"): ("gathered", 512, 512),
                     ("gp_objectives.py:24", "backward"): ("whole", 512, 512)}


def test_cusolvers_pivots_to_permutation_is_in_the_table_whole_then_split() -> None:
    # group_regression.py:20's slogdet compiled for 4 A100s: the cu_lu_pivots_to_permutation custom call holds
    # s32[1024,8] on every GPU on 0.5.1 (whole), s32[256,8] from 0.5.3 (split); the trial's tables left it out.
    def pivots(release: str) -> tuple[str, int | None, int | None]:
        found = [(f.state, f.device_batch, f.global_batch) for f in _prints(f"B-gpu-a100-4-{release}-lu")
                 if f.op == "lu_pivots_to_permutation" and f.location == "group_regression.py:20"]
        assert len(found) == 1, found
        return found[0]

    assert pivots("0.5.1") == ("whole", 1024, 1024)
    assert pivots("0.5.3") == ("split", 256, 1024)
    assert pivots("0.7.0") == ("split", 256, 1024)


def test_a_combined_sum_the_compiler_left_without_a_line_is_said_as_such() -> None:
    # 0.7.0 for A100s: the f32[65] all-reduce-start and its users name no source line; the trial's line read
    # "sums at  (260 B per device on 0.7.0)".
    from kit.explain.answer import UNNAMED, expected_sentence

    captures = [Capture(v, {"status": "ran"}, _prints(f"B-gpu-a100-4-{v}-lu")) for v in ("0.5.3", "0.7.0")]
    assert expected_sentence(captures) == (
        f"expected, not flagged: the all-reduces that combine the devices' parts (sums, gradients, maxima, a loop's trip count) at {UNNAMED} (none on 0.5.3; 260 B "
        "per device on 0.7.0), group_regression.py:21 (260 B per device on 0.5.3; none on 0.7.0)")


def test_a_combined_all_reduce_is_named_for_its_first_part_not_split_inside_its_parentheses() -> None:
    # jax 0.12.0 names the tuple all-reduce of the loss sum and W's gradient
    # "jit(qr_penalty)/(jvp()/reduce_sum:transpose(jvp(btc,dc->btd))/dot_general)": split at "/", the trial's table
    # had a function "dot_general)" on the backward pass, a row apart from 0.8.0's reduce_sum of the same line.
    sums = [f for f in _prints("A2-0.12.0-qr") if f.op == "all-reduce"]
    assert [(f.location, f.function, f.pass_, f.op_path, f.state, f.bytes_per_device) for f in sums] == [
        ("spectral_windows.py:24", "reduce_sum", "forward", "jvp()/reduce_sum", "expected", 4 + 6 * 6 * 4)]


def test_the_batch_part_of_a_combined_all_reduce_is_named_by_its_part_where_no_tuple_element_names_it() -> None:
    # XLA's dump of jax 0.12.0 (what explain reads, not compiled.as_text()) writes the users of det's tuple
    # all-reduce as "%all-reduce.3#1": no get-tuple-element names the f32[256,6,6] part. Its name lists the parts
    # in the tuple's order, "(jvp()/reduce_sum:transpose(jvp(jit(det)))/scatter-add)": the second holds the batch.
    # Read as its first part alone, the trial's 0.12.0 line said det's backward sum was a "forward" reduce_sum.
    prints = [f for f in _prints("A2-0.12.0-det-dump") if f.state == "communication"]
    assert [(f.location, f.op, f.pass_, f.function, f.bytes_per_device) for f in prints] == [
        ("spectral_windows.py:38", "all-reduce", "backward", "det", 4 + 256 * 6 * 6 * 4)]


def test_first_combined_keeps_names_that_combine_nothing() -> None:
    from kit.hlo.op_names import combined_parts, first_combined

    assert combined_parts("jit(f)/(jvp()/reduce_sum:transpose(jvp(jit(det)))/scatter-add)") == [
        "jit(f)/jvp()/reduce_sum", "jit(f)/transpose(jvp(jit(det)))/scatter-add"]
    assert combined_parts("jit(f)/(a:b(c:d):e)") == ["jit(f)/a", "jit(f)/b(c:d)", "jit(f)/e"]

    assert first_combined("jit(f)/(jvp()/reduce_sum:transpose(jvp(jit(det)))/scatter-add)") == "jit(f)/jvp()/reduce_sum"
    for name in ("jit(f)/jvp(jit(det))/lu", "jit(f)/jit(main)", "jit(f)/(b)", "(a)/b:c", ""):
        assert first_combined(name) == name


def test_the_expected_line_names_every_release_read_those_without_the_sum_too() -> None:
    # spectral_windows.py's QR penalty: 0.4.35 factorises the whole gathered batch on every device, so its loss
    # (:24) is summed on each device and no all-reduce is there; 0.12.0 sums it with W's gradient in one tuple. The
    # trial's line said ":24 (4 B per device on 0.5.3; 148 B per device on 0.8.0, 0.12.0)": 0.4.35, a column of
    # the tables, left out.
    from kit.explain.answer import expected_sentence

    old, new = (Capture(release, {"status": "ran"}, _prints(f"A2-{release}-qr")) for release in ("0.4.35", "0.12.0"))
    assert expected_sentence([old, new]) == (
        "expected, not flagged: the all-reduces that combine the devices' parts (sums, gradients, maxima, a loop's trip count) at spectral_windows.py:17 (144 B "
        "per device on 0.4.35; none on 0.12.0), spectral_windows.py:24 (none on 0.4.35; 148 B per device on 0.12.0)")
    many = [Capture(release, {"status": "ran"}, _prints("A2-0.4.35-det")) for release in ("0.4.35", "0.4.36")]
    many[1].fingerprints.extend(_prints("A2-0.12.0-qr") + _prints("A1-0.8.0-cholesky"))  # a fourth line, first
    said = expected_sentence(many)
    assert said.endswith("spectral_windows.py:24 (none on 0.4.35; 148 B per device on 0.4.36); "
                         "and 1 more line(s) in the tables"), said


def test_an_op_xla_expanded_is_fed_by_the_all_gathers_named_for_it_each_at_its_delivered_size() -> None:
    # spectral_windows.py:38 on jax 0.4.35 (CPU): det's LU is fed by all-gather.3, its forward triangular solve by
    # all-gather.4 and its backward solves by .5, .6, .7, each f32[64,6,6] -> f32[256,6,6], 36 KiB a device (the
    # sixth, .8, feeds the backward scatter-add, no linalg op). The CPU backend expands the solves into loops, so
    # nothing of them walks up to their gathers: the trial's line said "fed by an all-gather of 36 KiB".
    prints = _prints("A2-0.4.35-det")
    fed = {(f.op, f.pass_): (f.state, sorted(f.fed.values())) for f in prints if f.location == "spectral_windows.py:38"
           and f.op in ("lu", "triangular_solve")}
    gather = 256 * 6 * 6 * 4
    assert fed == {("lu", "forward"): ("gathered", [gather]), ("triangular_solve", "forward"): ("gathered", [gather]),
                   ("triangular_solve", "backward"): ("gathered", [gather] * 3)}
    line = next(text for text in _release_lines(prints) if "spectral_windows.py:38" in text)
    assert line.endswith("every device factorises all 256 matrices (LU, forward) and solves all 256 (triangular "
                         "solves, forward and backward), fed by an all-gather of 36 KiB to the LU and 4 all-gathers "
                         "of 144 KiB in all to the triangular solves"), line


def test_an_all_gather_libtpu_split_into_a_chain_moves_its_result_once() -> None:
    # portfolio_risk.py's slogdet compiled by hand for tpu:v5e:2x2 (tests/data/hlo/README.md): libtpu writes its one
    # all-gather f32[64,12,12] -> f32[256,12,12] as 8 instructions of channel 1, chain_id "0", each printing the whole
    # result; summed, the kit said 1.1 MiB where the all-gather moves 144 KiB.
    folder = Path(__file__).parent / "data" / "hlo" / "portfolio_risk-tpu-v5e-2x2"
    for release in ("0.8.0", "0.10.2"):
        after = read_module(folder / release / "nll.after.hlo.txt")
        chained = [i for _, i in after.instructions() if i.opcode == "all-gather"]
        assert len(chained) == 8 and {i.chain for i in chained} == {"1/0"}
        gathers = [f for f in fingerprints(after, read_module(folder / release / "nll.before.hlo.txt"))
                   if f.op == "all-gather"]
        assert [(f.count, f.bytes_per_device) for f in gathers] == [(8, 256 * 12 * 12 * 4)]


def test_an_all_gather_that_reaches_two_ops_of_a_line_is_said_once_at_the_first() -> None:
    # sensor_calib.py:17 (held-out trial t3, jax 0.4.35 CPU): one all-gather of 512 KiB feeds geqrf, whose result
    # the Householder product takes; the line said "an all-gather of 512 KiB to the QR and an all-gather of
    # 512 KiB to the Householder product", two where the module has one.
    from kit.explain.answer import SourceLine, sentence
    from kit.hlo.fingerprint import FingerprintState

    def op(name: str, pass_: str, fed: dict[str, int]) -> Fingerprint:
        return Fingerprint("1", "fit.py:17", "qr", name, pass_, FingerprintState.GATHERED, "jit(fit)/qr",
                           global_batch=512, device_batch=512, fed_by=["all-gather"], fed=fed)

    gather, solve = {"1/all-gather.1": 512 * 1024}, {"1/all-gather.2": 512 * 1024, "1/all-gather.3": 512 * 1024}
    text = sentence(SourceLine("fit.py:17", "jnp.linalg.qr", (
        op("geqrf", "forward", gather), op("householder_product", "forward", gather),
        op("triangular_solve", "backward", solve))))
    assert text.count("512 KiB") == 1 and "to the Householder product" not in text, text
    assert text.endswith("fed by an all-gather of 512 KiB to the QR and 2 all-gathers of 1.0 MiB in all to the "
                         "triangular solves"), text


def test_the_console_counts_the_lines_it_leaves_out_in_the_room_each_release_has() -> None:
    # t5's thermal_implicit on CPU: its release said "(1 more line(s) in the table)" where 3 were left out, and
    # modal_tuning's :42 det was left out unsaid: the count was made with the room one release has alone, then
    # the lines were cut again to the room of each group of releases.
    from kit.explain import answer as answers
    from kit.hlo.fingerprint import FingerprintState

    def capture(release: str, first: int) -> Capture:
        prints = [Fingerprint("1", f"p.py:{line}", "det", "lu", "forward", FingerprintState.GATHERED, "jit(f)/lu",
                              global_batch=64, device_batch=64) for line in range(first, first + 6)]
        return Capture(release, {"status": "ran", "modules": [{"name": "m", "compiled": True}]}, prints)

    captures = [capture(release, 10 * n) for n, release in enumerate(("0.4.35", "0.4.36", "0.4.37"), start=1)]
    options = SimpleNamespace(cwd=DATA, backend="cpu", devices=4, target=None, processes=1, shown="p.py")
    lines = explain.short_answer(options, captures, [])  # type: ignore[arg-type]
    for release in ("0.4.35", "0.4.36", "0.4.37"):
        head = next(i for i, line in enumerate(lines) if line.startswith(release))
        shown = [line for line in lines[head + 1:] if line.startswith("  ")]
        shown = shown[:next((i for i, line in enumerate(lines[head + 1:]) if not line.startswith("  ")), len(shown))]
        assert f"({6 - len(shown)} more line(s) in the table)" in lines[head], (lines[head], shown)
    assert len(lines) <= answers.MAX_LINES


def test_the_table_across_releases_says_how_many_modules_a_cell_stands_for() -> None:
    # t5's modal_tuning: eigh's all-gather cell said 144 KiB, one module's, where the console said the two's 288 KiB.
    from kit.explain.report import across_rows

    folder = DATA.parent
    after = read_module(folder / "jax-0.4.35-train_slogdet.after_optimizations.txt")
    before = read_module(folder / "jax-0.4.35-train_slogdet.before_optimizations.txt")
    twice = Capture("0.4.35", {}, fingerprints(after, before, number=1) + fingerprints(after, before, number=2))
    once = Capture("0.4.36", {}, fingerprints(after, before, number=1))
    gathers = [row for row in across_rows([twice, once]) if row.op == "all-gather"]
    assert gathers and all(row.states["0.4.35"].endswith("; each of 2 modules)") for row in gathers)
    assert all(not row.states["0.4.36"].endswith("modules)") for row in gathers)


def test_modules_of_one_function_whose_shapes_differ_are_said_with_their_range() -> None:
    # t7's sensor_fit.py:19: three `fit` modules gather 48, 64 and 96 KiB; the console said "96 KiB, in each".
    from kit.explain.answer import SourceLine, sentence
    from kit.hlo.fingerprint import FingerprintState

    def lu(module: int, kib: int) -> Fingerprint:
        return Fingerprint("jit_fit", "fit.py:19", "lstsq", "svd", "forward", FingerprintState.GATHERED,
                           "jit(lstsq)/svd", global_batch=64, device_batch=64, fed_by=["all-gather"],
                           fed={f"{module}/all-gather.1": kib * 1024})

    text = sentence(SourceLine("fit.py:19", "jnp.linalg.lstsq", (lu(1, 48), lu(2, 64), lu(3, 96))))
    assert text.endswith("in one of the 3 modules compiled from it (48 KiB to 96 KiB in each)"), text
    text = sentence(SourceLine("fit.py:19", "jnp.linalg.lstsq", (lu(1, 48), lu(2, 48))))
    assert text.endswith("fed by an all-gather of 48 KiB, in each of the 2 modules compiled from it"), text


def test_two_functions_calling_one_helper_are_summed_not_said_in_each() -> None:
    # The chip run of t5's modal_tuning (0.10.2): gap_loss and participation both call eigh on line 23; the
    # console said "8 all-gathers of 288 KiB in all, in each of the 2 modules", where 288 KiB is the two's sum.
    from kit.explain.answer import SourceLine, sentence
    from kit.hlo.fingerprint import FingerprintState

    def eigh(module: str, number: int) -> Fingerprint:
        return Fingerprint(module, "modal.py:23", "eigh", "eigh", "forward", FingerprintState.GATHERED,
                           "jit(eigh)/eigh", global_batch=64, device_batch=64, fed_by=["all-gather"],
                           fed={f"{number}/all-gather.{n}": 36 * 1024 for n in range(4)})

    text = sentence(SourceLine("modal.py:23", "eigh", (eigh("jit_gap_loss", 1), eigh("jit_participation", 2))))
    assert text.endswith("fed by 8 all-gathers of 288 KiB in all"), text


def test_a_computation_export_refused_is_said_with_why_on_the_console() -> None:
    # t8: an unregistered pytree class (export refused it) was "cannot tell: 1 computation(s)" on the console, the
    # reason in the .json only.
    capture = Capture("0.12.0.1", {"status": "ran", "modules": [{"name": "m", "compiled": True}], "target": {
        "counts": {"called": 5, "exported": 4, "failed": 1}, "failed": [],
        "export_errors": ["ValueError: Cannot serialize PyTreeDef containing an unregistered type `Preconditioner`"]}},
        [])
    said = explain._untold(capture)
    assert said and "not exported: ValueError: Cannot serialize PyTreeDef" in said[0], said


def test_an_op_of_one_matrix_in_a_loop_is_not_said_as_all_1_matrices() -> None:
    # t9: an svd inside `lax.map` over a gathered batch of 256 was "every device decomposes all 1 matrices".
    from kit.explain.answer import SourceLine, sentence
    from kit.hlo.fingerprint import FingerprintState

    svd = Fingerprint("jit_compress", "c.py:28", "svd", "svd", "forward", FingerprintState.WHOLE, "jit(svd)/svd",
                      global_batch=1, device_batch=1, in_loop=True)
    text = sentence(SourceLine("c.py:28", "jnp.linalg.svd", (svd,)))
    assert "all 1" not in text and "one matrix per iteration of a loop (SVD, forward)" in text, text
