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
from olympus.backends.xla.lowering import (
    complex_extremum,
    compare,
    i64_array,
    lowering_rules,
)
from olympus.lax.traits import (
    CHEAP_UNARY,
    COMPARISON,
    EXACT_BINARY,
    EXACT_UNARY,
    UNARY,
)
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import def_elementwise
from olympus.tracer.core import aval_of
from olympus.transforms.ad_util import Zero, instantiate, is_zero, zeros_like_aval
from olympus.transforms.jvp import (
    defjvp,
    defjvp_linear,
    defjvp_zero,
    jvp_rules,
    scalar_like,
)
from olympus.transforms.linearize import is_undefined, transpose_rules


def _broadcast_operand(ctx, x: str, aval: ShapedArray, shape: tuple) -> str:
    if aval.shape == shape:
        return x
    target = ShapedArray(shape, aval.dtype)
    return ctx.op(
        "stablehlo.broadcast_in_dim",
        [x],
        f"broadcast_dimensions = {i64_array([])}",
        result_avals=[target],
    )


def _operands_at_out_shape(ctx, args) -> list[str]:
    shape = ctx.aval_out.shape
    return [_broadcast_operand(ctx, x, a, shape) for x, a in zip(args, ctx.avals_in)]


# ---- unary -------------------------------------------------------------------
def _unary(
    name: str,
    hlo_op: str,
    accepted=dtypes.is_inexact,
    kinds="floating-point",
    traits=(),
):
    def abstract_eval(x: ShapedArray) -> ShapedArray:
        dtype_kind_check(name, x, accepted, kinds)
        return x

    def lower(ctx, x):
        return ctx.op(hlo_op, [x])

    return define_primitive(name, abstract_eval, lower, traits=traits)


def _signed_number(dtype) -> bool:
    return is_number(dtype) and not dtypes.is_unsigned_int(dtype)


neg_p = _unary(  # unsigned wraps, as in C
    "neg", "stablehlo.negate", is_number, "numeric", traits=CHEAP_UNARY
)
exp_p = _unary("exp", "stablehlo.exponential", traits=UNARY)
log_p = _unary("log", "stablehlo.log", traits=UNARY)
expm1_p = _unary("expm1", "stablehlo.exponential_minus_one", traits=UNARY)
log1p_p = _unary("log1p", "stablehlo.log_plus_one", traits=UNARY)
sin_p = _unary("sin", "stablehlo.sine", traits=UNARY)
cos_p = _unary("cos", "stablehlo.cosine", traits=UNARY)
tan_p = _unary("tan", "stablehlo.tan", traits=UNARY)
tanh_p = _unary("tanh", "stablehlo.tanh", traits=UNARY)
logistic_p = _unary("logistic", "stablehlo.logistic", traits=UNARY)
sqrt_p = _unary("sqrt", "stablehlo.sqrt", traits=UNARY)
rsqrt_p = _unary("rsqrt", "stablehlo.rsqrt", traits=UNARY)
sign_p = _unary("sign", "stablehlo.sign", is_number, "numeric", traits=CHEAP_UNARY)
floor_p = _unary(
    "floor",
    "stablehlo.floor",
    dtypes.is_float,
    "real floating-point",
    traits=EXACT_UNARY,
)
ceil_p = _unary(
    "ceil", "stablehlo.ceil", dtypes.is_float, "real floating-point", traits=EXACT_UNARY
)
erf_p = _unary("erf", "chlo.erf", dtypes.is_float, "real floating-point", traits=UNARY)
not_p = _unary(
    "not", "stablehlo.not", is_int_or_bool, "integer or boolean", traits=EXACT_UNARY
)
# Special functions, expanded by XLA's CHLO decompositions (as in JAX).
erfc_p = _unary("erfc", "chlo.erfc", dtypes.is_float, "real floating-point")
erf_inv_p = _unary("erf_inv", "chlo.erf_inv", dtypes.is_float, "real floating-point")
lgamma_p = _unary("lgamma", "chlo.lgamma", dtypes.is_float, "real floating-point")
digamma_p = _unary("digamma", "chlo.digamma", dtypes.is_float, "real floating-point")
# Inverse trigonometric and hyperbolic functions lower to CHLO, as in JAX: XLA
# expands them with C99's special values (signed zeros, infinities, NaN) for
# real and complex operands, where closed-form formulas give NaN or lose a sign.
asin_p = _unary("asin", "chlo.asin")
acos_p = _unary("acos", "chlo.acos")
atan_p = _unary("atan", "chlo.atan")
sinh_p = _unary("sinh", "chlo.sinh")
cosh_p = _unary("cosh", "chlo.cosh")
asinh_p = _unary("asinh", "chlo.asinh")
acosh_p = _unary("acosh", "chlo.acosh")
atanh_p = _unary("atanh", "chlo.atanh")


