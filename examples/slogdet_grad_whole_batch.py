"""Bisect script: does any linear-algebra op of a batch-sharded slogdet loss's gradient hold the whole batch?

    nox -s bisect -- --script examples/slogdet_grad_whole_batch.py --good 0.6.0 --bad 0.4.35 --commits --jax-repo DIR

The thread's program, scaled down (../shared/seed/discussion-slogdet-sharding.txt): a small MLP
whose output matrices feed a `slogdet` loss, `jit(grad(...))`, the batch sharded over 4 CPU host
devices. The compiled HLO is read for every LAPACK custom call and every `triangular-solve` or
`cholesky` op (the forward LU, the backward pass's triangular solves):

    exit 0   each of them works on BATCH / 4 matrices per device (the batch is split)
    exit 1   any of them works on all BATCH matrices on every device (replicated work)
    exit 125 no such op found, or another batch size (cannot tell: skip)

Unlike examples/sharded_slogdet_lu.py (the forward LU alone), one bit here merges several ops
that change in two places: f93c2a1aa5 makes the LU and the triangular solves batch-partitionable,
but the CPU triangular solve only takes that path when `jaxlib_version > (0, 5, 1)` (2ce88c950a).

Runs with each release's own python (jax 0.4.13 on); stdlib + jax/numpy only.
"""

import os
import re
import sys

DEVICES = 4
BATCH = 64
N = 8

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={DEVICES}"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402  (after XLA_FLAGS: the device count is read at import)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

LINALG = re.compile(r"custom_call_target=\"[^\"]*(?:getrf|potrf|trsm|geqrf|syevd|gesdd)[^\"]*\"|"
                    r"\s(?:triangular-solve|cholesky)\(")
SHAPE = re.compile(r"=\s*\(?\s*[a-z0-9]+\[([\d,]+)\]")


def linalg_batches(hlo: str) -> list:
    """(op, leading dimension) of every linear-algebra op on a batch of matrices (rank 3 or more)."""
    found = []
    for line in hlo.splitlines():
        op = LINALG.search(line)
        shape = SHAPE.search(line)
        if op and shape and len(shape.group(1).split(",")) >= 3:
            found.append((op.group(0).strip().split("=")[-1].strip('"('), int(shape.group(1).split(",")[0])))
    return found


def loss(params, x):
    hidden = jnp.tanh(x @ params["w1"])
    matrices = hidden @ params["w2"] + 3.0 * jnp.eye(N, dtype=x.dtype)
    _sign, logdet = jnp.linalg.slogdet(matrices)
    return -jnp.mean(logdet)


def main() -> int:
    if len(jax.devices()) < DEVICES:
        print(f"only {len(jax.devices())} devices")
        return 125
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("batch",))
    rng = np.random.default_rng(0)
    params = {name: rng.standard_normal((N, N)).astype(np.float32) / N for name in ("w1", "w2")}
    x = jax.device_put(rng.standard_normal((BATCH, N, N)).astype(np.float32),
                       NamedSharding(mesh, PartitionSpec("batch")))
    hlo = jax.jit(jax.grad(loss)).lower(params, x).compile().as_text()
    ops = linalg_batches(hlo)
    whole = sorted({op for op, batch in ops if batch == BATCH})
    print(f"jax {jax.__version__}: linalg ops (op, batch per device): {ops}; whole batch: {whole or 'none'}")
    if ops and not whole and all(batch == BATCH // DEVICES for _, batch in ops):
        return 0
    if whole:
        return 1
    return 125


if __name__ == "__main__":
    sys.exit(main())
