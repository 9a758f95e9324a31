"""kit.bisect.report.markdown: what a bisect found, as markdown to paste into an issue and as JSON (from findings alone)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kit.bisect.report import markdown as report
from kit.bisect.bounds import Bounds
from kit.bisect.candidates import Candidate
from kit.bisect.report.finding import REPORT_SCHEMA, BisectFinding
from kit.bisect.options import BisectOptions
from kit.user_paths import shown_path
from kit.bisect.observation import Observation
from kit.bisect.search import BisectResult, ProbeOutcome, Transition
from tests.observations import observed

VERSIONS = ["0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]
GOOD, BAD, SKIP = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP


def candidate(version: str, **changes: Any) -> Candidate:
    fields: dict[str, Any] = {"requirements": (f"jax[cpu]=={version}", "scipy"), "exclude_newer": None,
                              "python": "3.13", "jaxlib": version, "uploaded": "2025-03-01"}
    return Candidate(version, **{**fields, **changes})


def finding(outcomes: dict[str, ProbeOutcome], observations: dict[str, Observation], *, good: str = "0.6.0",
            bad: str = "0.5.0", result: BisectResult[str] | None = None, transitions: list[Transition[str]] = (),
            candidates: list[Candidate] | None = None, **options: Any) -> BisectFinding:
    bounds = Bounds.of_releases(good, bad, how="bounds from the command line")
    opts = BisectOptions(check=options.pop("check", "scaling"), script=options.pop("script", None), good=good, bad=bad,
                   argv=("--check", "scaling", "--good", good, "--bad", bad), **options)
    return BisectFinding("scaling-good0.6.0-bad0.5.0-cpu", opts.specs, bounds,
                   candidates or [candidate(v) for v in VERSIONS], outcomes, observations,
                   [v for v, o in observations.items() if o.came_from.source == "run"], result, list(transitions), seconds=12.3)


def ran(verdict: str, **fields: Any) -> Observation:
    return observed("ran", verdict, f"measured {verdict}", **{"environment": "reused", "seconds": 4.0, **fields})


FIX = finding(  # a fix hunt: bad is the older end; 0.5.1 crashed, so the change is 0.5.1 or 0.5.2
    {"0.5.0": BAD, "0.5.1": SKIP, "0.5.2": GOOD, "0.6.0": GOOD},
    {"0.5.0": ran("affected"), "0.5.1": observed("crashed", None, "the repro crashed (exit code 1): boom"),
     "0.5.2": ran("unaffected", environment="built"), "0.6.0": ran("unaffected", source="cache", by="earlier")},
    result=BisectResult("0.5.0", "0.5.2", ["0.5.1"], ["0.5.0", "0.5.1", "0.5.2"], {}, old_outcome=BAD))


def test_the_answer_is_worded_for_the_direction_hunted() -> None:
    markdown = report.render_markdown(FIX, [])
    assert "given good = 0.6.0, bad = 0.5.0 (hunting a fix)." in markdown
    assert "- last bad release: **jax 0.5.0**\n- first good release: **jax 0.5.2**\n" in markdown
    assert "- compare: https://github.com/jax-ml/jax/compare/jax-v0.5.0...jax-v0.5.2" in markdown
    assert ("- ambiguous: the change is in one of 0.5.1, 0.5.2 (skipped releases between the two could hold it)"
            in markdown)
    regression = finding({"0.5.0": GOOD, "0.6.0": BAD}, {}, good="0.5.0", bad="0.6.0",
                         result=BisectResult("0.5.3", "0.6.0", [], [], {}))
    text = report.render_markdown(regression, [])
    assert "(hunting a regression)" in text
    assert "- first bad release: **jax 0.6.0** (exact)" in text
    assert "ambiguous" not in text


def test_the_probe_table_says_how_each_release_was_answered() -> None:
    rows = {line.split(" | ")[0]: line for line in report.render_markdown(FIX, []).splitlines()
            if line.startswith("| 0.")}
    assert rows["| 0.5.1"].endswith("| crashed, counted skip by --crash skip | run (no environment, 0 s) "
                                    "| the repro crashed (exit code 1): boom |")
    assert "| good (unaffected) | run (built environment, 4 s) |" in rows["| 0.5.2"]
    assert "| probe cache (earlier, ) |" in rows["| 0.6.0"]
    assert rows["| 0.5.3"] == "| 0.5.3 | 2025-03-01 | 0.5.3 | 3.13 | not probed | | |"
    markdown = report.render_markdown(FIX, [])
    assert "Skipped (yanked, not installable or unknown, crashed, inconclusive or exit 125): 0.5.1." in markdown
    assert markdown.rstrip().endswith("## Reproduce with:\n\n    nox -s bisect -- --check scaling --good 0.6.0 "
                                      "--bad 0.5.0")


def test_a_reason_cannot_break_the_table() -> None:
    broken = finding({"0.5.0": BAD}, {"0.5.0": observed("crashed", None, "a | b\nc" + "x" * 300)})
    row = next(line for line in report.render_markdown(broken, []).splitlines() if line.startswith("| 0.5.0"))
    assert "a \\| b c" in row
    assert row.count(" | ") == 6
    assert len(row) < 400


def test_all_lists_every_transition_and_says_when_the_bounds_did_not_test_as_given() -> None:
    scan = finding({"0.5.0": GOOD, "0.5.1": BAD, "0.5.2": SKIP, "0.5.3": GOOD, "0.6.0": BAD},
                   {v: ran("x") for v in VERSIONS}, scan=True,
                   transitions=[Transition("0.5.0", "0.5.1", GOOD, BAD), Transition("0.5.1", "0.5.3", BAD, GOOD, ["0.5.2"]),
                                Transition("0.5.3", "0.6.0", GOOD, BAD)])
    markdown = report.render_markdown(scan, [])
    assert "**--bad 0.5.0 tested good (unaffected), not bad**" in markdown
    assert "- **--good 0.6.0 tested bad (affected), not good**: the labels below are what each release tested" in markdown
    assert "**Non-monotonic**: the outcome changes 3 times" in markdown
    assert ("- jax 0.5.1 (bad (affected)) → jax 0.5.3 (good (unaffected)) (untested between: 0.5.2): "
            "https://github.com/jax-ml/jax/compare/jax-v0.5.1...jax-v0.5.3") in markdown
    assert report.release_versions(scan) == ["0.5.1", "0.5.2", "0.5.3", "0.6.0"]


def test_release_notes_cover_the_suspects_only() -> None:
    assert report.release_versions(FIX) == ["0.5.1", "0.5.2"]


def test_the_candidate_table_says_what_each_release_would_install_before_any_probe() -> None:
    candidates = [candidate("0.5.0"), candidate("0.5.1", yanked="broken wheel"),
                  candidate("0.5.2", problem="https://pypi.org/simple has no jaxlib 0.5.2 wheels", python=None),
                  candidate("0.5.3", python=None)]
    table = report.candidate_table(candidates, BisectOptions("scaling", None, "0.5.3", "0.5.0").specs.search, {"0.5.0"})
    assert table.splitlines() == [
        "4 candidate releases, oldest first; about 4 probes, 1 already known:",
        "  jax 0.5.0      2025-03-01  jaxlib 0.5.0, python 3.13  (known)",
        "  jax 0.5.1      2025-03-01  YANKED (broken wheel): not probed",
        "  jax 0.5.2      2025-03-01  NOT INSTALLABLE: https://pypi.org/simple has no jaxlib 0.5.2 wheels",
        "  jax 0.5.3      2025-03-01  jaxlib 0.5.3, python chosen when probed",
    ]
    scan = report.candidate_table(candidates, BisectOptions("scaling", None, "0.5.3", "0.5.0", scan=True).specs.search, set())
    assert scan.splitlines()[0] == "4 candidate releases, oldest first; 4 probes (--all):"


def test_both_files_are_written_and_the_json_names_its_schema(tmp_path: Path) -> None:
    markdown = report.write_report(tmp_path, FIX, ["notes line"])
    assert (tmp_path / f"bisect-{FIX.name}.md").read_text() == markdown
    data = json.loads((tmp_path / f"bisect-{FIX.name}.json").read_text())
    assert data["schema"] == REPORT_SCHEMA
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.5.0", "0.5.2", ["0.5.1"])
    assert data["outcomes"] == {"0.5.0": "bad", "0.5.1": "skip", "0.5.2": "good", "0.6.0": "good"}
    assert data["environments_built_now"] == ["0.5.2"]
    assert data["answered_by_cache"] == ["0.6.0"]
    assert data["release_notes"] == ["notes line"]
    assert "## Release notes\n\nnotes line\n" in markdown
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


# Where a checkout lives on the machines this kit runs on: none of it belongs in a committed report.
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|home|root|tmp|Users|private|var)/")
ROOT = Path(__file__).resolve().parent.parent


def test_a_script_is_named_relative_to_the_project(tmp_path: Path) -> None:
    inside = tmp_path / "examples" / "repro.py"
    assert shown_path(inside, tmp_path) == "examples/repro.py"
    assert shown_path(Path("/elsewhere/repro.py"), tmp_path) == "/elsewhere/repro.py"  # as the user gave it
    script_run = finding({}, {}, check=None, script=inside, script_shown="examples/repro.py")
    assert "with script `examples/repro.py`;" in report.render_markdown(script_run, [])


def test_a_path_under_the_home_folder_is_shown_from_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert shown_path(tmp_path / "home" / "jax", tmp_path / "project") == "~/jax"
    venv_python = tmp_path / "project" / ".nox" / "jax-envs" / "jax-0.6.0" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to("/usr/bin/python3")  # a venv's python is a link: the venv is what ran, not its target
    assert shown_path(venv_python, tmp_path / "project") == ".nox/jax-envs/jax-0.6.0/bin/python"


def _committed(patterns: list[str]) -> list[Path]:
    """The files git tracks among ``patterns`` (a developer's own runs write git-ignored reports beside them)."""
    found = sorted(p for pattern in patterns for p in (ROOT / "reports").glob(pattern))
    listed = subprocess.run(["git", "ls-files", "-z", "reports"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:  # not a checkout (an unpacked sdist): every file there is the shipped one
        return found
    tracked = {ROOT / name for name in listed.stdout.split("\0") if name}
    return [p for p in found if p in tracked]


def test_committed_reports_hold_no_absolute_path() -> None:
    for committed in _committed(["*.md", "*.json", "results/*.json"]):
        found = ABSOLUTE.findall(committed.read_text(encoding="utf-8"))
        assert not found, f"{committed.name} holds an absolute path ({found[0]}...)"


# --------------------------------------------------------------------------
# A report made for the thread

from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.finding import CommitFinding, CommitLevel, TieBreak
from kit.bisect.report.summary import SCRIPT_LINES, SUMMARY_LINES, bisected_script, summary_lines
from kit.history.commit_range import CommitRange
from kit.history.commits import CommitInfo
from kit.bisect.commits.builds import Build

FIRST_GOOD = "f93c2a1aa51d0d124bf0632eacbe95c261dacd57"
LAST_BAD = "de4d047852986aebc7fd1c0872fb4a11448d9278"


def with_commits(base: BisectFinding) -> BisectFinding:
    """``base`` with a commit phase that named f93c2a1aa5 (PR 26839), both deciding commits on one build."""
    packages = {"jax": "0.5.2.dev", "jaxlib": "0.5.1", "numpy": "2.2.4", "scipy": "1.15.2"}
    build = Build("0.5.2", "0.5.1", "3.13", True, "bad")
    commits = [CommitCandidate(key, (), None, "3.13", "0.5.1", commit=key, build=build, title=title,
                               date="2025-02-27") for key, title in ((LAST_BAD, "int4"), (FIRST_GOOD, "lax.linalg"))]
    level = CommitLevel(CommitRange("b" * 40, (LAST_BAD, FIRST_GOOD), "a line", "jax-v0.5.2", "jax-v0.5.3"), commits,
                        None, BisectResult(LAST_BAD, FIRST_GOOD, [], [], {}, old_outcome=BAD),
                        outcomes={LAST_BAD: BAD, FIRST_GOOD: GOOD})
    found = CommitFinding("a clone", [build], [level], probed_candidates={c.version: c for c in commits},
                          observations={
        LAST_BAD: observed("ran", "affected", "every device factorises the whole batch", jaxlib="0.5.1",
                              python="3.13", packages=packages),
        FIRST_GOOD: observed("ran", "unaffected", "each device factorises only its own share", jaxlib="0.5.1",
                                python="3.13", packages=packages)})
    found.first_different = CommitInfo(FIRST_GOOD, "2025-02-27T08:15:45-08:00", "Dan", "Add and test support for "
                                       "partitioning of batch dimensions in lax.linalg.", 26839, ("jax/_src/lax/linalg.py",))
    found.last_same = CommitInfo(LAST_BAD, "2025-02-27T08:12:57-08:00", "Adrian", "Change int4 packing", None, ())
    base.commits = found
    return base


def commit_fix() -> BisectFinding:
    packages = {"jax": "", "jaxlib": "", "numpy": "2.2.4"}
    return with_commits(finding(
        {"0.5.0": BAD, "0.5.2": BAD, "0.5.3": GOOD, "0.6.0": GOOD},
        {"0.5.0": ran("affected"), "0.5.2": ran("affected", packages={**packages, "jaxlib": "0.5.1"}),
         "0.5.3": ran("unaffected", packages={**packages, "jaxlib": "0.5.3"}), "0.6.0": ran("unaffected")},
        result=BisectResult("0.5.2", "0.5.3", [], [], {}, old_outcome=BAD)))


def test_the_first_ten_lines_hold_the_answer_the_commit_and_the_reproduce_command() -> None:
    head = report.render_markdown(commit_fix(), []).splitlines()[:SUMMARY_LINES]
    text = "\n".join(head)
    assert head[0] == "# Bisect: scaling (cpu): jax 0.5.3 fixed it, commit f93c2a1aa5"
    assert "- **Answer:** first good release **jax 0.5.3** (exact; last bad jax 0.5.2)" in text
    assert ("- **Commit** (exact): **f93c2a1aa5** \"Add and test support for partitioning of batch dimensions in "
            "lax.linalg.\" (2025-02-27, PR #26839 https://github.com/jax-ml/jax/pull/26839)") in text
    assert "- **Reproduce:** `nox -s bisect -- --check scaling --good 0.6.0 --bad 0.5.0`" in text
    assert "- **Environment:** cpu, python 3.13, jaxlib 0.5.1, numpy 2.2.4, scipy 1.15.2; check `scaling`" in text
    assert ("- **First good** (commit f93c2a1aa5 on jaxlib 0.5.1): `each device factorises only its own share`"
            in text)
    assert "- **Last bad** (commit de4d047852 on jaxlib 0.5.1): `every device factorises the whole batch`" in text


def test_everything_after_the_summary_and_script_is_folded_but_the_reproduce_line() -> None:
    markdown = report.render_markdown(commit_fix(), ["## jax 0.5.3", "", "* a note"])
    after = markdown.split("<details>", 1)[1]
    assert markdown.count("<details>") == markdown.count("</details>") >= 5
    for title in ("The search and its answer", "What else changed", "Commits", "Probes and their cost",
                  "Release notes"):
        assert f"<details>\n<summary>{title}</summary>\n" in markdown
    outside = [part.split("</details>", 1)[-1] for part in after.split("<details>")]
    assert "".join(outside).strip().startswith("## Reproduce with:")


def test_what_the_commit_phase_held_fixed_is_not_offered_for_pin() -> None:
    markdown = report.render_markdown(commit_fix(), [])
    assert ("Ruled out by the commit phase, whose two deciding commits ran with the same version of each: "
            "jaxlib 0.5.1.") in markdown
    assert "--pin" not in markdown.split("What else changed", 1)[1].split("</details>", 1)[0]


def test_a_short_script_is_quoted_and_a_long_one_named_by_path_and_hash(tmp_path: Path) -> None:
    short, long = tmp_path / "short.py", tmp_path / "long.py"
    short.write_text("import jax\nprint(jax.numpy.linalg.slogdet(jax.numpy.eye(2)))\n")
    long.write_text("x = 1\n" * (SCRIPT_LINES + 1))
    quoted = report.render_markdown(FIX, [], bisected_script(short, "short.py"))
    assert "## The script\n\n`short.py` (sha256 " in quoted
    assert "```python\nimport jax\nprint(jax.numpy.linalg.slogdet(jax.numpy.eye(2)))\n```" in quoted
    assert quoted.index("## The script") < quoted.index("<details>")
    named = report.render_markdown(FIX, [], bisected_script(long, "long.py"))
    assert f"`long.py`: {SCRIPT_LINES + 1} lines, sha256 " in named
    assert "x = 1" not in named


def test_a_failing_deciding_probe_is_quoted_by_what_it_died_of() -> None:
    died = observed("ran", "affected", "the script exited 1 (affected)", exception="TypeError: f() got two",
                       output_tail=["Traceback (most recent call last):", "  File 'r.py'", "TypeError: f() got two"])
    script_fix = finding({"0.5.0": BAD, "0.5.2": GOOD}, {"0.5.0": died, "0.5.2": ran("unaffected")},
                         result=BisectResult("0.5.0", "0.5.2", [], [], {}, old_outcome=BAD))
    assert "- **Last bad** (jax 0.5.0): `TypeError: f() got two`" in summary_lines(script_fix)


def test_out_writes_the_reports_into_another_folder_and_no_absolute_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    out = tmp_path / "elsewhere" / "reports"
    leaky = finding({"0.5.0": BAD, "0.5.2": GOOD},
                    {"0.5.0": ran("affected", output_tail=[f'  File "{project}/.nox/jax-envs/x/jax/core.py"',
                                                           f"  in {Path.home()}/src/thing.py"]),
                     "0.5.2": ran("unaffected")}, result=BisectResult("0.5.0", "0.5.2", [], [], {}, old_outcome=BAD))
    report.write_report(out, leaky, [], None, report.machine_paths(project))
    assert json.loads((out / f"bisect-{leaky.name}.json").read_text())["summary"] == summary_lines(leaky)
    for written in out.glob("bisect-*"):
        text = written.read_text()
        assert str(project) not in text and str(Path.home()) + "/" not in text, written.name
    assert '.nox/jax-envs/x/jax/core.py' in (out / f"bisect-{leaky.name}.md").read_text()


def test_the_summary_of_all_lists_each_change_and_a_stop_says_why() -> None:
    changes = finding({"0.5.0": GOOD, "0.5.1": BAD, "0.5.2": GOOD},
                      {v: ran("unaffected" if o is GOOD else "affected") for v, o in
                       (("0.5.0", GOOD), ("0.5.1", BAD), ("0.5.2", GOOD))},
                      transitions=[Transition("0.5.0", "0.5.1", GOOD, BAD, []), Transition("0.5.1", "0.5.2", BAD, GOOD, [])],
                      scan=True)
    lines = summary_lines(changes)
    assert lines[0] == "# Bisect: scaling (cpu): the outcome changes 2 times (--all)"
    assert "- **Answer:** jax 0.5.0 (good) → 0.5.1 (bad), jax 0.5.1 (bad) → 0.5.2 (good) (every candidate probed)" in lines
    stopped = finding({}, {})
    stopped.stopped = "--bad 0.5.0 is good (unaffected), not bad: measured (move --bad away from 0.6.0)"
    assert summary_lines(stopped)[2] == f"- **Stopped:** {stopped.stopped}"


def test_not_in_python_names_no_commit_in_the_summary() -> None:
    binary = commit_fix()
    assert binary.commits is not None
    binary.commits.tie_break = TieBreak("binary", None, Build("0.5.2", "0.5.1", "3.13", True, "bad"),
                                        Build("0.5.3", "0.5.3", "3.13", True, "good"), BAD)
    lines = summary_lines(binary)
    assert lines[0] == "# Bisect: scaling (cpu): jax 0.5.3 fixed it"
    assert "- **Commit:** not in JAX's Python: the jaxlib binary (see *Commits* below)" in lines
    assert not any(FIRST_GOOD[:10] in line for line in lines[:4])


def test_a_path_is_rewritten_where_it_starts_never_inside_one_already_relative() -> None:
    paths = {"/tmp/out": "../../tmp/out", "/work/p/": ""}
    text = "--out ../../tmp/out` and --out /tmp/out and \"/tmp/out/x.md\" and /tmp/outer and /work/p/a.py"
    assert report.without_machine_paths(text, paths) == (
        "--out ../../tmp/out` and --out ../../tmp/out and \"../../tmp/out/x.md\" and /tmp/outer and a.py")



def test_the_summary_names_the_commits_twin_either_way() -> None:
    # Issue 58: 65b6088411 on 0.4.37's branch was named without bd77a703fd, its twin on main, and the other way.
    twin = CommitInfo("bd77a703fd" + "0" * 30, "2024-12-09T10:44:28-08:00", "Ivy", "Avoid index out of range", None, ())
    fixed = commit_fix()
    assert fixed.commits is not None
    fixed.commits.main_line, fixed.commits.released = (twin, "same title, author and author date"), ("0.4.37", "0.4.38")
    line = next(x for x in report.render_markdown(fixed, []).splitlines() if x.startswith("- **Commit**"))
    assert line.endswith("; on the main line: bd77a703fd (first in jax 0.4.38)")
    fixed.commits.main_line, fixed.commits.released = None, ("0.4.38", None)
    fixed.commits.branch_copies = [(twin, "same title, author and author date", "0.4.37")]
    line = next(x for x in report.render_markdown(fixed, []).splitlines() if x.startswith("- **Commit**"))
    assert line.endswith("; also on a release branch: bd77a703fd (first in jax 0.4.37)")