def _sign_lower(ctx, x):
    """stablehlo.sign has no unsigned form; there the sign is `x != 0`."""
    aval = ctx.avals_in[0]
    if not dtypes.is_unsigned_int(aval.dtype):
        return ctx.op("stablehlo.sign", [x])
    zero = ctx.emitter.constant(np.zeros(aval.shape, aval.dtype), aval)
    nonzero = compare(ctx.emitter, x, zero, "NE", aval.dtype, aval.shape)
    return ctx.op("stablehlo.convert", [nonzero])


lowering_rules[sign_p] = _sign_lower

def_elementwise(
    neg_p,
    exp_p,
    log_p,
    expm1_p,
    log1p_p,
    sin_p,
    cos_p,
    tan_p,
    tanh_p,
    logistic_p,
    sqrt_p,
    rsqrt_p,
    sign_p,
    floor_p,
    ceil_p,
    erf_p,
    erfc_p,
    erf_inv_p,
    lgamma_p,
    digamma_p,
    not_p,
    asin_p,
    acos_p,
    atan_p,
    sinh_p,
    cosh_p,
    asinh_p,
    acosh_p,
    atanh_p,
)


# ---- derivatives of the unary functions (x: operand, ans: output) -------------
def _one(x):
    return scalar_like(1, x)


defjvp_linear(neg_p)
transpose_rules[neg_p] = lambda ct, x: [neg_p.bind(ct)]
defjvp(exp_p, lambda t, ans, x: mul_p.bind(t, ans))
defjvp(log_p, lambda t, ans, x: div_p.bind(t, x))
defjvp(expm1_p, lambda t, ans, x: mul_p.bind(t, add_p.bind(ans, _one(x))))
defjvp(log1p_p, lambda t, ans, x: div_p.bind(t, add_p.bind(x, _one(x))))
defjvp(sin_p, lambda t, ans, x: mul_p.bind(t, cos_p.bind(x)))
defjvp(cos_p, lambda t, ans, x: neg_p.bind(mul_p.bind(t, sin_p.bind(x))))
defjvp(
    tan_p, lambda t, ans, x: mul_p.bind(t, add_p.bind(_one(x), mul_p.bind(ans, ans)))
)
defjvp(
    tanh_p, lambda t, ans, x: mul_p.bind(t, sub_p.bind(_one(x), mul_p.bind(ans, ans)))
)
defjvp(
    logistic_p,  # s' = s (1 - s)
    lambda t, ans, x: mul_p.bind(t, mul_p.bind(ans, sub_p.bind(_one(x), ans))),
)
defjvp(sqrt_p, lambda t, ans, x: div_p.bind(t, mul_p.bind(ans, scalar_like(2, x))))
defjvp(
    rsqrt_p,  # d x^-1/2 = -1/2 x^-3/2 = -1/2 ans / x
    lambda t, ans, x: mul_p.bind(
        t, mul_p.bind(div_p.bind(ans, x), scalar_like(-0.5, x))
    ),
)
defjvp(
    erf_p,  # erf' = 2/sqrt(pi) exp(-x^2)
    lambda t, ans, x: mul_p.bind(
        t,
        mul_p.bind(
            scalar_like(2 / np.sqrt(np.pi), x), exp_p.bind(neg_p.bind(mul_p.bind(x, x)))
        ),
    ),
)


