"""Reductions (reduce_sum/max/min/prod/and/or, argmax/argmin) and dot_general."""

from __future__ import annotations

import enum

import numpy as np

from olympus import config
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax.base import (
    blocks,
    check_axes,
    define_primitive,
    dtype_kind_check,
    is_number,
    same_dtypes,
)
from olympus.backends.xla.lowering import compare, complex_extremum, i64_array
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, shift_axes
from olympus.tracer.core import aval_of, user_source_info
from olympus.lax import elementwise as ew
from olympus.lax.shapes import broadcast_in_dim_p, transpose_p
from olympus.transforms.jvp import defjvp, defjvp_linear, defjvp_zero
from olympus.transforms.linearize import is_undefined, transpose_rules


def _reduced_shape(x: ShapedArray, axes) -> tuple:
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def identity_element(kind: str, dtype) -> np.ndarray:
    """The value a reduction starts from: 0 for sum, -inf (or min) for max, ..."""
    dtype = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if kind == "and":  # all bits set: -1 for signed ints, the max for unsigned
        if dtype == dtypes.bool_:
            return np.array(True)
        return np.array(
            np.iinfo(dtype).max if dtypes.is_unsigned_int(dtype) else -1, dtype
        )
    if kind in ("or", "xor"):
        return np.zeros((), dtype)
    if dtype == dtypes.bool_:
        return np.array(kind == "min")
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if kind == "max" else info.max, dtype)
    return np.array(
        dtypes.float_lowest(dtype) if kind == "max" else dtypes.float_highest(dtype)
    )


def _monoid_reduction(
    name: str, kind: str, hlo_op: str, accepted, kinds: str, traits=()
):
    def abstract_eval(x: ShapedArray, *, axes):
        axes = check_axes(name, axes, x.ndim)
        dtype_kind_check(name, x, accepted, kinds)
        return ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type)

    def lower(ctx, x, *, axes):
        scalar = ShapedArray((), ctx.avals_in[0].dtype)
        init = ctx.emitter.constant(identity_element(kind, scalar.dtype), scalar)
        if kind in ("max", "min") and dtypes.is_complex(scalar.dtype):
            direction = "GT" if kind == "max" else "LT"
            body = ctx.emitter.region(
                [scalar, scalar],
                lambda em, a, b: [complex_extremum(em, a, b, scalar, direction)],
            )
        else:
            body = ctx.emitter.region(
                [scalar, scalar], lambda em, a, b: em.op(hlo_op, [a, b], [scalar])
            )
        return ctx.op(
            "stablehlo.reduce", [x, init], f"dimensions = {i64_array(axes)}", [body]
        )

    return define_primitive(name, abstract_eval, lower, traits=traits)


def _any_dtype(dtype) -> bool:
    return True


reduce_sum_p = _monoid_reduction(
    "reduce_sum", "sum", "stablehlo.add", is_number, "numeric", traits=("reduction",)
)
reduce_prod_p = _monoid_reduction(
    "reduce_prod",
    "prod",
    "stablehlo.multiply",
    is_number,
    "numeric",
    traits=("reduction",),
)
reduce_max_p = _monoid_reduction(
    "reduce_max", "max", "stablehlo.maximum", _any_dtype, "any", traits=("reduction",)
)
reduce_min_p = _monoid_reduction(
    "reduce_min", "min", "stablehlo.minimum", _any_dtype, "any", traits=("reduction",)
)


def _bitwise_reduction(op: str, traits: tuple = ()):
    """reduce_and, reduce_or and reduce_xor: integer or boolean operands."""
    return _monoid_reduction(
        f"reduce_{op}",
        op,
        f"stablehlo.{op}",
        lambda d: d == dtypes.bool_ or dtypes.is_integer(d),
        "integer or boolean",
        traits=traits,
    )


reduce_and_p = _bitwise_reduction("and", traits=("reduction",))
reduce_or_p = _bitwise_reduction("or", traits=("reduction",))
reduce_xor_p = _bitwise_reduction("xor")


