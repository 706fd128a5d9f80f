"""olympus.numpy against NumPy: values and dtypes, eagerly and under jit.

Every check runs the function twice, op by op and under `olympus.jit`, and
compares both with NumPy. Expected dtypes follow JAX's rules (32-bit by
default, weak Python scalars), which is where they differ from NumPy's.
Shapes are tiny and reused, since every new shape/dtype pair costs a compile.
"""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp

_NARROW = {
    np.dtype("float64"): np.float32,
    np.dtype("int64"): np.int32,
    np.dtype("uint64"): np.uint32,
    np.dtype("complex128"): np.complex64,
}


def _canonical(dtype) -> np.dtype:
    return np.dtype(_NARROW.get(np.dtype(dtype), dtype))


def _to_olympus(x):
    """NumPy arrays become olympus Arrays; Python scalars stay weak scalars."""
    return jnp.asarray(x) if isinstance(x, np.ndarray) else x


def _run(fn, operands, modes):
    if "eager" in modes:
        yield "eager", fn(*operands)
    if "jit" in modes:
        yield "jit", olympus.jit(fn)(*operands)


def check(fn, np_fn, *args, dtype=None, rtol=1e-6, atol=1e-6, modes=("eager", "jit")):
    """fn(*args) eagerly and under jit equals np_fn(*args), with JAX's dtype.

    `dtype` defaults to NumPy's result dtype narrowed to 32 bits. Library
    functions built from already-tested primitives check under jit only
    (`modes=("jit",)`): one compile instead of one per primitive.
    """
    expected = np.asarray(np_fn(*args))
    want = np.dtype(dtype) if dtype is not None else _canonical(expected.dtype)
    operands = [_to_olympus(a) for a in args]
    for mode, got in _run(fn, operands, modes):
        assert isinstance(got, olympus.Array), mode
        assert got.dtype == want, f"{mode}: dtype {got.dtype}, want {want}"
        assert got.shape == expected.shape, (
            f"{mode}: shape {got.shape}, want {expected.shape}"
        )
        np.testing.assert_allclose(
            np.asarray(got).astype(np.float64) if want.kind != "c" else np.asarray(got),
            expected,
            rtol=rtol,
            atol=atol,
            err_msg=mode,
        )


JIT_ONLY = ("jit",)
RNG = np.random.default_rng(0)
F = RNG.standard_normal((2, 3)).astype(np.float32)
G = RNG.standard_normal((2, 3)).astype(np.float32)
POS = RNG.uniform(0.5, 2.5, (2, 3)).astype(np.float32)
I = np.array([[-7, -2, 0], [3, 5, 9]], np.int32)
J = np.array([[2, -3, 4], [-2, 3, 5]], np.int32)
B = np.array([[True, False, True], [False, False, True]])


# ---- array creation --------------------------------------------------------------
def test_array_from_lists_and_numpy():
    assert jnp.array([1.0, 2.0]).dtype == np.float32
    assert jnp.array([[1, 2], [3, 4]]).dtype == np.int32
    assert jnp.array([True, False]).dtype == np.bool_
    assert jnp.array(np.arange(3, dtype=np.float64)).dtype == np.float32
    assert jnp.array(np.arange(3, dtype=np.uint8)).dtype == np.uint8
    np.testing.assert_array_equal(jnp.array([[1, 2], [3, 4]]), [[1, 2], [3, 4]])
    assert jnp.array([1, 2], dtype=jnp.float16).dtype == np.float16
    assert jnp.array(3.0, ndmin=2).shape == (1, 1)


def test_array_of_arrays_stacks():
    a = jnp.array([jnp.ones(2), jnp.zeros(2)])
    np.testing.assert_array_equal(a, [[1, 1], [0, 0]])
    assert a.dtype == np.float32


def test_array_of_python_scalar_is_weak():
    assert jnp.asarray(2).weak_type and jnp.asarray(2).dtype == np.int32
    assert jnp.array(2.0).weak_type
    assert not jnp.asarray(2, dtype=jnp.int32).weak_type
    assert not jnp.array([2.0]).weak_type


def test_asarray_returns_arrays_unchanged():
    x = jnp.ones(3)
    assert jnp.asarray(x) is x
    assert jnp.asarray(x, dtype=jnp.int32).dtype == np.int32


def test_array_rejects_strings():
    with pytest.raises(TypeError, match="cannot convert"):
        jnp.array(["a", "b"])


