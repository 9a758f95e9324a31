"""jax.scipy.fft.dctn with s but no axes transformed every axis instead of the last len(s) (jax#29426).

Compared against scipy.fft.dctn on the same input: the shape and the values must match. Exit 0: they do.
"""
import sys

import numpy as np
import scipy.fft
import jax.numpy as jnp
import jax.scipy.fft as jfft

x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
want = scipy.fft.dctn(x, s=(3, 4))
got = np.asarray(jfft.dctn(jnp.asarray(x), s=(3, 4)))
print("jax shape", got.shape, "scipy shape", want.shape)
same = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-3)
sys.exit(0 if same else 1)
