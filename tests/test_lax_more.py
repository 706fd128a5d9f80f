"""lax.cbrt, clz, is_finite, nextafter, reduce_xor and the lax functions built
from other lax functions (square, reciprocal, exp2, conj, full_like, empty,
index/slice helpers, collapse, tile, split, broadcast_to_rank, batch_matmul,
scatter_sub, axis_size, reduce, reduce_window), against NumPy values, finite
differences and Python loops."""

from __future__ import annotations

import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest

import olympus
from olympus import lax
from olympus.test_util import (
    check_against_numpy,
    check_grads,
    check_jit_matches_eager,
    reference_call,
)
from olympus.lax.slicing import ScatterModeError
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.jvp import jvp_rules

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4)).astype(np.float32)


def _loop_vmap(fn, *batched):
    return np.stack([np.asarray(fn(*row)) for row in zip(*batched)])


# ---- cbrt ---------------------------------------------------------------------------
def test_cbrt_values_reference_jit_and_vmap():
    x = np.float32([-27.0, -2.5, 0.0, 1e-3, 8.0, 1e6])
    check_against_numpy(lax.cbrt, np.cbrt, (x,))
    np.testing.assert_allclose(reference_call(lax.cbrt, x), np.cbrt(x), rtol=1e-6)
    check_jit_matches_eager(lax.cbrt, (x,))
    batch = X
    np.testing.assert_allclose(
        olympus.vmap(lax.cbrt)(batch), _loop_vmap(lax.cbrt, batch), rtol=1e-6
    )


def test_cbrt_derivative_is_one_third_x_to_the_minus_two_thirds():
    x = np.float32([-8.0, -0.5, 0.7, 27.0])
    np.testing.assert_allclose(
        olympus.vmap(olympus.grad(lax.cbrt))(x),
        np.abs(x) ** (-2 / 3) / 3,
        rtol=1e-5,
    )
    check_grads(lax.cbrt, (np.float32([-2.0, 0.6, 3.0]),), order=2)


def test_cbrt_and_is_finite_reject_integers():
    with pytest.raises(OlympusTypeError, match="cbrt requires real floating-point"):
        lax.cbrt(np.int32([8]))
    with pytest.raises(OlympusTypeError, match="is_finite requires real floating"):
        lax.is_finite(np.int32([1]))
    with pytest.raises(OlympusTypeError, match="clz requires integer"):
        lax.clz(np.float32([1.0]))


# ---- clz ----------------------------------------------------------------------------
def _clz_numpy(x):
    width = x.dtype.itemsize * 8
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.array([width - int(v).bit_length() for v in unsigned.ravel()]).astype(
        x.dtype
    )


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8])
def test_clz_counts_leading_zero_bits(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 3, info.max, info.min, 17, info.max // 2], dtype)
    np.testing.assert_array_equal(lax.clz(x), _clz_numpy(x))
    np.testing.assert_array_equal(reference_call(lax.clz, x), _clz_numpy(x))
    assert np.asarray(lax.clz(x)).dtype == np.dtype(dtype)


def test_clz_vmap_matches_loop():
    x = RNG.integers(-(2**31), 2**31 - 1, (3, 5), dtype=np.int64).astype(np.int32)
    np.testing.assert_array_equal(olympus.vmap(lax.clz)(x), _loop_vmap(lax.clz, x))


# ---- is_finite ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_is_finite(dtype):
    x = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3e38], np.float32).astype(dtype)
    expected = np.isfinite(x.astype(np.float32))
    got = lax.is_finite(x)
    assert np.asarray(got).dtype == np.bool_
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(reference_call(lax.is_finite, x), expected)
    np.testing.assert_array_equal(olympus.jit(lax.is_finite)(x), expected)


def test_is_finite_has_a_zero_derivative_inside_a_select():
    assert lax.is_finite.__module__ == "olympus.lax.numeric"
    from olympus.lax.numeric import clz_p, cbrt_p, is_finite_p

    assert {clz_p, cbrt_p, is_finite_p} <= set(jvp_rules)
    f = lambda x: lax.select(lax.is_finite(x), x * 3.0, lax.full_like(x, 0.0))  # noqa: E731
    x = np.float32([1.0, np.inf, 2.0])
    _, tangent = olympus.jvp(f, (x,), (np.float32([1.0, 1.0, 1.0]),))
    np.testing.assert_array_equal(tangent, [3.0, 0.0, 3.0])


