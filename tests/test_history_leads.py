"""kit.history.leads: the JAX commits a maintainer reads first when the change is in the binary."""

from __future__ import annotations

import pytest

from fake_jax import _Commit, _files, commit_titled, write_history
from kit.history.leads import binary_leads
from kit.history.source import History

GATE_IN = "Use the new sharding rule with a new enough jaxlib"
GATE_OLD = "Clean up a gate every supported jaxlib passes"
FIXES = "Correct cumsum under sharding"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = _files()
    lib = "jax/_src/lib_gates.py"
    commits = [
        _Commit(1, "r1 the old release", base, ()),
        _Commit(2, GATE_IN, {**base, lib: "if jaxlib_extension_version >= 335:\n    NEW = True\n"}, (1,)),
        _Commit(3, GATE_OLD, {**base, lib: "if xla_extension_version >= 300:\n    NEW = True\n"}, (2,)),
        _Commit(4, f"{FIXES}\n\nFixes #28070", {**base, lib: "NEW = True\n"}, (3,)),
        _Commit(5, "r2 the new release", {**base, lib: "NEW = True\n", "CHANGELOG.md": "r2\n"}, (4,)),
    ]
    return History(write_history(tmp_path_factory.mktemp("leads") / "jax", commits,
                                 {"jax-v0.1.0": 1, "jax-v0.2.0": 5}, {"main": 5}), "test")


def test_gates_the_new_binary_crosses_come_first_then_fixes(history: History) -> None:
    old, new = commit_titled(history.path, "r1 the old release"), commit_titled(history.path, "r2 the new release")
    leads, note = binary_leads(history, old, new, 330, 336)
    assert [lead.title for lead in leads] == [GATE_IN, FIXES]
    assert "extension version >= 335" in leads[0].why and "(the builds: 330 → 336)" in leads[0].why
    assert leads[1].why == "says it fixes #28070"
    assert note == ""


def test_without_the_builds_versions_only_fixes_are_led_and_it_says_why(history: History) -> None:
    old, new = commit_titled(history.path, "r1 the old release"), commit_titled(history.path, "r2 the new release")
    leads, note = binary_leads(history, old, new, None, 336)
    assert [lead.title for lead in leads] == [FIXES]
    assert "did not say their extension version" in note