@pytest.mark.parametrize(
    "make, want",
    [
        (lambda: jnp.zeros((2, 3)), np.zeros((2, 3), np.float32)),
        (lambda: jnp.ones(3, jnp.int32), np.ones(3, np.int32)),
        (lambda: jnp.zeros((), bool), np.zeros((), bool)),
        (lambda: jnp.full((2,), 3), np.full((2,), 3, np.int32)),
        (lambda: jnp.full((2, 2), 1.5), np.full((2, 2), 1.5, np.float32)),
        (
            lambda: jnp.full((2, 3), jnp.arange(3.0)),
            np.broadcast_to(np.arange(3.0, dtype=np.float32), (2, 3)),
        ),
        (lambda: jnp.full(2, 7, dtype=jnp.uint8), np.full(2, 7, np.uint8)),
        (lambda: jnp.zeros_like(jnp.arange(3)), np.zeros(3, np.int32)),
        (lambda: jnp.ones_like(F), np.ones((2, 3), np.float32)),
        (lambda: jnp.ones_like(F, dtype=jnp.int8), np.ones((2, 3), np.int8)),
        (lambda: jnp.full_like(I, 4), np.full((2, 3), 4, np.int32)),
        (lambda: jnp.full_like(F, 2, shape=(3,)), np.full((3,), 2, np.float32)),
        (lambda: jnp.empty((2,)).shape, (2,)),
        (lambda: jnp.eye(3), np.eye(3, dtype=np.float32)),
        (lambda: jnp.eye(2, 4, k=1), np.eye(2, 4, k=1, dtype=np.float32)),
        (lambda: jnp.eye(3, k=-1, dtype=jnp.int32), np.eye(3, k=-1, dtype=np.int32)),
        (lambda: jnp.identity(2), np.identity(2, np.float32)),
    ],
)
def test_creation(make, want):
    got = make()
    if isinstance(want, tuple):
        assert got == want
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}),
        ((2, 7), {}),
        ((7, 1, -2), {}),
        ((0, 1, 0.25), {}),
        ((1.5,), {}),
        ((3,), {"dtype": jnp.float32}),
        ((-3, 3, 2), {"dtype": jnp.int8}),
        ((3, 0), {}),
    ],
)
def test_arange(args, kwargs):
    got = jnp.arange(*args, **kwargs)
    want = np.arange(*args, **{k: np.dtype(v) for k, v in kwargs.items()})
    assert got.dtype == _canonical(want.dtype)
    np.testing.assert_allclose(np.asarray(got), want)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((0, 1, 5), {}),
        ((2, -1, 4), {"endpoint": False}),
        ((0, 10, 4), {"dtype": jnp.int32}),
    ],
)
def test_linspace(args, kwargs):
    got = jnp.linspace(*args, **kwargs)
    want = np.linspace(*args, **kwargs).astype(
        _canonical(kwargs.get("dtype", np.float32))
    )
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_linspace_retstep_and_arange_inside_jit():
    _, step = jnp.linspace(0.0, 1.0, 5, retstep=True)
    np.testing.assert_allclose(float(step), 0.25)
    out = olympus.jit(lambda x: x + jnp.arange(3) + jnp.linspace(0, 2, 3))(jnp.zeros(3))
    np.testing.assert_allclose(np.asarray(out), [0, 2, 4])


# ---- operators -------------------------------------------------------------------
_ARITH = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("floordiv", lambda a, b: a // b),
    ("mod", lambda a, b: a % b),
    ("pow", lambda a, b: a**b),
]
_COMPARE = [
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
]


def _all_comparisons(xp):
    return lambda a, b: xp.stack([op(a, b) for _, op in _COMPARE])


@pytest.mark.parametrize("name, op", _ARITH)
def test_float_operators(name, op):
    lhs = POS if name in ("pow",) else F
    check(op, op, lhs, G if name != "pow" else F, rtol=2e-6)


@pytest.mark.parametrize("name, op", _ARITH)
def test_int_operators(name, op):
    rhs = np.abs(J) if name == "pow" else J
    dtype = np.float32 if name == "div" else None
    check(op, op, I, rhs, dtype=dtype)


def test_comparison_operators():
    """All six comparisons in one program per dtype pair (one compile each)."""
    for a, b in ((F, G), (I, J), (I, F), (F, np.float32(0.5)), (I, np.int32(0))):
        check(_all_comparisons(jnp), _all_comparisons(np), a, b)
    check(
        lambda x: _all_comparisons(jnp)(x, 0.5),
        lambda x: _all_comparisons(np)(x, 0.5),
        F,
    )
    check(
        lambda x: _all_comparisons(jnp)(0.5, x),
        lambda x: _all_comparisons(np)(0.5, x),
        F,
    )
    check(
        lambda x: _all_comparisons(jnp)(x, 2), lambda x: _all_comparisons(np)(x, 2), I
    )


@pytest.mark.parametrize("name, op", _ARITH)
def test_reflected_python_scalar_keeps_array_dtype(name, op):
    """`2.0 * x` and `x * 2.0` both stay float32: Python scalars are weak."""
    lhs = POS if name == "pow" else F
    check(lambda x: op(x, 1.5), lambda x: op(x, np.float32(1.5)), lhs, rtol=2e-6)
    check(lambda x: op(1.5, x), lambda x: op(np.float32(1.5), x), lhs, rtol=2e-6)


@pytest.mark.parametrize("name, op", _ARITH)
def test_int_array_with_int_scalar_stays_int32(name, op):
    dtype = np.float32 if name == "div" else np.int32
    check(lambda x: op(x, 3), lambda x: op(x, np.int32(3)), I, dtype=dtype)
    rhs_fn = (lambda x: op(2, x)) if name != "pow" else (lambda x: op(2, jnp.abs(x)))
    check(
        rhs_fn,
        (lambda x: op(np.int32(2), x))
        if name != "pow"
        else (lambda x: op(np.int32(2), np.abs(x))),
        J,
        dtype=dtype,
    )