# ---- nextafter --------------------------------------------------------------------
def _nextafter_inputs(dtype, uint):
    finfo = ml_dtypes.finfo(dtype) if dtype == np.float16 else np.finfo(dtype)
    special = np.array(
        [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]
        + [finfo.tiny, -finfo.tiny, finfo.max, -finfo.max]
        + [finfo.smallest_subnormal, -finfo.smallest_subnormal],
        dtype,
    )
    grid_x = np.repeat(special, len(special))
    grid_y = np.tile(special, len(special))
    bits = RNG.integers(0, np.iinfo(uint).max, (2, 500), dtype=uint).view(dtype)
    return np.concatenate([grid_x, bits[0]]), np.concatenate([grid_y, bits[1]])


@pytest.mark.parametrize(
    "dtype,uint", [(np.float32, np.uint32), (np.float16, np.uint16)]
)
def test_nextafter_matches_numpy_bit_for_bit(dtype, uint):
    x, y = _nextafter_inputs(dtype, uint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.nextafter(x, y)
    for fn in (lax.nextafter, olympus.jit(lax.nextafter)):
        got = np.asarray(fn(x, y))
        assert got.dtype == np.dtype(dtype)
        both_nan = np.isnan(got) & np.isnan(want)
        mismatch = (got.view(uint) != want.view(uint)) & ~both_nan
        if dtype == np.float16:  # NumPy's half nextafter(0.0, -0.0) is x1, not x2
            zeros = (x == 0) & (y == 0)  # (C99 and NumPy's float32 give x2, as here)
            mismatch &= ~(zeros & (np.signbit(got) == np.signbit(y)))
        assert not mismatch.any(), (x[mismatch], y[mismatch], got[mismatch])


def test_nextafter_signed_zeros_and_subnormals():
    tiny = np.float32(1.4e-45)
    got = np.asarray(
        lax.nextafter(np.float32([0.0, 0.0, -tiny, tiny]), np.float32([-0.0, -1, 0, 1]))
    )
    assert np.signbit(got[0]) and got[0] == 0  # x == y gives y: -0.0
    assert got[1] == -tiny
    assert got[2] == 0 and np.signbit(got[2])  # from below to -0.0, as NumPy
    assert got[3] == np.float32(2.8e-45)


def test_nextafter_scalars_vmap_and_errors():
    np.testing.assert_array_equal(
        lax.nextafter(np.float32([1.0, 2.0]), 0.0),
        np.nextafter(np.float32([1.0, 2.0]), np.float32(0)),
    )
    x, y = X, -X
    np.testing.assert_array_equal(
        olympus.vmap(lax.nextafter)(x, y), _loop_vmap(lax.nextafter, x, y)
    )
    with pytest.raises(OlympusTypeError, match="nextafter requires real floating"):
        lax.nextafter(np.int32([1]), np.int32([2]))


# ---- small arithmetic ------------------------------------------------------------------
def test_square_reciprocal_exp2_values_and_grads():
    x = np.float32([-1.5, 0.5, 2.0, 3.0])
    check_against_numpy(lax.square, np.square, (x,))
    check_against_numpy(lax.square, np.square, (np.int32([3, -4]),))
    check_against_numpy(lax.reciprocal, np.reciprocal, (x,))
    check_against_numpy(lax.exp2, np.exp2, (x,))
    np.testing.assert_array_equal(lax.exp2(np.float32([0, 1, 3, 10])), [1, 2, 8, 1024])
    for fn in (lax.square, lax.reciprocal, lax.exp2):
        check_grads(fn, (x,), order=2)
    with pytest.raises(OlympusTypeError, match="negative exponent"):
        lax.reciprocal(np.int32([2]))
    with pytest.raises(OlympusTypeError, match="exp2"):
        lax.exp2(np.int32([2]))


def test_conj():
    z = np.complex64([1 + 2j, -3 - 0.5j])
    check_against_numpy(lax.conj, np.conj, (z,))
    real = lax.conj(np.float32([1.0, -2.0]))
    assert np.asarray(real).dtype == np.complex64
    np.testing.assert_array_equal(real, [1.0, -2.0])
    grad = olympus.grad(lambda x: lax.real(lax.conj(x * 2.0)).sum())
    np.testing.assert_array_equal(grad(np.float32([1.0, 5.0])), [2.0, 2.0])
    with pytest.raises(OlympusTypeError, match="lax.conj"):
        lax.conj(np.int32([1]))


# ---- constructors ---------------------------------------------------------------------
def test_full_like_and_empty():
    out = lax.full_like(X, 2.5)
    assert out.shape == X.shape and out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full(X.shape, 2.5, np.float32))
    out = lax.full_like(X, 7, dtype=np.int32, shape=(2,))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [7, 7])
    traced = olympus.jit(lambda x, v: lax.full_like(x, v))(X, np.float32(3))
    np.testing.assert_array_equal(traced, np.full(X.shape, 3, np.float32))
    e = lax.empty((2, 3), np.int32)
    assert e.shape == (2, 3) and e.dtype == np.int32
    assert lax.empty(4, np.float32).shape == (4,)


