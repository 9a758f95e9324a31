"""Gain calibration for 512 sensor arrays (32 readings of 8 channels each), the arrays sharded over 4 devices.
One shared gain matrix is fitted by least squares per array, for two ridge strengths; the step is rebuilt per
ridge and round."""
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

ARRAYS, READINGS, CHANNELS = 512, 32, 8
RIDGES = (1e-3, 1e-1)


def project(a, y):
    """Least-squares coefficients by QR; the fit and its refinement loop both call it."""
    q, r = jnp.linalg.qr(a)
    qty = jnp.einsum("bnc,bn->bc", q, y)[..., None]
    return jax.scipy.linalg.solve_triangular(r, qty, lower=False)[..., 0]


def make_fit(ridge):
    def fit(gain, readings, target):
        a = readings @ gain
        resid = target - jnp.einsum("bnc,bc->bn", a, project(a, target))

        def refine(i, r):
            return r - 0.5 * jnp.einsum("bnc,bc->bn", a, project(a, r))

        resid = jax.lax.fori_loop(0, 2, refine, resid)
        s = jnp.linalg.svd(a, compute_uv=False)
        gram = jnp.swapaxes(a, 1, 2) @ a + ridge * jnp.eye(CHANNELS)
        gram_inv = jnp.linalg.inv(gram)
        penalty = jnp.mean(s[:, 0] / s[:, -1]) + jnp.mean(jnp.trace(gram_inv, axis1=1, axis2=2))
        return jnp.mean(resid ** 2) + ridge * penalty
    return fit


def main():
    mesh = Mesh(np.array(jax.devices()[:4]), ("arrays",))
    rows, rep = NamedSharding(mesh, P("arrays")), NamedSharding(mesh, P())
    rng = np.random.default_rng(3)
    readings = rng.standard_normal((ARRAYS, READINGS, CHANNELS)).astype(np.float32)
    truth = np.eye(CHANNELS, dtype=np.float32) + 0.1 * rng.standard_normal((CHANNELS, CHANNELS)).astype(np.float32)
    target = np.einsum("bnc,cd,d->bn", readings, truth, np.ones(CHANNELS, np.float32))
    readings, target = jax.device_put(readings, rows), jax.device_put(target.astype(np.float32), rows)
    gain = jax.device_put(jnp.eye(CHANNELS), rep)
    for rnd in range(2):
        for ridge in RIDGES:
            step = jax.jit(jax.value_and_grad(make_fit(ridge)))
            value, grad = step(gain, readings, target)
            gain = gain - 0.1 * grad
            print(f"round {rnd} ridge {ridge:g} loss {float(value):.5f}")


if __name__ == "__main__":
    main()
