import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
def loss(x):
    q, r = jnp.linalg.qr(x)
    w = jnp.linalg.eigh(x + jnp.swapaxes(x, -1, -2))[0]
    s = jnp.linalg.svd(x, compute_uv=False)
    return jnp.sum(q) + jnp.sum(w) + jnp.sum(s)
mesh = Mesh(jax.devices()[:4], ("b",))
x = jax.random.normal(jax.random.PRNGKey(0), (512, 16, 16))
x = jax.device_put(x, NamedSharding(mesh, P("b")))
print(jax.jit(loss)(x))
