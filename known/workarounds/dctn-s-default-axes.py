"""The workaround of dctn-s-default-axes: pass axes explicitly, axes=tuple(range(-len(s), 0)).

The check's input and s; exit 0: scipy's answer; 1: not.
"""
import sys

import numpy as np
import scipy.fft
import jax.numpy as jnp
import jax.scipy.fft as jfft

x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
s = (3, 4)
want = scipy.fft.dctn(x, s=s)
got = np.asarray(jfft.dctn(jnp.asarray(x), s=s, axes=tuple(range(-len(s), 0))))
print("with axes given: jax shape", got.shape, "scipy shape", want.shape)
sys.exit(0 if got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-3) else 1)