def _reduction_batch_rule(primitive):
    """Reduces the same axes of each example: the batch axis stays where it is."""

    def rule(axis_size, vals, dims, *, axes, **params):
        (x,), (bdim,) = vals, dims
        axes = shift_axes(axes, bdim)
        out_bdim = bdim - sum(a < bdim for a in axes)
        return primitive.bind(x, axes=axes, **params), out_bdim

    return rule


for _p in (
    reduce_sum_p,
    reduce_prod_p,
    reduce_max_p,
    reduce_min_p,
    reduce_and_p,
    reduce_or_p,
    reduce_xor_p,
):
    batch_rules[_p] = _reduction_batch_rule(_p)


# ---- derivatives of the reductions --------------------------------------------
def _kept_dims(ndim: int, axes) -> tuple:
    return tuple(i for i in range(ndim) if i not in axes)


def _expand_reduced(y, x_aval: ShapedArray, axes):
    """A reduced value broadcast back to the operand's shape."""
    return broadcast_in_dim_p.bind(
        y, shape=x_aval.shape, broadcast_dimensions=_kept_dims(x_aval.ndim, axes)
    )


def _as_dtype_of(pred, like):
    return ew.convert_element_type_p.bind(
        pred, new_dtype=aval_of(like).dtype, weak_type=False
    )


defjvp_linear(reduce_sum_p)


def _reduce_sum_transpose(ct, x, *, axes):
    """The cotangent broadcast back, laid out as the operand (as JAX's)."""
    from olympus.lax.sharding import laid_out_like

    return [laid_out_like(_expand_reduced(ct, x.aval, axes), x.aval)]


transpose_rules[reduce_sum_p] = _reduce_sum_transpose


def _extremum_jvp(primitive):
    """The tangent at the extremal elements, averaged over ties."""

    def partial(t, ans, x, *, axes):
        at_extremum = _as_dtype_of(
            ew.eq_p.bind(x, _expand_reduced(ans, aval_of(x), axes)), x
        )
        count = reduce_sum_p.bind(at_extremum, axes=axes)
        picked = reduce_sum_p.bind(ew.mul_p.bind(t, at_extremum), axes=axes)
        return ew.div_p.bind(picked, count)

    defjvp(primitive, partial)


def _reduce_prod_partial(t, ans, x, *, axes):
    """d prod / dx_i = product of the others, exact when x has zeros:
    with no zero it is ans / x_i; with one zero, only that element's is
    nonzero (the product of the nonzeros); with more, all are zero."""
    x_aval = aval_of(x)
    zero, one = np.zeros((), x_aval.dtype)[()], np.ones((), x_aval.dtype)[()]
    is_zero_x = ew.eq_p.bind(x, zero)
    ones = broadcast_in_dim_p.bind(one, shape=x_aval.shape, broadcast_dimensions=())
    nonzero_x = ew.select_n_p.bind(is_zero_x, x, ones)
    prod_nonzero = _expand_reduced(
        reduce_prod_p.bind(nonzero_x, axes=axes), x_aval, axes
    )
    zeros_count = _expand_reduced(
        reduce_sum_p.bind(_as_dtype_of(is_zero_x, x), axes=axes), x_aval, axes
    )
    no_zero = ew.eq_p.bind(zeros_count, zero)
    lone_zero = ew.and_p.bind(ew.eq_p.bind(zeros_count, one), is_zero_x)
    others = ew.mul_p.bind(_as_dtype_of(lone_zero, x), prod_nonzero)
    others = ew.select_n_p.bind(no_zero, others, ew.div_p.bind(prod_nonzero, nonzero_x))
    return reduce_sum_p.bind(ew.mul_p.bind(t, others), axes=axes)


_extremum_jvp(reduce_max_p)
_extremum_jvp(reduce_min_p)
defjvp(reduce_prod_p, _reduce_prod_partial)
defjvp_zero(reduce_and_p)
defjvp_zero(reduce_or_p)
defjvp_zero(reduce_xor_p)


