"""repro/correctness.py, the parts that need no JAX: references, judging chunks and samples, plans and summaries.

numpy arrays stand in for the device arrays (the judging code only slices them and, for samples, gathers with
``jax.numpy.asarray``, which numpy provides the same); the outputs are numpy's float32 slogdet/det with a
planted corruption, as a kernel reading past 2**31 bytes would produce. JAX itself runs in the integration tests.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from repro import correctness
from repro.correctness import _Judged, _judge_ranges, _judge_samples, human_summary, plan_cases, summarize

N = 6
NUMPY_AS_JAX = types.SimpleNamespace(numpy=np)


def _batch(size: int, corrupt_from: int | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Well-conditioned float32 matrices and their outputs; from ``corrupt_from`` on, log|det| is off by 1."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((size, N, N)) + 4 * np.eye(N)).astype(np.float32)
    sign, logabsdet = np.linalg.slogdet(x)
    det = np.linalg.det(x)
    if corrupt_from is not None:
        logabsdet = logabsdet.copy()
        logabsdet[corrupt_from:] += 1.0
        det = det.copy()
        det[corrupt_from:] *= np.e
    return x, {"sign": sign, "logabsdet": logabsdet, "det": det}


def test_references_are_float64_whatever_the_input() -> None:
    x, _ = _batch(3)
    sign, logabsdet = correctness._references(x)
    assert logabsdet.dtype == np.float64
    assert np.allclose(logabsdet, np.linalg.slogdet(x.astype(np.float64))[1])


def test_a_singular_matrix_has_infinite_condition_without_a_warning() -> None:
    rows = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    with np.errstate(all="raise"):
        cond = correctness._condition_1(rows)
    assert np.isinf(cond[0])
    assert cond[1] == pytest.approx(2.0)


def test_the_scipy_crosscheck_agrees_with_numpy_on_sound_rows() -> None:
    # The yardstick's own check: two LAPACK paths in float64 agree to rounding on well-conditioned rows.
    x, _ = _batch(4)
    worst = correctness._scipy_crosscheck(x, correctness._references(x)[1])
    assert worst is not None
    assert worst < 1e-10


def test_the_scipy_crosscheck_reports_a_reference_that_is_off() -> None:
    # Guards against a crosscheck that compares the reference with itself: an off reference must show.
    x, _ = _batch(3)
    off = correctness._references(x)[1] + np.array([0.0, 0.5, 0.0])
    assert correctness._scipy_crosscheck(x, off) == pytest.approx(0.5)


def test_honest_outputs_judged_in_chunks_have_no_bad_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(correctness, "CHUNK_BYTES", N * N * 8 * 7)  # 7 rows a chunk: chunk edges inside ranges
    x, outputs = _batch(50)
    judged = _Judged()
    _judge_ranges(x, outputs, [(0, 10), (5, 20), (40, 50)], judged, N, "float32")
    assert sorted(judged.indices().tolist()) == [*range(20), *range(40, 50)]  # overlap judged once
    comparison = judged.compare(N, "float32")
    assert (comparison.checked_count, comparison.bad_count) == (30, 0)


def test_a_corruption_from_an_index_is_found_at_that_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(correctness, "CHUNK_BYTES", N * N * 8 * 5)
    x, outputs = _batch(40, corrupt_from=23)
    judged = _Judged()
    _judge_ranges(x, outputs, [(0, 40)], judged, N, "float32")
    comparison = judged.compare(N, "float32")
    assert (comparison.first_bad_index, comparison.bad_count) == (23, 17)
    assert comparison.first_bad_byte_offset == 23 * N * N * 4


def test_samples_add_only_entries_not_judged_yet_and_every_nonfinite_one() -> None:
    x, outputs = _batch(100)
    outputs["logabsdet"] = outputs["logabsdet"].copy()
    outputs["logabsdet"][77] = np.nan  # a NaN the samples might miss: it must be judged anyway
    judged = _Judged()
    _judge_ranges(x, outputs, [(0, 10)], judged, N, "float32")
    _judge_samples(NUMPY_AS_JAX, x, outputs, judged, N, "float32", {"samples": 20, "seed": 0})
    indices = judged.indices().tolist()
    assert len(indices) == len(set(indices))
    assert 77 in indices
    assert 10 < len(indices) <= 31
    assert judged.compare(N, "float32").nan_count == 1


def test_no_samples_asked_still_judges_the_nonfinite_outputs() -> None:
    x, outputs = _batch(30)
    outputs["det"] = outputs["det"].copy()
    outputs["det"][5] = np.inf
    judged = _Judged()
    _judge_samples(NUMPY_AS_JAX, x, outputs, judged, N, "float32", {"samples": 0, "seed": 0})
    assert judged.indices().tolist() == [5]


def test_the_profile_is_ordered_by_index_and_keeps_only_its_window() -> None:
    x, outputs = _batch(30, corrupt_from=15)
    judged = _Judged()
    _judge_ranges(x, outputs, [(20, 30), (0, 20)], judged, N, "float32")
    profile = judged.profile(12, 17, boundary=15)
    assert profile["index"] == [12, 13, 14, 15, 16, 17]
    assert profile["boundary_index"] == 15
    errors = profile["rel_error"]
    assert max(errors[:3]) < 1e-4
    assert min(errors[3:]) > 0.5


def test_an_empty_judgement_compares_to_nothing_checked() -> None:
    assert _Judged().compare(N, "float32").checked_count == 0
    assert _Judged().indices().dtype == np.int64


def test_the_chunk_is_at_least_one_row() -> None:
    assert correctness._chunk_rows(10 ** 6) == 1


def test_plans_take_given_batches_per_dtype_or_the_automatic_ones() -> None:
    given = plan_cases({"matrix_size": 20, "dtypes": ["float32", "float64"], "batches": [10, 20], "window": 64},
                       "cpu")
    assert [(p["dtype"], p["batch"]) for p in given] == [("float32", 10), ("float32", 20), ("float64", 10),
                                                         ("float64", 20)]
    assert given[0]["memory"]["input_bytes"] == 10 * 20 * 20 * 4
    auto = plan_cases({"matrix_size": 20, "dtypes": ["float32"], "batches": "auto", "window": 64}, "cpu")
    # Auto sizes cross the 2**31-byte boundary with their largest batch (and compare with one below it).
    assert max(p["memory"]["input_bytes"] for p in auto) > 2 ** 31


def _case(dtype: str, checked: int, bad: int, first: int | None, error: float | None, crossed: bool = True,
          nbytes: int = 100) -> dict[str, Any]:
    itemsize = 4 if dtype == "float32" else 8
    return {"dtype": dtype, "batch": 10, "bytes": nbytes, "crossed": crossed, "checked_count": checked, "error": None,
            "comparison": {"bad_count": bad, "max_rel_error": error, "first_bad_index": first,
                           "first_bad_byte_offset": None if first is None else first * 400 * itemsize,
                           "last_good_before_first_bad": None if first is None else first - 1,
                           "bad_indices": [] if first is None else [first]},
            "whole_batch": {"nan_count": 1, "inf_count": 0}, "boundaries": []}


def test_the_summary_adds_cases_up_and_takes_the_first_bad_by_byte_offset() -> None:
    # float64's index 6 is further into memory than float32's index 10: the earliest offset wins, not the index.
    failed = {"dtype": "float32", "batch": 99, "bytes": 10 ** 12, "error": "XlaRuntimeError: RESOURCE_EXHAUSTED"}
    summary = summarize([_case("float32", 10, 2, 10, 0.5), _case("float64", 30, 1, 6, 0.25, nbytes=300), failed])
    assert (summary["first_bad_index"], summary["first_bad_byte_offset"]) == (10, 16_000)
    assert (summary["bad_count"], summary["checked_count"], summary["bad_fraction"]) == (3, 40, 3 / 40)
    assert (summary["max_rel_error"], summary["nan_count"], summary["largest_bytes"]) == (0.5, 2, 300)
    assert summary["crossed_boundary"] is True


def test_a_summary_of_nothing_checked_has_no_fraction_and_no_error() -> None:
    summary = summarize([_case("float32", 0, 0, None, None, crossed=False)])
    assert (summary["bad_fraction"], summary["max_rel_error"], summary["first_bad_index"]) == (None, None, None)
    assert summary["crossed_boundary"] is False
    assert summarize([])["largest_bytes"] == 0


def test_the_human_summary_has_a_line_per_case_and_says_where_errors_start() -> None:
    failed = {"dtype": "float64", "batch": 99, "bytes": 10 ** 9, "error": "XlaRuntimeError: " + "x" * 200}
    result = {"verdict": "affected", "reason": "r", "parameters": {"window": 64},
              "evidence": {"cases": [_case("float32", 10, 2, 10, 0.5), failed]}}
    text = human_summary(result)
    assert "float64          99   1,000,000,000  failed: XlaRuntimeError: " + "x" * 43 in text
    assert "float32 batch 10: errors start after checked index 9 and by index 10 (byte offset 16,000)" in text
    assert "boundary windows" not in text  # no case had a boundary inside its batch


def test_a_bad_command_line_exits_2_without_importing_jax(capsys: pytest.CaptureFixture[str]) -> None:
    assert correctness.main(["--out", "r.json", "--dtypes", "float16"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
