"""An audit with --harvested says the harvested problems present, with their safe releases, on the console and in
both written files (held-out trial t5: the report and the table held the hand entries only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.config import load_matrix
from kit.known import command
from kit.known.command import audit_main, known_main
from kit.known.harvest.audit_rows import harvested_verdicts, safe_release
from kit.known.harvest.release_runs import ReleaseProbe
from kit.known.harvest.store import Store
from kit.known.measured import Presence

ROOT = Path(__file__).resolve().parent.parent
FIXED, OPEN, FEATURE = "a" * 40, "b" * 40, "c" * 40


def _catalogue(tmp_path: Path) -> Path:
    catalogue = tmp_path / "known"
    store = Store(catalogue / "harvested")
    for commit, title in ((FIXED, "Fix spurious KeyReuseError \x1b[31m under vmap"), (OPEN, "Fix b"),
                          (FEATURE, "Adds a PYTORCH_CUBIC interpolation to jax.image.resize.")):
        store.put_result(commit, {
            "id": f"harvest-{commit[:10]}", "commit": commit, "status": "confirmed", "title": title,
            "date": "2026-01-01", "tests": [{"node_id": "tests/a_test.py::A::test_x", "verdict": "confirmed",
                                             "at_parent": {"message": "E   ValueError: x"}}]})
    (store.folder / "ranges").mkdir()
    (store.folder / "ranges" / f"{FIXED[:12]}.json").write_text(json.dumps({
        "summary": "fixed in 0.10.2 (after 0.10.1)", "bisection": {"fixed": {"before": "0.10.1", "after": "0.10.2"}},
        "probes": [{"release": "0.10.1", "outcome": "present"}, {"release": "0.10.2", "outcome": "absent"}]}))
    return catalogue


def _probe(outcome: Presence) -> ReleaseProbe:
    return ReleaseProbe("0.5.3", outcome, "fix copy: fails as at the fix's parent", "fix", {}, 1.0)


def test_each_harvested_verdict_carries_its_safe_release_and_title(tmp_path: Path) -> None:
    catalogue = _catalogue(tmp_path)
    verdicts = harvested_verdicts(catalogue, [(f"harvest-{OPEN[:10]}", _probe(Presence.PRESENT)),
                                              (f"harvest-{FIXED[:10]}", _probe(Presence.PRESENT))])
    by_id = {v.id: v for v in verdicts}
    assert by_id[f"harvest-{FIXED[:10]}"].safe == "jax >= 0.10.2"
    assert by_id[f"harvest-{OPEN[:10]}"].safe.startswith("not measured")
    assert safe_release({"ranges": {"summary": "present on 0.12.1, the newest decided"}}).startswith("not known")


def test_a_safe_release_names_the_untested_releases_before_it_that_may_be_fixed() -> None:
    # t11: harvest-672ee47b0f, fixed in 0.6.1 by hand, measured fixed on 0.7.2 with 0.6.1 to 0.7.1 undecided
    ranges = {"fixed": {"kind": "fixed", "before": "0.6.0", "after": "0.7.2",
                        "unknown": ["0.6.1", "0.6.2", "0.7.0", "0.7.1"]}}
    assert safe_release({"ranges": ranges}) == "jax >= 0.7.2 (measured; 0.6.1 to 0.7.1 untested, may be fixed)"
    ranges["fixed"]["unknown"] = ["0.7.1"]
    assert safe_release({"ranges": ranges}) == "jax >= 0.7.2 (measured; 0.7.1 untested, may be fixed)"


def test_an_audit_with_harvested_writes_them_in_its_report_and_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    catalogue = _catalogue(tmp_path)
    written: dict[str, Any] = {}
    monkeypatch.setattr(command, "_audit_harvested", lambda *_a, **_k: [
        (f"harvest-{FIXED[:10]}", _probe(Presence.PRESENT)), (f"harvest-{OPEN[:10]}", _probe(Presence.ABSENT)),
        (f"harvest-{FEATURE[:10]}", _probe(Presence.PRESENT))])
    monkeypatch.setattr(command, "_runs", lambda *_a, **_k: [])
    monkeypatch.setattr(command, "write_report", lambda _folder, _audited, data, text, _say: written.update(
        data=data, text=text))
    # --kind performance: no hand entry of that kind, so only the harvested part runs (patched above)
    code = audit_main(load_matrix(ROOT / "matrix.toml"), ["0.5.3", "--harvested", "--kind", "performance"], print,
                      catalogue=catalogue)
    out = capsys.readouterr().out
    assert code == 1  # a harvested problem present fails the gate
    # t5 (m3): a feature the fix added is said lacking, never a problem present
    assert "harvested: 1 of 3 present, 1 features added later lacking, 1 absent, 0 untested" in out
    assert not any(line.startswith(f"harvest-{FEATURE[:10]}") for line in out.splitlines())
    row = next(line for line in out.splitlines() if line.startswith(f"harvest-{FIXED[:10]}"))
    assert "jax >= 0.10.2" in row and "Fix spurious KeyReuseError" in row and "\x1b" not in row
    assert written["data"]["harvested"]["present"] == [f"harvest-{FIXED[:10]}"]
    assert written["data"]["harvested"]["entries"][0]["safe_release"] == "jax >= 0.10.2"
    assert f"| harvest-{FIXED[:10]} | present | jax &gt;= 0.10.2 |" in written["text"]
    assert f"| harvest-{FEATURE[:10]} | lacks the feature |" in written["text"]


def test_known_only_names_a_harvested_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # t5: "--only 'harvest-4603e66f1f' is not a known problem" though known --json listed it.
    catalogue = _catalogue(tmp_path)
    assert known_main(load_matrix(ROOT / "matrix.toml"), ["--only", f"harvest-{FIXED[:10]}"], print,
                      catalogue=catalogue) == 0
    out = capsys.readouterr().out
    assert f"harvest-{FIXED[:10]}: Fix spurious KeyReuseError" in out and "fixed in 0.10.2" in out
    assert "0 known problems" not in out  # t11: the hand listing's header said so above the entry it then showed


def test_known_only_an_unknown_id_says_the_nearest_of_every_id_and_how_to_list_them_all(tmp_path: Path) -> None:
    # Its tip listed the hand-written ids alone, as if they were the catalogue: a harvested id one letter short
    # was never offered, and the harvested ones were not said to exist.
    from kit.errors import UsageError

    catalogue = _catalogue(tmp_path)
    with pytest.raises(UsageError) as raised:
        known_main(load_matrix(ROOT / "matrix.toml"), ["--only", f"harvest-{FIXED[:9]}"], print, catalogue=catalogue)
    assert f"did you mean harvest-{FIXED[:10]}" in str(raised.value.tip)
    assert "jax-kit known --json lists every id" in str(raised.value.tip) and "harvested ones included" in str(
        raised.value.tip)


@pytest.mark.parametrize(("title", "kind"), [("Adds a PYTORCH_CUBIC interpolation to jax.image.resize.", "feature"),
                                             ("[export] Add support for serializing PRNG keys", "feature"),
                                             ("Add missing `__len__` to MutableArray", "exception"),
                                             ("Add tests for uneven axis index groups in collectives.", "exception"),
                                             ("Fix spurious KeyReuseError", "exception")])
def test_an_entry_whose_fix_adds_a_feature_is_of_that_kind(title: str, kind: str) -> None:
    from kit.known.harvest.kinds import entry_kind

    result = {"title": title, "tests": [{"node_id": "tests/a_test.py::A::test_x", "verdict": "confirmed",
                                         "at_parent": {"message": "E   ValueError: x"}}]}
    assert entry_kind(result)[0] == kind
