"""How long does a jitted, batch-sharded slogdet take? A metric check (docs/checks.md, "The protocol").

It reports a metric, ``slogdet_ms`` (wall time of one call, several samples),
and always exits 0: the number is the evidence, and ``--metric`` bisects it::

    [checks.slogdet-time]
    script = "checks/slogdet_timing.py"
    description = "wall time of a batch-sharded slogdet on 4 devices"
    host_devices = 4

    nox -s matrix -- --checks slogdet-time            # median and spread per release, a plot
    nox -s bisect -- --check slogdet-time --metric slogdet_ms --good 0.6.0 --bad 0.4.35

Copy it to time your own function: replace ``work`` and the input. Time what
your users run (jit-compiled, inputs already on device), wait for the result
(``block_until_ready``), and keep the first call (compilation) out of the samples.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from repro import compat, kitcheck

# Enough samples that a burst of load on a shared machine hits a minority of them (the median ignores those).
BATCH, SIZE, REPEATS = 2048, 32, 21


def work(x):
    return jnp.linalg.slogdet(x)[1].sum()


def main() -> None:
    devices = jax.devices()
    mesh = compat.batch_mesh(devices)
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.standard_normal((BATCH, SIZE, SIZE)).astype(np.float32),
                       NamedSharding(mesh, PartitionSpec("batch")))
    f = jax.jit(work)
    samples = kitcheck.time_ms(lambda: compat.block_until_ready(f(x)), repeats=REPEATS, warmup=2)
    median = sorted(samples)[len(samples) // 2]
    kitcheck.finish("unaffected", f"slogdet of {BATCH} {SIZE}x{SIZE} matrices on {len(devices)} devices: "
                    f"median {median:.1f} ms", summary={"devices": len(devices), "median_ms": round(median, 2)},
                    metrics={"slogdet_ms": kitcheck.metric(samples, unit="ms")})


if __name__ == "__main__":
    main()
