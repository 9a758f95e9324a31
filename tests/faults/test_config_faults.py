"""matrix.toml and a check's script going wrong: one sentence each, the right exit code, nothing lost.

A matrix.toml that was not UTF-8 gave a traceback from every command;
``era_slack_days = 100000000000`` an OverflowError when a release was
planned; a check script that vanished mid-sweep a traceback, and then the
report step failed at load. docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from kit import exit_codes
from kit.errors import ConfigError
from kit.matrix import sweep
from kit.run import runner
from tests.faults.kit_commands import run_kit
from tests.fake_index import refused_url
from tests.fake_releases import FakeReleases

MATRIX = (f'[install]\nindex_url = "{refused_url()}"\n{{install}}[[release]]\nversion = "0.6.0"\n'
          '[checks.scaling]\n# {{comment}}\n')


@pytest.mark.parametrize("command", [["report", "--no-plots"], ["plan", "0.6.0"], ["run", "scaling", "0.6.0"]])
def test_a_matrix_toml_that_is_not_utf8_is_one_sentence_from_every_command(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "matrix.toml").write_bytes(MATRIX.format(install="").replace("{comment}", "café").encode("latin-1"))
    proc, _took = run_kit(tmp_path, *command)
    assert proc.returncode == exit_codes.EXIT_USAGE, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    [error] = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("ERROR:")]
    assert error.endswith("matrix.toml is not UTF-8 text (byte 106, line 6), and a TOML file must be"), error


def test_an_era_slack_past_any_calendar_is_refused_at_load(tmp_path: Path) -> None:
    (tmp_path / "matrix.toml").write_text(MATRIX.format(install="era_slack_days = 100000000000\n"))
    proc, _took = run_kit(tmp_path, "plan", "0.6.0")
    assert proc.returncode == exit_codes.EXIT_USAGE and "Traceback" not in proc.stderr, proc.stderr
    assert "ERROR: install.era_slack_days must be a whole number of days from 0 to 3650" in proc.stdout + proc.stderr


def test_a_script_that_vanishes_mid_sweep_stops_it_with_one_sentence_and_keeps_the_records(
        fake_releases: Callable[..., FakeReleases], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "quick.py"
    script.write_text("print('measured')\n")
    machine = fake_releases(["0.6.0", "0.6.2"], checks={"quick": {"script": str(script)}})
    real_run_check = runner.run_check

    def run_then_remove(*args: object, **kwargs: object) -> object:
        try:
            return real_run_check(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            script.unlink(missing_ok=True)

    monkeypatch.setattr(sweep, "run_check", run_then_remove)
    lines: list[str] = []
    with pytest.raises(ConfigError) as stopped:
        sweep.main(machine.matrix, [], lines.append)
    assert stopped.value.exit_code == exit_codes.EXIT_USAGE
    assert stopped.value.message == (f"checks.quick's script {script} does not exist: it was there when matrix.toml "
                                     "was read, so it went missing since")
    assert stopped.value.tip.startswith("put it back (git status shows it), or remove [checks.quick] from matrix.toml")
    assert not any("Traceback" in line for line in lines)
    assert len(list(machine.matrix.results_dir.glob("*.json"))) == 1, "the first cell's record is kept"
