"""The wording users read, pinned whole in golden files (tests/golden/, compared by tests/golden.py).

The other suites assert on what a run decided (a bisect's JSON, a model's fields); the sentences
around it are pinned here, once each, so a reworded message is one diff to read and one
``--update-golden`` to accept, and a refactor that changes no wording leaves every golden as it is.
Each text comes from the fakes the other suites use, kept small so each test takes well under 2 s:

- the markdown report of a release bisect on the fake machine (`tests.fake_releases`);
- the console of a quiet release bisect there, as a terminal shows it (printed and logged lines in order);
- the markdown report of a commit bisect, from a finding built by hand (a whole commit bisect takes seconds);
- reports/matrix.md as `nox -s report` writes it from the committed fixture records (`tests.record_samples`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from kit import cli
from kit.bisect import driver
from kit.bisect.bounds import Bounds
from kit.bisect.candidates import Candidate
from kit.bisect.commits.builds import Build
from kit.bisect.commits.candidates import CommitCandidate
from kit.bisect.commits.finding import CommitFinding, CommitLevel
from kit.bisect.options import BisectOptions
from kit.bisect.observation import Observation
from tests.observations import observed
from kit.bisect.report import changelog
from kit.bisect.report import markdown as bisect_markdown
from kit.bisect.report.finding import BisectFinding
from kit.bisect.search import BisectResult, ProbeOutcome
from kit.history.commit_range import CommitRange
from kit.history.commits import CommitInfo
from repro.environment import jax_variables
from tests.bisect_machine import CHECKS
from tests.fake_releases import FakeReleases
from tests.golden import CHECKOUT, assert_golden
from tests.record_samples import FIXTURES, fixture_matrix

@pytest.fixture
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No release notes fetched, none of the caller's JAX/XLA variables in the probes' identities, and a home
    folder of the test's own: a report names a path under home as ``~/...``, and pytest's temp folder can be there."""
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    for name in jax_variables():
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


# Three probes each on the fake machine: a probe costs about half a second there (its environment's first run).


@pytest.mark.machine
def test_a_release_bisect_report(fake_releases: Callable[..., FakeReleases], hermetic: None) -> None:
    """A regression at 0.5.2 whose neighbour 0.5.1 has no jaxlib wheels: the answer, the ambiguity, the probes."""
    versions = ["0.5.0", "0.5.1", "0.5.2", "0.6.0"]
    releases = fake_releases(versions, matrix_releases=["0.5.0", "0.6.0"], checks=CHECKS, not_installable=["0.5.1"])
    for version, verdict in (("0.5.0", "unaffected"), ("0.5.2", "affected"), ("0.6.0", "affected")):
        releases.behave(version, verdict)
    assert driver.main(releases.matrix, ["--check", "scaling", "--good", "0.5.0", "--bad", "0.6.0"],
                       lambda line: None) == 0
    report, = releases.matrix.results_dir.parent.glob("bisect-*.md")
    assert_golden("bisect-release.md", report.read_text(encoding="utf-8"))


