"""``known --measure --bisect``: every entry's two boundaries bisected over every release, all entries measured
together release by release (kit/known/bisection.py), and ``--workarounds`` (kit/known/workarounds.py).

Hermetic: the batch (`kit.known.batch.measured_runs`) is a stand-in answering from a table of truths, as
tests/test_known_measure.py's; the search itself is tests/test_known_boundaries.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from kit.config import load_matrix
from kit.errors import ArchiveUnreachable
from kit.known import measure as measure_module
from kit.known.bisection import bisect_ranges, every_release
from kit.known.catalogue import Entry, load_catalogue
from kit.known.listing import listing
from kit.known.measured import Measurement, Presence, load_measurements, save_measurements
from kit.known.workarounds import measure_workarounds

ROOT = Path(__file__).resolve().parents[1]
RELEASES = [f"0.{i}.0" for i in range(16)]
ENTRY = """title = "t"
kind = "wrong-values"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_note = "none yet"
shows_on = ["cpu"]
measure_on = ["0.0.0"]
"""


def catalogue(folder: Path, names: Sequence[str]) -> list[Entry]:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.py").write_text("raise SystemExit(0)\n")
        (folder / f"{name}.toml").write_text(ENTRY)
    return load_catalogue(folder)


class Truth:
    """A stand-in batch: each entry's outcome per release from its table; what each batch was asked."""

    def __init__(self, truths: dict[str, Sequence[str]], unreachable: Sequence[str] = ()) -> None:
        self.truths, self.unreachable = truths, set(unreachable)
        self.batches: list[tuple[str, list[str]]] = []

    def measured_runs(self, matrix: Any, entries: Sequence[Entry], log: Any, records: Path, *, version: str,
                      **_: Any) -> list[Measurement]:
        if version in self.unreachable:
            raise ArchiveUnreachable(f"jax {version} needs the archive", "check the network")
        self.batches.append((version, [e.id for e in entries]))
        outcome = {"P": Presence.PRESENT, "A": Presence.ABSENT, "U": Presence.UNTESTED}
        return [Measurement(version, "cpu", outcome[self.truths[e.id.removesuffix("-workaround")][
            RELEASES.index(version)]], "the script exited", f"{e.id}-{version}.json") for e in entries]


def test_all_entries_are_bisected_together_release_by_release(tmp_path: Path, monkeypatch: Any) -> None:
    entries = catalogue(tmp_path / "known", ["one", "two"])
    truth = Truth({"one": "AAAPPPPPPPPAAAAA", "two": "PPPPAAAAAAAAAAAA"}, unreachable=["0.4.0"])
    monkeypatch.setattr(measure_module, "measured_runs", truth.measured_runs)
    save_measurements(tmp_path / "known", "one", [Measurement("0.5.0", "cpu", Presence.PRESENT, "kept", "r.json")],
                      "2026-12-05")  # a kept outcome: the search starts from it
    save_measurements(tmp_path / "known", "two", [Measurement("0.1.0", "cpu", Presence.PRESENT, "kept", "r.json")],
                      "2026-12-05")
    searches = bisect_ranges(load_matrix(str(ROOT / "matrix.toml")), entries, tmp_path / "known", print,
                             candidates=RELEASES)
    one, two = searches["one"], searches["two"]
    assert (one.introduced.before, one.introduced.after) == ("0.2.0", "0.3.0")  # type: ignore[union-attr]
    assert (one.fixed.before, one.fixed.after) == ("0.10.0", "0.11.0")  # type: ignore[union-attr]
    assert (two.fixed.before, two.fixed.after, two.fixed.unknown) == ("0.3.0", "0.5.0", ("0.4.0",))  # type: ignore
    first = truth.batches[0]
    assert first == ("0.0.0", ["one", "two"])  # the ends of both entries, in one batch per release
    asked = [(v, e) for v, ids in truth.batches for e in ids]
    assert len(asked) == len(set(asked))  # no entry measured twice on a release
    assert len([a for a in asked if a[1] == "one"]) <= 2 + 2 * 4
    kept = json.loads((tmp_path / "known" / "measured" / "two.json").read_text())
    assert kept["bisection"]["done"] and kept["bisection"]["fixed"] == {"kind": "fixed", "before": "0.3.0",
                                                                        "after": "0.5.0", "unknown": ["0.4.0"]}
    unreachable = [m for m in load_measurements(tmp_path / "known", "two") if m.release == "0.4.0"]
    assert unreachable[0].outcome is Presence.UNTESTED and "not installable here" in unreachable[0].reason
    said = "\n".join(listing(entries, tmp_path / "known"))
    assert "fixed in 0.5.0 (between 0.3.0 and it: 0.4.0 untested)" in said
    assert "introduced in 0.3.0, fixed in 0.11.0" in said  # neighbours: nothing between to name


def test_a_search_resumes_from_what_it_kept(tmp_path: Path, monkeypatch: Any) -> None:
    entries = catalogue(tmp_path / "known", ["one"])
    truth = Truth({"one": "PPPPPPPPAAAAAAAA"})
    monkeypatch.setattr(measure_module, "measured_runs", truth.measured_runs)
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    bisect_ranges(matrix, entries, tmp_path / "known", print, candidates=RELEASES)
    first = len(truth.batches)
    bisect_ranges(matrix, entries, tmp_path / "known", print, candidates=RELEASES)
    assert len(truth.batches) == first  # everything it needs was kept
    bisect_ranges(matrix, entries, tmp_path / "known", print, candidates=RELEASES, fresh=True)
    assert len(truth.batches) == 2 * first


def test_workarounds_run_on_the_affected_releases_and_say_where_they_fail(tmp_path: Path, monkeypatch: Any) -> None:
    entries = catalogue(tmp_path / "known", ["one", "two"])
    (tmp_path / "known" / "workarounds").mkdir()
    (tmp_path / "known" / "workarounds" / "one.py").write_text("raise SystemExit(0)\n")
    save_measurements(tmp_path / "known", "one", [Measurement(r, "cpu", o, "", f"{r}.json") for r, o in
                                                  (("0.1.0", Presence.PRESENT), ("0.2.0", Presence.PRESENT),
                                                   ("0.3.0", Presence.ABSENT))], "2026-12-05")
    truth = Truth({"one": "AAP" + "A" * 13})  # the workaround works on 0.1.0, not on 0.2.0
    monkeypatch.setattr(measure_module, "measured_runs", truth.measured_runs)
    undecided = measure_workarounds(load_matrix(str(ROOT / "matrix.toml")), entries, tmp_path / "known", print)
    assert undecided == 0 and sorted(truth.batches) == [("0.1.0", ["one-workaround"]), ("0.2.0", ["one-workaround"])]
    kept = json.loads((tmp_path / "known" / "measured" / "one.json").read_text())["workaround"]
    assert (kept["works_on"], kept["fails_on"]) == (["0.1.0"], ["0.2.0"])
    save_measurements(tmp_path / "known", "one", load_measurements(tmp_path / "known", "one"), "2026-12-06")
    assert "workaround" in json.loads((tmp_path / "known" / "measured" / "one.json").read_text())  # kept


def test_every_release_lists_patch_and_not_installable_releases() -> None:
    class Index:
        def jax_releases(self, include_yanked: bool = False) -> list[Any]:
            from packaging.version import Version
            return [Version(v) for v in ("0.4.12", "0.4.13", "0.4.14", "0.8.3", "0.9.0", "0.9.0.1", "0.10.0rc1")]
    assert every_release(Index()) == ["0.4.13", "0.4.14", "0.8.3", "0.9.0", "0.9.0.1"]  # type: ignore[arg-type]
