"""The olympus.numpy names no other test called (found by an audit of the test
files for issue #6), against NumPy over two shapes and two or three dtypes.

Each row of TABLE is (name, call, argument kind, dtypes, shapes): `call(m, *args)`
runs with m = numpy and with m = olympus.numpy, so both sides do the same
thing. Per row, shape and dtype, the olympus side is traced once and run by the
NumPy reference interpreter (semantics, no XLA compile per case); per shape and
dtype, every row is also compiled into ONE jitted program and checked on XLA.
"""

import warnings

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.test_util import reference_call
from olympus.test_util import (
    check_against_numpy,
    check_grads,
    rand_bool,
    rand_int,
    rand_nonzero_int,
    rand_normal,
    rand_positive,
)
from olympus.tracer.errors import ConcretizationTypeError

F32, I32, U8, C64, BOOL = (
    np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.complex64, np.bool_)
)
SHAPES = ((3, 4), (2, 3, 4))
FI = (F32, I32)


def _values(rng, shape, dtype):
    if dtype == BOOL:
        return rand_bool(rng, shape)
    if dtype.kind in "iu":
        return rand_int(rng, shape, dtype)
    return rand_normal(rng, shape, dtype)


def _exponents(rng, shape, dtype):
    """Bases safe for fractional exponents, exponents small enough to stay exact."""
    if dtype.kind == "f":
        return rand_positive(rng, shape, dtype), rand_normal(rng, shape, dtype)
    return rand_int(rng, shape, dtype, -3, 4), rand_int(rng, shape, dtype, 0, 4)


def _shifts(rng, shape, dtype):
    bits = 8 * dtype.itemsize
    return _values(rng, shape, dtype), rand_int(rng, shape, dtype, 0, bits)


ARGUMENTS = {  # argument kind -> (rng, shape, dtype) -> operands
    "x": lambda rng, s, d: (_values(rng, s, d),),
    "xy": lambda rng, s, d: (_values(rng, s, d), _values(rng, s, d)),
    "divisor": lambda rng, s, d: (
        _values(rng, s, d),
        rand_nonzero_int(rng, s, d) if d.kind in "iu" else rand_positive(rng, s, d),
    ),
    "power": _exponents,
    "shift": _shifts,
}


def _argpartition_sorted(m, x):
    """argpartition's order inside each part is unspecified: compare the values it
    puts at kth, and the parts sorted."""
    idx = m.argpartition(x, 2, axis=-1)
    parted = m.take_along_axis(x, idx, axis=-1)
    return (
        parted[..., 2],
        m.sort(parted[..., :2], axis=-1),
        m.sort(parted[..., 3:], axis=-1),
    )


