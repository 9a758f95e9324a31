"""Loaded at interpreter start where the kit explains a program (this folder on PYTHONPATH).

It arms `repro.program_watch` (XLA's dump kept on whatever the program does
to XLA_FLAGS; the devices JAX had, written at the end) and, for one of several
processes the kit launched, `repro.launch_rank` (``jax.distributed.initialize()``
finds its coordinator, process count and id), and then runs the
sitecustomize this one hides, if the interpreter has one.
"""

import importlib.machinery
import importlib.util
import os
import sys

try:
    from repro import program_watch

    program_watch.install()
    from repro import launch_rank

    launch_rank.install()
except Exception as error:  # the program runs all the same; the kit reads no facts and says so
    print(f"[kit] cannot arm the program watch: {type(error).__name__}: {error}", file=sys.stderr)

_here = os.path.dirname(os.path.abspath(__file__))
_others = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _others)
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
