"""Loaded at interpreter start where the kit compiles a program for a target (this folder first on PYTHONPATH).

It arms `repro.target_export` (jax.jit exports what it compiles for the
target) and then runs the sitecustomize this one hides, if the interpreter has one.
"""

import sys

try:
    from repro import target_export

    target_export.install()
except Exception as error:  # the program runs all the same; the kit reads an empty export folder and says so
    print(f"[kit] cannot arm the target export: {type(error).__name__}: {error}", file=sys.stderr)

try:
    from repro import site_chain
except Exception as error:  # without it the interpreter's own sitecustomize would be skipped unsaid
    print(f"[kit] cannot run the sitecustomize this one hides: {type(error).__name__}: {error}", file=sys.stderr)
else:
    site_chain.run_hidden(__file__)