# ---- one axis at a time ------------------------------------------------------------------
def test_index_and_slice_in_dim():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.index_in_dim(a, 1, axis=2), a[:, :, 1:2])
    np.testing.assert_array_equal(
        lax.index_in_dim(a, -1, axis=1, keepdims=False), a[:, -1]
    )
    np.testing.assert_array_equal(lax.slice_in_dim(a, 1, 4, 2, axis=2), a[:, :, 1:4:2])
    np.testing.assert_array_equal(lax.slice_in_dim(a, -2, None, axis=1), a[:, -2:])
    np.testing.assert_array_equal(lax.slice_in_dim(a, None, -1, axis=-1), a[..., :-1])
    with pytest.raises(lax.LaxArgumentError, match="index 3 is out of bounds"):
        lax.index_in_dim(a, 3, axis=1)
    with pytest.raises(lax.LaxArgumentError, match="axis 3 is out of range"):
        lax.slice_in_dim(a, 0, 1, axis=3)


def test_dynamic_index_in_dim_counts_negative_traced_indices_from_the_end():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = olympus.jit(lambda a, i: lax.dynamic_index_in_dim(a, i, axis=1, keepdims=False))
    for i in range(-4, 4):
        np.testing.assert_array_equal(f(a, np.int32(i)), a[:, i])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(a, -1), a[-1:])
    idx = np.int32([0, -1, 2])
    np.testing.assert_array_equal(
        olympus.vmap(lambda i: lax.dynamic_index_in_dim(a, i, 0, False))(idx),
        a[idx],
    )
    g = olympus.grad(lambda a: lax.dynamic_index_in_dim(a, np.int32(-2), 0).sum())(a)
    want = np.zeros((3, 4), np.float32)
    want[1] = 1
    np.testing.assert_array_equal(g, want)


def test_dynamic_update_index_in_dim():
    a = np.zeros((3, 4), np.float32)
    row = np.arange(4, dtype=np.float32)
    want = a.copy()
    want[-1] = row
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(a, row, -1, 0), want)
    col = np.ones((3, 1), np.float32)
    f = olympus.jit(lambda a, c, i: lax.dynamic_update_index_in_dim(a, c, i, 1))
    want = a.copy()
    want[:, 2] = 1
    np.testing.assert_array_equal(f(a, col, np.int32(2)), want)
    check_grads(
        lambda a, r: lax.dynamic_update_index_in_dim(a, r, 1, 0),
        (X[:3], np.float32([1, 2, 3, 4])),
        order=1,
    )


