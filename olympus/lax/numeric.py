"""Elementwise primitives that XLA has as single ops: cbrt (the real cube
root), clz (leading zero bits of integers) and is_finite (a float test
giving bools), each lowered to its one StableHLO op (their NumPy semantics
live in olympus/backends/reference/rules.py); and nextafter (the
neighbouring float toward a second operand), built from bitcasts.

nextafter is not chlo.next_after: XLA's CPU compares subnormal floats as if
they were zero, so that op returns +0.0 for nextafter(-1e-45, 0.0) (NumPy:
-0.0) and 0.0 for nextafter(0.0, 1.0) once any comparison sees its result.
Integer operations on the bits have no such mode.
"""

from __future__ import annotations

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax.base import define_primitive, dtype_kind_check
from olympus.lax import elementwise as ew
from olympus.lax import bits as bitcasts
from olympus.lax import ops
from olympus.lax.ops import _match_scalars
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import def_elementwise
from olympus.transforms.jvp import defjvp, defjvp_zero, scalar_like
from olympus.lax.op_docs import (
    ARGS_REAL_X,
    ARGS_REAL_X_ACCURACY,
    RAISES_NOT_INTEGER,
    RAISES_NOT_REAL_FLOAT,
    RETURNS_LIKE_X,
    with_sections,
)


cbrt_p = ew._unary("cbrt", "stablehlo.cbrt", dtypes.is_float, "real floating-point")


clz_p = ew._unary("clz", "stablehlo.count_leading_zeros", dtypes.is_integer, "integer")


def _is_finite_abstract_eval(x: ShapedArray) -> ShapedArray:
    dtype_kind_check("is_finite", x, dtypes.is_float, "real floating-point")
    return ShapedArray(x.shape, dtypes.bool_)


is_finite_p = define_primitive(
    "is_finite",
    _is_finite_abstract_eval,
    lambda ctx, x: ctx.op("stablehlo.is_finite", [x]),
)


def_elementwise(cbrt_p, clz_p, is_finite_p)

# cbrt' = x^(-2/3) / 3 = cbrt(x) / (3 x); written as 1 / (3 cbrt(x)^2) it
# stays finite wherever cbrt(x) is nonzero and is inf at 0, as the slope is.
defjvp(
    cbrt_p,
    lambda t, ans, x: ew.div_p.bind(
        t, ew.mul_p.bind(scalar_like(3, x), ew.mul_p.bind(ans, ans))
    ),
)
defjvp_zero(clz_p)
defjvp_zero(is_finite_p)


# ---- public functions -----------------------------------------------------------
@with_sections(ARGS_REAL_X_ACCURACY, RETURNS_LIKE_X, RAISES_NOT_REAL_FLOAT)
def cbrt(x, *, accuracy=None):
    """The real cube root, negative for negative x (stablehlo.cbrt).

    Example:
      >>> lax.cbrt(np.float32([-8.0, 27.0]))
      Array([-2.,  3.], dtype=float32)
    """
    return cbrt_p.bind(x)


@with_sections(RETURNS_LIKE_X, RAISES_NOT_INTEGER)
def clz(x):
    """The number of leading zero bits of each integer, in x's dtype.

    Args:
      x: an array of an integer dtype.

    Example:
      >>> lax.clz(np.uint8([0, 1, 255]))
      Array([8, 7, 0], dtype=uint8)
    """
    return clz_p.bind(x)


@with_sections(ARGS_REAL_X, RAISES_NOT_REAL_FLOAT)
def is_finite(x):
    """True where x is neither infinite nor NaN (a bool array).

    Returns:
      A bool array of x's shape.

    Example:
      >>> lax.is_finite(np.float32([1.0, np.inf, np.nan]))
      Array([ True, False, False], dtype=bool)
    """
    return is_finite_p.bind(x)


def nextafter(x1, x2):
    """The float next to x1 in the direction of x2, bit for bit as numpy.nextafter: x2 where they are equal (so nextafter(0.0, -0.0) is -0.0), the smallest subnormal with x2's sign from zero, -0.0 from the smallest negative subnormal up, NaN if either is NaN.

    Computed on the integer bits, so a CPU that treats subnormal operands as
    zero in float comparisons (as XLA's does) still steps through them. (NumPy's
    float16 nextafter alone returns x1 for nextafter(0.0, -0.0).)

    Args:
      x1: an array of a floating dtype.
      x2: the direction, an array of x1's shape and dtype.

    Returns:
      An array of x1's shape and dtype.

    Raises:
      OlympusTypeError: an operand is not of a real floating dtype (cast
        integers with lax.convert_element_type).
      ValueError: the shapes do not broadcast.

    Example:
      >>> lax.nextafter(np.float32([1.0, 0.0]), np.float32([2.0, -1.0]))
      Array([ 1.0000001e+00, -1.4012985e-45], dtype=float32)
    """
    x1, x2 = _match_scalars(x1, x2)
    dtype = aval_of(x1).dtype
    if aval_of(x2).dtype != dtype or not dtypes.is_float(dtype):
        raise OlympusTypeError(
            f"nextafter requires real floating-point operands of one dtype, got "
            f"{aval_of(x1).str_short()} and {aval_of(x2).str_short()}"
        )
    shape = np.broadcast_shapes(aval_of(x1).shape, aval_of(x2).shape)
    x1, x2 = (
        ops.broadcast_in_dim(x, shape, ()) if aval_of(x).shape != shape else x
        for x in (x1, x2)
    )
    return _nextafter_bits(x1, x2, dtype)


def _nextafter_bits(x1, x2, dtype):
    uint = np.dtype(f"uint{dtype.itemsize * 8}")
    sint = np.dtype(f"int{dtype.itemsize * 8}")
    u = lambda v: np.array(v, uint)[()]  # noqa: E731
    sign = u(1 << (dtype.itemsize * 8 - 1))
    inf_bits = np.array(np.inf, dtype).view(uint)[()]
    b1, b2 = (bitcasts.bitcast_convert_type(x, uint) for x in (x1, x2))
    m1, m2 = (ops.bitwise_and(b, ops.bitwise_not(sign)) for b in (b1, b2))
    nan = ops.bitwise_or(ops.gt(m1, inf_bits), ops.gt(m2, inf_bits))
    both_zero = ops.bitwise_and(ops.eq(m1, u(0)), ops.eq(m2, u(0)))
    equal = ops.bitwise_or(ops.eq(b1, b2), both_zero)

    def ordered(b, m):  # an integer that sorts like the float (-0 == +0)
        m = bitcasts.bitcast_convert_type(m, sint)
        negative = ops.ne(ops.bitwise_and(b, sign), u(0))
        return ops.select(negative, ops.neg(m), m)

    up = ops.gt(ordered(b2, m2), ordered(b1, m1))
    positive = ops.eq(ops.bitwise_and(b1, sign), u(0))
    grow = ops.eq(up, positive)
    stepped = ops.select(grow, ops.add(b1, u(1)), ops.sub(b1, u(1)))
    from_zero = ops.bitwise_or(ops.bitwise_and(b2, sign), u(1))
    out = ops.select(ops.eq(m1, u(0)), from_zero, stepped)
    out = ops.select(equal, b2, out)
    out = bitcasts.bitcast_convert_type(out, dtype)
    return ops.select(nan, ops.add(x1, x2), out)
