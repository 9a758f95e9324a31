"""Loaded at interpreter start where the kit explains a program (this folder on PYTHONPATH).

It arms `repro.program_watch` (XLA's dump kept on whatever the program does
to XLA_FLAGS; the devices JAX had, written at the end) and, for one of several
processes the kit launched, `repro.launch_rank` (``jax.distributed.initialize()``
finds its coordinator, process count and id), and then runs the
sitecustomize this one hides, if the interpreter has one.
"""

import sys

try:
    from repro import program_watch

    program_watch.install()
    from repro import launch_rank

    launch_rank.install()
except Exception as error:  # the program runs all the same; the kit reads no facts and says so
    print(f"[kit] cannot arm the program watch: {type(error).__name__}: {error}", file=sys.stderr)

try:
    from repro import site_chain
except Exception as error:  # without it the interpreter's own sitecustomize would be skipped unsaid
    print(f"[kit] cannot run the sitecustomize this one hides: {type(error).__name__}: {error}", file=sys.stderr)
else:
    site_chain.run_hidden(__file__)
