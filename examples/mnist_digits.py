"""An MLP classifier for handwritten digits with stax and optimizers.adam.

The data is scikit-learn's bundled 8x8 digits set (1,797 images, no download),
so this example needs scikit-learn (`pip install scikit-learn`; olympus itself
does not depend on it). It is written as a JAX program using
`jax.example_libraries` would be; only the imports name olympus.

    python examples/mnist_digits.py            # 98.3% test accuracy, about 5 s in all
    OLYMPUS_EXAMPLE_STEPS=3 python examples/mnist_digits.py   # a smoke run
"""

import os
import time

import numpy as np
from sklearn.datasets import load_digits

import olympus
import olympus.numpy as jnp
from olympus import random
from olympus.example_libraries import optimizers, stax


def load_data(test_fraction: float = 0.2, seed: int = 0):
    """Images as float32 rows scaled to [0, 1], labels one-hot; a fixed train/test split."""
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    order = np.random.default_rng(seed).permutation(len(images))
    n_test = int(len(images) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


init_random_params, predict = stax.serial(
    stax.Dense(128),
    stax.Relu,
    stax.Dense(128),
    stax.Relu,
    stax.Dense(10),
    stax.LogSoftmax,
)


@olympus.jit
def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))


@olympus.jit
def accuracy(params, batch):
    inputs, targets = batch
    predicted = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted == jnp.argmax(targets, axis=1))


def main() -> None:
    train_x, train_y, test_x, test_y = load_data()
    num_steps = int(os.environ.get("OLYMPUS_EXAMPLE_STEPS", "600"))
    batch_size = 128

    opt_init, opt_update, get_params = optimizers.adam(1e-3)

    @olympus.jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, olympus.grad(loss)(params, batch), opt_state)

    _, params = init_random_params(random.PRNGKey(0), (-1, 64))
    opt_state = opt_init(params)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for i in range(num_steps):
        idx = rng.choice(len(train_x), batch_size, replace=False)
        opt_state = update(i, opt_state, (train_x[idx], train_y[idx]))
        if (i + 1) % 200 == 0:
            print(
                f"step {i + 1}: train loss {float(loss(get_params(opt_state), (train_x, train_y))):.4f}"
            )
    params = get_params(opt_state)
    print(f"{num_steps} steps in {time.perf_counter() - start:.1f} s")
    print(f"train accuracy {float(accuracy(params, (train_x, train_y))):.4f}")
    print(f"test accuracy {float(accuracy(params, (test_x, test_y))):.4f}")


if __name__ == "__main__":
    main()