defjvp(
    erfc_p,  # erfc' = -2/sqrt(pi) exp(-x^2)
    lambda t, ans, x: mul_p.bind(
        t,
        mul_p.bind(
            scalar_like(-2 / np.sqrt(np.pi), x),
            exp_p.bind(neg_p.bind(mul_p.bind(x, x))),
        ),
    ),
)
defjvp(
    erf_inv_p,  # (erf^-1)' = sqrt(pi)/2 exp(erf^-1(x)^2)
    lambda t, ans, x: mul_p.bind(
        t,
        mul_p.bind(
            scalar_like(np.sqrt(np.pi) / 2, x), exp_p.bind(mul_p.bind(ans, ans))
        ),
    ),
)
defjvp(lgamma_p, lambda t, ans, x: mul_p.bind(t, digamma_p.bind(x)))
defjvp(
    digamma_p,  # digamma' = polygamma(1, x)
    lambda t, ans, x: mul_p.bind(t, polygamma_p.bind(scalar_like(1, x), x)),
)


def _one_minus_square(x):
    return sub_p.bind(_one(x), mul_p.bind(x, x))


defjvp(asin_p, lambda t, ans, x: mul_p.bind(t, rsqrt_p.bind(_one_minus_square(x))))
defjvp(
    acos_p,
    lambda t, ans, x: neg_p.bind(mul_p.bind(t, rsqrt_p.bind(_one_minus_square(x)))),
)
defjvp(
    atan_p,
    lambda t, ans, x: div_p.bind(t, add_p.bind(_one(x), mul_p.bind(x, x))),
)
defjvp(sinh_p, lambda t, ans, x: mul_p.bind(t, cosh_p.bind(x)))
defjvp(cosh_p, lambda t, ans, x: mul_p.bind(t, sinh_p.bind(x)))
defjvp(
    asinh_p,
    lambda t, ans, x: mul_p.bind(
        t, rsqrt_p.bind(add_p.bind(mul_p.bind(x, x), _one(x)))
    ),
)
defjvp(acosh_p, lambda t, ans, x: mul_p.bind(t, _acosh_slope(x)))


def _acosh_slope(x):
    """1 / sqrt(x^2 - 1) for real x, as JAX (inf at +-1, real for x < -1);
    complex x takes the branch of the function, 1 / (sqrt(x - 1) sqrt(x + 1))."""
    if not dtypes.is_complex(aval_of(x).dtype):
        return rsqrt_p.bind(sub_p.bind(mul_p.bind(x, x), _one(x)))
    below, above = sub_p.bind(x, _one(x)), add_p.bind(x, _one(x))
    return mul_p.bind(rsqrt_p.bind(below), rsqrt_p.bind(above))


defjvp(
    atanh_p,
    lambda t, ans, x: div_p.bind(
        t, mul_p.bind(sub_p.bind(_one(x), x), add_p.bind(_one(x), x))
    ),
)
for _p in (sign_p, floor_p, ceil_p, not_p):
    defjvp_zero(_p)


def _abs_abstract_eval(x: ShapedArray) -> ShapedArray:
    dtype_kind_check("abs", x, _signed_number, "signed numeric")
    if dtypes.is_complex(x.dtype):
        real = dtypes.float64 if x.dtype == dtypes.complex128 else dtypes.float32
        return x.update(dtype=real)
    return x


abs_p = define_primitive(
    "abs",
    _abs_abstract_eval,
    lambda ctx, x: ctx.op("stablehlo.abs", [x]),
    traits=CHEAP_UNARY,
)


