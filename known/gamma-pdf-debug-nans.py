"""With jax_debug_nans on, jax.scipy.stats.gamma.pdf(0, 1, 1) raised FloatingPointError: an
intermediate NaN that the function itself discards tripped the check (jax#24939).

scipy.stats.gamma.pdf(0.0, 1.0, 1.0) is 0.0 (x below loc). Exit 0: JAX returns that with debug_nans on;
1: it raises FloatingPointError or differs.
"""
import sys

import jax
import jax.scipy.stats as jstats
import scipy.stats

jax.config.update("jax_debug_nans", True)
want = float(scipy.stats.gamma.pdf(0.0, 1.0, 1.0))
try:
    got = float(jstats.gamma.pdf(0.0, 1.0, 1.0))
except FloatingPointError as exc:
    print(f"debug_nans raised FloatingPointError: {str(exc).splitlines()[0][:200]}")
    sys.exit(1)
print("gamma.pdf(0, 1, 1):", got, "scipy:", want)
sys.exit(0 if abs(got - want) < 1e-6 else 1)
