"""Example for --bad-if: jax#25329 ("Jitted functions can't take keyword arguments named `f` in v0.4.36",
fixed in 0.4.37) inside a user's test that fails otherwise on other releases.

The test also checks its seeded initial guess against the value recorded under
jax 0.4.35; from 0.5.0 (jax_threefry_partitionable on by default) that
assertion fails. That is not the bug, and --bad-if keeps it out of the answer:

    nox -s bisect -- --script examples/kwarg_f_in_a_test.py --good 0.4.34 --bad 0.5.1 --all \
        --bad-if "got multiple values for argument 'f'"
    #   0.4.35 -> 0.4.36 bad, 0.4.36 -> 0.4.37 good; 0.5.0 and 0.5.1 skipped (AssertionError: ...)
    nox -s bisect -- --script examples/kwarg_f_in_a_test.py --bad 0.4.36 --good 0.4.38 \
        --bad-if "got multiple values for argument 'f'"
    #   last bad jax 0.4.36, first good jax 0.4.37 (exact)

Without --bad-if every failure is bad, and --all reports a third change, 0.4.38 -> 0.5.0, that is not this bug.
"""

import jax
import jax.numpy as jnp

RECORDED_SUM = -4.23845911026001  # jax.random.normal(PRNGKey(0), (8, 4)).sum() under jax 0.4.35


def objective(x, f):
    return jnp.sum((x * f) ** 2)


x0 = jax.random.normal(jax.random.PRNGKey(0), (8, 4))
print("objective:", float(jax.jit(objective)(x0, f=2.0)))
assert abs(float(x0.sum()) - RECORDED_SUM) < 1e-5, f"the seeded initial guess changed: sum {float(x0.sum())}"
