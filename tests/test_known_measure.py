"""``known --measure`` and ``--verify`` go release by release: each release's entries in one batch call, a target's
runs alone, the measured files and the verdicts as one run per entry and release gave them (kit/known/measure.py).

Hermetic: the batch (`kit.known.batch.measured_runs`) and the run alone (`run_entry`) are stand-ins that say what a
run would; tests/test_known_batch.py runs the real ones against each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

from kit.config import load_matrix
from kit.known import measure as measure_module
from kit.known.catalogue import Entry, load_catalogue
from kit.known.measure import measure, verify
from kit.known.measured import Measurement, Presence, load_measurements, save_measurements

ROOT = Path(__file__).resolve().parents[1]

ENTRY = """title = "t"
kind = "wrong-values"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_note = "none yet"
shows_on = ["cpu"]
measure_on = RELEASES
"""
AIMED = ENTRY.replace('shows_on = ["cpu"]', 'shows_on = ["tpu"]\ntargets = ["tpu:v5e:2x2"]')


def catalogue(folder: Path, entries: dict[str, str], text: str = ENTRY) -> list[Entry]:
    folder.mkdir(parents=True, exist_ok=True)
    for name, releases in entries.items():
        (folder / f"{name}.py").write_text("raise SystemExit(0)\n")
        (folder / f"{name}.toml").write_text(text.replace("RELEASES", releases))
    return load_catalogue(folder)


class Runs:
    """Stand-ins for the batch and the run alone: what each was asked, and an outcome from ``said``."""

    def __init__(self, said: dict[tuple[str, str], str]) -> None:
        self.said = said
        self.batches: list[tuple[str, list[str]]] = []
        self.alone: list[tuple[str, str]] = []

    def measured_runs(self, matrix: Any, entries: Sequence[Entry], log: Any, records: Path, *, version: str,
                      **_: Any) -> list[Measurement]:
        self.batches.append((version, [e.id for e in entries]))
        return [Measurement(version, "cpu", Presence(self.said[e.id, version]), "the script exited", f"{e.id}-{version}")
                for e in entries]

    def run_entry(self, matrix: Any, entry: Entry, log: Any, records: Path, *, version: str = "", target: Any = None,
                  **_: Any) -> Measurement:
        self.alone.append((entry.id, version))
        if target is None:  # --isolated: a run on its backend, alone
            return Measurement(version, "cpu", Presence(self.said[entry.id, version]), "the script exited",
                               f"{entry.id}-{version}")
        return Measurement(version, "tpu", Presence(self.said[entry.id, version]), "compiled", f"{entry.id}-{version}",
                           target=target.name)


@pytest.fixture()
def runs(monkeypatch: pytest.MonkeyPatch) -> Runs:
    made = Runs({("a", "0.4.35"): "present", ("a", "0.6.0"): "absent", ("b", "0.6.0"): "absent",
                 ("b", "0.4.13"): "untested", ("t", "0.6.0"): "present", ("t", "0.12.0.1"): "present"})
    monkeypatch.setattr(measure_module, "measured_runs", made.measured_runs)
    monkeypatch.setattr(measure_module, "run_entry", made.run_entry)
    return made


def test_measure_runs_each_release_s_entries_in_one_batch_oldest_release_first_and_a_target_alone(
        tmp_path: Path, runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "known"
    listed = catalogue(folder, {"a": '["0.6.0", "0.4.35"]', "b": '["0.4.13", "0.6.0"]'})
    listed += catalogue(folder, {"t": '["0.6.0", "0.12.0.1"]'}, AIMED)[2:]
    undecided = measure(load_matrix(str(ROOT / "matrix.toml")), listed, folder, print)
    assert undecided == 1  # b on 0.4.13
    assert runs.batches == [("0.4.13", ["b"]), ("0.4.35", ["a"]), ("0.6.0", ["a", "b"])]
    assert runs.alone == [("t", "0.6.0"), ("t", "0.12.0.1")]  # compiled for its chip: one process each
    out = capsys.readouterr().out.splitlines()
    assert "jax 0.6.0: 2 checks, those that need the same devices in one interpreter (a, b)" in out
    assert "a on jax 0.4.35: present (the script exited)" in out
    # Each file is written once its entry's last run is in, before the target's runs for b.
    assert out.index(f"b: written {folder / 'measured' / 'b.json'}") < out.index(
        "t on jax 0.6.0 for tpu:v5e:2x2 (compiled for TPU v5e 2x2 (4 devices), not run): present (compiled)")
    assert [(m.release, m.outcome.value, m.record) for m in load_measurements(folder, "a")] == \
        [("0.4.35", "present", "a-0.4.35"), ("0.6.0", "absent", "a-0.6.0")]
    assert {m.release for m in load_measurements(folder, "t")} == {"0.6.0", "0.12.0.1"}


def test_verify_batches_the_measured_releases_and_lists_what_no_longer_holds_in_the_catalogue_s_order(
        tmp_path: Path, runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "known"
    listed = catalogue(folder, {"a": '["0.4.35", "0.6.0"]', "b": '["0.4.13", "0.6.0"]', "c": '["0.6.0"]'})
    save_measurements(folder, "a", [Measurement("0.4.35", "cpu", Presence.ABSENT, ""),  # now present: broken
                                    Measurement("0.6.0", "cpu", Presence.PRESENT, "")], "2026-12-05")  # now absent
    save_measurements(folder, "b", [Measurement("0.4.13", "cpu", Presence.UNTESTED, ""),  # claimed nothing: not run
                                    Measurement("0.6.0", "cpu", Presence.ABSENT, "")], "2026-12-05")
    broken = verify(load_matrix(str(ROOT / "matrix.toml")), listed, folder, print)
    assert runs.batches == [("0.4.35", ["a"]), ("0.6.0", ["a", "b"])]
    assert broken == ["a on jax 0.4.35 (cpu): measured absent, now present (the script exited)",
                      "a on jax 0.6.0 (cpu): measured present, now absent (the script exited)",
                      "c: never measured (run known --measure --only c)"]
    assert "b on jax 0.6.0 (cpu): measured absent, now absent (the script exited)" in capsys.readouterr().out


def test_isolated_runs_every_entry_alone_and_says_the_same(tmp_path: Path, runs: Runs) -> None:
    # Checks batched in one interpreter can touch each other's state (negative-static-argnums failed with another
    # message beside others on 0.4.13): --isolated gives each run a process and a record of its own.
    folder = tmp_path / "known"
    listed = catalogue(folder, {"a": '["0.4.35", "0.6.0"]', "b": '["0.6.0"]'})
    save_measurements(folder, "a", [Measurement("0.4.35", "cpu", Presence.PRESENT, ""),
                                    Measurement("0.6.0", "cpu", Presence.ABSENT, "")], "2026-12-05")
    save_measurements(folder, "b", [Measurement("0.6.0", "cpu", Presence.PRESENT, "")], "2026-12-05")  # now absent
    broken = verify(load_matrix(str(ROOT / "matrix.toml")), listed, folder, print, isolated=True)
    assert runs.batches == []
    assert runs.alone == [("a", "0.4.35"), ("a", "0.6.0"), ("b", "0.6.0")]
    assert broken == ["b on jax 0.6.0 (cpu): measured present, now absent (the script exited)"]
