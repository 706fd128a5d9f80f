"""Windowed reductions for pooling: reduce_window_sum and reduce_window_max
(window dimensions, strides and explicit padding per axis).

The sum is linear; its transpose spreads each cotangent over its window
(a strided pad, then a window sum). The max's tangent is the tangent at the
first maximal position of each window, found by walking the window offsets
as strided slices, so the derivative is built from primitives that already
transpose.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from olympus.backends.xla.lowering import i64_array
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax.base import define_primitive
from olympus.lax.op_docs import with_sections
from olympus.lax.elementwise import and_p, eq_p, not_p, or_p, select_n_p
from olympus.lax.shapes import broadcast_in_dim_p, pad_p, slice_p
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules
from olympus.transforms.ad_util import Zero, is_zero
from olympus.transforms.jvp import defjvp_linear, jvp_rules
from olympus.transforms.linearize import transpose_rules


def _window_shape(
    name, x: ShapedArray, window_dimensions, window_strides, padding
) -> tuple:
    n = x.ndim
    if not len(window_dimensions) == len(window_strides) == len(padding) == n:
        raise OlympusTypeError(
            f"{name}: need one window size, stride and (lo, hi) pad per "
            f"axis of {x.str_short()}"
        )
    out = []
    for size, w, s, (lo, hi) in zip(
        x.shape, window_dimensions, window_strides, padding
    ):
        span = size + lo + hi
        if w < 1 or s < 1 or span < w:
            raise OlympusTypeError(
                f"{name}: window {tuple(window_dimensions)} with strides "
                f"{tuple(window_strides)} does not fit {x.str_short()} "
                f"padded by {tuple(padding)}"
            )
        out.append((span - w) // s + 1)
    return tuple(out)


def _abstract_eval(name):
    def abstract_eval(x: ShapedArray, *, window_dimensions, window_strides, padding):
        shape = _window_shape(name, x, window_dimensions, window_strides, padding)
        return ShapedArray(shape, x.dtype, x.weak_type)

    return abstract_eval


def lowest(dtype):
    """The identity of max: -inf (or a float8's lowest), the smallest integer, or False."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        return np.False_
    if dtypes.is_integer(dtype):
        return np.iinfo(dtype).min
    return dtypes.float_lowest(dtype)


def _lower(hlo_name, init):
    def lower(ctx, x, *, window_dimensions, window_strides, padding):
        scalar = ShapedArray((), ctx.avals_in[0].dtype)
        init_value = ctx.emitter.constant(
            np.asarray(init(scalar.dtype), scalar.dtype), scalar
        )
        region = ctx.emitter.region(
            [scalar, scalar], lambda em, a, b: em.op(hlo_name, [a, b], [scalar])
        )
        pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
        attrs = (
            f"window_dimensions = {i64_array(window_dimensions)}, "
            f"window_strides = {i64_array(window_strides)}, "
            f"padding = dense<[{pads}]> : tensor<{len(padding)}x2xi64>"
        )
        return ctx.op("stablehlo.reduce_window", [x, init_value], attrs, [region])

    return lower


reduce_window_sum_p = define_primitive(
    "reduce_window_sum",
    _abstract_eval("reduce_window_sum"),
    _lower("stablehlo.add", lambda dtype: np.zeros((), dtype)[()]),
)
reduce_window_max_p = define_primitive(
    "reduce_window_max",
    _abstract_eval("reduce_window_max"),
    _lower("stablehlo.maximum", lowest),
)


def _batch_rule(prim):
    """The batch axis gets a window of 1: examples never mix."""

    def rule(axis_size, vals, dims, *, window_dimensions, window_strides, padding):
        (x,), (bdim,) = vals, dims
        out = prim.bind(
            x,
            window_dimensions=_insert(window_dimensions, bdim, 1),
            window_strides=_insert(window_strides, bdim, 1),
            padding=_insert(padding, bdim, (0, 0)),
        )
        return out, bdim

    return rule


def _insert(seq, i, value) -> tuple:
    return (*seq[:i], value, *seq[i:])


batch_rules[reduce_window_sum_p] = _batch_rule(reduce_window_sum_p)
batch_rules[reduce_window_max_p] = _batch_rule(reduce_window_max_p)


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding):
    """Each input position receives the cotangents of the windows covering it:
    lay the cotangent out on the strided grid, pad by the window, and sum."""
    in_shape, out_shape = x.aval.shape, aval_of(ct).shape
    config = []
    for size, w, s, (lo, _), n in zip(
        in_shape, window_dimensions, window_strides, padding, out_shape
    ):
        before = w - lo - 1
        after = size + w - 1 - ((n - 1) * s + 1) - before
        config.append((before, after, s - 1))
    zero = np.zeros((), aval_of(ct).dtype)[()]
    spread = pad_p.bind(ct, zero, padding_config=tuple(config))
    ones = (1,) * len(in_shape)
    return [
        reduce_window_sum_p.bind(
            spread,
            window_dimensions=tuple(window_dimensions),
            window_strides=ones,
            padding=((0, 0),) * len(in_shape),
        )
    ]


