"""A batch-sharded slogdet over a mesh that spans processes: a program as multi-host jobs are written.

    nox -s explain -- examples/programs/distributed_slogdet.py --processes 2     # 2 processes x 2 devices
    srun --ntasks=2 python examples/programs/distributed_slogdet.py               # on a SLURM allocation

It calls ``jax.distributed.initialize()`` with no arguments, as a program on a
cluster does: JAX reads where the coordinator is and which process this is
from the cluster it runs in (SLURM's variables, Open MPI's; when the kit starts
it, the kit's launcher, docs/cluster.md). Every process holds the same host
batch (same seed); the global array is sharded over the batch axis of a mesh
of every device of every process, so each device should factorise its share
only. Each process checks the determinants it holds against numpy's.
"""

import sys

import jax

jax.distributed.initialize()

import jax.numpy as jnp  # noqa: E402  (after initialize: nothing may touch a device before it)
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

MAT_SIZE = 16
PER_DEVICE = 32  # matrices each device should factorise


def main() -> int:
    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("batch",))
    sharding = NamedSharding(mesh, P("batch"))
    batch = PER_DEVICE * len(devices)
    rng = np.random.default_rng(0)
    host = rng.standard_normal((batch, MAT_SIZE, MAT_SIZE)) + MAT_SIZE * np.eye(MAT_SIZE)
    host = host.astype(np.float32)
    matrices = jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])
    sign, logdet = jax.jit(jnp.linalg.slogdet)(matrices)
    # Each process checks the shares it holds: no gather, so the only collectives compiled are slogdet's own.
    want_sign, want_logdet = np.linalg.slogdet(host.astype(np.float64))
    worst, right = 0.0, True
    for got_sign, got_logdet in zip(sign.addressable_shards, logdet.addressable_shards):
        worst = max(worst, float(np.max(np.abs(np.asarray(got_logdet.data) - want_logdet[got_logdet.index]))))
        right = right and bool(np.all(np.asarray(got_sign.data) == want_sign[got_sign.index]))
    right = right and worst < 1e-3
    print(f"process {jax.process_index()} of {jax.process_count()}: {len(jax.local_devices())} of {len(devices)} "
          f"devices, {batch} matrices of {MAT_SIZE}x{MAT_SIZE}; largest log|det| error of its shares {worst:.2e}, "
          f"{'right' if right else 'WRONG'}")
    jax.distributed.shutdown()
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
