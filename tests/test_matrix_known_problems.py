"""The report's known problems: catalogue entries a matrix check measures, cited from the one catalogue, a
user's own ``known/`` beside their matrix.toml included."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.config import load_matrix
from kit.errors import ConfigError
from kit.known.catalogue import read_entry
from kit.matrix.known_problems import load_known_problems
from kit.matrix.markdown import render_markdown
from kit.matrix.model import build_report
from kit.config import catalogue_folders, legacy_known_problems

ROOT = Path(__file__).resolve().parents[1]
ENTRY = """title = "Sharded QR gathers the batch"
kind = "sharding"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_note = "open"
measure_on = ["0.4.35"]
matrix_check = "qr"
links = ["https://github.com/jax-ml/jax/issues/1"]
"""


def test_the_shipped_catalogue_cites_both_upstream_fixes_once_in_known_problems_toml() -> None:
    problems = {p.key: p for p in load_known_problems()}
    assert problems["sharded-slogdet"].fix.release == "0.5.3"  # type: ignore[union-attr]
    assert problems["gpu-batched-det-overflow"].fix.release == "0.4.36"  # type: ignore[union-attr]
    assert problems["gpu-batched-det-overflow"].shows_on == ("gpu",)  # the records' name for cuda
    assert problems["sharded-slogdet"].check == "scaling"
    assert problems["tpu-sharded-slogdet-lu"].fix is None and problems["tpu-sharded-slogdet-lu"].shows_on == ("tpu",)
    assert not (ROOT / "known_problems.toml").exists()


def _record(version: str, verdict: str) -> dict:
    return {"schema": 1, "check": "qr", "status": "ran", "verdict": verdict, "created": "2026-11-30T00:00:00Z",
            "requested": {"jax": version, "backend": "cpu"}, "environment": {"backend": "cpu"},
            "host": {"machine_id": "m"}}


def _project(tmp_path: Path) -> Path:
    (tmp_path / "matrix.toml").write_text('[[release]]\nversion = "0.4.35"\n\n[checks.qr]\nscript = "qr.py"\n')
    (tmp_path / "qr.py").write_text("raise SystemExit(0)\n")
    known = tmp_path / "known"
    known.mkdir()
    (known / "qr-gather.toml").write_text(ENTRY)
    (known / "qr-gather.py").write_text("raise SystemExit(1)\n")
    return tmp_path


def test_a_users_own_catalogue_beside_matrix_toml_is_cited_with_the_range_its_check_measured(tmp_path: Path) -> None:
    matrix = load_matrix(_project(tmp_path) / "matrix.toml")
    folders = catalogue_folders(matrix)
    assert folders[-1] == tmp_path / "known" and len(folders) == 2  # the kit's, then the project's
    problems = load_known_problems(folders)
    assert {"qr-gather", "sharded-slogdet"} <= {p.key for p in problems}
    report = build_report([_record("0.4.35", "affected"), _record("0.6.0", "unaffected")],
                          known_problems=[p for p in problems if p.key == "qr-gather"])
    text = render_markdown(report)
    assert "**Sharded QR gathers the batch** — check `qr`; <https://github.com/jax-ml/jax/issues/1>" in text
    assert "upstream: no fix recorded in the catalogue" in text
    assert "0.4.35" in text.split("Sharded QR gathers the batch")[1].split("upstream")[0]


def test_an_old_known_problems_toml_is_not_read_and_the_kit_says_how_to_move_it(tmp_path: Path) -> None:
    matrix = load_matrix(_project(tmp_path) / "matrix.toml")
    assert legacy_known_problems(matrix) == ""
    (tmp_path / "known_problems.toml").write_text('[[problem]]\nkey = "a"\ncheck = "qr"\ntitle = "t"\n')
    said = legacy_known_problems(matrix)
    assert said.startswith("note: known_problems.toml beside matrix.toml is no longer read")
    assert "move each [[problem]] into known/KEY.toml beside a check KEY.py" in said


@pytest.mark.parametrize(("text", "message"), [
    (ENTRY + '[fix]\nrelease = "0.5.3"\ntitle = "t"\nurl = "u"\n', "cites a release but the entry has no fix_commit"),
    (ENTRY.replace('fix_note = "open"', 'fix_commit = "0123456789"') + '[fix]\nrelease = "v1"\ntitle = "t"\nurl = "u"\n',
     "is not a release number"),
    (ENTRY + '[fix]\ncommit = "abc"\n', r"\[fix\] holds release, title, url, verified and related"),
])
def test_a_bad_fix_table_is_one_sentence_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "one.toml"
    path.write_text(text)
    (tmp_path / "one.py").write_text("")
    with pytest.raises(ConfigError, match=message) as failed:
        read_entry(path)
    assert failed.value.args[0].startswith("one.toml")


def test_a_range_its_check_could_not_tell_anywhere_reads_as_untested_not_as_present_in_none() -> None:
    from kit.matrix.markdown import range_sentence

    span = {"backend": "cpu", "present_in": [], "absent_in": [], "untested_in": ["0.4.35", "0.4.36"],
            "introduced_in": None, "fixed_in": None, "open": False}
    assert range_sentence(span) == "cpu: untested in 0.4.35, 0.4.36 (its check cannot tell there)"
