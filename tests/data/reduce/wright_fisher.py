"""Wright-Fisher genetic drift in many demes, state kept in half precision to save memory."""
import argparse
import time

import numpy as np
import jax
import jax.numpy as jnp

CONFIG = {"demes": 1024, "pop_size": 200, "generations": 12, "selection": 0.02, "migration": 0.01, "seed": 3, "dtype": "float16"}


class Population:
    def __init__(self, cfg):
        self.cfg = cfg
        self.dtype = jnp.dtype(cfg["dtype"])
        rng = np.random.default_rng(cfg["seed"])
        self.freq = jnp.asarray(rng.uniform(0.2, 0.8, size=cfg["demes"]), self.dtype)

    def expected_freq(self, p):
        s, m = self.cfg["selection"], self.cfg["migration"]
        p_sel = p * (1 + s) / (1 + s * p)
        return (1 - m) * p_sel + m * jnp.mean(p_sel)


def make_generation(pop):
    n = jnp.asarray(pop.cfg["pop_size"], pop.dtype)

    @jax.jit
    def generation(key, p):
        p_next = pop.expected_freq(p)
        counts = jax.random.binomial(key, n, p_next)
        return (counts / n).astype(pop.dtype)

    return generation


def summarize(p):
    p = np.asarray(p, np.float64)
    fixed = np.mean(p >= 1.0)
    lost = np.mean(p <= 0.0)
    return f"mean {p.mean():.3f}  var {p.var():.4f}  fixed {fixed:.1%}  lost {lost:.1%}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--generations", type=int, default=CONFIG["generations"])
    parser.add_argument("--dtype", default=CONFIG["dtype"])
    args = parser.parse_args()
    cfg = dict(CONFIG, generations=args.generations, dtype=args.dtype)
    pop = Population(cfg)
    generation = make_generation(pop)
    key = jax.random.PRNGKey(cfg["seed"])
    p = pop.freq
    print("jax", jax.__version__, "demes", cfg["demes"], "dtype", pop.dtype)
    t0 = time.perf_counter()
    for g in range(cfg["generations"]):
        key, sub = jax.random.split(key)
        p = generation(sub, p)
        if g % 4 == 0 or g == cfg["generations"] - 1:
            print(f"generation {g:3d}: {summarize(p)}")
    print(f"done in {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
