"""repro.correctness_plan: where each overflow boundary falls, which entries are checked, and what fits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from repro import correctness_plan as plan
from repro.correctness_plan import (DoesNotFit, auto_batches, boundary_indices, check_fits, memory_plan, merge_ranges,
                                    ranges_to_check)

GiB = 2**30


def test_boundaries_fall_where_the_bytes_and_the_elements_overflow() -> None:
    # float32 48x48: 9216 bytes per matrix; 2**31 / 9216 = 233016.9, so index 233016 is the first to reach it.
    assert boundary_indices(48, 4) == {"2**31 bytes": 233016, "2**29 elements": 233016}
    # float64: the byte boundary comes first, the element count overflows twice as far in.
    indices = boundary_indices(48, 8)
    assert indices == {"2**31 bytes": 116508, "2**29 elements": 233016}
    for name, index in indices.items():
        limit, size = (2**31, 48 * 48 * 8) if name == "2**31 bytes" else (2**29, 48 * 48)
        assert index * size <= limit < (index + 1) * size  # the matrix at `index` holds the boundary


def test_a_cpu_run_crosses_the_byte_boundary_with_a_full_window_past_it() -> None:
    at = boundary_indices(48, 4)["2**31 bytes"]
    assert auto_batches(48, 4, 64, "cpu") == [at // 8, at + 64 + 1]


def test_a_gpu_run_also_goes_well_past_it_and_past_the_element_boundary_for_float64() -> None:
    at32 = boundary_indices(48, 4)["2**31 bytes"]
    assert auto_batches(48, 4, 64, "gpu") == [at32 // 8, at32 + 65, at32 * 5 // 4]
    at64, elements = boundary_indices(48, 8)["2**31 bytes"], boundary_indices(48, 8)["2**29 elements"]
    assert auto_batches(48, 8, 64, "gpu") == [at64 // 8, at64 + 65, at64 * 5 // 4, elements + 65]


def test_tiny_matrices_never_ask_for_an_empty_batch() -> None:
    assert min(auto_batches(2**14, 8, 1, "cpu")) >= 1


def test_memory_plan_counts_the_draw_peak_and_the_host_chunks() -> None:
    memory = memory_plan(48, "float32", 1000)
    assert memory["input_bytes"] == 1000 * 48 * 48 * 4
    assert memory["device_peak_bytes"] == int(plan.PEAK_FACTOR * memory["input_bytes"])
    assert memory["host_working_bytes"] == 3 * 1000 * 8 + 4 * 1000 * 48 * 48 * 8 + plan.RUNTIME_OVERHEAD_BYTES
    # A huge batch is checked chunk by chunk: the host's working set stops growing.
    huge = memory_plan(48, "float32", 10**7)
    assert huge["host_working_bytes"] == 3 * 10**7 * 8 + 4 * plan.CHUNK_BYTES + plan.RUNTIME_OVERHEAD_BYTES


def case(batch: int, dtype: str = "float32", n: int = 48) -> dict[str, Any]:
    return {"batch": batch, "n": n, "dtype": dtype, "memory": memory_plan(n, dtype, batch)}


class Device:
    def __init__(self, stats: Any) -> None:
        self.stats = stats

    def memory_stats(self) -> Any:
        if isinstance(self.stats, Exception):
            raise self.stats
        return self.stats


def test_on_cpu_the_device_and_the_host_share_available_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    small, big = case(1000), case(400_000)
    needed = big["memory"]["device_peak_bytes"] + big["memory"]["host_working_bytes"]
    monkeypatch.setattr(plan, "mem_available_bytes", lambda: needed - 1)
    check_fits([small], "cpu", None, None)
    with pytest.raises(DoesNotFit) as refused:
        check_fits([small, big], "cpu", None, None)
    assert str(refused.value) == (
        f"batch 400000 × 48×48 float32 needs about {plan.gb(needed)} (input {plan.gb(big['memory']['input_bytes'])}, "
        f"peak ≈ 2.1× input) but available memory (MemAvailable) is {plan.gb(needed - 1)}; "
        "choose smaller --batches or run on a machine with more memory")


def test_the_users_cap_counts_even_when_the_machine_has_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan, "mem_available_bytes", lambda: 10**15)
    with pytest.raises(DoesNotFit, match=r"but --max-memory-gb is 1\.00 GiB"):
        check_fits([case(100_000)], "cpu", None, 1.0)


def test_on_a_gpu_the_device_peak_meets_its_free_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan, "mem_available_bytes", lambda: 10**15)
    big = case(400_000)
    peak = big["memory"]["device_peak_bytes"]
    check_fits([big], "gpu", Device({"bytes_limit": peak + 10, "bytes_in_use": 10}), None)
    with pytest.raises(DoesNotFit, match=r"but free gpu memory \(memory_stats\) is"):
        check_fits([big], "gpu", Device({"bytes_limit": peak + 10, "bytes_in_use": 11}), None)


@pytest.mark.parametrize("stats", [None, {}, {"bytes_in_use": 1}, NotImplementedError("unimplemented")])
def test_a_device_that_does_not_say_its_memory_is_not_judged(monkeypatch: pytest.MonkeyPatch, stats: Any) -> None:
    monkeypatch.setattr(plan, "mem_available_bytes", lambda: 10**15)
    check_fits([case(10**7)], "gpu", Device(stats), None)
    check_fits([case(10**7)], "gpu", object(), None)  # no memory_stats at all


def test_on_a_gpu_the_host_side_of_the_check_must_fit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    big = case(10**7)
    monkeypatch.setattr(plan, "mem_available_bytes", lambda: big["memory"]["host_working_bytes"] - 1)
    with pytest.raises(DoesNotFit, match=r"but available host memory \(MemAvailable\) is"):
        check_fits([big], "gpu", Device({"bytes_limit": 10**15}), None)


def test_available_memory_is_read_from_proc_meminfo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n")
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: real_open(meminfo if path == "/proc/meminfo" else path,
                                                                        *a, **k))
    assert plan.mem_available_bytes() == 8_000_000 * 1024
    meminfo.write_text("MemTotal: 16000000 kB\n")  # an old kernel: no MemAvailable line
    assert plan.mem_available_bytes() is None


def test_checked_ranges_are_the_ends_and_a_window_around_each_boundary_inside() -> None:
    at = boundary_indices(48, 4)["2**31 bytes"]
    ranges, boundaries = ranges_to_check(at + 100, 48, 4, 8)
    assert ranges == [(0, 8), (at + 92, at + 100), (at - 8, at + 9), (at - 8, at + 9)]
    assert boundaries[0] == {"name": "2**31 bytes", "index": at, "byte_offset": at * 48 * 48 * 4, "in_batch": True,
                             "checked": [at - 8, at + 8]}
    assert merge_ranges(ranges) == [(0, 8), (at - 8, at + 9), (at + 92, at + 100)]


def test_a_batch_below_the_boundaries_checks_only_its_ends() -> None:
    ranges, boundaries = ranges_to_check(10, 48, 4, 8)
    assert merge_ranges(ranges) == [(0, 10)]
    assert [b["in_batch"] for b in boundaries] == [False, False]
    assert all(b["checked"] is None for b in boundaries)


@settings(max_examples=100)  # as before the thorough profile (tests/conftest.py)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)), max_size=12))
def test_merging_keeps_exactly_the_same_entries_in_disjoint_sorted_ranges(spans: list[tuple[int, int]]) -> None:
    ranges = [(lo, lo + width) for lo, width in spans]
    merged = merge_ranges(ranges)
    assert {i for lo, hi in merged for i in range(lo, hi)} == {i for lo, hi in ranges for i in range(lo, hi)}
    assert all(hi < next_lo for (_, hi), (next_lo, _) in zip(merged, merged[1:]))


# --------------------------------------------------------------------------
# On a TPU: sized to the chip (figures as a v5e with jax 0.10.2 compiled them)

V5E_FREE = 16_909_309_440  # bytes_limit - bytes_in_use on a fresh v5e chip


def _v5e_peak(calls: list[tuple[int, str, int]] | None = None) -> plan.Peak:
    """What the compiler said on a v5e: the 20×20 crossing refused (34.41G of temporaries), 128×128 in 2× input."""
    def peak(n: int, dtype: str, batch: int) -> tuple[int | None, str]:
        if calls is not None:
            calls.append((n, dtype, batch))
        input_bytes = batch * n * n * (8 if dtype == "complex64" else 4)
        if n < 128 and input_bytes > 2**30:
            return None, "the compiler refused it: the total memory required for HLO temporaries (34.41G) ..."
        return 3 * input_bytes, "the compiled plan's memory analysis"
    return peak


def test_a_v5e_chip_crosses_every_boundary_at_128_where_20_runs_out_of_memory() -> None:
    sized = plan.size_to_chip(20, ["float32", "complex64"], 64, V5E_FREE, _v5e_peak())
    at32, at64 = boundary_indices(128, 4), boundary_indices(128, 8)
    assert sized["n"] == 128
    assert sized["not_crossed"] == []
    assert sized["cases"] == [("float32", at32["2**31 bytes"] + 65), ("float32", at32["2**31 bytes"] // 8),
                              ("complex64", at64["2**29 elements"] + 65), ("complex64", at64["2**31 bytes"] + 65),
                              ("complex64", at64["2**31 bytes"] // 8)]
    assert sized["notes"][0].startswith("matrix size 128×128 instead of the asked 20×20")


def test_a_boundary_the_chip_cannot_hold_is_named_with_its_figures_and_the_rest_still_runs() -> None:
    calls: list[tuple[int, str, int]] = []
    sized = plan.size_to_chip(128, ["complex64"], 64, 10 * GiB, _v5e_peak(calls))
    at = boundary_indices(128, 8)
    assert sized["cases"] == [("complex64", at["2**31 bytes"] + 65), ("complex64", at["2**31 bytes"] // 8)]
    assert sized["not_crossed"] == [
        f"complex64 did not cross 2**29 elements at 128×128: batch {at['2**29 elements'] + 65} (4.01 GiB of input) "
        "needs 12.02 GiB (the compiled plan's memory analysis) on the chip, which has 10.00 GiB free"]
    # 256×256 was tried for the boundary 128 could not cross, and did no better (the same bytes): 128 is kept.
    assert sized["n"] == 128 and {n for n, _, _ in calls} == {128, 256}
    # Once a batch fits, the smaller ones are not compiled for: they fit.
    assert (128, "complex64", at["2**31 bytes"] // 8) not in calls


def test_without_memory_figures_the_compiler_decides_and_the_sentence_says_so() -> None:
    sized = plan.size_to_chip(20, ["float32"], 64, None, _v5e_peak())
    assert sized["n"] == 128 and sized["not_crossed"] == []
    assert "an unknown amount free (memory_stats gave nothing)" in sized["notes"][0]
    assert not plan.chip_fits(None, None)  # refused by the compiler
    assert plan.chip_fits(15 * GiB, None)
    assert not plan.chip_fits(15.7 * GiB, V5E_FREE)  # the headroom for the draw's chunks


def test_float64_gives_way_to_complex64_on_a_tpu_with_a_sentence_why() -> None:
    assert plan.tpu_dtypes(["float32", "float64"])[0] == ["float32", "complex64"]
    kept, notes = plan.tpu_dtypes(["float64", "complex64"])
    assert kept == ["complex64"] and "Only F32 and C64" in notes[0] and "in its place" not in notes[0]
    assert plan.tpu_dtypes(["float32"]) == (["float32"], [])


def test_float32_crosses_both_boundaries_in_one_batch() -> None:
    assert [name for name, _ in plan.chip_targets(128, 4, 64)] == ["2**31 bytes and 2**29 elements",
                                                                     "below the boundaries"]
    assert [name for name, _ in plan.chip_targets(128, 8, 64)] == ["2**29 elements", "2**31 bytes",
                                                                     "below the boundaries"]


def test_the_fallback_estimate_grows_with_the_lane_padding() -> None:
    assert plan.tpu_estimate_bytes(128, 4, 32768) == 6 * GiB  # input plus 2× in temporaries (measured 4.04 GiB)
    assert plan.tpu_estimate_bytes(20, 4, 1342242) > 30 * GiB  # measured 34.4 GiB of temporaries
