"""jnp.arange(start, stop) with a nonzero start became a constant of every value, not an iota (jax#32542).

Inside jit, jnp.arange(0, n) lowers to an iota, a few hundred bytes whatever n is; with start 1 the
whole array of n values was embedded in the program, so compile time and program size grew with n.
Read structurally: the lowered program's text for jnp.arange(1, 1_000_000) against the control
jnp.arange(0, 1_000_000). Exit 0: the nonzero start costs less than 10x the control's text (the
constant makes it several thousand times larger).
"""
import sys

import jax
import jax.numpy as jnp

N = 1_000_000


def program_chars(start):
    return len(jax.jit(lambda: jnp.arange(start, N)).lower().as_text())


control, nonzero = program_chars(0), program_chars(1)
print(f"lowered program text: arange(0, N) {control} chars, arange(1, N) {nonzero} chars")
sys.exit(0 if nonzero < 10 * control else 1)
