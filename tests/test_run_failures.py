"""kit/run/failures.py: the exception a script died of, from real output, and which failures count as the bug."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from kit.records import RunOutcome
from kit.check_settings import script_check
from kit.install.environment import REUSED, Environment
from tests.fake_jax_package import write_fake_jax
from kit.run import failures, protocol, script_runs

TRACEBACKS = Path(__file__).resolve().parent / "fixtures" / "tracebacks"


def _lines(name: str) -> list[str]:
    return (TRACEBACKS / name).read_text().splitlines()


@pytest.mark.parametrize(("fixture", "kind", "first_line"), [
    # JAX's note comes after the exception line: the last line of output is not the exception.
    ("jax-0.4.36-kwarg-f.txt", "TypeError", "result_paths() got multiple values for argument 'f'"),
    # jax 0.4.13 chains an UnfilteredStackTrace first: the last traceback is the one that ended the script.
    ("jax-0.4.13-reshape-chained.txt", "jax._src.core.InconclusiveDimensionOperation",
     "Cannot divide evenly the sizes of shapes (7,) and (3, 5)"),
    ("jax-0.6.0-concretization.txt", "jax.errors.TracerBoolConversionError",
     "Attempted boolean conversion of traced array with shape bool[]."),
    ("no-module-flax.txt", "ModuleNotFoundError", "No module named 'flax'"),
    ("syntax-error.txt", "SyntaxError", "invalid syntax"),  # no traceback header at all
])
def test_the_exception_is_read_from_real_output(fixture: str, kind: str, first_line: str) -> None:
    raised = failures.uncaught_exception(_lines(fixture))
    assert raised is not None
    assert raised.type == kind
    assert raised.message.splitlines()[0] == first_line
    assert "For simplicity" not in raised.message
    assert "----" not in raised.message


def test_a_multi_line_message_is_kept_whole_and_its_headline_is_the_first_line() -> None:
    raised = failures.uncaught_exception(_lines("jax-0.6.0-concretization.txt"))
    assert raised is not None
    assert len(raised.message.splitlines()) == 3
    assert raised.headline() == ("jax.errors.TracerBoolConversionError: Attempted boolean conversion of traced array "
                                 "with shape bool[].")
    assert raised.name == "TracerBoolConversionError"
    assert len(raised.headline(limit=40)) == 40


def test_the_chain_holds_each_link_the_first_cause_first() -> None:
    chain = failures.exception_chain(_lines("python-3.11-stopiteration-chain.txt"))
    assert [(link.type, link.message) for link in chain] == [
        ("StopIteration", ""), ("RuntimeError", "generator raised StopIteration")]
    reshape = failures.exception_chain(_lines("jax-0.4.13-reshape-chained.txt"))
    assert len(reshape) == 2
    assert reshape[-1] == failures.uncaught_exception(_lines("jax-0.4.13-reshape-chained.txt"))
    assert reshape[0].type == "jax._src.traceback_util.UnfilteredStackTrace"


def test_a_traceback_after_an_unrelated_one_is_a_chain_of_one() -> None:
    """Two tracebacks printed apart (a caught one logged, then the fatal one) are not one chain."""
    logged = _lines("python-3.11-stopiteration-chain.txt")[:4] + ["retrying", ""]
    fatal = _lines("jax-0.4.36-kwarg-f.txt")
    assert [link.name for link in failures.exception_chain(logged + fatal)] == ["TypeError"]


def test_bad_if_matches_a_link_of_the_chain_the_last_line_does_not_show() -> None:
    """An anchored pattern written for the overlay's bare StopIteration matches the release's chain too."""
    judged = _judge(_lines("python-3.11-stopiteration-chain.txt"), bad_if=r"^StopIteration$")
    assert judged.verdict == "affected"
    assert "its exception chain matches" in judged.reason
    assert judged.evidence["bad_if"]["matched_in"] == "exception chain: StopIteration"
    assert judged.evidence["exception_chain"][0] == {"type": "StopIteration", "message": ""}
    bare = _judge(["Traceback (most recent call last):", '  File "x.py", line 3, in <module>', "StopIteration"],
                  bad_if=r"^StopIteration$")
    assert bare.verdict == "affected"
    assert "exception_chain" not in bare.evidence


def test_a_link_a_later_exception_of_its_class_replaced_is_not_what_the_run_ended_in() -> None:
    """t11: the fix raises an informative ValueError from the reported one; the reported one's pattern matched its
    printed line and its link, and a bisect called the fixed 0.12.1 bad where triage said "another failure"."""
    lines = _lines("jax-0.12.1-pytree-metadata-chained.txt")
    chain = failures.exception_chain(lines)
    assert [link.name for link in chain] == ["ValueError", "ValueError"]
    assert failures.replaced_links(chain) == chain[:1]
    reported = r"(?m)^(?:[\w.]+\.)?ValueError: The truth value of an array with more than one element is ambiguous"
    judged = _judge(lines, bad_if=reported)
    assert judged.verdict == "inconclusive" and "failed otherwise" in judged.reason
    fixed = _judge(lines, bad_if=r"(?m)^ValueError: Exception raised while checking equality")
    assert fixed.verdict == "affected"
    # a cause of another class is the same failure in another link (the StopIteration test above), and stays
    assert failures.replaced_links(failures.exception_chain(_lines("python-3.11-stopiteration-chain.txt"))) == []


def test_bad_if_matches_a_link_under_its_bare_class_name() -> None:
    judged = _judge(_lines("jax-0.6.0-concretization.txt"), bad_if=r"^TracerBoolConversionError: Attempted")
    assert judged.verdict == "affected"
    assert judged.evidence["bad_if"]["matched"] == "TracerBoolConversionError: Attempted"


@pytest.mark.parametrize("lines", [[], ["all good"], ["Traceback (most recent call last):", '  File "x.py", line 1']])
def test_output_without_a_finished_traceback_has_no_exception(lines: list[str]) -> None:
    assert failures.uncaught_exception(lines) is None


@pytest.mark.parametrize(("message", "pins", "package", "installed"), [
    ("No module named 'flax'", {}, "flax", None),
    ("No module named 'flax.linen'", {}, "flax", None),
    ("No module named 'sklearn'", {}, "scikit-learn", None),  # the package, not the module, goes into requires
    ("cannot import name 'nnx' from 'flax' (/env/flax/__init__.py)", {"Flax": "0.8.5"}, "flax", "0.8.5"),
])
def test_an_import_of_another_package_is_an_import_failure(message: str, pins: dict[str, str], package: str,
                                                          installed: str | None) -> None:
    kind = "ImportError" if "cannot" in message else "ModuleNotFoundError"
    found = failures.import_failure(failures.RaisedException(kind, message), pins)
    assert found is not None
    assert (found.package, found.installed) == (package, installed)


@pytest.mark.parametrize("message", ["No module named 'jax.experimental.maps'",
                                     "cannot import name 'shard_map' from 'jax.experimental' (/env/x.py)",
                                     "No module named 'jaxlib.mosaic'"])
def test_an_import_of_jax_itself_is_not_an_import_failure(message: str) -> None:
    # A module the release lacks may be the very change being bisected.
    assert failures.import_failure(failures.RaisedException("ImportError", message), {}) is None


def _judge(lines: list[str], code: int | None = 1, bad_if: str | None = None,
           pins: dict[str, str] | None = None) -> RunOutcome:
    fields = protocol.observation(code, 60, None)
    return failures.judge(fields, code, lines, re.compile(bad_if) if bad_if else None, pins or {}, "3.13")


def test_a_missing_package_is_inconclusive_naming_it() -> None:
    judged = _judge(_lines("no-module-flax.txt"))
    assert (judged.status, judged.verdict) == ("ran", "inconclusive")
    assert judged.reason == "the script could not import flax; add it to requires"
    assert judged.evidence["import_error"] == {"module": "flax", "package": "flax", "installed": None}


def test_a_missing_package_is_never_affected_even_when_bad_if_matches() -> None:
    assert _judge(_lines("no-module-flax.txt"), bad_if="Error").verdict == "inconclusive"


def test_an_exception_without_bad_if_is_affected_and_named() -> None:
    judged = _judge(_lines("jax-0.4.36-kwarg-f.txt"))
    assert (judged.status, judged.verdict) == ("ran", "affected")
    assert judged.reason == ("the script raised TypeError: result_paths() got multiple values for argument 'f' "
                             "(exit 1: affected)")
    assert judged.evidence["exception"]["type"] == "TypeError"


def test_bad_if_makes_only_a_matching_failure_affected() -> None:
    matching = _judge(_lines("jax-0.4.36-kwarg-f.txt"), bad_if=r"multiple values for argument 'f'")
    assert matching.verdict == "affected"
    assert "matches bad_if" in matching.reason
    assert matching.evidence["bad_if"]["matched"] == "multiple values for argument 'f'"
    other = _judge(_lines("jax-0.6.0-concretization.txt"), bad_if=r"multiple values for argument 'f'")
    assert (other.status, other.verdict) == ("ran", "inconclusive")
    assert other.reason.startswith("the script failed otherwise: it raised jax.errors.TracerBoolConversionError: ")
    assert other.evidence["bad_if"]["matched"] is None


def test_bad_if_leaves_a_pass_and_a_skip_alone_whatever_they_print() -> None:
    printed = ["TypeError: multiple values for argument 'f' (printed, not raised)"]
    assert _judge(printed, code=0, bad_if="TypeError").verdict == "unaffected"
    assert _judge(printed, code=125, bad_if="TypeError").verdict == "inconclusive"
    assert _judge(printed, code=None, bad_if="TypeError").status == "timed-out"  # a timeout stays one


def test_bad_if_counts_a_matching_crash_and_leaves_another_a_crash() -> None:
    fatal = ["F0000 xla/service/foo.cc:12] Check failed: shape.rank() == 2"]
    assert _judge(fatal, code=-6, bad_if="Check failed").verdict == "affected"
    other = _judge(["Segmentation fault"], code=-11, bad_if="Check failed")
    # A crash stays a crash, counted as the bisect's --crash says (skip by default): it was made "inconclusive"
    # here, so --crash bad was ignored wherever a bad_if was given (a segfault report's bisect stopped at its end).
    assert (other.status, other.verdict) == ("crashed", None)
    assert other.reason == "the script was killed by signal 11, and its output does not match bad_if 'Check failed'"
    assert other.evidence["bad_if"]["matched"] is None


def test_a_script_that_does_not_compile_is_inconclusive() -> None:
    judged = _judge(_lines("syntax-error.txt"))
    assert judged.verdict == "inconclusive"
    assert judged.reason == "the script does not compile on Python 3.13 (SyntaxError: invalid syntax)"


# The runner, with this interpreter standing in for a release's python.


def _run(tmp_path: Path, body: str, jax_broken: bool = False, **settings: object) -> dict:
    script = tmp_path / "check.py"
    script.write_text(body)
    jax = write_fake_jax(tmp_path / "fake-jax", broken=jax_broken)
    env = Environment(python=Path(sys.executable), versions={"jax": "0.6.0", "optax": "0.2.4"}, obtained=REUSED,
                      pythonpath=(jax,))
    return script_runs.run_script(env, script_check("c", script, **settings), "cpu", 60, lambda _m: None)  # type: ignore[arg-type]


def test_the_runner_keeps_the_exception_in_the_record(tmp_path: Path) -> None:
    fields = _run(tmp_path, "raise ValueError('bad shape\\nsecond line')\n")
    assert fields.verdict == "affected"
    assert "ValueError: bad shape" in fields.reason
    assert fields.evidence["exception"] == {"type": "ValueError", "message": "bad shape\nsecond line"}


def test_the_runner_names_a_missing_package_and_the_extra_packages_it_had(tmp_path: Path) -> None:
    fields = _run(tmp_path, "import nosuchpackage_kit\n", requires=("optax",))
    assert fields.verdict == "inconclusive"
    assert fields.reason == "the script could not import nosuchpackage_kit; add it to requires"
    assert fields.environment["packages"] == {"optax": "0.2.4"}


def test_a_failure_where_jax_itself_cannot_import_is_no_verdict(tmp_path: Path) -> None:
    """The script died in `import jax`, and so does JAX's own import here: cannot run, not the bug."""
    fields = _run(tmp_path, "import jax\n", jax_broken=True)
    assert (fields.status, fields.verdict) == ("ran", "inconclusive")
    assert fields.reason.startswith("JAX itself cannot import and run here (ImportError: cannot import name '_jax'")
    assert fields.evidence["jax_cannot_run"]["ok"] is False


