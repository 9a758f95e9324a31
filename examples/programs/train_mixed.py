"""The thread's MLP with a loss of several terms: a sum, a matmul term, a slogdet and a cholesky.

    python examples/programs/train_mixed.py
    nox -s explain -- examples/programs/train_mixed.py --releases 0.4.35,0.6.0

The variant from the issue the kit's ``explain`` came from: the ``slogdet``
sits among other terms, so a timing says only that the gradient does not
scale, not which term keeps the whole batch on every device. Two of the four
terms call LAPACK (slogdet's LU, cholesky's potrf), the sum and the matmul
term do not. Run on four devices as train_slogdet.py says.
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MAT_SIZE = 8
BATCH = 1024
LAYER_SIZES = [32, 64, 64, MAT_SIZE * MAT_SIZE]
DEVICES = 4


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.maximum(outputs, 0)
    return outputs


def loss_mixed(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    matrices = (predictions - targets).reshape((-1, MAT_SIZE, MAT_SIZE))
    total = jnp.mean(jnp.sum(matrices, axis=(-1, -2)))
    gram = jnp.matmul(matrices, jnp.swapaxes(matrices, -1, -2))
    total = total + 1e-3 * jnp.mean(gram)
    total = total + jnp.mean(jnp.linalg.slogdet(matrices)[1])
    spd = gram + MAT_SIZE * jnp.eye(MAT_SIZE)
    total = total + jnp.mean(jnp.linalg.cholesky(spd))
    return total


def init_layer(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    W = jax.random.normal(k1, (n_in, n_out)) / jnp.sqrt(n_in)
    b = jax.random.normal(k2, (n_out,))
    return W, b


def init_model(key, layer_sizes, batch_size):
    key, *keys = jax.random.split(key, len(layer_sizes))
    params = list(map(init_layer, keys, layer_sizes[:-1], layer_sizes[1:]))
    key, *keys = jax.random.split(key, 3)
    inputs = jax.random.normal(keys[0], (batch_size, layer_sizes[0]))
    targets = jax.random.normal(keys[1], (batch_size, layer_sizes[-1]))
    return params, (inputs, targets)


def main():
    devices = jax.devices()[:DEVICES]
    print(f"jax {jax.__version__} on {len(devices)} {devices[0].platform} device(s)")
    new_key = getattr(jax.random, "key", jax.random.PRNGKey)  # jax.random.key is new in 0.4.16
    params, batch = init_model(new_key(0), LAYER_SIZES, BATCH)

    mesh = Mesh(np.array(devices), axis_names=("batch",))
    batch = jax.device_put(batch, NamedSharding(mesh, P("batch")))
    params = jax.device_put(params, NamedSharding(mesh, P()))

    gradfun = jax.jit(jax.grad(loss_mixed))
    gradfun(params, batch)[0][0].block_until_ready()  # compile
    start = time.perf_counter()
    for _ in range(5):
        grads = gradfun(params, batch)
    grads[0][0].block_until_ready()
    print(f"grad of the mixed loss: {(time.perf_counter() - start) / 5 * 1e3:.2f} ms per step")


if __name__ == "__main__":
    main()
