"""kit/bisect/commits/report.py: the report's commit section, for each verdict the commit phase can reach.

tests/test_bisect_report.py checks that the section is there, folded, in a whole report; here is what it says:
each verdict's answer, the limits on how much of a long list it prints, and which probes get a row.
"""

from __future__ import annotations

from typing import Any

from kit.bisect.commits.builds import Build
from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.finding import CommitFinding, CommitLevel, CompiledChange, PairProbe, TieBreak, Untested
from kit.bisect.commits.report import commit_section
from kit.bisect.search import BisectResult, BoundsProblem, ProbeOutcome
from kit.history.commit_range import CommitRange
from kit.history.commits import CommitInfo
from kit.history.leads import Lead
from kit.install import JAX_ALONE
from tests.observations import observed

GOOD, BAD = ProbeOutcome.GOOD, ProbeOutcome.BAD
OLD_END, LAST, FIRST, NEWEST = "a" * 40, "b" * 40, "c" * 40, "d" * 40
BUILT = Build("0.5.2", "0.5.1", "3.13", True, "bad")
FRESH = Build("0.5.3", "0.5.3", "3.13", False, "good")


def commit(key: str, title: str = "a change", **fields: Any) -> CommitCandidate:
    return CommitCandidate(key, (), None, "3.13", "0.5.1", commit=key, build=BUILT, title=title, date="2025-02-27",
                           **fields)


def info(key: str, files: tuple[str, ...] = ("jax/_src/lax/linalg.py",), pr: int | None = None) -> CommitInfo:
    return CommitInfo(key, "2025-02-27T08:15:45-08:00", "Dan", f"title of {key[:4]}", pr, files)


def found_commit(*, ambiguous: tuple[str, ...] = (), tie: TieBreak | None = None, levels: tuple[CommitLevel, ...] = (),
                 first: CommitInfo | None = None, off_line: tuple[str, ...] = (), **fields: Any) -> CommitFinding:
    """A regression found at FIRST (LAST the newest good), with the probes of the four framing commits."""
    commits = (LAST, *ambiguous, FIRST, NEWEST)
    candidates = [commit(key) for key in (OLD_END, *commits)]
    outer = CommitLevel(CommitRange(OLD_END, commits, "12 commits on the main line", "jax-v0.5.2", "jax-v0.5.3",
                                    off_line), candidates, None,
                        BisectResult(LAST, FIRST, list(ambiguous), [], {}),
                        outcomes={OLD_END: GOOD, LAST: GOOD, FIRST: BAD, NEWEST: BAD})
    observations = {key: observed("ran", "unaffected" if key in (OLD_END, LAST) else "affected", "r",
                                     jaxlib="0.5.1", seconds=2.0, environment="reused")
                    for key in (OLD_END, LAST, FIRST, NEWEST)}
    found = CommitFinding("a clone", [BUILT, FRESH], [outer, *levels], tie, commit_probes=[LAST, FIRST],
                          observations=observations, probed_candidates={c.version: c for c in candidates}, seconds=8,
                          **fields)
    found.last_same, found.first_different = info(LAST), first or info(FIRST, pr=26839)
    return found


def section(found: CommitFinding) -> str:
    return "\n".join(commit_section(found, fix=False, crash="skip", script=False))


def test_an_exact_commit_is_named_with_its_pull_request_its_files_and_the_compare_link() -> None:
    text = section(found_commit())
    assert ("Searched jax-v0.5.2 … jax-v0.5.3 in a clone: 12 commits on the main line. Builds: jaxlib 0.5.1 from "
            "jax 0.5.2's environment (bad side); jaxlib 0.5.3 from jax 0.5.3's environment (good side, not built "
            "before).") in text
    assert "**Answer: the commit.**" in text
    assert f"- last good commit: **{LAST}** \"title of bbbb\" — Dan, 2025-02-27T08:15:45-08:00 — " in text
    assert (f"- first bad commit: **{FIRST}** \"title of cccc\" — Dan, 2025-02-27T08:15:45-08:00, PR #26839 "
            "(https://github.com/jax-ml/jax/pull/26839)") in text
    first_line = next(line for line in text.splitlines() if line.startswith("- first bad commit"))
    assert first_line.endswith(" (exact)")
    assert "  - files changed: jax/_src/lax/linalg.py" in text
    assert f"- compare: https://github.com/jax-ml/jax/compare/{LAST}...{FIRST}" in text


