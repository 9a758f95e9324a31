"""No machine's absolute path in a bisect report: a report is pasted into a bug thread.

The fault: `--jax-repo /abs/clone`, `--changelog /abs/file` or `--out /abs/folder` outside the project and the
home folder was quoted as given, in the clone's name and in "Reproduce with:", and a failing script's traceback quoted its
files by absolute path. Now a path outside both is named relative to the project (``../clone``) in the report's
prose, a placeholder (``<JAX_REPO>``) in its reproduce line (`kit.reproduce_line`), and the project's and home's
absolute paths are taken out of what the probes printed. docs/faults.md, "Bisect".
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable

import pytest

from kit.bisect.report import changelog
from kit.bisect import driver
from tests.fake_releases import FakeReleases

RELEASES = ["0.4.35", "0.4.36", "0.5.0", "0.6.0"]
ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|home|root|tmp|Users|private|var)/")

FAILING = """\
import json
import os
if os.environ["FAKE_JAX"] >= "0.5.0":
    raise RuntimeError("broken on " + os.environ["FAKE_JAX"])
"""


def test_a_bisect_report_names_no_absolute_path(fake_releases: Callable[..., FakeReleases], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    machine = fake_releases(RELEASES)
    outside = tmp_path / "elsewhere"  # neither in the project nor under the home folder
    outside.mkdir()
    script, notes = outside / "repro.py", outside / "CHANGELOG.md"
    script.write_text(FAILING)
    notes.write_text("# Changelog\n\n## jax 0.5.0\n\n* Fixed `RuntimeError` on empty batches.\n")
    out = outside / "reports-for-the-thread"  # absolute, and not there yet when the command line is read
    argv = ["--script", str(script), "--good", "0.4.35", "--bad", "0.6.0", "--changelog", str(notes), "--out", str(out)]
    assert driver.main(machine.matrix, argv, lambda _line: None) == 0
    written = sorted(out.glob("bisect-*"))
    assert [p.suffix for p in written] == [".json", ".md"]
    for path in written:
        text = path.read_text()
        assert not ABSOLUTE.findall(text), f"{path.name}: {ABSOLUTE.search(text)}"
    markdown = written[1].read_text()
    assert os.path.relpath(script, machine.matrix.path.parent).startswith("..")  # outside the project and home
    # The reproduce line: a placeholder for each, not ../../<where this machine keeps them> (issue 50).
    assert "--script '<SCRIPT>' " in markdown
    assert "--out '<OUT>'`" in markdown
    assert "RuntimeError: broken on 0.5.0" in markdown  # the traceback is still quoted, its paths relative


def test_a_probes_record_reproduces_without_an_absolute_path(fake_releases: Callable[..., FakeReleases],
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The report quoted the command line with its paths relative, but each probe's record kept it as typed:
    # `reproduce` held `--script /abs/...` (and `--jax-repo /abs/clone` in a commit bisect's records).
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    machine = fake_releases(RELEASES)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    script = outside / "repro.py"
    script.write_text(FAILING)
    assert driver.main(machine.matrix, ["--script", str(script), "--good", "0.4.35", "--bad", "0.6.0"],
                       lambda _line: None) == 0
    reproduced = [json.loads(path.read_text())["reproduce"]
                  for path in machine.matrix.layout.script_records.glob("*.json")]
    assert reproduced and all(not ABSOLUTE.search(line) for line in reproduced), reproduced
    assert all("--script '<SCRIPT>' " in line for line in reproduced)
