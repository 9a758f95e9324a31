"""Bisect script: is a jitted, vmapped matrix-vector product followed by a sum right on CPU? (jax#39103)

    nox -s bisect -- --script examples/matvec_sum_39103.py --good 0.10.1 --bad 0.10.2 --commits --jax-repo DIR

jax#39103 ("[CPU] jax.jit returns wrong results for vmapped matrix-vector
product followed by reduction"): ``jit(vmap(lambda row: sum((M @ row) ** 2)))``
over 32,769 rows in float32 (16,385 in float64) returns a wrong last entry on
jaxlib 0.10.2 (1071645696 for 32768**2 = 1073741824) and the right one on
jaxlib 0.10.1. Nothing in JAX's Python changed it: jax 0.10.2's Python on
jaxlib 0.10.1 is right, jax 0.10.1's on jaxlib 0.10.2 is wrong. So with
``--commits`` the answer must be "not in JAX's Python", from the forced pair.

    exit 0   every entry matches numpy's float64 sum to 1e-6 (good)
    exit 1   some entry does not (bad)

Runs with each release's own python; numpy + jax only.
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)  # float64 is one of the two cases the issue reports


def wrong_entries(dtype: type, n: int) -> int:
    """How many of the n sums jit gets wrong, against numpy in float64 (each is i**2, exact there)."""
    i = np.arange(n, dtype=dtype)
    rows = np.stack((i, np.zeros_like(i), np.zeros_like(i)), axis=1)
    matrix = np.eye(3, dtype=dtype)
    got = np.asarray(jax.jit(jax.vmap(lambda row: jnp.sum((matrix @ row) ** 2)))(rows))
    want = (rows.astype(np.float64) ** 2).sum(axis=1)
    wrong = int(np.sum(~np.isclose(got.astype(np.float64), want, rtol=1e-6, atol=0)))
    print(f"{np.dtype(dtype).name} n={n}: {wrong} of {n} sums wrong; last {got[-1]:.1f}, numpy {want[-1]:.1f}")
    return wrong


wrong = wrong_entries(np.float32, 32_769) + wrong_entries(np.float64, 16_385)
sys.exit(1 if wrong else 0)
