"""Implicit (backward Euler) time stepping of 128 thermal RC networks of 16 nodes each, batched over the
networks and sharded over 4 devices; a steady state by Cholesky and a pseudo-inverse spectral check."""
import functools
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_factor, cho_solve, lu_factor, lu_solve
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

NETS, NODES, STEPS = 128, 16, 8


class ImplicitSolver:
    def __init__(self, dt):
        self.dt = dt

    @functools.partial(jax.jit, static_argnums=0)
    def advance(self, cond, temp0):
        system = jnp.eye(NODES) + self.dt * cond
        lu_piv = lu_factor(system)
        def body(_, temp):
            return lu_solve(lu_piv, temp)
        return jax.lax.fori_loop(0, STEPS, body, temp0)


@jax.jit
def steady_state(cond, source):
    c_low = cho_factor(cond + 0.1 * jnp.eye(NODES), lower=True)
    return cho_solve(c_low, source)


@jax.jit
def resolvent_norm(cond):
    green = jnp.linalg.pinv(cond, hermitian=False)
    return jnp.max(jnp.abs(jnp.linalg.matrix_power(green, 3)), axis=(1, 2))


def conductance(rng):
    g = rng.uniform(0.5, 2.0, (NETS, NODES, NODES)).astype(np.float32)
    g = g * (rng.random((NETS, NODES, NODES)) < 0.3)
    g = 0.5 * (g + np.swapaxes(g, 1, 2))
    return np.eye(NODES, dtype=np.float32) * g.sum(axis=2)[:, :, None] - g + 0.05 * np.eye(NODES, dtype=np.float32)


def main():
    mesh = Mesh(np.array(jax.devices()[:4]), ("net",))
    batch = NamedSharding(mesh, P("net"))
    rng = np.random.default_rng(11)
    cond = jax.device_put(conductance(rng), batch)
    temp = jax.device_put(rng.uniform(280, 320, (NETS, NODES, 1)).astype(np.float32), batch)
    for dt in (0.01, 0.05):
        solver = ImplicitSolver(dt)
        final = solver.advance(cond, temp)
        print(f"dt {dt}: mean final temperature {float(jnp.mean(final)):.3f}")
    print("steady", float(jnp.mean(steady_state(cond, temp))))
    print("resolvent", float(jnp.max(resolvent_norm(cond))))


if __name__ == "__main__":
    main()
