"""More elementwise math of olympus.numpy (beyond ufuncs.py): exp2, log2,
log10, degrees/radians, rounding toward zero, NaN-ignoring max/min, hypot,
cbrt, sinc, i0, heaviside, logaddexp and logaddexp2, angle, the
complex/infinity predicates, nan_to_num, and the Array API's spellings of the
inverse trigonometric functions.
"""

from __future__ import annotations

import math

import ml_dtypes as _ml_dtypes
import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.lax.custom_derivatives import custom_jvp
from olympus.lax.elementwise import convert_element_type_p
from olympus.numpy import ufuncs
from olympus.numpy.compiled import compiled
from olympus.numpy.ufuncs import _complex_ge, add, isnan, maximum, minimum, where
from olympus.numpy.core import (
    as_arrays,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    prepare,
    require_real,
    scalar_like,
    to_operand,
)
from olympus.numpy.core import refuse_out
from olympus.numpy.ufunc_docs import DOCS as UFUNC_DOCS
from olympus.numpy.ufunc_docs import BOOL, FLOAT, PROMOTED_FLOAT, RAISES_X, REAL_FLOAT
from olympus.numpy.ufunc_docs import SAME
from olympus.numpy.ufunc_docs import add_binary_sections, add_sections
from olympus.numpy.ufunc_docs import add_unary_sections, with_out_where

__all__ = [
    "acos",
    "acosh",
    "angle",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "cbrt",
    "deg2rad",
    "degrees",
    "exp2",
    "fabs",
    "fix",
    "float_power",
    "fmax",
    "fmin",
    "heaviside",
    "hypot",
    "i0",
    "iscomplex",
    "iscomplexobj",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "log10",
    "log2",
    "logaddexp",
    "logaddexp2",
    "nan_to_num",
    "pow",
    "rad2deg",
    "radians",
    "rint",
    "sinc",
    "trunc",
]

# The Array API standard's names for NumPy's functions.
acos, acosh, asin, asinh = ufuncs.arccos, ufuncs.arccosh, ufuncs.arcsin, ufuncs.arcsinh
atan, atanh, atan2 = ufuncs.arctan, ufuncs.arctanh, ufuncs.arctan2
pow = ufuncs.power
bitwise_invert = ufuncs.invert
bitwise_left_shift, bitwise_right_shift = ufuncs.left_shift, ufuncs.right_shift


def trunc(x):
    """Rounds toward zero, elementwise (the integer part).

    Rounds toward zero; integers and booleans come back unchanged.

    Example:
      >>> jnp.trunc(jnp.array([-1.7, 1.7]))
      Array([-1.,  1.], dtype=float32)
    """
    (x,) = as_arrays(x)
    require_real("trunc", x)
    if not dtypes.is_float(aval_of(x).dtype):
        return x
    return lax.select(lax.lt(x, scalar_like(x, 0)), lax.ceil(x), lax.floor(x))


fix = trunc


def rint(x):
    """Rounds to the nearest integer, halves to even, elementwise.

    Rounds half to even; integers become the default float (as in JAX).

    Example:
      >>> jnp.rint(jnp.array([0.5, 1.5, 2.5]))
      Array([0., 2., 2.], dtype=float32)
    """
    (x,) = as_arrays(x, inexact=True)
    if dtypes.is_complex(aval_of(x).dtype):
        return lax.complex(lax.round(lax.real(x), 1), lax.round(lax.imag(x), 1))
    return lax.round(x, 1)


def fabs(x):
    """Elementwise absolute value, as a float.

    |x| as a float (integers are promoted); complex input is an error, as in
    NumPy.

    Example:
      >>> jnp.fabs(jnp.array([-1, 2]))
      Array([1., 2.], dtype=float32)
    """
    (x,) = as_arrays(x, inexact=True)
    require_real("fabs", x)
    return lax.abs(x)


def _nan_ignoring(name: str, wins):
    def fn(x1, x2):
        x1, x2 = as_arrays(x1, x2)
        # JAX's where(x1 wins | isnan(x2), x1, x2): NaN only where both are NaN,
        # and a tie takes x2, whose tangent it then carries whole.
        take_x1 = ufuncs.logical_or(wins(x1, x2), ufuncs.isnan(x2))
        return ufuncs.where(take_x1, x1, x2)

    fn.__name__ = name
    fn.__doc__ = UFUNC_DOCS.get(name, f"Elementwise `{name}`, ignoring NaNs.")
    return fn