def test_int_array_with_float_scalar_is_float32():
    check(lambda x: x + 2.5, lambda x: x + 2.5, I, dtype=np.float32)
    check(lambda x: 0.5 * x, lambda x: 0.5 * x, I, dtype=np.float32)


def test_floordiv_and_mod_follow_python_signs():
    a = np.array([-7, -7, 7, 7, 0], np.int32)
    b = np.array([2, -2, 2, -2, 3], np.int32)
    check(lambda x, y: x // y, np.floor_divide, a, b)
    check(lambda x, y: x % y, np.remainder, a, b)
    fa, fb = a.astype(np.float32) + 0.5, b.astype(np.float32)
    check(lambda x, y: x // y, np.floor_divide, fa, fb)
    check(lambda x, y: x % y, np.remainder, fa, fb)
    check(lambda x, y: jnp.fmod(x, y), np.fmod, a, b)


def test_unsigned_floordiv_mod():
    a, b = np.array([7, 200, 9], np.uint8), np.array([2, 7, 3], np.uint8)
    check(lambda x, y: x // y, np.floor_divide, a, b)
    check(lambda x, y: x % y, np.remainder, a, b)


def test_integer_power_with_array_exponent():
    base = np.array([2, -3, 5, 0], np.int32)
    exponent = np.array([3, 2, 0, 4], np.int32)
    check(lambda x, y: x**y, np.power, base, exponent)
    check(lambda x: x**3, lambda x: x**3, base)
    check(lambda x: x**-2, lambda x: x**-2.0, POS, rtol=1e-5)


def test_boolean_arithmetic_is_logical():
    """NumPy adds booleans with `or`, multiplies with `and`, and keeps bool."""
    check(lambda a, b: a + b, np.add, B, ~B)
    check(lambda a, b: a * b, np.multiply, B, B.T.reshape(2, 3))
    check(jnp.maximum, np.maximum, B, ~B)
    check(jnp.minimum, np.minimum, B, B[::-1])


def test_integer_to_negative_power_is_an_error():
    with pytest.raises(ValueError, match="negative integer powers"):
        jnp.arange(1, 4) ** -1


def test_unary_operators():
    check(lambda x: -x, np.negative, F)
    check(lambda x: -x, np.negative, I)
    check(lambda x: +x, np.positive, I)
    check(lambda x: abs(x), np.abs, I)
    check(lambda x: ~x, np.invert, I)
    check(lambda x: ~x, np.invert, B)


def test_bitwise_and_logical_operators():
    check(lambda a, b: a & b, np.bitwise_and, I, J)
    check(lambda a, b: a | b, np.bitwise_or, I, J)
    check(lambda a, b: a ^ b, np.bitwise_xor, B, ~B)
    check(jnp.logical_and, np.logical_and, I, J)
    check(jnp.logical_or, np.logical_or, B, I)
    check(jnp.logical_not, np.logical_not, I)


def test_matmul_operators():
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    check(lambda x, y: x @ y, np.matmul, F, w, rtol=1e-5)
    v = np.arange(3, dtype=np.float32)
    check(lambda x, y: x @ y, np.matmul, F, v, rtol=1e-5)
    # A NumPy array on the left defers to olympus's reflected operator.
    out = np.ones((2, 2), np.float32) @ jnp.asarray(np.eye(2, dtype=np.float32))
    assert isinstance(out, olympus.Array)
    np.testing.assert_array_equal(np.asarray(out), np.ones((2, 2)))


def test_operators_with_numpy_operands():
    x = jnp.asarray(F)
    out = np.float32(2.0) * x
    assert isinstance(out, olympus.Array) and out.dtype == np.float32
    assert (x * np.float64(2.0)).dtype == np.float32  # numpy scalars are strong
    assert (jnp.arange(3, dtype=jnp.int8) * np.int32(2)).dtype == np.int32
    np.testing.assert_allclose(np.asarray(np.ones(3) + jnp.arange(3.0)), [1, 2, 3])


def test_unknown_operand_types_raise_type_error():
    with pytest.raises(TypeError):
        jnp.ones(2) + "a"
    with pytest.raises(TypeError):
        jnp.ones(2) + None


def test_broadcasting_operators():
    col = np.arange(2, dtype=np.float32)[:, None]
    row = np.arange(3, dtype=np.float32)
    check(lambda a, b: a * b + a, lambda a, b: a * b + a, col, row)
    with pytest.raises(ValueError, match="broadcast"):
        jnp.ones((2, 3)) + jnp.ones((4,))


# ---- elementwise math ------------------------------------------------------------
_UNARY = [
    (jnp.exp, np.exp, F),
    (jnp.log, np.log, POS),
    (jnp.log1p, np.log1p, POS),
    (jnp.expm1, np.expm1, F),
    (jnp.sin, np.sin, F),
    (jnp.cos, np.cos, F),
    (jnp.tan, np.tan, F),
    (jnp.tanh, np.tanh, F),
    (jnp.sqrt, np.sqrt, POS),
    (jnp.arctan, np.arctan, F),
    (jnp.arcsin, np.arcsin, F / 4),
    (jnp.arccos, np.arccos, F / 4),
    (jnp.sinh, np.sinh, F),
    (jnp.cosh, np.cosh, F),
    (jnp.log2, np.log2, POS),
    (jnp.log10, np.log10, POS),
    (jnp.exp2, np.exp2, F),
    (jnp.square, np.square, F),
    (jnp.reciprocal, np.reciprocal, POS),
    (jnp.floor, np.floor, F * 3),
    (jnp.ceil, np.ceil, F * 3),
    (jnp.sign, np.sign, F),
    (jnp.abs, np.abs, F),
    (jnp.negative, np.negative, F),
    (jnp.deg2rad, np.deg2rad, F),
    (jnp.rad2deg, np.rad2deg, F),
]


@pytest.mark.parametrize("fn, np_fn, x", _UNARY, ids=[f[1].__name__ for f in _UNARY])
def test_unary_math(fn, np_fn, x):
    check(fn, np_fn, x, rtol=2e-6, atol=2e-6, modes=JIT_ONLY)


@pytest.mark.parametrize(
    "fn, np_fn", [(jnp.exp, np.exp), (jnp.sqrt, np.sqrt), (jnp.sin, np.sin)]
)
def test_unary_math_of_ints_gives_float32(fn, np_fn):
    check(fn, np_fn, np.abs(I), dtype=np.float32, rtol=2e-6)


def test_round_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, 1.26], np.float32)
    check(jnp.round, np.round, x)
    check(lambda a: jnp.round(a, 1), lambda a: np.round(a, 1), x, rtol=1e-6)


def test_maximum_minimum_with_mixed_dtypes():
    check(jnp.maximum, np.maximum, F, G)
    check(jnp.minimum, np.minimum, I, J)
    check(lambda x: jnp.maximum(x, 0), lambda x: np.maximum(x, 0), I)
    check(
        lambda x: jnp.minimum(x, 0.5), lambda x: np.minimum(x, 0.5), I, dtype=np.float32
    )
    check(
        lambda x, y: jnp.maximum(x, y),
        np.maximum,
        I.astype(np.int8),
        J.astype(np.int16),
    )


def test_maximum_propagates_nan():
    x = np.array([np.nan, 1.0], np.float32)
    check(lambda a: jnp.maximum(a, 0.0), lambda a: np.maximum(a, 0.0), x)
    check(lambda a: jnp.minimum(a, 0.0), lambda a: np.minimum(a, 0.0), x)


def test_abs_of_unsigned_and_bool():
    check(jnp.abs, np.abs, np.array([1, 250], np.uint8))
    assert jnp.abs(jnp.array([True])).dtype == np.bool_


def test_isnan_isinf_isfinite():
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    for fn, np_fn in (
        (jnp.isnan, np.isnan),
        (jnp.isinf, np.isinf),
        (jnp.isfinite, np.isfinite),
    ):
        check(fn, np_fn, x)
    check(jnp.isnan, np.isnan, I)


def test_where():
    check(jnp.where, np.where, B, F, G)
    check(lambda c, x: jnp.where(c, x, 0), lambda c, x: np.where(c, x, 0), B, I)
    check(lambda x: jnp.where(x > 0, x, 0.0), lambda x: np.where(x > 0, x, 0.0), F)
    check(lambda x: jnp.where(x, 1, 2), lambda x: np.where(x, 1, 2), I, dtype=np.int32)
    row = np.arange(3, dtype=np.float32)
    check(
        lambda c, x: jnp.where(c, x, -1.0),
        lambda c, x: np.where(c, x, -1.0),
        B[:1].T,
        row,
    )
    with pytest.raises(ValueError, match="only a condition"):
        jnp.where(jnp.ones(2), 1.0)


def test_clip():
    check(lambda x: jnp.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), F)
    check(lambda x: jnp.clip(x, None, 2), lambda x: np.clip(x, None, 2), I)
    check(lambda x: jnp.clip(x, 0), lambda x: np.clip(x, 0, None), I)
    check(lambda x: x.clip(-1, 1), lambda x: x.clip(-1, 1), I)
    check(lambda x: jnp.clip(x, min=-1, max=2), lambda x: np.clip(x, -1, 2), I)
    lo = np.full((3,), -0.2, np.float32)
    check(lambda x, lo: jnp.clip(x, lo, 1.0), lambda x, lo: np.clip(x, lo, 1.0), F, lo)


