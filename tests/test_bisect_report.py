"""kit.bisect.report: what a bisect found, as markdown to paste into an issue and as JSON (from findings alone)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kit.bisect import report
from kit.bisect.bounds import Bounds
from kit.bisect.candidates import Candidate
from kit.bisect.finding import REPORT_SCHEMA, Finding
from kit.bisect.options import Options
from kit.user_paths import shown_path
from kit.bisect.outcomes import Observation
from kit.bisect.search import BisectResult, Outcome, Transition

VERSIONS = ["0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]
GOOD, BAD, SKIP = Outcome.GOOD, Outcome.BAD, Outcome.SKIP


def candidate(version: str, **changes: Any) -> Candidate:
    fields: dict[str, Any] = {"requirements": (f"jax[cpu]=={version}", "scipy"), "exclude_newer": None,
                              "python": "3.13", "jaxlib": version, "uploaded": "2025-03-01"}
    return Candidate(version, **{**fields, **changes})


def finding(outcomes: dict[str, Outcome], observations: dict[str, Observation], *, good: str = "0.6.0",
            bad: str = "0.5.0", result: BisectResult[str] | None = None, transitions: list[Transition[str]] = (),
            candidates: list[Candidate] | None = None, **options: Any) -> Finding:
    bounds = Bounds.of_releases(good, bad, how="bounds from the command line")
    opts = Options(check=options.pop("check", "scaling"), script=options.pop("script", None), bounds=bounds,
                   argv=("--check", "scaling", "--good", good, "--bad", bad), **options)
    return Finding("scaling-good0.6.0-bad0.5.0-cpu", opts, bounds,
                   candidates or [candidate(v) for v in VERSIONS], outcomes, observations,
                   [v for v, o in observations.items() if o.source == "run"], result, list(transitions), seconds=12.3)


def ran(verdict: str, **fields: Any) -> Observation:
    return Observation("ran", verdict, f"measured {verdict}", **{"environment": "reused", "seconds": 4.0, **fields})


FIX = finding(  # a fix hunt: bad is the older end; 0.5.1 crashed, so the change is 0.5.1 or 0.5.2
    {"0.5.0": BAD, "0.5.1": SKIP, "0.5.2": GOOD, "0.6.0": GOOD},
    {"0.5.0": ran("affected"), "0.5.1": Observation("crashed", None, "the repro crashed (exit code 1): boom"),
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
    assert "(hunting a regression)" in text and "- first bad release: **jax 0.6.0** (exact)" in text
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
    broken = finding({"0.5.0": BAD}, {"0.5.0": Observation("crashed", None, "a | b\nc" + "x" * 300)})
    row = next(line for line in report.render_markdown(broken, []).splitlines() if line.startswith("| 0.5.0"))
    assert "a \\| b c" in row and row.count(" | ") == 6 and len(row) < 400


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
    table = report.candidate_table(candidates, Options("scaling", None, Bounds.of_releases("0.5.3", "0.5.0")), {"0.5.0"})
    assert table.splitlines() == [
        "4 candidate releases, oldest first; about 4 probes, 1 already known:",
        "  jax 0.5.0      2025-03-01  jaxlib 0.5.0, python 3.13  (known)",
        "  jax 0.5.1      2025-03-01  YANKED (broken wheel): not probed",
        "  jax 0.5.2      2025-03-01  NOT INSTALLABLE: https://pypi.org/simple has no jaxlib 0.5.2 wheels",
        "  jax 0.5.3      2025-03-01  jaxlib 0.5.3, python chosen when probed",
    ]
    scan = report.candidate_table(candidates, Options("scaling", None, Bounds.of_releases("0.5.3", "0.5.0"), scan=True), set())
    assert scan.splitlines()[0] == "4 candidate releases, oldest first; 4 probes (--all):"


def test_both_files_are_written_and_the_json_names_its_schema(tmp_path: Path) -> None:
    markdown = report.write_report(tmp_path, FIX, ["notes line"])
    assert (tmp_path / f"bisect-{FIX.name}.md").read_text() == markdown
    data = json.loads((tmp_path / f"bisect-{FIX.name}.json").read_text())
    assert data["schema"] == REPORT_SCHEMA
    assert (data["last_same"], data["first_different"], data["ambiguous"]) == ("0.5.0", "0.5.2", ["0.5.1"])
    assert data["outcomes"] == {"0.5.0": "bad", "0.5.1": "skip", "0.5.2": "good", "0.6.0": "good"}
    assert data["environments_built_now"] == ["0.5.2"] and data["answered_by_cache"] == ["0.6.0"]
    assert data["release_notes"] == ["notes line"] and "## Release notes\n\nnotes line\n" in markdown
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


def test_committed_reports_hold_no_absolute_path() -> None:
    committed_files = sorted((ROOT / "reports").glob("*.md")) + sorted((ROOT / "reports").glob("*.json"))
    for committed in committed_files + sorted((ROOT / "reports" / "results").glob("*.json")):
        found = ABSOLUTE.findall(committed.read_text(encoding="utf-8"))
        assert not found, f"{committed.name} holds an absolute path ({found[0]}...)"
