"""Modal tuning of 64 spring-mass chains (24 degrees of freedom each) with lumped masses: the lowest four
frequencies are pushed towards a target by gradient descent, then the mode shapes are re-orthonormalised by QR
and projected on a load. The chains are placed over 4 devices with jax.device_put."""
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

CHAINS, DOF = 64, 24


def stiffness(k):
    main = k + jnp.roll(k, -1, axis=1)
    off = -k[:, 1:]
    return jax.vmap(lambda d, o: jnp.diag(d) + jnp.diag(o, 1) + jnp.diag(o, -1))(main, off)


def modes(k, mass):
    w = 1.0 / jnp.sqrt(mass)
    kw = w[:, :, None] * stiffness(k) * w[:, None, :]
    evals, evecs = jax.vmap(jnp.linalg.eigh)(kw)
    return evals, w[:, :, None] * evecs


def gap_loss(k, mass, target):
    evals, _ = modes(k, mass)
    return jnp.mean((jnp.sqrt(jnp.abs(evals[:, :4])) - target) ** 2)


@jax.jit
def orthonormal(basis):
    q, r = jnp.linalg.qr(basis)
    return q * jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))[:, None, :]


@jax.jit
def participation(k, mass, load):
    _, shapes = modes(k, mass)
    q = orthonormal(shapes[:, :, :6])
    orient = jnp.linalg.det(q[:, :6, :])
    return jnp.einsum("bdm,bd->bm", q, load) * jnp.sign(orient)[:, None]


def main():
    mesh = Mesh(np.array(jax.devices()[:4]), ("chain",))
    place = NamedSharding(mesh, P("chain"))
    rng = np.random.default_rng(5)
    k = jax.device_put(rng.uniform(1.0, 2.0, (CHAINS, DOF)).astype(np.float32), place)
    mass = jax.device_put(rng.uniform(0.5, 1.5, (CHAINS, DOF)).astype(np.float32), place)
    load = jax.device_put(rng.standard_normal((CHAINS, DOF)).astype(np.float32), place)
    target = jnp.array([0.05, 0.15, 0.25, 0.35], dtype=jnp.float32)
    tune = jax.jit(jax.value_and_grad(gap_loss))
    for it in range(3):
        loss, grad = tune(k, mass, target)
        k = jnp.clip(k - 2.0 * grad, 0.1, None)
        print(f"iter {it}: loss {float(loss):.5f}")
    print("participation", float(jnp.abs(participation(k, mass, load)).sum()))


if __name__ == "__main__":
    main()