# ---- reductions ------------------------------------------------------------------
X3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (-1, True), ((0, 2), False)])
def test_float_reductions(name, axis, keepdims):
    check(
        lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims),
        lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims),
        X3,
        rtol=1e-5,
    )


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_int_reductions(name):
    dtype = np.float32 if name == "mean" else np.int32
    check(
        lambda x: getattr(jnp, name)(x, axis=1),
        lambda x: getattr(np, name)(x, axis=1),
        J,
        dtype=dtype,
    )
    check(
        lambda x: getattr(jnp, name)(x), lambda x: getattr(np, name)(x), J, dtype=dtype
    )


def test_reduction_dtypes():
    assert jnp.sum(jnp.ones(3, jnp.int8)).dtype == np.int32
    assert jnp.sum(jnp.ones(3, jnp.uint8)).dtype == np.uint32
    assert jnp.sum(jnp.array([True, True, False])).dtype == np.int32
    assert int(jnp.sum(jnp.array([True, True, False]))) == 2
    assert jnp.sum(jnp.ones(3, jnp.float16)).dtype == np.float16
    assert jnp.sum(jnp.ones(3), dtype=jnp.int32).dtype == np.int32
    assert jnp.max(jnp.ones(3, jnp.int8)).dtype == np.int8
    assert jnp.mean(jnp.ones(3, jnp.bfloat16)).dtype == jnp.bfloat16


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_arg_reductions(name, axis):
    check(
        lambda x: getattr(jnp, name)(x, axis=axis),
        lambda x: getattr(np, name)(x, axis=axis),
        X3,
        dtype=np.int32,
    )
    check(
        lambda x: getattr(jnp, name)(x, axis=axis),
        lambda x: getattr(np, name)(x, axis=axis),
        I,
        dtype=np.int32,
    )


