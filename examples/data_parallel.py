"""Data-parallel training on several CPU devices: the batch is split over a
mesh axis, the parameters are replicated, and XLA's SPMD partitioner adds the
all-reduce of the gradients. The same program runs unchanged on one device.

    OLYMPUS_NUM_CPU_DEVICES=4 python examples/data_parallel.py
"""

import os

import numpy as np

os.environ.setdefault("OLYMPUS_NUM_CPU_DEVICES", "4")

import olympus  # noqa: E402
import olympus.numpy as jnp  # noqa: E402
from olympus.sharding import NamedSharding, PartitionSpec as P  # noqa: E402


def init_params(rng, sizes):
    return [
        (rng.standard_normal((m, n), np.float32) / np.sqrt(m), np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


def sgd_step(params, x, y, lr=0.1):
    value, grads = olympus.value_and_grad(loss)(params, x, y)
    new = [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return new, value


def main():
    n = olympus.device_count()
    mesh = olympus.make_mesh((n,), ("data",))
    replicated = NamedSharding(mesh, P())
    batch = NamedSharding(mesh, P("data"))
    step = olympus.jit(
        sgd_step,
        in_shardings=(replicated, batch, batch),
        out_shardings=(replicated, replicated),
    )

    rng = np.random.default_rng(0)
    params = olympus.device_put(init_params(rng, [16, 64, 64, 1]), replicated)
    x = rng.standard_normal((64 * n, 16), np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True))
    x, y = olympus.device_put((x, y), batch)
    print(f"{n} devices; each holds a {x.addressable_shards[0].data.shape} slice of x")

    for i in range(101):
        params, value = step(params, x, y)
        if i % 25 == 0:
            print(f"step {i:3d}  loss {float(value):.4f}")

    # The same step on one device gives the same numbers.
    one = sgd_step(
        [(np.asarray(w), np.asarray(b)) for w, b in params],
        np.asarray(x),
        np.asarray(y),
    )
    sharded = step(params, x, y)
    np.testing.assert_allclose(float(one[1]), float(sharded[1]), rtol=1e-5)
    print("sharded step == single-device step:", float(sharded[1]))


if __name__ == "__main__":
    main()
