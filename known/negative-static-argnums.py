"""jit with a negative static_argnums: the C++ dispatch fast path mishandled it (fixed in jaxlib 0.4.31's changelog).

The first call traces; from the second on the fast path runs, and there the static argument was passed as a buffer
("Execution supplied 2 buffers but compiled program expected 1") or its value reused. Exit 0: every call right.
"""
import sys

import jax


def scale(x, n):
    return x * n


scaled = jax.jit(scale, static_argnums=-1)
try:
    got = [float(scaled(1.0, n)) for n in (2, 3, 2, 5)]
except Exception as exc:  # what the fast path raised is the problem itself
    print(f"{type(exc).__name__}: {exc}")
    sys.exit(1)
print("got", got)
sys.exit(0 if got == [2.0, 3.0, 2.0, 5.0] else 1)
