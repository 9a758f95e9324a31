"""Fit one hopping scale t so that the HOMO-LUMO gaps of 512 random tight-binding clusters match measured gaps.
Each Hamiltonian is projected on its Krylov subspace (orthonormalised by QR in a jitted helper), diagonalised per
cluster (eigh under vmap); the entanglement entropy of each ground state (singular values) is a small regulariser."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

CLUSTERS, SITES, BASIS = 512, 12, 8


@jax.jit
def project(h, start):
    cols = [start]
    for _ in range(BASIS - 1):
        nxt = jnp.einsum("bij,bj->bi", h, cols[-1])
        cols.append(nxt / jnp.linalg.norm(nxt, axis=-1, keepdims=True))
    q, _ = jnp.linalg.qr(jnp.stack(cols, axis=-1))
    return jnp.swapaxes(q, -1, -2) @ h @ q


def cluster_gap(hp):
    w, v = jnp.linalg.eigh(hp)
    ground = v[:, 0].reshape(2, BASIS // 2)
    s = jnp.linalg.svd(ground, compute_uv=False)
    p = s ** 2 / jnp.sum(s ** 2)
    return w[BASIS // 2] - w[BASIS // 2 - 1], -jnp.sum(p * jnp.log(p + 1e-12))


def loss(t, onsite, hop, start, target):
    hp = project(onsite + t * hop, start)
    gaps, entropy = jax.vmap(cluster_gap)(hp)
    return jnp.mean((gaps - target) ** 2) + 1e-3 * jnp.mean(entropy)


fit_step = jax.jit(jax.value_and_grad(loss))


def main():
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    batch = NamedSharding(mesh, P(("x", "y")))
    rng = np.random.default_rng(5)
    onsite = np.zeros((CLUSTERS, SITES, SITES), np.float32)
    idx = np.arange(SITES)
    onsite[:, idx, idx] = rng.normal(0.0, 0.3, (CLUSTERS, SITES))
    hop = (rng.random((CLUSTERS, SITES, SITES)) < 0.35).astype(np.float32)
    hop = -np.triu(hop, 1); hop = hop + np.swapaxes(hop, 1, 2)
    start = rng.normal(size=(CLUSTERS, SITES)).astype(np.float32)
    target = rng.uniform(0.4, 0.9, CLUSTERS).astype(np.float32)
    onsite, hop, start, target = (jax.device_put(a, batch) for a in (onsite, hop, start, target))
    t = jnp.float32(1.0)
    for it in range(4):
        value, g = fit_step(t, onsite, hop, start, target)
        t = t - 0.5 * g
        print(f"iter {it}: loss {float(value):.5f} t {float(t):.4f}")


if __name__ == "__main__":
    main()
