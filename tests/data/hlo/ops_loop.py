"""Issue 58's shape: a dict of linalg functions, each jit(value_and_grad) in a loop, batch sharded over 4 devices."""
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]), ("b",))
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 8, 8)).astype(np.float32)
spd = a @ a.transpose(0, 2, 1) + 8 * np.eye(8, dtype=np.float32)
x = jax.device_put(jnp.asarray(spd), NamedSharding(mesh, P("b")))
rhs = jax.device_put(jnp.ones((256, 8, 1), jnp.float32), NamedSharding(mesh, P("b")))

losses = {
    "slogdet": lambda m: jnp.linalg.slogdet(m)[1].sum(),
    "inv": lambda m: jnp.linalg.inv(m).sum(),
    "solve": lambda m: jnp.linalg.solve(m, rhs).sum(),
    "qr": lambda m: jnp.linalg.qr(m)[1].sum(),
    "cholesky": lambda m: jnp.linalg.cholesky(m).sum(),
    "eigh": lambda m: jnp.linalg.eigh(m)[0].sum(),
}
for name, loss in losses.items():
    value, grad = jax.jit(jax.value_and_grad(loss))(x)
    print(name, float(value), float(jnp.abs(grad).sum()))
