"""kit.matrix.reproduce: every Reproduce cell of reports/matrix.md runs as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from kit.config import load_matrix
from kit.matrix.reproduce import session_names, working_command
from kit.records import Record

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = session_names(["scaling", "correctness"], ["0.4.35", "0.6.0"])


def test_a_session_that_exists_is_kept_and_one_that_does_not_becomes_the_kit_s_command() -> None:
    record = {"check": "scaling", "requested": {"jax": "0.5.0"}, "reproduce": "nox -s scaling-0.5.0"}
    assert working_command(Record(record), SESSIONS) == "python -m kit run scaling 0.5.0"
    with_args = {**record, "reproduce": "nox -s scaling-0.5.0 -- --backend cuda --devices 1,2"}
    assert working_command(Record(with_args), SESSIONS) == "python -m kit run scaling 0.5.0 --backend cuda --devices 1,2"
    kept = {"check": "scaling", "requested": {"jax": "0.6.0"}, "reproduce": "nox -s scaling-0.6.0"}
    assert working_command(Record(kept), SESSIONS) == "nox -s scaling-0.6.0"
    assert working_command(Record({**record, "reproduce": "nox -s bisect -- --check scaling"}), SESSIONS).startswith("nox -s bisect")
    assert working_command(Record({"check": "qr", "requested": {"jax": "0.5.0"}}), SESSIONS) == "python -m kit run qr 0.5.0"
    assert working_command(Record(record), None) == "nox -s scaling-0.5.0"  # no matrix to say which sessions exist


def test_every_reproduce_cell_of_the_committed_matrix_names_a_session_or_a_kit_run_that_exists() -> None:
    # Mechanically: a nox session the noxfile makes from matrix.toml, or the kit's own
    # command for a check matrix.toml has and a plain release number.
    matrix = load_matrix(ROOT / "matrix.toml")
    sessions = session_names(matrix.checks, [release.version for release in matrix.releases])
    text = (ROOT / "reports" / "matrix.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`" in line.rsplit("|", 2)[-2]]
    commands = [cmd for line in rows for cmd in re.findall(r"`([^`]+)`", line.rsplit("|", 2)[-2])]
    assert commands
    for command in commands:
        words = shlex.split(command)
        if words[:2] == ["nox", "-s"]:
            assert words[2] in sessions, command
        else:
            assert words[:4] == ["python", "-m", "kit", "run"] and words[4] in matrix.checks, command
            assert re.fullmatch(r"\d+(\.\d+)+", words[5]), command