TABLE = [
    # elementwise unary
    ("absolute", lambda m, x: m.absolute(x), "x", (F32, I32, C64), SHAPES),
    ("around", lambda m, x: m.around(x * 3.7, 1), "x", (F32,), SHAPES),
    ("around", lambda m, x: m.around(x), "x", (I32,), SHAPES),
    ("bitwise_not", lambda m, x: m.bitwise_not(x), "x", (I32, U8, BOOL), SHAPES),
    ("conj", lambda m, x: m.conj(x), "x", (F32, C64), SHAPES),
    ("conjugate", lambda m, x: m.conjugate(x), "x", (I32, C64), SHAPES),
    ("degrees", lambda m, x: m.degrees(x), "x", FI, SHAPES),
    ("radians", lambda m, x: m.radians(x), "x", FI, SHAPES),
    ("positive", lambda m, x: m.positive(x), "x", FI, SHAPES),
    # elementwise binary
    ("bitwise_and", lambda m, x, y: m.bitwise_and(x, y), "xy", (I32, U8, BOOL), SHAPES),
    ("bitwise_or", lambda m, x, y: m.bitwise_or(x, y), "xy", (I32, U8, BOOL), SHAPES),
    ("bitwise_xor", lambda m, x, y: m.bitwise_xor(x, y), "xy", (I32, U8, BOOL), SHAPES),
    ("equal", lambda m, x, y: m.equal(x, y[..., :1]), "xy", FI, SHAPES),
    ("not_equal", lambda m, x, y: m.not_equal(x, y), "xy", FI, SHAPES),
    ("greater", lambda m, x, y: m.greater(x, y), "xy", FI, SHAPES),
    ("greater_equal", lambda m, x, y: m.greater_equal(x, y[0]), "xy", FI, SHAPES),
    ("less", lambda m, x, y: m.less(x, y), "xy", FI, SHAPES),
    ("less_equal", lambda m, x, y: m.less_equal(x[..., :1], y), "xy", FI, SHAPES),
    ("logical_xor", lambda m, x, y: m.logical_xor(x, y), "xy", (F32, BOOL), SHAPES),
    ("floor_divide", lambda m, x, y: m.floor_divide(x, y), "divisor", FI, SHAPES),
    ("remainder", lambda m, x, y: m.remainder(x, y), "divisor", FI, SHAPES),
    ("true_divide", lambda m, x, y: m.true_divide(x, y), "divisor", FI, SHAPES),
    ("divmod", lambda m, x, y: m.divmod(x, y), "divisor", FI, SHAPES),
    ("power", lambda m, x, y: m.power(x, y), "power", FI, SHAPES),
    ("left_shift", lambda m, x, y: m.left_shift(x, y), "shift", (I32, U8), SHAPES),
    ("right_shift", lambda m, x, y: m.right_shift(x, y), "shift", (I32, U8), SHAPES),
    # reductions
    ("amax", lambda m, x: m.amax(x, axis=-1), "x", FI, SHAPES),
    ("amin", lambda m, x: m.amin(x, axis=(0, 1), keepdims=True), "x", FI, SHAPES),
    ("trace", lambda m, x: m.trace(x, 1, -2, -1), "x", FI, SHAPES),
    ("argpartition", _argpartition_sorted, "x", FI, ((3, 6), (2, 3, 5))),
    # shape manipulation
    ("atleast_1d", lambda m, x: m.atleast_1d(x[(0,) * x.ndim], x), "x", FI, SHAPES),
    ("ravel", lambda m, x: m.ravel(x), "x", FI, SHAPES),
    ("ravel", lambda m, x: m.ravel(x, order="F"), "x", FI, SHAPES),
    ("fliplr", lambda m, x: m.fliplr(x), "x", FI, SHAPES),
    ("flipud", lambda m, x: m.flipud(x), "x", FI, SHAPES),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), "x", FI, SHAPES),
    ("moveaxis", lambda m, x: m.moveaxis(x, (0, -1), (-1, 0)), "x", FI, SHAPES),
    (
        "permute_dims",
        lambda m, x: m.permute_dims(x, tuple(range(x.ndim))[::-1]),
        "x",
        FI,
        SHAPES,
    ),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, -1), "x", FI, SHAPES),
    ("repeat", lambda m, x: m.repeat(x, 2, axis=-2), "x", FI, SHAPES),
    ("repeat", lambda m, x: m.repeat(x, [1, 0, 3, 2], axis=-1), "x", FI, SHAPES),
    ("repeat", lambda m, x: m.repeat(x, 2), "x", FI, SHAPES),
    ("split", lambda m, x: m.split(x, 2, axis=-1), "x", FI, SHAPES),
    ("split", lambda m, x: m.split(x, [1, 3], axis=-1), "x", FI, SHAPES),
    ("array_split", lambda m, x: m.array_split(x, 3, axis=-1), "x", FI, SHAPES),
    ("array_split", lambda m, x: m.array_split(x, [2, 9], axis=0), "x", FI, SHAPES),
    ("diagonal", lambda m, x: m.diagonal(x, 1, -1, -2), "x", FI, SHAPES),
    ("diagonal", lambda m, x: m.diagonal(x, -1), "x", FI, SHAPES),
    ("diag", lambda m, x: m.diag(x, 1), "x", FI, ((3, 4), (5, 2))),
    ("diag", lambda m, x: m.diag(x, -2), "x", FI, ((4,), (1,))),
    ("tril", lambda m, x: m.tril(x, -1), "x", FI, SHAPES),
    ("triu", lambda m, x: m.triu(x, 2), "x", FI, SHAPES),
    ("astype", lambda m, x: m.astype(x, np.int8), "x", FI, SHAPES),
    ("astype", lambda m, x: m.astype(x, np.float32), "x", FI, SHAPES),
    (
        "meshgrid",
        lambda m, x: m.meshgrid(x[0].ravel(), x.ravel()[-1:]),
        "x",
        FI,
        SHAPES,
    ),
    (
        "meshgrid",
        lambda m, x: m.meshgrid(
            x[0].ravel(), x.ravel()[-1:], indexing="ij", sparse=True
        ),
        "x",
        FI,
        SHAPES,
    ),
]

