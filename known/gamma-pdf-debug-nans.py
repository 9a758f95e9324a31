"""With jax_debug_nans on, jax.scipy.stats.gamma.pdf/logpdf below loc raised FloatingPointError: an intermediate
NaN that the function itself discards tripped the check (jax#24939).

The upstream test (96c012990d) tries one shape, gamma.pdf(0, 1, 1). The bug's class is any x below loc: there
(x - loc) / scale is negative and xlogy(a - 1, y) takes its log, a NaN for every shape a != 1 on every release
before the fix (on jax 0.4.13 the shape 1 alone was spared). So this tries shapes 0.5, 1, 2 and 3.5, pdf and
logpdf, at x = 0 below loc = 1, each against scipy. Exit 0: JAX returns scipy's value for every one with
debug_nans on; 1: one raises FloatingPointError or differs (the first such is named).
"""
import math
import sys

import jax
import jax.scipy.stats as jstats
import scipy.stats

jax.config.update("jax_debug_nans", True)
bad = []
for shape in (0.5, 1.0, 2.0, 3.5):
    for name in ("pdf", "logpdf"):
        want = float(getattr(scipy.stats.gamma, name)(0.0, shape, 1.0))
        try:
            got = float(getattr(jstats.gamma, name)(0.0, shape, 1.0))
        except FloatingPointError as exc:
            bad.append(f"gamma.{name}(0, {shape}, 1) raised FloatingPointError: {str(exc).splitlines()[0][:120]}")
            continue
        same = got == want if math.isinf(want) else abs(got - want) < 1e-6
        if not same:
            bad.append(f"gamma.{name}(0, {shape}, 1) = {got}, scipy {want}")
if bad:
    print(f"{len(bad)} of 8 calls below loc fail with debug_nans on; first: {bad[0]}")
    sys.exit(1)
print("gamma.pdf and logpdf below loc, shapes 0.5, 1, 2, 3.5: scipy's values with debug_nans on")
sys.exit(0)
