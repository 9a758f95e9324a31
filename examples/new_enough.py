"""Example bisect script (git bisect run's exit codes): good from jax 0.4.16 on.

    nox -s bisect -- --script examples/new_enough.py --good 0.4.18 --bad 0.4.13

Runs with each release's own python; exit 0 = good, 1 = bad, 125 = skip.
A real script would reproduce a bug instead of reading the version.
"""

import sys

import jax

release = tuple(int(part) for part in jax.__version__.split(".")[:3])
sys.exit(0 if release >= (0, 4, 16) else 1)
