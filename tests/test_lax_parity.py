"""olympus.lax functions that mirror jax.lax's: running reductions
(lax.cumsum, ...), lax.associative_scan, lax.population_count,
lax.reduce_precision, lax.sort_key_val and the convolution wrappers
(lax.conv, lax.conv_with_general_padding, lax.conv_transpose,
lax.padtype_to_pads).

References are independent of olympus: NumPy for values, finite differences
for gradients, Python loops for vmap and scans; JAX, where installed, is an
extra oracle.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import olympus
from olympus import lax
from olympus.errors import OlympusTypeError
from olympus.test_util import (
    check_against_numpy,
    check_grads,
    check_jit_matches_eager,
    rand_int,
    rand_normal,
    rand_positive,
    reference_call,
)

RNG = np.random.default_rng(7)


# ---- running reductions ------------------------------------------------------------
def _np_logcumsumexp(x, axis):
    return np.logaddexp.accumulate(x.astype(np.float64), axis=axis)


def _numpy_running(name: str):
    accumulate = {
        "cumsum": lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
        "cumprod": lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype),
        "cummax": lambda x, axis: np.maximum.accumulate(x, axis=axis),
        "cummin": lambda x, axis: np.minimum.accumulate(x, axis=axis),
        "cumlogsumexp": _np_logcumsumexp,
    }[name]

    def ref(x, axis=0, reverse=False):
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis)
        return accumulate(x, axis)

    return ref


RUNNING = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


@pytest.mark.parametrize("name", RUNNING)
@pytest.mark.parametrize("axis, reverse", [(0, False), (1, True), (-1, False)])
def test_running_reductions_against_numpy(name, axis, reverse):
    fn, ref = getattr(lax, name), _numpy_running(name)
    x = rand_positive(RNG, (5, 7)) if name == "cumprod" else rand_normal(RNG, (5, 7))
    check_against_numpy(
        lambda x: fn(x, axis=axis, reverse=reverse),
        lambda x: ref(x, axis % 2, reverse).astype(np.float32),
        (x,),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
def test_running_reductions_keep_integer_dtypes(name):
    x = rand_int(RNG, (9,), np.int32, 1, 4)
    out = getattr(lax, name)(x, reverse=True)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), _numpy_running(name)(x, 0, True))


def test_running_reductions_of_length_zero_and_one():
    for n in (0, 1):
        x = np.ones((2, n), np.float32)
        np.testing.assert_array_equal(np.asarray(lax.cumsum(x, axis=1)), x)


def test_cummax_with_infinities_and_cumlogsumexp_of_minus_infinity():
    x = np.float32([-np.inf, -np.inf, 2.0, np.inf, 1.0])
    np.testing.assert_array_equal(np.asarray(lax.cummax(x)), np.maximum.accumulate(x))
    y = np.float32([-np.inf, -np.inf, 0.0, 1000.0, 1.0])
    np.testing.assert_allclose(
        np.asarray(lax.cumlogsumexp(y)), _np_logcumsumexp(y, 0), rtol=1e-6
    )
    grad = olympus.grad(lambda v: lax.cumlogsumexp(v).sum())(y[:3])
    assert np.isfinite(np.asarray(grad)).all()


@pytest.mark.parametrize("name", RUNNING)
def test_running_reductions_under_jit(name):
    fn = getattr(lax, name)
    x = rand_positive(RNG, (4, 6))
    check_jit_matches_eager(lambda x: fn(x, axis=1, reverse=True), (x,))


@pytest.mark.parametrize("name", RUNNING)
@pytest.mark.parametrize("reverse", [False, True])
def test_running_reductions_gradients(name, reverse):
    fn = getattr(lax, name)
    # Distinct, positive values: max/min have no ties, products no zeros.
    x = (RNG.permutation(12).reshape(3, 4) * 0.25 + 0.5).astype(np.float32)
    check_grads(lambda x: fn(x, axis=1, reverse=reverse), (x,), order=1)


def test_running_reductions_second_order_gradients():
    x = rand_positive(RNG, (5,))
    check_grads(lambda x: lax.cumprod(x), (x,), order=2)
    check_grads(lambda x: lax.cumlogsumexp(x, reverse=True), (x,), order=2)


@pytest.mark.parametrize("name", RUNNING)
def test_running_reductions_under_vmap(name):
    fn = getattr(lax, name)
    x = rand_positive(RNG, (3, 4, 5))
    got = olympus.vmap(lambda row: fn(row, axis=1), in_axes=1)(x)
    want = np.stack([np.asarray(fn(x[:, i], axis=1)) for i in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_running_reductions_reject_bad_dtypes_and_axes():
    with pytest.raises(TypeError, match="cumsum.*bool"):
        lax.cumsum(np.bool_([True, False]))
    with pytest.raises(TypeError, match=r"cumlogsumexp.*i32\[2\]"):
        lax.cumlogsumexp(np.int32([1, 2]))
    with pytest.raises(lax.ScanShapeError, match=r"cummax: axis 2 .*\(3, 4\)"):
        lax.cummax(np.zeros((3, 4), np.float32), axis=2)


def test_numpy_cumulative_functions_use_lax():
    import olympus.numpy as jnp

    x = rand_int(RNG, (3, 4), np.int8, 1, 4)
    got = jnp.cumsum(x, axis=1)
    assert got.dtype == np.int8  # JAX keeps int8 (NumPy would widen), then lax.cumsum
    np.testing.assert_array_equal(np.asarray(got), np.cumsum(x, axis=1))
    program = str(olympus.make_olympuspr(jnp.cumprod)(x.astype(np.float32)))
    assert "pad" in program and "mul" in program


def test_running_reductions_match_jax():
    jax = pytest.importorskip("jax")
    x = rand_normal(RNG, (4, 6))
    for name in RUNNING:
        for reverse in (False, True):
            want = getattr(jax.lax, name)(x, axis=1, reverse=reverse)
            got = getattr(lax, name)(x, axis=1, reverse=reverse)
            np.testing.assert_allclose(
                np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6
            )


# ---- associative_scan ------------------------------------------------------------
def _affine_compose(first, second):
    """Affine maps x -> a x + b as (a, b): `second` after `first` (not commutative)."""
    a1, b1 = first
    a2, b2 = second
    return (a2 * a1, a2 * b1 + b2)


def _matmul_pairs(x, y):
    """Batched 2x2 matrix products along the leading axes (not commutative)."""
    return lax.dot_general(x, y, (((x.ndim - 1,), (y.ndim - 2,)), ((0,), (0,))))


def _loop_scan(fn, xs: list, reverse=False):
    """The sequential reference: result i combines elements 0..i in order
    (reverse: elements n-1..i, as scanning the reversed sequence)."""
    order = xs[::-1] if reverse else xs
    out = [order[0]]
    for x in order[1:]:
        out.append(fn(out[-1], x))
    return out[::-1] if reverse else out


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_of_matrix_products_against_a_loop(n, reverse):
    mats = rand_normal(RNG, (n, 2, 2))
    got = lax.associative_scan(_matmul_pairs, mats, reverse=reverse)
    want = np.stack(_loop_scan(np.matmul, list(mats), reverse))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_of_a_pytree_along_axis_1(reverse):
    a, b = rand_normal(RNG, (3, 6)), rand_normal(RNG, (3, 6))
    got_a, got_b = lax.associative_scan(
        _affine_compose, (a, b), reverse=reverse, axis=1
    )
    pairs = _loop_scan(_affine_compose, [(a[:, i], b[:, i]) for i in range(6)], reverse)
    np.testing.assert_allclose(
        np.asarray(got_a), np.stack([p[0] for p in pairs], 1), rtol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(got_b), np.stack([p[1] for p in pairs], 1), rtol=1e-5, atol=1e-6
    )


def test_associative_scan_of_a_dict_with_negative_axis():
    x = {"s": rand_normal(RNG, (2, 7)), "m": rand_normal(RNG, (2, 7))}

    def combine(p, q):
        return {"s": lax.add(p["s"], q["s"]), "m": lax.max(p["m"], q["m"])}

    got = lax.associative_scan(combine, x, axis=-1)
    np.testing.assert_allclose(np.asarray(got["s"]), np.cumsum(x["s"], 1), rtol=1e-5)
    np.testing.assert_array_equal(
        np.asarray(got["m"]), np.maximum.accumulate(x["m"], 1)
    )


def test_associative_scan_under_jit_and_grad():
    a, b = rand_positive(RNG, (7,)), rand_normal(RNG, (7,))

    def last_map(a, b):
        return lax.associative_scan(_affine_compose, (a, b), reverse=True)

    check_jit_matches_eager(last_map, (a, b), rtol=1e-5)
    check_grads(last_map, (a, b), order=1)
    mats = rand_normal(RNG, (6, 2, 2))
    check_grads(lambda m: lax.associative_scan(_matmul_pairs, m), (mats,), order=1)


def test_associative_scan_under_vmap():
    a = rand_normal(RNG, (4, 5))
    got = olympus.vmap(lambda row: lax.associative_scan(lax.mul, row))(a)
    want = np.stack([np.cumprod(row) for row in a])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_associative_scan_rejects_mismatched_elems():
    with pytest.raises(lax.ScanShapeError, match=r"one length.*\(3,\).*\(4,\)"):
        lax.associative_scan(lax.add, (np.zeros(3), np.zeros(4)))
    with pytest.raises(lax.ScanShapeError, match="shape"):
        lax.associative_scan(
            lambda x, y: lax.reduce_sum(x, (0,)), np.zeros((4, 2), np.float32)
        )


def test_associative_scan_matches_jax_reverse_order():
    jax = pytest.importorskip("jax")
    mats = rand_normal(RNG, (6, 2, 2))
    want = jax.lax.associative_scan(lambda x, y: x @ y, mats, reverse=True, axis=0)
    got = lax.associative_scan(_matmul_pairs, mats, reverse=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


# ---- population_count --------------------------------------------------------------
def _np_popcount(x):
    width = x.dtype.itemsize * 8
    flat = [bin(int(v) % (1 << width)).count("1") for v in x.ravel()]
    return np.asarray(flat, x.dtype).reshape(x.shape)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_population_count_against_numpy(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (3, 5), endpoint=True).astype(dtype)
    x.flat[:2] = [info.min, info.max]
    check_against_numpy(lax.population_count, _np_popcount, (x,))
    check_jit_matches_eager(lax.population_count, (x,))
    np.testing.assert_array_equal(
        reference_call(lax.population_count, x), _np_popcount(x)
    )


def test_population_count_under_vmap_and_its_zero_derivative():
    x = rand_int(RNG, (4, 3), np.int32, -100, 100)
    got = olympus.vmap(lax.population_count, in_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(got), _np_popcount(x).T)

    def scaled(v):
        bits = lax.population_count(lax.convert_element_type(v, np.int32))
        return lax.convert_element_type(bits, np.float32) * v

    assert float(olympus.grad(scaled)(np.float32(7.0))) == 3.0  # popcount(7)


def test_population_count_rejects_floats():
    with pytest.raises(OlympusTypeError, match="population_count.*integer.*f32"):
        lax.population_count(np.float32([1.0]))


# ---- reduce_precision ----------------------------------------------------------------
# (exponent_bits, mantissa_bits) of types that ml_dtypes casts to independently
NARROW_FLOATS = [
    ((8, 7), ml_dtypes.bfloat16),
    ((5, 10), np.float16),
    ((5, 2), ml_dtypes.float8_e5m2),
]


@pytest.mark.parametrize("bits, narrow", NARROW_FLOATS)
def test_reduce_precision_rounds_like_a_cast_to_the_narrower_type(bits, narrow):
    finfo = ml_dtypes.finfo(narrow)
    smallest_normal = float(finfo.smallest_normal)
    x = rand_normal(RNG, (200,)) * np.float32(2.0) ** RNG.integers(-8, 9, 200)
    x = np.where(np.abs(x) < smallest_normal, 1.0, x).astype(np.float32)
    too_large = min(float(finfo.max) * 1.5, float(np.finfo(np.float32).max))
    x[:4] = [too_large, -np.inf, 1.0 + 2.0**-9, np.nan]

    def cast(v):  # NumPy/ml_dtypes round to nearest even and overflow to inf
        with np.errstate(over="ignore"):
            return v.astype(narrow).astype(np.float32)

    check_against_numpy(lambda v: lax.reduce_precision(v, *bits), cast, (x,))
    np.testing.assert_array_equal(
        reference_call(lambda v: lax.reduce_precision(v, *bits), x), cast(x)
    )


def test_reduce_precision_flushes_what_the_narrow_format_cannot_hold_normally():
    x = np.float32([1e-6, -1e-6, 6.2e-5, 65504.0, 65520.0, 3.14159, 0.0, 1e-40])
    want = np.float32([0.0, -0.0, 6.2e-5, 65504.0, np.inf, 3.140625, 0.0, 0.0])
    for run in (lambda f, v: f(v), reference_call):
        got = np.asarray(run(lambda v: lax.reduce_precision(v, 5, 10), x))
        np.testing.assert_allclose(got, want, rtol=1e-3)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    check_jit_matches_eager(lambda v: lax.reduce_precision(v, 4, 3), (x,))


def test_reduce_precision_subnormal_inputs_match_the_reference_interpreter():
    x = np.float32([1e-40, 3e-39, -2e-45, 1.17e-38])
    for bits in [(8, 2), (8, 7), (11, 4)]:
        got = lax.reduce_precision(x, *bits)
        want = reference_call(lambda v: lax.reduce_precision(v, *bits), x)
        np.testing.assert_array_equal(np.asarray(got), want)


def test_reduce_precision_derivatives_round_the_tangent():
    x, t = rand_normal(RNG, (6,)), rand_normal(RNG, (6,))
    rounded = t.astype(ml_dtypes.bfloat16).astype(np.float32)
    out, tangent = olympus.jvp(lambda v: lax.reduce_precision(v, 8, 7), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent), rounded)
    grad = olympus.grad(lambda v: (lax.reduce_precision(v, 8, 7) * t).sum())(x)
    np.testing.assert_array_equal(np.asarray(grad), rounded)


def test_reduce_precision_under_vmap():
    x = rand_normal(RNG, (3, 4))
    got = olympus.vmap(lambda row: lax.reduce_precision(row, 5, 10))(x)
    np.testing.assert_array_equal(np.asarray(got), x.astype(np.float16).astype(x.dtype))


def test_reduce_precision_rejects_integers_and_bad_bit_counts():
    with pytest.raises(OlympusTypeError, match="reduce_precision.*floating.*i32"):
        lax.reduce_precision(np.int32([1]), 5, 10)
    with pytest.raises(OlympusTypeError, match="exponent_bits >= 1.*f32"):
        lax.reduce_precision(np.float32([1.0]), 0, 10)


def test_population_count_and_reduce_precision_match_jax():
    jax = pytest.importorskip("jax")
    ints = RNG.integers(-(2**31), 2**31 - 1, (50,)).astype(np.int32)
    np.testing.assert_array_equal(
        np.asarray(lax.population_count(ints)),
        np.asarray(jax.lax.population_count(ints)),
    )
    x = np.float32([1e-6, 65520.0, 3.14159, np.nan, -np.inf, 1e-40, 2.5e-38])
    for bits in [(5, 10), (8, 7), (4, 3), (11, 30)]:
        np.testing.assert_array_equal(
            np.asarray(lax.reduce_precision(x, *bits)),
            np.asarray(jax.lax.reduce_precision(x, *bits)),
        )


# ---- sort_key_val --------------------------------------------------------------------
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_key_val_against_numpy(dimension):
    keys = rand_int(RNG, (4, 6), np.int32, 0, 3)  # many ties: stability matters
    values = rand_normal(RNG, (4, 6))
    order = np.argsort(keys, axis=dimension, kind="stable")
    got_keys, got_values = lax.sort_key_val(keys, values, dimension=dimension)
    np.testing.assert_array_equal(
        np.asarray(got_keys), np.take_along_axis(keys, order, dimension)
    )
    np.testing.assert_array_equal(
        np.asarray(got_values), np.take_along_axis(values, order, dimension)
    )


def test_sort_key_val_under_jit_vmap_and_grad():
    keys, values = rand_normal(RNG, (3, 5)), rand_normal(RNG, (3, 5))
    check_jit_matches_eager(lax.sort_key_val, (keys, values))
    got = olympus.vmap(lambda k, v: lax.sort_key_val(k, v, 0), in_axes=1)(keys, values)
    want = [lax.sort_key_val(keys[:, i], values[:, i]) for i in range(5)]
    np.testing.assert_array_equal(np.asarray(got[1]), np.stack([w[1] for w in want]))
    check_grads(lambda v: lax.sort_key_val(keys, v)[1], (values,), order=1)
    check_grads(lambda k: lax.sort_key_val(k, values)[0], (keys,), order=1)


def test_sort_key_val_rejects_mismatched_shapes():
    with pytest.raises(OlympusTypeError, match=r"sort_key_val.*f32\[3\].*i32\[2\]"):
        lax.sort_key_val(np.float32([3, 1, 2]), np.int32([0, 1]))


# ---- convolution wrappers ------------------------------------------------------------
def _np_conv_nhwc(x, w, pads, lhs_dilation=(1, 1)):
    """Stride-1 cross-correlation of NHWC `x` (dilated, then padded by `pads`)
    with an HWIO kernel, by a loop over the kernel's taps."""
    n, h, wd, c = x.shape
    (dh, dw), ((plo, phi), (qlo, qhi)) = lhs_dilation, pads
    big = np.zeros((n, (h - 1) * dh + 1, (wd - 1) * dw + 1, c), np.float64)
    big[:, ::dh, ::dw] = x
    big = np.pad(big, ((0, 0), (plo, phi), (qlo, qhi), (0, 0)))
    kh, kw = w.shape[:2]
    oh, ow = big.shape[1] - kh + 1, big.shape[2] - kw + 1
    out = np.zeros((n, oh, ow, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += big[:, i : i + oh, j : j + ow] @ w[i, j]
    return out


def _np_strided_conv_nhwc(x, w, strides, pads):
    full = _np_conv_nhwc(x, w, pads)
    return full[:, :: strides[0], :: strides[1]]


def test_padtype_to_pads():
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 1), "SAME") == [(1, 1), (1, 1)]
    assert lax.padtype_to_pads((4, 7), (2, 4), (1, 2), "same") == [(0, 1), (1, 2)]
    assert lax.padtype_to_pads((4,), (2,), (1,), "SAME_LOWER") == [(1, 0)]
    assert lax.padtype_to_pads((4, 4), (3, 3), (1, 1), "VALID") == [(0, 0), (0, 0)]
    assert lax.padtype_to_pads((2,), (5,), (1,), "SAME") == [(2, 2)]
    with pytest.raises(lax.ConvPaddingError, match="padtype_to_pads.*'FULL'"):
        lax.padtype_to_pads((4,), (2,), (1,), "FULL")