@pytest.mark.machine
def test_the_quiet_console_of_a_fix_hunt(fake_releases: Callable[..., FakeReleases], hermetic: None,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Bad is the older end, fixed in 0.6.0: the plan, one line a probe, the summary, in the order a terminal shows."""
    versions = ["0.5.0", "0.5.2", "0.6.0"]
    releases = fake_releases(versions, matrix_releases=["0.5.0", "0.6.0"], checks=CHECKS)
    for version, verdict in zip(versions, ["affected", "affected", "unaffected"]):
        releases.behave(version, verdict)
    assert driver.main(releases.matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.5.0"], print) == 0
    assert_golden("bisect-console.txt", capsys.readouterr().out)


FIVE = ["0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]
"""The releases of the commit bisect's finding."""
LAST_BAD = "de4d047852986aebc7fd1c0872fb4a11448d9278"
FIRST_GOOD = "f93c2a1aa51d0d124bf0632eacbe95c261dacd57"


def commit_bisect() -> BisectFinding:
    """jax 0.5.3 fixed it; the commit phase over jax-v0.5.2 … jax-v0.5.3 named f93c2a1aa5 (PR 26839), exactly."""
    options = BisectOptions(check="scaling", script=None, good="0.6.0", bad="0.5.0", commits=True,
                      argv=("--check", "scaling", "--good", "0.6.0", "--bad", "0.5.0", "--commits"))
    candidates = [Candidate(v, (f"jax[cpu]=={v}", "scipy"), None, "3.13", v, uploaded=f"2025-0{i + 1}-01")
                  for i, v in enumerate(FIVE)]
    installed = {"numpy": "2.2.4", "scipy": "1.15.2"}

    def ran(verdict: str, jaxlib: str, reason: str) -> Observation:
        return observed("ran", verdict, reason, environment="reused", seconds=4.0, python="3.13", jaxlib=jaxlib,
                           packages={"jax": "", "jaxlib": jaxlib, **installed})

    whole, share = "every device factorises the whole batch", "each device factorises only its own share"
    observations = {"0.5.0": ran("affected", "0.5.0", whole), "0.5.2": ran("affected", "0.5.1", whole),
                    "0.5.3": ran("unaffected", "0.5.3", share), "0.6.0": ran("unaffected", "0.6.0", share)}
    outcomes = {"0.5.0": ProbeOutcome.BAD, "0.5.2": ProbeOutcome.BAD, "0.5.3": ProbeOutcome.GOOD, "0.6.0": ProbeOutcome.GOOD}
    found = BisectFinding("scaling-good0.6.0-bad0.5.0-cpu-commits", options.specs,
                    Bounds.of_releases("0.6.0", "0.5.0", how="bounds from the command line"), candidates, outcomes,
                    observations, list(observations), BisectResult("0.5.2", "0.5.3", [], [], {}, old_outcome=ProbeOutcome.BAD),
                    seconds=31.5, rounds=[["0.5.0"], ["0.6.0"], ["0.5.2"], ["0.5.3"]])
    found.commits = commit_phase(whole, share)
    return found


def commit_phase(whole: str, share: str) -> CommitFinding:
    """Two commits on one build (jaxlib 0.5.1 from jax 0.5.2's environment): the last bad and the first good."""
    build = Build("0.5.2", "0.5.1", "3.13", True, "bad")
    commits = [CommitCandidate(key, (), None, "3.13", "0.5.1", commit=key, build=build, title=title,
                               date="2025-02-27") for key, title in ((LAST_BAD, "int4"), (FIRST_GOOD, "lax.linalg"))]
    level = CommitLevel(CommitRange("b" * 40, (LAST_BAD, FIRST_GOOD), "2 commits on the main line", "jax-v0.5.2",
                                    "jax-v0.5.3"), commits, None,
                        BisectResult(LAST_BAD, FIRST_GOOD, [], [], {}, old_outcome=ProbeOutcome.BAD),
                        outcomes={LAST_BAD: ProbeOutcome.BAD, FIRST_GOOD: ProbeOutcome.GOOD})
    packages = {"jax": "0.5.2.dev", "jaxlib": "0.5.1", "numpy": "2.2.4", "scipy": "1.15.2"}
    observations = {key: observed("ran", verdict, reason, environment="reused", seconds=2.5, jaxlib="0.5.1",
                                     python="3.13", packages=packages)
                    for key, verdict, reason in ((LAST_BAD, "affected", whole), (FIRST_GOOD, "unaffected", share))}
    found = CommitFinding("a clone", [build], [level], commit_probes=[LAST_BAD, FIRST_GOOD], observations=observations,
                          probed_candidates={c.version: c for c in commits}, seconds=5.0)
    found.first_different = CommitInfo(FIRST_GOOD, "2025-02-27T08:15:45-08:00", "Dan", "Add and test support for "
                                       "partitioning of batch dimensions in lax.linalg.", 26839,
                                       ("jax/_src/lax/linalg.py",))
    found.last_same = CommitInfo(LAST_BAD, "2025-02-27T08:12:57-08:00", "Adrian", "Change int4 packing", None, ())
    return found


def test_a_commit_bisect_report() -> None:
    assert_golden("bisect-commits.md", bisect_markdown.render_markdown(commit_bisect(), []))


FIXTURE_MATRIX = fixture_matrix("0.4.35", "0.6.0")
"""The parameters the fixture records ran with, as matrix.toml configures them."""


def test_the_matrix_report_of_the_fixture_records(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`nox -s report` over the fixture records, with a catalogue of four of this repository's entries to cite and
    list (tests/fixtures/known: the golden page must not change with each entry the catalogue gains)."""
    monkeypatch.setattr("kit.config.catalogue_folder", lambda: CHECKOUT / "tests" / "fixtures" / "known")
    (tmp_path / "matrix.toml").write_text(FIXTURE_MATRIX)
    argv = ["report", "--results", str(FIXTURES), "--out", str(tmp_path / "out"), "--no-plots"]
    assert cli.main(argv, matrix_path=str(tmp_path / "matrix.toml")) == 0
    capsys.readouterr()  # what it wrote and what it skipped: the other suites' business
    assert_golden("matrix.md", (tmp_path / "out" / "matrix.md").read_text(encoding="utf-8"))