# ---- reshaping ------------------------------------------------------------------------
def test_collapse_tile_split_broadcast_to_rank():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.collapse(a, 0, 2), a.reshape(6, 4))
    np.testing.assert_array_equal(lax.collapse(a, 1), a.reshape(2, 12))
    np.testing.assert_array_equal(lax.collapse(a, -2), a.reshape(2, 12))
    for reps in [(1, 1, 1), (2, 1, 3), (1, 0, 2)]:
        np.testing.assert_array_equal(lax.tile(a, reps), np.tile(a, reps))
    pieces = lax.split(a, (1, 0, 3), axis=2)
    for got, want in zip(pieces, np.split(a, [1, 1], axis=2)):
        np.testing.assert_array_equal(got, want)
    assert lax.broadcast_to_rank(np.float32(2.0), 2).shape == (1, 1)
    assert lax.broadcast_to_rank(a, 3) is a
    with pytest.raises(lax.LaxArgumentError, match="add up to 4"):
        lax.split(a, (1, 2), axis=2)
    with pytest.raises(lax.LaxArgumentError, match="one non-negative rep per axis"):
        lax.tile(a, (2, 2))
    with pytest.raises(lax.LaxArgumentError, match="cannot lower the rank"):
        lax.broadcast_to_rank(a, 2)
    with pytest.raises(lax.LaxArgumentError, match="collapse"):
        lax.collapse(a, 2, 1)


def test_tile_and_split_derivatives_and_vmap():
    check_grads(lambda x: lax.tile(x, (2, 3)), (X[:2, :2],), order=1)
    check_grads(lambda x: lax.split(x, (1, 3), axis=1)[1] * 2.0, (X,), order=1)
    np.testing.assert_array_equal(
        olympus.vmap(lambda r: lax.tile(r, (3,)))(X),
        np.stack([np.tile(r, 3) for r in X]),
    )


# ---- products and scatters --------------------------------------------------------------
def test_batch_matmul():
    lhs = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
    rhs = RNG.normal(size=(2, 3, 5, 2)).astype(np.float32)
    np.testing.assert_allclose(
        lax.batch_matmul(lhs, rhs), np.matmul(lhs, rhs), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        lax.batch_matmul(lhs[0, 0], rhs[0, 0]), lhs[0, 0] @ rhs[0, 0], rtol=1e-5
    )
    check_grads(lax.batch_matmul, (lhs[0], rhs[0]), order=1)
    with pytest.raises(lax.LaxArgumentError, match=r"\(2, 3, 4, 5\) and \(3, 5, 2\)"):
        lax.batch_matmul(lhs, rhs[0])


SCATTER_DN = lax.ScatterDimensionNumbers(
    update_window_dims=(1,),
    inserted_window_dims=(0,),
    scatter_dims_to_operand_dims=(0,),
)


def test_scatter_sub_accumulates_duplicates_and_wraps_unsigned():
    operand = np.arange(12, dtype=np.float32).reshape(4, 3)
    indices = np.int32([[1], [3], [1], [7]])  # a duplicate, and one dropped
    updates = RNG.normal(size=(4, 3)).astype(np.float32)
    want = operand.copy()
    np.subtract.at(want, [1, 3, 1], updates[:3])
    got = lax.scatter_sub(operand, indices, updates, SCATTER_DN)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    u = lax.scatter_sub(
        np.uint32([5, 5]),
        np.int32([[0]]),
        np.uint32([7]),
        lax.ScatterDimensionNumbers((), (0,), (0,)),
    )
    np.testing.assert_array_equal(u, np.uint32([2**32 - 2, 5]))
    check_grads(
        lambda o, u: lax.scatter_sub(o, indices, u, SCATTER_DN),
        (operand, updates),
        order=1,
    )
    with pytest.raises(ScatterModeError, match="mode 'clip'"):
        lax.scatter_sub(operand, indices, updates, SCATTER_DN, mode="clip")


