"""A user's feature extractor: DCT-II coefficients of a batch of 3-D volumes, cropped/padded to a fixed size.

Prints a checksum of the features for the log, and the shape the model downstream expects.
"""
import sys
import time

import numpy as np
import jax
import jax.numpy as jnp
import jax.scipy.fft

OUT = (4, 6)


def volumes(count, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((3, 4, 5)).astype(np.float32) for _ in range(count)]


def features(volume):
    coefficients = jax.scipy.fft.dctn(volume, s=OUT, norm="ortho")
    return coefficients


def summarize(values):
    return float(jnp.sum(jnp.abs(values)))


def main():
    started = time.perf_counter()
    batch = volumes(3)
    totals = []
    for i, volume in enumerate(batch):
        f = features(jnp.asarray(volume))
        totals.append(summarize(f))
        print(f"volume {i}: features {tuple(f.shape)}")
    print(f"checksum {sum(totals):.4f}")
    print(f"took {time.perf_counter() - started:.2f} s", file=sys.stderr)


main()