def _round_abstract_eval(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    dtype_kind_check("round", x, dtypes.is_float, "real floating-point")
    if rounding_method not in (0, 1):
        raise OlympusTypeError(
            "round: rounding_method must be 0 (away from zero) or 1 (to even)"
        )
    return x


def _round_lower(ctx, x, *, rounding_method):
    op = (
        "stablehlo.round_nearest_afz"
        if rounding_method == 0
        else "stablehlo.round_nearest_even"
    )
    return ctx.op(op, [x])


round_p = define_primitive(
    "round", _round_abstract_eval, _round_lower, traits=EXACT_UNARY
)
def_elementwise(abs_p, round_p)


def _abs_jvp(t, ans, x):
    """|x|' = sign(x) for reals; re(conj(x) t) / |x| for complex x."""
    if not dtypes.is_complex(aval_of(x).dtype):
        # t where x >= 0 (0 and -0 included, as JAX: grad(abs)(0.) == 1), else -t
        nonneg = ge_p.bind(x, scalar_like(0, x))
        return select_n_p.bind(nonneg, neg_p.bind(t), t)
    dot = add_p.bind(
        mul_p.bind(real_p.bind(x), real_p.bind(t)),
        mul_p.bind(imag_p.bind(x), imag_p.bind(t)),
    )
    return div_p.bind(dot, ans)


defjvp(abs_p, _abs_jvp)
defjvp_zero(round_p)


def _integer_pow_abstract_eval(x: ShapedArray, *, y: int) -> ShapedArray:
    dtype_kind_check("integer_pow", x, is_number, "numeric")
    if y < 0 and not dtypes.is_inexact(x.dtype):
        raise OlympusTypeError(
            f"integer_pow: negative exponent {y} needs a floating-point base"
        )
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
            result = (
                base if result is None else ctx.op("stablehlo.multiply", [result, base])
            )
        n >>= 1
        if n:
            base = ctx.op("stablehlo.multiply", [base, base])
    if y < 0:
        one = ctx.emitter.constant(np.ones((), aval.dtype), ShapedArray((), aval.dtype))
        one = _broadcast_operand(ctx, one, ShapedArray((), aval.dtype), aval.shape)
        result = ctx.op("stablehlo.divide", [one, result])
    return result


integer_pow_p = define_primitive(
    "integer_pow", _integer_pow_abstract_eval, _integer_pow_lower, traits=UNARY
)
def_elementwise(integer_pow_p)


def _integer_pow_jvp(t, ans, x, *, y):
    """(x^y)' = y x^(y-1)."""
    if y == 0:
        return Zero(aval_of(ans))
    if y == 1:
        return t
    slope = x if y == 2 else integer_pow_p.bind(x, y=y - 1)
    return mul_p.bind(t, mul_p.bind(scalar_like(y, x), slope))


defjvp(integer_pow_p, _integer_pow_jvp)


# ---- binary ------------------------------------------------------------------
# max/min of complex numbers: lexicographic, picking x where (real, imag) compare so.
_COMPLEX_EXTREMA = {"max": "GT", "min": "LT"}


def _binary(
    name: str,
    hlo_op: str,
    accepted=is_number,
    kinds="numeric",
    bool_hlo_op=None,
    traits=(),
):
    """A binary elementwise primitive; `bool_hlo_op` lowers its bool form
    (XLA has no maximum/minimum/clamp on PRED: or/and are the same functions)."""

    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        dtype = same_dtypes(name, (x, y))
        dtype_kind_check(name, x, accepted, kinds)
        shape = broadcast_shapes_scalar(name, (x, y))
        return ShapedArray(shape, dtype, all_weak((x, y)))

    def lower(ctx, x, y):
        is_bool = ctx.aval_out.dtype == dtypes.bool_
        if name in _COMPLEX_EXTREMA and dtypes.is_complex(ctx.aval_out.dtype):
            x, y = _operands_at_out_shape(ctx, (x, y))
            direction = _COMPLEX_EXTREMA[name]
            return complex_extremum(ctx.emitter, x, y, ctx.aval_out, direction)
        op = bool_hlo_op if is_bool and bool_hlo_op else hlo_op
        return ctx.op(op, _operands_at_out_shape(ctx, (x, y)))

    return define_primitive(name, abstract_eval, lower, traits=traits)


def _any_dtype(dtype) -> bool:
    return True


add_p = _binary("add", "stablehlo.add", traits=(*EXACT_BINARY, "cheap", "commutative"))
sub_p = _binary("sub", "stablehlo.subtract", traits=(*EXACT_BINARY, "cheap"))
mul_p = _binary(
    "mul", "stablehlo.multiply", traits=(*EXACT_BINARY, "cheap", "commutative")
)
div_p = _binary("div", "stablehlo.divide", traits=EXACT_BINARY)
rem_p = _binary("rem", "stablehlo.remainder", traits=EXACT_BINARY)
# max/min take bools too, as JAX's (max is or, min is and).
max_p = _binary(
    "max",
    "stablehlo.maximum",
    _any_dtype,
    "any",
    "stablehlo.or",
    traits=(*EXACT_BINARY, "cheap", "commutative"),
)
min_p = _binary(
    "min",
    "stablehlo.minimum",
    _any_dtype,
    "any",
    "stablehlo.and",
    traits=(*EXACT_BINARY, "cheap", "commutative"),
)
pow_p = _binary(
    "pow",
    "stablehlo.power",
    dtypes.is_inexact,
    "floating-point",
    traits=("scalar_broadcasting",),
)
atan2_p = _binary(
    "atan2",
    "stablehlo.atan2",
    dtypes.is_inexact,
    "floating-point",
    traits=("scalar_broadcasting",),
)
and_p = _binary(
    "and",
    "stablehlo.and",
    is_int_or_bool,
    "integer or boolean",
    traits=(*EXACT_BINARY, "commutative"),
)
or_p = _binary(
    "or",
    "stablehlo.or",
    is_int_or_bool,
    "integer or boolean",
    traits=(*EXACT_BINARY, "commutative"),
)
xor_p = _binary(
    "xor",
    "stablehlo.xor",
    is_int_or_bool,
    "integer or boolean",
    traits=(*EXACT_BINARY, "commutative"),
)
# polygamma(m, x): the m-th derivative of digamma, m a whole number (as a float).
polygamma_p = _binary(
    "polygamma", "chlo.polygamma", dtypes.is_float, "real floating-point"
)
def_elementwise(
    add_p,
    sub_p,
    mul_p,
    div_p,
    rem_p,
    max_p,
    min_p,
    pow_p,
    atan2_p,
    and_p,
    or_p,
    xor_p,
    polygamma_p,
)


# ---- derivatives of the binary functions -------------------------------------
def _at_shape(t, ans):
    """The tangent of a rank-0 operand, broadcast to the output's shape."""
    shape = aval_of(ans).shape
    if aval_of(t).shape == shape:
        return t
    from olympus.lax.shapes import broadcast_in_dim_p

    return broadcast_in_dim_p.bind(t, shape=shape, broadcast_dimensions=())


def _unbroadcast(ct, operand):
    """A cotangent for an operand that was broadcast from rank 0: its sum."""
    if operand.aval.shape == aval_of(ct).shape:
        return ct
    from olympus.lax.reductions import reduce_sum_p

    return reduce_sum_p.bind(ct, axes=tuple(range(aval_of(ct).ndim)))


def _mask(pred, like):
    """A boolean array as 0/1 in the dtype of `like`."""
    aval = aval_of(like)  # weak like `like`, so weak primals keep weak tangents
    return convert_element_type_p.bind(
        pred, new_dtype=aval.dtype, weak_type=aval.weak_type
    )


def _linear_binary_transpose(sign_y):
    def rule(ct, x, y):
        ct_x = _unbroadcast(ct, x) if is_undefined(x) else None
        ct_y = None
        if is_undefined(y):
            ct_y = _unbroadcast(neg_p.bind(ct) if sign_y < 0 else ct, y)
        return [ct_x, ct_y]

    return rule


defjvp(
    add_p,
    lambda t, ans, x, y: _at_shape(t, ans),
    lambda t, ans, x, y: _at_shape(t, ans),
)
defjvp(
    sub_p,
    lambda t, ans, x, y: _at_shape(t, ans),
    lambda t, ans, x, y: _at_shape(neg_p.bind(t), ans),
)
transpose_rules[add_p] = _linear_binary_transpose(+1)
transpose_rules[sub_p] = _linear_binary_transpose(-1)
defjvp(
    mul_p, lambda t, ans, x, y: mul_p.bind(t, y), lambda t, ans, x, y: mul_p.bind(x, t)
)


def _mul_transpose(ct, x, y):
    """mul is linear in whichever operand is undefined (never both)."""
    if is_undefined(x):
        return [_unbroadcast(mul_p.bind(ct, y), x), None]
    return [None, _unbroadcast(mul_p.bind(x, ct), y)]


transpose_rules[mul_p] = _mul_transpose
defjvp(
    div_p,
    lambda t, ans, x, y: _at_shape(div_p.bind(t, y), ans),
    lambda t, ans, x, y: neg_p.bind(mul_p.bind(t, div_p.bind(ans, y))),
)  # -t x / y^2


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise TypeError("div is not linear in its divisor")
    return [_unbroadcast(div_p.bind(ct, y), x), None]


transpose_rules[div_p] = _div_transpose


def _trunc(x):
    return mul_p.bind(sign_p.bind(x), floor_p.bind(abs_p.bind(x)))


defjvp(
    rem_p,
    lambda t, ans, x, y: _at_shape(t, ans),  # rem = x - y trunc(x / y)
    lambda t, ans, x, y: neg_p.bind(mul_p.bind(t, _trunc(div_p.bind(x, y)))),
)


def _balanced_eq(x, ans, y):
    """1 where x won a max/min, 1/2 where x and y tied, else 0."""
    won = _mask(eq_p.bind(x, ans), ans)
    tied = _mask(eq_p.bind(y, ans), ans)
    return mul_p.bind(
        won, sub_p.bind(_one(ans), mul_p.bind(tied, scalar_like(0.5, ans)))
    )


for _p in (max_p, min_p):
    defjvp(
        _p,
        lambda t, ans, x, y: mul_p.bind(t, _balanced_eq(x, ans, y)),
        lambda t, ans, x, y: mul_p.bind(t, _balanced_eq(y, ans, x)),
    )


def _pow_jvp_x(t, ans, x, y):
    """d x^y / dx = y x^(y-1), with x made strong first, as JAX's rule does."""
    if aval_of(x).weak_type:
        x = convert_element_type_p.bind(x, new_dtype=aval_of(x).dtype, weak_type=False)
    return _at_shape(
        mul_p.bind(t, mul_p.bind(y, pow_p.bind(x, sub_p.bind(y, _one(y))))), ans
    )


def _pow_jvp_y(t, ans, x, y):
    """d x^y / dy = log(x) x^y, taken as 0 where x == 0 (0^y is flat in y there)."""
    safe_x = add_p.bind(x, _mask(eq_p.bind(x, scalar_like(0, x)), x))
    return _at_shape(mul_p.bind(t, mul_p.bind(log_p.bind(safe_x), ans)), ans)


defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)