def test_a_fix_is_worded_the_other_way_round() -> None:
    text = "\n".join(commit_section(found_commit(), fix=True, crash="skip", script=False))
    assert "- last bad commit: " in text
    assert "- first good commit: " in text


def test_a_short_list_names_its_skipped_commits_up_to_twenty_and_counts_the_rest() -> None:
    skipped = tuple(f"{n:040x}" for n in range(1, 24))
    text = section(found_commit(ambiguous=skipped))
    assert "**Answer: a short list of commits.**" in text
    assert " (exact)" not in text  # not exact: no claim that it is
    line = next(line for line in text.splitlines() if line.startswith("- skipped between them"))
    assert line.count(", ") == 19
    assert line.endswith(" and 3 more")


def test_a_long_file_list_is_cut_at_twenty_five_and_an_empty_one_says_none() -> None:
    many = tuple(f"jax/f{n}.py" for n in range(30))
    long = section(found_commit(first=info(FIRST, files=many)))
    assert "jax/f24.py …" in long
    assert "jax/f25.py" not in long
    assert "  - files changed: none" in section(found_commit(first=info(FIRST, files=())))


def test_every_caveat_of_the_search_is_said() -> None:
    inner = CommitLevel(CommitRange(LAST, (FIRST,), "the merge's branch, 3 commits"), [],
                        BoundsProblem("unchanged", FIRST, BAD, GOOD, "its ends agree"))
    outer_unprobed = found_commit(levels=(inner,), off_line=tuple(f"{n:040x}" for n in range(1, 23)),
                                  runnable_checks=(4, 12.34))
    outer_unprobed.levels[0].unprobed = ["e" * 40, "f" * 40]
    outer_unprobed.levels[0].old_end_taken = OLD_END
    outer_unprobed.observations[NEWEST] = observed("ran", "inconclusive", "r", jax_cannot_run="ImportError: x")
    text = section(outer_unprobed)
    assert "- 2 commits were left unrun: the search stopped probing after its budget of skipped probes" in text
    off_line = next(line for line in text.splitlines() if line.startswith("- on the older tag's branch"))
    assert off_line.endswith(" and 2 more")
    assert off_line.split(": ", 1)[1].count(", ") == 19
    assert f"- the old end {OLD_END[:10]} was not run: the change lies between two commits" in text
    assert "- the merge's branch, 3 commits: its ends agree" in text
    assert f"- 1 probes where JAX itself could not run were counted as neither good nor bad: {NEWEST[:10]}: " \
           "ImportError: x" in text
    assert "- 4 (commit, jaxlib) pairs were laid over only to ask whether JAX runs there (12.3 s): which commits run " \
           "on which build was found by this run's runnability checks" in text


def test_a_build_dependent_commit_and_a_switch_of_builds_say_why() -> None:
    dependent = section(found_commit(tie=TieBreak("build-dependent", None, BUILT, FRESH, BAD, why="it gates on 334")))
    assert "**Answer: the commit, with the newer jaxlib only.**" in dependent
    assert "- Build dependence: it gates on 334." in dependent
    switched = section(found_commit(tie=TieBreak("python", None, BUILT, FRESH, BAD, why="bad on both")))
    assert "- The probes switched jaxlib builds at this commit, so it was run on the other build too: bad on both." \
           in switched


