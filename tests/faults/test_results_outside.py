"""matrix.toml's results folder leading outside its project (``../shared``, ``/abs``, a link): said before writing.

Was: records and reports written there without a word; a cloned project's
matrix.toml could send them anywhere the user can write.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kit.user_paths import results_outside

ROOT = Path(__file__).resolve().parents[2]
TOML = '[kit]\nresults_dir = "{results}"\n\n[[release]]\nversion = "0.6.0"\n\n[checks.scaling]\n'


def _report(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kit", "report"], cwd=project, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_results_folder_up_and_out_is_said_before_the_report_is_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "matrix.toml").write_text(TOML.format(results="../shared/results"))
    proc = _report(project)
    assert proc.returncode == 0, proc.stderr
    said = (f"kit: kit.results_dir leads outside the project {project}: records are written to "
            f"{tmp_path / 'shared' / 'results'} and reports (matrix.md, bisect-*.md) to {tmp_path / 'shared'}")
    assert said in proc.stdout + proc.stderr
    assert (tmp_path / "shared" / "matrix.md").is_file()


def test_a_results_folder_that_is_a_link_out_is_said_naming_the_link(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "reports").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "reports" / "results").symlink_to(elsewhere)
    said = results_outside(project / "reports" / "results", project)
    assert said == (f"kit.results_dir leads outside the project {project} (through the link "
                    f"{project / 'reports' / 'results'}): records are written to {elsewhere}")
    assert results_outside(project / "reports" / "mine", project) == ""
