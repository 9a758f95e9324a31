"""Since when is `jax.custom_remat` in the top-level namespace? (A pure-Python change between 0.10.2 and 0.11.0.)

JAX 0.11.0's changelog: "Added `jax.custom_remat` to the top-level `jax` namespace". Exit 0 (good)
where `jax.custom_remat` exists, 1 (bad) where it does not:

    nox -s bisect -- --script examples/custom_remat_arrival.py --good 0.11.0 --bad 0.10.2 --commits --jax-repo DIR

The change lies 416 commits into the range, past the point (0dd6bb18fe, 146 in) where the overlay
before format 4 laid a commit's `xla_client._version` (five above the binary's) over jaxlib 0.10.2
and JAX died on `weakref_lru_cache.strong_lru_cache`: those commits were called unrunnable there.
"""

import sys

import jax

print(f"jax {jax.__version__}: jax.custom_remat {'exists' if hasattr(jax, 'custom_remat') else 'is missing'}")
sys.exit(0 if hasattr(jax, "custom_remat") else 1)
