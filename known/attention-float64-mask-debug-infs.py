"""jax.nn.dot_product_attention with float64 inputs and a mask raised FloatingPointError under
jax_debug_infs although its output is finite: the masked-out logits were filled with -0.7 * float64's
max, which overflowed to -inf when the softmax cast them to float32 (jax#37422, fixed by e935bd112b).

Zeros for query (1, 5, 3, 11), key and value (1, 7, 3, 11), keys 4 to 6 masked out, x64 and debug_infs
on, as jax's own regression test (with a batch axis and as many key heads as query heads, which 0.4.31
requires). Exit 0: it runs and gives finite float64 values; 1: it raises FloatingPointError; 125: a
release without jax.nn.dot_product_attention, or one that refuses these arguments.
"""
import sys

import jax
import jax.experimental
import jax.numpy as jnp

attention = getattr(jax.nn, "dot_product_attention", None)
if attention is None:
    print("this release has no jax.nn.dot_product_attention")
    sys.exit(125)
# Both switches as context managers, so a batch of checks sharing this interpreter gets them back off.
x64 = jax.experimental.enable_x64 if hasattr(jax.experimental, "enable_x64") else jax.enable_x64  # moved in 0.10
try:
    with x64(True), jax.debug_infs(True):
        query = jnp.zeros((1, 5, 3, 11), dtype=jnp.float64)  # batch, T, N heads, H (0.4.31 needs the batch)
        key_value = jnp.zeros((1, 7, 3, 11), dtype=jnp.float64)
        mask = jnp.broadcast_to(jnp.arange(7) <= 3, (1, 3, 5, 7))  # batch, N, T, S
        out = attention(query, key_value, key_value, mask=mask).block_until_ready()
        finite = bool(jnp.isfinite(out).all())
except FloatingPointError as exc:  # the false alarm is the bug
    print(f"dot_product_attention raised FloatingPointError: {str(exc).splitlines()[0][:200]}")
    sys.exit(1)
except (TypeError, ValueError) as exc:
    print(f"this release's dot_product_attention cannot take these arguments: {str(exc)[:160]}")
    sys.exit(125)
print(f"float64 masked attention under debug_infs: shape {out.shape} {out.dtype}, all finite {finite}")
sys.exit(0 if finite and out.dtype == jnp.float64 else 1)