fmax = _nan_ignoring("fmax", ufuncs.greater)
fmin = _nan_ignoring("fmin", ufuncs.less)


def float_power(x1, x2):
    """x1 ** x2 computed in floating point.

    x1 ** x2 computed in floating point (integers promote to the default float).

    Example:
      >>> jnp.float_power(jnp.array([2, 3]), 2)
      Array([4., 9.], dtype=float32)
    """
    x1, x2 = as_arrays(x1, x2, inexact=True)
    return lax.pow(x1, x2)


def heaviside(x1, x2):
    """The Heaviside step function: 0 below 0, 1 above, x2 at 0.

    0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0 (NaN stays NaN).

    Example:
      >>> jnp.heaviside(jnp.array([-1.0, 0.0, 2.0]), 0.5)
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    x1, x2 = as_arrays(x1, x2, inexact=True)
    require_real("heaviside", x1)
    step = ufuncs.where(
        lax.gt(x1, scalar_like(x1, 0)), scalar_like(x1, 1), scalar_like(x1, 0)
    )
    out = ufuncs.where(lax.eq(x1, scalar_like(x1, 0)), x2, step)
    return ufuncs.where(ufuncs.isnan(x1), x1, out)


def exp2(x):
    """Elementwise 2 ** x.

    Example:
      >>> jnp.exp2(jnp.array([1.0, 2.0, 4.0]))
      Array([ 2.,  4., 16.], dtype=float32)
    """
    (x,) = prepare(x, inexact=True)
    return lax.exp(lax.mul(x, np.asarray(np.log(2), aval_of(x).dtype)[()]))


def log2(x):
    """Elementwise base-2 logarithm.

    Example:
      >>> jnp.log2(jnp.array([1.0, 2.0, 4.0]))
      Array([0., 1., 2.], dtype=float32)
    """
    (x,) = prepare(x, inexact=True)
    return lax.div(lax.log(x), np.asarray(np.log(2), aval_of(x).dtype)[()])


def log10(x):
    """Elementwise base-10 logarithm.

    Example:
      >>> jnp.log10(jnp.array([1.0, 10.0, 1000.0]))
      Array([0., 1., 3.], dtype=float32)
    """
    (x,) = prepare(x, inexact=True)
    # log(x) * (1 / ln 10), as JAX computes it, so the last bits agree.
    dtype = aval_of(x).dtype
    real = np.empty(0, dtype).real.dtype if dtypes.is_complex(dtype) else dtype
    one_over_ln10 = np.asarray(0.4342944819032518, real)[()]
    r = lax.log(x)
    if dtypes.is_complex(dtype):
        return lax.complex(
            lax.mul(lax.real(r), one_over_ln10), lax.mul(lax.imag(r), one_over_ln10)
        )
    return lax.mul(r, one_over_ln10)


def deg2rad(x):
    """Degrees converted to radians (another name of deg2rad).

    Example:
      >>> jnp.radians(jnp.array([0.0, 0.5, 1.0]))
      Array([0.        , 0.00872665, 0.01745329], dtype=float32)
    """
    (x,) = prepare(x, inexact=True)
    return lax.mul(x, np.asarray(np.pi / 180, aval_of(x).dtype)[()])


def rad2deg(x):
    """Radians converted to degrees (another name of rad2deg).

    Example:
      >>> jnp.degrees(jnp.array([0.0, 0.5, 1.0]))
      Array([ 0.     , 28.64789, 57.29578], dtype=float32)
    """
    (x,) = prepare(x, inexact=True)
    return lax.mul(x, np.asarray(180 / np.pi, aval_of(x).dtype)[()])


radians, degrees = deg2rad, rad2deg


def hypot(x1, x2):
    """sqrt(x1**2 + x2**2) without overflow, elementwise.

    Example:
      >>> jnp.hypot(jnp.array([3.0, 5.0]), jnp.array([4.0, 12.0]))
      Array([ 5., 13.], dtype=float32)
    """
    x1, x2 = prepare(x1, x2, inexact=True)
    require_real("hypot", x1)  # sqrt(x1*x1 + x2*x2) is not |(x1, x2)| for complex
    # JAX's form: big * sqrt(1 + (small / big)**2) never overflows, and its
    # derivative at (0, 0) is 1/2 each (max's and min's tie), not NaN.
    x1, x2 = lax.abs(x1), lax.abs(x2)
    shape = broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    inf = lax.full_like(x1, scalar_like(x1, np.inf))
    infinite = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
    big, small = maximum(x1, x2), minimum(x1, x2)
    zero = lax.eq(big, lax.full_like(big, scalar_like(big, 0)))
    safe = lax.select(zero, lax.full_like(big, scalar_like(big, 1)), big)
    ratio = lax.div(small, safe)
    # a Python 1, weak as JAX's, so a weakly typed gradient stays weak
    scaled = lax.mul(big, lax.sqrt(add(1, lax.mul(ratio, ratio))))
    return keep_weak(lax.select(infinite, inf, lax.select(zero, big, scaled)), x1)


def keep_weak(out, like):
    """`out` weakly typed when `like` is (its constants were strong), as the
    one-expression forms in JAX stay."""
    aval = aval_of(out)
    if aval_of(like).weak_type and not aval.weak_type:
        return convert_element_type_p.bind(out, new_dtype=aval.dtype, weak_type=True)
    return out


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) without overflow, elementwise.

    log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|)). Its
    derivative is JAX's: exp(x - out) for each operand, so 1/2 each at a tie and
    1 for an infinite operand (not the kinks of max and abs).

    Example:
      >>> jnp.logaddexp(jnp.array([0.0, 100.0]), jnp.array([0.0, 100.0]))
      Array([  0.6931472, 100.693146 ], dtype=float32)
    """
    x1, x2 = prepare(x1, x2, inexact=True)
    if dtypes.is_complex(aval_of(x1).dtype):
        return complex_logaddexp(x1, x2, 1.0)
    return _real_logaddexp(x1, x2)


