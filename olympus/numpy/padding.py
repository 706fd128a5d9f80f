"""jnp.pad with all of np.pad's modes.

Axes are padded one after another, so the corners of later axes see the
values padded along earlier ones, exactly as np.pad does. Every mode is
built from static slices, flips and concatenations (and reductions for
the statistic modes), so all of them differentiate and batch.
"""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy import rearranging, shaping
from olympus.numpy import nanfunctions, reductions
from olympus.numpy.compiled import compiled
from olympus.numpy.core import asarray, astype, aval_of, broadcast_to, to_operand
from olympus.numpy.functional import apply_along_axis
from olympus.numpy.indexing import slice_along
from olympus.numpy.ufuncs import floor_divide
from olympus.numpy.ufuncs import round as round_

__all__ = ["pad"]

_MODES = (
    "constant",
    "edge",
    "reflect",
    "symmetric",
    "wrap",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
    "empty",
)


class PadModeError(ValueError):
    """jnp.pad got an unknown mode, an option that mode does not take, or
    a non-constant mode for an empty axis."""


def _per_axis_pairs(value, ndim: int, name: str, dtype=np.int64) -> np.ndarray:
    """`pad_width`-style argument as an (ndim, 2) table: a scalar, one pair,
    one pair per axis, or a dict {axis: pair} (NumPy 2.3+)."""
    if isinstance(value, dict):
        table = np.zeros((ndim, 2), dtype)
        for axis, pair in value.items():
            table[axis % ndim] = np.broadcast_to(np.asarray(pair, dtype), (2,))
        return table
    try:
        return np.broadcast_to(np.asarray(value, dtype), (ndim, 2))
    except ValueError:
        raise PadModeError(
            f"jnp.pad: {name}={value!r} does not fit an array of {ndim} "
            f"dimensions (expected a scalar, a pair or {ndim} pairs)"
        ) from None


def _repeat_along(piece, axis: int, count: int):
    """`piece` (size 1 along `axis`) repeated `count` times along it."""
    shape = list(aval_of(piece).shape)
    shape[axis] = count
    return broadcast_to(piece, tuple(shape))


def _join(left, x, right, axis: int):
    parts = [
        p for p in (left, x, right) if p is not None and aval_of(p).shape[axis] > 0
    ]
    return shaping.concatenate(parts, axis=axis) if len(parts) > 1 else parts[0]


# ---- the modes, one axis at a time ----------------------------------------------------
def _constant(x, axis, lo, hi, values):
    before, after = values
    lo_part = _repeat_along(_constant_slab(x, axis, before), axis, lo) if lo else None
    hi_part = _repeat_along(_constant_slab(x, axis, after), axis, hi) if hi else None
    return _join(lo_part, x, hi_part, axis)


def _constant_slab(x, axis, value):
    shape = list(aval_of(x).shape)
    shape[axis] = 1
    value = lax.convert_element_type(to_operand(value), aval_of(x).dtype)
    return lax.broadcast_in_dim(value, tuple(shape), ())


def _edge(x, axis, lo, hi):
    n = aval_of(x).shape[axis]
    return _join(
        _repeat_along(slice_along(x, axis, 0, 1), axis, lo) if lo else None,
        x,
        _repeat_along(slice_along(x, axis, n - 1, n), axis, hi) if hi else None,
        axis,
    )


def _wrap(x, axis, lo, hi):
    """Periodic continuation: index i of the result reads (i - lo) mod n."""
    n = aval_of(x).shape[axis]
    pieces, position = [], -lo
    while position < n + hi:
        start = position % n
        length = min(n - start, n + hi - position)
        pieces.append(slice_along(x, axis, start, start + length))
        position += length
    return shaping.concatenate(pieces, axis=axis) if len(pieces) > 1 else pieces[0]


def _mirror(x, axis, lo, hi, include_edge: bool, odd: bool):
    """Reflect (about the edge entry) or symmetric (about the edge) padding.

    Each round mirrors at most the part of the current array whose length is
    a whole number of the original's periods, as np.pad does; for odd
    reflection the mirrored values are turned about the edge value, so large
    pads keep extrapolating the trend.
    """
    n = aval_of(x).shape[axis]
    period = n if include_edge else n - 1
    offset = 0 if include_edge else 1
    while lo > 0 or hi > 0:
        length = aval_of(x).shape[axis]
        usable = (
            length // period * period
            if include_edge
            else (length - 1) // period * period
        )
        left = right = None
        if lo:
            take = min(usable, lo)
            chunk = rearranging.flip(slice_along(x, axis, offset, offset + take), axis)
            left = 2 * slice_along(x, axis, 0, 1) - chunk if odd else chunk
            lo -= take
        if hi:
            take = min(usable, hi)
            chunk = rearranging.flip(
                slice_along(x, axis, length - offset - take, length - offset), axis
            )
            right = (
                2 * slice_along(x, axis, length - 1, length) - chunk if odd else chunk
            )
            hi -= take
        x = _join(left, x, right, axis)
    return x


