"""The problem a reduction keeps, read off two runs a side, and judged both ways on a candidate's runs."""

from __future__ import annotations

import pytest

from kit.hlo import Fingerprint, FingerprintState
from kit.reduce.problem import Refused, found_problem, op_problem, shape
from kit.reduce.runs import Seen
from kit.triage import block_outcome


def seen(release: str, printed: str = "", exit_code: int = 0, raised: tuple[str, str] | None = None) -> Seen:
    outcome = block_outcome.outcome(exit_code, printed)
    if raised:
        outcome["exception"] = {"type": raised[0], "message": block_outcome.masked(raised[1])[0], "text": raised[1]}
    return Seen(release, outcome, printed, "", 0.1)


def test_an_array_printed_is_one_shape_whatever_its_length() -> None:
    assert shape("volume # : features (#, #, #)") == shape("volume # : features (#, #)") == "volume # : features #"


def test_an_exception_on_the_bad_side_only_is_kept_both_ways() -> None:
    error = ("ValueError", "shapes (4, 4) and (16, 1, 4)")
    problem = found_problem((seen("0.4.35", exit_code=1, raised=error),) * 2, (seen("0.5.3", "ok 1.0"),) * 2)
    assert problem.kind == "exception"
    smaller = ("ValueError", "shapes (2, 2) and (3, 1, 2)")  # numbers masked: the same problem
    assert problem.holds(seen("a", exit_code=1, raised=smaller), seen("b", "ok"), None)
    assert not problem.holds(seen("a", exit_code=1, raised=smaller), seen("b", exit_code=1, raised=smaller), None)
    assert not problem.holds(seen("a", exit_code=1, raised=("TypeError", "other")), seen("b"), None)


def test_a_printed_value_that_differs_is_kept_and_rounding_is_not() -> None:
    problem = found_problem((seen("0.9.2", "features (4, 6, 5)\nchecksum 195.68"),) * 2,
                            (seen("0.10.0", "features (3, 4, 6)\nchecksum 157.00"),) * 2)
    assert problem.kind == "value"
    assert problem.holds(seen("a", "features (4, 6)"), seen("b", "features (1, 4, 6)"), None)
    assert not problem.holds(seen("a", "checksum 1.0000001"), seen("b", "checksum 1.0000002"), None)
    assert not problem.holds(seen("a", "features (4, 6)"), seen("b", "features (4, 6)"), None)


def test_a_line_that_varies_between_runs_of_one_release_is_noise() -> None:
    with pytest.raises(Refused, match="cannot tell a problem from run-to-run noise"):
        found_problem((seen("1", "draw 0.25"), seen("1", "draw 0.75")), (seen("2", "draw 0.5"), seen("2", "draw 0.1")))


ACCT_BAD = ["Q1: accounts active by day 90: 62/64 (214.6 ms)\nseed 1256978233",
            "Q1: accounts active by day 90: 59/64 (0.9 ms)\nseed 1256983190",
            "Q1: accounts active by day 90: 61/64 (0.8 ms)\nseed 1256991002",
            "Q1: accounts active by day 90: 60/64 (0.8 ms)\nseed 1256999121"]
ACCT_GOOD = ["Q1: accounts active by day 90: 64/64 (247.8 ms)\nseed 1256983115",
             "Q1: accounts active by day 90: 64/64 (1.1 ms)\nseed 1256988004",
             "Q1: accounts active by day 90: 64/64 (1.0 ms)\nseed 1256995310",
             "Q1: accounts active by day 90: 64/64 (1.0 ms)\nseed 1257003411"]
"""The held-out trial's `acct` (t4, case b): 0.4.33's counts vary from run to run (time-seeded draw) and never
reach 0.4.34's 64/64; the seed line varies on both sides (noise)."""


def test_a_line_that_varies_on_one_release_only_and_never_meets_the_other_is_kept() -> None:
    for runs in (2, 4):  # whatever the runs a side, the same answer
        problem = found_problem([seen("0.4.33", t) for t in ACCT_BAD[:runs]],
                                [seen("0.4.34", t) for t in ACCT_GOOD[:runs]])
        assert problem.kind == "value" and problem.repeats == 2, runs
        assert [v.kinds for v in problem.values] == [("Q1: accounts active by day # : # / # <time>)",)] * 2
        assert problem.noise == ("seed #",)
        assert problem.sentence().endswith("(jax 0.4.33's vary from run to run; none of its runs prints them as "
                                           "jax 0.4.34 does)")


