"""Tiny regression MLP on raw (unnormalised) sensor features, with a dead-unit monitor."""
import argparse
import time

import numpy as np
import jax
import jax.numpy as jnp

CONFIG = {"features": 12, "hidden": 64, "samples": 512, "epochs": 4, "lr": 1e-3, "seed": 7, "feature_scale": 6.0}


def make_dataset(cfg, rng):
    x = rng.normal(size=(cfg["samples"], cfg["features"])) * cfg["feature_scale"]
    w_true = rng.normal(size=(cfg["features"],)) / np.sqrt(cfg["features"])
    y = np.tanh(x @ w_true / cfg["feature_scale"]) + 0.05 * rng.normal(size=cfg["samples"])
    return x.astype(np.float32), y.astype(np.float32)


class MLP:
    def __init__(self, cfg, rng):
        f, h = cfg["features"], cfg["hidden"]
        self.params = {
            "w1": jnp.asarray(rng.normal(size=(f, h)) / np.sqrt(f), jnp.float32),
            "b1": jnp.zeros((h,), jnp.float32),
            "w2": jnp.asarray(rng.normal(size=(h, 1)) / np.sqrt(h), jnp.float32),
        }

    @staticmethod
    def hidden(params, x):
        return jax.nn.gelu(x @ params["w1"] + params["b1"], approximate=False)

    @staticmethod
    def predict(params, x):
        return (MLP.hidden(params, x) @ params["w2"])[:, 0]


def loss_fn(params, x, y):
    return jnp.mean((MLP.predict(params, x) - y) ** 2)


@jax.jit
def sgd_step(params, x, y, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


def dead_fraction(params, x):
    h = MLP.hidden(params, x)
    return float(jnp.mean(h == 0.0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=CONFIG["epochs"])
    args = parser.parse_args()
    cfg = dict(CONFIG, epochs=args.epochs)
    rng = np.random.default_rng(cfg["seed"])
    x, y = make_dataset(cfg, rng)
    model = MLP(cfg, rng)
    params = model.params
    print("jax", jax.__version__, "samples", x.shape)
    for epoch in range(cfg["epochs"]):
        t0 = time.perf_counter()
        params, loss = sgd_step(params, x, y, cfg["lr"])
        dt = time.perf_counter() - t0
        print(f"epoch {epoch}: loss {float(loss):.4g}  dead hidden units {100 * dead_fraction(params, x):.2f}%  ({dt * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
