"""Functions that read or build a float's sign, exponent and mantissa fields:
copysign, frexp, ldexp, nextafter, spacing, modf (signbit, which ufuncs
needs for a branch cut, is in ufuncs.py; the bit layouts are in core.py).

They work on the IEEE bit pattern (via bitcast_convert_type), so they are
exact where arithmetic would round: `ldexp(x, n)` never goes through an
inexact `2.0 ** n`, and `frexp` splits a float without a logarithm.
"""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import (
    refuse_out,
    FloatLayout,
    as_arrays,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    float_layout,
    scalar_like,
    to_operand,
)
from olympus.numpy.ufuncs import absolute, isinf, isnan, negative, signbit, where
from olympus.numpy.ufunc_docs import FLOAT, PROMOTED_FLOAT, RAISES_X, REAL_FLOAT
from olympus.numpy.ufunc_docs import add_binary_sections, add_sections
from olympus.numpy.ufunc_docs import add_unary_sections
from olympus.tracer.errors import OlympusTypeError

__all__ = ["copysign", "frexp", "ldexp", "modf", "nextafter", "spacing"]


def copysign(x1, x2):
    """|x1| with the sign of x2, elementwise.

    |x1| with the sign bit of x2 (so copysign(1, -0.0) = -1).

    Example:
      >>> jnp.copysign(jnp.array([1.0, 2.0]), -1.0)
      Array([-1., -2.], dtype=float32)
    """
    x1, x2 = as_arrays(x1, x2, inexact=True)
    if dtypes.is_complex(aval_of(x1).dtype):
        raise OlympusTypeError("jnp.copysign is not defined for complex operands")
    magnitude = absolute(x1)
    return where(signbit(x2), negative(magnitude), magnitude)


def _power_of_two(k, layout: FloatLayout):
    """2.0 ** k, exactly, for integer k in [1 - bias, bias] (a normal float)."""
    biased = lax.convert_element_type(lax.add(k, np.int32(layout.bias)), layout.uint)
    return lax.bitcast_convert_type(
        lax.shift_left(biased, layout.uconst(layout.nmant)), layout.dtype
    )


def ldexp(x1, x2):
    """x1 * 2**x2 for an integer x2, elementwise.

    x1 * 2**x2 for an integer x2, exact and free of spurious overflow. The
    exponent is clipped to the range where the result can differ from 0 or inf,
    then applied in three steps that each stay representable.

    Example:
      >>> jnp.ldexp(jnp.array([1.0, 3.0]), jnp.array([2, -1]))
      Array([4. , 1.5], dtype=float32)
    """
    x2 = to_operand(x2)
    if not (dtypes.is_integer(aval_of(x2).dtype) or aval_of(x2).dtype == dtypes.bool_):
        raise OlympusTypeError(
            f"jnp.ldexp: the exponent x2 must be an integer array, got {aval_of(x2).str_short()}"
        )
    (x1,) = as_arrays(x1, inexact=True)
    layout = float_layout("ldexp", x1)
    shape = broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    limit = 2 * layout.bias + layout.nmant + 2
    x2 = _clip_exponent(x2, limit)
    x1, n = (
        broadcast_to(x1, shape),
        broadcast_to(lax.convert_element_type(x2, np.int32), shape),
    )
    limit = np.int32(limit)
    n = lax.clamp(-limit, n, limit)
    third = _floor_div(n, 3)
    rest = lax.sub(n, lax.mul(third, np.int32(2)))
    step = _power_of_two(third, layout)
    return lax.mul(lax.mul(lax.mul(x1, step), step), _power_of_two(rest, layout))


def _clip_exponent(x2, limit: int):
    """x2 clipped to [-limit, limit] in its own type, before the int32
    conversion (an int64 or uint32 exponent would wrap there)."""
    dtype = aval_of(x2).dtype
    if dtype == dtypes.bool_ or np.iinfo(dtype).bits < 32:
        return x2
    low = -limit if dtypes.is_signed_int(dtype) else 0
    return lax.clamp(np.asarray(low, dtype)[()], x2, np.asarray(limit, dtype)[()])


def _floor_div(n, d: int):
    quotient = lax.div(n, np.int32(d))
    inexact_negative = lax.bitwise_and(
        lax.lt(n, np.int32(0)), lax.ne(lax.mul(quotient, np.int32(d)), n)
    )
    return lax.select(inexact_negative, lax.sub(quotient, np.int32(1)), quotient)


