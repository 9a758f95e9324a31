"""kit.records.cells: which cell a record measures, on which machine, and the newest per cell."""

from __future__ import annotations


from kit.records import CellKey, cell_key, load_records, machine_id, newest_per_cell
from tests.record_samples import FIXTURES, make_record


def test_cell_key_uses_requested_release_and_jax_backend_name() -> None:
    ran = make_record(requested={"jax": "0.5.3", "backend": "cuda"}, environment={"backend": "gpu"})
    never_started = make_record(requested={"jax": "0.5.3", "backend": "cuda"}, environment={}, status="not-installable")
    assert cell_key(ran) == cell_key(never_started) == CellKey("scaling", "0.5.3", "gpu", "abc123abc123")


def test_newest_per_cell_keeps_older_as_history() -> None:
    entries = load_records(FIXTURES / "conflicting-two-runs-same-cell").entries
    newest, older = newest_per_cell(entries)
    [winner] = newest.values()
    assert winner.record["verdict"] == "affected"
    assert [e.record["verdict"] for e in older] == ["inconclusive"]


def test_machine_id_is_stable_and_short() -> None:
    assert machine_id() == machine_id()
    assert len(machine_id()) == 12
    int(machine_id(), 16)
