"""Does a flax module give the same answer under jit? A check that needs a library (README, "Your own check").

Real repros import flax, optax or equinox. Say so in the check's block, and
each release gets the flax of its own era (jax 0.4.30 a flax of mid-2024),
installed in an environment of its own; the record and matrix.md name the
flax version that ran::

    [checks.flax-jit]
    script = "checks/flax_mlp_jit.py"
    description = "a flax MLP: jit vs eager, forward and gradient"
    requires = ["flax"]              # pins work too: "flax==0.10.2", "flax>=0.8,<0.11"

    nox -s matrix -- --checks flax-jit --only 0.4.35,0.6.0
    nox -s bisect -- --script examples/checks/flax_mlp_jit.py --requires flax --good 0.6.0 --bad 0.4.35

Without ``requires`` the script cannot import flax: that is never "affected"
but inconclusive ("the script could not import flax; add it to requires").
"""

import flax
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from repro import kitcheck

TOLERANCE = 1e-5


class MLP(nn.Module):
    hidden: int = 32

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(1)(x).squeeze(-1)


def loss(params, model, x, y):
    return jnp.mean((model.apply(params, x) - y) ** 2)


def main() -> None:
    model = MLP()
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((64, 8)), dtype=jnp.float32)
    y = jnp.asarray(rng.standard_normal(64), dtype=jnp.float32)
    params = model.init(jax.random.PRNGKey(0), x)
    eager = jax.value_and_grad(loss)(params, model, x, y)
    jitted = jax.jit(jax.value_and_grad(loss), static_argnums=1)(params, model, x, y)
    differences = jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda a, b: float(jnp.max(jnp.abs(a - b))),
                                                                   eager, jitted))
    worst = max(differences)
    verdict = "affected" if worst > TOLERANCE else "unaffected"
    kitcheck.finish(verdict, f"flax {flax.__version__}: jit and eager differ by at most {worst:.2e} "
                    f"in the loss and its gradient (tolerance {TOLERANCE:g})",
                    summary={"max_difference": float(f"{worst:.3g}")})  # exits with the verdict's code


if __name__ == "__main__":
    main()
