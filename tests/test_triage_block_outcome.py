"""kit/triage/bo.py: what a block did, as two runs are told apart by, and which side a third run is on.

The cases are the reports that a check built from the reporter's literal numbers could never decide: a block that
prints eager and jit side by side, a control line beside the case, another machine's low digits.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from kit.triage import block_outcome as bo
from kit.triage.check_writer import BEHAVES_AS_REPORTED, Judged, outcome_check_text
from kit.triage.issue_text import Block
from tests.tracer_reprs import ONE_FAILURE_FOUR_REPRS


def test_numbers_are_masked_and_parsed_but_names_versions_and_addresses_are_not_numbers() -> None:
    template, numbers = bo.masked("Array([0.25, -2e-3, nan], dtype=float32) f32[3] x1 at 0x7fab jax 0.4.36")
    assert template == "Array([#, #, #], dtype=float32) f32[#] x1 at 0x… jax <version>"
    assert numbers == [0.25, -0.002, "nan", 3.0]


def test_the_line_that_differs_is_the_feature_and_the_others_are_context() -> None:
    # eager and jit printed side by side: only the jit line differs between the two releases
    bad = bo.outcome(0, "eager: [1. 2.]\njit: [1. 0.]\n")
    good = bo.outcome(0, "eager: [1. 2.]\njit: [1. 2.]\n")
    features = bo.features(bad, good)
    assert features == [{"what": "line", "bad": 1, "good": 1}]
    # a third release: the same wrong jit value, within rounding, and a control line printed with other digits
    assert bo.side_of(bo.outcome(0, "eager: [1. 2.0000001]\njit: [1. 1e-9]\n"), bad, good, features)[0] == "bad"
    assert bo.side_of(bo.outcome(0, "eager: [1. 2.]\njit: [1. 2.]\n"), bad, good, features)[0] == "good"
    side, why = bo.side_of(bo.outcome(0, "eager: [1. 2.]\njit: [1. 7.]\n"), bad, good, features)
    assert side == "neither"
    assert why == "prints 'jit: [1. 7.]' (neither)"


def test_an_exception_is_compared_by_type_and_message_with_its_numbers_masked() -> None:
    bad = bo.outcome(1, "", AssertionError("0.1234567 != 0.5"))
    good = bo.outcome(0, "ok\n")
    features = bo.features(bad, good)
    # the line only the good side prints (the bad one raised first) is a consequence, not a feature of its own
    assert [f["what"] for f in features] == ["exception", "exit"]
    # this machine's low digits differ from the reporter's: still the same failure
    assert bo.side_of(bo.outcome(1, "", AssertionError("0.1234612 != 0.5")), bad, good, features)[0] == "bad"
    assert bo.side_of(bo.outcome(1, "", ImportError("no jax")), bad, good, features)[0] == "neither"


def test_a_timing_line_is_context_not_a_difference() -> None:
    assert bo.features(bo.outcome(0, "took 0.52 s\n"), bo.outcome(0, "took 0.61 s\n")) == []


def test_a_value_printed_with_its_time_is_compared_and_the_time_is_not() -> None:
    # the held-out wrong-value program: its one line of interest also printed the epoch's time, and the whole line
    # was context, so the check judged neither side (exit 125 on both)
    bad = bo.outcome(0, "epoch 0: loss 5.389  dead hidden units 16.16%  (862.5 ms)\n")
    bad_again = bo.outcome(0, "epoch 0: loss 5.389  dead hidden units 16.16%  (-0.4 ms)\n")
    good = bo.outcome(0, "epoch 0: loss 5.389  dead hidden units 1.36%  (1260.8 ms)\n")
    assert bad["lines"][0].template == "epoch #: loss #  dead hidden units #%  (<time>)"
    assert bo.features(bad, bad_again) == []
    assert bo.features(bad, good) == [{"what": "line", "bad": 0, "good": 0}]


def test_times_are_masked_by_their_unit_or_the_word_before_them() -> None:
    assert bo.masked("done in 10.16 s, 3 it/s, time: 0.5 loss 2")[0] == "done in <time>, <time>, time: <time> loss #"
    assert bo.masked("elapsed 12 and took 3e-3")[0] == "elapsed <time> and took <time>"
    assert bo.masked("12 samples, 4 steps, ms5")[0] == "# samples, # steps, ms5"


def test_a_timing_line_whose_time_is_not_found_is_still_context() -> None:
    assert bo.features(bo.outcome(0, "time per step: fast (3)\n"), bo.outcome(0, "time per step: fast (4)\n")) == []


def test_the_written_check_runs_the_block_and_decides_with_the_same_rule(tmp_path: Path) -> None:
    block = Block(1, "python", "import sys\nprint('eager', 1.0)\nprint('jit', float(sys.argv[1]))\n", 1)
    bad, good = bo.outcome(0, "eager 1.0\njit 0.0\n"), bo.outcome(0, "eager 1.0\njit 1.0\n")
    judged = Judged(bad, good, tuple(bo.features(bad, good)), "0.4.36", "0.12.0.1")
    text = outcome_check_text(block, "header", ["about"], judged)
    ast.parse(text, feature_version=(3, 9))  # it runs in every release's environment, Python 3.9 on
    check = tmp_path / "check.py"
    check.write_text(text)
    result = tmp_path / "result.json"
    codes = {}
    for value in ("0.0", "1.0", "5.0"):
        done = subprocess.run([sys.executable, str(check), value], capture_output=True, text=True, timeout=60,
                              env={"KIT_RESULT": str(result), "PATH": "/usr/bin:/bin"})
        codes[value] = done.returncode
        if value == "0.0":
            assert f"{BEHAVES_AS_REPORTED} behaves as on jax 0.4.36: prints 'jit 0.0'" in done.stdout
    assert codes == {"0.0": 1, "1.0": 0, "5.0": 125}
    kept = json.loads(json.loads(result.read_text())["summary"]["triage_outcome"])
    assert kept["lines"] == [["eager #", [1.0], "eager 1.0"], ["jit #", [5.0], "jit 5.0"]]


def test_a_capture_exits_as_the_block_did_and_keeps_its_exception(tmp_path: Path) -> None:
    block = Block(1, "python", "raise ValueError('shape (3, 4) is wrong')\n", 1)
    check = tmp_path / "check.py"
    check.write_text(outcome_check_text(block, "header", [], None))
    result = tmp_path / "result.json"
    done = subprocess.run([sys.executable, str(check)], capture_output=True, text=True, timeout=60,
                          env={"KIT_RESULT": str(result), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    assert "ValueError: shape (3, 4) is wrong" in done.stderr  # the traceback, as Python
    kept = json.loads(json.loads(result.read_text())["summary"]["triage_outcome"])
    assert kept["exception"] == {"type": "ValueError", "message": "shape (#, #) is wrong",
                                 "text": "shape (3, 4) is wrong"}


def test_the_traceback_names_this_machine_s_folders_by_what_they_are(tmp_path: Path) -> None:
    block = Block(1, "python", "import json\njson.loads('{')\n", 1)
    check = tmp_path / "check.py"
    check.write_text(outcome_check_text(block, "header", [], None))
    done = subprocess.run([sys.executable, str(check)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})
    assert "json.decoder.JSONDecodeError: Expecting property name" in done.stderr
    assert str(tmp_path) not in done.stderr
    assert sys.base_prefix + "/" not in done.stderr
    assert 'File "<checks>/check.py"' in done.stderr
    assert 'File "<report block 1>", line 2' in done.stderr


def test_an_outcome_reads_back_from_its_json_as_it_was_and_anything_else_is_no_outcome() -> None:
    """A record's ``triage_outcome`` and a check's references come back as JSON: checked where they are read."""
    seen = bo.outcome(1, "eager: 2.5\nnan here\n", ValueError("shape (3, 4) is wrong"))
    assert bo.outcome_from_json(json.loads(json.dumps(seen))) == seen
    assert bo.outcome_from_json(json.loads(json.dumps(seen)))["lines"][0].template == "eager: #"
    for broken in ([], {"exit": "1", "lines": []}, {"exit": 0}, {"exit": 0, "lines": [["x #"]]},
                   {"exit": 0, "lines": [["x #", ["one"], 3]]}, {"exit": 0, "lines": [[1, []]]},
                   {"exit": 0, "lines": [], "exception": {"type": "ValueError"}}):
        assert bo.outcome_from_json(broken) is None, broken
    features = bo.features(seen, bo.outcome(0, "eager: 2.5\n"))
    assert bo.features_from_json(json.loads(json.dumps(features))) == features
    assert bo.features_from_json([{"what": "line", "bad": "1"}, {"what": "colour"}, "exit", None]) == []


def test_an_exception_is_told_by_its_type_and_the_stable_part_of_its_message_never_by_a_tracers_repr() -> None:
    runs = {v: bo.outcome(1, "", TypeError(m)) for v, m in ONE_FAILURE_FOUR_REPRS.items()}
    clean = bo.outcome(0, "ok\n")
    for version, run in runs.items():
        # The same failure on every release: no difference between any two of them...
        assert all(bo.features(run, other) == [] for other in runs.values()), version
        # ... and a difference check whose bad side printed 0.9.2's repr judges each as bad (was: 125 on three).
        judged = bo.features(runs["0.9.2"], clean)
        assert bo.judgement(run, runs["0.9.2"], clean, judged, ("0.9.2", "0.10.0"), "BAD:")[0] == 1
    other = bo.outcome(1, "", TypeError("Shapes must be 1D sequences of concrete values of float type, "
                                                   "got (JitTracer(~int32[]),)."))
    assert bo.features(other, runs["0.9.2"]) == [{"what": "exception"}]  # the words still tell apart


def test_the_stable_message_keeps_the_words_and_makes_each_repr_one_word() -> None:
    assert bo.stable_message("bad <function f at 0x7f00aa> and Traced<ShapedArray(float32[3])>with<"
                                        "DynamicJaxprTrace(level=1/0)> here") == "bad <repr> and <repr> here"
    assert bo.stable_message("traced array with shape ~int32[]") == "traced array with shape <aval>"
    assert bo.stable_message("GradTracer(primal=1.0, typeof(tangent)=f16[]) is not hashable") == \
        "<repr> is not hashable"
    assert bo.stable_message("unbalanced JitTracer(float32[3]") == "unbalanced JitTracer(<aval>"
    assert bo.stable_message("result_paths() got multiple values for argument 'f'") == \
        "result_paths() got multiple values for argument 'f'"


def test_a_printed_line_is_quoted_as_printed() -> None:
    # A held-out trial (jnp.floor_divide by zero) quoted '[-2 nan nan nan  2]' for '[-2. nan nan nan  2.]':
    # the line rebuilt from its numbers lost the float points, so the quote was not what the run printed.
    printed = "jax //: [-2. nan nan nan  2.]\n [  0.   0.   0.   0.]]\n"
    seen = bo.outcome(0, printed)
    assert [bo.filled(line) for line in seen["lines"]] == printed.splitlines()
    again = bo.outcome_from_json(json.loads(json.dumps(seen)))
    assert again is not None and [bo.filled(line) for line in again["lines"]] == printed.splitlines()


def test_an_outcome_kept_before_the_text_reads_back_and_is_rebuilt_from_its_numbers() -> None:
    kept = {"exit": 0, "exception": None, "lines": [["x = #", [2.5]]]}
    seen = bo.outcome_from_json(kept)
    assert seen is not None and bo.filled(seen["lines"][0]) == "x = 2.5"