@custom_jvp
def _real_logaddexp(x1, x2):
    larger = lax.max(x1, x2)
    gap = lax.neg(lax.abs(lax.sub(x1, x2)))
    out = lax.add(larger, lax.log1p(lax.exp(gap)))
    # Equal infinities make the gap nan (inf - inf); the answer is that infinity.
    return lax.select(lax.ne(gap, gap), larger, out)


@_real_logaddexp.defjvp
def _real_logaddexp_jvp(primals, tangents):
    out = _real_logaddexp(*primals)
    return out, _log_add_tangent(primals, tangents, out, lax.exp)


def _log_add_tangent(primals, tangents, out, power):
    """sum of t * power(x - out) with +inf read as 0 (JAX's rule for
    logaddexp/logaddexp2): an infinite operand gets the whole tangent."""

    def finite(v):
        inf = lax.full_like(v, scalar_like(v, np.inf))
        return lax.select(lax.eq(v, inf), lax.full_like(v, scalar_like(v, 0)), v)

    shares = [
        lax.mul(t, power(lax.sub(finite(x), finite(out))))
        for x, t in zip(primals, tangents)
    ]
    return lax.add(*shares)


def complex_logaddexp(x1, x2, log_base: float):
    """log_b(b**x1 + b**x2) for complex x (b = e**log_base): the operand with
    the larger real part plus log_b(1 + b**(smaller - larger)), whose exponent
    has a real part <= 0, so nothing overflows."""
    first_larger = _complex_ge(x1, x2)
    larger, smaller = lax.select(first_larger, x1, x2), lax.select(first_larger, x2, x1)
    scale = np.asarray(log_base, aval_of(x1).dtype)[()]
    correction = lax.log1p(lax.exp(lax.mul(lax.sub(smaller, larger), scale)))
    return lax.add(larger, lax.div(correction, scale))


