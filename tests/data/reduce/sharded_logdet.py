"""A user's Gaussian log-likelihood over a batch of covariance matrices, sharded over the batch.

The log-determinant term is the hot spot; the user asks why it does not get faster with more devices.
"""
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

BATCH = 256
DIM = 6


def covariances(key, batch, dim):
    factors = jax.random.normal(key, (batch, dim, dim))
    return factors @ jnp.swapaxes(factors, -1, -2) + dim * jnp.eye(dim)


def log_likelihood(cov, x):
    sign, logdet = jnp.linalg.slogdet(cov)
    solved = jnp.linalg.solve(cov, x[..., None])[..., 0]
    quad = jnp.sum(x * solved, axis=-1)
    return -0.5 * (logdet + quad + cov.shape[-1] * jnp.log(2 * jnp.pi))


def main():
    devices = np.array(jax.devices())
    mesh = Mesh(devices, ("batch",))
    spec = NamedSharding(mesh, P("batch"))
    key = jax.random.PRNGKey(42)
    k1, k2 = jax.random.split(key)
    cov = jax.device_put(covariances(k1, BATCH, DIM), spec)
    x = jax.device_put(jax.random.normal(k2, (BATCH, DIM)), spec)
    fn = jax.jit(log_likelihood)
    fn(cov, x).block_until_ready()
    start = time.perf_counter()
    for _ in range(3):
        out = fn(cov, x)
    out.block_until_ready()
    print(f"{len(devices)} devices: mean log-likelihood {float(out.mean()):.3f}, "
          f"{(time.perf_counter() - start) / 3 * 1e3:.2f} ms per call")


if __name__ == "__main__":
    main()
