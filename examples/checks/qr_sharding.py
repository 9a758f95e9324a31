"""Does a batch-sharded QR split across devices? A user check (docs/checks.md, "The protocol").

Copy it for any linalg op: change OP below ("qr", "eigh", "cholesky", "svd",
"lu"), put the file in your project, and add to matrix.toml::

    [checks.qr]
    script = "checks/qr_sharding.py"
    description = "does a batch-sharded QR split across devices?"
    host_devices = 4

The evidence is the compiled HLO, as in JAX's own linalg_sharding_test: with
the batch axis sharded over N devices, the LAPACK/cuSOLVER custom call must
see 1/N of the batch and no collective may feed it. A positive control
(sharding a matrix axis instead, which must gather) keeps the check honest:
if the reader finds no collective there, the check cannot tell and says
inconclusive (exit 125).
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from repro import compat, hlo, kitcheck

OP = "qr"
OPS = {
    "qr": lambda a: jnp.linalg.qr(a)[1],
    "eigh": lambda a: jnp.linalg.eigh(a)[0],
    "cholesky": jnp.linalg.cholesky,
    "svd": lambda a: jnp.linalg.svd(a, compute_uv=False),
    "lu": lambda a: jax.scipy.linalg.lu_factor(a)[0],
}
BATCH, SIZE = 64, 16


def evidence(spec: PartitionSpec, mesh, x) -> hlo.HloEvidence:
    """Collectives and linalg calls of OP compiled with x sharded as `spec`."""
    compiled = jax.jit(OPS[OP], in_shardings=NamedSharding(mesh, spec)).lower(x).compile()
    return hlo.read_evidence(compat.compiled_hlo_text(compiled))


def main() -> None:
    devices = jax.devices()
    if len(devices) < 2:
        kitcheck.finish("inconclusive", f"needs 2+ devices, found {len(devices)} (set host_devices = 4)")
    mesh = compat.batch_mesh(devices)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((BATCH, SIZE, SIZE)).astype(np.float32)
    x = jnp.asarray(a @ np.swapaxes(a, -1, -2) + SIZE * np.eye(SIZE, dtype=np.float32))  # SPD: every op works
    control = evidence(PartitionSpec(None, "batch"), mesh, x)
    if control.collective_count == 0:
        kitcheck.finish("inconclusive", "positive control: sharding a matrix axis showed no collective")
    sharded = evidence(PartitionSpec("batch"), mesh, x)
    calls = [c for c in sharded.linalg_calls if c.kind == OP]
    if not calls or calls[0].batch is None:
        kitcheck.finish("inconclusive", f"no {OP} custom call with a readable batch in the HLO")
    per_device, share = calls[0].batch, BATCH // len(devices)
    fed_by = ",".join(calls[0].fed_by)
    summary = {"op": OP, "devices": len(devices), "batch_per_device": per_device, "global_batch": BATCH,
               "collectives": sharded.collective_count, "fed_by": fed_by}
    if per_device > share or fed_by:
        kitcheck.finish("affected", f"each device runs {OP} on {per_device} of {BATCH} matrices "
                        f"(an even share is {share})" + (f", fed by {fed_by}" if fed_by else ""), summary)
    kitcheck.finish("unaffected", f"each device runs {OP} on its own {per_device} of {BATCH} matrices, "
                    "no collective", summary)


if __name__ == "__main__":
    main()
    sys.exit(1)  # not reached: finish() exits
