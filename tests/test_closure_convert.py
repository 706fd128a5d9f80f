"""closure_convert hoists only the closed-over values that may carry a tangent,
as JAX does: concrete arrays, integer tracers and tracers with a symbolic zero
tangent stay inside the converted function (JAX's `_maybe_perturbed`)."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from jax_oracle import agree

W = np.arange(3.0, dtype=np.float32)
X = np.ones(3, np.float32)


def _converted(ox, fun, x):
    """How many values closure_convert hoisted, and the converted call's value."""
    f, consts = ox.closure_convert(fun, x)
    return len(consts), f(x, *consts)


def test_concrete_closure_is_not_hoisted():
    agree(lambda ox, x: _converted(ox, lambda y: y * ox.jnp.asarray(W), x), X)


def test_traced_float_closure_is_hoisted_under_grad_and_jit():
    def program(ox, w, x):
        def count(w):
            return _converted(ox, lambda y: ox.jnp.sum(y * w), x)[0]

        def loss(w):
            n, value = _converted(ox, lambda y: ox.jnp.sum(y * w), x)
            return value * n

        staged = ox.jit(lambda w: ox.jnp.float32(count(w)))(w)
        return count(w), staged, ox.grad(loss)(w), ox.jit(ox.grad(loss))(w)

    agree(program, W, X)


def test_integer_tracer_under_jit_is_not_hoisted():
    def program(ox, k, x):
        count = lambda k: ox.jnp.float32(  # noqa: E731
            _converted(ox, lambda y: y * k, x)[0]
        )
        return ox.jit(count)(k), ox.jit(lambda k: _converted(ox, lambda y: y * k, x))(k)

    agree(program, np.arange(3, dtype=np.int32), X)


def test_zero_tangent_and_batched_closures_are_not_hoisted():
    def program(ox, w, x):
        def g(x):
            n, value = _converted(ox, lambda y: y * w, x)
            return value + n

        return ox.jvp(g, (x,), (x,)), ox.vmap(g)(x[:, None] * w)

    agree(program, W, X)


def test_vmapped_closure_is_kept_and_evaluated_per_example():
    def program(ox, ws, x):
        return ox.vmap(lambda w: _converted(ox, lambda y: y * w, x))(ws)

    agree(program, np.stack([W, 2 * W]), X)


def test_eager_and_jit_agree_and_wrong_arguments_raise():
    w = jnp.asarray(W)

    def run(w):
        f, consts = olympus.closure_convert(lambda y: jnp.sin(y * w), X)
        return f(X, *consts)

    np.testing.assert_allclose(run(w), olympus.jit(run)(w), rtol=1e-6)
    f, consts = olympus.closure_convert(lambda y: y * w, X)
    with pytest.raises(TypeError, match="hoisted constants"):
        f(X, w)  # nothing was hoisted, so an extra argument is an error
    agree(
        lambda ox, x: ox.closure_convert(lambda y: y, x)[0]((x,)), X
    )  # a different tree than the example arguments: both raise TypeError