# One row per (row, shape, dtype): the ids name the function, shape and dtype.
CASES = [
    (i, shape, dtype)
    for i, (_, _, _, dts, shapes) in enumerate(TABLE)
    for shape in shapes
    for dtype in dts
]


def _case_id(case):
    i, shape, dtype = case
    return f"{TABLE[i][0]}{i}-{'x'.join(map(str, shape))}-{dtype.name}"


def _operands(i, shape, dtype):
    rng = np.random.default_rng(i)
    return ARGUMENTS[TABLE[i][2]](rng, shape, dtype)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_matches_numpy(case):
    i, shape, dtype = case
    call = TABLE[i][1]
    check_against_numpy(
        lambda *a: reference_call(lambda *b: call(jnp, *b), *a),
        lambda *a: call(np, *a),
        _operands(i, shape, dtype),
    )


# Each program holds ~50 functions and costs seconds to compile: two of them cover
# both shapes and both dtypes (the reference test above covers all four pairs).
GROUPS = [((3, 4), "float32"), ((2, 3, 4), "int32")]


@pytest.mark.parametrize("shape, dtype", GROUPS, ids=["3x4-float32", "2x3x4-int32"])
def test_all_rows_under_one_jit_on_xla(shape, dtype):
    """Every row of this shape and dtype compiled together into one XLA program."""
    rows = [i for i, s, d in CASES if s == shape and d.name == dtype]
    operands = [_operands(i, shape, np.dtype(dtype)) for i in rows]
    calls = [TABLE[i][1] for i in rows]
    got = olympus.jit(lambda ops: [c(jnp, *o) for c, o in zip(calls, ops)])(operands)
    for call, ops, value in zip(calls, operands, got):
        check_against_numpy(lambda *_, v=value: v, lambda *a, c=call: c(np, *a), ops)


def test_every_audited_name_has_a_row():
    """The names the audit found untested all appear in TABLE or below."""
    covered = {row[0] for row in TABLE} | {
        "ix_",
        "ndim",
        "size",
        "empty_like",
        "broadcast_shapes",
    }
    assert len(covered) == 50


# ---- names that return Python values or shapes -----------------------------------
@pytest.mark.parametrize("shape", SHAPES + ((), (0, 2)))
def test_ndim_size_empty_like(shape):
    x = np.zeros(shape, np.int32)
    assert jnp.ndim(jnp.asarray(x)) == np.ndim(x)
    assert jnp.size(jnp.asarray(x)) == np.size(x)
    assert jnp.size(jnp.asarray(x), -1 if shape else None) == np.size(
        x, -1 if shape else None
    )
    empty = jnp.empty_like(jnp.asarray(x), dtype=jnp.float32)
    assert empty.shape == shape and empty.dtype == np.float32
    assert jnp.ndim(3.0) == 0 and jnp.size([[1, 2, 3]]) == 3


@pytest.mark.parametrize(
    "shapes", [((2, 1), (3,)), ((4, 1, 3), (1, 5, 1), ()), ((0, 2), (1,))]
)
def test_broadcast_shapes(shapes):
    assert jnp.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_names_the_mismatch():
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        jnp.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize("index_dtype", [np.int32, np.bool_])
def test_ix_selects_the_cross_product(index_dtype):
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    rows = (
        np.array([3, 0, 2]) if index_dtype == np.int32 else np.array([1, 0, 1, 1], bool)
    )
    cols = (
        np.array([4, 1]) if index_dtype == np.int32 else np.array([0, 1, 0, 0, 1], bool)
    )
    got = jnp.ix_(rows, cols)
    want = np.ix_(rows, cols)
    assert [g.shape for g in got] == [w.shape for w in want]
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[got]), x[want])


# ---- semantics fixed by the audit --------------------------------------------------
def test_tril_triu_of_a_vector_raise_a_named_error():
    for fn in (jnp.tril, jnp.triu):
        with pytest.raises(
            ValueError, match=f"jnp.{fn.__name__}.*at least 2.*\\(3,\\)"
        ):
            fn(jnp.arange(3.0))


