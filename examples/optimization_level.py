"""Does jit's compile accept XLA's optimization_level option? (A Python change that needs a newer jaxlib.)

jax 0.5.1's d3850e7fdd ("Support optimization_level and memory_fitting_level XLA compilation
options") sets the option on XLA's build options only where the binary has it: behind
`xla_extension_version >= 316`. jaxlib 0.5.0 is 303, jaxlib 0.5.1 is 317. So the commit changes the
behaviour with jaxlib 0.5.1 only, and before it no build accepts the option. Exit 0 (good) when it is
accepted, 1 when compiling with it fails:

    nox -s bisect -- --script examples/optimization_level.py --good 0.5.1 --bad 0.5.0 --commits --jax-repo DIR
"""

import sys

import jax
import jax.numpy as jnp

try:
    jax.jit(lambda x: x + 1).lower(jnp.ones(3)).compile({"optimization_level": 19})  # XLA's O1
except Exception as error:  # what the release says about the option, whatever its type
    print(f"compiling with optimization_level failed: {type(error).__name__}: {error}")
    sys.exit(1)
print("compiling with optimization_level=19 (O1) worked")
sys.exit(0)
