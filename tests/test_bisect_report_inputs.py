"""kit.bisect.report.inputs: where the report goes (--out), which script it quotes, which paths it rewrites."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from kit.bisect.report import changelog, inputs as report_inputs
from kit.bisect import driver
from kit.bisect.options import parse_options
from kit.run.child_processes import REPO_ROOT
from tests.fake_releases import FakeReleases
from tests.bisect_machine import CHECKS, RELEASES, verdicts


@pytest.fixture
def releases(fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> FakeReleases:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    made = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
    for version, verdict in verdicts("0.5.3", fix=True).items():
        made.behave(version, verdict)
    return made


def test_out_puts_both_files_in_the_folder_given_and_none_in_reports(releases: FakeReleases, tmp_path: Path) -> None:
    out = tmp_path / "for-the-thread"
    argv = ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35", "--out", str(out)]
    assert driver.main(releases.matrix, argv, lambda _line: None) == 0
    assert sorted(p.suffix for p in out.glob("bisect-*")) == [".json", ".md"]
    assert not list(releases.matrix.results_dir.parent.glob("bisect-*"))


def test_a_built_in_check_is_quoted_by_its_repro_module_and_a_script_by_itself(releases: FakeReleases,
                                                                               tmp_path: Path) -> None:
    check = parse_options(releases.matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35"])
    assert report_inputs.script_path(releases.matrix, check.specs.runs) == REPO_ROOT / "repro" / "scaling.py"
    script = tmp_path / "repro.py"
    script.write_text("import jax\n")
    given = parse_options(releases.matrix, ["--script", str(script), "--good", "0.6.0", "--bad", "0.4.35"])
    quoted = report_inputs.bisected(releases.matrix, given.specs.runs)
    assert quoted is not None
    assert quoted.text == "import jax\n"
    assert not Path(quoted.shown).is_absolute()


def test_without_a_clone_named_the_notes_do_not_come_from_one(releases: FakeReleases) -> None:
    options = parse_options(releases.matrix, ["--check", "scaling", "--good", "0.6.0", "--bad", "0.4.35"])
    assert report_inputs.notes_history(releases.matrix, options.specs.search) is None
