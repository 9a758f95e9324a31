"""The workaround of ldexp-gradient: write it as x * 2.0 ** n. Exit 0: d/dx at 1.5 with n = 3 is 8; 1: not."""
import sys

import jax

gradient = float(jax.grad(lambda x: x * 2.0 ** 3)(1.5))
print("d/dx (x * 2.0 ** 3) at 1.5:", gradient, "(right: 8.0)")
sys.exit(0 if abs(gradient - 8.0) < 1e-6 else 1)
