"""The workaround of jit-argument-named-f: pass it by position, or rename the parameter. Exit 0: both give 2."""
import sys

import jax


def add_one(f):
    return f + 1


def add_one_renamed(g):
    return g + 1


bad = []
for name, call in (("by position", lambda: jax.jit(add_one)(1.0)), ("renamed", lambda: jax.jit(add_one_renamed)(g=1.0))):
    try:
        got = float(call())
    except Exception as exc:
        bad.append(f"{name}: {type(exc).__name__}: {exc}")
        continue
    if got != 2.0:
        bad.append(f"{name}: {got}")
print(bad[0] if bad else "by position and renamed: 2.0")
sys.exit(1 if bad else 0)