def test_repeat_total_repeat_length_cuts_or_pads_with_the_last_element():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    cut = reference_call(
        lambda a: jnp.repeat(a, [1, 2, 2], axis=1, total_repeat_length=4), x
    )
    np.testing.assert_array_equal(
        np.asarray(cut), np.repeat(x, [1, 2, 2], axis=1)[:, :4]
    )
    padded = reference_call(lambda a: jnp.repeat(a, 2, total_repeat_length=14), x)
    np.testing.assert_array_equal(
        np.asarray(padded), np.r_[np.repeat(x, 2), [5.0, 5.0]]
    )


def test_repeat_rejects_traced_or_bad_counts():
    x = jnp.arange(3.0)
    with pytest.raises(ConcretizationTypeError, match="jnp.repeat.*known when tracing"):
        olympus.jit(lambda r: jnp.repeat(x, r))(jnp.asarray([1, 2, 0]))
    with pytest.raises(
        ValueError, match="jnp.repeat: 2 repeats for an axis of length 3"
    ):
        jnp.repeat(x, [1, 2])
    with pytest.raises(ValueError, match="may not be negative"):
        jnp.repeat(x, -1)


def test_ravel_rejects_an_unknown_order():
    with pytest.raises(ValueError, match="jnp.ravel: order must be"):
        jnp.ravel(jnp.ones((2, 2)), order="K")


# ---- found by sweeping every ufunc over dtypes (complex, bf16) ------------------
# Points off the branch cuts: XLA's complex arithmetic does not keep the sign of
# a zero imaginary part, so on a cut it may pick the other side (see below).
COMPLEX_POINTS = np.array(
    [
        0.3 + 0.2j,
        -0.7 + 0.5j,
        1.5 - 2j,
        -2 - 0.1j,
        0.01 + 0.02j,
        -0.5 - 0.5j,
        4 + 0.5j,
        -3 - 2j,
    ],
    np.complex64,
)
INVERSE_TRIG = [
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "sinc",
]


def test_complex_inverse_trig_matches_numpy_on_xla():
    got = olympus.jit(lambda z: [getattr(jnp, n)(z) for n in INVERSE_TRIG])(
        COMPLEX_POINTS
    )
    for name, value in zip(INVERSE_TRIG, got):
        check_against_numpy(
            lambda _, v=value: v,
            getattr(np, name),
            (COMPLEX_POINTS,),
            rtol=2e-5,
            atol=2e-6,
        )


def test_complex_inverse_trig_takes_numpys_side_of_each_branch_cut():
    """On a cut the sign of a zero part decides the side (C99's convention); the
    reference interpreter keeps signed zeros, so olympus's formulas must too."""
    on_cuts = np.array(
        [
            complex(-0.0, 3),
            complex(0.0, 3),
            complex(0.0, -3),
            complex(-0.0, -3),
            complex(3, 0.0),
            complex(3, -0.0),
            complex(-3, 0.0),
            complex(-3, -0.0),
        ],
        np.complex64,
    )
    for name in INVERSE_TRIG[:6]:
        check_against_numpy(
            lambda z, n=name: reference_call(getattr(jnp, n), z),
            getattr(np, name),
            (on_cuts,),
            rtol=2e-5,
            atol=2e-6,
        )


def test_reference_complex_keeps_signed_zero_and_infinite_parts():
    real = np.array([1.0, 0.0, -2.0], np.float32)
    imag = np.array([-0.0, np.inf, -np.inf], np.float32)
    out = reference_call(olympus.lax.complex, real, imag)
    np.testing.assert_array_equal(out.real, real)
    np.testing.assert_array_equal(np.signbit(out.imag), np.signbit(imag))
    np.testing.assert_array_equal(out.imag, imag)


@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_round_of_complex_rounds_both_parts(decimals):
    z = np.array([1.26 + 2.5j, -0.55 - 15.5j, 3.5 + 0.45j], np.complex64)
    check_against_numpy(
        olympus.jit(lambda a: jnp.round(a, decimals)),
        lambda a: np.round(a, decimals),
        (z,),
    )
    check_against_numpy(
        lambda a: reference_call(lambda b: jnp.around(b, decimals), a),
        lambda a: np.around(a, decimals),
        (z,),
    )


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "fix", "hypot"])
def test_real_line_functions_reject_complex(name):
    z = jnp.asarray(COMPLEX_POINTS)
    args = (z, z) if name == "hypot" else (z,)
    with pytest.raises(
        TypeError,
        match=f"jnp.{'trunc' if name == 'fix' else name} is not "
        r"defined for complex input \(c64\[8\]\)",
    ):
        getattr(jnp, name)(*args)


