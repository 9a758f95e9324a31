"""Fit a shared mixing matrix W to batches of upper-triangular systems with hand-rolled SGD,
then compress the solved batch to rank-k with a per-example thin SVD (jax.lax.map)."""
import jax
import jax.numpy as jnp
import numpy as np
import jax.scipy.linalg as jsl
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

CFG = {"lr": 0.05, "ridge": 1e-2, "rank": 3, "steps": 3}
BATCH, N, K = 256, 8, 4


def make_step(cfg):
    def loss(w, r, b):
        r = jnp.triu(r) + (N + cfg["ridge"]) * jnp.eye(N)
        # R^T x = b W : one transposed triangular solve per example
        x = jax.vmap(lambda r_, b_: jsl.solve_triangular(r_, b_ @ w, trans=1, lower=False))(r, b)
        return jnp.mean(x ** 2), x

    def step(w, r, b):
        (l, x), g = jax.value_and_grad(loss, has_aux=True)(w, r, b)
        return w - cfg["lr"] * g, l, x

    return jax.jit(step, donate_argnums=0)


def lowrank(x):
    u, s, vt = jnp.linalg.svd(x, full_matrices=False)
    k = CFG["rank"]
    return (u[:, :k] * s[:k]) @ vt[:k]


compress = jax.jit(lambda xs: jax.lax.map(lowrank, xs))

if __name__ == "__main__":
    mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
    sh, rep = NamedSharding(mesh, P("batch")), NamedSharding(mesh, P())
    kr, kb = jax.random.split(jax.random.PRNGKey(0))
    r = jax.device_put(jax.random.normal(kr, (BATCH, N, N)), sh)
    b = jax.device_put(jax.random.normal(kb, (BATCH, N, K)), sh)
    w = jax.device_put(jnp.eye(K), rep)
    step = make_step(CFG)
    for i in range(CFG["steps"]):
        w, l, x = step(w, r, b)
        print(f"step {i} loss {float(l):.5f}")
    xc = compress(x)
    print("compression error", float(jnp.linalg.norm(x - xc) / jnp.linalg.norm(x)))
