"""The workaround of while-loop-keyed-pytree: return the same aux data from flatten and flatten_with_keys. Exit 0:
the loop runs to x = 0; 1: it raises or does not."""
import sys

from jax import lax, tree_util


class Node:
    def __init__(self, x, y):
        self.x, self.y = x, y


tree_util.register_pytree_with_keys(
    Node,
    lambda o: (((tree_util.GetAttrKey("x"), o.x), (tree_util.GetAttrKey("y"), o.y)), "same"),
    lambda _, xy: Node(xy[0], xy[1]),
    lambda o: ((o.x, o.y), "same"),
)
try:
    out = lax.while_loop(lambda o: o.x > 0.0, lambda o: Node(0.0, 0.0), Node(1.0, 1.0))
except IndexError as exc:
    print(f"with the same aux data, while_loop still raised IndexError: {exc}")
    sys.exit(1)
print("with the same aux data, while_loop returned x =", float(out.x))
sys.exit(0 if float(out.x) == 0.0 else 1)