def test_argmax_keepdims_and_ties_pick_first():
    x = np.array([[1, 3, 3], [2, 2, 0]], np.int32)
    check(
        lambda a: jnp.argmax(a, axis=1, keepdims=True),
        lambda a: np.argmax(a, axis=1, keepdims=True),
        x,
        dtype=np.int32,
    )
    check(
        lambda a: jnp.argmin(a, axis=0),
        lambda a: np.argmin(a, axis=0),
        x,
        dtype=np.int32,
    )


def test_all_any_var_std():
    check(lambda x: jnp.all(x, axis=0), lambda x: np.all(x, axis=0), B)
    check(
        lambda x: jnp.any(x, axis=1, keepdims=True),
        lambda x: np.any(x, axis=1, keepdims=True),
        I,
    )
    check(lambda x: jnp.var(x, axis=1), lambda x: np.var(x, axis=1), F, rtol=1e-5)
    check(lambda x: jnp.std(x, ddof=1), lambda x: np.std(x, ddof=1), F, rtol=1e-5)


def test_reductions_with_where_and_initial():
    mask = X3 > 0
    check(
        lambda x, m: jnp.sum(x, axis=1, where=m),
        lambda x, m: np.sum(x, axis=1, where=m),
        X3,
        mask,
        rtol=1e-5,
    )
    check(
        lambda x, m: jnp.prod(x, where=m),
        lambda x, m: np.prod(x, where=m),
        X3,
        mask,
        rtol=1e-5,
    )
    check(
        lambda x: jnp.max(x, axis=0, initial=0.5),
        lambda x: np.max(x, axis=0, initial=0.5),
        X3,
    )
    check(
        lambda x, m: jnp.min(x, axis=-1, where=m, initial=1.0),
        lambda x, m: np.min(x, axis=-1, where=m, initial=1.0),
        X3,
        mask,
    )
    check(lambda x: jnp.sum(x, initial=10), lambda x: np.sum(x, initial=10), I)
    check(
        lambda x: jnp.max(x, axis=0, where=x > 0, initial=-1),
        lambda x: np.max(x, axis=0, where=x > 0, initial=-1),
        I,
    )
    empty = jnp.zeros((0,))
    assert float(jnp.max(empty, initial=3.0)) == 3.0 and float(jnp.sum(empty)) == 0.0


def test_boolean_reductions():
    check(lambda x: jnp.max(x, axis=1), lambda x: np.max(x, axis=1), B)
    check(lambda x: jnp.min(x, axis=0), lambda x: np.min(x, axis=0), B)
    check(jnp.prod, np.prod, B)


def test_reduction_methods():
    check(lambda x: x.sum(axis=0), lambda x: x.sum(axis=0), F, rtol=1e-6)
    check(lambda x: x.mean(), lambda x: x.mean(), F, rtol=1e-5)
    check(
        lambda x: x.max(axis=1, keepdims=True),
        lambda x: x.max(axis=1, keepdims=True),
        F,
    )
    check(lambda x: x.argmax(), lambda x: x.argmax(), F, dtype=np.int32)


def test_reduction_errors():
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(jnp.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="empty"):
        jnp.max(jnp.ones((0,)))
    with pytest.raises(ValueError, match="repeated"):
        jnp.sum(jnp.ones((2, 3)), axis=(0, 0))
    with pytest.raises(ValueError, match="out="):
        jnp.sum(jnp.ones(2), out=np.zeros(()))


# ---- contractions ----------------------------------------------------------------
A23 = RNG.standard_normal((2, 3)).astype(np.float32)
B34 = RNG.standard_normal((3, 4)).astype(np.float32)
V3 = RNG.standard_normal((3,)).astype(np.float32)
BATCH = RNG.standard_normal((2, 2, 3)).astype(np.float32)


@pytest.mark.parametrize(
    "a, b",
    [
        (V3, V3),
        (A23, V3),
        (V3, B34),
        (A23, B34),
        (BATCH, B34),
        (BATCH, BATCH.transpose(0, 2, 1)),
        (BATCH[:1], BATCH.transpose(0, 2, 1)),
        (V3, BATCH.transpose(0, 2, 1)),
    ],
    ids=["vv", "mv", "vm", "mm", "batch-m", "batch-batch", "bcast-batch", "v-batch"],
)
def test_matmul(a, b):
    check(jnp.matmul, np.matmul, a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "a, b",
    [(V3, V3), (A23, V3), (A23, B34), (2.0, V3), (BATCH, B34)],
    ids=["vv", "mv", "mm", "scalar", "3d-2d"],
)
def test_dot(a, b):
    check(jnp.dot, np.dot, a, b, rtol=1e-5, atol=1e-5)


