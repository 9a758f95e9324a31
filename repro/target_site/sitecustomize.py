"""Loaded at interpreter start where the kit compiles a program for a target (this folder first on PYTHONPATH).

It arms `repro.target_export` (jax.jit exports what it compiles for the
target) and then runs the sitecustomize this one hides, if the interpreter has one.
"""

import importlib.machinery
import importlib.util
import os
import sys

try:
    from repro import target_export

    target_export.install()
except Exception as error:  # the program runs all the same; the kit reads an empty export folder and says so
    print(f"[kit] cannot arm the target export: {type(error).__name__}: {error}", file=sys.stderr)

_here = os.path.dirname(os.path.abspath(__file__))
_others = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _others)
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