def _atan2_denominator(x, y):
    return add_p.bind(mul_p.bind(x, x), mul_p.bind(y, y))


defjvp(
    atan2_p,  # atan2(x, y): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2)
    lambda t, ans, x, y: _at_shape(
        mul_p.bind(t, div_p.bind(y, _atan2_denominator(x, y))), ans
    ),
    lambda t, ans, x, y: _at_shape(
        mul_p.bind(t, neg_p.bind(div_p.bind(x, _atan2_denominator(x, y)))), ans
    ),
)
for _p in (and_p, or_p, xor_p):
    defjvp_zero(_p)


def _polygamma_order_jvp(t, ans, m, x):
    raise OlympusTypeError(
        "polygamma: the derivative with respect to the order m is not defined "
        "(m is a whole number); differentiate with respect to x only"
    )


defjvp(
    polygamma_p,  # d/dx polygamma(m, x) = polygamma(m + 1, x)
    _polygamma_order_jvp,
    lambda t, ans, m, x: _at_shape(
        mul_p.bind(t, polygamma_p.bind(add_p.bind(m, _one(m)), x)), ans
    ),
)


# ---- comparisons -----------------------------------------------------------
def _comparison(name: str, direction: str, traits=()):
    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        same_dtypes(name, (x, y))
        if direction not in ("EQ", "NE") and dtypes.is_complex(x.dtype):
            raise OlympusTypeError(f"{name}: complex numbers are not ordered")
        return ShapedArray(broadcast_shapes_scalar(name, (x, y)), dtypes.bool_)

    def lower(ctx, x, y):
        x, y = _operands_at_out_shape(ctx, (x, y))
        return compare(
            ctx.emitter, x, y, direction, ctx.avals_in[0].dtype, ctx.aval_out.shape
        )

    return define_primitive(name, abstract_eval, lower, traits=traits)


