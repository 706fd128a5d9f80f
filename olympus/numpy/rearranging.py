"""Rearranging and repeating in olympus.numpy: flip (fliplr, flipud), roll,
tile, repeat, split and array_split."""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import (
    aval_of,
    broadcast_to,
    normalize_axes,
    normalize_axis,
    placed_operand,
    to_operand,
)
from olympus.lax.sharding import accepts_out_sharding, refuse_unlaid_repeat
from olympus.numpy.indexing import take
from olympus.numpy.shaping import concatenate, expand_dims, ravel, reshape
from olympus.tracer.errors import ConcretizationTypeError as _ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_AXIS, RAISES_X, add_sections

__all__ = [
    "array_split",
    "flip",
    "fliplr",
    "flipud",
    "repeat",
    "roll",
    "split",
    "tile",
]


def flip(m, axis=None):
    """`m` with the order of elements along `axis` reversed.

    A view-free copy (arrays are immutable).

    Args:
      m: an array.
      axis: None (every axis), an int, or a tuple of ints.

    Returns:
      The flipped array.

    Example:
      >>> jnp.flip(jnp.arange(3))
      Array([2, 1, 0], dtype=int32)
    """
    m = placed_operand(m)
    axes = normalize_axes(axis, aval_of(m).ndim)
    return lax.rev(m, axes) if axes else m


def _flip_along(name: str, axis: int, words: str, flipped: str):
    """fliplr (axis 1) or flipud (axis 0): flip along one fixed axis."""

    def flip_along(m):
        return flip(m, axis)

    flip_along.__name__ = flip_along.__qualname__ = name
    flip_along.__doc__ = f"""`m` reversed along axis {axis} ({words}).

    Args:
      m: an array of rank >= {axis + 1}.

    Returns:
      An array of m's shape and dtype.

    Raises:
      ArrayLikeTypeError: m is a list or other non-array (convert it with
        jnp.asarray).
      ValueError: m has fewer than {axis + 1} dimensions.

    Example:
      >>> jnp.{name}(jnp.array([[1, 2], [3, 4]]))
      Array({flipped}, dtype=int32)
    """
    return flip_along


fliplr = _flip_along("fliplr", 1, "left to right", "[[2, 1], [4, 3]]")
flipud = _flip_along("flipud", 0, "up to down", "[[3, 4], [1, 2]]")


class RollArgumentError(ValueError):
    """jnp.roll got shifts and axes that do not broadcast together."""


def roll(a, shift, axis=None):
    """`a` with elements shifted cyclically by `shift` along `axis`.

    Elements that roll past the end reappear at the start.

    Args:
      a: an array.
      shift: an int or a sequence of ints (may be traced).
      axis: None (the flattened array), an int, or a sequence of ints.

    Returns:
      The rolled array.

    Example:
      >>> jnp.roll(jnp.arange(4), 1)
      Array([3, 0, 1, 2], dtype=int32)
    """
    a = to_operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval_of(a).shape)
    shifts, axes = _roll_pairs(shift, axis)
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(ax, aval_of(a).ndim)
        n = aval_of(a).shape[ax]
        if not n:
            continue
        if isinstance(s, (int, np.integer)):
            if int(s) % n:
                cut = n - int(s) % n
                a = concatenate(
                    [_take_range(a, ax, cut, n), _take_range(a, ax, 0, cut)], ax
                )
        else:
            a = _roll_traced(a, s, ax, n)
    return a