def test_conv_and_conv_with_general_padding_against_numpy():
    x, w = rand_normal(RNG, (2, 3, 6, 5)), rand_normal(RNG, (4, 3, 3, 2))  # NCHW, OIHW
    to_nhwc, to_hwio = (0, 2, 3, 1), (2, 3, 1, 0)

    def ref(x, w, strides, pads, lhs_dilation=(1, 1)):
        out = _np_conv_nhwc(
            x.transpose(to_nhwc), w.transpose(to_hwio), pads, lhs_dilation
        )
        return out[:, :: strides[0], :: strides[1]].transpose(0, 3, 1, 2)

    pads = lax.padtype_to_pads((6, 5), (3, 2), (2, 1), "SAME")
    got = lax.conv(x, w, (2, 1), "SAME")
    np.testing.assert_allclose(np.asarray(got), ref(x, w, (2, 1), pads), atol=1e-4)
    got = lax.conv_with_general_padding(x, w, (1, 2), ((1, 0), (2, 1)), (2, 1), None)
    want = ref(x, w, (1, 2), ((1, 0), (2, 1)), lhs_dilation=(2, 1))
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-4)
    ints = lax.conv(
        x.astype(np.int32),
        w.astype(np.int32),
        (1, 1),
        "VALID",
        preferred_element_type=np.float32,
    )
    assert ints.dtype == np.float32


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((2, 1), (0, 2))])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_conv_transpose_against_numpy(padding, strides):
    x, w = rand_normal(RNG, (2, 3, 4, 3)), rand_normal(RNG, (3, 2, 3, 5))  # NHWC, HWIO
    got = lax.conv_transpose(x, w, strides, padding)
    if isinstance(padding, str):
        sizes = [
            n * s + (max(k - s, 0) if padding == "VALID" else 0)
            for n, k, s in zip(x.shape[1:3], w.shape[:2], strides)
        ]
        assert got.shape == (2, *sizes, 5)
        pads = [
            lax.conv_transpose_padding(k, s, padding)
            for k, s in zip(w.shape[:2], strides)
        ]
    else:
        pads = padding
    want = _np_conv_nhwc(x, w, pads, lhs_dilation=strides)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (3, 2)])
