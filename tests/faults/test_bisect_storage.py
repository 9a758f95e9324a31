"""A bisect whose reports folder cannot be written: the finding first, then one ERROR sentence.

The probes really run (the fake machine of tests/fake_releases.py) and the
files really fail: ``reports/bisect`` is a file, so the probe cache cannot be
made, and ``bisect-NAME.md`` is a folder, so the report cannot replace it (as
root, as these tests may run, a read-only mode would not stop a write).
docs/faults.md, "Bisect".
"""

from __future__ import annotations

from typing import Callable

import pytest
from packaging.version import Version

from kit.bisect.report import changelog
from kit.bisect import driver
from kit.bisect.options import parse_options
from kit.bisect.specs import bisect_name
from kit.errors import StorageError
from kit.exit_codes import EXIT_FAILED
from tests.fake_releases import FakeReleases

RELEASES = ["0.4.35", "0.4.36", "0.5.0", "0.6.0"]
ARGV = ["--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0"]


def test_an_unwritable_reports_folder_prints_the_finding_then_one_error(
        fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    machine = fake_releases(RELEASES, checks={"scaling": {"devices": [1, 2], "timeout_s": 60}})
    for version in RELEASES:
        machine.behave(version, "affected" if Version(version) >= Version("0.5.0") else "unaffected")
    reports = machine.matrix.results_dir.parent
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "bisect").write_text("a file where the probe cache's folder goes")
    name = bisect_name(parse_options(machine.matrix, ARGV).specs, "0.4.35", "0.6.0")
    (reports / f"bisect-{name}.md" / "blocked").mkdir(parents=True)
    lines: list[str] = []
    with pytest.raises(StorageError) as unsaved:
        driver.main(machine.matrix, ARGV, lines.append)
    out = capsys.readouterr().out
    assert "last good release: **jax 0.4.36**" in out
    assert "first bad release: **jax 0.5.0**" in out
    assert unsaved.value.exit_code == EXIT_FAILED
    assert unsaved.value.message.startswith(f"could not write the bisect's report into {reports} (")
    assert unsaved.value.message.endswith(f"the finding printed above is all there is of it: bisect-{name}.md and "
                                          ".json were left as they were")
    warned = [line for line in lines if line.startswith("could not keep probes in the probe cache")]
    assert len(warned) == 1
    assert "the bisect goes on, but a rerun probes them again" in warned[0]
