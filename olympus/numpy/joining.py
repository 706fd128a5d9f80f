"""Stacking, splitting, inserting, deleting and rearranging arrays, beyond
arrays.py: atleast_3d, column_stack/row_stack/dstack, hsplit/vsplit/dsplit,
block, append/insert/delete, rot90, rollaxis, resize, choose, compress,
broadcast_arrays and trim_zeros.

Positions (insert/delete indices, compress conditions, trim_zeros) decide the
result's shape, so they must be concrete: NumPy values or untraced Arrays.
"""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.numpy.arrays import (
    atleast_2d,
    concatenate,
    flip,
    moveaxis,
    ravel,
    reshape,
    split,
    swapaxes,
    tile,
)
from olympus.numpy.core import (
    array,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    normalize_axis,
    promote_dtypes,
    to_operand,
)
from olympus.numpy.indexing import take
from olympus.numpy.reductions import nonzero
from olympus.numpy.ufuncs import clip, equal, remainder, where
from olympus.tracer.core import Tracer
from olympus.tracer.errors import ConcretizationTypeError

__all__ = [
    "append",
    "atleast_3d",
    "block",
    "broadcast_arrays",
    "choose",
    "column_stack",
    "compress",
    "delete",
    "dsplit",
    "dstack",
    "hsplit",
    "insert",
    "resize",
    "rollaxis",
    "rot90",
    "row_stack",
    "trim_zeros",
    "vsplit",
]


def _concrete(x, name: str, what: str) -> np.ndarray:
    """`x` as a NumPy value, or an error saying why `name` needs it concrete."""
    if isinstance(x, Tracer) or (
        isinstance(x, (list, tuple)) and builtins.any(isinstance(v, Tracer) for v in x)
    ):
        raise ConcretizationTypeError(
            f"jnp.{name}: {what} must be concrete (it decides the result's shape), but a "
            f"traced value was given; compute it outside jit or pass it as a static argument"
        )
    return np.asarray(x)


# ---- stacking and splitting -------------------------------------------------------
def atleast_3d(*arys):
    """Views with at least 3 dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    outs = []
    for x in arys:
        x = to_operand(x)
        shape = aval_of(x).shape
        if len(shape) == 0:
            x = reshape(x, (1, 1, 1))
        elif len(shape) == 1:
            x = reshape(x, (1, shape[0], 1))
        elif len(shape) == 2:
            x = reshape(x, (*shape, 1))
        outs.append(x)
    return outs[0] if len(outs) == 1 else outs


def column_stack(tup):
    """1-D arrays become columns of a 2-D array; 2-D arrays join along axis 1."""
    columns = []
    for x in tup:
        x = to_operand(x)
        columns.append(reshape(x, (aval_of(x).size, 1)) if aval_of(x).ndim < 2 else x)
    return concatenate(columns, axis=1)


def row_stack(tup):
    """NumPy's old name for vstack."""
    return concatenate([atleast_2d(x) for x in tup], axis=0)


def dstack(tup):
    """Joins along the third axis, after atleast_3d."""
    return concatenate([atleast_3d(x) for x in tup], axis=2)


def _split_at_least(name: str, ary, sections, axis: int, ndim: int):
    ary = to_operand(ary)
    if aval_of(ary).ndim < ndim:
        raise ValueError(
            f"jnp.{name} needs an array of at least {ndim} dimension(s), "
            f"got shape {aval_of(ary).shape}"
        )
    return split(ary, sections, axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-D arrays)."""
    ndim = aval_of(to_operand(ary)).ndim
    return _split_at_least("hsplit", ary, indices_or_sections, 1 if ndim > 1 else 0, 1)


def vsplit(ary, indices_or_sections):
    return _split_at_least("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary, indices_or_sections):
    return _split_at_least("dsplit", ary, indices_or_sections, 2, 3)


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists join
    along the last axis, the next ones out along the one before, and so on."""
    depth = _nesting_depth(arrays)
    ndim = builtins.max(depth, _max_leaf_ndim(arrays))
    return _assemble(arrays, depth, ndim)