def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2) without overflow, elementwise.

    log2(2**x1 + 2**x2) without overflow: max + log2(1 + 2**-|x1 - x2|).

    Example:
      >>> jnp.logaddexp2(jnp.array([0.0, 1.0]), jnp.array([0.0, 1.0]))
      Array([1., 2.], dtype=float32)
    """
    x1, x2 = as_arrays(x1, x2, inexact=True)
    if dtypes.is_complex(aval_of(x1).dtype):
        return complex_logaddexp(x1, x2, math.log(2))
    return keep_weak(_real_logaddexp2(x1, x2), x1)


@custom_jvp
def _real_logaddexp2(x1, x2):
    larger = ufuncs.maximum(x1, x2)
    gap = lax.neg(lax.abs(lax.sub(x1, x2)))
    ln2 = scalar_like(gap, math.log(2))
    out = lax.add(larger, lax.div(lax.log1p(lax.exp(lax.mul(gap, ln2))), ln2))
    # Equal infinities make the gap NaN (inf - inf); the answer is that infinity.
    return ufuncs.where(lax.ne(gap, gap), larger, out)


@_real_logaddexp2.defjvp
def _real_logaddexp2_jvp(primals, tangents):
    """JAX's: t * 2**(x - out) per operand (1/2 each at a tie)."""
    out = _real_logaddexp2(*primals)
    return out, _log_add_tangent(primals, tangents, out, lax.exp2)


def cbrt(x):
    """Elementwise real cube root.

    The real cube root, negative for negative x.

    Example:
      >>> jnp.cbrt(jnp.array([1.0, 2.0, 4.0]))
      Array([1.       , 1.2599211, 1.587401 ], dtype=float32)
    """
    (x,) = as_arrays(x, inexact=True)
    require_real("cbrt", x)
    return lax.cbrt(x)  # XLA's op, as JAX: its derivative is inf at 0, not NaN


def sinc(x):
    """The normalized sinc function sin(pi x) / (pi x), elementwise.

    sin(pi x) / (pi x), with the limit 1 at 0. Near 0 a Taylor polynomial
    replaces the quotient, so every derivative at 0 is right too (sinc''(0) =
    -pi**2 / 3), not just the value.

    Example:
      >>> jnp.sinc(jnp.array([0.0, 0.5, 1.0]))
      Array([ 1.0000000e+00,  6.3661975e-01, -2.7827534e-08], dtype=float32)
    """
    (x,) = as_arrays(x, inexact=True)
    pix = lax.mul(x, scalar_like(x, np.pi))
    magnitude = lax.abs(pix)  # real even for complex x
    near_zero = lax.lt(magnitude, np.asarray(0.1, aval_of(magnitude).dtype)[()])
    safe = lax.select(near_zero, lax.full(aval_of(x).shape, scalar_like(x, 1)), pix)
    u = lax.mul(pix, pix)
    # 1 - u/6 + u^2/120 - u^3/5040 + u^4/362880: the next term is below 3e-18 for |pi x| < 0.1.
    taylor = scalar_like(x, 1 / 362880)
    for coefficient in (-1 / 5040, 1 / 120, -1 / 6, 1.0):
        taylor = lax.add(lax.mul(taylor, u), scalar_like(x, coefficient))
    return lax.select(near_zero, taylor, lax.div(lax.sin(safe), safe))


# ---- i0: the modified Bessel function of the first kind, order 0 --------------
_I0_SWITCH = 20.0  # below: power series; above: the asymptotic expansion
_I0_SERIES_TERMS = 40


def _i0_asymptotic_coefficients(terms: int) -> list[float]:
    """a_k of I0(x) ~ e^x / sqrt(2 pi x) * sum a_k x^-k, a_k = ((2k-1)!!)^2 / (k! 8^k)."""
    out = [1.0]
    for k in range(1, terms):
        out.append(out[-1] * (2 * k - 1) ** 2 / (8 * k))
    return out


_I0_ASYMPTOTIC = _i0_asymptotic_coefficients(25)


def _i0_series(q):
    """sum_k q^k / (k!)^2 nested as 1 + q/1 (1 + q/4 (1 + q/9 (...))): the
    coefficients 1/(k!)^2 themselves would underflow float32 beyond k = 20."""
    acc = lax.full(aval_of(q).shape, scalar_like(q, 1))
    for k in range(_I0_SERIES_TERMS, 0, -1):
        acc = lax.add(
            lax.mul(lax.mul(acc, q), scalar_like(q, 1 / k**2)), scalar_like(q, 1)
        )
    return acc