def test_contractions_of_ints_and_mixed_dtypes():
    check(jnp.matmul, np.matmul, I, J.T)
    check(jnp.dot, np.dot, I, V3, dtype=np.float32, rtol=1e-5)
    check(lambda x, y: x.dot(y), np.dot, I.astype(np.int8), J.T.astype(np.int8))


def test_other_contractions():
    check(jnp.vdot, np.vdot, A23, G, rtol=1e-5)
    check(jnp.inner, np.inner, A23, G, rtol=1e-5)
    check(jnp.outer, np.outer, V3, V3, rtol=1e-5)
    check(jnp.tensordot, np.tensordot, BATCH, BATCH.transpose(1, 2, 0), rtol=1e-5)
    check(
        lambda a, b: jnp.tensordot(a, b, axes=([1], [0])),
        lambda a, b: np.tensordot(a, b, axes=([1], [0])),
        A23,
        B34,
        rtol=1e-5,
    )


def test_matmul_shape_errors():
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.matmul(jnp.ones(3), 2.0)
    with pytest.raises(TypeError):
        jnp.ones((2, 3)) @ jnp.ones((2, 3))


# ---- shape manipulation ----------------------------------------------------------
_SHAPE_OPS = [
    lambda xp, x: xp.reshape(x, (3, 2)),
    lambda xp, x: xp.reshape(x, (-1,)),
    lambda xp, x: x.reshape(3, -1),
    lambda xp, x: x.reshape((1, 6)),
    lambda xp, x: xp.ravel(x),
    lambda xp, x: x.flatten(),
    lambda xp, x: xp.transpose(x),
    lambda xp, x: x.T,
    lambda xp, x: xp.transpose(x[None], (2, 0, 1)),
    lambda xp, x: x[None].transpose(1, 2, 0),
    lambda xp, x: xp.swapaxes(x, 0, 1),
    lambda xp, x: xp.moveaxis(x[None], 0, -1),
    lambda xp, x: xp.expand_dims(x, 0),
    lambda xp, x: xp.expand_dims(x, -1),
    lambda xp, x: xp.expand_dims(x, (0, 3)),
    lambda xp, x: xp.squeeze(x[None, :, None]),
    lambda xp, x: xp.squeeze(x[None, :, None], axis=2),
    lambda xp, x: x[None].squeeze(0),
    lambda xp, x: xp.broadcast_to(x, (4, 2, 3)),
    lambda xp, x: xp.broadcast_to(x[:1], (3, 3)),
    lambda xp, x: xp.atleast_2d(x[0]),
    lambda xp, x: xp.atleast_1d(x[0, 0]),
]


@pytest.mark.parametrize("op", _SHAPE_OPS)
def test_shape_ops(op):
    check(lambda x: op(jnp, x), lambda x: op(np, x), F, modes=JIT_ONLY)


def test_shape_op_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="reshape"):
        jnp.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="squeeze"):
        jnp.squeeze(x, 0)
    with pytest.raises(ValueError, match="broadcast"):
        jnp.broadcast_to(x, (3, 3))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_and_stack(axis):
    check(
        lambda a, b: jnp.concatenate([a, b, a], axis=axis),
        lambda a, b: np.concatenate([a, b, a], axis=axis),
        F,
        G,
    )
    check(
        lambda a, b: jnp.stack((a, b), axis=axis),
        lambda a, b: np.stack((a, b), axis=axis),
        F,
        G,
    )


def test_concatenate_promotes_and_flattens():
    check(
        lambda a, b: jnp.concatenate([a, b]), lambda a, b: np.concatenate([a, b]), F, I
    )
    check(
        lambda a, b: jnp.concatenate([a, b], axis=None),
        lambda a, b: np.concatenate([a, b], axis=None),
        F,
        G,
    )
    check(lambda a, b: jnp.vstack([a, b]), lambda a, b: np.vstack([a, b]), V3, V3)
    check(lambda a, b: jnp.hstack([a, b]), lambda a, b: np.hstack([a, b]), V3, V3)
    with pytest.raises(ValueError, match="same shape"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])


def test_astype_and_dtype_constructors():
    check(lambda x: x.astype(jnp.int32), lambda x: x.astype(np.int32), F * 3)
    check(
        lambda x: x.astype(jnp.bfloat16),
        lambda x: x.astype(np.float32),
        F,
        dtype=jnp.bfloat16,
        rtol=1e-2,
        atol=1e-2,
    )
    check(lambda x: x.astype(bool), lambda x: x.astype(bool), I)


