"""Elementwise functions of olympus.numpy, with NumPy's names and JAX's promotion
(more float functions, logaddexp and hypot among them, are in float_math.py)."""

from __future__ import annotations

import ml_dtypes as _ml_dtypes
import numpy as np

from olympus import lax
from olympus.backends.xla.array import Array
from olympus.backends.xla.dispatch import binary_op, unary_op
from olympus.ir import dtypes
from olympus.numpy.compiled import compiled, eager_arrays
from olympus.numpy.ufunc_docs import DOCS as UFUNC_DOCS
from olympus.lax.op_docs import with_sections
from olympus.numpy.ufunc_docs import ARGS_X1_X2, BOOL, PROMOTED, PROMOTED_INT
from olympus.numpy.ufunc_docs import RAISES_X1_X2, SAME
from olympus.numpy.ufunc_docs import add_binary_sections
from olympus.numpy.ufunc_docs import add_unary_sections, returns
from olympus.tracer.core import user_source_info
from olympus.tracer.errors import IncompatibleShapesError, OlympusTypeError
from olympus.numpy.core import (
    refuse_out,
    INEXACT_DTYPES,
    as_arrays,
    check_arraylike,
    aval_of,
    broadcast_operands,
    broadcast_shapes,
    broadcast_to,
    concrete_nonzero,
    float_layout,
    prepare,
    require_real,
    scalar_like,
    to_operand,
)

__all__ = [
    "abs",
    "absolute",
    "add",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "divide",
    "divmod",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_divide",
    "fmod",
    "greater",
    "greater_equal",
    "imag",
    "invert",
    "isfinite",
    "isinf",
    "isnan",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "power",
    "real",
    "reciprocal",
    "remainder",
    "right_shift",
    "round",
    "select",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "where",
]


def _binary(lax_fn, name: str, inexact: bool = False, bool_fn=None, complex_fn=None):
    """A NumPy binary ufunc; `bool_fn` is its logical form for two booleans,
    `complex_fn` its form for complex numbers, ordered as NumPy and JAX order
    them (real part, then imaginary part)."""

    def body(x1, x2):
        check_arraylike(name, x1, x2)
        try:
            x1, x2 = prepare(x1, x2, inexact=inexact)
        except IncompatibleShapesError:
            raise _shapes_error(name, x1, x2) from None
        dtype = aval_of(x1).dtype
        if bool_fn is not None and dtype == dtypes.bool_:
            return bool_fn(x1, x2)
        if complex_fn is not None and dtypes.is_complex(dtype):
            return complex_fn(x1, x2)
        return lax_fn(x1, x2)

    body.__name__ = name
    primitive = getattr(lax_fn, "primitive", None)  # set where lax_fn only binds

    def fn(x1, x2):
        if _eager_broadcast(x1, x2):  # one dispatch, not a broadcast and the op
            return compiled(body)(x1, x2)
        return body(x1, x2)

    def binds_only(aval) -> bool:
        """Whether `body` only binds `primitive` for two operands of `aval`
        (strong: weak operands may promote)."""
        dtype = aval.dtype
        return not (
            aval.weak_type
            or (inexact and dtype not in INEXACT_DTYPES)
            or (bool_fn is not None and dtype == dtypes.bool_)
            or (complex_fn is not None and dtypes.is_complex(dtype))
        )

    if primitive is not None:  # two Arrays of one strong aval: no promotion
        fn = binary_op(primitive, fn, binds_only)
    fn.__name__ = name
    fn.__doc__ = UFUNC_DOCS.get(name) or (
        f"Elementwise `{name}`, promoting dtypes and broadcasting like NumPy."
    )
    return fn


def _shapes_error(name: str, x1, x2) -> IncompatibleShapesError:
    """JAX's TypeError for operands that do not broadcast, with the user's line."""
    shapes = ", ".join(str(aval_of(x).shape) for x in (x1, x2))
    return IncompatibleShapesError(
        f"{name} got incompatible shapes for broadcasting: {shapes}; each "
        f"dimension must match or be 1 (reshape one operand, e.g. x[:, None])"
        f"{_at(user_source_info())}"
    )


def _at(source_info) -> str:
    return f"\n  at {source_info}" if source_info is not None else ""


