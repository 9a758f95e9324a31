"""Transient temperatures of many small RC thermal networks: exact propagator and implicit time marching."""
import functools

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

NETS, NODES, STEPS = 128, 8, 6


def spd_step(k, temp):
    return jsl.solve(k, temp, assume_a="pos")


def implicit_march(cond, temp0, dt):
    k = jnp.eye(NODES) + dt * cond
    def body(temp, _):
        temp = spd_step(k, temp)
        return temp, jnp.max(temp)
    final, peaks = lax.scan(body, temp0, None, length=STEPS)
    return final, peaks


marchers = [jax.jit(jax.vmap(functools.partial(implicit_march, dt=dt))) for dt in (0.01, 0.2)]


@jax.jit
def propagator(cond, temp0):
    kernel = jax.vmap(lambda c: jsl.expm(-0.5 * c))(cond)
    return jnp.einsum("bij,bj->bi", kernel, temp0)


if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()[:4]), ("net",))
    batch = NamedSharding(mesh, P("net"))
    rng = np.random.default_rng(1)
    g = rng.uniform(0.1, 1.0, (NETS, NODES, NODES)).astype(np.float32)
    g = 0.5 * (g + g.transpose(0, 2, 1))
    cond = (np.eye(NODES, dtype=np.float32) * g.sum(-1, keepdims=True) * 1.1 - g).astype(np.float32)
    temp0 = rng.uniform(0.0, 1.0, (NETS, NODES)).astype(np.float32)
    cond, temp0 = jax.device_put(cond, batch), jax.device_put(temp0, batch)
    for march in marchers:
        final, peaks = march(cond, temp0)
        print("implicit final mean", float(final.mean()), "peak", float(peaks.max()))
    exact = propagator(cond, temp0)
    print("exact mean", float(exact.mean()))
