"""Bisect script: is a cumulative sum over a sharded axis right? (jax#21403, a jaxlib-only fix)

    nox -s bisect -- --script examples/sharded_cumsum_21403.py --good 0.4.29 --bad 0.4.28 --commits

jaxlib 0.4.29's notes: "Fixed a bug where XLA sharded some concatenation
operations incorrectly, which manifested as an incorrect output for
cumulative reductions (#21403)." It shows on CPU: ``jit(jnp.cumsum)`` of 32
values sharded over 2 host devices is wrong on jaxlib 0.4.28. The fix is in
XLA, so with ``--commits`` the report says "not in JAX's Python": jax-v0.4.29's
own Python on jaxlib 0.4.28 is still wrong.

    exit 0   the sharded cumulative sum matches numpy's (good)
    exit 1   it does not (bad)
    exit 125 fewer than 2 devices (cannot tell: skip)

Runs with each release's own python; numpy + jax only.
"""

import os
import sys

DEVICES = 2
N = 32

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={DEVICES}"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402  (after XLA_FLAGS: the device count is read at import)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

if len(jax.devices()) < DEVICES:
    print(f"only {len(jax.devices())} device(s): cannot shard over {DEVICES}")
    sys.exit(125)
x = np.arange(N, dtype=np.float32) % 7
mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("x",))
got = np.asarray(jax.jit(jnp.cumsum)(jax.device_put(x, NamedSharding(mesh, PartitionSpec("x")))))
wrong = int(np.sum(~np.isclose(got, np.cumsum(x))))
print(f"jax {jax.__version__}: {wrong} of {N} entries of the sharded cumsum are wrong")
sys.exit(1 if wrong else 0)
