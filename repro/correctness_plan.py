"""The correctness repro's plan for one case: boundary indices, what to check, and whether it fits.

Pure arithmetic on sizes (numpy for dtype sizes, no jax): which batch index
first passes each overflow boundary, which windows around them get checked,
and whether the case's peak memory fits the host and the device, refused
before any work (exit code 3) when it does not.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from repro import tolerance

# Rows moved to the host per step when checking in full: 128 MiB of float64,
# so the host working set stays small next to the input array.
CHUNK_BYTES = 2**27
# Peak memory of one case relative to its input: factorising, which needs the
# input plus its copy in the column-major layout LAPACK's getrf wants (XLA's
# transposing copy into a fresh buffer, factorised in place there), plus the
# pivots and the gathered diagonals (≈0.05× each). Donating the input cannot
# free it: JAX refuses a donation that no output of the input's shape can take
# (benchmarks/correctness_peak_parts.py measures each part and tries it). The
# draw, a chunk at a time (repro/correctness.py), needs the input and a few chunks;
# drawn in one call, threefry's counters and bits sat beside it (2.5× on CPU
# with jax 0.4.35, over 4× with newer releases' partitionable threefry).
# Host-side checks only add small chunks.
PEAK_FACTOR = 2.1
# What the runtime itself holds (jax, XLA, numpy, compiled kernels).
RUNTIME_OVERHEAD_BYTES = 600 * 2**20


class DoesNotFit(Exception):
    """The requested batch does not fit; reported as one line with exit code 3."""




def boundary_indices(n: int, itemsize: int) -> Dict[str, int]:
    """The first batch index whose matrix reaches each overflow boundary."""
    return {
        "2**31 bytes": tolerance.BOUNDARY_BYTES // (n * n * itemsize),
        "2**29 elements": tolerance.BOUNDARY_ELEMENTS // (n * n),
    }


def auto_batches(n: int, itemsize: int, window: int, backend: str) -> List[int]:
    """Batch sizes below (2**28 bytes), at and (off CPU) beyond the 2**31-byte boundary.

    On CPU only `below` and `at` run, so the default run takes about a minute
    on two cores yet still crosses the boundary with a full window past it;
    the smallest batch that does is the one index at the boundary + window + 1.
    """
    boundaries = boundary_indices(n, itemsize)
    at_bytes = boundaries["2**31 bytes"]
    sizes = [max(1, at_bytes // 8), at_bytes + window + 1]
    if backend != "cpu":
        sizes.append(at_bytes * 5 // 4)
        elements = boundaries["2**29 elements"]
        if elements > at_bytes:  # float64: the element count overflows later
            sizes.append(elements + window + 1)
    return sorted(set(sizes))


def mem_available_bytes() -> Optional[int]:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def device_free_bytes(device: Any) -> Optional[int]:
    """Free accelerator memory from memory_stats(), where the backend offers it."""
    stats_method = getattr(device, "memory_stats", None)
    if not callable(stats_method):
        return None
    try:
        stats = stats_method()
    except Exception:  # unimplemented on some backends/releases
        return None
    if not stats or "bytes_limit" not in stats:
        return None
    return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))


def memory_plan(n: int, dtype: str, batch: int) -> Dict[str, int]:
    """Bytes this case needs on the device and on the host."""
    itemsize = np.dtype(dtype).itemsize
    input_bytes = batch * n * n * itemsize
    # sign, logabsdet, det on the host (float64 copies), plus a chunk of rows in
    # float64 with its reference workspace (≈4 copies).
    host_working = 3 * batch * 8 + 4 * min(CHUNK_BYTES, batch * n * n * 8)
    return {
        "input_bytes": input_bytes,
        "device_peak_bytes": int(PEAK_FACTOR * input_bytes),
        "host_working_bytes": host_working + RUNTIME_OVERHEAD_BYTES,
    }


def check_fits(plans: List[Dict[str, Any]], backend: str, device: Any, max_memory_gb: Optional[float]) -> None:
    """Raise DoesNotFit, naming the case and the figures, if any case is too big."""
    available = mem_available_bytes()
    user_cap = None if max_memory_gb is None else int(max_memory_gb * 2**30)
    device_free = None if backend == "cpu" else device_free_bytes(device)
    for plan in plans:
        memory = plan["memory"]
        if backend == "cpu":  # the device is the host: both add up
            needed = memory["device_peak_bytes"] + memory["host_working_bytes"]
            limits = [(available, "available memory (MemAvailable)"), (user_cap, "--max-memory-gb")]
        else:
            needed = memory["device_peak_bytes"]
            limits = [(device_free, f"free {backend} memory (memory_stats)"), (user_cap, "--max-memory-gb")]
            host_needed = memory["host_working_bytes"]
            if available is not None and host_needed > available:
                raise DoesNotFit(_no_fit(plan, host_needed, available, "available host memory (MemAvailable)"))
        for limit, name in limits:
            if limit is not None and needed > limit:
                raise DoesNotFit(_no_fit(plan, needed, limit, name))


def gb(value: float) -> str:
    return f"{value / 2**30:.2f} GiB"


def _no_fit(plan: Dict[str, Any], needed: int, limit: int, name: str) -> str:
    return (
        f"batch {plan['batch']} × {plan['n']}×{plan['n']} {plan['dtype']} needs about {gb(needed)} "
        f"(input {gb(plan['memory']['input_bytes'])}, peak ≈ {PEAK_FACTOR}× input) but {name} is {gb(limit)}; "
        "choose smaller --batches or run on a machine with more memory"
    )


# --------------------------------------------------------------------------
# Which entries to check


def ranges_to_check(batch: int, n: int, itemsize: int, window: int) -> Tuple[List[Tuple[int, int]], List[Dict[str, Any]]]:
    """Contiguous [lo, hi) ranges: head, tail and a window around each boundary in range."""
    ranges = [(0, min(batch, window)), (max(0, batch - window), batch)]
    boundaries = []
    for name, index in boundary_indices(n, itemsize).items():
        inside = index < batch
        entry: Dict[str, Any] = {"name": name, "index": index, "byte_offset": index * n * n * itemsize,
                                 "in_batch": inside, "checked": None}
        if inside:
            lo, hi = max(0, index - window), min(batch, index + window + 1)
            ranges.append((lo, hi))
            entry["checked"] = [lo, hi - 1]
        boundaries.append(entry)
    return [(lo, hi) for lo, hi in ranges if hi > lo], boundaries


def merge_ranges(ranges: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    merged: List[Tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


# --------------------------------------------------------------------------
# On a TPU: sized to the chip
#
# A TPU has no forgiving host memory to spill into, and its LU pads each
# matrix's minor dimension to 128 lanes: past 2**31 bytes of float32, slogdet's
# temporaries were 34.4 GiB at 20×20 and 4.04 GiB at 128×128 on a v5e (jax
# 0.10.2), so the CPU's `auto_batches` at 20×20 ran out of HBM. Each case is
# instead sized by what the compiler says the plan needs (`peak` below, from
# ``compiled.memory_analysis()``), at the asked matrix size or, where that
# cannot cross the boundaries, at 128 or 256 (tile-sized, so little padding).

TPU_DTYPES = ("float32", "complex64")
"""What XLA's TPU LU takes ("Only F32 and C64"): float64 cannot run there (its references stay float64 on the host)."""
TPU_LANES = 128
TPU_SUBLANES = 8
TPU_TEMP_FACTOR = 2.0
"""slogdet's temporaries per input byte at a 128-lane size, for when the compiler cannot say (measured 4.04 / 2.00)."""
TPU_MATRIX_SIZES = (128, 256)
"""Sizes tried, in order, after the asked one: whole tiles, so the padding costs nothing."""
CHIP_HEADROOM_BYTES = 256 * 2**20
"""Kept free beyond the compiled plan: the draw's chunks on their way in and the runtime's own buffers."""

