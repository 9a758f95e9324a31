"""A check that changes the kit's own files is said, and its verdict not trusted; it runs in its scratch folder.

A check once rewrote a record, deleted matrix.md and edited matrix.toml
unnoticed, and the report then showed a verdict its own evidence
contradicted. docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import json
from pathlib import Path

from kit.run import child_processes, runner
from tests.faults.script_checks import prepared_here, script_matrix
from tests.record_samples import make_record

TAMPERS = """\
import json, os, pathlib, sys
project = pathlib.Path(sys.argv[0]).parent
record = project / "results" / "scaling-0.4.35.json"
record.write_text(json.dumps({**json.loads(record.read_text()), "verdict": "unaffected"}))
(project / "matrix.md").unlink()
with open(project / "matrix.toml", "a") as toml:
    toml.write("# edited\\n")
pathlib.Path("left-here.txt").write_text(os.getcwd())
"""


def _project(tmp_path: Path, body: str) -> tuple[Path, Path]:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "scaling-0.4.35.json").write_text(json.dumps(make_record()))
    (tmp_path / "matrix.md").write_text("# matrix\n")
    (tmp_path / "matrix.toml").write_text("# the matrix\n")
    script = tmp_path / "hostile.py"
    script.write_text(body)
    return script, tmp_path


def test_a_check_that_rewrites_a_record_deletes_matrix_md_and_edits_matrix_toml_is_said_and_inconclusive(
        tmp_path: Path) -> None:
    script, project = _project(tmp_path, TAMPERS)
    lines: list[str] = []
    record, _path = runner.run_check(script_matrix(tmp_path, script), runner.RunRequest("hostile", "0.6.0"),
                                     lines.append, prepared=prepared_here(tmp_path))
    changed = ["results/scaling-0.4.35.json (changed)", "matrix.md (deleted)", "matrix.toml (changed)"]
    assert sorted(record["evidence"]["kit_files_changed"]) == sorted(changed)
    assert (record["status"], record["verdict"]) == ("ran", "inconclusive")
    assert record["reason"].startswith("the check changed the kit's own files while it ran: ")
    assert "; so its verdict is not trusted (restore them" in record["reason"]
    assert record["reason"].endswith("; it said: the script exited 0 (unaffected)")
    assert any(line.startswith("WARNING: the check changed the kit's own files while it ran: ") for line in lines)
    assert not (project / "left-here.txt").exists() and not (child_processes.REPO_ROOT / "left-here.txt").exists(), \
        "a relative path of the check's lands in its scratch folder"


def test_a_check_that_leaves_the_kits_files_alone_keeps_its_verdict(tmp_path: Path) -> None:
    script, _project_folder = _project(tmp_path, "import pathlib\npathlib.Path('scratch.txt').write_text('x')\n")
    record, _path = runner.run_check(script_matrix(tmp_path, script), runner.RunRequest("hostile", "0.6.0"),
                                     lambda line: None, prepared=prepared_here(tmp_path))
    assert (record["verdict"], "kit_files_changed" in record["evidence"]) == ("unaffected", False)