# ---- a small program, end to end -------------------------------------------------
def test_mlp_forward_matches_numpy():
    rng = np.random.default_rng(1)
    params = {
        "w1": rng.standard_normal((3, 4)).astype(np.float32),
        "b1": rng.standard_normal((4,)).astype(np.float32),
        "w2": rng.standard_normal((4, 2)).astype(np.float32),
    }
    x = rng.standard_normal((5, 3)).astype(np.float32)

    def forward(p, x, xp):
        h = xp.tanh(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"]
        logits = logits - xp.max(logits, axis=-1, keepdims=True)
        return logits - xp.log(xp.sum(xp.exp(logits), axis=-1, keepdims=True))

    want = forward(params, x, np)
    device_params = {k: jnp.asarray(v) for k, v in params.items()}
    for out in (
        forward(device_params, jnp.asarray(x), jnp),
        olympus.jit(lambda p, x: forward(p, x, jnp))(device_params, x),
    ):
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)


# ---- further array functions -----------------------------------------------------
M34 = np.arange(12, dtype=np.float32).reshape(3, 4)
SQ = RNG.standard_normal((3, 3)).astype(np.float32)


@pytest.mark.parametrize(
    "op",
    [
        lambda xp, x: xp.flip(x),
        lambda xp, x: xp.flip(x, 1),
        lambda xp, x: xp.fliplr(x),
        lambda xp, x: xp.roll(x, 1),
        lambda xp, x: xp.roll(x, -1, axis=1),
        lambda xp, x: xp.tile(x, (2, 1, 2)),
        lambda xp, x: xp.tile(x[0], 2),
        lambda xp, x: xp.repeat(x, 2, axis=1),
        lambda xp, x: xp.repeat(x, 3),
        lambda xp, x: xp.triu(x, 1),
        lambda xp, x: xp.tril(x, -1),
        lambda xp, x: xp.diagonal(x, 1),
        lambda xp, x: xp.diagonal(x, -1),
        lambda xp, x: xp.diag(x),
        lambda xp, x: xp.diag(x[0], 1),
        lambda xp, x: xp.diag(x[1], -2),
        lambda xp, x: xp.trace(x),
        lambda xp, x: xp.pad(x, 1),
        lambda xp, x: xp.pad(x, ((0, 1), (2, 0)), constant_values=5),
        lambda xp, x: xp.cumsum(x),
        lambda xp, x: xp.cumsum(x, axis=1),
        lambda xp, x: xp.cumprod(x / 8, 0),
        lambda xp, x: xp.concatenate(xp.split(x, 2, axis=1)),
        lambda xp, x: xp.concatenate(xp.split(x, [1, 2])),
        lambda xp, x: xp.stack(xp.array_split(x[0], 2)),
        lambda xp, x: xp.stack(xp.meshgrid(x[0], x[1, :3])),
        lambda xp, x: xp.stack(xp.meshgrid(x[0], x[1, :3], indexing="ij")),
    ],
)
def test_rearranging_functions(op):
    check(lambda x: op(jnp, x), lambda x: op(np, x), M34, rtol=1e-6, modes=JIT_ONLY)


def test_cumulative_dtypes_and_extremes():
    # JAX keeps int8 for cumsum (NumPy would give int64): JAX is the spec.
    check(jnp.cumsum, np.cumsum, np.arange(5, dtype=np.int8), dtype=np.int8)
    check(
        lambda x: jnp.cummax(x, axis=1), lambda x: np.maximum.accumulate(x, axis=1), SQ
    )
    check(
        lambda x: jnp.cummin(x, axis=0), lambda x: np.minimum.accumulate(x, axis=0), SQ
    )


def test_more_elementwise_functions():
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0], np.float32)
    check(jnp.arcsinh, np.arcsinh, x, rtol=1e-6)
    check(jnp.arctanh, np.arctanh, x / 4, rtol=1e-6)
    check(jnp.arccosh, np.arccosh, x + 4, rtol=1e-6)
    check(jnp.hypot, np.hypot, x, x[::-1])
    a = np.array([1.0, np.inf, -np.inf, 100.0, -50.0], np.float32)
    b = np.array([2.0, np.inf, -np.inf, 100.0, 40.0], np.float32)
    check(jnp.logaddexp, np.logaddexp, a, b)


def test_isclose_allclose_array_equal():
    a = np.array([1.0, np.nan, np.inf, 1e-9, np.inf], np.float32)
    b = np.array([1.000001, np.nan, np.inf, 0.0, -np.inf], np.float32)
    check(jnp.isclose, np.isclose, a, b)
    check(
        lambda x, y: jnp.isclose(x, y, equal_nan=True),
        lambda x, y: np.isclose(x, y, equal_nan=True),
        a,
        b,
    )
    check(jnp.allclose, np.allclose, F, F + 1e-7, dtype=np.bool_)
    check(jnp.array_equal, np.array_equal, I, I, dtype=np.bool_)
    assert not bool(jnp.array_equal(jnp.ones(2), jnp.ones(3)))
    assert bool(
        jnp.array_equal(jnp.array([np.nan]), jnp.array([np.nan]), equal_nan=True)
    )


