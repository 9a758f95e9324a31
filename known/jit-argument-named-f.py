"""jit raised when the function had an argument named f passed by keyword (jax#25329): JAX's own helper's parameter
names shadowed the keyword. Exit 0: the call works.
"""
import sys

import jax


def add_one(f):
    return f + 1


try:
    got = float(jax.jit(add_one)(f=1.0))
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
    sys.exit(1)
print("got", got)
sys.exit(0 if got == 2.0 else 1)