def _eager_broadcast(x1, x2) -> bool:
    """Whether an eager binary op on two Arrays must broadcast one of them:
    then it runs jitted, as one executable (as JAX's jnp functions do),
    rather than as an eager broadcast_in_dim and the op. Rank-0 operands stay
    scalars (nothing to broadcast); with olympus_debug_nans on, ops stay eager
    so a NaN is reported per primitive."""
    if not eager_arrays(x1, x2):
        return False
    s1, s2 = x1.aval.shape, x2.aval.shape
    return s1 != s2 and s1 != () and s2 != ()


def _unary(lax_fn, name: str, inexact: bool = False):
    primitive = getattr(lax_fn, "primitive", None)  # set where lax_fn only binds

    def fn(x):
        # An Array that needs no conversion skips `prepare`.
        if type(x) is not Array or (inexact and x.aval.dtype not in INEXACT_DTYPES):
            check_arraylike(name, x)
            (x,) = prepare(x, inexact=inexact)
        return lax_fn(x)

    def binds_only(aval) -> bool:
        return not (inexact and aval.dtype not in INEXACT_DTYPES)

    if primitive is not None:  # a cached executable runs directly
        fn = unary_op(primitive, fn, binds_only)
    fn.__name__ = name
    fn.__doc__ = UFUNC_DOCS.get(name) or f"Elementwise `{name}`."
    return fn


def _lexicographic(real_cmp, imag_cmp):
    """A comparison of complex numbers by real part, then imaginary part."""

    def compare(x1, x2):
        r1, r2 = lax.real(x1), lax.real(x2)
        later = imag_cmp(lax.imag(x1), lax.imag(x2))
        return lax.bitwise_or(real_cmp(r1, r2), lax.bitwise_and(lax.eq(r1, r2), later))

    return compare


_complex_lt = _lexicographic(lax.lt, lax.lt)
_complex_le = _lexicographic(lax.lt, lax.le)
_complex_gt = _lexicographic(lax.gt, lax.gt)
_complex_ge = _lexicographic(lax.gt, lax.ge)


def _complex_pick(first_wins):
    """maximum/minimum of complex numbers; a NaN operand wins, as in NumPy."""

    def pick(x1, x2):
        return lax.select(lax.bitwise_or(first_wins(x1, x2), lax.ne(x1, x1)), x1, x2)

    return pick


# On booleans NumPy adds as `or` and multiplies as `and`; max and min follow.
add = _binary(lax.add, "add", bool_fn=lax.bitwise_or)
subtract = _binary(lax.sub, "subtract")
multiply = _binary(lax.mul, "multiply", bool_fn=lax.bitwise_and)
maximum = _binary(
    lax.max, "maximum", bool_fn=lax.bitwise_or, complex_fn=_complex_pick(_complex_ge)
)
minimum = _binary(
    lax.min, "minimum", bool_fn=lax.bitwise_and, complex_fn=_complex_pick(_complex_le)
)
true_divide = divide = _binary(lax.div, "divide", inexact=True)
arctan2 = _binary(lax.atan2, "arctan2", inexact=True)
equal = _binary(lax.eq, "equal")
not_equal = _binary(lax.ne, "not_equal")
less = _binary(lax.lt, "less", complex_fn=_complex_lt)
less_equal = _binary(lax.le, "less_equal", complex_fn=_complex_le)
greater = _binary(lax.gt, "greater", complex_fn=_complex_gt)
greater_equal = _binary(lax.ge, "greater_equal", complex_fn=_complex_ge)
bitwise_and = _binary(lax.bitwise_and, "bitwise_and")
bitwise_or = _binary(lax.bitwise_or, "bitwise_or")
bitwise_xor = _binary(lax.bitwise_xor, "bitwise_xor")


def _inexact_unaries(names: str, lax_names: str | None = None) -> tuple:
    """The float ufuncs `names` (space-separated), each the lax function of
    the same name (or the one `lax_names` gives) on inexact operands."""
    pairs = zip(names.split(), (lax_names or names).split())
    return tuple(_unary(getattr(lax, op), name, inexact=True) for name, op in pairs)


