"""The olympus demo: trace a function to IR, jit it to XLA, differentiate it."""

import numpy as np

import olympus
import olympus.numpy as jnp


def loss(w, x):
    """A tiny model: mean squared activation of a tanh layer."""
    h = jnp.tanh(x @ w)
    return jnp.mean(h * h)


def main() -> None:
    w = jnp.array(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    x = jnp.ones((2, 4))

    print("olympuspr of loss:")
    print(olympus.make_olympuspr(loss)(w, x))

    fast_loss = olympus.jit(loss)
    print("\njit(loss)(w, x) =", fast_loss(w, x))

    print("\nolympuspr of grad(loss), forward and backward:")
    print(olympus.make_olympuspr(olympus.grad(loss))(w, x))
    print("\nthe same program after the optimizer (what jit compiles):")
    print(olympus.make_olympuspr(olympus.grad(loss), optimize=True)(w, x))
    print("\njit(grad(loss))(w, x) =")
    print(olympus.jit(olympus.grad(loss))(w, x))


if __name__ == "__main__":
    main()
