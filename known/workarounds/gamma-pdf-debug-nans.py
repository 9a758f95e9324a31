"""The workaround of gamma-pdf-debug-nans: jax_debug_nans off around the call.

The check's eight calls (shapes 0.5, 1, 2, 3.5; pdf and logpdf at x = 0 below loc = 1) with debug_nans turned
off around each, as the workaround says, then on again. Exit 0: every one gives scipy's value and none raises;
1: one raises or differs.
"""
import math
import sys

import jax
import jax.scipy.stats as jstats
import scipy.stats

bad = []
for shape in (0.5, 1.0, 2.0, 3.5):
    for name in ("pdf", "logpdf"):
        want = float(getattr(scipy.stats.gamma, name)(0.0, shape, 1.0))
        jax.config.update("jax_debug_nans", False)
        try:
            got = float(getattr(jstats.gamma, name)(0.0, shape, 1.0))
        except FloatingPointError as exc:
            bad.append(f"gamma.{name}(0, {shape}, 1) still raised: {str(exc).splitlines()[0][:120]}")
            continue
        finally:
            jax.config.update("jax_debug_nans", True)
        if not (got == want if math.isinf(want) else abs(got - want) < 1e-6):
            bad.append(f"gamma.{name}(0, {shape}, 1) = {got}, scipy {want}")
print(bad[0] if bad else "debug_nans off around the call: scipy's value for all 8 calls below loc")
sys.exit(1 if bad else 0)
