"""Reference rules of sort, top_k, approx_top_k, conv_general_dilated and reduce_window, in NumPy.

Written from StableHLO's definitions: sort orders floats by total order (NaNs
last) and is stable; convolution dilates, pads (negative padding crops), then
slides the dilated kernel with the window strides, per feature group.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from olympus.backends.reference.table import rule
from olympus.ir import dtypes


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """An integer key whose order is IEEE total order of JAX's canonical keys
    (-inf < ... < -0.0 == 0.0 < ... < inf < NaN)."""
    if x.dtype.kind in "iub":  # integers and bools already order correctly
        return x.astype(np.int64)
    x = np.where(x == 0, np.zeros_like(x), x)  # -0.0 ties with 0.0, as in JAX
    x = np.where(np.isnan(x), np.full_like(x, np.nan), x)  # every NaN sorts last
    bits = 8 * x.dtype.itemsize
    as_int = x.view(np.dtype(f"int{bits}")).astype(np.int64)
    magnitude_mask = (1 << (bits - 1)) - 1
    return np.where(as_int < 0, -(as_int & magnitude_mask) - 1, as_int)


@rule("sort")
def _sort(*operands, dimension, is_stable, num_keys):
    moved = [np.moveaxis(o, dimension, -1) for o in operands]
    keys = [_total_order_key(m) for m in moved[:num_keys]]
    outs = [np.empty_like(m) for m in moved]
    for index in np.ndindex(*moved[0].shape[:-1]):
        order = np.lexsort([k[index] for k in reversed(keys)])  # lexsort is stable
        for out, m in zip(outs, moved):
            out[index] = m[index][order]
    return [np.moveaxis(o, -1, dimension) for o in outs]


@rule("top_k")
def _top_k(x, *, k, axis):
    """The first k of a stable sort by descending IEEE total order, in which
    +NaN > inf and 0.0 > -0.0 (XLA's TopK, unlike sort, keeps signs apart)."""
    moved = np.moveaxis(x, axis, -1)
    if moved.dtype.kind == "f" or moved.dtype == dtypes.bfloat16:
        bits = 8 * moved.dtype.itemsize
        as_int = moved.view(np.dtype(f"int{bits}")).astype(np.int64)
        key = np.where(as_int < 0, -(as_int & ((1 << (bits - 1)) - 1)) - 1, as_int)
    else:
        key = moved.astype(np.int64)
    order = np.argsort(~key, axis=-1, kind="stable")[..., :k]  # ~key = -key - 1
    values = np.take_along_axis(moved, order, axis=-1)
    return [
        np.moveaxis(values, -1, axis),
        np.moveaxis(order.astype(np.int32), -1, axis),
    ]


@rule("approx_top_k")
def _approx_top_k(x, *, k, reduction_dimension, is_max_k, **_):
    """k = 1: XLA's reduce from (-inf, -1) keeping the left pair where `>`
    holds, in order; k > 1: a stable sort by value (XLA's is unstable, and NaN
    unordered: the two agree where there are no ties and no NaN)."""
    moved = np.moveaxis(x, reduction_dimension, -1)
    if k == 1:
        worst = -np.inf if is_max_k else np.inf
        values = np.full(moved.shape[:-1], worst, moved.dtype)
        order = np.full(moved.shape[:-1], -1, np.int64)
        for i in range(moved.shape[-1]):
            column = moved[..., i]
            keep = values > column if is_max_k else values < column
            values, order = np.where(keep, values, column), np.where(keep, order, i)
        order = order[..., None]
    else:
        key = -moved.astype(np.float64) if is_max_k else moved.astype(np.float64)
        order = np.argsort(key, axis=-1, kind="stable")[..., :k]
    values = np.take_along_axis(moved, order, axis=-1)
    return [
        np.moveaxis(values, -1, reduction_dimension),
        np.moveaxis(order.astype(np.int32), -1, reduction_dimension),
    ]


def _dilate(x: np.ndarray, axes, factors) -> np.ndarray:
    for axis, r in zip(axes, factors):
        if r == 1 or x.shape[axis] == 0:
            continue
        shape = list(x.shape)
        shape[axis] = 1 + r * (shape[axis] - 1)
        out = np.zeros(shape, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, r)
        out[tuple(index)] = x
        x = out
    return x


def _pad(x: np.ndarray, axes, padding, value=0) -> np.ndarray:
    for axis, (lo, hi) in zip(axes, padding):
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=value)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


@rule("conv_general_dilated")
def _conv(
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision=None,
):
    lspec, rspec, ospec = dimension_numbers
    lhs = np.transpose(lhs, lspec)  # (N, C, *spatial)
    rhs = np.transpose(rhs, rspec)  # (O, I, *window)
    spatial = tuple(range(2, lhs.ndim))
    lhs = _pad(_dilate(lhs, spatial, lhs_dilation), spatial, padding)
    rhs = _dilate(rhs, spatial, rhs_dilation)
    windows = sliding_window_view(lhs, rhs.shape[2:], axis=spatial)
    windows = windows[
        (slice(None), slice(None), *(slice(None, None, s) for s in window_strides))
    ]
    # feature group g: input features block g -> output features block g;
    # batch group b: input batch block b -> output features block b
    groups, batch_groups = feature_group_count, batch_group_count
    per_in, per_batch = rhs.shape[1], lhs.shape[0] // batch_groups
    per_out = rhs.shape[0] // (groups * batch_groups)
    outs = []
    for g in range(groups * batch_groups):
        f, b = g % groups, g // groups
        w = windows[b * per_batch : (b + 1) * per_batch, f * per_in : (f + 1) * per_in]
        outs.append(
            _window_product(w, rhs[g * per_out : (g + 1) * per_out], len(spatial))
        )
    result = np.concatenate(outs, axis=1).astype(lhs.dtype)
    return np.transpose(result, np.argsort(ospec))