exp, log, expm1, log1p, sqrt = _inexact_unaries("exp log expm1 log1p sqrt")
sin, cos, tan, tanh, sinh, cosh = _inexact_unaries("sin cos tan tanh sinh cosh")
arctan, arcsin, arccos = _inexact_unaries("arctan arcsin arccos", "atan asin acos")
arcsinh, arccosh, arctanh = _inexact_unaries(
    "arcsinh arccosh arctanh", "asinh acosh atanh"
)
negative = _unary(lax.neg, "negative")
bitwise_not = invert = _unary(lax.bitwise_not, "invert")


def sign(x):
    """Elementwise sign: -1, 0 or 1 (NaN for NaN).

    For complex x, x / |x| (0 at 0), as NumPy 2's.

    Example:
      >>> jnp.sign(jnp.array([-2.0, 0.0, 3.0]))
      Array([-1.,  0.,  1.], dtype=float32)
    """
    (x,) = prepare(x)
    if aval_of(x).dtype == dtypes.bool_:
        raise OlympusTypeError(
            "jnp.sign does not accept bool input (as in JAX: it takes integer, "
            "floating and complex dtypes); cast first, e.g. jnp.sign(x.astype(int))"
        )
    return lax.sign(x)


def positive(x):
    """Elementwise +x: a copy of x's values.

    Example:
      >>> jnp.positive(jnp.array([-1, 2]))
      Array([-1,  2], dtype=int32)
    """
    return to_operand(x)


def absolute(x):
    """Elementwise absolute value |x|.

    For complex x, the modulus (a real array); unsigned and boolean inputs are returned unchanged.

    Example:
      >>> jnp.absolute(jnp.array([-1.5, 2.0]))
      Array([1.5, 2. ], dtype=float32)
    """
    (x,) = prepare(x)
    if dtypes.is_unsigned_int(aval_of(x).dtype) or aval_of(x).dtype == dtypes.bool_:
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001


def _bool_args(*args):
    args = prepare(*args)
    return [
        a if aval_of(a).dtype == dtypes.bool_ else lax.ne(a, scalar_like(a, 0))
        for a in args
    ]


