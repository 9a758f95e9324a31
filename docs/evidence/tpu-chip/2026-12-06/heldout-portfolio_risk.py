"""Shrinkage covariance fit for a book of portfolios, one 12-asset portfolio per desk, batched over 256 desks
and sharded over 4 devices. Four objectives, each a jitted value_and_grad rebuilt every epoch."""
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

DESKS, DAYS, ASSETS, STEPS = 256, 48, 12, 3


def chol_whiten(cov, r):
    """Whitened returns; the loss and the rolling window both call it."""
    chol = jnp.linalg.cholesky(cov)
    return jax.scipy.linalg.solve_triangular(chol, r, lower=True)


def shrunk_cov(log_shrink, returns):
    sample = jnp.einsum("bta,btc->bac", returns, returns) / DAYS
    lam = jax.nn.sigmoid(log_shrink)
    return (1 - lam) * sample + (lam + 1e-3) * jnp.eye(ASSETS)


def nll(log_shrink, returns):
    cov = shrunk_cov(log_shrink, returns)
    z = chol_whiten(cov, jnp.swapaxes(returns, 1, 2))
    _, logdet = jnp.linalg.slogdet(cov)
    return 0.5 * jnp.mean(jnp.sum(z * z, axis=(1, 2)) / DAYS + logdet)


def min_variance(log_shrink, returns):
    cov = shrunk_cov(log_shrink, returns)
    w = jnp.linalg.solve(cov, jnp.ones((DESKS, ASSETS, 1)))[..., 0]
    w = w / jnp.sum(w, axis=1, keepdims=True)
    return jnp.mean(jnp.einsum("ba,bac,bc->b", w, cov, w))


def spectrum(log_shrink, returns):
    evals = jnp.linalg.eigh(shrunk_cov(log_shrink, returns))[0]
    return jnp.mean(jnp.log(evals[:, -1] / evals[:, 0]))


def rolling(log_shrink, returns):
    def body(total, shift):
        window = jnp.roll(returns, shift, axis=1)
        z = chol_whiten(shrunk_cov(log_shrink, window), jnp.swapaxes(window, 1, 2))
        return total + jnp.mean(z * z), None
    total, _ = jax.lax.scan(body, jnp.float32(0.0), jnp.arange(STEPS))
    return total / STEPS


OBJECTIVES = {"nll": nll, "min_variance": min_variance, "spectrum": spectrum, "rolling": rolling}


def main():
    mesh = Mesh(np.array(jax.devices()[:4]), ("desk",))
    rng = np.random.default_rng(7)
    returns = rng.standard_normal((DESKS, DAYS, ASSETS)).astype(np.float32)
    returns = jax.device_put(returns, NamedSharding(mesh, P("desk")))
    log_shrink = jnp.float32(-1.0)
    for epoch in range(2):
        steps = {name: jax.jit(jax.value_and_grad(f)) for name, f in OBJECTIVES.items()}
        for name, step in steps.items():
            value, grad = step(log_shrink, returns)
            log_shrink = log_shrink - 0.05 * grad
            print(f"epoch {epoch} {name:12s} loss {float(value):9.4f} shrink {float(jax.nn.sigmoid(log_shrink)):.3f}")


if __name__ == "__main__":
    main()
