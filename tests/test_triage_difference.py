"""kit/triage/difference.py and the decisions triage makes from two runs: the difference is the check, the report's
text says which side is the bug and only confirms it.

The runs are stood in for with real outcomes (kit/triage/block_outcome.outcome) of what each release printed:
what is tested is the decision, not JAX. tests/test_triage_integration.py runs real releases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kit.config import Matrix, parse_matrix
from kit.triage import block_outcome
from kit.triage import triage as flow
from kit.triage.check_writer import DIFFERENCE_BAD_IF
from kit.triage.difference import Run, shows_value
from tests.fake_index import refused_url

EAGER_JIT = ("```python\nimport jax\nimport jax.numpy as jnp\nx = jnp.arange(3.0)\nprint('eager:', x * 2)\n"
             "print('jit:  ', jax.jit(lambda v: v * 2)(x))\n```\n"
             "With jax 0.6.0 the jitted line is wrong; it prints:\n```\neager: [0. 2. 4.]\njit:   [0. 0. 0.]\n```\n")


def _matrix(tmp_path: Path) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "reports" / "results")},
                         "install": {"index_url": refused_url()}, "release": [{"version": "0.6.0"}],
                         "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


def _triage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, printed: dict[str, Any],
            **options: Any) -> tuple[flow.Triage, list[str]]:
    """``printed``: per release, what its run printed (a string, or a list: one per run), or an exception it
    raised."""
    ran: list[str] = []

    def run_on(matrix: Any, opts: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        ran.append(version)
        shown = printed[version]
        if isinstance(shown, list):
            shown = shown[min(ran.count(version), len(shown)) - 1]
        if isinstance(shown, BaseException):
            return Run(version, "affected", "stood in", block_outcome.outcome(1, "", shown))
        return Run(version, "unaffected", "stood in", block_outcome.outcome(0, shown))

    monkeypatch.setattr(flow, "run_on", run_on)
    result = flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=text, newest="0.9.0",
                                                               **options), lambda _m: None)
    return result, ran


def test_eager_and_jit_side_by_side_judge_the_line_that_differs(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    result, ran = _triage(tmp_path, monkeypatch, EAGER_JIT, {
        "0.6.0": "eager: [0. 2. 4.]\njit:   [0. 0. 0.]\n", "0.9.0": "eager: [0. 2. 4.]\njit:   [0. 2. 4.]\n"})
    assert ran == ["0.6.0", "0.9.0", "0.9.0", "0.6.0"]  # a printed line differs: each side runs again, for noise
    assert result.answer == "reproduced on the reporter's release 0.6.0; fixed by the newest release, 0.9.0"
    assert result.details[0] == ("differs: printed line 2: prints 'jit:   [0. 0. 0.]' on 0.6.0, prints 'jit:   [0. 2. 4.]' "
                                 "on 0.9.0")  # the eager line is context: the same on both
    assert result.details[1].startswith("confirmed: the report's quoted output")
    assert result.check.bad_if == DIFFERENCE_BAD_IF
    assert result.bisect_argv[-4:] == ["--good", "0.9.0", "--bad", "0.6.0"]


def test_another_machines_low_digits_still_confirm_and_both_sides_values_are_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("```python\nimport jax\nprint(jax.numpy.float32(1) / 3)\n```\nOn jax 0.6.0 it prints "
            "`0.33334` (expected `0.33333334`).\n")
    result, _ = _triage(tmp_path, monkeypatch, text, {"0.6.0": "0.33334012\n", "0.9.0": "0.33333334\n"})
    assert result.details[0] == "differs: printed line 1: prints '0.33334012' on 0.6.0, prints '0.33333334' on 0.9.0"
    assert result.details[1].startswith("confirmed:")


def test_a_reporter_s_release_that_behaves_as_the_newest_is_compared_with_the_release_that_worked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("```python\nimport jax\nprint(jax.random.permutation(jax.random.PRNGKey(0), 5))\n```\n"
            "It broke after upgrading from 0.5.9 to 0.6.0.\n\nExpected output (what 0.5.9 gives):\n```\n[1 0 4 3 2]\n```\n"
            "Actual output:\n```\n[0 1 4 3 2]\n```\n")
    result, ran = _triage(tmp_path, monkeypatch, text, {"0.6.0": "[0 1 4 3 2]\n", "0.9.0": "[0 1 4 3 2]\n",
                                                        "0.5.9": "[1 0 4 3 2]\n"})
    assert ran == ["0.6.0", "0.9.0", "0.5.9", "0.5.9", "0.6.0"]  # 0.5.9 only because the first two behave the same
    assert result.answer.startswith("reproduced on the reporter's release 0.6.0; still there in the newest release")
    assert result.bisect_argv[-4:] == ["--good", "0.5.9", "--bad", "0.6.0"]
    assert result.details[1].startswith("confirmed:")  # the 'gives' in the expected label fooled nothing


def test_runs_that_behave_the_same_say_so_with_what_to_try(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("```python\nimport jax\nfrom jax.sharding import Mesh\nprint(jax.numpy.ones(2).sum())\n```\n"
            "On jax 0.6.0 with a GPU this is slow.\n")
    result, _ = _triage(tmp_path, monkeypatch, text, {"0.6.0": "2.0\n", "0.9.0": "2.0\n"})
    assert result.answer == "behaves the same on 0.6.0 and 0.9.0: no difference to bisect by"
    assert result.bisect_argv == []
    assert "--host-devices N" in result.details[-1]
    assert "GPU or TPU" in result.details[-1]


def test_a_newest_release_that_fails_otherwise_bisects_back_from_the_reporter_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("```python\nimport jax\nprint(jax.numpy.ones(2).sum())\n```\nWith jax 0.6.0:\n```\nTraceback (most "
            "recent call last):\n  File \"x.py\", line 2, in <module>\nValueError: bad sum\n```\n")
    result, _ = _triage(tmp_path, monkeypatch, text, {"0.6.0": ValueError("bad sum"),
                                                      "0.9.0": AttributeError("module 'jax' has no attribute 'x'")})
    assert result.answer.endswith("the newest cannot tell, so the bisect looks for a later release where it works, "
                                  "going forward from 0.6.0")
    assert result.bisect_argv[-2:] == ["--bad", "0.6.0"]
    assert "--good" not in result.bisect_argv
    assert result.details[0].startswith("the newest, 0.9.0, ended in another failure (exit 1, AttributeError")


def test_a_regression_the_text_says_appeared_makes_the_newest_the_bad_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "```python\nimport jax\nprint(jax.numpy.ones(2).sum())\n```\nIt worked in jax 0.6.0, fails now.\n"
    result, ran = _triage(tmp_path, monkeypatch, text, {"0.6.0": "2.0\n", "0.9.0": ValueError("boom")})
    assert ran == ["0.6.0", "0.9.0"]
    assert result.answer.startswith("a regression: behaves as reported on the newest, 0.9.0")
    assert result.bisect_argv[-4:] == ["--good", "0.6.0", "--bad", "0.9.0"]


@pytest.mark.parametrize(("printed", "quoted", "shown"), [
    ("{2, 1, 3}", "{1, 2, 3}", True),  # a set, in another order
    ("[1 2 3]", "[2 1 3]", False),  # a list: order counts
    ("loss: 0.123456", "loss: 0.1235", True),  # to the digits the report writes
    ("loss: 0.124", "loss: 0.1235", False),
])
def test_a_quoted_value_matches_within_tolerance_and_sets_in_any_order(printed: str, quoted: str,
                                                                      shown: bool) -> None:
    assert shows_value(block_outcome.outcome(0, printed + "\n"), quoted) is shown


def test_the_devices_the_report_s_code_asks_for_are_taken() -> None:
    assert flow.devices_asked("mesh = Mesh(np.array(jax.devices()[:4]), ('b',))") == 4
    assert flow.devices_asked("os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'") == 8
    assert flow.devices_asked("mesh_utils.create_device_mesh((2, 4))") == 8
    assert flow.devices_asked("mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ('a', 'b'))") == 4
    assert flow.devices_asked("x = np.arange(6).reshape(2, 3)") is None  # an array's shape is no mesh
    assert flow.devices_asked("print(jax.numpy.ones(2))") is None


def test_the_console_before_the_bisect_is_at_most_fifteen_lines_with_no_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(flow, "run_on", lambda m, o, w, n, version, d, log: Run(
        version, "ran", "", block_outcome.outcome(1, "", TypeError("boom")) if version == "0.6.0"
        else block_outcome.outcome(0, "16.0\n")))
    text = EAGER_JIT.replace("With jax 0.6.0", "It worked in jax 0.5.0; with jax 0.6.0")
    result = flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=text, newest="0.9.0",
                                                               commits=True, jax_repo=Path("/elsewhere/jax")),
                         said.append)
    shown = said + flow.answer_lines(result)
    assert len(shown) <= 15
    assert not [line for line in shown if str(tmp_path) in line]
    assert "--jax-repo /elsewhere/jax" in shown[-2]  # the clone as given: the command runs (issue 58)


def test_a_newest_that_fails_otherwise_with_no_failure_named_proposes_no_bisect(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "```python\nimport jax\nprint(jax.numpy.ones(2).sum())\n```\nThis looks wrong on jax 0.6.0.\n"
    result, _ = _triage(tmp_path, monkeypatch, text, {"0.6.0": "3.0\n",
                                                      "0.9.0": AttributeError("module 'jax' has no attribute 'x'")})
    assert result.bisect_argv == []
    assert result.answer == ("the newest, 0.9.0, fails otherwise and the report names no failure to tell the bug "
                             "by: no bisect")


def test_a_line_that_differs_between_two_runs_of_one_release_is_noise_not_the_bug(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("```python\nimport jax, numpy as np\nprint('noise', np.random.rand())\nprint(jax.numpy.ones(2).sum())\n"
            "```\nOn jax 0.6.0 it prints:\n```\nnoise 0.1\n3.0\n```\n")
    result, ran = _triage(tmp_path, monkeypatch, text, {"0.6.0": "noise 0.1\n3.0\n",
                                                        "0.9.0": ["noise 0.7\n2.0\n", "noise 0.4\n2.0\n"]})
    assert ran == ["0.6.0", "0.9.0", "0.9.0", "0.6.0"]  # each side run twice
    assert result.details[0] == "noise, not judged: printed line 1 (differs between two runs of 0.9.0)"
    assert result.details[1] == "differs: printed line 2: prints '3.0' on 0.6.0, prints '2.0' on 0.9.0"
    only_noise, _ = _triage(tmp_path, monkeypatch, text.replace("3.0", "2.0"), {
        "0.6.0": "noise 0.1\n2.0\n", "0.9.0": ["noise 0.7\n2.0\n", "noise 0.4\n2.0\n"]})
    assert only_noise.answer == "behaves the same on 0.6.0 and 0.9.0: no difference to bisect by"


RAISES = ("```python\nimport jax\nprint(jax.numpy.ones(2).sum())\n```\n{worked}With jax 0.6.0:\n```\nTraceback (most "
          "recent call last):\n  File \"x.py\", line 2, in <module>\nValueError: bad sum\n```\n")


def test_a_newest_that_fails_otherwise_bisects_toward_the_release_the_report_says_worked_saying_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, ran = _triage(tmp_path, monkeypatch, RAISES.format(worked="It worked in jax 0.5.0.\n"), {
        "0.6.0": ValueError("bad sum"), "0.9.0": AttributeError("module 'jax' has no attribute 'x'")})
    assert ran == ["0.6.0", "0.9.0"]
    assert result.answer == ("reproduced on the reporter's release 0.6.0; inconclusive on the newest release, 0.9.0; "
                             "the newest cannot tell, so the bisect goes toward 0.5.0, where the report says it worked")
    assert result.bisect_argv[-4:] == ["--good", "0.5.0", "--bad", "0.6.0"]
    assert result.other_command == []
    assert result.details == ["the newest, 0.9.0, ended in another failure (exit 1, AttributeError: module 'jax' has "
                              "no attribute 'x'): it cannot say whether the bug is there"]
    assert result.judged_runs == []  # the check is the reported failure, another script than the capture that ran


@pytest.mark.parametrize(("worked", "bounds"), [("", ["--bad", "0.6.0"]),
                                                ("It worked in jax 0.5.0.\n", ["--good", "0.5.0", "--bad", "0.6.0"])])
def test_a_newest_that_could_not_run_the_block_is_named_with_why_and_the_bisect_goes_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worked: str, bounds: list[str]) -> None:
    def run_on(matrix: Any, opts: Any, written: Any, name: str, version: str, devices: Any, log: Any) -> Run:
        if version == "0.9.0":
            return Run(version, "timed-out", "timed out after 600 s", None)
        return Run(version, "affected", "", block_outcome.outcome(1, "", ValueError("bad sum")))

    monkeypatch.setattr(flow, "run_on", run_on)
    result = flow.triage(_matrix(tmp_path), flow.TriageOptions(source="issue.md", text=RAISES.format(worked=worked),
                                                               newest="0.9.0"), lambda _m: None)
    toward = "goes toward 0.5.0, where the report says it worked" if worked else \
        "looks for a later release where it works, going forward from 0.6.0"
    assert result.answer == ("reproduced on the reporter's release 0.6.0; timed-out on the newest release, 0.9.0; "
                             f"the newest cannot tell, so the bisect {toward}")
    assert result.bisect_argv[-len(bounds):] == bounds
    assert ("--good" in result.bisect_argv) == bool(worked)
    assert result.details == ["the newest, 0.9.0, cannot say whether the bug is there: TIMED-OUT: timed out after "
                              "600 s"]
    assert flow.answer_lines(result)[1] == "   jax 0.6.0: AFFECTED; jax 0.9.0: TIMED-OUT"


def test_a_line_that_varies_only_on_the_reporter_s_release_is_noise_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 49: printed random floats on the bad side were judged, and the bisect skipped 7 of 13 probes.
    text = ("```python\nimport jax, numpy as np\nprint('noise', np.random.rand())\nprint(jax.numpy.ones(2).sum())\n"
            "```\nOn jax 0.6.0 it prints:\n```\nnoise 0.1\n3.0\n```\n")
    result, ran = _triage(tmp_path, monkeypatch, text, {"0.6.0": ["noise 0.1\n3.0\n", "noise 0.5\n3.0\n"],
                                                        "0.9.0": "noise 0.7\n2.0\n"})
    assert result.details[0] == "noise, not judged: printed line 1 (differs between two runs of 0.6.0)"
    assert result.details[1] == "differs: printed line 2: prints '3.0' on 0.6.0, prints '2.0' on 0.9.0"


def test_a_quoted_line_that_varies_between_runs_is_left_out_of_the_confirmation_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 49: the quote's printed random float matched neither run, so a quote whose every other line matched
    # the reporter's release read "unconfirmed ... matches neither run".
    text = ("```python\nimport jax, numpy as np\nprint('sample:', np.random.rand())\n"
            "print('has it:', hasattr(jax, 'custom_remat'))\n```\nOn jax 0.6.0 it prints:\n```\n"
            "sample: 0.5488135039273248\nhas it: False\n```\n")
    result, _ = _triage(tmp_path, monkeypatch, text, {"0.6.0": ["sample: 0.1\nhas it: False\n", "sample: 0.2\nhas it: False\n"],
                                                      "0.9.0": ["sample: 0.3\nhas it: True\n", "sample: 0.4\nhas it: True\n"]})
    assert result.details[0] == "noise, not judged: printed line 1 (differs between two runs of 0.9.0 and of 0.6.0)"
    assert result.details[2] == ("confirmed: the report's quoted output 'has it: False' matches the run on 0.6.0, "
                                 "not the one on 0.9.0 (1 quoted line that varies between runs of one release left "
                                 "out)")
    only_noise, _ = _triage(tmp_path, monkeypatch, text.replace("has it: False\n```", "```"), {
        "0.6.0": ["sample: 0.1\nhas it: False\n", "sample: 0.2\nhas it: False\n"],
        "0.9.0": ["sample: 0.3\nhas it: True\n", "sample: 0.4\nhas it: True\n"]})
    assert [line for line in only_noise.details if "confirm" in line] == [
        "unconfirmed: every line the report quotes varies between two runs of one release (1 left out): nothing in "
        "it to confirm by"]


def test_a_quote_that_matches_the_reporter_s_release_is_confirmed_by_one_rule_on_both_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 49: each run was cut to its own differing lines before the quote was matched, and two lines of one
    # shape (a loop's) made the quote match neither side, or the wrong one.
    text = ("```python\nimport jax\nfor v in jax.numpy.array([1.0, 5.0]): print('v:', v)\n```\n"
            "On jax 0.6.0 it prints:\n```\nv: 1.0\nv: 5.0\n```\n")
    result, _ = _triage(tmp_path, monkeypatch, text, {"0.6.0": "v: 1.0\nv: 5.0\n", "0.9.0": "v: 1.0\nv: 1.0\n"})
    said = [line for line in result.details if "confirmed" in line]
    assert said == ["confirmed: the report's quoted output 'v: 1.0\\nv: 5.0' matches the run on 0.6.0, not the one "
                    "on 0.9.0"], result.details


@pytest.mark.parametrize(("printed", "quoted", "shown"), [
    ("loss: 0.5\nloss: 0.9", "loss: 0.9", True),  # one of a loop's lines
    ("loss: 0.5\nloss: 0.9", "loss: 0.5\nloss: 0.9", True),
    ("loss: 0.5\nloss: 0.5", "loss: 0.5\nloss: 0.9", False),
])
def test_each_quoted_line_matches_the_nearest_printed_line_of_its_shape(printed: str, quoted: str,
                                                                       shown: bool) -> None:
    assert shows_value(block_outcome.outcome(0, printed + "\n"), quoted) is shown
