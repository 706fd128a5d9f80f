"""Bit-level primitives: shifts and bitcasts, what a counter-based PRNG is
made of (olympus.random's threefry hash and its int -> float conversion);
population_count (set bits of integers) and reduce_precision (floats rounded
to a narrower format's exponent and mantissa, kept in their own dtype).

Shifts are elementwise on integers of one dtype (rank-0 operands broadcast,
as for the other binary primitives). A shift by at least the bit width gives
0 (logical) or the sign fill (arithmetic), as StableHLO specifies. Their
outputs are piecewise constant in their inputs, so their jvps are zero.
"""

from __future__ import annotations

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax.base import (
    all_weak,
    broadcast_shapes_scalar,
    define_primitive,
    dtype_kind_check,
    same_dtypes,
)
from olympus.lax.elementwise import _operands_at_out_shape, _unary
from olympus.lax import ops
from olympus.lax.ops import _match_scalars
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import def_elementwise
from olympus.transforms.jvp import defjvp_linear, defjvp_zero
from olympus.transforms.linearize import transpose_rules
from olympus.lax.op_docs import (
    RAISES_NOT_INTEGER,
    RAISES_NOT_INTEGER_OR_DIFFER,
    RAISES_NOT_REAL_FLOAT,
    RETURNS_LIKE_OPERAND,
    RETURNS_LIKE_X,
    with_sections,
)


# ---- shifts --------------------------------------------------------------------
def _shift(name: str, hlo_op: str):
    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        dtype = same_dtypes(name, (x, y))
        dtype_kind_check(name, x, dtypes.is_integer, "integer")
        return ShapedArray(
            broadcast_shapes_scalar(name, (x, y)), dtype, all_weak((x, y))
        )

    def lower(ctx, x, y):
        return ctx.op(hlo_op, _operands_at_out_shape(ctx, (x, y)))

    return define_primitive(name, abstract_eval, lower)


shift_left_p = _shift("shift_left", "stablehlo.shift_left")
shift_right_logical_p = _shift("shift_right_logical", "stablehlo.shift_right_logical")
shift_right_arithmetic_p = _shift(
    "shift_right_arithmetic", "stablehlo.shift_right_arithmetic"
)
def_elementwise(shift_left_p, shift_right_logical_p, shift_right_arithmetic_p)
for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p):
    defjvp_zero(_p)


# ---- bitcast ---------------------------------------------------------------------
def _bitcast_abstract_eval(x: ShapedArray, *, new_dtype) -> ShapedArray:
    old, new = np.dtype(x.dtype), np.dtype(new_dtype)
    if (
        dtypes.is_complex(old)
        or dtypes.is_complex(new)
        or old == dtypes.bool_
        or new == dtypes.bool_
    ):
        raise OlympusTypeError(
            f"bitcast_convert_type: cannot reinterpret {dtypes.short_name(old)} as "
            f"{dtypes.short_name(new)} (only real numbers and integers)"
        )
    if old.itemsize != new.itemsize:
        raise OlympusTypeError(
            f"bitcast_convert_type: {dtypes.short_name(old)} and {dtypes.short_name(new)} "
            f"differ in bit width; olympus only reinterprets between types of one width"
        )
    return ShapedArray(x.shape, new)


bitcast_convert_type_p = define_primitive(
    "bitcast_convert_type",
    _bitcast_abstract_eval,
    lambda ctx, x, *, new_dtype: ctx.op("stablehlo.bitcast_convert", [x]),
)
def_elementwise(bitcast_convert_type_p)
defjvp_zero(bitcast_convert_type_p)


# ---- population_count ------------------------------------------------------------
population_count_p = _unary(
    "population_count", "stablehlo.popcnt", dtypes.is_integer, "integer"
)
def_elementwise(population_count_p)
defjvp_zero(population_count_p)


# ---- reduce_precision --------------------------------------------------------------
def _reduce_precision_abstract_eval(
    x: ShapedArray, *, exponent_bits: int, mantissa_bits: int
) -> ShapedArray:
    dtype_kind_check("reduce_precision", x, dtypes.is_float, "real floating-point")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise OlympusTypeError(
            f"reduce_precision of {x.str_short()}: needs exponent_bits >= 1 and "
            f"mantissa_bits >= 0, got {exponent_bits} and {mantissa_bits}"
        )
    return x


def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    attrs = (
        f"exponent_bits = {exponent_bits} : i32, mantissa_bits = {mantissa_bits} : i32"
    )
    return ctx.op("stablehlo.reduce_precision", [x], attrs)


reduce_precision_p = define_primitive(
    "reduce_precision", _reduce_precision_abstract_eval, _reduce_precision_lower
)
def_elementwise(reduce_precision_p)
# As in JAX, the tangent (and the cotangent) is rounded like the value: the
# rule treats the rounding as if it were linear.
defjvp_linear(reduce_precision_p)
transpose_rules[reduce_precision_p] = lambda ct, x, **params: [
    reduce_precision_p.bind(ct, **params)
]


# ---- public functions -----------------------------------------------------------
# The shifts' arguments (op_docs.with_sections).
_SHIFT_ARGS = """Args:
  x: an array of an integer dtype.
  y: the shift amounts, of x's shape and dtype (or a Python int)."""


@with_sections(_SHIFT_ARGS, RETURNS_LIKE_X, RAISES_NOT_INTEGER_OR_DIFFER)
def shift_left(x, y):
    """`x << y` elementwise on integers of one dtype (0 once y >= bit width).

    Example:
      >>> lax.shift_left(jnp.array([1, 3]), 2)
      Array([ 4, 12], dtype=int32)
    """
    return shift_left_p.bind(*_match_scalars(x, y))


