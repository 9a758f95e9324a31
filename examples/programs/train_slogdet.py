"""The thread's program, scaled down to run in seconds on a CPU: an MLP whose loss is a slogdet.

    python examples/programs/train_slogdet.py
    nox -s explain -- examples/programs/train_slogdet.py --releases 0.4.35,0.6.0

The network and the loss are the ones from the thread ("Performance
regression while scaling up GPUs when computing determinants"): the MLP's
output is cut into BATCH matrices of MAT_SIZE x MAT_SIZE, the loss is the mean
of their log|det|, and the gradient is ``jit(grad(loss))`` of a batch sharded
over four devices with a NamedSharding (parameters replicated). Sizes are
small enough for a laptop's CPU; on a CPU, run it with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` to get four devices.
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MAT_SIZE = 8
BATCH = 1024  # matrices in the batch: 1024 x (8 x 8)
LAYER_SIZES = [32, 64, 64, MAT_SIZE * MAT_SIZE]
DEVICES = 4


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.maximum(outputs, 0)
    return outputs


def loss_det(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    matrices = (predictions - targets).reshape((-1, MAT_SIZE, MAT_SIZE))
    return jnp.mean(jnp.linalg.slogdet(matrices)[1])


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

    gradfun_det = jax.jit(jax.grad(loss_det))
    gradfun_det(params, batch)[0][0].block_until_ready()  # compile
    start = time.perf_counter()
    for _ in range(5):
        grads = gradfun_det(params, batch)
    grads[0][0].block_until_ready()
    print(f"grad of the slogdet loss: {(time.perf_counter() - start) / 5 * 1e3:.2f} ms per step")


if __name__ == "__main__":
    main()
