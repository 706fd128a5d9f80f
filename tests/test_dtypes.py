"""Dtype promotion against JAX's documented table, weak types, and x64 narrowing.

The table below is the binary promotion table of JAX's "Type promotion
semantics" page (computed there with 64-bit types enabled); `i*`, `f*`, `c*`
are weakly typed Python int, float and complex.
"""

import ml_dtypes
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.ir import dtypes

_TABLE = """
     b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
b1   b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1   u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2   u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4   u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8   u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1   i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2   i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4   i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8   i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf   bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2   f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4   f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8   f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8   c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16  c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*   i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*   f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*   c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""

_CODES = {
    "b1": np.bool_,
    "u1": np.uint8,
    "u2": np.uint16,
    "u4": np.uint32,
    "u8": np.uint64,
    "i1": np.int8,
    "i2": np.int16,
    "i4": np.int32,
    "i8": np.int64,
    "bf": dtypes.bfloat16,
    "f2": np.float16,
    "f4": np.float32,
    "f8": np.float64,
    "c8": np.complex64,
    "c16": np.complex128,
    "i*": np.int64,
    "f*": np.float64,
    "c*": np.complex128,
}


def _entry(code):
    """(dtype, weak) as written in the table, with 64-bit types enabled."""
    return np.dtype(_CODES[code]), code.endswith("*")


def _table_cells():
    header, *rows = [line.split() for line in _TABLE.strip().splitlines()]
    for row in rows:
        for col, result in zip(header, row[1:]):
            yield row[0], col, result


def test_promotion_table_matches_jax_with_x64(x64):
    mismatches = []
    for a, b, want in _table_cells():
        got = dtypes.promote([_entry(a), _entry(b)])
        if got != _entry(want):
            mismatches.append(f"{a} + {b} -> {got}, want {want}")
    assert not mismatches, "\n".join(mismatches)


_X32_CODE = {"u8": "u4", "i8": "i4", "f8": "f4", "c16": "c8"}
_TABLE_LOOKUP = {(a, b): want for a, b, want in _table_cells()}


def test_promotion_table_without_x64_narrows_64_bit_results():
    """Without x64, arrays are never 64-bit: inputs narrow first, then joins do."""
    for a, b, _ in _table_cells():
        a32, b32 = _X32_CODE.get(a, a), _X32_CODE.get(b, b)
        dtype, weak = _entry(_TABLE_LOOKUP[a32, b32])
        want = (dtypes.canonicalize_dtype(dtype), weak)
        assert dtypes.promote([_entry(a), _entry(b)]) == want, (a, b)


def test_promotion_is_symmetric_and_associative():
    codes = list(_CODES)
    for a in codes:
        for b in codes:
            ab = dtypes.promote([_entry(a), _entry(b)])
            assert ab == dtypes.promote([_entry(b), _entry(a)])
    triple = dtypes.promote([_entry("u1"), _entry("i1"), _entry("f*")])
    assert triple == (np.dtype(np.float32), True)
    assert dtypes.promote([_entry("u1"), _entry("i*"), _entry("bf")]) == (
        dtypes.bfloat16,
        False,
    )


def test_promote_types_and_result_type():
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert jnp.promote_types("float16", jnp.bfloat16) == np.float32
    assert jnp.promote_types(np.int32, np.float32) == np.float32
    assert jnp.result_type(jnp.int32, 2.0) == np.float32
    assert jnp.result_type(jnp.float16, 2.0) == np.float16
    assert jnp.result_type(jnp.uint8, 3) == np.uint8
    assert jnp.result_type(True, 1) == np.int32
    assert jnp.result_type(1, 2.0) == np.float32
    assert jnp.result_type(1, 2j) == np.complex64
    assert jnp.result_type(jnp.ones(2, jnp.bfloat16), 1.0) == dtypes.bfloat16
    assert jnp.result_type(np.float64) == np.float32


def test_float8_promotes_only_with_weak_scalars():
    f8 = dtypes.float8_e4m3fn
    assert dtypes.promote([(f8, False), (np.dtype(np.float32), True)]) == (f8, False)
    with pytest.raises(TypeError, match="no common dtype"):
        dtypes.promote([(f8, False), (np.dtype(np.float32), False)])


# ---- dtypes of actual results ----------------------------------------------------
def _eager_and_jit(fn, *args):
    yield fn(*args)
    yield olympus.jit(fn)(*args)


@pytest.mark.parametrize(
    "make, scalar, want, want_weak",
    [
        (lambda: jnp.arange(3), 2.0, np.float32, True),  # i32 + f* = f* in JAX's table
        (lambda: jnp.ones(3, jnp.bfloat16), 2.0, dtypes.bfloat16, False),
        (lambda: jnp.ones(3, jnp.float16), 2, np.float16, False),
        (lambda: jnp.ones(3, jnp.int8), 2, np.int8, False),
        (lambda: jnp.ones(3, jnp.uint8), 2, np.uint8, False),
        (lambda: jnp.array([True, False]), 1, np.int32, True),
        (lambda: jnp.array([True, False]), 1.0, np.float32, True),
        (lambda: jnp.asarray(2), 2.0, np.float32, True),
        (lambda: jnp.asarray(2.0), 1, np.float32, True),
        (lambda: jnp.ones(2), 1j, np.complex64, False),
    ],
    ids=[
        "i32*f",
        "bf16*f",
        "f16*i",
        "i8*i",
        "u8*i",
        "bool*i",
        "bool*f",
        "weak-i*f",
        "weak-f*i",
        "f32*c",
    ],
)
def test_python_scalars_are_weak(make, scalar, want, want_weak):
    for out in _eager_and_jit(lambda x: x * scalar, make()):
        assert out.dtype == want and out.weak_type == want_weak
    for out in _eager_and_jit(lambda x: scalar + x, make()):
        assert out.dtype == want and out.weak_type == want_weak


@pytest.mark.parametrize(
    "a, b, want",
    [
        (np.uint8, np.int8, np.int16),
        (np.float16, dtypes.bfloat16, np.float32),
        (np.uint8, np.uint16, np.uint16),
        (np.int32, np.float16, np.float16),
        (np.uint32, np.int32, np.int32),
        (np.int8, np.float32, np.float32),
        (np.bool_, np.uint8, np.uint8),
        (np.float32, np.complex64, np.complex64),
        (dtypes.bfloat16, np.int32, dtypes.bfloat16),
    ],
)
def test_array_array_promotion(a, b, want):
    """Strong dtypes meet as in the table; 64-bit joins narrow to 32-bit."""
    x, y = jnp.ones(2, a), jnp.ones(2, b)
    for out in _eager_and_jit(lambda x, y: x + y, x, y):
        assert out.dtype == want and not out.weak_type
        np.testing.assert_array_equal(np.asarray(out).astype(np.complex64), [2, 2])


def test_mixed_weak_scalars_under_jit_stay_weak():
    out = olympus.jit(lambda a, b: a * b)(2, 3.0)
    assert out.dtype == np.float32 and out.weak_type and float(out) == 6.0
    out = olympus.jit(lambda a: a + 1)(jnp.ones(2, jnp.int16))
    assert out.dtype == np.int16


def test_numpy_arrays_are_strong():
    x = jnp.ones(2, jnp.int16)
    assert (x + np.int16(1)).dtype == np.int16
    assert (x + np.array(1, np.int32)).dtype == np.int32
    assert (jnp.ones(2, jnp.float16) + np.float32(1)).dtype == np.float32


def test_64_bit_inputs_narrow_to_32_bit_without_x64():
    assert not dtypes.x64_enabled()
    for src, want in (
        (np.int64, np.int32),
        (np.uint64, np.uint32),
        (np.float64, np.float32),
        (np.complex128, np.complex64),
    ):
        a = jnp.asarray(np.ones(2, src))
        assert a.dtype == want
        out = olympus.jit(lambda x: x * 2)(np.ones(2, src))
        assert out.dtype == want
        assert jnp.zeros(2, dtype=src).dtype == want
        assert jnp.ones(2).astype(src).dtype == want
    assert jnp.arange(3).dtype == np.int32 and jnp.arange(3.0).dtype == np.float32
    assert jnp.asarray(1.5).dtype == np.float32 and jnp.asarray(3).dtype == np.int32


def test_python_int_out_of_int32_range_is_an_error():
    with pytest.raises(OverflowError, match="int32"):
        jnp.ones(2, jnp.int32) + 2**40


def test_canonicalize_with_x64(x64):
    assert dtypes.canonicalize_dtype(np.float64) == np.float64
    assert dtypes.default_float_dtype() == np.float64
    assert dtypes.default_int_dtype() == np.int64
    assert dtypes.python_scalar_dtype(1.0) == np.float64


def test_short_names():
    assert [
        dtypes.short_name(np.dtype(t))
        for t in (
            np.float32,
            np.int8,
            np.uint32,
            np.bool_,
            dtypes.bfloat16,
            np.complex64,
        )
    ] == ["f32", "i8", "u32", "bool", "bf16", "c64"]
    with pytest.raises(TypeError, match="does not support"):
        dtypes.canonicalize_dtype(np.dtype("U3"))


def test_inexact_ops_on_integers_use_default_float():
    for out in _eager_and_jit(lambda x: x / 2, jnp.arange(4, dtype=jnp.int8)):
        assert out.dtype == np.float32
    for out in _eager_and_jit(jnp.sqrt, jnp.ones(2, jnp.float16)):
        assert out.dtype == np.float16
    assert jnp.mean(jnp.arange(4)).dtype == np.float32


def test_x64_mode_end_to_end(x64):
    x = jnp.arange(3.0)
    assert x.dtype == np.float64 and jnp.arange(3).dtype == np.int64
    assert (x * 2).dtype == np.float64 and olympus.jit(lambda a: a.sum())(
        x
    ).dtype == np.float64
    assert jnp.asarray(1.0).dtype == np.float64 and jnp.asarray(1.0).weak_type
    assert (jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.int64)).dtype == np.float32
    assert (jnp.ones(2, jnp.float32) * 2.0).dtype == np.float32
    assert jnp.mean(jnp.arange(4)).dtype == np.float64
    assert jnp.array(np.arange(2, dtype=np.uint64)).dtype == np.uint64
    np.testing.assert_array_equal(np.asarray(x + 0.5), [0.5, 1.5, 2.5])


def test_finfo_and_issubdtype_know_bfloat16():
    assert float(jnp.finfo(jnp.bfloat16).eps) == 2.0**-7
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating) and jnp.issubdtype(
        jnp.bfloat16, jnp.inexact
    )
    assert not jnp.issubdtype(jnp.bfloat16, jnp.integer)
    assert jnp.issubdtype(jnp.ones(2).dtype, jnp.floating) and jnp.issubdtype(
        jnp.int32, jnp.integer
    )


# ---- olympus.dtypes: the public module and the table as data ----------------------
_IR_NAME = {
    "b1": "bool",
    "u1": "u8",
    "u2": "u16",
    "u4": "u32",
    "u8": "u64",
    "i1": "i8",
    "i2": "i16",
    "i4": "i32",
    "i8": "i64",
    "bf": "bf16",
    "f2": "f16",
    "f4": "f32",
    "f8": "f64",
    "c8": "c64",
    "c16": "c128",
    "i*": "i*",
    "f*": "f*",
    "c*": "c*",
}


def test_public_promotion_table_is_jax_documented_table():
    table = olympus.dtypes.promotion_table()
    for a, b, want in _table_cells():
        assert table[_IR_NAME[a], _IR_NAME[b]] == _IR_NAME[want], (a, b)


def test_public_promotion_table_float8_rows_have_no_path_to_other_floats():
    table = olympus.dtypes.promotion_table()
    f8_names = [dtypes.short_name(d) for d in dtypes.float8_dtypes]
    for f8 in f8_names:
        for other in ("bool", "u8", "i64", "i*", "f*", f8):
            assert table[f8, other] == table[other, f8] == f8
        for other in ("bf16", "f16", "f32", "f64", "c64", "c*", *set(f8_names) - {f8}):
            assert table[f8, other] is None and table[other, f8] is None, (f8, other)
    with pytest.raises(ValueError, match="8-bit floats never promote implicitly"):
        olympus.dtypes.promote_types(dtypes.float8_e5m2, dtypes.float8_e4m3fn)


def test_formatted_promotion_table_reads_back():
    names = ["bool", "u8", "i8", "bf16", "f16", "f8_e4m3fn", "i*", "f*"]
    header, *rows = [
        line.split()
        for line in olympus.dtypes.format_promotion_table(names).splitlines()
    ]
    assert header == names and [r[0] for r in rows] == names
    table = olympus.dtypes.promotion_table()
    for row in rows:
        assert row[1:] == [table[row[0], b] or "-" for b in names]


_WEAK_SCALAR = {"i*": 1, "f*": 1.0, "c*": 1j}  # a Python scalar of each weak kind


def _jax_operand(name: str):
    if name in _WEAK_SCALAR:
        return _WEAK_SCALAR[name]
    return next(
        d
        for d in [*map(np.dtype, _CODES.values()), *dtypes.float8_dtypes]
        if dtypes.short_name(d) == name
    )


def _as_dtype_and_weak(name: str):
    weak = {"i*": np.int64, "f*": np.float64, "c*": np.complex128}
    return (np.dtype(weak[name]), True) if name in weak else (_jax_operand(name), False)


def test_promotion_table_matches_jax_oracle_weak_types_and_float8_included():
    jax = pytest.importorskip("jax")
    jax_dtypes = pytest.importorskip("jax.dtypes")
    table = olympus.dtypes.promotion_table()
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        for (a, b), got in table.items():
            try:
                want = jax_dtypes.result_type(
                    _jax_operand(a), _jax_operand(b), return_weak_type_flag=True
                )
            except jax_dtypes.TypePromotionError:
                want = None
            assert (got and _as_dtype_and_weak(got)) == want, (a, b)
    finally:
        jax.config.update("jax_enable_x64", previous)


def test_public_dtypes_module_exports():
    d = olympus.dtypes
    assert d.result_type(jnp.int8, 2.0) == np.float32
    assert d.canonicalize_dtype(np.int64) == np.int32
    assert (
        d.issubdtype(d.float8_e5m2, jnp.floating)
        and d.finfo(d.float8_e4m3fn).max == 448
    )
    assert d.iinfo(jnp.uint16).max == 65535
    assert d.is_weakly_typed(2.0) and d.is_weakly_typed(jnp.asarray(3))
    assert not d.is_weakly_typed(True) and not d.is_weakly_typed(jnp.ones(2))
    assert not d.is_weakly_typed(np.float32(1))
    seen = []
    olympus.jit(lambda x: seen.append(d.is_weakly_typed(x)) or x)(2.0)
    assert seen == [True]
    for name in (
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e4m3b11fnuz",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "float8_e3m4",
        "float8_e4m3",
        "float8_e8m0fnu",
    ):
        assert (
            np.dtype(getattr(jnp, name))
            == getattr(d, name)
            == np.dtype(getattr(ml_dtypes, name))
        )


# ---- every dtype computes: eager and under jit ------------------------------------
_X32_DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.uint8,
    np.uint16,
    np.uint32,
    np.float16,
    dtypes.bfloat16,
    np.float32,
    np.complex64,
]
_X64_DTYPES = [np.int64, np.uint64, np.float64, np.complex128]


def _small_values(dtype, seed):
    """Values whose products and sums stay in range (ints do not wrap)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, 6).astype(bool)
    values = rng.integers(0 if np.dtype(dtype).kind in "ub" else -5, 6, 6)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.integers(-5, 6, 6)
    return values.astype(dtype)


