"""Kernel ridge fits for a batch of small problems, sharded over 4 host devices."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

B, N = 128, 10


def gram(x):
    d = x[:, :, None, :] - x[:, None, :, :]
    return jnp.exp(-jnp.sum(d * d, axis=-1))


@jax.jit
def fit(x, y, lam):
    k = gram(x) + lam * jnp.eye(N)
    c = jnp.linalg.cholesky(k)
    alpha = jax.scipy.linalg.cho_solve((c, True), y)
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(c, axis1=1, axis2=2)), axis=-1)
    return alpha, logdet


@jax.jit
def leverage(x, lam):
    k = gram(x) + lam * jnp.eye(N)
    hat = k @ jnp.linalg.inv(k + lam * jnp.eye(N))
    return jnp.trace(hat, axis1=1, axis2=2)


if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()[:4]), ("b",))
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.standard_normal((B, N, 3)).astype(np.float32), NamedSharding(mesh, P("b")))
    y = jax.device_put(rng.standard_normal((B, N)).astype(np.float32), NamedSharding(mesh, P("b")))
    alpha, logdet = fit(x, y, 0.1)
    print("logdet mean", float(jnp.mean(logdet)))
    print("leverage mean", float(jnp.mean(leverage(x, 0.1))))