# ---- reduce_xor ---------------------------------------------------------------------------
def test_reduce_xor():
    a = RNG.integers(0, 2**31 - 1, (3, 4, 5), dtype=np.int64).astype(np.int32)
    for axes in [(0,), (1, 2), (0, 1, 2)]:
        want = np.bitwise_xor.reduce(a, axis=axes)
        np.testing.assert_array_equal(lax.reduce_xor(a, axes), want)
        np.testing.assert_array_equal(
            reference_call(lambda a: lax.reduce_xor(a, axes), a), want
        )
    b = RNG.random((4, 6)) < 0.5
    np.testing.assert_array_equal(lax.reduce_xor(b, (1,)), np.logical_xor.reduce(b, 1))
    np.testing.assert_array_equal(
        olympus.vmap(lambda r: lax.reduce_xor(r, (0,)))(a[0]),
        np.bitwise_xor.reduce(a[0], axis=1),
    )
    assert lax.reduce_xor(np.zeros((0,), np.uint8), (0,)) == 0
    with pytest.raises(
        OlympusTypeError, match="reduce_xor requires integer or boolean"
    ):
        lax.reduce_xor(X, (0,))


# ---- axis_size -------------------------------------------------------------------------------
def test_axis_size_is_the_size_of_a_named_axis():
    out = olympus.vmap(lambda x: x * lax.axis_size("i"), axis_name="i")(X[0])
    np.testing.assert_array_equal(out, X[0] * 4)
    nested = olympus.vmap(
        olympus.vmap(lambda x: x + lax.axis_size(("i", "j")), axis_name="j"),
        axis_name="i",
    )(X)
    np.testing.assert_array_equal(nested, X + 12)
    assert isinstance(
        olympus.vmap(lambda x: (lax.axis_size("i"), x)[1], axis_name="i")(X[0]),
        olympus.Array,
    )
    mesh = olympus.make_mesh((1,), ("d",), axis_types=(olympus.sharding.AxisType.Auto,))
    spec = olympus.sharding.PartitionSpec("d")
    sharded = olympus.shard_map(lambda v: v * lax.axis_size("d"), mesh, spec, spec)
    np.testing.assert_array_equal(sharded(X[0]), X[0])
    with pytest.raises(NameError, match="axis name 'k' is not bound"):
        olympus.vmap(lambda x: x * lax.axis_size("k"), axis_name="i")(X[0])


# ---- reduce --------------------------------------------------------------------------------
REDUCE_CASES = [  # computation, init, NumPy reduction, operand
    (lax.add, 0.0, np.sum, X),
    (lambda a, b: a + b, 0.0, np.sum, X),
    (lax.mul, 1.0, np.prod, X),
    (lax.max, -np.inf, np.max, X),
    (lax.min, np.inf, np.min, X),
    (lax.bitwise_and, -1, np.bitwise_and.reduce, np.int32([[5, 7, 13], [-1, 6, 2]])),
    (lax.bitwise_or, 0, np.bitwise_or.reduce, np.int32([[5, 8, 1], [0, 6, 2]])),
    (lax.bitwise_xor, 0, np.bitwise_xor.reduce, np.int32([[5, 8, 1], [0, 6, 2]])),
]


@pytest.mark.parametrize("case", range(len(REDUCE_CASES)))
def test_reduce_with_each_monoid(case):
    computation, init, ref, x = REDUCE_CASES[case]
    for dims in [(0,), (1,)]:
        got = lax.reduce(x, init, computation, dims)
        np.testing.assert_allclose(got, ref(x, axis=dims[0]), rtol=1e-5)


def test_reduce_pytrees_non_identity_init_grad_and_jit():
    ints = np.int32([[1, 2], [3, 4]])
    total, biggest = lax.reduce(
        (ints, X[:2, :2]),
        (0, -np.inf),
        lambda a, b: (a[0] + b[0], lax.max(a[1], b[1])),
        (0, 1),
    )
    assert int(total) == 10 and float(biggest) == X[:2, :2].max()
    np.testing.assert_allclose(
        lax.reduce(X, 1.0, lax.add, (0,)), X.sum(0) + 1, rtol=1e-6
    )  # the init enters once, as in JAX
    np.testing.assert_allclose(
        olympus.jit(lambda x, i: lax.reduce(x, i, lax.max, (1,)))(X, np.float32(0.5)),
        np.maximum(X.max(1), 0.5),
    )
    check_grads(lambda x: lax.reduce(x, 0.0, lax.add, (1,)), (X,), order=2)
    check_grads(lambda x: lax.reduce(x, 1.0, lax.mul, (0,)), (X,), order=1)