def frexp(x):
    """Splits x into mantissa and exponent: x = mantissa * 2**exponent.

    (mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| <
    1. Zeros, infinities and NaNs come back unchanged with exponent 0; the
    exponent is int32, as in JAX.

    Args:
      x: an array or scalar.

    Returns:
      (mantissa, exponent): the mantissa in x's float dtype with 0.5 <=
      |mantissa| < 1 (0 for 0), the exponent as int32.

    Example:
      >>> jnp.frexp(jnp.array([8.0, 0.75]))
      (Array([0.5 , 0.75], dtype=float32), Array([4, 0], dtype=int32))
    """
    (x,) = as_arrays(x, inexact=True)
    layout = float_layout("frexp", x)
    shape = aval_of(x).shape
    # Subnormals are scaled into the normal range first, then the scale is undone.
    scale = layout.nmant + 1
    is_subnormal = lax.bitwise_and(
        lax.lt(absolute(x), layout.smallest_normal), lax.ne(x, scalar_like(x, 0))
    )
    scaled = lax.select(is_subnormal, lax.mul(x, scalar_like(x, 2.0**scale)), x)
    bits = lax.bitcast_convert_type(scaled, layout.uint)
    field = lax.bitwise_and(
        lax.shift_right_logical(bits, layout.uconst(layout.nmant)),
        layout.uconst(layout.exponent_mask),
    )
    exponent = lax.sub(
        lax.convert_element_type(field, np.int32), np.int32(layout.bias - 1)
    )
    exponent = lax.select(is_subnormal, lax.sub(exponent, np.int32(scale)), exponent)
    keep = layout.uconst(
        ~(layout.exponent_mask << layout.nmant) & (2 ** (8 * layout.uint.itemsize) - 1)
    )
    mantissa_bits = lax.bitwise_or(
        lax.bitwise_and(bits, keep), layout.uconst((layout.bias - 1) << layout.nmant)
    )
    mantissa = lax.bitcast_convert_type(mantissa_bits, layout.dtype)
    special = lax.bitwise_or(
        lax.eq(x, scalar_like(x, 0)), lax.bitwise_or(isinf(x), isnan(x))
    )
    return (
        lax.select(special, x, mantissa),
        lax.select(special, lax.full(shape, np.int32(0)), exponent),
    )


def nextafter(x1, x2):
    """The next float after x1 in the direction of x2, elementwise.

    The next representable float after x1 in the direction of x2.

    Example:
      >>> jnp.nextafter(jnp.array([1.0, 1.0]), jnp.array([2.0, 0.0]))
      Array([1.0000001 , 0.99999994], dtype=float32)
    """
    x1, x2 = as_arrays(x1, x2, inexact=True)
    layout = float_layout("nextafter", x1)
    shape = broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    bits = lax.bitcast_convert_type(x1, layout.int)
    # Sign-magnitude bits: +1 on the integer view grows |x1|, -1 shrinks it.
    grow = lax.eq(lax.gt(x2, x1), lax.gt(x1, scalar_like(x1, 0)))
    one = np.ones((), layout.int)[()]
    stepped = lax.bitcast_convert_type(
        lax.select(grow, lax.add(bits, one), lax.sub(bits, one)), layout.dtype
    )
    tiny = lax.bitcast_convert_type(lax.full(shape, one), layout.dtype)
    from_zero = lax.select(lax.gt(x2, x1), tiny, lax.neg(tiny))
    out = lax.select(lax.eq(x1, scalar_like(x1, 0)), from_zero, stepped)
    out = lax.select(lax.eq(x1, x2), x2, out)
    return lax.select(lax.bitwise_or(isnan(x1), isnan(x2)), lax.add(x1, x2), out)


def spacing(x):
    """The distance from x to the next float away from zero, elementwise.

    The distance from x to the next float away from zero (negative for x < 0;
    float16 steps toward +inf, as NumPy).

    Example:
      >>> jnp.spacing(jnp.array([1.0, 2.0, 4.0]))
      Array([1.1920929e-07, 2.3841858e-07, 4.7683716e-07], dtype=float32)
    """
    (x,) = as_arrays(x, inexact=True)
    if aval_of(x).dtype == np.float16:
        # NumPy's (and JAX's) float16 rule: the step toward +inf, positive for
        # negative x too.
        return lax.sub(nextafter(x, scalar_like(x, np.inf)), x)
    away = where(signbit(x), scalar_like(x, -np.inf), scalar_like(x, np.inf))
    step = lax.sub(nextafter(x, away), x)
    # At zero the step is the smallest subnormal, which subtraction may flush to 0.
    return where(lax.eq(x, scalar_like(x, 0)), nextafter(x, away), step)


def modf(x, /, out=None):
    """The fractional and integral parts of x, both with x's sign.

    (fractional part, integral part) as JAX computes them: the integral part
    rounds toward zero and the fraction is x minus it, so an integral x gives +0
    (also for negative x) and +-inf gives NaN, unlike NumPy.

    Args:
      x: an array or scalar.
      out: unsupported (must be None); arrays are immutable, as in JAX.

    Returns:
      (fractional, integral), two arrays of x's shape and float dtype.

    Raises:
      ArrayLikeTypeError: x is a list or other non-array (convert it with
        jnp.asarray).
      OutArgumentError: out is not None (a NotImplementedError, as JAX's).

    Example:
      >>> jnp.modf(jnp.array([1.5, -2.25]))
      (Array([ 0.5 , -0.25], dtype=float32), Array([ 1., -2.], dtype=float32))
    """
    refuse_out("jnp.modf", out)
    (x,) = as_arrays(x, inexact=True)
    whole = where(lax.ge(x, scalar_like(x, 0)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


# The Args/Returns/Raises each hand-written ufunc above shares with its family
# (ufunc_docs), by what it returns.
add_binary_sections(REAL_FLOAT, copysign)
add_binary_sections(" and x1's float dtype", ldexp)
add_binary_sections(PROMOTED_FLOAT, nextafter)
add_unary_sections(FLOAT, spacing)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((frexp,), RAISES_X)