def test_nan_to_num_of_bfloat16_and_complex():
    """bfloat16's largest finite value, not float32's (which would round to inf)."""
    bf16 = np.array([np.nan, np.inf, -np.inf, 1.5], jnp.bfloat16)
    got = olympus.jit(jnp.nan_to_num)(bf16)
    largest = float(jnp.finfo(jnp.bfloat16).max)
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(
        np.asarray(got, np.float32), [0.0, largest, -largest, 1.5]
    )
    z = np.array([complex(np.nan, np.inf), complex(-np.inf, 2.0), 1 - 1j], np.complex64)
    check_against_numpy(
        olympus.jit(lambda a: jnp.nan_to_num(a, nan=3.0)),
        lambda a: np.nan_to_num(a, nan=3.0),
        (z,),
    )


# ---- NaN-ignoring reductions: all-NaN and empty slices, and the added names -------
NAN_SLICES = np.array(
    [
        [np.nan, np.nan, np.nan, np.nan],
        [1.5, np.nan, -3.0, 0.25],
        [2.0, 7.0, np.nan, np.nan],
    ],
    np.float32,
)


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")
def test_nanmax_nanmin_of_an_all_nan_slice_is_nan(name):
    for kwargs in ({"axis": 1}, {"axis": 0, "keepdims": True}, {}):
        reduce_olympus = lambda b, k=kwargs: getattr(jnp, name)(b, **k)
        check_against_numpy(
            lambda a, f=reduce_olympus: reference_call(f, a),
            lambda a, k=kwargs: getattr(np, name)(a, **k),
            (NAN_SLICES,),
        )
    # with initial= the slice has a value (NumPy: the initial one)
    got = reference_call(
        lambda a: getattr(jnp, name)(a, axis=1, initial=-9.0), NAN_SLICES
    )
    assert float(got[0]) == -9.0


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nanmax_nanmin_of_an_empty_axis_raise(name):
    with pytest.raises(
        ValueError, match=f"jnp.{name} of an empty axis has no identity"
    ):
        getattr(jnp, name)(jnp.zeros((0, 3)), axis=0)
    np.testing.assert_array_equal(
        np.asarray(getattr(jnp, name)(jnp.zeros((0, 3)), axis=0, initial=4.0)),
        [4.0] * 3,
    )


NAN_STATS = [  # (name, kwargs): each also checked with the q argument where it takes one
    ("nanvar", {}),
    ("nanvar", {"axis": 1, "ddof": 1}),
    ("nanvar", {"axis": 0, "keepdims": True}),
    ("nanstd", {"axis": 1}),
    ("nanstd", {"axis": (0, 1), "ddof": 2}),
    ("nanmedian", {}),
    ("nanmedian", {"axis": 1}),
    ("nanmedian", {"axis": 0, "keepdims": True}),
    ("nanquantile", {"q": 0.3, "axis": 1}),
    ("nanquantile", {"q": [0.0, 0.5, 1.0], "axis": 0}),
    ("nanquantile", {"q": np.float32(0.75)}),
    ("nanpercentile", {"q": [10.0, 90.0], "axis": 1, "keepdims": True}),
]


@pytest.mark.parametrize(
    "name, kwargs", NAN_STATS, ids=[f"{n}-{k}" for n, k in NAN_STATS]
)
def test_nan_statistics_match_numpy(name, kwargs):
    kwargs = dict(kwargs)
    q = kwargs.pop("q", None)
    qargs = () if q is None else (np.asarray(q, np.float32),)
    jnp_fn = lambda a, *qq: getattr(jnp, name)(a, *qq, **kwargs)
    with warnings.catch_warnings():  # NumPy warns about the all-NaN slice
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(NAN_SLICES, *qargs, **kwargs)
    check_against_numpy(
        lambda *a: reference_call(jnp_fn, *a), lambda *_: want, (NAN_SLICES,) + qargs
    )