# ---- argmax / argmin ---------------------------------------------------------
def _arg_reduction(name: str, direction: str, kind: str):
    def abstract_eval(x: ShapedArray, *, axes, index_dtype):
        axes = check_axes(name, axes, x.ndim)
        if len(axes) != 1:
            raise OlympusTypeError(f"{name} reduces exactly one axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise OlympusTypeError(
                f"{name}: cannot reduce an empty axis of {x.str_short()}"
            )
        if not dtypes.is_integer(index_dtype):
            raise OlympusTypeError(f"{name}: index_dtype must be an integer type")
        if dtypes.is_complex(x.dtype):
            raise OlympusTypeError(f"{name}: complex numbers are not ordered")
        return ShapedArray(_reduced_shape(x, axes), index_dtype)

    def lower(ctx, x, *, axes, index_dtype):
        src = ctx.avals_in[0]
        val, idx = ShapedArray((), src.dtype), ShapedArray((), index_dtype)
        em = ctx.emitter
        iota = em.op(
            "stablehlo.iota",
            [],
            [src.update(dtype=index_dtype)],
            f"iota_dimension = {axes[0]} : i64",
        )[0]
        init_v = em.constant(identity_element(kind, src.dtype), val)
        init_i = em.constant(np.zeros((), index_dtype), idx)
        pred = ShapedArray((), dtypes.bool_)

        def body(e, av, ai, bv, bi):
            # NaN wins (it propagates); on ties the smaller index wins.
            better = compare(e, av, bv, direction, src.dtype)
            a_nan = compare(e, av, av, "NE", src.dtype)
            pick_v = e.op("stablehlo.or", [better, a_nan], [pred])[0]
            tie = compare(e, av, bv, "EQ", src.dtype)
            first = compare(e, ai, bi, "LT", index_dtype)
            tie_first = e.op("stablehlo.and", [tie, first], [pred])[0]
            pick_i = e.op("stablehlo.or", [pick_v, tie_first], [pred])[0]
            v = e.op("stablehlo.select", [pick_v, av, bv], [val])[0]
            i = e.op("stablehlo.select", [pick_i, ai, bi], [idx])[0]
            return [v, i]

        region = em.region([val, idx, val, idx], body)
        out_v = ShapedArray(ctx.aval_out.shape, src.dtype)
        outs = em.op(
            "stablehlo.reduce",
            [x, iota, init_v, init_i],
            [out_v, ctx.aval_out],
            f"dimensions = {i64_array(axes)}",
            [region],
        )
        return outs[1]

    return define_primitive(name, abstract_eval, lower)


argmax_p = _arg_reduction("argmax", "GT", "max")
argmin_p = _arg_reduction("argmin", "LT", "min")
batch_rules[argmax_p] = _reduction_batch_rule(argmax_p)
batch_rules[argmin_p] = _reduction_batch_rule(argmin_p)

defjvp_zero(argmax_p)
defjvp_zero(argmin_p)


# ---- dot_general -------------------------------------------------------------
def default_matmul_precision(new_val: str):
    """A context setting the precision of matmuls that do not name one.

    Matmuls (dot, einsum, @, conv) traced inside whose `precision=` is None
    get `new_val`: a way to trade speed for accuracy on accelerators without
    editing the model.

    Args:
      new_val: 'bfloat16', 'tensorfloat32', 'float32', or 'default', 'high',
        'highest' (JAX's parameter name).

    Returns:
      A context manager.

    Raises:
      ConfigValueError: `new_val` is not one of those names.

    Example:
      >>> with olympus.default_matmul_precision("float32"):
      ...     print(olympus.make_olympuspr(jnp.dot)(jnp.ones(2), jnp.ones(2)))
      { lambda ; a:f32[2] b:f32[2]. let
          c:f32[] = dot_general[dimension_numbers=(((0,), (0,)), ((), ())) precision=('HIGHEST', 'HIGHEST') preferred_element_type=None] a b
        in (c,) }
    """
    canonical_precision(new_val, "default_matmul_precision")  # a bad name fails here
    return config.override("olympus_default_matmul_precision", new_val)


class Precision(enum.Enum):
    """XLA's precision of a matmul's operands (`precision=` of `dot_general`):
    DEFAULT may compute in bfloat16 (TF32 on GPUs), HIGH in three bfloat16
    passes, HIGHEST in full float32."""

    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


