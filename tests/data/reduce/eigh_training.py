"""A small training step whose loss uses the eigenvalues of a batch of symmetric matrices (a user's program).

Under jax_numpy_rank_promotion='raise' (the user's project sets it to catch broadcasting mistakes),
jit(grad(loss)) fails on older releases.
"""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_numpy_rank_promotion", "raise")

BATCH = 16
SIZE = 4
STEPS = 3


def make_batch(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((BATCH, SIZE, SIZE)).astype(np.float32)
    return a + np.swapaxes(a, -1, -2)


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {"scale": jax.random.normal(k1, (SIZE, SIZE)), "shift": jax.random.normal(k2, (SIZE,))}


def loss(params, batch):
    mixed = params["scale"] @ batch @ params["scale"].T
    mixed = (mixed + jnp.swapaxes(mixed, -1, -2)) / 2
    values = jnp.linalg.eigh(mixed)[0]
    return jnp.mean((values - params["shift"][None, :]) ** 2)


def train(steps, learning_rate):
    params = init_params(jax.random.PRNGKey(0))
    step = jax.jit(jax.grad(loss))
    for i in range(steps):
        batch = make_batch(i)
        start = time.perf_counter()
        grads = step(params, batch)
        params = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
        print(f"step {i}: {time.perf_counter() - start:.3f} s, loss {float(loss(params, batch)):.4f}")
    return params


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    print(f"jax {jax.__version__}")
    params = train(args.steps, args.lr)
    with open("/dev/null", "w") as sink:
        sink.write(str(params))


if __name__ == "__main__":
    main()
