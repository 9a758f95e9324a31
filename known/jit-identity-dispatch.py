"""jax.jit(lambda x: x) was a "trivial computation": no executable, each call went through a Python
path that forwarded the input, about 250 us against a compiled call's 5 us. Commit 970f4c9d4d removed
that path, so a pass-through compiles and dispatches like any other jit.

Decided by a ratio measured in this one run, never an absolute time: 300 calls of the jitted identity
against 300 calls of the jitted lambda x: x + 1 on the same 4-element array, best of 5 after a
warm-up. Measured on CPU (this 2-core machine, shared): 120x to 380x on 0.4.13, 1.0x to 1.1x on 0.4.18,
0.35 and 0.6.0, 0.7x to 2x on 0.12.0.1. Exit 0: the identity costs under 10x the one-add call.
The fix is first in jax 0.4.15's tag, but 0.4.14, 0.4.15 and 0.4.16 do not install here (`kit plan`:
pruned jaxlibs, inconsistent jax 0.4.15 metadata), so the measured range says fixed in 0.4.18.
"""
import sys
import time

import jax
import jax.numpy as jnp

CALLS = 300
x = jnp.ones(4)
identity = jax.jit(lambda x: x)
plus_one = jax.jit(lambda x: x + 1)


def best_seconds(call):
    jax.block_until_ready(call(x))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(CALLS):
            out = call(x)
        jax.block_until_ready(out)
        best = min(best, time.perf_counter() - start)
    return best


ratio = best_seconds(identity) / best_seconds(plus_one)
print(f"{CALLS} calls of jit(lambda x: x) cost {ratio:.1f}x as many of jit(lambda x: x + 1)")
sys.exit(0 if ratio < 10 else 1)
