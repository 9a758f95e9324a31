"""A batch-sharded slogdet is all-gathered before the LU: every device factorises the whole batch (the thread's bug).

64 8x8 matrices sharded four ways over CPU host devices; the compiled program's LAPACK getrf call must see 16
per device, not 64. The compiled HLO is read as text: the LU call's first result shape holds its batch.
Exit 0: split.
"""
import re
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

BATCH, DEVICES = 64, 4
if len(jax.devices()) < DEVICES:
    print("needs 4 devices, has", len(jax.devices()))
    sys.exit(125)
mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("batch",))
sharding = NamedSharding(mesh, PartitionSpec("batch"))
x = jax.device_put(jnp.ones((BATCH, 8, 8)) + jnp.eye(8), sharding)
text = jax.jit(lambda a: jnp.linalg.slogdet(a)[1], in_shardings=sharding).lower(x).compile().as_text()
calls = [line for line in text.splitlines() if "custom-call" in line and "getrf" in line]
if not calls:
    print("no getrf call in the compiled program: this check cannot tell")
    sys.exit(125)
batches = sorted({int(m.group(1)) for line in calls for m in [re.search(r"\[(\d+),8,8\]", line)] if m})
print("getrf batch per device:", batches)
sys.exit(0 if batches == [BATCH // DEVICES] else 1)
