"""The workaround of array-view-dtype-none: leave the dtype out, x.view() or x.view(x.dtype). Exit 0: both give the
same int32 values; 1: not."""
import sys

import numpy as np
import jax.numpy as jnp

x = np.array([1, 2, 3], dtype=np.int32)
j = jnp.asarray(x)
bad = []
for name, view in (("view()", lambda: j.view()), ("view(x.dtype)", lambda: j.view(j.dtype))):
    try:
        got = view()
    except Exception as exc:
        bad.append(f"{name}: {type(exc).__name__}: {exc}")
        continue
    if got.dtype != x.dtype or not (np.asarray(got) == x).all():
        bad.append(f"{name}: {got.dtype} {np.asarray(got).tolist()}")
print(bad[0] if bad else "view() and view(x.dtype): int32 [1, 2, 3]")
sys.exit(1 if bad else 0)