def test_reduce_rejects_other_computations_by_name():
    with pytest.raises(lax.ReduceComputationError, match="monoids lax.add, lax.mul"):
        lax.reduce(X, 0.0, lambda a, b: a + 2.0 * b, (0,))
    with pytest.raises(lax.ReduceComputationError, match="applied to the two"):
        lax.reduce(X, 0.0, lambda a, b: a * a, (0,))
    with pytest.raises(lax.ReduceComputationError, match="does not match"):
        lax.reduce(X, np.int32(0), lax.add, (0,))
    with pytest.raises(lax.ReduceComputationError, match="structure"):
        lax.reduce((X, X), (0.0, 0.0), lambda a, b: a[0] + b[0], (0,))


# ---- reduce_window ----------------------------------------------------------------------------
def _window_reference(x, init, ufunc, identity, window, strides, pads, base, dilation):
    """Windows by definition: dilate, pad with the identity, then fold each
    window (the init once per window)."""
    spread_shape = [(d - 1) * b + 1 for d, b in zip(x.shape, base)]
    spread = np.full(spread_shape, identity, x.dtype)
    spread[tuple(slice(None, None, b) for b in base)] = x
    padded = np.pad(spread, pads, constant_values=identity)
    extent = [(w - 1) * r + 1 for w, r in zip(window, dilation)]
    out_shape = [(p - e) // s + 1 for p, e, s in zip(padded.shape, extent, strides)]
    out = np.empty(out_shape, x.dtype)
    for index in np.ndindex(*out_shape):
        picks = tuple(
            slice(i * s, i * s + e, r)
            for i, s, e, r in zip(index, strides, extent, dilation)
        )
        out[index] = ufunc.reduce(padded[picks].ravel(), initial=init)
    return out


WINDOW_CASES = [  # computation, ufunc, identity, window, strides, pads, base, dilation
    (lax.add, np.add, 0.0, (2, 3), (1, 2), ((0, 1), (1, 1)), (1, 1), (1, 1)),
    (lax.add, np.add, 0.0, (2, 2), (2, 1), ((1, 0), (2, 1)), (2, 1), (1, 2)),
    (lax.max, np.maximum, -np.inf, (3, 2), (1, 1), ((1, 1), (0, 0)), (1, 2), (2, 1)),
    (lax.min, np.minimum, np.inf, (2, 3), (2, 2), ((0, 1), (1, 1)), (1, 1), (1, 1)),
    (lax.mul, np.multiply, 1.0, (2, 2), (1, 1), ((1, 0), (0, 1)), (2, 2), (1, 1)),
]


@pytest.mark.parametrize("case", range(len(WINDOW_CASES)))
def test_reduce_window_matches_the_definition(case):
    computation, ufunc, identity, *geometry = WINDOW_CASES[case]
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    window, strides, pads, base, dilation = geometry
    got = lax.reduce_window(
        x, identity, computation, window, strides, pads, base, dilation
    )
    want = _window_reference(x, identity, ufunc, identity, *geometry)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_reduce_window_same_padding_integers_and_init_once_per_window():
    x = RNG.integers(-50, 50, (5, 6)).astype(np.int32)
    info = np.iinfo(np.int32)
    for computation, ufunc, identity in [
        (lax.min, np.minimum, info.max),
        (lax.bitwise_xor, np.bitwise_xor, 0),
        (lax.max, np.maximum, info.min),
    ]:
        got = lax.reduce_window(x, identity, computation, (2, 3), (1, 1), "SAME")
        pads = lax.padtype_to_pads(x.shape, (2, 3), (1, 1), "SAME")
        want = _window_reference(
            x, identity, ufunc, identity, (2, 3), (1, 1), pads, (1, 1), (1, 1)
        )
        np.testing.assert_array_equal(got, want)
    ones = np.zeros((1, 4), np.float32)
    np.testing.assert_array_equal(
        lax.reduce_window(ones, 2.0, lax.add, (1, 2), (1, 1), "SAME"), [[2, 2, 2, 2]]
    )


def test_reduce_window_grads_and_vmap():
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    check_grads(
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), "SAME"),
        (x,),
        order=1,
    )
    check_grads(
        lambda x: lax.reduce_window(
            x, -np.inf, lax.max, (2, 2), (1, 1), "VALID", window_dilation=(2, 1)
        ),
        (x,),
        order=1,
    )
    f = lambda r: lax.reduce_window(r, np.inf, lax.min, (2,), (1,), "SAME")  # noqa: E731
    np.testing.assert_array_equal(olympus.vmap(f)(x), _loop_vmap(f, x))


