"""kit/bisect/report/summary.py: the report's first lines and its script section, from a finding alone.

tests/test_bisect_report.py checks the summary inside a whole report (a commit fix, a quoted script, a probe that
died of an exception); here are the other answers a headline can give, the boundaries of quoting and of the
script's length, the environment line's ordering, and the quiet console's tail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit.bisect.bounds import Bounds
from kit.bisect.candidates import Candidate
from kit.bisect.commits.finding import CommitFinding, CommitLevel, TieBreak
from kit.bisect.report.finding import BisectFinding
from kit.bisect.options import BisectOptions
from kit.bisect.observation import Observation
from kit.bisect.search import BisectResult, ProbeOutcome, Transition
from kit.bisect.report.summary import (
    SCRIPT_LINES,
    SUMMARY_LINES,
    bisected_script,
    console_tail,
    deciding_line,
    headline,
    script_lines,
    summary_lines,
)
from kit.history.commit_range import CommitRange
from kit.history.commits import CommitInfo
from kit.records import Source
from tests.observations import observed

GOOD, BAD, SKIP = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP
VERSIONS = ["0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]


def made(observations: dict[str, Observation], *, good: str = "0.5.0", bad: str = "0.6.0",
         result: BisectResult[str] | None = None, transitions: tuple[Transition[str], ...] = (),
         stopped: str = "", **options: Any) -> BisectFinding:
    """A finding as the driver would hand it over; a regression (good older) unless ``good`` is the newer."""
    opts = BisectOptions(check=options.pop("check", "scaling"), script=options.pop("script", None), good=good, bad=bad,
                   argv=("--check", "scaling", "--good", good, "--bad", bad), **options)
    candidates = [Candidate(v, (f"jax=={v}",), None, "3.13", v) for v in VERSIONS]
    return BisectFinding("name", opts.specs, Bounds.of_releases(good, bad, how="bounds from the command line"), candidates,
                   {}, observations, list(observations), result, list(transitions), stopped=stopped)


def ran(verdict: str, reason: str = "", **fields: Any) -> Observation:
    return observed("ran", verdict, reason or f"measured {verdict}", **fields)


def step(before: str, after: str) -> Transition[str]:
    return Transition(before, after, GOOD, BAD)


def test_the_headline_says_broke_for_a_regression_and_hedges_an_inexact_answer() -> None:
    exact = made({}, result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    assert headline(exact) == "jax 0.5.3 broke it"
    # A skipped release between the two could hold the change: the title must not claim 0.5.3 alone.
    hedged = made({}, result=BisectResult("0.5.1", "0.5.3", ["0.5.2"], [], {}))
    assert headline(hedged) == "jax 0.5.3 or a release just before it broke it"
    assert "(or one of 0.5.2, skipped; last good jax 0.5.1)" in summary_lines(hedged)[2]


def test_the_headline_of_a_stopped_search_and_of_none_or_one_change_under_all() -> None:
    # (Two changes, and the stopped summary's answer line, are tests/test_bisect_report.py's.)
    assert headline(made({}, stopped="--good 0.5.0 tested bad")) == "stopped, the bounds did not test as given"
    assert headline(made({})) == "no change found"
    assert headline(made({}, transitions=(step("0.5.0", "0.5.1"),))) == "the outcome changes 1 time (--all)"


def test_a_stopped_search_quotes_no_deciding_probes() -> None:
    lines = summary_lines(made({"0.5.0": ran("affected")}, stopped="--good 0.5.0 tested bad"))
    assert not any(line.startswith(("- **First", "- **Last")) for line in lines)


def test_all_names_four_changes_and_counts_the_rest() -> None:
    # Six changes would push the reproduce line past the summary's ten; the fifth and sixth are counted instead.
    six = tuple(step(a, b) for a, b in zip(["0.1", "0.2", "0.3", "0.4", "0.5", "0.6"],
                                            ["0.1.1", "0.2.1", "0.3.1", "0.4.1", "0.5.1", "0.6.1"]))
    answer = summary_lines(made({}, transitions=six))[2]
    assert answer.count("→") == 4
    assert answer.endswith(" and 2 more (every candidate probed)")
    assert summary_lines(made({}))[2] == "- **Answer:** no change of outcome (every candidate probed)"


def test_the_summary_puts_the_answer_first_and_falls_back_to_the_release_probes_without_commit_ones() -> None:
    # The commit phase named a commit but kept no observation of it (e.g. answered from its ends): the deciding
    # probes are then the releases', not none at all.
    found = made({"0.5.2": ran("unaffected"), "0.5.3": ran("affected")},
                 result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    found.commits = _commits(TieBreak("python", None, None, None, None), exact=True)
    lines = summary_lines(found)
    assert lines[0] == "# Bisect: scaling (cpu): jax 0.5.3 broke it, commit ffffffffff"
    assert [line.split("**")[1] for line in lines[2:]] == ["Answer:", "Commit", "Reproduce:", "Environment:",
                                                           "First bad", "Last good"]
    assert len(lines) <= SUMMARY_LINES
    assert lines[-2] == "- **First bad** (jax 0.5.3): `measured affected`"


def _commits(tie_break: TieBreak | None, exact: bool) -> CommitFinding:
    first, last = "f" * 40, "e" * 40
    result = BisectResult(last, first, [] if exact else ["d" * 40], [], {})
    level = CommitLevel(CommitRange("b" * 40, (last, first), "line", "jax-v0.5.2", "jax-v0.5.3"), [], None, result)
    found = CommitFinding("a clone", [], [level], tie_break=tie_break)
    found.first_different = CommitInfo(first, "2025-02-27T08:15:45-08:00", "Dan", "a title", None, ())
    return found


def test_where_the_binary_and_the_python_were_not_told_apart_no_commit_is_named() -> None:
    # Issue 49: "Commit (the binary may be the cause): 9e4cdbd789" named a commit for jaxlib 0.10.2's miscompile.
    # (A change wholly in the binary, which names no commit at all, is tests/test_bisect_report.py's.)
    found = made({}, result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    found.commits = _commits(TieBreak("unknown", None, None, None, None), exact=True)
    assert headline(found) == "jax 0.5.3 broke it"
    assert summary_lines(found)[3] == ("- **Commit:** a range: the binary and the Python not told apart "
                                       "(see *Commits* below)")
    assert "ffffffffff" not in "\n".join(summary_lines(found))


def test_a_short_list_of_commits_is_named_but_not_put_in_the_title() -> None:
    found = made({}, result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    found.commits = _commits(None, exact=False)
    assert headline(found) == "jax 0.5.3 broke it"  # the title claims one commit only when the answer is exact
    assert summary_lines(found)[3].startswith("- **Commit** (a short list): **ffffffffff** \"a title\" (2025-02-27) ")


def test_a_deciding_probe_is_quoted_on_one_line_bounded_and_without_breaking_the_code_span() -> None:
    reason = "first line\n\n  second `line`   " + "x" * 300
    found = made({"0.5.2": ran("unaffected"), "0.5.3": ran("affected", reason)},
                 result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    first_bad = next(line for line in summary_lines(found) if line.startswith("- **First bad**"))
    quoted = first_bad.split(": ", 1)[1]
    assert quoted.startswith("`first line second 'line' xxx")
    assert quoted.endswith("…`")
    assert len(quoted) == 200 + 2
    assert quoted.count("`") == 2  # 200 characters, the ellipsis included, fenced


def test_a_check_is_quoted_by_its_reason_and_a_script_by_its_last_line_unless_it_died_of_an_exception() -> None:
    seen = ran("affected", "the reason", output_tail=["progress", "the last line"])
    assert deciding_line(seen, script=False) == "the reason"  # a check's output is progress; its reason decides
    assert deciding_line(seen, script=True) == "the last line"
    assert deciding_line(ran("affected", "r", output_tail=[]), script=True) == "r"  # silent script: the reason
    died = ran("affected", "r", output_tail=["x"], exception="ValueError: boom")
    assert deciding_line(died, script=True) == "ValueError: boom"
    # t11: a run triage handed on was judged by the check's judge from a capture that prints no verdict line; its
    # last printed line was the same on every release
    handed = ran("affected", "behaves as on jax 0.7.2: prints 'round(x, 100) = [nan nan nan]'",
                 output_tail=["round(x, 100) = [nan nan nan]", "round(x, 2)   = [ 1.5   2.25 -3.12]"])
    handed = handed.with_came_from(source=Source.TRIAGE)
    assert deciding_line(handed, script=True).startswith("behaves as on jax 0.7.2")


def test_the_environment_line_orders_versions_as_versions_and_names_pins_and_the_script() -> None:
    # Sorted as text, 0.10.0 would come before 0.9.0; a local build's version that is no PEP 440 one goes last.
    # The pins are the probes' own (each observation names what it held), not the command line's.
    last = ran("unaffected", python="3.13", packages={"jaxlib": "0.9.0", "numpy": "2.2.4"}, pins=["numpy==2.2.4"])
    first = ran("affected", python="3.13", jaxlib="0.10.0", packages={"jaxlib": "", "numpy": "local-build"},
                pins=["numpy==2.2.4"])
    found = made({"0.5.2": last, "0.5.3": first}, result=BisectResult("0.5.2", "0.5.3", [], [], {}),
                 check=None, script=Path("/abs/r.py"), script_shown="cases/r.py")
    environment = next(line for line in summary_lines(found) if line.startswith("- **Environment:**"))
    assert environment == ("- **Environment:** cpu, python 3.13, jaxlib 0.9.0 / 0.10.0, numpy 2.2.4 / local-build; "
                           "script `cases/r.py`, holding numpy==2.2.4")
    assert "/abs" not in environment


def test_a_script_of_exactly_the_limit_is_quoted_and_one_more_line_is_not(tmp_path: Path) -> None:
    at_limit, over = tmp_path / "at.py", tmp_path / "over.py"
    at_limit.write_text("pass\n" * SCRIPT_LINES)
    over.write_text("pass\n" * (SCRIPT_LINES + 1))
    quoted = bisected_script(at_limit, "at.py")
    assert quoted is not None
    assert quoted.text is not None
    assert quoted.lines == SCRIPT_LINES
    named = bisected_script(over, "over.py")
    assert named is not None
    assert named.text is None
    assert script_lines(named)[-1] == f"`over.py`: {SCRIPT_LINES + 1} lines, sha256 {named.sha256} (too long to quote here)."


def test_a_script_that_cannot_be_read_leaves_the_section_out_and_bad_bytes_do_not_stop_it(tmp_path: Path) -> None:
    assert bisected_script(tmp_path / "gone.py", "gone.py") is None
    assert script_lines(None) == []
    assert bisected_script(tmp_path, "a folder") is None
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\nprint(1)\n")
    script = bisected_script(latin, "latin.py")
    assert script is not None
    assert script.text == "# caf\ufffd\nprint(1)\n"
    lines = script_lines(script)
    assert lines[-4:] == ["```python", "# caf\ufffd", "print(1)", "```"]
    assert lines[2] == f"`latin.py` (sha256 {script.sha256[:16]}):"  # the hash is of the bytes, not the decoded text


def test_the_console_tail_shows_only_the_deciding_probes_that_failed_and_only_their_last_lines() -> None:
    tail = [f"line {n}" for n in range(6)]
    found = made({"0.5.2": ran("unaffected", output_tail=["fine"]),
                  "0.5.3": observed("crashed", None, "exit 139", output_tail=tail, log="reports/p.log")},
                 result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    assert console_tail(found, lines=2) == ["  first bad jax 0.5.3, last lines (reports/p.log):", "    line 4",
                                            "    line 5"]
    # A script's "affected" is a failure (it exited non-zero): its traceback is worth the lines; a check's is not.
    affected = ran("affected", output_tail=["Traceback", "E: boom"])
    as_check = made({"0.5.3": affected}, result=BisectResult("0.5.2", "0.5.3", [], [], {}))
    as_script = made({"0.5.3": affected}, result=BisectResult("0.5.2", "0.5.3", [], [], {}), check=None,
                     script=Path("r.py"))
    assert console_tail(as_check) == []
    assert console_tail(as_script)[0] == "  first bad jax 0.5.3, last lines:"