def _logical(lax_fn, name: str):
    """A logical ufunc of two operands, each true where nonzero (as NumPy's)."""

    def fn(x1, x2):
        return lax_fn(*_bool_args(x1, x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = UFUNC_DOCS[name]
    return fn


logical_and = _logical(lax.bitwise_and, "logical_and")
logical_or = _logical(lax.bitwise_or, "logical_or")
logical_xor = _logical(lax.bitwise_xor, "logical_xor")


def logical_not(x):
    """Elementwise logical not.

    Example:
      >>> jnp.logical_not(jnp.array([0, 1, 2]))
      Array([ True, False, False], dtype=bool)
    """
    (x,) = _bool_args(x)
    return lax.bitwise_not(x)


def floor(x):
    """Elementwise largest integer <= x, as a float.

    Integer inputs are returned unchanged.

    Example:
      >>> jnp.floor(jnp.array([-1.5, 1.5]))
      Array([-2.,  1.], dtype=float32)
    """
    (x,) = prepare(x)
    require_real("floor", x)
    return lax.floor(x) if dtypes.is_float(aval_of(x).dtype) else x


def ceil(x):
    """Elementwise ceiling: the smallest integer not below x.

    Example:
      >>> jnp.ceil(jnp.array([-1.5, 0.2, 2.0]))
      Array([-1.,  1.,  2.], dtype=float32)
    """
    (x,) = prepare(x)
    require_real("ceil", x)
    return lax.ceil(x) if dtypes.is_float(aval_of(x).dtype) else x


class RoundingTypeError(OlympusTypeError, ValueError):
    """jnp.round/around of a bool array (JAX raises ValueError)."""


def round(a, decimals: int = 0, out=None):  # noqa: A001
    """Rounds to `decimals` decimal places, halves to even.

    Integers are returned unchanged for decimals >= 0.

    Args:
      a: an array.
      decimals: the number of decimal places (negative: tens, hundreds, ...).
      out: unsupported (must be None); arrays are immutable, as in JAX.

    Returns:
      An array of a's shape and dtype.

    Raises:
      ArrayLikeTypeError: a is a list or other non-array (convert it with
        jnp.asarray).
      RoundingTypeError: a is boolean.
      NotImplementedError: integers with decimals < 0 (as JAX).
      OutArgumentError: out is not None (a NotImplementedError, as JAX's).

    Example:
      >>> jnp.round(jnp.array([0.5, 1.5, 2.25]), 1)
      Array([0.5, 1.5, 2.2], dtype=float32)
    """
    refuse_out("jnp.round", out)
    (a,) = prepare(a)
    dtype = aval_of(a).dtype
    if dtype == dtypes.bool_:
        raise RoundingTypeError(
            "jnp.round does not accept bool input (JAX raises too: bool is neither "
            "integer nor inexact); cast first, e.g. jnp.round(a.astype(jnp.float32))"
        )
    if dtypes.is_integer(dtype):
        if decimals < 0:
            raise NotImplementedError(
                "jnp.round of integers with decimals < 0 is not implemented "
                "(as in JAX); cast to a float dtype first"
            )
        return a
    if dtypes.is_complex(dtype):
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if decimals == 0:
        return lax.round(a, 1)
    if decimals > np.log10(float(_ml_dtypes.finfo(dtype).max)):
        return a  # finer than the dtype's precision: nothing to round
    # float16 scales in float32, as JAX: 10**decimals * a overflows float16 early.
    x = lax.convert_element_type(a, np.float32) if dtype == np.float16 else a
    factor = np.asarray(10.0**decimals, aval_of(x).dtype)[()]
    out = lax.div(lax.round(lax.mul(x, factor), 1), factor)
    return lax.convert_element_type(out, dtype) if dtype == np.float16 else out


around = round


def _bools_as_ints(x1, x2):
    """Two booleans compute in the default int dtype, as in JAX (`%`, `//`,
    `**` and shifts have no boolean form)."""
    if aval_of(x1).dtype != dtypes.bool_:
        return x1, x2
    int_dtype = dtypes.default_int_dtype()
    return lax.convert_element_type(x1, int_dtype), lax.convert_element_type(
        x2, int_dtype
    )


def _nonzero_divisor(x2):
    """An integer divisor with its zeros replaced by ones, as JAX does, so that
    `x % 0` and `fmod(x, 0)` are 0 on every backend instead of XLA's `x`."""
    if not dtypes.is_integer(aval_of(x2).dtype):
        return x2
    zero, one = scalar_like(x2, 0), scalar_like(x2, 1)
    return lax.select(lax.eq(x2, zero), lax.full_like(x2, one), x2)


def floor_divide(x1, x2):
    """x1 // x2, rounding toward negative infinity, elementwise.

    `x1 // x2` with Python's rounding toward negative infinity; an integer
    division by zero gives XLA's quotient with JAX's sign fix-up.

    Example:
      >>> jnp.floor_divide(jnp.array([7, -7]), 2)
      Array([ 3, -4], dtype=int32)
    """
    x1, x2 = _bools_as_ints(*prepare(x1, x2))
    dtype = aval_of(x1).dtype
    if dtypes.is_unsigned_int(dtype):
        return lax.div(x1, x2)
    if dtypes.is_integer(dtype):
        quotient = lax.div(x1, x2)
        # Truncation rounds toward zero; step down where signs differ and it was inexact.
        fix = lax.bitwise_and(
            lax.ne(lax.sign(x1), lax.sign(x2)),
            lax.ne(lax.rem(x1, x2), scalar_like(x1, 0)),
        )
        return lax.select(
            fix, lax.sub(quotient, 1), quotient
        )  # a Python 1 keeps weak types
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    """Float (x1 // x2, x1 % x2) as CPython's float_divmod computes them: the
    quotient from the exact remainder, so 1 // 0.1 is 9 (not floor(10.0))."""
    shape = broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    mod = lax.rem(x1, x2)
    zero = scalar_like(x2, 0)
    corrected = lax.select(lax.eq(x2, zero), x1, lax.sub(x1, mod))
    div = lax.div(corrected, x2)
    fix = lax.bitwise_and(
        lax.ne(mod, scalar_like(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod))
    )
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, lax.sub(div, scalar_like(div, 1)), div)
    return lax.round(div), mod


def remainder(x1, x2):
    """x1 % x2 with the sign of x2 (another name of mod).

    `x1 % x2` with the sign of the divisor, like Python and NumPy; an integer `x
    % 0` is 0, as in JAX.

    Example:
      >>> jnp.remainder(jnp.array([7, -7]), 3)
      Array([1, 2], dtype=int32)
    """
    x1, x2 = _bools_as_ints(*prepare(x1, x2))
    x2 = _nonzero_divisor(x2)
    rem = lax.rem(x1, x2)
    dtype = aval_of(rem).dtype
    if dtypes.is_unsigned_int(dtype):
        return rem
    zero = scalar_like(rem, 0)
    fix = lax.bitwise_and(
        lax.ne(rem, zero), lax.ne(lax.lt(rem, zero), lax.lt(x2, zero))
    )
    return lax.select(fix, lax.add(rem, x2), rem)


mod = remainder


def fmod(x1, x2):
    """The remainder of x1 / x2 with the sign of x1 (C's fmod).

    Remainder with the sign of the dividend (C's fmod); an integer `fmod(x, 0)`
    is 0, as in JAX.

    Example:
      >>> jnp.fmod(jnp.array([7, -7]), 3)
      Array([ 1, -1], dtype=int32)
    """
    x1, x2 = prepare(x1, x2)
    # JAX replaces zero divisors before booleans become ints, so fmod(b, False) is b.
    return lax.rem(*_bools_as_ints(x1, _nonzero_divisor(x2)))


def power(x1, x2):
    """Elementwise x1 ** x2.

    Operands broadcast and promote; an integer base with a negative integer exponent gives 0 (or +-1), never an error.

    Args:
      x1: the base (array or scalar).
      x2: the exponent (array or scalar).

    Returns:
      An array of the broadcast shape and promoted dtype.

    Raises:
      IncompatibleShapesError: the shapes do not broadcast.

    Example:
      >>> jnp.power(jnp.array([2, 3]), 2)
      Array([4, 9], dtype=int32)
    """
    if isinstance(x2, int) and not isinstance(x2, bool):
        (x1,) = prepare(x1)
        if aval_of(x1).dtype == dtypes.bool_:  # JAX: int32, also with x64 on
            x1 = lax.convert_element_type(x1, np.int32)
        if x2 >= 0 or dtypes.is_inexact(aval_of(x1).dtype):
            return lax.integer_pow(x1, x2)
        raise ValueError(
            f"integers to negative integer powers are not allowed ({aval_of(x1).str_short()} "
            f"** {x2}); make the base a float, e.g. x.astype(float) ** {x2}"
        )
    x1, x2 = _bools_as_ints(*prepare(x1, x2))
    dtype = aval_of(x1).dtype
    if dtypes.is_inexact(dtype):
        return lax.pow(x1, x2)
    return _integer_power(x1, x2)


def _integer_power(x, y):
    """Integer base and exponent: square-and-multiply over the exponent's low
    6 bits, as JAX (more would overflow any base > 1); a negative exponent
    reads as its two's-complement bits, and 0 ** y is 0 for y != 0."""
    shape = broadcast_shapes(aval_of(x).shape, aval_of(y).shape)
    x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    one, zero = (np.asarray(v, aval_of(y).dtype)[()] for v in (1, 0))
    zero_base = lax.bitwise_and(lax.eq(x, scalar_like(x, 0)), lax.ne(y, zero))
    acc = lax.select(
        zero_base,
        lax.full(shape, scalar_like(x, 0)),
        lax.full(shape, scalar_like(x, 1)),
    )
    for _ in range(6):
        odd = lax.ne(lax.bitwise_and(y, one), zero)
        acc = lax.select(odd, lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, lax.full(shape, one))
    return acc


def square(x):
    """Elementwise x * x.

    x * x; booleans square as int32 (also with x64 on), as JAX's.

    Example:
      >>> jnp.square(jnp.array([-2, 3]))
      Array([4, 9], dtype=int32)
    """
    (x,) = prepare(x)
    if aval_of(x).dtype == dtypes.bool_:
        x = lax.convert_element_type(x, np.int32)
    return lax.integer_pow(x, 2)


def reciprocal(x):
    """Elementwise 1 / x.

    Example:
      >>> jnp.reciprocal(jnp.array([1.0, 2.0, 4.0]))
      Array([1.  , 0.5 , 0.25], dtype=float32)
    """
    (x,) = prepare(x, inexact=True)
    return lax.integer_pow(x, -1)


def isnan(x):
    """Elementwise whether x is NaN.

    Integers and booleans are never NaN.

    Example:
      >>> jnp.isnan(jnp.array([1.0, jnp.nan]))
      Array([False,  True], dtype=bool)
    """
    (x,) = prepare(x)
    if not dtypes.is_inexact(aval_of(x).dtype):
        return lax.full(aval_of(x).shape, False)
    return lax.ne(x, x)


def isinf(x):
    """Whether x is +inf or -inf, elementwise.

    Example:
      >>> jnp.isinf(jnp.array([1.0, jnp.inf, -jnp.inf]))
      Array([False,  True,  True], dtype=bool)
    """
    (x,) = prepare(x)
    if not dtypes.is_inexact(aval_of(x).dtype):
        return lax.full(aval_of(x).shape, False)
    return lax.eq(lax.abs(x), np.asarray(np.inf, aval_of(lax.abs(x)).dtype)[()])


def signbit(x):
    """Whether the sign bit of x is set, elementwise.

    Whether the sign bit is set: True for -0.0 and negative NaNs too.

    Example:
      >>> jnp.signbit(jnp.array([-1.0, -0.0, 2.0]))
      Array([ True,  True, False], dtype=bool)
    """
    (x,) = as_arrays(x)
    dtype = aval_of(x).dtype
    if dtype == dtypes.bool_ or dtypes.is_unsigned_int(dtype):
        return lax.full(aval_of(x).shape, False)
    if dtypes.is_integer(dtype):
        return lax.lt(x, scalar_like(x, 0))
    layout = float_layout("signbit", x)
    bits = lax.bitcast_convert_type(x, layout.int)
    return lax.lt(bits, np.zeros((), layout.int)[()])


def isfinite(x):
    """Elementwise whether x is neither infinite nor NaN.

    For complex x, both parts must be finite.

    Example:
      >>> jnp.isfinite(jnp.array([1.0, jnp.inf, jnp.nan]))
      Array([ True, False, False], dtype=bool)
    """
    return logical_not(logical_or(isnan(x), isinf(x)))


def real(x):
    """The real part of x, elementwise.

    Example:
      >>> jnp.real(jnp.array([1 + 2j]))
      Array([1.], dtype=float32)
    """
    (x,) = prepare(x)
    return lax.real(x) if dtypes.is_complex(aval_of(x).dtype) else x


def imag(x):
    """The imaginary part of x, elementwise.

    Example:
      >>> jnp.imag(jnp.array([1 + 2j]))
      Array([2.], dtype=float32)
    """
    (x,) = prepare(x)
    if dtypes.is_complex(aval_of(x).dtype):
        return lax.imag(x)
    return lax.full(aval_of(x).shape, np.zeros((), aval_of(x).dtype)[()])


def conjugate(x):
    """The complex conjugate, elementwise (another name of conj).

    Example:
      >>> jnp.conjugate(jnp.array([1 + 2j]))
      Array([1.-2.j], dtype=complex64)
    """
    (x,) = prepare(x)
    if dtypes.is_complex(aval_of(x).dtype):
        return lax.complex(lax.real(x), lax.neg(lax.imag(x)))
    return x


conj = conjugate


def where(condition, x=None, y=None):
    """`x` where `condition` else `y`, broadcasting all three (the 3-argument form)."""
    if x is None and y is None:
        return concrete_nonzero(condition)
    if x is None or y is None:
        raise ValueError(
            "jnp.where takes either only a condition, or a condition, x and y"
        )
    x, y = prepare(x, y)
    condition = to_operand(condition)
    if aval_of(condition).dtype != dtypes.bool_:
        condition = lax.ne(condition, scalar_like(condition, 0))
    condition, x, y = broadcast_operands(condition, x, y)
    shape = next((aval_of(v).shape for v in (condition, x, y) if aval_of(v).shape), ())
    x, y = (broadcast_to(v, shape) for v in (x, y))
    return lax.select(condition, x, y)


def clip(a, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002
    """`a` with its values limited to [min, max].

    Bounds broadcast against a; None leaves that side open. Where min > max
    the result is max, as NumPy's.

    Args:
      a: an array.
      min: the lower bound (None: none).
      max: the upper bound (None: none).
      a_min: NumPy's older name for min.
      a_max: NumPy's older name for max.

    Returns:
      The clipped array.

    Raises:
      IncompatibleShapesError: the bounds do not broadcast with a.

    Example:
      >>> jnp.clip(jnp.array([-2.0, 0.5, 3.0]), 0.0, 1.0)
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    a = to_operand(a)
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def select(condlist, choicelist, default=0):
    """Elementwise, the choice of the first condition that holds.

    The first choice whose condition holds, elementwise; `default` elsewhere.

    Args:
      condlist: a list of boolean arrays.
      choicelist: a list of arrays, one per condition.
      default: the value where no condition holds.

    Returns:
      An array of the broadcast shape and the choices' dtype.

    Raises:
      ValueError: condlist and choicelist differ in length.

    Example:
      >>> x = jnp.arange(4)
      >>> jnp.select([x < 1, x > 2], [x, -x], default=9)
      Array([ 0,  9,  9, -3], dtype=int32)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            "jnp.select: condlist and choicelist must have the same length"
        )
    if len(condlist) == 0:
        raise ValueError(
            "jnp.select: condlist must be non-empty (as in JAX); for no choices "
            "use jnp.full_like(..., default)"
        )
    out = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        out = where(condition, choice, out)
    return to_operand(out)


def divmod(x1, x2):  # noqa: A001
    """(x1 // x2, x1 % x2), elementwise, with Python's signs.

    Example:
      >>> jnp.divmod(jnp.array([7, -7]), 2)
      (Array([ 3, -4], dtype=int32), Array([1, 1], dtype=int32))
    """
    x1, x2 = _bools_as_ints(*prepare(x1, x2))
    if dtypes.is_float(aval_of(x1).dtype):
        return _float_divmod(x1, x2)
    return floor_divide(x1, x2), remainder(x1, x2)


def left_shift(x1, x2):
    """x1 << x2 on integers (the Array API's name of left_shift).

    Example:
      >>> jnp.bitwise_left_shift(jnp.array([1, 3]), 2)
      Array([ 4, 12], dtype=int32)
    """
    x1, x2 = _bools_as_ints(*prepare(x1, x2))
    return lax.shift_left(x1, x2)


def right_shift(x1, x2):
    """x1 >> x2 on integers (the Array API's name of right_shift).

    Arithmetic shift for signed integers (sign-filling), logical for unsigned.

    Example:
      >>> jnp.bitwise_right_shift(jnp.array([-8, 8]), 1)
      Array([-4,  4], dtype=int32)
    """
    x1, x2 = _bools_as_ints(*prepare(x1, x2))
    if dtypes.is_unsigned_int(aval_of(x1).dtype):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


# The Args/Returns/Raises each hand-written ufunc above shares with its family
# (ufunc_docs), by what it returns.
add_unary_sections(SAME, sign, positive, floor, square, conjugate)
add_unary_sections(" (real for complex x)", absolute)
add_unary_sections(BOOL, logical_not, isnan, isinf, signbit, isfinite)
add_unary_sections(
    " and a float dtype (integers and booleans come back unchanged)", ceil
)
add_binary_sections(PROMOTED, floor_divide, remainder, fmod)
add_unary_sections(" and dtype (integer division truncates, as NumPy's)", reciprocal)
add_unary_sections(
    " and the matching real dtype (real input comes back unchanged)", real
)
add_unary_sections(" and the matching real dtype (zeros for real input)", imag)
add_binary_sections(PROMOTED_INT, left_shift, right_shift)
with_sections(
    ARGS_X1_X2,
    returns("A pair of arrays of the broadcast shape and the promoted dtype."),
    RAISES_X1_X2,
)(divmod)


# Docstring sections the functions above share with their families (ufunc_docs).