def test_not_in_python_reads_as_where_to_look_next_and_names_the_switch_as_no_cause() -> None:
    compiled = CompiledChange("0.5.1", "0.5.3", "abc123", None, tuple(f"jaxlib/x{n}.cc" for n in range(33)))
    found = found_commit(tie=TieBreak("binary", None, BUILT, FRESH, BAD, why="the same Python is good and bad"),
                         compiled=compiled, extension_versions={"0.5.1": 330})
    lines = commit_section(found, fix=False, crash="skip", script=False)
    assert "**Answer: not in JAX's Python.**" in lines
    assert "- Not in JAX's Python: the same Python is good and bad; the change is in the compiled jaxlib." in lines
    assert "- jaxlib releases: 0.5.1 → 0.5.3 (extension version 330 → ?)" in lines  # one version unknown: "?"
    assert "- XLA revision at the two ends: abc123 → not pinned" in lines  # no compare link without both ends
    assert any(line.startswith("- non-Python files under jaxlib/ changed in the range: ") and
               line.endswith("jaxlib/x29.cc (and 3 more)") for line in lines)
    assert "- no JAX commit in the range gates on the new binary version or says which issue it fixes" in lines
    assert f"- where the search's probes switched builds (not a cause): {LAST[:10]} (good) → {FIRST[:10]} (bad)" \
           in lines
    assert not any(line.startswith("- first bad commit") for line in lines)  # no commit offered as the cause


def test_leads_are_listed_as_leads_with_the_note() -> None:
    compiled = CompiledChange("0.5.1", "0.5.3", "abc", "def", ())
    found = found_commit(tie=TieBreak("binary", None, BUILT, FRESH, BAD), compiled=compiled,
                         leads=[Lead(NEWEST, "x" * 100, "gates on jaxlib_extension_version >= 334")],
                         leads_note="the clone is partial")
    lines = commit_section(found, fix=False, crash="skip", script=False)
    assert f"- lead (read first, not an answer): {NEWEST[:10]} \"{'x' * 80}\" — gates on jaxlib_extension_version " \
           ">= 334" in lines
    assert "- the clone is partial" in lines
    assert "- non-Python files under jaxlib/ changed in the range: none" in lines
    assert any("https://github.com/openxla/xla/compare/abc...def" in line for line in lines)


def test_a_search_that_stopped_at_its_ends_says_why_and_names_nothing() -> None:
    stopped = found_commit()
    stopped.levels[0].problem = BoundsProblem("unchanged", FIRST, BAD, GOOD, "the newer tag is still good")
    lines = commit_section(stopped, fix=False, crash="skip", script=False)
    assert "**Answer: stopped at the ends.**" in lines
    assert "- The range's ends did not behave as the releases did: the newer tag is still good." in lines
    assert not any(line.startswith(("- first", "- last", "- compare")) for line in lines)


def test_the_probe_table_has_the_probes_run_now_and_the_framing_ones_and_counts_the_others() -> None:
    found = found_commit()
    middle = "9" * 40
    found.observations[middle] = observed("ran", "affected", "r", source="cache", by="an earlier bisect")
    found.probed_candidates[middle] = commit(middle, title="a | b " + "y" * 100)
    found.observations[NEWEST] = observed("ran", "affected", "r", source="cache")
    rows = [line for line in commit_section(found, fix=False, crash="skip", script=False) if line.startswith("| ")]
    keys = [row.split(" | ")[0][2:] for row in rows[1:]]  # below the header
    assert keys == [OLD_END[:10], LAST[:10], FIRST[:10], NEWEST[:10]]  # the cache's middle commit: not a row
    assert "| probe cache (earlier run) |" in rows[-1]
    assert "run (reused environment)" in rows[2]
    assert "1 more commits were known before this run" in section(found)
    found.commit_probes.append(middle)  # run now after all: it gets its row, its title's pipe escaped and cut
    middle_row = next(line for line in commit_section(found, fix=False, crash="skip", script=False)
                      if line.startswith(f"| {middle[:10]}"))
    assert "a \\| b yyy" in middle_row
    assert middle_row.count(" | ") == 6
    assert "| probe cache (an earlier bisect) |" in middle_row