def _horner(coefficients, t):
    acc = scalar_like(t, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = lax.add(lax.mul(acc, t), scalar_like(t, c))
    return acc


def _i0_impl(x):
    magnitude = lax.abs(x)
    small = lax.le(magnitude, scalar_like(x, _I0_SWITCH))
    # Each branch sees only inputs in its own range, so the other's gradient stays finite.
    xs = lax.select(small, x, lax.full(aval_of(x).shape, scalar_like(x, 0)))
    xl = lax.select(
        small, lax.full(aval_of(x).shape, scalar_like(x, 2 * _I0_SWITCH)), magnitude
    )
    series = _i0_series(lax.mul(lax.mul(xs, xs), scalar_like(x, 0.25)))
    # e^x / sqrt(2 pi x) as one exp, so it overflows only when I0 itself does.
    scale = lax.exp(
        lax.sub(
            xl,
            lax.mul(
                lax.log(lax.mul(xl, scalar_like(x, 2 * np.pi))), scalar_like(x, 0.5)
            ),
        )
    )
    asymptotic = lax.mul(scale, _horner(_I0_ASYMPTOTIC, lax.div(scalar_like(x, 1), xl)))
    return lax.select(small, series, asymptotic)


def i0(x):
    """The modified Bessel function of the first kind of order 0 (differentiable).

    Example:
      >>> jnp.i0(jnp.array([0.0, 0.5, 1.0]))
      Array([1.       , 1.0634834, 1.2660658], dtype=float32)
    """
    (x,) = as_arrays(x, inexact=True)
    require_real("i0", x)
    return compiled(_i0_impl)(x)  # one dispatch eagerly instead of ~150 small ones


# ---- complex and infinity predicates ---------------------------------------------
def angle(z, deg: bool = False):
    """The complex argument of z, elementwise.

    The complex argument atan2(imag, real), in radians unless `deg`.

    Args:
      z: an array or scalar.
      deg: whether to return degrees rather than radians.

    Returns:
      An array of z's shape and a real floating dtype.

    Example:
      >>> jnp.angle(jnp.array([1j, -1 + 0j]))
      Array([1.5707964, 3.1415927], dtype=float32)
      >>> jnp.angle(jnp.array([1j]), deg=True)
      Array([90.], dtype=float32)
    """
    (z,) = as_arrays(z, inexact=True)
    aval = aval_of(z)
    if dtypes.is_complex(aval.dtype):
        out = lax.atan2(lax.imag(z), lax.real(z))
    elif not aval.shape:
        # JAX's rule: a real 0-d operand computes in the default float dtype
        # (float16 -> float32, not weak), as NumPy's float64 scalar result.
        z = lax.convert_element_type(z, dtypes.default_float_dtype())
        out = lax.atan2(lax.full((), scalar_like(z, 0)), z)
    else:
        out = lax.atan2(lax.full(aval_of(z).shape, scalar_like(z, 0)), z)
    return lax.mul(out, scalar_like(out, 180 / np.pi)) if deg else out


def iscomplex(x):
    """Whether x has a nonzero imaginary part, elementwise.

    Elementwise: whether the imaginary part is nonzero (False for real dtypes).

    Example:
      >>> jnp.iscomplex(jnp.array([1 + 1j, 2 + 0j]))
      Array([ True, False], dtype=bool)
    """
    (x,) = as_arrays(x)
    if not dtypes.is_complex(aval_of(x).dtype):
        return lax.full(aval_of(x).shape, False)
    imag = lax.imag(x)
    return lax.ne(imag, scalar_like(imag, 0))


def isreal(x):
    """Whether x has a zero imaginary part, elementwise.

    Elementwise: whether the imaginary part is zero (True for real dtypes).

    Example:
      >>> jnp.isreal(jnp.array([1 + 1j, 2 + 0j]))
      Array([False,  True], dtype=bool)
    """
    return ufuncs.logical_not(iscomplex(x))


def iscomplexobj(x) -> bool:
    """Whether `x` has a complex dtype.

    Whether `x` has a complex dtype (a static Python bool, whatever its values).
    As JAX, anything with a `.dtype` (a ShapeDtypeStruct) is read by it.


    Example:
      >>> jnp.iscomplexobj(jnp.array([1j]))
      True
      >>> jnp.iscomplexobj(1.0)
      False
    """
    if x is None:
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = aval_of(to_operand(x)).dtype
    return dtypes.is_complex(dtype)


def isrealobj(x) -> bool:
    """Whether `x` has a non-complex dtype.


    Example:
      >>> jnp.isrealobj(jnp.array([1j]))
      False
      >>> jnp.isrealobj(1.0)
      True
    """
    return not iscomplexobj(x)


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None):
    """NaN and infinities replaced by finite numbers.

    NaN -> `nan`, +inf -> `posinf` (largest finite), -inf -> `neginf` (lowest).

    Args:
      x: an array or scalar.
      copy: ignored: arrays are immutable, so no copy is observable.
      nan: the value for NaN.
      posinf: the value for +inf (None: the largest finite value).
      neginf: the value for -inf (None: the lowest finite value).

    Returns:
      An array of x's shape and dtype.

    Example:
      >>> jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf, -jnp.inf, 1.0]))
      Array([ 0.0000000e+00,  3.4028235e+38, -3.4028235e+38,  1.0000000e+00], dtype=float32)
    """
    (x,) = prepare(x)
    dtype = aval_of(x).dtype
    if dtypes.is_complex(dtype):
        parts = (lax.real(x), lax.imag(x))
        return lax.complex(*(nan_to_num(p, copy, nan, posinf, neginf) for p in parts))
    if not dtypes.is_float(dtype):
        return x
    info = _ml_dtypes.finfo(dtype)  # np.finfo does not know bfloat16 or the float8s
    x = where(isnan(x), np.asarray(nan, dtype)[()], x)
    x = where(
        lax.eq(x, np.asarray(np.inf, dtype)[()]),
        np.asarray(info.max if posinf is None else posinf, dtype)[()],
        x,
    )
    return where(
        lax.eq(x, np.asarray(-np.inf, dtype)[()]),
        np.asarray(info.min if neginf is None else neginf, dtype)[()],
        x,
    )


