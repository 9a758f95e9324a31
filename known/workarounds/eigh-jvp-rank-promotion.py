"""The workaround of eigh-jvp-rank-promotion: differentiate under jax.numpy_rank_promotion('allow'), or vmap a
single matrix's eigh. The check's batch of ten 3x3 symmetric matrices, rank promotion set to raise around it;
exit 0: both give diag(V^T dA V); 1: one raises or differs."""
import sys

import numpy as np
import jax
import jax.numpy as jnp

a = np.random.RandomState(0).randn(10, 3, 3).astype(np.float32)
a = a + np.swapaxes(a, -1, -2)
jax.config.update("jax_numpy_rank_promotion", "raise")
vectors = np.linalg.eigh(a.astype(np.float64))[1]
expected = np.einsum("bij,bjk,bki->bi", np.swapaxes(vectors, -1, -2), a, vectors)


def allowed():
    with jax.numpy_rank_promotion("allow"):
        return jax.jvp(jnp.linalg.eigh, (a,), (a,))[1][0]


bad = []
for name, tangents in (("under numpy_rank_promotion('allow')", allowed),
                       ("vmap of one matrix's eigh", lambda: jax.vmap(lambda m, t: jax.jvp(jnp.linalg.eigh, (m,), (t,))[1][0])(a, a))):
    try:
        dw = np.asarray(tangents())
    except ValueError as error:
        bad.append(f"{name} raised: {str(error).splitlines()[0][:160]}")
        continue
    if not np.allclose(dw, expected, rtol=1e-3, atol=1e-3):
        bad.append(f"{name}: largest difference {float(np.max(np.abs(dw - expected)))}")
print(bad[0] if bad else "both forms give the eigenvalue tangents")
sys.exit(1 if bad else 0)