class PrecisionError(ValueError):
    """A `precision=` that is not a lax.Precision, one of its names, or a pair."""


_PRECISION_NAMES = {
    "default": "DEFAULT",
    "fastest": "DEFAULT",
    "bfloat16": "DEFAULT",
    "high": "HIGH",
    "tensorfloat32": "HIGH",
    "bfloat16_3x": "HIGH",
    "highest": "HIGHEST",
    "float32": "HIGHEST",
}


def _one_precision(p, api: str) -> str:
    if isinstance(p, Precision):
        return p.value
    if isinstance(p, str) and p.lower() in _PRECISION_NAMES:
        return _PRECISION_NAMES[p.lower()]
    where = user_source_info()
    at = f" at {where}" if where is not None else ""
    raise PrecisionError(
        f"{api}: unknown precision {p!r}{at}; use None, lax.Precision.DEFAULT/HIGH/"
        f"HIGHEST, one of {', '.join(repr(n) for n in _PRECISION_NAMES)}, or a pair of them"
    )


def precision_attr(precision) -> str:
    """XLA's precision config of a dot or convolution (one entry per operand)
    as an attribute to append; "" for none."""
    if precision is None:
        return ""
    configs = ", ".join(f"#stablehlo<precision {p}>" for p in precision)
    return f", precision_config = [{configs}]"


def canonical_precision(precision, api: str = "dot_general") -> tuple[str, str] | None:
    """`precision=` as dot_general's param: None, or a (lhs, rhs) pair of names
    of Precision members (printed, and parsed back, as a tuple of strings).
    None takes `olympus_default_matmul_precision` (`default_matmul_precision`)."""
    if precision is None:
        precision = config.read("olympus_default_matmul_precision")
        api = "olympus_default_matmul_precision"
        if precision is None:
            return None
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return (_one_precision(precision[0], api), _one_precision(precision[1], api))
    one = _one_precision(precision, api)
    return (one, one)


def _dot_general_abstract_eval(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
):
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = same_dtypes("dot_general", (lhs, rhs))
    check_axes("dot_general", tuple(lc) + tuple(lb), lhs.ndim)
    check_axes("dot_general", tuple(rc) + tuple(rb), rhs.ndim)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise OlympusTypeError(
            f"dot_general: dimension_numbers {dimension_numbers} pair unequal numbers of dimensions"
        )
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise OlympusTypeError(
                f"dot_general: dimension {a} of {lhs.str_short()} (size {lhs.shape[a]}) "
                f"does not match dimension {b} of {rhs.str_short()} (size {rhs.shape[b]})"
            )
    batch = [lhs.shape[d] for d in lb]
    lhs_free = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
    rhs_free = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
    out_dtype = preferred_element_type if preferred_element_type is not None else dtype
    return ShapedArray(
        batch + lhs_free + rhs_free, out_dtype, lhs.weak_type and rhs.weak_type
    )


def _dot_general_lower(
    ctx, lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None
):
    (lc, rc), (lb, rb) = dimension_numbers
    fields = []
    for key, dims in (
        ("lhs_batching_dimensions", lb),
        ("rhs_batching_dimensions", rb),
        ("lhs_contracting_dimensions", lc),
        ("rhs_contracting_dimensions", rc),
    ):
        if len(dims):
            fields.append(f"{key} = [{', '.join(map(str, dims))}]")
    attrs = f"dot_dimension_numbers = #stablehlo.dot<{', '.join(fields)}>"
    if precision is None:  # olympus.hint(x, precision=...) on an operand
        hinted = [h.get("precision") for h in ctx.operand_hints]
        if any(hinted):
            precision = tuple(p or "DEFAULT" for p in hinted)
    return ctx.op(
        "stablehlo.dot_general", [lhs, rhs], attrs + precision_attr(precision)
    )


dot_general_p = define_primitive(
    "dot_general", _dot_general_abstract_eval, _dot_general_lower
)


