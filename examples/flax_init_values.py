"""Example bisect script that needs flax: when did my flax model's initial weights change?

    nox -s bisect -- --script examples/flax_init_values.py --good 0.5.0 --bad 0.4.34                    # stops:
    #   ERROR: the script could not import flax on jax 0.4.34 (--bad); pass --requires flax ...
    nox -s bisect -- --script examples/flax_init_values.py --requires flax --good 0.5.0 --bad 0.4.34
    #   first good release: jax 0.5.0 (exact); each probe line names the flax its release got (0.10.0 .. 0.10.2)

Good when flax's default initialisation already gives the values of the
partitionable threefry (what jax 0.5.0 made the default), bad when it still
gives the old ones: the script compares the two itself, so it needs no value
recorded by hand.
"""

import sys

import flax
import flax.linen as nn
import jax
import jax.numpy as jnp


def kernel():
    return nn.Dense(4).init(jax.random.PRNGKey(0), jnp.ones((1, 8)))["params"]["kernel"]


default = kernel()
jax.config.update("jax_threefry_partitionable", True)
partitionable = kernel()
print(f"flax {flax.__version__}, jax {jax.__version__}: kernel sum {float(default.sum()):.6f} by default, "
      f"{float(partitionable.sum()):.6f} partitionable")
sys.exit(0 if bool(jnp.array_equal(default, partitionable)) else 1)