eq_p = _comparison("eq", "EQ", traits=(*COMPARISON, "commutative"))
ne_p = _comparison("ne", "NE", traits=(*COMPARISON, "commutative"))
lt_p = _comparison("lt", "LT", traits=COMPARISON)
le_p = _comparison("le", "LE", traits=COMPARISON)
gt_p = _comparison("gt", "GT", traits=COMPARISON)
ge_p = _comparison("ge", "GE", traits=COMPARISON)
def_elementwise(eq_p, ne_p, lt_p, le_p, gt_p, ge_p)

for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    defjvp_zero(_p)


# ---- select_n ----------------------------------------------------------------
def _select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise OlympusTypeError("select_n needs at least one case")
    if which.dtype != dtypes.bool_ and not dtypes.is_integer(which.dtype):
        raise OlympusTypeError(
            f"select_n: predicate must be bool or integer, got {which.str_short()}"
        )
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise OlympusTypeError(
            "select_n: a boolean predicate selects between at most two cases"
        )
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
    if which_aval.dtype == dtypes.bool_:
        pred = _broadcast_operand(ctx, which, which_aval, aval.shape)
        return ctx.op("stablehlo.select", [pred, cases[1], cases[0]])
    # Integer index: a binary search with `which < mid`, as JAX lowers it, so an
    # out-of-range index takes the first case (below 0) or the last (above).
    which_b = _broadcast_operand(ctx, which, which_aval, aval.shape)

    def pick(offset: int, cases: tuple):
        if len(cases) == 1:
            return cases[0]
        mid = len(cases) // 2
        scalar = ShapedArray((), which_aval.dtype)
        const = ctx.emitter.constant(np.array(offset + mid, which_aval.dtype), scalar)
        const = _broadcast_operand(ctx, const, scalar, aval.shape)
        pred = compare(ctx.emitter, which_b, const, "LT", which_aval.dtype, aval.shape)
        lower, upper = pick(offset, cases[:mid]), pick(offset + mid, cases[mid:])
        return ctx.op("stablehlo.select", [pred, lower, upper])

    return pick(0, cases)