def _roll_pairs(shift, axis) -> tuple[list, list]:
    """(shift, axis) pairs, broadcast as JAX's roll does."""
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    if isinstance(shift, (int, np.integer, float, np.floating)):
        shifts = [int(shift)]  # JAX casts a float shift to int
    elif isinstance(shift, (tuple, list)):
        shifts = list(shift)
    else:
        shift = to_operand(shift)
        kind = aval_of(shift).dtype
        if dtypes.is_float(kind) or kind == dtypes.bool_:  # cast to int, as JAX
            shift = lax.convert_element_type(shift, dtypes.int32)
        if not dtypes.is_integer(aval_of(shift).dtype) or aval_of(shift).ndim > 1:
            raise RollArgumentError(
                f"jnp.roll: shift must be an integer scalar or 1-d array, got "
                f"{aval_of(shift).str_short()}"
            )
        if aval_of(shift).ndim == 0:
            shifts = [shift]
        else:
            shifts = [lax.index_in_dim(shift, i, keepdims=False)
                      for i in range(aval_of(shift).shape[0])]  # fmt: skip
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise RollArgumentError(
            f"jnp.roll: {len(shifts)} shifts and {len(axes)} axes do not "
            f"broadcast; pass one shift per axis, or one of either"
        )
    return shifts, axes


def _roll_traced(a, shift, axis: int, n: int):
    """a rolled by a traced `shift`: the window of [a, a] starting at n - shift % n."""
    shift = lax.convert_element_type(to_operand(shift), dtypes.int32)
    size = np.int32(n)
    r = lax.rem(shift, size)
    r = lax.select(lax.lt(r, np.int32(0)), lax.add(r, size), r)
    doubled = lax.concatenate([a, a], axis)
    starts = [np.int32(0)] * aval_of(a).ndim
    starts[axis] = lax.sub(size, r)
    return lax.dynamic_slice(
        doubled, starts, aval_of(a).shape, allow_negative_indices=False
    )


def _take_range(a, axis: int, start: int, stop: int):
    shape = aval_of(a).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, starts, limits)


def tile(A, reps):
    """`A` repeated `reps` times along each axis.

    When reps is longer than A's rank, A gets leading axes of size 1.

    Args:
      A: an array.
      reps: an int or a sequence of ints.

    Returns:
      The tiled array.

    Example:
      >>> jnp.tile(jnp.array([1, 2]), 2)
      Array([1, 2, 1, 2], dtype=int32)
    """
    A = to_operand(A)
    reps = (
        (int(reps),)
        if isinstance(reps, (int, np.integer))
        else tuple(int(r) for r in reps)
    )
    ndim = builtins.max(aval_of(A).ndim, len(reps))
    A = reshape(A, (1,) * (ndim - aval_of(A).ndim) + aval_of(A).shape)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = aval_of(A).shape
    interleaved = [d for pair in zip(reps, shape) for d in pair]
    expanded = broadcast_to(reshape(A, [d for s in shape for d in (1, s)]), interleaved)
    return reshape(expanded, [r * s for r, s in zip(reps, shape)])


@accepts_out_sharding
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element of `a` repeated `repeats` times along `axis`.

    Array repeats make the output size data-dependent: under jit pass a static total_repeat_length.

    Args:
      a: an array.
      repeats: an int or an array of counts per element.
      axis: the axis to repeat along (None: the flattened array).
      total_repeat_length: the static output length for array repeats.

    Returns:
      The repeated array.

    Raises:
      ConcretizationTypeError: traced repeats without total_repeat_length.

    Example:
      >>> jnp.repeat(jnp.array([1, 2]), 2)
      Array([1, 1, 2, 2], dtype=int32)
    """
    a = to_operand(a)
    counts = _static_repeats(repeats)
    if axis is None:
        a, axis = ravel(a), 0
    shape = aval_of(a).shape
    axis = normalize_axis(axis, len(shape))
    refuse_unlaid_repeat(a, axis)  # as JAX on an Explicit mesh
    if counts.ndim or total_repeat_length is not None:
        return _repeat_by_gather(a, counts, axis, total_repeat_length)
    repeats = int(counts)
    expanded = expand_dims(a, axis + 1)
    target = shape[: axis + 1] + (int(repeats),) + shape[axis + 1 :]
    out_shape = shape[:axis] + (shape[axis] * int(repeats),) + shape[axis + 1 :]
    return reshape(broadcast_to(expanded, target), out_shape)


def _static_repeats(repeats) -> np.ndarray:
    """The repeat counts as a NumPy int array: they fix the output's shape."""
    try:
        counts = np.asarray(repeats)
    except TypeError as error:
        raise _ConcretizationTypeError(
            "jnp.repeat needs repeats known when tracing (a Python int or a list/NumPy "
            f"array of ints), got {repeats!r}"
        ) from error
    if counts.dtype.kind not in "iub" or counts.ndim > 1:
        raise ValueError(
            "jnp.repeat: repeats must be an int or a 1-D sequence of ints, "
            f"got {counts.dtype} of shape {counts.shape}"
        )
    if np.any(counts < 0):
        raise ValueError(
            f"jnp.repeat: repeats may not be negative, got {counts.tolist()}"
        )
    return counts.astype(np.int64)