# peak(n, dtype, batch) -> (bytes the compiled slogdet/det need on the chip, or None when the compiler refused
# it as too big; where the figure came from, in words)
Peak = Callable[[int, str, int], Tuple[Optional[int], str]]


def tpu_dtypes(dtypes: List[str]) -> Tuple[List[str], List[str]]:
    """The dtypes a TPU can factorise, and a sentence for each asked one it cannot (float64 gives way to complex64)."""
    kept = [dtype for dtype in dtypes if dtype in TPU_DTYPES]
    notes = []
    if "float64" in dtypes:
        instead = "" if "complex64" in kept else "; complex64, the TPU's other LU type, ran in its place"
        if instead:
            kept.append("complex64")
        notes.append("float64 was not run: XLA's LU on TPU takes float32 and complex64 only (\"Only F32 and C64\")"
                     f"{instead}; the references are float64 (complex128) on the host either way")
    return kept, notes


def tpu_estimate_bytes(n: int, itemsize: int, batch: int) -> int:
    """What slogdet of ``batch`` n×n matrices needs on a TPU when the compiler cannot say: input plus temporaries
    that grow as each matrix's padding to a (`TPU_SUBLANES`, `TPU_LANES`) tile does (2.0× at 128×128; at 20×20
    this says 15×, measured 17×)."""
    input_bytes = batch * n * n * itemsize
    padded = (-(-n // TPU_SUBLANES) * TPU_SUBLANES) * (-(-n // TPU_LANES) * TPU_LANES)
    return int(input_bytes * (1 + TPU_TEMP_FACTOR * padded / (n * n)))


def chip_targets(n: int, itemsize: int, window: int) -> List[Tuple[str, int]]:
    """The batches a chip run wants, largest first: past 2**29 elements, past 2**31 bytes, and one well below.

    For float32 both boundaries fall on the same index: one batch crosses both.
    """
    at = boundary_indices(n, itemsize)
    targets = {"below the boundaries": max(1, at["2**31 bytes"] // 8)}
    for name in ("2**31 bytes", "2**29 elements"):
        batch = at[name] + window + 1
        same = [key for key, value in targets.items() if value == batch]
        if same:
            del targets[same[0]]
            name = f"{same[0]} and {name}"
        targets[name] = batch
    return sorted(((name, batch) for name, batch in targets.items()), key=lambda item: -item[1])


def chip_fits(needed: Optional[int], limit: Optional[int]) -> bool:
    """Whether a plan needing ``needed`` bytes (None: the compiler refused it) fits ``limit`` (None: unknown, and
    the compiler, which checks the chip's memory itself, accepted it)."""
    return needed is not None and (limit is None or needed + CHIP_HEADROOM_BYTES <= limit)


def size_to_chip(asked_n: int, dtypes: List[str], window: int, limit: Optional[int],
                 peak: Peak) -> Dict[str, Any]:
    """The cases for a chip with ``limit`` bytes free: the first matrix size (the asked one, then
    `TPU_MATRIX_SIZES`) where the most boundaries are crossed, and a sentence for each one that is not."""
    best: Optional[Dict[str, Any]] = None
    tried: List[Dict[str, Any]] = []  # every size's figures, kept as evidence (why 20×20 was left)
    for n in [asked_n] + [size for size in TPU_MATRIX_SIZES if size > asked_n]:
        sized = _sized_at(n, dtypes, window, limit, peak)
        tried += sized["peaks"]
        if best is None or sized["crossed"] > best["crossed"]:
            best = sized
        if not sized["not_crossed"]:
            break
    assert best is not None
    best["peaks"] = tried
    if best["n"] != asked_n:
        best["notes"].insert(0, f"matrix size {best['n']}×{best['n']} instead of the asked {asked_n}×{asked_n}: "
                                f"past the boundaries at {asked_n}×{asked_n} the TPU's LU (tiles padded to "
                                f"{TPU_LANES}) needs more than the chip's {_limit_text(limit)}")
    return best


def _sized_at(n: int, dtypes: List[str], window: int, limit: Optional[int], peak: Peak) -> Dict[str, Any]:
    cases: List[Tuple[str, int]] = []
    peaks: List[Dict[str, Any]] = []
    not_crossed: List[str] = []
    crossed = 0
    for dtype in dtypes:
        fitted = False
        for name, batch in chip_targets(n, np.dtype(dtype).itemsize, window):
            if not fitted:
                needed, source = peak(n, dtype, batch)
                peaks.append({"dtype": dtype, "batch": batch, "n": n, "bytes": needed, "source": source})
                fitted = chip_fits(needed, limit)
                if not fitted and not name.startswith("below"):
                    not_crossed.append(_not_crossed(name, dtype, n, batch, needed, source, limit))
            if fitted:  # a smaller batch needs less: it fits too
                cases.append((dtype, batch))
                crossed += 0 if name.startswith("below") else name.count("2**")
    return {"n": n, "cases": cases, "crossed": crossed, "not_crossed": not_crossed, "peaks": peaks, "notes": []}


def _not_crossed(name: str, dtype: str, n: int, batch: int, needed: Optional[int], source: str,
                 limit: Optional[int]) -> str:
    input_bytes = batch * n * n * np.dtype(dtype).itemsize
    need = f"more than the chip holds ({source})" if needed is None else f"{gb(needed)} ({source})"
    return (f"{dtype} did not cross {name} at {n}×{n}: batch {batch} ({gb(input_bytes)} of input) needs {need} "
            f"on the chip, which has {_limit_text(limit)}")


def _limit_text(limit: Optional[int]) -> str:
    return "an unknown amount free (memory_stats gave nothing)" if limit is None else f"{gb(limit)} free"