def test_conv_transpose_with_transposed_kernel_is_the_adjoint_of_conv(strides):
    """<conv(x, w), y> = <x, conv_transpose(y, w, transpose_kernel=True)>, with
    the forward convolution computed by NumPy."""
    k = (3, 3)
    in_shape = [(m - 1) * s + kk for m, s, kk in zip((3, 4), strides, k)]
    x = rand_normal(RNG, (2, *in_shape, 4))
    w = rand_normal(RNG, (*k, 4, 5))  # HWIO: 4 -> 5 features
    forward = _np_strided_conv_nhwc(x, w, strides, ((0, 0), (0, 0)))
    y = rand_normal(RNG, forward.shape)
    back = lax.conv_transpose(y, w, strides, "VALID", transpose_kernel=True)
    assert back.shape == x.shape
    np.testing.assert_allclose(
        np.vdot(np.asarray(back, np.float64), x), np.vdot(forward, y), rtol=1e-4
    )


def test_conv_transpose_layout_strings_jit_and_grad():
    x, w = rand_normal(RNG, (2, 4, 3)), rand_normal(RNG, (5, 4, 3))  # NCH, OIH
    layout = ("NCH", "OIH", "NCH")
    nhc = lax.conv_transpose(x.transpose(0, 2, 1), w.transpose(2, 1, 0), (2,), "SAME")
    nch = lax.conv_transpose(x, w, (2,), "SAME", dimension_numbers=layout)
    np.testing.assert_allclose(
        np.asarray(nch), np.asarray(nhc).transpose(0, 2, 1), rtol=1e-5
    )
    f = lambda x, w: lax.conv_transpose(x, w, (2,), "VALID", dimension_numbers=layout)  # noqa: E731
    check_jit_matches_eager(f, (x, w), rtol=1e-5, atol=1e-5)
    check_grads(f, (x, w), order=1)


