"""`jax.scipy.fft.dctn` with `s` and no `axes`: the last len(s) axes, as scipy says (a pure-Python fix, 0.9.2 -> 0.10.0).

jax 0.9.2 took other axes when `s` was given and `axes` was not: the wrong shape and values. Fixed by
2d252fb19d ("Fix default axes in dctn and idctn when s is specified but axes is None.",
`jax/_src/scipy/fft.py`). Exit 0 (good) where jax agrees with scipy.fft.dctn in shape and values, 1 (bad)
where it does not:

    nox -s bisect -- --script examples/dctn_s_axes.py --good 0.10.0 --bad 0.9.2 --commits --jax-repo DIR

Issue 49: with each commit's jaxlib Python laid over jaxlib 0.9.2, 580 commits of the range (the fix among
them) could not import (Mosaic GPU's `WarpMapOp`); with `jax/` alone they run there.
"""

import sys

import numpy as np
import scipy.fft

import jax.scipy.fft

x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
ours = np.asarray(jax.scipy.fft.dctn(x, s=(4, 6)))
reference = scipy.fft.dctn(x, s=(4, 6))
same = ours.shape == reference.shape and np.allclose(ours, reference, rtol=1e-4, atol=1e-4)
print(f"jax {jax.__version__}: dctn(x, s=(4, 6)) shape {ours.shape}, scipy {reference.shape}: "
      f"{'agrees' if same else 'DIFFERS'}")
sys.exit(0 if same else 1)
