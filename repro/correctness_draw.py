"""How the correctness check's batch is drawn: standard normal matrices, a chunk of rows at a time, into one array
on the device. The same seed gives the same batch on every release, backend and number of threads, so a chunk's
size is part of what the matrices are.
"""

from __future__ import annotations

import math
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Deque, Dict, Iterator, List

import numpy as np

# The batch is drawn this many bytes at a time (`draw`): part of what the matrices are, so fixed.
DRAW_CHUNK_BYTES = 2**26
# Threads drawing chunks: numpy draws on one core per generator.
DRAW_WORKERS = max(1, min(8, os.cpu_count() or 1))


def draw(jax: Any, compat: Any, plan: Dict[str, Any], seed: int) -> Any:
    """The batch of standard normal matrices, drawn a chunk of rows at a time and written into one array on the device.

    One `jax.random.normal` call for the whole batch held its random bits and
    counters beside the result: 2.4× the input at peak (jax 0.4.35), over 4×
    with the partitionable threefry of newer releases. So the batch is made
    in chunks, each written in place (the array is donated): the draw needs
    the batch and a few chunks; factorising the whole batch, the point of the
    check, is then the peak. Chunk ``i`` is numpy's standard normal from the
    seed's ``i``-th spawned stream (`drawn_chunks`), on the host's cores:
    threefry on the device took 8.0 s of a 35 s CPU run for 2 GiB, these
    3.9 s on 2 cores. The same seed gives the same batch on every release and
    backend, whatever the number of threads (chunk size `DRAW_CHUNK_BYTES`).
    """
    jnp = jax.numpy
    n, dtype, batch = plan["n"], np.dtype(plan["dtype"]), plan["batch"]
    rows = max(1, DRAW_CHUNK_BYTES // (n * n * dtype.itemsize))
    starts = range(0, batch, rows)
    put = jax.jit(lambda x, part, lo: jax.lax.dynamic_update_slice(x, part, (lo, 0, 0)), donate_argnums=0)
    x = jnp.zeros((batch, n, n), dtype)
    for lo, part in zip(starts, drawn_chunks(seed, [min(rows, batch - lo) for lo in starts], n, dtype)):
        x = put(x, part, lo)
    return x


def drawn_chunks(seed: int, rows: List[int], n: int, dtype: Any) -> Iterator[np.ndarray]:
    """Each chunk's ``rows[i]`` matrices in order, drawn on `DRAW_WORKERS` threads (numpy's generators let go of
    the GIL while they fill), at most two per thread waiting, so the chunks held at once stay a few."""
    def draw(index: int) -> np.ndarray:
        stream = np.random.SeedSequence(seed % 2**64, spawn_key=(index,))  # the seed's index-th child stream
        generator = np.random.default_rng(stream)
        if np.dtype(dtype).kind == "c":  # numpy draws real numbers only: real and imaginary parts side by side
            real = np.dtype(dtype).char.lower()  # complex64 'F' -> float32 'f'
            part = generator.standard_normal((rows[index], n, n, 2), dtype=real).view(dtype)[..., 0]
        else:
            part = generator.standard_normal((rows[index], n, n), dtype=dtype)
        scale = entry_scale(n, np.dtype(dtype).kind == "c")
        return part if scale == 1.0 else part * part.dtype.type(scale)

    with ThreadPoolExecutor(DRAW_WORKERS) as pool:
        waiting: Deque[Any] = deque()
        for index in range(len(rows)):
            waiting.append(pool.submit(draw, index))
            if len(waiting) > 2 * DRAW_WORKERS:
                yield waiting.popleft().result()
        while waiting:
            yield waiting.popleft().result()


def entry_scale(n: int, complex_: bool) -> float:
    """1 up to 32×32 (the batches of every earlier record stay as they were); beyond, what keeps det in range.

    log|det| of an n×n standard normal matrix is about ½·(n·log n − n): 243 at 128×128, where float32's det
    overflows (its log limit is 88) and every entry would be re-checked as non-finite. Entries of variance
    e/n (e/2n for complex, whose two parts both vary) bring it to about 0, so det is judged too.
    """
    if n <= 32:
        return 1.0
    return math.sqrt(math.e / (2 * n if complex_ else n))