def test_conv_transpose_rejects_bad_padding():
    x, w = np.ones((1, 4, 4, 1), np.float32), np.ones((3, 3, 1, 1), np.float32)
    with pytest.raises(lax.ConvPaddingError, match="conv_transpose.*'FULL'"):
        lax.conv_transpose(x, w, (2, 2), "FULL")
    with pytest.raises(lax.PrecisionError):
        lax.conv(x, w, (1, 1), "SAME", precision="not-a-precision")


def test_conv_wrappers_match_jax():
    jax = pytest.importorskip("jax")
    x, w = rand_normal(RNG, (1, 5, 4, 2)), rand_normal(RNG, (3, 2, 2, 3))
    for padding in ("SAME", "VALID"):
        for transpose_kernel in (False, True):
            kernel = w.transpose(0, 1, 3, 2) if transpose_kernel else w
            args = (x, kernel, (2, 3), padding)
            want = jax.lax.conv_transpose(*args, transpose_kernel=transpose_kernel)
            got = lax.conv_transpose(*args, transpose_kernel=transpose_kernel)
            np.testing.assert_allclose(
                np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5
            )
    nchw, oihw = x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1)
    np.testing.assert_allclose(
        np.asarray(lax.conv(nchw, oihw, (1, 2), "SAME")),
        np.asarray(jax.lax.conv(nchw, oihw, (1, 2), "SAME")),
        rtol=1e-4,
        atol=1e-5,
    )
    for shape in [(5, 6), (7, 3)]:
        for pad in ("SAME", "SAME_LOWER", "VALID"):
            assert lax.padtype_to_pads(shape, (4, 2), (2, 3), pad) == list(
                jax.lax.padtype_to_pads(shape, (4, 2), (2, 3), pad)
            )