select_n_p = define_primitive(
    "select_n", _select_n_abstract_eval, _select_n_lower, traits=("exact", "cheap")
)
# Only the predicate may stay rank-0 while the cases are arrays.
def_elementwise(select_n_p, scalar_positions=lambda i: i == 0)


def _select_n_jvp(primals, tangents):
    """select_n is linear in its cases; the predicate has no derivative."""
    out = select_n_p.bind(*primals)
    case_tangents = tangents[1:]
    if all(is_zero(t) for t in case_tangents):
        return out, Zero(aval_of(out))
    return out, select_n_p.bind(primals[0], *map(instantiate, case_tangents))


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise TypeError("select_n is not linear in its predicate")
    zeros = zeros_like_aval(aval_of(ct))
    cts = [None]
    for i, case in enumerate(cases):
        if is_undefined(case):
            picks = [ct if j == i else zeros for j in range(len(cases))]
            cts.append(select_n_p.bind(which, *picks))
        else:
            cts.append(None)
    return cts


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose


# ---- clamp -------------------------------------------------------------------
def _clamp_abstract_eval(
    lo: ShapedArray, x: ShapedArray, hi: ShapedArray
) -> ShapedArray:
    same_dtypes("clamp", (lo, x, hi))
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise OlympusTypeError(
                f"clamp: bounds must be scalars or of shape {x.shape}"
            )
    return x.update(weak_type=all_weak((lo, x, hi)))


def _clamp_lower(ctx, lo, x, hi):
    lo, x, hi = _operands_at_out_shape(ctx, (lo, x, hi))
    if ctx.aval_out.dtype == dtypes.bool_:  # XLA has no PRED clamp: (x or lo) and hi
        return ctx.op("stablehlo.and", [ctx.op("stablehlo.or", [x, lo]), hi])
    return ctx.op("stablehlo.clamp", [lo, x, hi])


clamp_p = define_primitive(
    "clamp", _clamp_abstract_eval, _clamp_lower, traits=("exact",)
)
# The bounds may stay rank-0; the operand itself is always full-shaped.
def_elementwise(clamp_p, scalar_positions=lambda i: i != 1)