def test_an_end_that_could_not_run_is_said_to_have_not_run_never_to_have_behaved_otherwise() -> None:
    stopped = found_commit()
    stopped.levels[0].problem = BoundsProblem("untestable", OLD_END, ProbeOutcome.SKIP, GOOD, "the oldest version ... skip")
    stopped.observations[OLD_END] = observed("ran", "inconclusive", "r", jax_cannot_run="ImportError: no _jax")
    lines = commit_section(stopped, fix=False, crash="skip", script=False)
    assert f"- The range's old end {OLD_END[:10]} could not run here (ImportError: no _jax), so no commit between " \
           "the releases was searched from it." in lines
    assert not any("did not behave" in line for line in lines)


def test_an_end_where_jax_ran_and_the_check_could_not_tell_is_said_as_inconclusive_not_as_not_run() -> None:
    # Issue 58: a check that matched the reported error word for word was inconclusive at the old end (another tracer
    # repr), and the report said "could not run here" though JAX ran there.
    stopped = found_commit()
    stopped.levels[0].problem = BoundsProblem("untestable", OLD_END, ProbeOutcome.SKIP, GOOD, "the oldest version ... skip")
    stopped.observations[OLD_END] = observed("ran", "inconclusive", "the script failed otherwise: it raised TypeError")
    lines = commit_section(stopped, fix=False, crash="skip", script=False)
    assert f"- The range's old end {OLD_END[:10]} ran, and the check was inconclusive there (the script failed " \
           "otherwise: it raised TypeError), so no commit between the releases was searched from it: the check " \
           "cannot tell the bug at that end, not JAX that could not run." in lines
    assert not any("could not run here" in line for line in lines)


def test_a_build_matters_answer_names_the_untested_span_with_its_probes_and_leads() -> None:
    probes = (PairProbe(LAST, "0.5.1", "bad"), PairProbe(LAST, "0.5.3", "good"),
              PairProbe(FIRST, "0.5.3", "good"))
    untested = Untested(OLD_END, LAST, 206, "0.5.3", "JAX refuses jaxlib 0.5.3", FIRST)
    compiled = CompiledChange("0.5.1", "0.5.3", None, None, ())
    found = found_commit(tie=TieBreak("untested", None, BUILT, FRESH, GOOD, why="the build matters: x",
                                      evidence=probes, untested=untested),
                         compiled=compiled, leads=[Lead("2" * 40, "Deprecate alpha", "adds the gate `g`")])
    text = section(found)
    assert "**Answer: the build matters; whether JAX's Python needs the newer jaxlib is untested.**" in text
    assert f"  - probes: {LAST[:10]} on jaxlib 0.5.1: bad; {LAST[:10]} on jaxlib 0.5.3: good; {FIRST[:10]} on " \
           "jaxlib 0.5.3: good" in text
    assert "- lead (read first, not an answer): 2222222222 \"Deprecate alpha\" — adds the gate `g`" in text
    assert "Not in JAX's Python" not in text
    assert "- first bad commit" not in text


def test_a_patch_laid_on_the_same_xla_revision_is_named_as_the_compiled_change_and_each_probe_says_its_part() -> None:
    """jax-v0.8.3 is jax-v0.8.2 with an XLA patch: the same XLA revision at both ends, no compare link to itself."""
    compiled = CompiledChange("0.8.2", "0.8.3", "913ae2", "913ae2", (),
                              ("third_party/xla/coordination_service_config_fix.patch",))
    evidence = (PairProbe(LAST, "0.8.2", "bad"), PairProbe(FIRST, "0.8.3", "good", note="the release's own probe"))
    found = found_commit(tie=TieBreak("binary", None, BUILT, FRESH, BAD, why="same Python", evidence=evidence),
                         compiled=compiled)
    lines = commit_section(found, fix=True, crash="skip", script=True)
    assert "- XLA revision at the two ends: 913ae2 → 913ae2" in lines
    assert ("- patches JAX's build lays on XLA, changed in the range: third_party/xla/coordination_service_config_fix"
            ".patch (the XLA revision is the same at both ends: these are the compiled change)") in lines
    assert f"  - probes: {LAST[:10]} on jaxlib 0.8.2: bad; {FIRST[:10]} on jaxlib 0.8.3: good (the release's own " \
           "probe)" in lines