def test_convolution_precision_reaches_xla_and_its_transposes():
    x = np.random.default_rng(0).normal(size=(2, 3, 6, 6)).astype(np.float32)
    w = np.random.default_rng(1).normal(size=(4, 3, 3, 3)).astype(np.float32)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", precision="highest")

    text = olympus.jit(f).lower(x, w).as_text()
    assert text.count("precision_config") == 1 and "HIGHEST" in text
    grads = olympus.make_olympuspr(olympus.grad(lambda x, w: f(x, w).sum(), (0, 1)))(
        x, w
    )
    convs = [
        e for e in grads.olympuspr.eqns if e.primitive.name == "conv_general_dilated"
    ]
    assert len(convs) == 3
    assert all(e.params["precision"] == ("HIGHEST", "HIGHEST") for e in convs)
    plain = olympus.jit(lambda x, w: lax.conv(x, w, (1, 1), "VALID")).lower(x, w)
    assert "precision_config" not in plain.as_text()
    with olympus.default_matmul_precision("float32"):
        closed = olympus.make_olympuspr(lambda x, w: lax.conv(x, w, (1, 1), "VALID"))(
            x, w
        )
    assert closed.olympuspr.eqns[0].params["precision"] == ("HIGHEST", "HIGHEST")
    want = lax.conv_general_dilated(x, w, (1, 1), "SAME")
    np.testing.assert_allclose(
        np.asarray(f(x, w)), np.asarray(want), rtol=1e-5, atol=1e-5
    )
    with pytest.raises(ValueError, match="unknown precision"):
        lax.conv(x, w, (1, 1), "VALID", precision="quickest")
