"""lax.while_loop raised IndexError ("list index out of range") for a pytree whose flatten and
flatten_with_keys give different aux data, though the carry's structure is the same.

A node registered with register_pytree_with_keys whose two flattens label their aux data
differently, carried through a loop that runs once. Exit 0: the loop returns x = 0.
1: it raises. 125: the release has no register_pytree_with_keys.
"""
import sys

import jax
from jax import lax, tree_util

if not hasattr(tree_util, "register_pytree_with_keys"):
    print("this release has no tree_util.register_pytree_with_keys")
    sys.exit(125)


class Node:
    def __init__(self, x, y):
        self.x, self.y = x, y


tree_util.register_pytree_with_keys(
    Node,
    lambda o: (((tree_util.GetAttrKey("x"), o.x), (tree_util.GetAttrKey("y"), o.y)), "with_keys"),
    lambda _, xy: Node(xy[0], xy[1]),
    lambda o: ((o.x, o.y), "without_keys"),
)
try:
    out = lax.while_loop(lambda o: o.x > 0.0, lambda o: Node(0.0, 0.0), Node(1.0, 1.0))
except IndexError as exc:
    print(f"while_loop raised IndexError: {exc}")
    sys.exit(1)
print("while_loop returned x =", float(out.x))
sys.exit(0 if float(out.x) == 0.0 else 1)
