"""Elementwise primitives: arithmetic, math functions, comparisons, logic,
select_n and convert_element_type.

Binary operands have one dtype (olympus.numpy promotes before binding) and
one shape, except that rank-0 operands broadcast: `mul c 3.0:f32[]`.
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
    is_int_or_bool,
    is_number,
    same_dtypes,
)
from olympus.backends.xla.lowering import i64_array
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import def_elementwise


def _broadcast_operand(ctx, x: str, aval: ShapedArray, shape: tuple) -> str:
    if aval.shape == shape:
        return x
    target = ShapedArray(shape, aval.dtype)
    return ctx.op("stablehlo.broadcast_in_dim", [x], f"broadcast_dimensions = {i64_array([])}",
                  result_avals=[target])


def _operands_at_out_shape(ctx, args) -> list[str]:
    shape = ctx.aval_out.shape
    return [_broadcast_operand(ctx, x, a, shape) for x, a in zip(args, ctx.avals_in)]


# ---- unary -------------------------------------------------------------------
def _unary(name: str, hlo_op: str, accepted=dtypes.is_inexact, kinds="floating-point"):
    def abstract_eval(x: ShapedArray) -> ShapedArray:
        dtype_kind_check(name, x, accepted, kinds)
        return x

    def lower(ctx, x):
        return ctx.op(hlo_op, [x])

    return define_primitive(name, abstract_eval, lower)


def _signed_number(dtype) -> bool:
    return is_number(dtype) and not dtypes.is_unsigned_int(dtype)


neg_p = _unary("neg", "stablehlo.negate", _signed_number, "signed numeric")
exp_p = _unary("exp", "stablehlo.exponential")
log_p = _unary("log", "stablehlo.log")
expm1_p = _unary("expm1", "stablehlo.exponential_minus_one")
log1p_p = _unary("log1p", "stablehlo.log_plus_one")
sin_p = _unary("sin", "stablehlo.sine")
cos_p = _unary("cos", "stablehlo.cosine")
tan_p = _unary("tan", "stablehlo.tan")
tanh_p = _unary("tanh", "stablehlo.tanh")
logistic_p = _unary("logistic", "stablehlo.logistic")
sqrt_p = _unary("sqrt", "stablehlo.sqrt")
rsqrt_p = _unary("rsqrt", "stablehlo.rsqrt")
sign_p = _unary("sign", "stablehlo.sign", _signed_number, "signed numeric")
floor_p = _unary("floor", "stablehlo.floor", dtypes.is_float, "real floating-point")
ceil_p = _unary("ceil", "stablehlo.ceil", dtypes.is_float, "real floating-point")
erf_p = _unary("erf", "chlo.erf", dtypes.is_float, "real floating-point")
not_p = _unary("not", "stablehlo.not", is_int_or_bool, "integer or boolean")
def_elementwise(neg_p, exp_p, log_p, expm1_p, log1p_p, sin_p, cos_p, tan_p, tanh_p,
                logistic_p, sqrt_p, rsqrt_p, sign_p, floor_p, ceil_p, erf_p, not_p)


def _abs_abstract_eval(x: ShapedArray) -> ShapedArray:
    dtype_kind_check("abs", x, _signed_number, "signed numeric")
    if dtypes.is_complex(x.dtype):
        real = dtypes.float64 if x.dtype == dtypes.complex128 else dtypes.float32
        return x.update(dtype=real)
    return x


abs_p = define_primitive(
    "abs", _abs_abstract_eval, lambda ctx, x: ctx.op("stablehlo.abs", [x])
)


def _round_abstract_eval(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    dtype_kind_check("round", x, dtypes.is_float, "real floating-point")
    if rounding_method not in (0, 1):
        raise OlympusTypeError("round: rounding_method must be 0 (away from zero) or 1 (to even)")
    return x


def _round_lower(ctx, x, *, rounding_method):
    op = "stablehlo.round_nearest_afz" if rounding_method == 0 else "stablehlo.round_nearest_even"
    return ctx.op(op, [x])


round_p = define_primitive("round", _round_abstract_eval, _round_lower)
def_elementwise(abs_p, round_p)


def _integer_pow_abstract_eval(x: ShapedArray, *, y: int) -> ShapedArray:
    dtype_kind_check("integer_pow", x, is_number, "numeric")
    if y < 0 and not dtypes.is_inexact(x.dtype):
        raise OlympusTypeError(f"integer_pow: negative exponent {y} needs a floating-point base")
    return x


def _integer_pow_lower(ctx, x, *, y):
    """Square-and-multiply; a negative exponent divides one by the result."""
    aval = ctx.aval_out
    if y == 0:
        one = ctx.emitter.constant(np.ones((), aval.dtype), ShapedArray((), aval.dtype))
        return _broadcast_operand(ctx, one, ShapedArray((), aval.dtype), aval.shape)
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else ctx.op("stablehlo.multiply", [result, base])
        n >>= 1
        if n:
            base = ctx.op("stablehlo.multiply", [base, base])
    if y < 0:
        one = ctx.emitter.constant(np.ones((), aval.dtype), ShapedArray((), aval.dtype))
        one = _broadcast_operand(ctx, one, ShapedArray((), aval.dtype), aval.shape)
        result = ctx.op("stablehlo.divide", [one, result])
    return result


integer_pow_p = define_primitive("integer_pow", _integer_pow_abstract_eval, _integer_pow_lower)
def_elementwise(integer_pow_p)


# ---- binary ------------------------------------------------------------------
def _binary(name: str, hlo_op: str, accepted=is_number, kinds="numeric"):
    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        dtype = same_dtypes(name, (x, y))
        dtype_kind_check(name, x, accepted, kinds)
        shape = broadcast_shapes_scalar(name, (x, y))
        return ShapedArray(shape, dtype, all_weak((x, y)))

    def lower(ctx, x, y):
        return ctx.op(hlo_op, _operands_at_out_shape(ctx, (x, y)))

    return define_primitive(name, abstract_eval, lower)


add_p = _binary("add", "stablehlo.add")
sub_p = _binary("sub", "stablehlo.subtract")
mul_p = _binary("mul", "stablehlo.multiply")
div_p = _binary("div", "stablehlo.divide")
rem_p = _binary("rem", "stablehlo.remainder")
max_p = _binary("max", "stablehlo.maximum")
min_p = _binary("min", "stablehlo.minimum")
pow_p = _binary("pow", "stablehlo.power", dtypes.is_inexact, "floating-point")
atan2_p = _binary("atan2", "stablehlo.atan2", dtypes.is_inexact, "floating-point")
and_p = _binary("and", "stablehlo.and", is_int_or_bool, "integer or boolean")
or_p = _binary("or", "stablehlo.or", is_int_or_bool, "integer or boolean")
xor_p = _binary("xor", "stablehlo.xor", is_int_or_bool, "integer or boolean")
def_elementwise(add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, pow_p, atan2_p, and_p, or_p, xor_p)


# ---- comparisons -----------------------------------------------------------
def _compare_type(dtype) -> str:
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    if dtypes.is_signed_int(dtype):
        return "SIGNED"
    return "UNSIGNED"


def _comparison(name: str, direction: str):
    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        same_dtypes(name, (x, y))
        if direction not in ("EQ", "NE") and dtypes.is_complex(x.dtype):
            raise OlympusTypeError(f"{name}: complex numbers are not ordered")
        return ShapedArray(broadcast_shapes_scalar(name, (x, y)), dtypes.bool_)

    def lower(ctx, x, y):
        attrs = (
            f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
            f"compare_type = #stablehlo<comparison_type {_compare_type(ctx.avals_in[0].dtype)}>"
        )
        return ctx.op("stablehlo.compare", _operands_at_out_shape(ctx, (x, y)), attrs)

    return define_primitive(name, abstract_eval, lower)


eq_p = _comparison("eq", "EQ")
ne_p = _comparison("ne", "NE")
lt_p = _comparison("lt", "LT")
le_p = _comparison("le", "LE")
gt_p = _comparison("gt", "GT")
ge_p = _comparison("ge", "GE")
def_elementwise(eq_p, ne_p, lt_p, le_p, gt_p, ge_p)


# ---- select_n ----------------------------------------------------------------
def _select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise OlympusTypeError("select_n needs at least one case")
    if which.dtype != dtypes.bool_ and not dtypes.is_integer(which.dtype):
        raise OlympusTypeError(f"select_n: predicate must be bool or integer, got {which.str_short()}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise OlympusTypeError("select_n: a boolean predicate selects between at most two cases")
    dtype = same_dtypes("select_n", cases)
    shape = cases[0].shape
    if any(c.shape != shape for c in cases):
        raise OlympusTypeError("select_n: cases must have one shape")
    if which.shape not in ((), shape):
        raise OlympusTypeError(
            f"select_n: predicate shape {which.shape} must be () or the cases' shape {shape}"
        )
    return ShapedArray(shape, dtype, all_weak(cases))


def _select_n_lower(ctx, which, *cases):
    aval = ctx.aval_out
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return cases[0]
    pred_aval = ShapedArray(aval.shape, dtypes.bool_)
    if which_aval.dtype == dtypes.bool_:
        pred = _broadcast_operand(ctx, which, which_aval, aval.shape)
        return ctx.op("stablehlo.select", [pred, cases[1], cases[0]])
    # Integer index: choose case i where which == i (the last case takes the rest).
    which_b = _broadcast_operand(ctx, which, which_aval, aval.shape)
    idx_aval = which_aval.update(shape=aval.shape)
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        const = ctx.emitter.constant(np.array(i, which_aval.dtype), ShapedArray((), which_aval.dtype))
        const = _broadcast_operand(ctx, const, ShapedArray((), which_aval.dtype), aval.shape)
        pred = ctx.op(
            "stablehlo.compare", [which_b, const],
            f"comparison_direction = #stablehlo<comparison_direction EQ>, "
            f"compare_type = #stablehlo<comparison_type {_compare_type(idx_aval.dtype)}>",
            result_avals=[pred_aval],
        )
        result = ctx.op("stablehlo.select", [pred, cases[i], result])
    return result


select_n_p = define_primitive("select_n", _select_n_abstract_eval, _select_n_lower)
# Only the predicate may stay rank-0 while the cases are arrays.
def_elementwise(select_n_p, scalar_positions=lambda i: i == 0)


# ---- clamp -------------------------------------------------------------------
def _clamp_abstract_eval(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    same_dtypes("clamp", (lo, x, hi))
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise OlympusTypeError(f"clamp: bounds must be scalars or of shape {x.shape}")
    return x.update(weak_type=all_weak((lo, x, hi)))


clamp_p = define_primitive(
    "clamp", _clamp_abstract_eval,
    lambda ctx, lo, x, hi: ctx.op("stablehlo.clamp", _operands_at_out_shape(ctx, (lo, x, hi))),
)
# The bounds may stay rank-0; the operand itself is always full-shaped.
def_elementwise(clamp_p, scalar_positions=lambda i: i != 1)


# ---- convert_element_type ----------------------------------------------------
def _convert_abstract_eval(x: ShapedArray, *, new_dtype, weak_type: bool) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_lower(ctx, x, *, new_dtype, weak_type):
    src = ctx.avals_in[0]
    if src.dtype == new_dtype:
        return x
    if new_dtype == dtypes.bool_:
        zero_aval = ShapedArray((), src.dtype)
        zero = ctx.emitter.constant(np.zeros((), src.dtype), zero_aval)
        zero = _broadcast_operand(ctx, zero, zero_aval, src.shape)
        return ctx.op(
            "stablehlo.compare", [x, zero],
            f"comparison_direction = #stablehlo<comparison_direction NE>, "
            f"compare_type = #stablehlo<comparison_type {_compare_type(src.dtype)}>",
        )
    if dtypes.is_complex(src.dtype) and not dtypes.is_complex(new_dtype):
        real_aval = src.update(dtype=dtypes.float64 if src.dtype == dtypes.complex128 else dtypes.float32)
        x = ctx.op("stablehlo.real", [x], result_avals=[real_aval])
    return ctx.op("stablehlo.convert", [x])


convert_element_type_p = define_primitive(
    "convert_element_type", _convert_abstract_eval, _convert_lower
)
def_elementwise(convert_element_type_p)


# ---- complex parts -----------------------------------------------------------
def _real_part_abstract_eval(name):
    def rule(x: ShapedArray) -> ShapedArray:
        dtype_kind_check(name, x, dtypes.is_complex, "complex")
        return x.update(dtype=dtypes.float64 if x.dtype == dtypes.complex128 else dtypes.float32)

    return rule


real_p = define_primitive("real", _real_part_abstract_eval("real"), lambda ctx, x: ctx.op("stablehlo.real", [x]))
imag_p = define_primitive("imag", _real_part_abstract_eval("imag"), lambda ctx, x: ctx.op("stablehlo.imag", [x]))
def_elementwise(real_p, imag_p)


def _complex_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    dtype = same_dtypes("complex", (x, y))
    if dtype not in (dtypes.float32, dtypes.float64):
        raise OlympusTypeError(f"complex: parts must be f32 or f64, got {dtypes.short_name(dtype)}")
    out = dtypes.complex128 if dtype == dtypes.float64 else dtypes.complex64
    return ShapedArray(broadcast_shapes_scalar("complex", (x, y)), out)


complex_p = define_primitive(
    "complex", _complex_abstract_eval,
    lambda ctx, x, y: ctx.op("stablehlo.complex", _operands_at_out_shape(ctx, (x, y))),
)
def_elementwise(complex_p)
