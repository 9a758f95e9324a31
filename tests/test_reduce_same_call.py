"""`reduce`'s match by the call (`kit.reduce.same_call`): a reproducer calls the catalogue check's JAX function with
the check's keywords. Issue 58's held-out trial: a halo stencil's ``f = lambda a: jnp.pad(a, 1,
constant_values=(l, r))`` matched no entry, though the catalogue's pad-two-constants is that call: its values are
the function's parameters, not the check's literals ``(-1.0, 9.0)``."""

from __future__ import annotations

from pathlib import Path

from kit.reduce.same_call import matching

CHECK = Path(__file__).parent.parent / "known" / "pad-two-constants.py"
HALO = '''import jax.numpy as jnp
import numpy as np


def halo(x, l, r):
    f = lambda a: jnp.pad(a, 1, constant_values=CONSTANTS)
    return f(x)


def run():
    def inner(x):
        return halo(x, -1.0, 9.0)
    return inner(np.arange(4.0).reshape(2, 2))
'''


def test_a_call_in_a_lambda_with_the_values_in_variables_matches_the_checks_call() -> None:
    assert matching(HALO.replace("CONSTANTS", "(l, r)"), CHECK) == "jax.numpy.pad(constant_values=(-1.0, 9.0))"


def test_a_call_in_a_nested_def_with_the_checks_literals_matches() -> None:
    nested = HALO.replace("    f = lambda a: jnp.pad(a, 1, constant_values=CONSTANTS)\n    return f(x)",
                          "    def f(a):\n        return jnp.pad(a, 1, constant_values=(-1.0, 9.0))\n    return f(x)")
    assert matching(nested, CHECK) == "jax.numpy.pad(constant_values=(-1.0, 9.0))"


def test_another_form_or_other_literals_do_not_match() -> None:
    assert matching(HALO.replace("CONSTANTS", "(l, r, 0.0)"), CHECK) is None  # three values, not a pair
    assert matching(HALO.replace("CONSTANTS", "(0.0, 1.0)"), CHECK) is None  # literals of its own, not the check's
    assert matching(HALO.replace("CONSTANTS", "l"), CHECK) is not None  # one variable: it may hold the pair
    unbound = HALO.replace("CONSTANTS", "(l, undefined_name)")
    assert matching(unbound, CHECK) is None  # a name the program never binds is no variable of its own