def test_nan_statistics_on_xla_ints_and_grads():
    x = np.arange(12, dtype=np.int32).reshape(3, 4) % 5
    for name in ("nanvar", "nanstd", "nanmedian"):
        check_against_numpy(
            olympus.jit(lambda a, n=name: getattr(jnp, n)(a, axis=0)),
            lambda a, n=name: getattr(np, n)(a, axis=0),
            (x,),
        )
    got = olympus.jit(
        lambda a: [
            jnp.nanquantile(a, jnp.asarray([0.2, 0.9]), axis=1),
            jnp.nanvar(a, axis=1),
        ]
    )(NAN_SLICES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = [
            np.nanquantile(NAN_SLICES, [0.2, 0.9], axis=1),
            np.nanvar(NAN_SLICES, axis=1),
        ]
    for g, w in zip(got, want):
        np.testing.assert_allclose(
            np.asarray(g), w.astype(np.float32), rtol=2e-6, atol=1e-6
        )
    smooth = np.array([[0.3, -1.2, 2.5, 0.9], [1.1, 0.2, -0.7, 3.3]], np.float32)
    check_grads(lambda a: jnp.nanvar(a, axis=1), (smooth,), order=1)
    check_grads(lambda a: jnp.nanquantile(a, 0.4, axis=1), (smooth,), order=1)


# ---- complex sort: by real part, then imaginary part (NumPy's order) --------------
COMPLEX_TIES = np.array(
    [[1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j, 0.5 + 9j], [2j, -2j, 0j, 1 + 0j, -1 + 0j]],
    np.complex64,
)


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_of_complex_match_numpy(axis):
    check_against_numpy(
        lambda a: reference_call(lambda b: jnp.sort(b, axis=axis), a),
        lambda a: np.sort(a, axis=axis),
        (COMPLEX_TIES,),
    )
    check_against_numpy(
        olympus.jit(lambda a: jnp.argsort(a, axis=axis)),
        lambda a: np.argsort(a, axis=axis, kind="stable"),
        (COMPLEX_TIES,),
    )


def test_descending_complex_sort_keeps_ties_in_order():
    got = reference_call(lambda a: jnp.argsort(a, descending=True), COMPLEX_TIES)
    np.testing.assert_array_equal(np.asarray(got), [[0, 3, 1, 4, 2], [3, 0, 2, 1, 4]])
    check_against_numpy(
        olympus.jit(lambda a: jnp.sort(a, descending=True)),
        lambda a: np.sort(a)[:, ::-1],
        (COMPLEX_TIES,),
    )


@pytest.mark.parametrize(
    "name",
    ["remainder", "mod", "fmod", "power", "left_shift", "right_shift", "floor_divide"],
)
def test_two_booleans_compute_as_ints_like_jax(name):
    """NumPy refuses these on booleans; JAX computes them in the default int."""
    x, y = np.array([True, False, True, False]), np.array([True, True, False, False])
    ints = x.astype(np.int32), y.astype(np.int32)
    for fn in (getattr(jnp, name), olympus.jit(getattr(jnp, name))):
        got = fn(x, y)
        assert got.dtype == np.int32
        with np.errstate(divide="ignore"):
            want = getattr(np, name)(*ints)
        keep = ints[1] != 0  # division by zero is unspecified for ints
        np.testing.assert_array_equal(np.asarray(got)[keep], want[keep])
    assert jnp.power(jnp.asarray(x), 2).dtype == np.int32


@pytest.mark.parametrize(
    "name", ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum"]
)
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_complex_order_is_real_then_imaginary(name):
    a = np.array([1 + 2j, 1 + 1j, 2, complex(np.nan, 0), 3 + 1j, 1 + 1j], np.complex64)
    b = np.array([1 + 1j, 2, 1 + 5j, 1 + 1j, complex(3, np.nan), 1 + 1j], np.complex64)
    want = getattr(np, name)(a, b)
    for fn in (getattr(jnp, name), olympus.jit(getattr(jnp, name))):
        np.testing.assert_array_equal(np.asarray(fn(a, b)), want)


@pytest.mark.parametrize("name, base", [("logaddexp", np.e), ("logaddexp2", 2.0)])
def test_complex_logaddexp_matches_the_direct_formula(name, base):
    a = np.array([1 + 1j, 2 - 1j, -3 + 0.5j, 100 + 2j], np.complex64)
    b = np.array([1 + 1j, 0.5 + 2j, 1 - 1j, 99 - 1j], np.complex64)
    wide_a, wide_b = a.astype(np.complex128), b.astype(np.complex128)
    want = np.log(base**wide_a + base**wide_b) / np.log(base)
    for fn in (getattr(jnp, name), olympus.jit(getattr(jnp, name))):
        got = fn(a, b)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)