def _linear_ramp(x, axis, lo, hi, end_values):
    """Linear ramps from end_values to the edge entries."""
    n = aval_of(x).shape[axis]
    pieces = [None, x, None]
    for side, width, end, edge_at in (
        (0, lo, end_values[0], 0),
        (2, hi, end_values[1], n - 1),
    ):
        if width:
            edge = slice_along(x, axis, edge_at, edge_at + 1)
            steps = np.arange(width) if side == 0 else np.arange(width - 1, -1, -1)
            shape = [1] * aval_of(x).ndim
            shape[axis] = width
            pieces[side] = _ramp(edge, end, steps.reshape(shape), width)
    return _join(*pieces, axis)


def _ramp(edge, end, steps: np.ndarray, width: int):
    """end + (edge - end) * steps / width in edge's dtype; for integers
    exactly, floored as np.linspace does."""
    dtype = aval_of(edge).dtype
    end = lax.convert_element_type(to_operand(end), dtype)
    if dtypes.is_inexact(dtype):
        return end + (edge - end) * (steps / width).astype(dtype)
    return end + floor_divide(
        (edge - end) * steps.astype(dtype), np.asarray(width, dtype)
    )


def _cast_rounded(values, dtype):
    """Statistic or ramp values in the array's dtype (integers rounded half
    to even first, as NumPy)."""
    if not dtypes.is_inexact(dtype) and dtypes.is_inexact(aval_of(values).dtype):
        values = round_(values)
    return astype(values, dtype)


def _statistic(x, axis, lo, hi, lengths, reduce):
    """Pads with a statistic of the first/last `lengths` entries along axis."""
    n = aval_of(x).shape[axis]
    pieces = [None, x, None]
    for side, width, length in ((0, lo, lengths[0]), (2, hi, lengths[1])):
        if not width:
            continue
        length = n if length is None else max(1, min(int(length), n))
        window = (
            slice_along(x, axis, 0, length)
            if side == 0
            else slice_along(x, axis, n - length, n)
        )
        value = _cast_rounded(reduce(window, axis), aval_of(x).dtype)
        pieces[side] = _repeat_along(value, axis, width)
    return _join(*pieces, axis)


def _reduction(mode: str):
    def reduce(window, axis):
        if mode == "median":
            return nanfunctions.median(window, axis=axis, keepdims=True)
        fn = {
            "maximum": reductions.max,
            "minimum": reductions.min,
            "mean": reductions.mean,
        }[mode]
        return fn(window, axis=axis, keepdims=True)

    return reduce


# ---- the public function -------------------------------------------------------------
_OPTIONS = {
    "constant": {"constant_values"},
    "linear_ramp": {"end_values"},
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "maximum": {"stat_length"},
    "minimum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
}


def _check_options(mode, kwargs: dict) -> None:
    if callable(mode):
        return
    if mode not in _MODES:
        raise PadModeError(
            f"jnp.pad: unknown mode={mode!r}; expected one of " + ", ".join(_MODES)
        )
    unexpected = set(kwargs) - _OPTIONS.get(mode, set())
    if unexpected:
        raise PadModeError(
            f"jnp.pad: mode={mode!r} does not take " + ", ".join(sorted(unexpected))
        )