def test_a_commit_found_with_jax_alone_says_so_in_its_pair_and_rows() -> None:
    # 0.9.2 -> 0.10.0: past the 135th commit only the commit's jax/ runs on jaxlib 0.9.2 (issue 49).
    found = found_commit()
    for key in (LAST, FIRST):
        found.probed_candidates[key] = commit(key, laid=JAX_ALONE)
    text = section(found)
    assert "**Answer: the commit.**" in text
    assert (f"  - probe pair: {LAST[:10]} on jaxlib 0.5.1 (jax/ alone): good; "
            f"{FIRST[:10]} on jaxlib 0.5.1 (jax/ alone): bad") in text
    assert "| 0.5.1 (jax/ alone) | bad (affected) |" in text


def test_a_pair_laid_apart_is_a_range_never_a_commit() -> None:
    # Its parent ran with its jaxlib Python, the commit with jax/ alone: the change may follow what was laid.
    found = found_commit()
    found.probed_candidates[FIRST] = commit(FIRST, laid=JAX_ALONE)
    assert found.verdict == "short-list"
    text = section(found)
    assert "(exact)" not in text
    assert "  - laid apart: jax/ and jaxlib Python for the first, jax/ alone for the second" in text


def test_where_the_binary_and_the_python_were_not_told_apart_the_range_is_given_and_no_commit_in_bold() -> None:
    found = found_commit(tie=TieBreak("unknown", None, BUILT, FRESH, None, "the outcome changed where the probes "
                                      "switched builds, and cccccccccc on jaxlib 0.5.1 could not run even forced"))
    text = section(found)
    assert "**Answer: a range: the jaxlib binary and JAX's Python not told apart.**" in text
    assert "- Neither the binary nor a commit is named: the outcome changed where" in text
    assert f"- the range: last good {LAST[:10]} (jaxlib 0.5.1) … first bad {FIRST[:10]} (jaxlib 0.5.1)" in text
    assert f"**{FIRST}**" not in text
    assert "(exact)" not in text


def test_a_branch_fix_is_named_with_its_twin_and_the_first_release_carrying_each() -> None:
    found = found_commit()
    found.main_line = (info(NEWEST), "same title, author and author date")
    found.released = ("0.4.37", None)
    text = section(found)
    assert ("  - a release branch's copy, first released in jax 0.4.37; on the main line (same title, author and "
            f"author date): **{NEWEST}**") in text
    assert text.split("a release branch's copy", 1)[1].split("\n", 1)[0].endswith("; in no release tagged here yet")


def test_a_main_line_fix_is_named_with_its_release_branch_copy_which_reached_users_first() -> None:
    # Issue 58, twins both ways: bd77a703fd on main (first in 0.4.38) has its copy 65b6088411 on 0.4.37's branch.
    found = found_commit()
    found.released = ("0.4.38", None)
    found.branch_copies = [(info(NEWEST), "same title, author and author date", "0.4.37")]
    text = section(found)
    assert ("  - on the main line, first released in jax 0.4.38; a copy on a release branch (same title, author and "
            f"author date): **{NEWEST}**") in text
    assert text.split("a copy on a release branch", 1)[1].split("\n", 1)[0].endswith("; first released in jax 0.4.37")


def test_a_pair_probe_says_when_only_jax_was_laid() -> None:
    probe = PairProbe(FIRST, "0.9.2", "good", laid=JAX_ALONE)
    assert probe.text() == f"{FIRST[:10]} on jaxlib 0.9.2 (jax/ alone): good"
