"""Batched Gaussian-process posterior means, sharded over a 4-device CPU mesh."""
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import argparse
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

CONFIG = {"batch": 256, "points": 16, "lengthscale": 0.7, "noise": 1e-2, "steps": 3, "seed": 0}


def rbf_kernel(x, y, lengthscale):
    d2 = jnp.sum((x[:, :, None, :] - y[:, None, :, :]) ** 2, axis=-1)
    return jnp.exp(-0.5 * d2 / lengthscale**2)


class BatchedGP:
    def __init__(self, cfg, mesh):
        self.cfg = cfg
        self.mesh = mesh
        self.sharding = NamedSharding(mesh, P("batch"))

    def posterior_mean(self, xs, ys, xq):
        k = rbf_kernel(xs, xs, self.cfg["lengthscale"])
        k = k + self.cfg["noise"] * jnp.eye(xs.shape[1], dtype=k.dtype)
        alpha = jnp.linalg.solve(k, ys[..., None])[..., 0]
        kq = rbf_kernel(xq, xs, self.cfg["lengthscale"])
        return jnp.einsum("bqn,bn->bq", kq, alpha)

    def make_data(self, rng):
        b, n = self.cfg["batch"], self.cfg["points"]
        xs = rng.uniform(size=(b, n, 2)).astype(np.float32)
        ys = (np.sin(3.0 * xs[..., 0]) + 0.1 * rng.normal(size=(b, n))).astype(np.float32)
        xq = rng.uniform(size=(b, 4, 2)).astype(np.float32)
        return [jax.device_put(a, self.sharding) for a in (xs, ys, xq)]


def count_collectives(compiled_text):
    return {op: compiled_text.count(op + "(") for op in ("all-gather", "all-reduce", "all-to-all")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=CONFIG["batch"])
    parser.add_argument("--steps", type=int, default=CONFIG["steps"])
    args = parser.parse_args()
    cfg = dict(CONFIG, batch=args.batch, steps=args.steps)
    mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
    gp = BatchedGP(cfg, mesh)
    step = jax.jit(gp.posterior_mean)
    rng = np.random.default_rng(cfg["seed"])
    xs, ys, xq = gp.make_data(rng)
    compiled = step.lower(xs, ys, xq).compile()
    print("jax", jax.__version__, "devices", len(jax.devices()))
    print("collectives in the compiled step:", count_collectives(compiled.as_text()))
    for i in range(cfg["steps"]):
        t0 = time.perf_counter()
        mean = step(xs, ys, xq).block_until_ready()
        dt = time.perf_counter() - t0
        print(f"step {i}: mean[0] = {np.round(np.asarray(mean[0]), 4).tolist()} ({dt * 1e3:.1f} ms)")
    print("output sharding:", mean.sharding.spec)


if __name__ == "__main__":
    main()