def test_a_varying_side_that_meets_the_steady_one_on_a_line_of_one_run_is_still_told_by_its_other_lines() -> None:
    # 0.4.33's acct printed 64/64 for Q1 in one run of four (the machine's own runs, 2026-12-06): Q1 alone meets
    # 0.4.34's, every run still differs from 0.4.34's on a quarter.
    lines = "Q1: active {}/64\nQ2: active {}/64\nseed {}"
    bad = [seen("0.4.33", lines.format(q1, q2, s)) for q1, q2, s in ((62, 60, 5), (64, 59, 9), (61, 64, 2), (62, 62, 7))]
    good = [seen("0.4.34", lines.format(64, 64, s)) for s in (4, 8, 3, 6)]
    problem = found_problem(bad, good)
    assert [v.kinds for v in problem.values] == [("Q1: active # / #", "Q2: active # / #")]
    assert problem.noise == ("seed #",)
    assert problem.holds_over([seen("a", "Q2: active 3/4")] * 2, [seen("b", "Q2: active 4/4")] * 2, None)
    assert not problem.holds_over([seen("a", "Q2: active 3/4"), seen("a", "Q2: active 4/4")],
                                  [seen("b", "Q2: active 4/4")] * 2, None)  # a run of the varying side meets it
    assert not problem.holds_over([seen("a", "Q2: active 3/4")] * 2,
                                  [seen("b", "Q2: active 4/4"), seen("b", "Q2: active 5/4")], None)


def test_a_candidate_of_a_varying_problem_is_judged_over_its_runs_never_on_one_pair() -> None:
    problem = found_problem([seen("0.4.33", t) for t in ACCT_BAD], [seen("0.4.34", t) for t in ACCT_GOOD])
    line = "Q1: accounts active by day 90: {}/{} (0.0 ms)"
    assert problem.holds(seen("a", line.format(5, 8)), seen("b", line.format(7, 8)), None)
    # Fixed: steady on both sides and apart (the reduction's goal) is kept.
    assert problem.holds_over([seen("a", line.format(5, 8))] * 2, [seen("b", line.format(7, 8))] * 2, None)
    # Still varying on the bad side and never meeting the good side's steady value is kept.
    assert problem.holds_over([seen("a", line.format(5, 8)), seen("a", line.format(4, 8))],
                              [seen("b", line.format(7, 8))] * 2, None)
    # Noise: a time-seeded key's sum differs between the sides on one pair of runs, never again.
    noise = [seen("a", line.format(3707225357, 1)), seen("a", line.format(3896439253, 1))]
    other = [seen("b", line.format(1173123063, 1)), seen("b", line.format(2449657191, 1))]
    assert problem.holds(noise[0], other[0], None)
    assert not problem.holds_over(noise, other, None)  # the good side was steady in the original: here it varies
    # The two sides' values meet: no difference.
    assert not problem.holds_over([seen("a", line.format(5, 8)), seen("a", line.format(7, 8))],
                                  [seen("b", line.format(7, 8))] * 2, None)
    # Identical outputs on both sides are never kept.
    assert not problem.holds_over([seen("a", line.format(7, 8))] * 2, [seen("b", line.format(7, 8))] * 2, None)


def test_a_line_that_varies_on_one_side_and_meets_the_other_is_noise_the_kit_says_it_cannot_tell() -> None:
    with pytest.raises(Refused) as refused:
        found_problem([seen("0.4.33", "active by day 90: 59/64"), seen("0.4.33", "active by day 90: 64/64")],
                      [seen("0.4.34", "active by day 90: 64/64")] * 2)
    said = str(refused.value)
    assert "behaves the same" not in said and "no problem" not in said
    assert said == ("the lines that differ between jax 0.4.33 and jax 0.4.34 also differ between runs of "
                    "jax 0.4.33 (2 runs a side), and their values on the two sides meet, so the kit cannot tell a "
                    "problem from run-to-run noise: fix the program's random seed (or its time-dependent input) "
                    "and run again")


def test_the_same_behaviour_on_both_is_refused() -> None:
    with pytest.raises(Refused, match="behaves the same"):
        found_problem((seen("1", "x 1"),) * 2, (seen("2", "x 1"),) * 2)


def fingerprint(line: int, state: FingerprintState, batch: int) -> Fingerprint:
    return Fingerprint(module="m", location=f"prog.py:{line}", function="slogdet", op="lu", pass_="forward",
                       state=state, op_path="jit(f)/slogdet/lu", global_batch=256, device_batch=batch)


def test_explains_evidence_for_the_op_line_is_kept_both_ways() -> None:
    bad, good = seen("0.4.35"), seen("0.5.3")
    bad.fingerprints = [fingerprint(7, FingerprintState.GATHERED, 256)]
    good.fingerprints = [fingerprint(7, FingerprintState.SPLIT, 64)]
    problem = op_problem(bad, good, (7, 7), "prog.py:7")
    moved_bad, moved_good = seen("a"), seen("b")
    moved_bad.fingerprints = [fingerprint(3, FingerprintState.GATHERED, 8)]
    moved_good.fingerprints = [fingerprint(3, FingerprintState.SPLIT, 2)]
    assert problem.holds(moved_bad, moved_good, (3, 3))
    assert not problem.holds(moved_bad, moved_good, (4, 9))  # the op's statement is elsewhere
    assert not problem.holds(moved_bad, moved_bad, (3, 3))  # the good release shows it too


