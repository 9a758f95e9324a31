"""kit.history.op_files: which JAX files the failing op lives in, and the leads narrowed to them."""

from __future__ import annotations

import re

import pytest

from fake_jax import _Commit, _files, commit_titled, write_history
from kit.history.leads import BuildPair, gated_leads
from kit.history.op_files import commits_touching, op_files, op_words, word_pattern
from kit.history.source import History

BAD = ("jax 0.5.3.dev: linalg ops (op, batch per device): [('lapack_sgetrf_ffi', 16), ('lapack_strsm_ffi', 64), "
       "('lapack_strsm_ffi', 64)]; whole batch: ['lapack_strsm_ffi']")
GOOD = ("jax 0.5.3: linalg ops (op, batch per device): [('lapack_sgetrf_ffi', 16), ('lapack_strsm_ffi', 16), "
        "('lapack_strsm_ffi', 16)]; whole batch: none")


def test_a_lapack_target_is_searched_as_its_routine_and_the_primitive_that_calls_it() -> None:
    names, words, paths = op_words([BAD])
    assert names == ("lapack_sgetrf_ffi", "lapack_strsm_ffi")
    assert words == ("getrf", "lu", "trsm", "triangular_solve")
    assert paths == ()


def test_only_the_ops_the_failing_output_names_more_often_than_the_passing_one_count() -> None:
    names, words, _ = op_words([BAD], passing=[GOOD])
    assert names == ("lapack_strsm_ffi",)
    assert words == ("trsm", "triangular_solve")


def test_explains_op_hlo_ops_gpu_targets_and_traceback_files() -> None:
    _, words, _ = op_words([], op="cholesky")
    assert words == ("cholesky", "potrf")
    _, words, _ = op_words(["%ts = f32[8,4,4] triangular-solve(%a, %b)", "cusolver_syevd_ffi"])
    assert words == ("triangular_solve", "trsm", "syevd", "eigh")
    names, _, paths = op_words(['  File "/x/site-packages/jax/_src/lax/linalg.py", line 3, in _lu_cpu',
                                'File "tests/linalg_test.py"'])
    assert paths == ("jax/_src/lax/linalg.py",)
    assert names == paths
    assert op_words(["the script exited 1 (affected)"]) == ((), (), ())


@pytest.mark.parametrize(("text", "found"), [("lu_p = Primitive('lu')", True), ("def _lu_cpu_lowering(", True),
                                             ("value = include", False), ("lapack_strsm_ffi", True),
                                             ('prepare_lapack_call("trsm_ffi", dtype)', True), ("xtrsmx", False)])
def test_a_word_is_matched_as_a_name_of_its_own(text: str, found: bool) -> None:
    assert bool(re.search(word_pattern(["lu", "trsm"]), text)) is found


TRSM_GATE = "Deprecate alpha argument to trsm"
PALLAS_GATE = "Change int4 packing in the Triton lowering"
EXPORT_GATE = "Export tests with Shardy"
TRSM_FIX = "Fix the batched triangular solve\n\nFixes #26888"
OTHER_FIX = "Fix a pytree bug\n\nFixes #226"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = {**_files(), "jax/_src/export/_export.py": "TARGETS = ['lapack_strsm_ffi']\n"
            + "".join(f"A{n} = {n}\n" for n in range(8))}
    linalg = "jax/_src/lax/linalg_ops.py"
    trsm = ("def _triangular_solve_cpu_lower(ctx):\n  if jaxlib_version <= (0, 5, 1):\n"
            "    return lapack.trsm_old()\n  return lapack.trsm_ffi()\n")
    pallas = {"jax/_src/pallas/lowering_int4.py": "if jaxlib_version < (0, 5, 2):\n  PACK = 'big'\n"}
    filler = "".join(f"A{n} = {n}\n" for n in range(8))  # the gate's hunk does not reach the target list
    export = {"jax/_src/export/_export.py": f"TARGETS = ['lapack_strsm_ffi']\n{filler}if jaxlib_version < (0, 5, 2):\n"
                                            "  X = 1\n"}
    commits = [
        _Commit(1, "r1 the old release", base, ()),
        _Commit(2, TRSM_GATE, {**base, linalg: trsm}, (1,)),
        _Commit(3, PALLAS_GATE, {**base, linalg: trsm, **pallas}, (2,)),
        _Commit(4, EXPORT_GATE, {**base, linalg: trsm, **pallas, **export}, (3,)),
        _Commit(5, TRSM_FIX, {**base, linalg: trsm + "# batched\n", **pallas, **export}, (4,)),
        _Commit(6, OTHER_FIX, {**base, linalg: trsm + "# batched\n", **pallas, **export,
                               "jax/_src/tree.py": "FIXED = True\n"}, (5,)),
    ]
    return History(write_history(tmp_path_factory.mktemp("op_files") / "jax", commits,
                                 {"jax-v0.1.0": 1, "jax-v0.2.0": 6}, {"main": 6}), "test")


def test_the_op_files_are_those_naming_its_words_at_the_commit(history: History) -> None:
    new = commit_titled(history.path, "Fix a pytree bug")
    found = op_files(history, new, [BAD], passing=[GOOD])
    assert found is not None
    assert found.files == ("jax/_src/export/_export.py", "jax/_src/lax/linalg_ops.py")
    assert "the files naming trsm / triangular_solve, from lapack_strsm_ffi" in found.describe()
    assert op_files(history, new, ["the script exited 1"]) is None


def test_gated_leads_keep_the_op_files_gates_those_in_the_ops_own_code_first(history: History) -> None:
    old, new = commit_titled(history.path, "r1 the old release"), commit_titled(history.path, "Fix a pytree bug")
    builds = BuildPair((0, 5, 1), (0, 5, 3))
    every, _ = gated_leads(history, old, new, builds)
    assert {lead.title for lead in every} == {TRSM_FIX.split("\n")[0], TRSM_GATE, PALLAS_GATE, EXPORT_GATE}
    found = op_files(history, new, [BAD], passing=[GOOD])
    kept, note = gated_leads(history, old, new, builds, found)
    # the pallas gate is elsewhere; the hunks naming the op first (newest first), then the op's other files
    assert [lead.title for lead in kept] == [TRSM_FIX.split("\n")[0], TRSM_GATE, EXPORT_GATE]
    assert kept[0].why == ("edits code beside the gate `jaxlib_version <= (0, 5, 1)` in jax/_src/lax/linalg_ops.py, "
                           "in a hunk naming trsm / triangular_solve")
    assert kept[1].why.startswith("adds the gate `jaxlib_version <= (0, 5, 1)`")
    assert kept[2].why.endswith("in jax/_src/export/_export.py")
    assert note.endswith("3 of 4 commits that touch a gate the builds answer apart")
    touching = commits_touching(history, old, new, found.files if found else ())
    assert touching is not None
    assert commit_titled(history.path, "Fix the batched triangular solve") in touching
    assert commit_titled(history.path, "Fix a pytree bug") not in touching
