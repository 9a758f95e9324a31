"""The sitecustomize a kit site folder hides: found on the rest of sys.path and run, so the kit's hook and the
interpreter's own (or another kit folder's, as explain's and a target's stack) both happen at start."""

import importlib.machinery
import importlib.util
import os
import sys

# Every kit site folder whose sitecustomize has run: with explain's and a target's both on the path, each would
# otherwise find the other's again and again (a RecursionError, the interpreter's own never reached).
_visited: set[str] = set()


def run_hidden(site_file: str) -> None:
    """Run the next ``sitecustomize`` on sys.path past every kit site folder already run, if there is one."""
    _visited.add(os.path.dirname(os.path.abspath(site_file)))
    others = [p for p in sys.path if os.path.abspath(p or ".") not in _visited]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