def test_a_failure_bad_if_matches_stays_the_verdict_even_where_jax_cannot_import(tmp_path: Path) -> None:
    fields = _run(tmp_path, "import jax\n", jax_broken=True, bad_if=re.compile("cannot import name '_jax'"))
    assert fields.verdict == "affected"
    assert "jax_cannot_run" not in fields.evidence


def test_a_failure_where_jax_runs_is_the_scripts_verdict(tmp_path: Path) -> None:
    fields = _run(tmp_path, "import jax, sys\nsys.exit(3)\n")
    assert fields.verdict == "affected"
    assert "jax_cannot_run" not in fields.evidence


def test_what_jax_died_of_does_not_name_the_overlays_temporary_folder(tmp_path: Path) -> None:
    """A commit's overlay is a /tmp folder: the sentence goes into reports pasted into bug threads."""
    from kit.run.jax_runs import jax_runs

    overlay = write_fake_jax(tmp_path / "kit-1-commit-x", broken=True)
    (overlay / "jax" / "__init__.py").write_text(f"raise ImportError('cannot import name _jax from jaxlib ({overlay}/jaxlib)')\n")
    env = Environment(python=Path(sys.executable), versions={}, obtained=REUSED, pythonpath=(overlay,))
    health = jax_runs(env)
    assert not health.ok
    assert str(overlay) not in health.error
    assert "<the commit's overlay>/jaxlib" in health.error
    assert not any(str(overlay) in line for line in health.output_tail)  # the tail is kept under reports/ too


def test_a_script_probe_kept_under_another_bad_if_rule_is_another_probe() -> None:
    """t11: a bisect read 0.12.1 "bad" from a probe the cache kept before the replaced-link rule, where the same
    run is now "failed otherwise": the rule is in the probe's identity, so such a probe runs again."""
    judged = failures.script_probe_subject({"script": "/p/check.py", "script_sha256": "ab", "bad_if": "^X"})
    assert judged == {"script_sha256": "ab", "bad_if": "^X", "bad_if_rules": failures.BAD_IF_RULES}
    assert failures.script_probe_subject({"script": "/p/check.py", "script_sha256": "ab"}) == {"script_sha256": "ab"}
