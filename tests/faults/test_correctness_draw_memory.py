"""repro.correctness_draw.draw in real releases: the batch a chunk at a time, in place, the same on every call.

In an old and a new release (built first where absent): the drawn batch is
exactly each chunk's standard normal from the seed's ``i``-th spawned numpy
stream, laid end to end (a short last chunk included), whatever the number of
drawing threads, and the draw's peak memory is the batch and a few chunks,
well under the 2.4-4× of one ``jax.random.normal`` call for the whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from tests.real_releases import release_python

REPO = Path(__file__).resolve().parent.parent.parent
ENVS = REPO / ".nox" / "jax-envs"

CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import jax
    from repro import compat, correctness_draw

    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    n, rows = 4, 5
    correctness_draw.DRAW_CHUNK_BYTES = rows * n * n * 4  # chunks of 5 rows: 13 rows are 5 + 5 + 3
    plan = {"n": n, "dtype": "float32", "batch": 13}
    drawn = np.asarray(correctness_draw.draw(jax, compat, plan, 7))
    parts = [np.random.default_rng(np.random.SeedSequence(7, spawn_key=(i,))).standard_normal((m, n, n), "float32")
             for i, m in enumerate((5, 5, 3))]
    same = bool(np.array_equal(drawn, np.concatenate(parts)))
    correctness_draw.DRAW_WORKERS = 1  # another number of threads: the same batch
    again = bool(np.array_equal(drawn, np.asarray(correctness_draw.draw(jax, compat, plan, 7))))
    correctness_draw.DRAW_CHUNK_BYTES, correctness_draw.DRAW_WORKERS = 2**26, 2
    key = compat.random_key(7)
    big = {"n": 20, "dtype": "float32", "batch": 200_000}  # 0.30 GiB
    before = peak()
    x = correctness_draw.draw(jax, compat, big, 0)
    compat.block_until_ready(x)
    chunked, size = peak() - before, x.nbytes
    del x
    whole = jax.random.normal(key, (200_000, 20, 20), "float32")  # what the repro did before
    compat.block_until_ready(whole)
    print(json.dumps({"same": same, "again": again, "chunked": chunked, "whole": peak() - before, "input": size}))
""")


@pytest.mark.integration
@pytest.mark.parametrize("version", ["0.4.20", "0.6.0"])
def test_the_batch_is_drawn_a_chunk_at_a_time_in_place(version: str) -> None:
    python = release_python(version)  # built here first where it is not
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([str(python), "-c", CHILD], env=env, capture_output=True, text=True, timeout=600,
                          check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["same"]
    assert figures["again"]
    # The batch, a chunk's draw and the compiler's own growth, against one call for the whole batch, which
    # held 2.4x (threefry) to 4x (partitionable threefry) the input: at least half the input saved.
    assert figures["chunked"] + figures["input"] / 2 < figures["whole"], figures
