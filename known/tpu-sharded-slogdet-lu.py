"""On TPU a batch-sharded slogdet is all-gathered before the LU: every chip factorises the whole batch.

64 8x8 matrices sharded four ways over TPU devices; the compiled program's LU (LuDecompositionBlock, or
LuRealDecompositionBlock from 0.12) must see 16 per chip, not 64. Exit 0: split; 1: whole; 125: not 4 TPU devices.
"""
import re
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

BATCH, DEVICES = 64, 4
devices = jax.devices()
if devices[0].platform != "tpu" or len(devices) < DEVICES:
    print(f"shows in a TPU compile of 4 chips only; this has {len(devices)} {devices[0].platform} device(s)")
    sys.exit(125)
mesh = Mesh(np.array(devices[:DEVICES]), ("batch",))
sharding = NamedSharding(mesh, PartitionSpec("batch"))
x = jax.device_put(jnp.ones((BATCH, 8, 8)) + jnp.eye(8), sharding)
text = jax.jit(lambda a: jnp.linalg.slogdet(a)[1], in_shardings=sharding).lower(x).compile().as_text()
calls = [line for line in text.splitlines() if "custom-call" in line
         and ("LuDecomposition" in line or "LuRealDecomposition" in line)]
batches = sorted({int(m.group(1)) for line in calls for m in [re.search(r"\[(\d+),8,8\]", line)] if m})
if not batches:
    print("no LU call with a batch in the compiled program: this check cannot tell")
    sys.exit(125)
print("LU batch per chip:", batches)
sys.exit(0 if batches == [BATCH // DEVICES] else 1)