def test_reduce_window_rejects_other_computations():
    with pytest.raises(lax.ReduceComputationError, match="lax.reduce_window"):
        lax.reduce_window(X, 0.0, lambda a, b: a - b, (2, 2), (1, 1), "VALID")


# ---- implicit differentiation ---------------------------------------------------------------
def _newton(f, x0):
    slope = olympus.grad(f)
    return lax.fori_loop(0, 25, lambda i, x: x - f(x) / slope(x), x0)


def _scalar_tangent_solve(g, y):
    return y / g(1.0)


def test_custom_root_differentiates_the_equation_not_the_iterations():
    def cube_root(a):
        f = lambda x: x**3 - a  # noqa: E731
        return lax.custom_root(f, 1.0, _newton, _scalar_tangent_solve)

    a = np.float32(5.0)
    np.testing.assert_allclose(cube_root(a), 5 ** (1 / 3), rtol=1e-6)
    want = (1 / 3) * 5 ** (-2 / 3)
    np.testing.assert_allclose(olympus.grad(cube_root)(a), want, rtol=1e-5)
    np.testing.assert_allclose(olympus.jit(olympus.grad(cube_root))(a), want, rtol=1e-5)
    grads = olympus.vmap(olympus.grad(cube_root))(np.float32([2.0, 8.0]))
    np.testing.assert_allclose(grads, np.float32([2.0, 8.0]) ** (-2 / 3) / 3, rtol=1e-5)


def test_custom_root_vector_jacobian_matches_finite_differences():
    a = np.float32([[3.0, 1.0], [0.5, 2.0]])  # not symmetric: the transpose matters

    def root(b):
        f = lambda x: a @ x + 0.1 * x**3 - b  # noqa: E731

        def solve(f, x0):
            jac = olympus.jacfwd(f)
            step = lambda i, x: x - olympus.numpy.linalg.solve(jac(x), f(x))  # noqa: E731
            return lax.fori_loop(0, 20, step, x0)

        def tangent_solve(g, y):
            matrix = olympus.vmap(g)(olympus.numpy.eye(2)).T
            return olympus.numpy.linalg.solve(matrix, y)

        return lax.custom_root(f, olympus.numpy.zeros(2), solve, tangent_solve)

    b = np.float32([1.0, 2.0])
    x = np.asarray(root(b))
    np.testing.assert_allclose(a @ x + 0.1 * x**3, b, atol=1e-5)
    eps = 1e-2
    numeric = np.stack(
        [
            (np.asarray(root(b + eps * e)) - np.asarray(root(b - eps * e))) / (2 * eps)
            for e in np.eye(2, dtype=np.float32)
        ],
        axis=1,
    )
    np.testing.assert_allclose(olympus.jacrev(root)(b), numeric, rtol=2e-3, atol=1e-4)


def test_custom_root_has_aux():
    def with_count(f, x0):
        return _newton(f, x0), np.int32(25)

    x, aux = lax.custom_root(
        lambda x: x**2 - 2.0, 1.0, with_count, _scalar_tangent_solve, has_aux=True
    )
    np.testing.assert_allclose(x, np.sqrt(2), rtol=1e-6)
    assert int(aux) == 25


M = np.float32([[2.0, 1.0], [0.0, 3.0]])


def _linear_solution(scale, b, **kwargs):
    matrix = M * scale
    return lax.custom_linear_solve(
        lambda x: matrix @ x,
        b,
        lambda mv, rhs: olympus.numpy.linalg.solve(matrix, rhs),
        **kwargs,
    )


