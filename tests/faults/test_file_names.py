"""Record fields that become file names: one rule (`kit.file_names`), checked where a record enters.

A record whose ``backend`` was ``x/../../../../escaped`` once had `nox -s report`
draw its plot outside ``reports/`` (``plots/scaling-x/../../../../escaped.png``).
docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit import cli, exit_codes
from kit.file_names import is_name_part, name_part_problem
from kit.records import RecordError, parse_record
from tests.record_samples import make_record

MATRIX_TOML = '[[release]]\nversion = "0.4.35"\n[checks.scaling]\ndevices = [1, 2, 4]\nmatrix_size = 32\nbatch = 8192\n'


def _speedup_record(backend: str) -> dict[str, object]:
    summary = {"slogdet_speedup_2": 1.0, "slogdet_speedup_4": 1.0, "control_speedup_2": 1.9}
    return make_record(requested={"jax": "0.4.35", "backend": backend},
                       environment={"backend": backend, "device_count": 4}, evidence={"summary": summary})


@pytest.mark.real_time  # draws real images with matplotlib
def test_a_backend_that_climbs_out_of_the_plots_folder_is_skipped_and_nothing_is_written_outside(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    results = project / "reports" / "results"
    results.mkdir(parents=True)
    (project / "matrix.toml").write_text(MATRIX_TOML)
    (results / "hostile.json").write_text(json.dumps(_speedup_record("x/../../../../escaped")))
    (results / "plain.json").write_text(json.dumps(_speedup_record("cpu")))
    lines: list[str] = []
    code = cli.main(["report"], log=lines.append, matrix_path=str(project / "matrix.toml"))
    assert code == exit_codes.EXIT_OK
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"], "nothing beside the project"
    assert [p.name for p in project.iterdir() if p.name not in ("reports", "matrix.toml")] == []
    skipped = [line for line in lines if line.startswith("skipped ")]
    assert len(skipped) == 1
    assert "hostile.json" in skipped[0]
    assert ("field 'requested.backend' 'x/../../../../escaped' cannot be part of a file name (ASCII letters, "
            "digits, '.', '-' and '_'") in skipped[0]
    assert (project / "reports" / "plots" / "scaling-cpu.png").is_file(), "the plain record still draws"


@pytest.mark.parametrize("field", ["check", "requested", "environment"])
def test_each_field_that_names_a_file_is_checked_when_a_record_is_read(field: str) -> None:
    hostile = "../up"
    record = make_record(**{field: hostile if field == "check" else {"jax": "0.4.35", "backend": hostile}})
    with pytest.raises(RecordError, match=r"cannot be part of a file name"):
        parse_record(json.dumps(record))


@pytest.mark.parametrize("text", ["cpu", "gpu", "0.4.35", "scaling", "jit-kwarg_named.f", "a" * 100])
def test_the_names_the_kit_makes_fit_the_rule(text: str) -> None:
    assert is_name_part(text)
    assert name_part_problem(text, "name") is None


@pytest.mark.parametrize("text", ["", "../x", "a/b", "a\\b", ".hidden", "a..b", "é", "a b", "a" * 101, "x\n", 3])
def test_what_could_leave_a_folder_or_hide_in_it_breaks_the_rule(text: object) -> None:
    assert not is_name_part(text)