def _window_product(w: np.ndarray, k: np.ndarray, n_sp: int) -> np.ndarray:
    """w: (N, I, *out, *K), k: (O, I, *K) -> (N, O, *out), summed in float64."""
    w_axes = [1] + list(range(2 + n_sp, 2 + 2 * n_sp))
    k_axes = [1] + list(range(2, 2 + n_sp))
    out = np.tensordot(
        w.astype(np.float64) if w.dtype.kind == "f" else w, k, (w_axes, k_axes)
    )
    return np.moveaxis(out, -1, 1)


def _reduce_window(reduce, init):
    def rule_fn(x, *, window_dimensions, window_strides, padding):
        axes = tuple(range(x.ndim))
        x = _pad(x, axes, padding, init(x.dtype))
        windows = sliding_window_view(x, window_dimensions)
        windows = windows[tuple(slice(None, None, s) for s in window_strides)]
        return reduce(windows, axis=tuple(range(x.ndim, 2 * x.ndim))).astype(x.dtype)

    return rule_fn


def _lowest(dtype):
    if dtype == np.bool_:
        return False
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return dtypes.float_lowest(dtype)  # float8 types without -inf: their lowest


def _reduce_window_sum(x, *, window_dimensions, window_strides, padding):
    """Sums over windows; a running sum along one axis (cumsum's form) in
    floating point adds in the order XLA's rewrite of it does, so its
    rounding is the compiled program's."""
    axis = _running_sum_axis(x.shape, window_dimensions, window_strides, padding)
    if axis is None or x.dtype.kind not in "fc" and x.dtype != dtypes.bfloat16:
        return _plain_window_sum(
            x, window_dimensions=window_dimensions, window_strides=window_strides,
            padding=padding,
        )  # fmt: skip
    reverse = tuple(padding[axis]) == (0, x.shape[axis] - 1)
    return np.moveaxis(_running_sum(np.moveaxis(x, axis, -1), reverse), -1, axis)


def _running_sum_axis(shape, window, strides, padding):
    """The axis of a running sum (window the whole axis, padded n - 1 on one
    side, unit strides, every other axis untouched), or None."""
    axes = [d for d, w in enumerate(window) if w != 1]
    if len(axes) != 1 or any(s != 1 for s in strides):
        return None
    (axis,) = axes
    n = shape[axis]
    pads = [tuple(p) for p in padding]
    others_plain = all(pads[d] == (0, 0) for d in range(len(shape)) if d != axis)
    if window[axis] != n or n < 2 or not others_plain:
        return None
    return axis if pads[axis] in ((n - 1, 0), (0, n - 1)) else None


_XLA_SCAN_BLOCK = 16  # XLA's CPU rewrite scans blocks of this many elements


def _running_sum(x, reverse: bool):
    """Running sums along the last axis as XLA computes them: blocks of 16
    (the last padded with zeros) summed in order, the blocks' totals scanned
    the same way, then added to each block."""
    n, base = x.shape[-1], _XLA_SCAN_BLOCK
    if n <= base:
        return _window_sums_in_order(x, reverse)
    m = -(-n // base)
    pad = np.zeros(x.shape[:-1] + (m * base - n,), x.dtype)
    blocks = np.concatenate([x, pad], -1).reshape(x.shape[:-1] + (m, base))
    inner = _window_sums_in_order(blocks, reverse)
    totals = _running_sum(inner[..., 0] if reverse else inner[..., -1], reverse)
    zero = np.zeros(x.shape[:-1] + (1,), x.dtype)
    if reverse:
        others = np.concatenate([totals[..., 1:], zero], -1)
    else:
        others = np.concatenate([zero, totals[..., :-1]], -1)
    out = (inner + others[..., None]).astype(x.dtype)
    return out.reshape(x.shape[:-1] + (m * base,))[..., :n]


def _window_sums_in_order(x, reverse: bool):
    """Each window's sum, added from its first element on as XLA's loop does:
    prefixes share one running sum; each suffix is summed on its own."""
    out = np.empty_like(x)
    n = x.shape[-1]
    acc = np.zeros(x.shape[:-1], x.dtype)
    for i in range(n):
        if reverse:
            acc = np.zeros(x.shape[:-1], x.dtype)
            for k in range(i, n):
                acc = (acc + x[..., k]).astype(x.dtype)
        else:
            acc = (acc + x[..., i]).astype(x.dtype)
        out[..., i] = acc
    return out


_plain_window_sum = _reduce_window(np.sum, lambda dtype: 0)
rule("reduce_window_sum")(_reduce_window_sum)
rule("reduce_window_max")(_reduce_window(np.max, _lowest))
