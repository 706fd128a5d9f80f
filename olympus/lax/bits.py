"""Bit-level primitives: shifts and bitcasts, what a counter-based PRNG is
made of (olympus.random's threefry hash and its int -> float conversion).

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
from olympus.lax.elementwise import _operands_at_out_shape
from olympus.lax.ops import _match_scalars
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import def_elementwise
from olympus.transforms.jvp import defjvp_zero


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


# ---- public functions -----------------------------------------------------------
def shift_left(x, y):
    """`x << y` elementwise on integers of one dtype (0 once y >= bit width)."""
    return shift_left_p.bind(*_match_scalars(x, y))


def shift_right_logical(x, y):
    """`x >> y` filling with zeros (what unsigned integers do)."""
    return shift_right_logical_p.bind(*_match_scalars(x, y))


def shift_right_arithmetic(x, y):
    """`x >> y` filling with the sign bit (what signed integers do)."""
    return shift_right_arithmetic_p.bind(*_match_scalars(x, y))


def bitcast_convert_type(x, new_dtype):
    """The bits of `x` read as `new_dtype` (of the same width): f32 1.0 -> u32 0x3f800000."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if aval_of(x).dtype == new_dtype:
        return x
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype)