def _repeat_by_gather(a, counts, axis: int, total_repeat_length):
    """Per-element counts: gather each source index as many times as it repeats."""
    length = aval_of(a).shape[axis]
    if counts.ndim and counts.size not in (1, length):
        raise ValueError(
            f"jnp.repeat: {counts.size} repeats for an axis of length {length}"
        )
    source = np.repeat(
        np.arange(length), np.broadcast_to(counts.reshape(-1), (length,))
    )
    if total_repeat_length is not None:
        source = _fit_length(source, int(total_repeat_length))
    return take(a, source.astype(np.int32), axis=axis, mode="clip")


def _fit_length(source: np.ndarray, total: int) -> np.ndarray:
    if len(source) >= total or len(source) == 0:
        return source[:total]
    return np.concatenate([source, np.full(total - len(source), source[-1])])


def split(ary, indices_or_sections, axis: int = 0):
    """Splits `ary` into pieces along `axis`.

    Args:
      ary: an array.
      indices_or_sections: an int N (N equal pieces) or a sequence of split
        points.
      axis: the axis to split along.

    Returns:
      A list of arrays.

    Raises:
      ValueError: an int N does not divide the axis evenly.

    Example:
      >>> jnp.split(jnp.arange(4), 2)
      [Array([0, 1], dtype=int32), Array([2, 3], dtype=int32)]
    """
    return _split(ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis: int = 0):
    """`ary` split into sections that may differ in size by one.

    Like split, but unequal sections are allowed (the first ones are larger).

    Args:
      ary: an array.
      indices_or_sections: the number of equal sections, or the indices to cut
        before.
      axis: the axis to work along; negative counts from the end.

    Returns:
      A list of arrays.

    Example:
      >>> jnp.array_split(jnp.arange(5), 2)
      [Array([0, 1, 2], dtype=int32), Array([3, 4], dtype=int32)]
    """
    return _split(ary, indices_or_sections, axis, equal=False)


def _split(ary, sections, axis, equal: bool):
    ary = to_operand(ary)
    axis = normalize_axis(axis, aval_of(ary).ndim)
    n = aval_of(ary).shape[axis]
    if isinstance(sections, (int, np.integer)):
        sections = int(sections)
        if equal and n % sections:
            raise ValueError(
                f"array split does not result in an equal division ({n} into {sections})"
            )
        size, extra = divmod(n, sections)
        cuts = np.cumsum([size + (i < extra) for i in range(sections)])[:-1].tolist()
    else:
        cuts = [
            builtins.min(builtins.max(int(c) % (n + 1) if int(c) < 0 else int(c), 0), n)
            for c in sections
        ]
    bounds = [0, *cuts, n]
    return [
        _take_range(ary, axis, lo, builtins.max(lo, hi))
        for lo, hi in zip(bounds, bounds[1:])
    ]


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((tile,), RAISES_X)
add_sections((flip, roll, array_split), RAISES_AXIS)