def _simple_ops(x, y):
    out = {"mul_add": x * y + x, "sum": jnp.sum(x)}
    if not jnp.issubdtype(x.dtype, jnp.complexfloating):
        out["max"] = jnp.maximum(x, y)
    return out


def _numpy_ops(x, y):
    # NumPy sums bools and narrow ints in its default int, as jnp.sum does (then
    # narrowed without x64); ml_dtypes' bfloat16 sums round at every step.
    wide = np.float32 if x.dtype == dtypes.bfloat16 else x.dtype
    sum_dtype = dtypes.canonicalize_dtype(np.zeros(1, x.dtype).sum().dtype)
    out = {
        "mul_add": x * y + x,
        "sum": np.asarray(x.astype(wide).sum()).astype(sum_dtype),
    }
    if x.dtype.kind != "c":
        out["max"] = np.maximum(x, y)
    return out


def _check_simple_ops(dtype_list):
    inputs = {
        np.dtype(d).name: (_small_values(d, 0), _small_values(d, 1)) for d in dtype_list
    }
    jitted = olympus.jit(lambda ins: {k: _simple_ops(*v) for k, v in ins.items()})(
        inputs
    )
    for name, (x, y) in inputs.items():
        want = _numpy_ops(x, y)
        # eagerly one expression only: each eager op compiles on its own
        eager = {"mul_add": jnp.asarray(x) * jnp.asarray(y) + x}
        for how, got in (("eager", eager), ("jit", jitted[name])):
            assert got.keys() <= want.keys() and "mul_add" in got
            for op in got:
                assert got[op].dtype == want[op].dtype, (name, op, how)
                np.testing.assert_array_equal(
                    np.asarray(got[op]), want[op], err_msg=f"{name} {op} {how}"
                )


def test_every_32_bit_dtype_computes_eagerly_and_under_jit():
    _check_simple_ops(_X32_DTYPES)


def test_every_64_bit_dtype_computes_with_x64(x64):
    _check_simple_ops(_X64_DTYPES)