def pad(array, pad_width, mode: str = "constant", **kwargs):
    """`array` padded at the edges of each axis.

    Modes as NumPy's: 'constant' (constant_values), 'edge', 'reflect', 'symmetric', 'wrap', 'linear_ramp', 'maximum', 'mean', ...

    Args:
      array: an array.
      pad_width: an int, a (before, after) pair, or one pair per axis.
      mode: the padding mode, or a function `f(vector, (before, after), axis,
        kwargs)` returning each 1-d slice padded (zeros fill the pad before it
        runs), as in JAX.
      **kwargs: the mode's options (constant_values, end_values, reflect_type, stat_length).

    Returns:
      The padded array.

    Raises:
      PadModeError: the mode is unknown, or pad_width has negative entries.

    Example:
      >>> jnp.pad(jnp.array([1, 2]), 1)
      Array([0, 1, 2, 0], dtype=int32)
    """
    _check_options(mode, kwargs)
    x = to_operand(array)
    ndim = aval_of(x).ndim
    widths = _per_axis_pairs(pad_width, ndim, "pad_width")
    if (widths < 0).any():
        raise PadModeError(f"jnp.pad: pad_width={pad_width!r} has negative entries")
    if callable(mode):
        return _pad_with_function(x, widths, mode, kwargs)
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = tuple(
            map(tuple, _per_axis_pairs(stat_length, ndim, "stat_length").tolist())
        )
    values = [
        to_operand(asarray(kwargs.get(k, 0))) for k in ("constant_values", "end_values")
    ]
    return compiled(_pad)(
        x,
        *values,
        widths=tuple(map(tuple, widths.tolist())),
        mode=mode,
        reflect_type=kwargs.get("reflect_type", "even"),
        stat_length=stat_length,
    )


def _pad_with_function(x, widths, function, kwargs):
    """NumPy's function mode, as JAX defines it: zeros padded around `x`, then
    for each axis every 1-d slice along it replaced by
    `function(vector, (before, after), axis, kwargs)`, which returns the new
    vector (JAX's arrays are immutable: NumPy's function writes in place)."""
    padded = _pad_constant(x, widths, 0)
    for axis, pair in enumerate(widths.tolist()):
        padded = apply_along_axis(function, axis, padded, tuple(pair), axis, kwargs)
    return padded


def _pad(x, constant_values, end_values, *, widths, mode, reflect_type, stat_length):
    if mode in ("constant", "empty"):
        return _pad_constant(
            x,
            np.asarray(widths, np.int64),
            constant_values if mode == "constant" else 0,
        )
    options = {
        "reflect_type": reflect_type,
        "end_values": end_values,
        "stat_length": stat_length,
    }
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            x = _pad_axis(x, axis, lo, hi, mode, options)
    return x


def _pad_constant(x, widths, constant_values):
    value = to_operand(constant_values)
    if aval_of(value).ndim == 0:  # one value everywhere: a single lax.pad
        return lax.pad(
            x,
            lax.convert_element_type(value, aval_of(x).dtype),
            [(lo, hi, 0) for lo, hi in widths.tolist()],
        )
    table = _value_pairs(constant_values, aval_of(x).ndim, "constant_values")
    for axis, (lo, hi) in enumerate(widths.tolist()):
        if lo or hi:
            x = _constant(x, axis, lo, hi, table[axis])
    return x


def _value_pairs(values, ndim: int, name: str) -> list:
    """Per-axis (before, after) values from a scalar, a pair or ndim pairs;
    the values may be traced."""
    size = aval_of(values).size
    if size not in (1, 2, 2 * ndim):
        raise PadModeError(
            f"jnp.pad: {name} of shape {aval_of(values).shape} does not fit an "
            f"array of {ndim} dimensions (expected a scalar, a pair or {ndim} "
            "pairs)"
        )
    flat = shaping.reshape(values, (size,))
    if size == 1:
        return [(flat[0], flat[0])] * ndim
    if size == 2:
        return [(flat[0], flat[1])] * ndim
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(ndim)]


def _pad_axis(x, axis: int, lo: int, hi: int, mode: str, kwargs: dict):
    n = aval_of(x).shape[axis]
    if n == 0:
        raise PadModeError(
            f"jnp.pad: can't extend empty axis {axis} of shape "
            f"{aval_of(x).shape} with mode={mode!r}; only 'constant' and "
            "'empty' pad empty axes"
        )
    if mode == "edge" or (mode == "reflect" and n == 1):
        return _edge(x, axis, lo, hi)
    if mode == "wrap":
        return _wrap(x, axis, lo, hi)
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs["reflect_type"]
        if reflect_type not in ("even", "odd"):
            raise PadModeError(
                f"jnp.pad: reflect_type={reflect_type!r}; expected 'even' or 'odd'"
            )
        return _mirror(x, axis, lo, hi, mode == "symmetric", reflect_type == "odd")
    if mode == "linear_ramp":
        ends = _value_pairs(kwargs["end_values"], aval_of(x).ndim, "end_values")
        return _linear_ramp(x, axis, lo, hi, ends[axis])
    lengths = (
        (None, None) if kwargs["stat_length"] is None else kwargs["stat_length"][axis]
    )
    return _statistic(x, axis, lo, hi, lengths, _reduction(mode))
