"""Since when does jax have the debug config jax_compilation_cache_check_contents? (0.9.0.1 → 0.9.1)

JAX 0.9.1's changelog: "Added a debug config `jax_compilation_cache_check_contents`". Exit 0 (good)
where it exists, 1 (bad) where it does not:

    nox -s bisect -- --script examples/cache_check_contents.py --good 0.9.1 --bad 0.9.0.1 --commits --jax-repo DIR

jax-v0.9.0.1 is a patch release cut on 0.9.0's branch: the branch point on 0.9.1's line says jax
0.8.3 in its version.py and runs on neither build at hand, so the commit search could not start
("the oldest version ... could not be tested: choose another start"). The tag itself, on its own
release's build, now stands as the old end.
"""

import sys

import jax

found = "jax_compilation_cache_check_contents" in jax.config.values
print(f"jax {jax.__version__}: jax_compilation_cache_check_contents {'exists' if found else 'is missing'}")
sys.exit(0 if found else 1)
