"""Issue 58's held-out trial t12 (`sensor_precision.py`, here): `jnp.linalg.inv` inside `jax.checkpoint` under a
512-matrix batch sharded over 4 CPU devices, jax 0.4.35, as XLA's dump wrote the program's own run
(tests/data/hlo/sensor_precision-cpu-0.4.35/, gzipped: README.md there).

0.4.35's CPU backend expands inv's triangular solves into loops; their pieces, vmapped over the identity's 12
columns, are f32[512,12,1,12]. Read as "all but the last two extents", each device held 6144 matrices of a batch of
512 ("replicated (6144/512)"); the batch is the leading extent, the columns beside it.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from kit.hlo import FingerprintState, fingerprints, read_module

DATA = Path(__file__).parent / "data" / "hlo" / "sensor_precision-cpu-0.4.35"


def test_a_piece_of_an_expanded_op_counts_its_leading_extent_as_the_batch(tmp_path: Path) -> None:
    modules = []
    for kind in ("cpu_after_optimizations", "before_optimizations"):
        name = f"module_0057.jit_objective.{kind}.txt"
        (tmp_path / name).write_bytes(gzip.decompress((DATA / f"{name}.gz").read_bytes()))
        modules.append(read_module(tmp_path / name))
    lines = (DATA / "sensor_precision.py").read_text(encoding="utf-8").splitlines()
    prints = fingerprints(*modules, read_line=lambda file, n: lines[n - 1] if file.endswith(
        "/sensor_precision.py") and 0 < n <= len(lines) else None)
    solves = [(f.pass_, f.device_batch, f.global_batch, f.state) for f in prints
              if f.location == "sensor_precision.py:15" and f.op == "triangular_solve"]
    assert solves == [(p, 512, 512, FingerprintState.WHOLE) for p in ("forward", "backward")]
    lu = [(f.device_batch, f.state) for f in prints if f.location == "sensor_precision.py:15" and f.op == "lu"]
    assert lu == [(512, FingerprintState.GATHERED)] * 2