defjvp(
    clamp_p,  # JAX's: x's tangent strictly inside (lo, hi), a bound's beyond it;
    # at a bound no operand's tangent passes
    lambda t, ans, lo, x, hi: mul_p.bind(
        t, _mask(and_p.bind(gt_p.bind(lo, x), lt_p.bind(lo, hi)), ans)
    ),
    lambda t, ans, lo, x, hi: mul_p.bind(
        t, _mask(and_p.bind(gt_p.bind(x, lo), lt_p.bind(x, hi)), ans)
    ),
    lambda t, ans, lo, x, hi: mul_p.bind(t, _mask(lt_p.bind(hi, x), ans)),
)


# ---- convert_element_type ----------------------------------------------------
def _convert_abstract_eval(
    x: ShapedArray, *, new_dtype, weak_type: bool
) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_lower(ctx, x, *, new_dtype, weak_type):
    src = ctx.avals_in[0]
    if src.dtype == new_dtype:
        return x
    if new_dtype == dtypes.bool_:
        zero_aval = ShapedArray((), src.dtype)
        zero = ctx.emitter.constant(np.zeros((), src.dtype), zero_aval)
        zero = _broadcast_operand(ctx, zero, zero_aval, src.shape)
        return compare(ctx.emitter, x, zero, "NE", src.dtype, src.shape)
    if dtypes.is_complex(src.dtype) and not dtypes.is_complex(new_dtype):
        real_aval = src.update(
            dtype=dtypes.float64 if src.dtype == dtypes.complex128 else dtypes.float32
        )
        x = ctx.op("stablehlo.real", [x], result_avals=[real_aval])
    return ctx.op("stablehlo.convert", [x])


convert_element_type_p = define_primitive(
    "convert_element_type", _convert_abstract_eval, _convert_lower, traits=CHEAP_UNARY
)
def_elementwise(convert_element_type_p)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    """Tangents convert along with values, between inexact dtypes only."""
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if (
        is_zero(t)
        or not dtypes.is_inexact(new_dtype)
        or not dtypes.is_inexact(aval_of(x).dtype)
    ):
        return out, Zero(aval_of(out))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type):
    return [
        convert_element_type_p.bind(
            ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type
        )
    ]


jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = _convert_transpose


# ---- complex parts -----------------------------------------------------------
def _real_part_abstract_eval(name):
    def rule(x: ShapedArray) -> ShapedArray:
        dtype_kind_check(name, x, dtypes.is_complex, "complex")
        return x.update(
            dtype=dtypes.float64 if x.dtype == dtypes.complex128 else dtypes.float32
        )

    return rule


real_p = define_primitive(
    "real",
    _real_part_abstract_eval("real"),
    lambda ctx, x: ctx.op("stablehlo.real", [x]),
)
imag_p = define_primitive(
    "imag",
    _real_part_abstract_eval("imag"),
    lambda ctx, x: ctx.op("stablehlo.imag", [x]),
)
def_elementwise(real_p, imag_p)

defjvp_linear(real_p)
defjvp_linear(imag_p)
transpose_rules[real_p] = lambda ct, x: [
    complex_p.bind(ct, zeros_like_aval(aval_of(ct)))
]
transpose_rules[imag_p] = lambda ct, x: [
    complex_p.bind(zeros_like_aval(aval_of(ct)), neg_p.bind(ct))
]


def _complex_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    dtype = same_dtypes("complex", (x, y))
    if dtype not in (dtypes.float32, dtypes.float64):
        raise OlympusTypeError(
            f"complex: parts must be f32 or f64, got {dtypes.short_name(dtype)}"
        )
    out = dtypes.complex128 if dtype == dtypes.float64 else dtypes.complex64
    return ShapedArray(broadcast_shapes_scalar("complex", (x, y)), out)


complex_p = define_primitive(
    "complex",
    _complex_abstract_eval,
    lambda ctx, x, y: ctx.op("stablehlo.complex", _operands_at_out_shape(ctx, (x, y))),
)
def_elementwise(complex_p)

defjvp(
    complex_p,
    lambda t, ans, x, y: complex_p.bind(t, zeros_like_aval(aval_of(t))),
    lambda t, ans, x, y: complex_p.bind(zeros_like_aval(aval_of(t)), t),
)
transpose_rules[complex_p] = lambda ct, x, y: [
    _unbroadcast(real_p.bind(ct), x) if is_undefined(x) else None,
    _unbroadcast(neg_p.bind(imag_p.bind(ct)), y) if is_undefined(y) else None,
]