def _dot_general_batch_rule(axis_size, vals, dims, *, dimension_numbers, **params):
    """No operand is transposed. Both batched: the batch axes become the first
    batch dimension. One batched: its batch axis is a free dimension, which the
    output lists after the batch dims (and, for rhs, after the lhs free dims)."""
    (lhs, rhs), (lhs_bdim, rhs_bdim) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs_bdim is not None:
        lc, lb = shift_axes(lc, lhs_bdim), shift_axes(lb, lhs_bdim)
    if rhs_bdim is not None:
        rc, rb = shift_axes(rc, rhs_bdim), shift_axes(rb, rhs_bdim)
    if lhs_bdim is not None and rhs_bdim is not None:
        dn = ((lc, rc), ((lhs_bdim, *lb), (rhs_bdim, *rb)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)), **params)
    if lhs_bdim is not None:
        return out, len(lb) + _free_dims_before(lhs_bdim, lc, lb)
    lhs_free = aval_of(lhs).ndim - len(lc) - len(lb)
    return out, len(lb) + lhs_free + _free_dims_before(rhs_bdim, rc, rb)


def _free_dims_before(axis: int, contracting, batch) -> int:
    return sum(1 for d in range(axis) if d not in contracting and d not in batch)


batch_rules[dot_general_p] = _dot_general_batch_rule


# ---- derivatives of dot_general ---------------------------------------------
def _argsort(values) -> list[int]:
    """np.argsort of a few axis numbers, in Python (a tenth of NumPy's cost
    on a list this short; every dot_general's transpose asks twice)."""
    return sorted(range(len(values)), key=values.__getitem__)


def _free_dims(ndim: int, contract, batch) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_transpose_lhs(
    ct, x_aval: ShapedArray, y, dimension_numbers, swap_ans=False, precision=None
):
    """The cotangent of dot_general's lhs: contract ct with y over y's free
    dims, then permute the result into lhs's dimension order."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    y_ndim = aval_of(y).ndim
    x_kept = _free_dims(x_aval.ndim, x_contract, x_batch)
    y_kept = _free_dims(y_ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = blocks(len(x_batch), len(y_kept), len(x_kept))
    else:
        ans_batch, _, ans_y = blocks(len(x_batch), len(x_kept), len(y_kept))
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(y_batch)))
    x_contract_by_y = [x_contract[i] for i in _argsort(y_contract)]
    out_axes = _argsort(list(x_batch) + x_kept + x_contract_by_y)
    if aval_of(ct).dtype != aval_of(y).dtype:
        ct = ew.convert_element_type_p.bind(
            ct, new_dtype=aval_of(y).dtype, weak_type=False
        )
    out = dot_general_p.bind(
        ct, y, dimension_numbers=dims, precision=precision, preferred_element_type=None
    )
    perm = tuple(int(i) for i in out_axes)
    if perm != tuple(range(len(perm))):
        out = transpose_p.bind(out, permutation=perm)
    if aval_of(out).dtype != x_aval.dtype:
        out = ew.convert_element_type_p.bind(
            out, new_dtype=x_aval.dtype, weak_type=False
        )
    return out


def _dot_transpose_rhs(ct, x, y_aval: ShapedArray, dimension_numbers, precision=None):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    swapped_precision = None if precision is None else precision[::-1]
    return _dot_transpose_lhs(
        ct, y_aval, x, swapped, swap_ans=True, precision=swapped_precision
    )


def _dot_general_transpose(
    ct, lhs, rhs, *, dimension_numbers, precision=None, **params
):
    """The backward pass's matmuls keep the forward one's precision."""
    if is_undefined(lhs):
        return [
            _dot_transpose_lhs(
                ct, lhs.aval, rhs, dimension_numbers, precision=precision
            ),
            None,
        ]
    return [None, _dot_transpose_rhs(ct, lhs, rhs.aval, dimension_numbers, precision)]


defjvp(
    dot_general_p,  # bilinear: d(x . y) = dx . y + x . dy
    lambda t, ans, x, y, **params: dot_general_p.bind(t, y, **params),
    lambda t, ans, x, y, **params: dot_general_p.bind(x, t, **params),
)
transpose_rules[dot_general_p] = _dot_general_transpose
