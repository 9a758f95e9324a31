"""Polynomial calibration of many temperature sensors: per-sensor least squares, sharded over 4 devices."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

SENSORS, SAMPLES, MAX_ORDER = 256, 16, 6


def vandermonde(t, order):
    return jnp.stack([t ** k for k in range(order)], axis=-1)


def make_fit(order):
    def fit(t, y):
        a = vandermonde(t, order)
        coef = jax.vmap(lambda ai, yi: jnp.linalg.lstsq(ai, yi)[0])(a, y)
        resid = y - jnp.einsum("bso,bo->bs", a, coef)
        return coef, jnp.mean(resid ** 2, axis=-1)
    return fit


fits = {order: jax.jit(make_fit(order)) for order in (3, 4, MAX_ORDER)}


@functools.partial(jax.jit, static_argnames=("ridge",))
def conditioning(t, ridge):
    a = vandermonde(t, MAX_ORDER)
    gram = jnp.einsum("bso,bsp->bop", a, a) + ridge * jnp.eye(MAX_ORDER)
    lam = jnp.linalg.eigvalsh(gram)
    spec = jnp.linalg.norm(a, ord=2, axis=(-2, -1))
    return lam[..., -1] / lam[..., 0], spec


if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()[:4]), ("sensor",))
    batch = NamedSharding(mesh, P("sensor"))
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 1.0, SAMPLES, dtype=np.float32) + 0.01 * rng.standard_normal((SENSORS, SAMPLES), dtype=np.float32)
    y = (1.0 + 0.5 * t - 0.2 * t ** 2 + 0.05 * rng.standard_normal((SENSORS, SAMPLES))).astype(np.float32)
    t, y = jax.device_put(t, batch), jax.device_put(y, batch)
    for order, fit in fits.items():
        coef, mse = fit(t, y)
        print(f"order {order}: mean residual {float(mse.mean()):.3e}")
    for ridge in (0.0, 1e-3):
        kappa, spec = conditioning(t, ridge=ridge)
        print(f"ridge {ridge}: worst condition {float(kappa.max()):.3e}, largest norm {float(spec.max()):.3f}")
