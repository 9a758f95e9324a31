"""Bisect script: does a batch-sharded slogdet give each device only its share of the LU?

    nox -s bisect -- --script examples/sharded_slogdet_lu.py --good 0.6.0 --bad 0.4.20

The bug from the thread behind this kit: on affected releases the compiled
program gathers the whole batch onto every device before the LU custom call,
so more devices do not make slogdet faster. This script compiles
``jit(jnp.linalg.slogdet)`` for a batch sharded over 4 CPU host devices and
reads the LU custom call's operand in the compiled HLO:

    exit 0   each device factorises BATCH / 4 matrices (good: the batch is split)
    exit 1   each device factorises all BATCH matrices (bad: replicated work)
    exit 125 no LU call found, or another batch size (cannot tell: skip)

Runs with each release's own python (jax 0.4.13 on); stdlib + jax only.
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


def lu_batches(hlo: str) -> list:
    """The leading dimension of every LU (getrf) custom call's first result."""
    found = []
    for line in hlo.splitlines():
        if "custom-call" in line and "getrf" in line:
            shape = re.search(r"=\s*\(?\s*[a-z0-9]+\[(\d+)(?:,\d+)*\]", line)
            if shape:
                found.append(int(shape.group(1)))
    return found


def main() -> int:
    if len(jax.devices()) < DEVICES:
        print(f"only {len(jax.devices())} devices")
        return 125
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("batch",))
    x = np.random.default_rng(0).standard_normal((BATCH, N, N)).astype(np.float32)
    x = jax.device_put(x, NamedSharding(mesh, PartitionSpec("batch")))
    hlo = jax.jit(jnp.linalg.slogdet).lower(x).compile().as_text()
    batches = lu_batches(hlo)
    print(f"jax {jax.__version__}: LU batch per device {batches} (global batch {BATCH}, {DEVICES} devices)")
    if batches and all(b == BATCH // DEVICES for b in batches):
        return 0
    if batches and any(b == BATCH for b in batches):
        return 1
    return 125


if __name__ == "__main__":
    sys.exit(main())
