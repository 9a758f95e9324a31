"""On TPU a batch-sharded slogdet is all-gathered before the LU: every chip factorises the whole batch.

64 8x8 matrices sharded four ways over TPU v5e 2x2 chips: the slice's own, or, without one, the compile-only
devices libtpu gives (jax[tpu] installed, nothing run: docs/targets.md). The compiled program's LU
(LuDecompositionBlock, LuRealDecompositionBlock from 0.12) must see 16 per chip, not 64.
Exit 0: split; 1: whole on every chip; 125: no TPU and no TPU compiler here, or no LU to read.
"""
import os
import re
import sys

os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")  # libtpu off a TPU VM waits on a metadata server otherwise
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

BATCH, DEVICES = 64, 4
devices = [d for d in jax.devices() if d.platform == "tpu"]
if len(devices) < DEVICES:
    try:
        from jax.experimental import topologies

        devices = list(topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2",
                                                    chip_config_name="default", chips_per_host_bounds=(2, 2, 1),
                                                    num_slices=1).devices)
    except Exception as exc:  # no libtpu: a CPU-only installation cannot compile for a TPU
        print(f"shows in a TPU compile only: no TPU here and no TPU compiler ({type(exc).__name__})")
        sys.exit(125)
mesh = Mesh(np.array(devices[:DEVICES]), ("batch",))
sharding = NamedSharding(mesh, PartitionSpec("batch"))
x = jax.ShapeDtypeStruct((BATCH, 8, 8), jnp.float32, sharding=sharding)
text = jax.jit(lambda a: jnp.linalg.slogdet(a)[1], in_shardings=sharding).lower(x).compile().as_text()
calls = [line for line in text.splitlines() if "custom-call" in line
         and ("LuDecomposition" in line or "LuRealDecomposition" in line)]
batches = sorted({int(m.group(1)) for line in calls for m in [re.search(r"\[(\d+),8,8\]", line)] if m})
if not batches:
    print("no LU call with a batch in the compiled program: this check cannot tell")
    sys.exit(125)
print(f"LU batch per chip: {batches} of {BATCH} on {DEVICES} {devices[0].device_kind}")
sys.exit(0 if batches == [BATCH // DEVICES] else 1)
