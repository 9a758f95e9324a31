"""Audit a batch of element stiffness matrices sharded over 4 devices: LU pivot growth (p, l, u),
rank, the gradient of a checkpointed spectral energy, and a shifted solve by a pytree's jitted method."""
import functools
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

BATCH, N = 512, 12

@functools.partial(jax.jit, static_argnums=1)
def pivot_growth(k, power):
    p, l, u = jax.vmap(jsl.lu)(k)
    growth = jnp.max(jnp.abs(u), axis=(1, 2)) / jnp.max(jnp.abs(k), axis=(1, 2))
    swaps = jnp.sum(jnp.abs(jnp.diagonal(p, axis1=1, axis2=2) - 1.0), axis=1)
    return growth ** power, swaps, jnp.max(jnp.abs(l), axis=(1, 2))

@jax.checkpoint
def spectral_energy(k):
    w, v = jnp.linalg.eigh(k)
    return jnp.sum(jnp.log1p(jnp.abs(w)) * jnp.sum(v * v, axis=-2), axis=-1)

energy_grad = jax.jit(jax.grad(lambda k: jnp.sum(spectral_energy(k))))
rank_report = jax.jit(jnp.linalg.matrix_rank)

@jax.tree_util.register_pytree_node_class
class Preconditioner:
    def __init__(self, shift):
        self.shift = shift
    def tree_flatten(self):
        return (self.shift,), None
    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)
    @jax.jit
    def apply(self, k, f):
        return jnp.linalg.solve(k + self.shift * jnp.eye(N), f[..., None])[..., 0]

if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((BATCH, N, N)).astype(np.float32)
    k = jax.device_put(a + np.swapaxes(a, 1, 2), NamedSharding(mesh, P("batch")))
    f = jax.device_put(rng.standard_normal((BATCH, N)).astype(np.float32), NamedSharding(mesh, P("batch")))
    g1, s1, l1 = pivot_growth(k, 1)
    g2, _, _ = pivot_growth(k, 2)
    de, r = energy_grad(k), rank_report(k)
    x = Preconditioner(np.float32(0.5)).apply(k, f)
    for name, v in (("growth", g1), ("growth2", g2), ("swaps", s1), ("dE", de), ("rank", r), ("x", x)):
        print(name, np.asarray(v).shape, float(np.abs(np.asarray(v)).mean()))