defjvp_linear(reduce_window_sum_p)
transpose_rules[reduce_window_sum_p] = _reduce_window_sum_transpose


def _window_slices(x, fill, window_dimensions, window_strides, padding, out_shape):
    """For each window offset, the strided slice of padded `x` it sees."""
    padded = pad_p.bind(
        x,
        np.asarray(fill, aval_of(x).dtype)[()],
        padding_config=tuple((lo, hi, 0) for lo, hi in padding),
    )
    for offset in itertools.product(*(range(w) for w in window_dimensions)):
        limits = tuple(
            o + (n - 1) * s + 1 for o, n, s in zip(offset, out_shape, window_strides)
        )
        yield slice_p.bind(
            padded,
            start_indices=offset,
            limit_indices=limits,
            strides=tuple(window_strides),
        )


def _reduce_window_max_jvp(
    primals, tangents, *, window_dimensions, window_strides, padding
):
    (x,), (t,) = primals, tangents
    window = (window_dimensions, window_strides, padding)
    out = reduce_window_max_p.bind(
        x,
        window_dimensions=window_dimensions,
        window_strides=window_strides,
        padding=padding,
    )
    if is_zero(t):
        return out, Zero(aval_of(out))
    shape = aval_of(out).shape
    found = broadcast_in_dim_p.bind(np.False_, shape=shape, broadcast_dimensions=())
    t_out = broadcast_in_dim_p.bind(
        np.zeros((), aval_of(t).dtype)[()], shape=shape, broadcast_dimensions=()
    )
    for x_at, t_at in zip(
        _window_slices(x, lowest(aval_of(x).dtype), *window, shape),
        _window_slices(t, 0, *window, shape),
    ):
        first = and_p.bind(eq_p.bind(x_at, out), not_p.bind(found))
        t_out = select_n_p.bind(first, t_out, t_at)
        found = or_p.bind(found, first)
    return out, t_out


jvp_rules[reduce_window_max_p] = _reduce_window_max_jvp


# ---- public functions ------------------------------------------------------------
def _pads(padding, shape, window_dimensions, window_strides) -> tuple:
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    if padding.upper() == "VALID":
        return ((0, 0),) * len(shape)
    pads = []
    for size, w, s in zip(shape, window_dimensions, window_strides):
        total = max((-(-size // s) - 1) * s + w - size, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


# The sections reduce_window_sum and reduce_window_max share (op_docs.with_sections).
_ARGS = """Args:
  operand: an array.
  window_dimensions: the window's size per axis.
  window_strides: the strides; None for 1.
  padding: 'SAME', 'VALID' or (lo, hi) pairs."""
_RETURNS = "Returns:\n  An array of operand's dtype, one entry per window."
_RAISES = "Raises:\n  OlympusTypeError: the window does not fit the padded operand."


def _bind(prim, operand, window_dimensions: Sequence[int], window_strides, padding):
    shape = aval_of(operand).shape
    window = tuple(int(w) for w in window_dimensions)
    strides = tuple(int(s) for s in (window_strides or (1,) * len(shape)))
    return prim.bind(
        operand,
        window_dimensions=window,
        window_strides=strides,
        padding=_pads(padding, shape, window, strides),
    )


@with_sections(_ARGS, _RETURNS, _RAISES)
def reduce_window_sum(operand, window_dimensions, window_strides=None, padding="VALID"):
    """Sums over sliding windows (sum pooling).

    Padded entries add nothing (they are 0).

    Example:
      >>> lax.reduce_window_sum(np.float32([1, 2, 3, 4]), (2,), (2,))
      Array([3., 7.], dtype=float32)
    """
    return _bind(
        reduce_window_sum_p, operand, window_dimensions, window_strides, padding
    )


@with_sections(_ARGS, _RETURNS, _RAISES)
def reduce_window_max(operand, window_dimensions, window_strides=None, padding="VALID"):
    """Maxima over sliding windows (max pooling).

    Padding never wins (it is -inf), so a window of padding alone gives -inf.

    Example:
      >>> lax.reduce_window_max(np.float32([1, 5, 3, 4]), (2,), (2,))
      Array([5., 4.], dtype=float32)
    """
    return _bind(
        reduce_window_max_p, operand, window_dimensions, window_strides, padding
    )
