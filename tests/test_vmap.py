"""vmap: every primitive batched equals the per-example loop, under several
in_axes (including None and negative axes), eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ir.checker import check_olympuspr
from olympus.ir.core import all_primitives
from olympus.lax import pjit as pjit_module
from olympus.transforms.batching import batch_rules

B = 3  # the batch size used throughout
rng = np.random.default_rng(0)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# Per-example argument makers: each call gives a fresh example.
def N(*shape):
    return lambda: normal(*shape)


def P(*shape):
    return lambda: rng.uniform(0.5, 2.0, shape).astype(np.float32)


def I(*shape, low=-4, high=5):  # noqa: E743
    return lambda: rng.integers(low, high, shape).astype(np.int32)


def Bool(*shape):
    return lambda: rng.integers(0, 2, shape).astype(bool)


def seq(*values, dtype=np.int32):
    """Examples taken in turn from `values` (e.g. start indices to clamp)."""
    it = iter(np.asarray(values * B, dtype))
    return lambda: next(it)


def batch_of(make, axis):
    """The batched argument: B examples stacked along `axis` (None: one example)."""
    if axis is None:
        return make()
    return np.stack([make() for _ in range(B)], axis=axis)


def per_example_loop(f, args, in_axes, out_axes=0):
    """The reference: f applied to each example, results stacked at out_axes."""
    outs = []
    for b in range(B):
        outs.append(
            f(
                *(
                    x if a is None else np.take(x, b, axis=a)
                    for x, a in zip(args, in_axes)
                )
            )
        )
    return np.stack([np.asarray(o) for o in outs], axis=out_axes)


def assert_close(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if np.issubdtype(expected.dtype, np.inexact):
        np.testing.assert_allclose(actual, expected, rtol=2e-6, atol=2e-6)
    else:
        np.testing.assert_array_equal(actual, expected)


def check_vmap(f, makers, axes_list, jit_too=True, eager=True):
    """vmap(f) == loop of f, for each in_axes in `axes_list` (arguments built
    from per-example `makers`); the first in_axes also under jit, with a
    well-typed program. `eager=False` checks only under jit (one compile
    instead of one per primitive, for rules that bind many primitives)."""
    for i, in_axes in enumerate(axes_list):
        args = [batch_of(m, a) for m, a in zip(makers, in_axes)]
        batched = olympus.vmap(f, in_axes=in_axes)
        expected = per_example_loop(f, args, in_axes)
        assert_close((batched if eager else olympus.jit(batched))(*args), expected)
        if jit_too and i == 0:
            check_olympuspr(olympus.make_olympuspr(batched)(*args).olympuspr)
            assert_close(olympus.jit(batched)(*args), expected)


# ---- elementwise ---------------------------------------------------------------
UNARY_FLOAT = [
    lax.neg,
    lax.exp,
    lax.expm1,
    lax.sin,
    lax.cos,
    lax.tan,
    lax.tanh,
    lax.logistic,
    lax.sign,
    lax.floor,
    lax.ceil,
    lax.erf,
    lax.abs,
    lax.round,
    lambda x: lax.integer_pow(x, 3),
    lambda x: lax.convert_element_type(x, np.int32),
]
UNARY_POSITIVE = [lax.log, lax.log1p, lax.sqrt, lax.rsqrt]


@pytest.mark.parametrize("op", UNARY_FLOAT + UNARY_POSITIVE)
def test_unary(op):
    make = P(2) if op in UNARY_POSITIVE else N(2)
    # the rule is shared, so axis variants are exercised on two representatives
    representative = op in (lax.sin, lax.log)
    check_vmap(
        op, [make], [(-1,), (0,)] if representative else [(-1,)], jit_too=representative
    )


def test_unary_int_and_bool():
    check_vmap(lax.bitwise_not, [I(2)], [(0,), (-1,)])
    check_vmap(lax.bitwise_not, [Bool()], [(0,)])
    check_vmap(lax.neg, [I(2)], [(1,)], jit_too=False)


def test_complex_parts():
    check_vmap(lax.complex, [N(2), N(2)], [(0, 0), (0, None), (None, 1)])
    z = lambda: (normal(2) + 1j * normal(2)).astype(np.complex64)  # noqa: E731
    check_vmap(lax.real, [z], [(0,), (1,)])
    check_vmap(lax.imag, [z], [(0,), (1,)], jit_too=False)


BINARY = [
    lax.add,
    lax.sub,
    lax.mul,
    lax.div,
    lax.max,
    lax.min,
    lax.atan2,
    lax.eq,
    lax.ne,
    lax.lt,
    lax.le,
    lax.gt,
    lax.ge,
]


@pytest.mark.parametrize("op", BINARY)
def test_binary(op):
    representative = op in (lax.add, lax.lt)
    axes = [(0, 1), (None, -1), (1, None)] if representative else [(0, 1)]
    check_vmap(op, [N(2), N(2)], axes, jit_too=representative)


def test_binary_scalar_operands_broadcast():
    # Per example, x is a scalar and y a vector: rank-0 operands broadcast.
    check_vmap(lax.mul, [N(), N(2)], [(0, 0), (0, None), (None, 1)])
    check_vmap(lambda x, y: lax.sub(y, x), [N(), N(2)], [(0, 1)], jit_too=False)
    check_vmap(lambda y: lax.add(y, 2.0), [N(2)], [(1,)], jit_too=False)


def test_binary_positive_and_integer():
    check_vmap(lax.pow, [P(2), N(2)], [(0, 1), (None, 1)])
    check_vmap(lax.rem, [I(2), I(2, low=1)], [(0, None), (1, 0)])
    for op in (lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor):
        check_vmap(op, [I(2), I(2)], [(0, 1), (None, 0)], jit_too=False)
        check_vmap(op, [Bool(), Bool()], [(0, 0)], jit_too=False)


def test_select_n():
    # a per-example scalar predicate choosing between vectors
    check_vmap(
        lax.select,
        [Bool(), N(2), N(2)],
        [(0, 0, None), (None, 0, None), (0, None, None)],
    )
    check_vmap(lax.select, [Bool(2), N(2), N(2)], [(0, 0, 0), (1, 1, None)])
    which = lambda: rng.integers(0, 3, ()).astype(np.int32)  # noqa: E731
    check_vmap(
        lambda w, a, b, c: lax.select_n(w, a, b, c),
        [which, N(2), N(2), N(2)],
        [(0, 0, None, 1), (None, 0, None, None)],
    )
    # rank-0 cases: an unbatched scalar case must be broadcast to the batch
    check_vmap(lax.select, [Bool(), N(), N()], [(0, 0, None)])


def test_clamp():
    lo, hi = lambda: normal() - 1, lambda: normal() + 1  # noqa: E731
    check_vmap(lax.clamp, [lo, N(2), hi], [(0, 0, 0), (None, 1, None), (0, None, None)])


# ---- shape primitives ----------------------------------------------------------
def test_broadcast_in_dim_reshape_transpose():
    check_vmap(lambda x: lax.broadcast_in_dim(x, (4, 2), (1,)), [N(2)], [(0,), (1,)])
    check_vmap(lambda x: lax.reshape(x, (3, 2)), [N(2, 3)], [(1,), (0,), (-1,)])
    check_vmap(
        lambda x: lax.reshape(x, (6,), dimensions=(1, 0)), [N(2, 3)], [(1,), (2,)]
    )
    check_vmap(lambda x: lax.transpose(x, (1, 0)), [N(2, 3)], [(1,), (0,), (-1,)])


def test_squeeze_expand_dims_rev():
    check_vmap(lambda x: lax.squeeze(x, (1,)), [N(2, 1)], [(2,), (0,), (1,)])
    check_vmap(lambda x: lax.expand_dims(x, (0, 2)), [N(2)], [(0,), (1,)])
    check_vmap(lambda x: lax.rev(x, (0,)), [N(2, 3)], [(1,), (0,), (2,)])


def test_slice_concatenate_iota():
    check_vmap(lambda x: lax.slice(x, (1,), (5,), (2,)), [N(5)], [(0,), (1,)])
    cat = lambda x, y: lax.concatenate([x, y], 0)  # noqa: E731
    check_vmap(cat, [N(5), N(2)], [(0, None), (1, None), (1, 0)])
    check_vmap(lambda x: x + lax.iota(np.float32, 5), [N(5)], [(0,)])


def test_pad():
    check_vmap(
        lambda x, v: lax.pad(x, v, ((1, 2, 1),)), [N(3), N()], [(0, None), (1, None)]
    )
    # a per-example padding value, with negative (cropping) padding too
    check_vmap(
        lambda x, v: lax.pad(x, v, ((2, -1, 1),)), [N(3), N()], [(0, 0), (None, 0)]
    )


def test_dynamic_slice_shared_and_per_example_starts():
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
    const = lambda: np.int32(1)  # noqa: E731
    check_vmap(f, [N(5, 4), const, const], [(0, None, None), (1, None, None)])
    # 7 and -2 are clamped to the valid range, as XLA does
    check_vmap(f, [N(5, 4), seq(0, 3, 7), seq(-2)], [(0, 0, None)])
    check_vmap(
        f,
        [N(5, 4), seq(0, 3, 7), seq(1, 0, 2)],
        [(2, 0, 0), (None, 0, 0)],
        jit_too=False,
        eager=False,
    )


def test_dynamic_slice_per_example_is_exact_for_special_values():
    x = np.array([[np.nan, -0.0, np.inf, -np.inf, 1.5]] * B, np.float32)
    f = lambda x, i: lax.dynamic_slice(x, (i,), (2,))  # noqa: E731
    out = np.asarray(olympus.vmap(f)(x, np.array([0, 1, 2], np.int32)))
    np.testing.assert_array_equal(
        out, [[np.nan, -0.0], [-0.0, np.inf], [np.inf, -np.inf]]
    )
    assert np.signbit(out[1, 0]) and np.signbit(out[0, 1])
    check_vmap(f, [I(5), seq(4, 0, 2)], [(0, 0)], jit_too=False, eager=False)
    check_vmap(f, [Bool(5), seq(4, 0, 2)], [(0, 0)], jit_too=False, eager=False)
    z = lambda: (normal(5) + 1j * normal(5)).astype(np.complex64)  # noqa: E731
    check_vmap(f, [z, seq(4, 0, 2)], [(0, 0)], jit_too=False, eager=False)


def test_dynamic_update_slice():
    f = lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j))  # noqa: E731
    const = lambda: np.int32(1)  # noqa: E731
    check_vmap(
        f, [N(5, 4), N(2, 3), const, const], [(0, 0, None, None), (None, 2, None, None)]
    )
    check_vmap(
        f,
        [N(5, 4), N(2, 3), seq(0, 2, 9), const],
        [(1, None, 0, None)],
        jit_too=False,
        eager=False,
    )
    check_vmap(
        f,
        [N(5, 4), N(2, 3), seq(0, 2, 9), seq(-1, 1, 3)],
        [(None, None, 0, 0)],
        jit_too=False,
        eager=False,
    )
    # a window as long as its axis: only the other axis moves
    check_vmap(
        f,
        [N(5, 4), N(2, 4), seq(0, 2, 3), seq(1, 0, 2)],
        [(0, 0, 0, 0)],
        jit_too=False,
        eager=False,
    )


# ---- reductions and contractions -----------------------------------------------
REDUCERS = [lax.reduce_sum, lax.reduce_max, lax.reduce_min, lax.reduce_prod]


@pytest.mark.parametrize("op", REDUCERS)
def test_reductions(op):
    check_vmap(
        lambda x: op(x, (1,)),
        [N(2, 3)],
        [(1,), (0,), (2,)],
        jit_too=op is lax.reduce_sum,
    )
    check_vmap(lambda x: op(x, (0, 1)), [N(2, 3)], [(1,), (-1,)], jit_too=False)


def test_boolean_reductions_and_argmax():
    check_vmap(lambda x: lax.reduce_and(x, (1,)), [Bool(2, 3)], [(1,), (0,)])
    check_vmap(lambda x: lax.reduce_or(x, (0, 1)), [Bool(2, 3)], [(2,)], jit_too=False)
    check_vmap(lambda x: lax.argmax(x, 1, np.int32), [N(2, 3)], [(1,), (0,), (2,)])
    check_vmap(
        lambda x: lax.argmin(x, 0, np.int32), [N(2, 3)], [(1,), (2,)], jit_too=False
    )


def test_dot_general():
    check_vmap(lax.dot, [N(2, 3), N(3, 4)], [(0, 1), (2, None), (None, 0)])
    check_vmap(lax.dot, [N(3), N(3)], [(0, 0), (None, 1)], jit_too=False)
    # an already-batched contraction: (k, n, m) x (k, m, p)
    dn = (((2,), (1,)), ((0,), (0,)))
    f = lambda x, y: lax.dot_general(x, y, dn)  # noqa: E731
    check_vmap(f, [N(2, 3, 4), N(2, 4, 5)], [(None, 1), (0, 3)], jit_too=False)


# ---- primitives defined beside other features ------------------------------------
def test_bit_primitives():
    u = lambda: rng.integers(0, 2**31, (2,)).astype(np.uint32)  # noqa: E731
    shifts = lambda: rng.integers(0, 8, (2,)).astype(np.uint32)  # noqa: E731
    check_vmap(lax.shift_left, [u, shifts], [(0, None), (1, 0)], jit_too=False)
    check_vmap(lax.shift_right_logical, [u, shifts], [(0, 0)], jit_too=False)
    check_vmap(
        lambda x: lax.shift_right_arithmetic(x, np.int32(2)),
        [I(2)],
        [(1,)],
        jit_too=False,
    )
    check_vmap(
        lambda x: lax.bitcast_convert_type(x, np.int32),
        [N(2)],
        [(0,), (1,)],
        jit_too=False,
    )


def test_gradient_barriers_and_checkpoint():
    check_vmap(lax.stop_gradient, [N(2)], [(1,)], jit_too=False)
    # a batched and an unbatched operand: the unbatched result is broadcast by out_axes=0
    pair = olympus.vmap(
        lambda x, y: lax.optimization_barrier((x, y)), in_axes=(1, None)
    )
    x, y = normal(2, B), normal()
    out_x, out_y = pair(x, y)
    assert_close(out_x, x.T.copy())
    assert_close(out_y, np.full(B, y, np.float32))
    remat_sin = olympus.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    check_vmap(remat_sin, [N(2)], [(1,)])
    xs = normal(B, 2)
    grads = olympus.vmap(olympus.grad(lambda x: jnp.sum(remat_sin(x))))(xs)
    np.testing.assert_allclose(
        np.asarray(grads), np.cos(np.sin(xs)) * np.cos(xs), rtol=1e-5
    )


# ---- higher-order: pjit, nesting, jit ------------------------------------------
def test_vmap_of_jit_and_jit_of_vmap():
    @olympus.jit
    def f(x, y):
        return jnp.sum(jnp.sin(x) * y), x * 2.0

    x, y = normal(B, 4), normal(4)
    out_sum, out_twice = olympus.vmap(f, in_axes=(0, None))(x, y)
    assert_close(out_sum, np.sum(np.sin(x) * y, axis=1).astype(np.float32))
    assert_close(out_twice, x * 2)
    closed = olympus.make_olympuspr(olympus.vmap(f, in_axes=(0, None)))(x, y)
    assert [e.primitive.name for e in closed.eqns] == ["pjit"]
    check_olympuspr(closed.olympuspr)
    g = olympus.jit(olympus.vmap(f, in_axes=(1, None)))
    assert_close(g(x.T, y)[0], out_sum)


def test_eager_vmap_of_jit_compiles_once():
    f = olympus.vmap(olympus.jit(lambda x: jnp.sum(jnp.sin(x))))
    x = normal(B, 2)
    first = f(x)
    compiled = len(pjit_module._executables)
    assert_close(f(x), np.asarray(first))
    assert len(pjit_module._executables) == compiled


def test_vmap_of_jit_with_unbatched_output():
    f = olympus.jit(lambda x, y: (x + y, y * 3.0))
    a, b = olympus.vmap(f, in_axes=(0, None), out_axes=(0, None))(
        normal(B, 2), np.ones(2, np.float32)
    )
    assert np.asarray(a).shape == (B, 2)
    assert_close(b, np.full(2, 3.0, np.float32))


def test_jit_inside_vmap_closing_over_a_batched_value():
    def outer(x):
        @olympus.jit
        def inner(y):
            return y * x + 1.0

        return inner(2.0)

    xs = normal(B)
    assert_close(olympus.vmap(outer)(xs), (2.0 * xs + 1.0).astype(np.float32))


def test_nested_vmap():
    x, y = normal(B, 4, 2), normal(4, 2)
    inner = olympus.vmap(lambda a, b: a * b + jnp.sum(a), in_axes=(0, 0))
    outer = olympus.vmap(inner, in_axes=(0, None))
    expected = np.stack(
        [
            np.stack([x[i, j] * y[j] + np.sum(x[i, j]) for j in range(4)])
            for i in range(B)
        ]
    )
    np.testing.assert_allclose(np.asarray(outer(x, y)), expected, rtol=1e-6)
    # matrix-matrix product from two nested vector dots
    mv = olympus.vmap(jnp.dot, in_axes=(0, None))
    mm = olympus.vmap(mv, in_axes=(None, 1), out_axes=1)
    a, b = normal(B, 4), normal(4, 2)
    np.testing.assert_allclose(np.asarray(mm(a, b)), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(olympus.jit(mm)(a, b)), a @ b, rtol=1e-5)


def test_pytrees_negative_axes_and_out_axes():
    params = {"w": normal(3, 2), "b": normal(B, 2)}
    xs = normal(3, B)

    def f(p, x):
        return {"y": x @ p["w"] + p["b"], "n": jnp.sum(x)}

    out = olympus.vmap(f, in_axes=({"w": None, "b": 0}, -1), out_axes={"y": 1, "n": 0})(
        params, xs
    )
    expected = np.stack(
        [xs[:, i] @ params["w"] + params["b"][i] for i in range(B)], axis=1
    )
    np.testing.assert_allclose(np.asarray(out["y"]), expected, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out["n"]), xs.sum(0), rtol=1e-5)
    ys = olympus.vmap(lambda x: x * 2.0, out_axes=-1)(normal(B, 2, 4))
    assert np.asarray(ys).shape == (2, 4, B)


def test_unbatched_outputs_are_broadcast_and_axis_size():
    out = olympus.vmap(lambda x, c: c, in_axes=(0, None))(normal(B), np.float32(5.0))
    assert_close(out, np.full(B, 5.0, np.float32))
    out = olympus.vmap(lambda c: c + 1.0, in_axes=None, axis_size=4)(
        np.ones(2, np.float32)
    )
    assert_close(out, np.full((4, 2), 2.0, np.float32))


def test_outputs_are_arrays_even_when_an_input_passes_through():
    xs = normal(B, 2)
    out = olympus.vmap(lambda x: x)(xs)
    assert isinstance(out, olympus.Array)
    assert_close(out, xs)


def test_kwargs_are_mapped_over_axis_0():
    out = olympus.vmap(lambda x, *, y: x * y)(
        normal(B), y=np.arange(B, dtype=np.float32)
    )
    assert np.asarray(out).shape == (B,)


def test_make_olympuspr_shows_the_batched_program():
    closed = olympus.make_olympuspr(olympus.vmap(lambda x: jnp.sum(x * 2.0)))(
        normal(B, 4)
    )
    text = str(closed)
    assert "f32[3,4]" in text and "reduce_sum[axes=(1,)]" in text
    check_olympuspr(closed.olympuspr)


# ---- composition with autodiff ---------------------------------------------------
def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    hidden = jnp.tanh(x @ w1 + b1)
    return jnp.sum((hidden @ w2 + b2 - y) ** 2)


MLP_PARAMS = [normal(3, 4), normal(4), normal(4, 2), normal(2)]


def test_per_example_gradients_of_an_mlp():
    xs, ys = normal(4, 3), normal(4, 2)
    per_example = olympus.jit(
        olympus.vmap(olympus.grad(mlp_loss), in_axes=(None, 0, 0))
    )
    one_example = olympus.jit(olympus.grad(mlp_loss))
    loop = [one_example(MLP_PARAMS, xs[i], ys[i]) for i in range(4)]
    for k, g in enumerate(per_example(MLP_PARAMS, xs, ys)):
        expected = np.stack([np.asarray(step[k]) for step in loop])
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5, atol=1e-6)


def test_grad_of_a_function_using_vmap():
    xs, ys = normal(4, 3), normal(4, 2)

    def total_loss(params):
        return jnp.sum(olympus.vmap(mlp_loss, in_axes=(None, 0, 0))(params, xs, ys))

    grads = olympus.jit(olympus.grad(total_loss))(MLP_PARAMS)
    one_example = olympus.jit(olympus.grad(mlp_loss))
    loop = [one_example(MLP_PARAMS, xs[i], ys[i]) for i in range(4)]
    for k, g in enumerate(grads):
        expected = sum(np.asarray(step[k]) for step in loop)
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-4, atol=1e-5)


def test_vmap_of_jvp_and_grad_through_per_example_slices():
    xs = normal(B, 4)
    tangents = olympus.vmap(
        lambda x: olympus.jvp(jnp.sin, (x,), (jnp.ones_like(x),))[1]
    )(xs)
    np.testing.assert_allclose(np.asarray(tangents), np.cos(xs), rtol=1e-6)
    starts = np.array([0, 1, 9], np.int32)  # 9 is clamped to 2

    def window_energy(x):
        windows = olympus.vmap(lambda row, i: lax.dynamic_slice(row, (i,), (2,)))(
            x, starts
        )
        return jnp.sum(windows**2)

    expected = np.zeros_like(xs)
    for b, i in enumerate([0, 1, 2]):
        expected[b, i : i + 2] = 2 * xs[b, i : i + 2]
    np.testing.assert_allclose(
        np.asarray(olympus.grad(window_energy)(xs)), expected, rtol=1e-6
    )


def test_custom_derivatives_survive_vmap():
    @olympus.custom_vjp
    def scaled(w, x):
        return w * x

    # a deliberately "wrong" rule, so that using it is visible: d/dw is 10 x
    scaled.defvjp(
        lambda w, x: (w * x, (w, x)), lambda res, g: (10.0 * g * res[1], g * res[0])
    )

    @olympus.custom_jvp
    def soft(x):
        return jnp.sin(x)

    soft.defjvp(lambda primals, tangents: (soft(primals[0]), 3.0 * tangents[0]))
    w, xs = np.float32(2.0), normal(B)
    batched = olympus.vmap(scaled, in_axes=(None, 0))
    assert_close(batched(w, xs), (w * xs).astype(np.float32))
    # grad of vmap: the shared w's cotangent is summed over the batch
    dw = olympus.grad(lambda w: jnp.sum(batched(w, xs)))(w)
    np.testing.assert_allclose(np.asarray(dw), 10.0 * xs.sum(), rtol=1e-5)
    dxs = olympus.jit(olympus.grad(lambda xs: jnp.sum(batched(w, xs))))(xs)
    assert_close(dxs, np.full(B, 2.0, np.float32))
    dsoft = olympus.grad(lambda xs: jnp.sum(olympus.vmap(soft)(xs)))(xs)
    assert_close(dsoft, np.full(B, 3.0, np.float32))


# ---- errors ----------------------------------------------------------------------
def test_error_mismatched_sizes_names_arguments():
    with pytest.raises(
        ValueError, match=r"args\[0\] has size 3 .*args\[1\] has size 4"
    ):
        olympus.vmap(lambda x, y: x + y)(normal(3), normal(4))
    with pytest.raises(ValueError, match=r"axis_size has size 5"):
        olympus.vmap(lambda x: x, axis_size=5)(normal(3))


def test_error_in_axes_structure_names_path():
    with pytest.raises(ValueError, match=r"args\[0\]\['a'\]|at args\[0\]"):
        olympus.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": normal(3)})
    with pytest.raises(ValueError, match="in_axes .* has 2 entries .* 1 positional"):
        olympus.vmap(lambda x: x, in_axes=(0, 0))(normal(3))
    with pytest.raises(ValueError, match=r"in_axes 2 is out of range for args\[0\]"):
        olympus.vmap(lambda x: x, in_axes=2)(normal(3, 2))
    with pytest.raises(ValueError, match="must be an int, None"):
        olympus.vmap(lambda x: x, in_axes="0")


def test_shape_errors_show_per_example_types():
    batched_dot = olympus.vmap(lambda x, y: lax.dot(x, y))
    with pytest.raises(
        TypeError,
        match=r"(?s)operands: f32\[2\], f32\[4\].*per-example types, inside vmap",
    ):
        batched_dot(normal(3, 2), normal(3, 4))


def test_error_out_axes():
    with pytest.raises(ValueError, match=r"out_axes 3 is out of range for out"):
        olympus.vmap(lambda x: x, out_axes=3)(normal(3, 2))
    with pytest.raises(ValueError, match=r"out_axes is None for out\[1\]"):
        olympus.vmap(lambda x: (x, x), out_axes=(0, None))(normal(3))
    with pytest.raises(ValueError, match="no argument is mapped"):
        olympus.vmap(lambda x: x, in_axes=None)(normal(3))


# ---- coverage ------------------------------------------------------------------
def test_every_primitive_has_a_batching_rule():
    missing = sorted(name for name, p in all_primitives.items() if p not in batch_rules)
    assert not missing, f"primitives without a batching rule: {missing}"