def test_an_op_line_nothing_holds_whole_is_refused() -> None:
    bad = seen("0.4.35")
    bad.fingerprints = [fingerprint(7, FingerprintState.SPLIT, 64)]
    with pytest.raises(Refused, match="nothing of prog.py:7 holds a sharded batch whole"):
        op_problem(bad, seen("0.5.3"), (7, 7), "prog.py:7")


def test_the_sentence_names_the_lines_the_reduced_runs_differ_in_and_never_cuts_a_list_unsaid() -> None:
    original_bad = "jax 0.6.0: smoothed 3 traces\npeaks at 4\nmean 0.5\nnoise after smoothing: [1. 1.]"
    original_good = "jax 0.6.1: smoothed 4 traces\npeaks at 5\nmean 0.7\nnoise after smoothing: [1.]"
    problem = found_problem((seen("0.6.0", original_bad),) * 2, (seen("0.6.1", original_good),) * 2)
    assert problem.sentence().endswith("in `jax <version>: smoothed # traces`; `peaks at #`; `mean #` and 1 more")
    reduced = (seen("0.6.0", "noise after smoothing: [1. 1.]"), seen("0.6.1", "noise after smoothing: [1.]"))
    said = problem.sentence(reduced)
    assert said == "printed values differ between jax 0.6.0 and jax 0.6.1 in `noise after smoothing: #`"


def test_an_op_named_as_its_function_is_said_once() -> None:
    from dataclasses import replace
    from kit.reduce.issue import _op_sentences
    bad, good = seen("0.5.0"), seen("0.5.3")
    eigh = [replace(fingerprint(7, state, batch), function="eigh", op="eigh", op_path="jit(f)/eigh")
            for state, batch in ((FingerprintState.GATHERED, 256), (FingerprintState.SPLIT, 64))]
    bad.fingerprints, good.fingerprints = eigh[:1], eigh[1:]
    said = op_problem(bad, good, (7, 7), "prog.py:7").sentence()
    assert said == "the op's line compiles as eigh gathered on jax 0.5.0, eigh split on jax 0.5.3"
    assert _op_sentences(eigh[:1]) == ["eigh (forward) gathered, 256 of 256 per device"]
    assert _op_sentences([fingerprint(7, FingerprintState.SPLIT, 64)])[0].startswith("slogdet lu (forward) split")


def test_a_varying_original_runs_four_times_a_side_and_a_steady_one_twice() -> None:
    from types import SimpleNamespace
    from kit.reduce import command
    from kit.reduce.program import Program
    for texts, pairs in (((ACCT_BAD, ACCT_GOOD), 4), ((["x 1"] * 4, ["x 2"] * 4), 2)):
        asked: list[int] = []

        def run_both(program: object, texts: tuple[list[str], list[str]] = texts) -> tuple[object, object]:
            asked.append(1)
            return seen("0.4.33", texts[0][len(asked) - 1]), seen("0.4.34", texts[1][len(asked) - 1])

        options = SimpleNamespace(op="")
        problem = command.problem_of(options, SimpleNamespace(run_both=run_both), Program.parse("print(1)\n"))  # type: ignore[arg-type]
        assert len(asked) == pairs and problem.kind == "value"
        assert problem.repeats == (2 if pairs == 4 else 1)


def test_the_tester_runs_a_second_pair_only_for_a_candidate_the_first_pair_keeps(monkeypatch: pytest.MonkeyPatch,
                                                                               tmp_path: object) -> None:
    from kit.reduce import trials
    from kit.reduce.program import Program
    problem = found_problem([seen("0.4.33", t) for t in ACCT_BAD], [seen("0.4.34", t) for t in ACCT_GOOD])
    line = "Q1: accounts active by day 90: {}/1 (0.0 ms)"
    scripted = {"noise": {"0.4.33": [1, 2], "0.4.34": [3, 4]}, "fixed": {"0.4.33": [3, 3], "0.4.34": [4, 4]},
                "same": {"0.4.33": [4, 4], "0.4.34": [4, 4]}}
    runs: list[tuple[str, str]] = []

    def run_candidate(pool: object, release: str, program: Program, *rest: object) -> Seen:
        name = program.text.split("'")[1]
        runs.append((name, release))
        return seen(release, line.format(scripted[name][release][sum(1 for r in runs if r == (name, release)) - 1]))

    monkeypatch.setattr(trials, "run_candidate", run_candidate)
    sides = trials.Sides("0.4.33", "0.4.34", "acct.py", tmp_path, 20, False)  # type: ignore[arg-type]
    tester = trials.Tester(problem, None, sides, 2)  # type: ignore[arg-type]
    assert not tester.keeps(Program.parse("print('noise')\n"))  # differs on one pair, the good side varies after
    assert tester.keeps(Program.parse("print('fixed')\n"))
    assert not tester.keeps(Program.parse("print('same')\n"))
    assert [r for r in runs if r[0] == "same"] == [("same", "0.4.33"), ("same", "0.4.34")]  # one pair: refused
    assert len([r for r in runs if r[0] == "noise"]) == 4 and len([r for r in runs if r[0] == "fixed"]) == 4