@with_sections(_SHIFT_ARGS, RETURNS_LIKE_X, RAISES_NOT_INTEGER_OR_DIFFER)
def shift_right_logical(x, y):
    """`x >> y` filling with zeros (what unsigned integers do).

    Example:
      >>> lax.shift_right_logical(jnp.array([8, 16], dtype=jnp.uint32), jnp.array([2, 2], dtype=jnp.uint32))
      Array([2, 4], dtype=uint32)
    """
    return shift_right_logical_p.bind(*_match_scalars(x, y))


@with_sections(_SHIFT_ARGS, RETURNS_LIKE_X, RAISES_NOT_INTEGER_OR_DIFFER)
def shift_right_arithmetic(x, y):
    """`x >> y` filling with the sign bit (what signed integers do).

    Example:
      >>> lax.shift_right_arithmetic(jnp.array([-8, 8]), 1)
      Array([-4,  4], dtype=int32)
    """
    return shift_right_arithmetic_p.bind(*_match_scalars(x, y))


def bitcast_convert_type(operand, new_dtype):
    """The bits of `operand` read as `new_dtype`: f32 1.0 -> u32 0x3f800000.

    As in JAX, a narrower `new_dtype` adds a last axis of (old width / new
    width) parts, the least significant first (f64 1.0 -> f32 [0, 1.875]), and a
    wider one takes that axis away (its length must be the ratio).

    Args:
      operand: an array.
      new_dtype: the dtype to read the bits as.

    Returns:
      An array of new_dtype; its shape gains a last axis when new_dtype is
      narrower and loses one when wider.

    Raises:
      OlympusTypeError: the widths do not divide, or the last axis does not hold
        the parts a wider new_dtype needs.
      TypeError: new_dtype is not a dtype.

    Example:
      >>> lax.bitcast_convert_type(jnp.float32(1.0), jnp.uint32)
      Array(1065353216, dtype=uint32)
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    old_dtype = aval_of(operand).dtype
    if old_dtype == new_dtype:
        return operand
    old_bits, new_bits = _bit_width(old_dtype), _bit_width(new_dtype)
    if old_bits > new_bits:
        return _bitcast_to_parts(operand, old_bits, new_bits, new_dtype)
    if old_bits < new_bits:
        return _bitcast_from_parts(operand, old_bits, new_bits, new_dtype)
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


def _bit_width(dtype) -> int:
    return 8 * np.dtype(dtype).itemsize if np.dtype(dtype) != np.bool_ else 0


def _bitcast_to_parts(x, old_bits: int, new_bits: int, new_dtype):
    """x (old_bits wide) as [..., old_bits // new_bits] parts of new_bits."""
    wide = bitcast_convert_type(x, np.dtype(f"uint{old_bits}"))
    narrow = np.dtype(f"uint{new_bits}")
    parts = [
        ops.convert_element_type(
            shift_right_logical(wide, np.array(new_bits * i, wide.dtype)), narrow
        )
        for i in range(old_bits // new_bits)
    ]
    stacked = ops.concatenate(
        [ops.expand_dims(p, (-1,)) for p in parts], len(aval_of(x).shape)
    )
    return bitcast_convert_type(stacked, new_dtype)


def _bitcast_from_parts(x, old_bits: int, new_bits: int, new_dtype):
    """x's last axis of new_bits // old_bits parts as one new_bits value."""
    ratio = new_bits // old_bits
    shape = aval_of(x).shape
    if not shape or shape[-1] != ratio:
        raise OlympusTypeError(
            f"bitcast_convert_type: {dtypes.short_name(aval_of(x).dtype)} to "
            f"{dtypes.short_name(new_dtype)} takes a last axis of {ratio} parts, got "
            f"shape {shape}; reshape so the parts of each value are the last axis"
        )
    wide = np.dtype(f"uint{new_bits}")
    parts = bitcast_convert_type(x, np.dtype(f"uint{old_bits}"))
    value = None
    last = len(shape) - 1
    for i in range(ratio):
        piece = ops.slice(parts, (0,) * last + (i,), shape[:-1] + (i + 1,))
        part = ops.convert_element_type(ops.squeeze(piece, (last,)), wide)
        part = shift_left(part, np.array(old_bits * i, wide))
        value = part if value is None else ops.bitwise_or(value, part)
    return bitcast_convert_type(value, new_dtype)


@with_sections(RETURNS_LIKE_X, RAISES_NOT_INTEGER)
def population_count(x):
    """The number of set bits of each integer, in x's dtype.

    The number of set bits of each integer (of its two's complement bits for
    signed ones), in x's dtype.

    Args:
      x: an array of an integer dtype.

    Example:
      >>> lax.population_count(np.int32([0, 7, -1]))
      Array([ 0,  3, 32], dtype=int32)
    """
    return population_count_p.bind(x)


@with_sections(RETURNS_LIKE_OPERAND, RAISES_NOT_REAL_FLOAT)
def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """`operand` rounded to a narrower float format, kept in its own dtype.

    `operand` rounded (to nearest, ties to even) to a float format with
    `exponent_bits` and `mantissa_bits`, kept in its own dtype: values beyond
    that format's range become infinities, values below its smallest normal
    number become zeros, NaNs stay NaN. Emulates narrower types, e.g. bf16 is
    (8, 7) and f16 (5, 10).

    Args:
      operand: an array of a real floating dtype.
      exponent_bits: the exponent width of the target format.
      mantissa_bits: the mantissa width of the target format.

    Example:
      >>> lax.reduce_precision(jnp.array([1.0 + 2.0 ** -10]), 8, 7)
      Array([1.], dtype=float32)
    """
    return reduce_precision_p.bind(
        operand, exponent_bits=int(exponent_bits), mantissa_bits=int(mantissa_bits)
    )