def test_custom_linear_solve_gradients_of_b_and_of_the_matrix():
    b = np.float32([1.0, 2.0])
    transpose_solve = lambda vm, rhs: olympus.numpy.linalg.solve(M.T * 1.5, rhs)  # noqa: E731
    x = _linear_solution(1.5, b, transpose_solve=transpose_solve)
    np.testing.assert_allclose(x, np.linalg.solve(M * 1.5, b), rtol=1e-6)
    loss = lambda s, b: _linear_solution(s, b, transpose_solve=transpose_solve).sum()  # noqa: E731
    g_scale, g_b = olympus.grad(loss, argnums=(0, 1))(np.float32(1.5), b)
    np.testing.assert_allclose(g_b, np.linalg.solve((M * 1.5).T, np.ones(2)), rtol=1e-5)
    h = 1e-3
    numeric = (loss(1.5 + h, b) - loss(1.5 - h, b)) / (2 * h)
    np.testing.assert_allclose(g_scale, numeric, rtol=1e-2)
    # transpose_solve gets matvec's transpose: with "solvers" that return their
    # input and apply vecmat, the gradient of sum(x) is M^T 1
    probe = lambda b: lax.custom_linear_solve(  # noqa: E731
        lambda x: M @ x, b, lambda mv, r: r, transpose_solve=lambda vm, r: vm(r)
    )
    g = olympus.grad(lambda b: probe(b).sum())(b)
    np.testing.assert_allclose(g, M.T @ np.ones(2), rtol=1e-6)


def test_custom_linear_solve_symmetric_and_errors():
    s = np.float32([[2.0, 1.0], [1.0, 3.0]])
    b = np.float32([3.0, 4.0])
    solve = lambda mv, r: olympus.numpy.linalg.solve(s, r)  # noqa: E731
    f = lambda b: lax.custom_linear_solve(lambda x: s @ x, b, solve, symmetric=True)  # noqa: E731
    np.testing.assert_allclose(f(b), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(
        olympus.grad(lambda b: f(b).sum())(b), np.linalg.solve(s, np.ones(2)), rtol=1e-5
    )
    with pytest.raises(lax.ImplicitSolveError, match="needs transpose_solve"):
        olympus.grad(
            lambda b: lax.custom_linear_solve(lambda x: s @ x, b, solve).sum()
        )(b)
    with pytest.raises(lax.ImplicitSolveError, match="same structure"):
        lax.custom_linear_solve(lambda x: (x, x), b, solve)


# ---- JAX as an optional oracle ----------------------------------------------------------------
def test_against_jax():
    jax = pytest.importorskip("jax")
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    pairs = [
        (lambda m: m.cbrt(x), None),
        (lambda m: m.tile(x, (2, 1)), None),
        (lambda m: m.collapse(x[None], 0, 2), None),
        (lambda m: m.reduce(x, np.float32(1), m.add, (1,)), None),
        (
            lambda m: m.reduce_window(
                x, np.float32(-np.inf), m.max, (2, 3), (1, 2), "SAME", (1, 2), (2, 1)
            ),
            None,
        ),
        (
            lambda m: m.reduce_window(
                x, np.float32(0.5), m.add, (2, 2), (1, 1), "SAME", None, (1, 2)
            ),
            None,
        ),
        (lambda m: m.dynamic_index_in_dim(x, -2, 1, False), None),
        (lambda m: m.nextafter(x, np.float32(0)), None),
    ]
    for fn, _ in pairs:
        np.testing.assert_allclose(fn(lax), np.asarray(fn(jax.lax)), rtol=1e-5)
    np.testing.assert_array_equal(
        olympus.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(x[0]),
        jax.vmap(lambda v: v * jax.lax.axis_size("i"), axis_name="i")(x[0]),
    )
    for a, b in itertools.zip_longest(
        lax.split(x, (2, 4), 1), jax.lax.split(x, (2, 4), 1)
    ):
        np.testing.assert_array_equal(a, b)
