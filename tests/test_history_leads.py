"""kit.history.leads: the JAX commits a maintainer reads first when the change is in the binary."""

from __future__ import annotations

import pytest

from fake_jax import _Commit, _files, commit_titled, write_history
from kit.history.leads import BuildPair, binary_leads, gated_leads
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
    assert "extension version >= 335" in leads[0].why
    assert "(the builds: 330 → 336)" in leads[0].why
    assert leads[1].why == "says it fixes #28070"
    assert note == ""


def test_without_the_builds_versions_only_fixes_are_led_and_it_says_why(history: History) -> None:
    old, new = commit_titled(history.path, "r1 the old release"), commit_titled(history.path, "r2 the new release")
    leads, note = binary_leads(history, old, new, None, 336)
    assert [lead.title for lead in leads] == [FIXES]
    assert "did not say their extension version" in note


TRSM_GATE = "Deprecate alpha argument to trsm"
TRSM_EDIT = "Partition batch dimensions of the triangular solve"
UNRELATED = "Speed up pytrees"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = _files()
    lib = "jax/_src/lax/linalg_gates.py"
    gate = "def lower(ctx):\n  if jaxlib_version <= (0, 5, 1):\n    return old()\n  return new()\n"
    edited = gate.replace("return new()", "return new(batch=True)")
    both = {**base, lib: edited, "jax/_src/tree.py": "FAST = True\n"}
    commits = [
        _Commit(1, "r1 the old release", base, ()),
        _Commit(2, TRSM_GATE, {**base, lib: gate}, (1,)),
        _Commit(3, TRSM_EDIT, {**base, lib: edited}, (2,)),
        _Commit(4, UNRELATED, both, (3,)),
        _Commit(5, "A gate both builds pass", {**both, "jax/_src/x.py": "if jaxlib_version >= (0, 4, 0):\n  X = 1\n"},
                (4,)),
        _Commit(6, "r2 the new release", {**both, "CHANGELOG.md": "r2\n"}, (5,)),
    ]
    return History(write_history(tmp_path_factory.mktemp("gated") / "jax", commits,
                                 {"jax-v0.1.0": 1, "jax-v0.2.0": 6}, {"main": 6}), "test")


def test_gated_leads_name_the_gate_the_builds_answer_apart_and_the_code_beside_it(gated: History) -> None:
    old, new = commit_titled(gated.path, "r1 the old release"), commit_titled(gated.path, "r2 the new release")
    leads, note = gated_leads(gated, old, new, BuildPair((0, 5, 1), (0, 5, 3)))
    assert [lead.title for lead in leads] == [TRSM_EDIT, TRSM_GATE]  # newest first, as git log reads
    assert leads[0].why == "edits code beside the gate `jaxlib_version <= (0, 5, 1)`"
    assert leads[1].why.startswith("adds the gate `jaxlib_version <= (0, 5, 1)` (jaxlib 0.5.1 and 0.5.3 answer")
    assert note == ""
    none, _ = gated_leads(gated, old, new, BuildPair((0, 5, 2), (0, 5, 3)))  # both builds take the new path
    assert none == []