@pytest.mark.parametrize(
    "subscripts, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij,jk", [(2, 3), (3, 4)]),
        ("ij->ji", [(2, 3)]),
        ("ij->", [(2, 3)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("ij,ij->i", [(2, 3), (2, 3)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("i,j->ij", [(2,), (3,)]),
        ("...j,jk->...k", [(2, 2, 3), (3, 4)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("ijk->kj", [(2, 3, 4)]),
        ("i,i", [(3,), (3,)]),
        # empty axes (a size-0 label used to lose to the size-1 default):
        ("ij,ij->j", [(0, 1), (0, 1)]),
        ("ij,jk->ik", [(2, 0), (0, 4)]),
        ("ij,ij->i", [(0, 3), (0, 3)]),
    ],
)
def test_einsum(subscripts, shapes):
    rng = np.random.default_rng(len(subscripts))
    operands = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    check(
        lambda *ops: jnp.einsum(subscripts, *ops),
        lambda *ops: np.einsum(subscripts, *ops),
        *operands,
        rtol=1e-5,
        atol=1e-5,
        modes=JIT_ONLY,
    )


def test_einsum_errors():
    with pytest.raises(ValueError, match="size of label"):
        jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 2)))
    with pytest.raises(ValueError, match="rank"):
        jnp.einsum("ijk->i", jnp.ones((2, 3)))


def test_statistics_with_where_weights_and_nans():
    mask = F > -0.5
    check(
        lambda x, m: jnp.mean(x, axis=1, where=m),
        lambda x, m: np.mean(x, axis=1, where=m),
        F,
        mask,
        rtol=1e-5,
        modes=JIT_ONLY,
    )
    check(
        lambda x, m: jnp.var(x, axis=0, where=m),
        lambda x, m: np.var(x, axis=0, where=m),
        F,
        mask,
        rtol=1e-5,
        modes=JIT_ONLY,
    )
    check(
        lambda x: jnp.std(x, 1, None, None, 1, True),
        lambda x: np.std(x, 1, None, None, 1, True),
        F,
        rtol=1e-5,
        modes=JIT_ONLY,
    )
    w = np.array([1.0, 2.0, 3.0], np.float32)
    check(
        lambda x, w: jnp.average(x, axis=1, weights=w),
        lambda x, w: np.average(x, axis=1, weights=w),
        F,
        w,
        rtol=1e-5,
        modes=JIT_ONLY,
    )
    nans = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]], np.float32)
    for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean"):
        check(
            lambda x, n=name: getattr(jnp, n)(x, axis=0),
            lambda x, n=name: getattr(np, n)(x, axis=0),
            nans,
            rtol=1e-6,
            modes=JIT_ONLY,
        )
    check(
        lambda x: jnp.count_nonzero(x, axis=1),
        lambda x: np.count_nonzero(x, axis=1),
        I,
        modes=JIT_ONLY,
    )


def test_select_and_nan_to_num():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0], np.float32)
    check(
        lambda v: jnp.select([v < -1, v > 1], [v * 10, v * 100], -1.0),
        lambda v: np.select([v < -1, v > 1], [v * 10, v * 100], -1.0),
        x,
        modes=JIT_ONLY,
    )
    y = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    check(jnp.nan_to_num, np.nan_to_num, y, modes=JIT_ONLY)
    check(
        lambda v: jnp.nan_to_num(v, nan=5.0, posinf=9.0),
        lambda v: np.nan_to_num(v, nan=5.0, posinf=9.0),
        y,
        modes=JIT_ONLY,
    )


def test_like_functions_keep_weak_type():
    assert jnp.ones_like(jnp.asarray(1.0)).weak_type
    assert jnp.zeros_like(2).weak_type and jnp.zeros_like(2).dtype == np.int32
    assert not jnp.full_like(jnp.asarray(1.0), 2, dtype=jnp.float32).weak_type
    assert not jnp.zeros_like(jnp.ones(2)).weak_type


def test_divmod_shifts_and_round_operators():
    check(
        lambda a, b: jnp.stack(divmod(a, b)), lambda a, b: np.stack(divmod(a, b)), I, J
    )
    check(
        lambda a: jnp.stack(divmod(7, a)), lambda a: np.stack(divmod(np.int32(7), a)), J
    )
    check(lambda a: a << 2, lambda a: a << 2, I)
    check(lambda a: a >> 1, lambda a: a >> 1, I)
    check(lambda a: a >> 3, lambda a: a >> 3, np.array([255, 17], np.uint8))
    check(lambda a: 1 << a, lambda a: np.int32(1) << a, np.abs(J))
    assert float(round(jnp.asarray(2.567), 2)) == pytest.approx(2.57)
    assert float(round(jnp.asarray(2.5))) == 2.0


def test_ndarray_isinstance_covers_tracers():
    assert isinstance(jnp.ones(2), jnp.ndarray)
    assert not isinstance(np.ones(2), jnp.ndarray)
    seen = []
    olympus.jit(lambda a: seen.append(isinstance(a, jnp.ndarray)) or a)(jnp.ones(2))
    assert seen == [True]


def test_more_methods():
    def methods(x):
        return (
            x.cumsum(axis=1),
            x.take(np.array([3, 0])),
            x.trace(),
            x.diagonal(1),
            x.repeat(2, axis=0),
        )

    for got, want in zip(olympus.jit(methods)(M34), methods(M34)):
        np.testing.assert_array_equal(np.asarray(got), want)