def _nesting_depth(arrays) -> int:
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError("jnp.block: lists of blocks must not be empty")
    depths = {_nesting_depth(a) for a in arrays}
    if len(depths) != 1:
        raise ValueError(
            "jnp.block: list depths are mismatched (every block needs the same nesting)"
        )
    return 1 + depths.pop()


def _max_leaf_ndim(arrays) -> int:
    if isinstance(arrays, list):
        return builtins.max(_max_leaf_ndim(a) for a in arrays)
    return aval_of(to_operand(arrays)).ndim


def _assemble(arrays, depth: int, ndim: int):
    if depth == 0:
        x = to_operand(arrays)
        return reshape(x, (1,) * (ndim - aval_of(x).ndim) + aval_of(x).shape)
    parts = promote_dtypes(*[_assemble(a, depth - 1, ndim) for a in arrays])
    return concatenate(parts, axis=-depth)


# ---- append, insert, delete ---------------------------------------------------------
def append(arr, values, axis: int | None = None):
    """`values` joined after `arr` (both flattened when axis is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """`arr` without the entries at `obj` (an int, slice or concrete index array)."""
    arr = to_operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis(axis, aval_of(arr).ndim)
    n = aval_of(arr).shape[axis]
    if not isinstance(obj, slice):
        obj = _concrete(obj, "delete", "the indices to delete")
    keep = np.delete(np.arange(n), obj)
    return take(arr, keep.astype(np.int32), axis=axis, mode="clip")


def insert(arr, obj, values, axis: int | None = None):
    """`values` inserted before the positions `obj` along `axis`, like NumPy.

    The positions come from NumPy's own insert on an index vector, so every
    form of `obj` (int, slice, sequence, unsorted) places values as NumPy does.
    """
    arr = to_operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    ndim = aval_of(arr).ndim
    axis = normalize_axis(axis, ndim)
    n = aval_of(arr).shape[axis]
    if not isinstance(obj, slice):
        obj = _concrete(obj, "insert", "the insertion positions")
    values = to_operand(values)
    count = _inserted_count(obj, n, values, ndim, axis)
    if isinstance(obj, np.ndarray) and obj.ndim == 0:
        # A scalar position inserts `values` as a block: its leading axis moves to `axis`.
        values = reshape(
            values, (1,) * (ndim - aval_of(values).ndim) + aval_of(values).shape
        )
        values = moveaxis(values, 0, axis)
    shape = list(aval_of(arr).shape)
    shape[axis] = count
    arr, values = promote_dtypes(arr, values)
    values = lax.convert_element_type(
        broadcast_to(values, tuple(shape)), aval_of(arr).dtype
    )
    order = np.insert(np.arange(n), obj, n + np.arange(count))
    return take(
        concatenate([arr, values], axis), order.astype(np.int32), axis=axis, mode="clip"
    )


def _inserted_count(obj, n: int, values, ndim: int, axis: int) -> int:
    """How many slices insert adds: one per position, except that a single
    position takes all of `values`' slices (NumPy's rule)."""
    positions = np.arange(n)[obj] if isinstance(obj, slice) else obj
    if positions.size != 1:
        return positions.size
    vshape = (1,) * (ndim - aval_of(values).ndim) + aval_of(values).shape
    return vshape[0] if positions.ndim == 0 else vshape[axis]


# ---- rearranging --------------------------------------------------------------------
def rot90(m, k: int = 1, axes: tuple = (0, 1)):
    """`m` rotated by 90 degrees k times, from the first axis toward the second."""
    m = to_operand(m)
    ndim = aval_of(m).ndim
    a0, a1 = (normalize_axis(a, ndim) for a in axes)
    if a0 == a1:
        raise ValueError(f"jnp.rot90: axes must be different, got {axes}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def rollaxis(a, axis: int, start: int = 0):
    """Moves `axis` to sit before position `start` (moveaxis is the clearer spelling)."""
    a = to_operand(a)
    ndim = aval_of(a).ndim
    axis = normalize_axis(axis, ndim)
    if not -ndim <= start <= ndim:
        raise ValueError(
            f"jnp.rollaxis: start={start} is out of range for {ndim} dimensions"
        )
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


def resize(a, new_shape):
    """An array of `new_shape` filled by repeating `a`'s flattened elements."""
    a = ravel(to_operand(a))
    new_shape = (
        (int(new_shape),)
        if np.ndim(new_shape) == 0
        else tuple(int(d) for d in new_shape)
    )
    total = int(np.prod(new_shape, dtype=np.int64))
    size = aval_of(a).size
    if size == 0:
        return lax.full(new_shape, np.zeros((), aval_of(a).dtype)[()])
    repeated = tile(a, -(-total // size))
    return reshape(lax.slice(repeated, (0,), (total,)), new_shape)


def choose(a, choices, mode: str = "raise"):
    """choices[a] elementwise, broadcasting `a` and every choice together.

    mode='clip' clamps indices and 'wrap' takes them modulo len(choices);
    'raise' checks the bounds of a concrete `a` and clips a traced one.
    """
    a = to_operand(a)
    n = len(choices)
    if mode == "raise" and not isinstance(a, Tracer):
        index = np.asarray(a)
        if index.size and (index.min() < 0 or index.max() >= n):
            raise ValueError(
                f"jnp.choose: index out of range for {n} choices "
                f"(got values in [{index.min()}, {index.max()}])"
            )
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(
            f"jnp.choose: mode must be 'raise', 'clip' or 'wrap', got {mode!r}"
        )
    a = remainder(a, n) if mode == "wrap" else clip(a, 0, n - 1)
    choices = promote_dtypes(*choices)
    shape = broadcast_shapes(aval_of(a).shape, *(aval_of(c).shape for c in choices))
    out = broadcast_to(choices[0], shape)
    for i, choice in enumerate(choices[1:], start=1):
        out = where(equal(a, i), choice, out)
    return out


def compress(
    condition, a, axis: int | None = None, *, size: int | None = None, fill_value=0
):
    """The slices of `a` along `axis` where `condition` holds.

    A concrete condition gives exactly those slices; a traced one needs a
    static `size` (the first `size` selected slices, then `fill_value` ones).
    """
    a = to_operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, aval_of(a).ndim)
    n = aval_of(a).shape[axis]
    condition = ravel(to_operand(condition))
    if aval_of(condition).size > n:
        raise ValueError(
            f"jnp.compress: condition has {aval_of(condition).size} entries, "
            f"more than the {n} slices of axis {axis}"
        )
    if size is None:
        selected = np.nonzero(
            _concrete(condition, "compress", "condition (without size=)")
        )[0]
        return take(a, selected.astype(np.int32), axis=axis, mode="clip")
    (selected,) = nonzero(condition, size=size, fill_value=n)
    fill_shape = list(aval_of(a).shape)
    fill_shape[axis] = 1
    filler = lax.full(tuple(fill_shape), np.asarray(fill_value, aval_of(a).dtype)[()])
    return take(concatenate([a, filler], axis), selected, axis=axis, mode="clip")


def broadcast_arrays(*args):
    """The arguments broadcast to their common shape."""
    args = [to_operand(x) for x in args]
    shape = broadcast_shapes(*(aval_of(x).shape for x in args))
    return [
        broadcast_to(array(x) if not hasattr(x, "aval") else x, shape) for x in args
    ]


def trim_zeros(filt, trim: str = "fb"):
    """A 1-D array without its leading ('f') and/or trailing ('b') zeros.

    The result's length depends on the values, so `filt` must be concrete.
    """
    filt = to_operand(filt)
    values = _concrete(filt, "trim_zeros", "the array")
    if values.ndim != 1:
        raise ValueError(f"jnp.trim_zeros needs a 1-D array, got shape {values.shape}")
    nonzero = np.flatnonzero(values)
    trim = trim.lower()
    start = (nonzero[0] if nonzero.size else values.size) if "f" in trim else 0
    stop = (nonzero[-1] + 1 if nonzero.size else 0) if "b" in trim else values.size
    stop = builtins.max(start, stop)
    return lax.slice(filt, (int(start),), (int(stop),))
