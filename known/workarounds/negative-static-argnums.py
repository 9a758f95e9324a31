"""The workaround of negative-static-argnums: a non-negative index (static_argnums=1), or static_argnames.

The check's calls through both; exit 0: each gives the right values; 1: one does not.
"""
import sys

import jax


def scale(x, n):
    return x * n


bad = []
for name, jitted in (("static_argnums=1", jax.jit(scale, static_argnums=1)),
                     ("static_argnames='n'", jax.jit(scale, static_argnames="n"))):
    try:
        got = [float(jitted(1.0, n)) for n in (2, 3, 2, 5)]
    except Exception as exc:
        bad.append(f"{name}: {type(exc).__name__}: {exc}")
        continue
    if got != [2.0, 3.0, 2.0, 5.0]:
        bad.append(f"{name}: {got}")
print(bad[0] if bad else "static_argnums=1 and static_argnames='n': 2, 3, 2, 5 as asked")
sys.exit(1 if bad else 0)