def _is_infinity(name: str, sign: float):
    def fn(x, /, out=None):
        refuse_out(f"jnp.{name}", out)
        (x,) = as_arrays(x)
        require_real(name, x)
        if not dtypes.is_float(aval_of(x).dtype):
            return lax.full(aval_of(x).shape, False)
        return lax.eq(x, scalar_like(x, sign * np.inf))

    fn.__name__ = name
    fn.__doc__ = UFUNC_DOCS.get(name, f"Elementwise `{name}`.")
    return fn


isposinf = _is_infinity("isposinf", 1.0)
isneginf = _is_infinity("isneginf", -1.0)


# The Args/Returns/Raises each hand-written ufunc above shares with its family
# (ufunc_docs), by what it returns.
add_unary_sections(SAME, trunc)
add_unary_sections(FLOAT, rint, cbrt, sinc, i0)
add_unary_sections(" and a floating dtype", fabs)
add_binary_sections(" and a float dtype (at least the default float)", float_power)
add_binary_sections(PROMOTED_FLOAT, heaviside)
add_binary_sections(REAL_FLOAT, logaddexp2)
logaddexp2.__doc__ = with_out_where(logaddexp2.__doc__)  # jnp.logaddexp2 is a ufunc
add_unary_sections(BOOL, iscomplex, isreal)
add_unary_sections(FLOAT, exp2, log2, log10, deg2rad, rad2deg)
add_binary_sections(REAL_FLOAT, hypot, logaddexp)
logaddexp.__doc__ = with_out_where(logaddexp.__doc__)  # jnp.logaddexp is a ufunc


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (iscomplexobj, isrealobj),
    """Args:
  x: an array, scalar or dtype-carrying object.""",
    """Returns:
  A Python bool.""",
)
add_sections((angle, iscomplexobj, isrealobj, nan_to_num), RAISES_X)
