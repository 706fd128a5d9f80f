"""`x[idx]` for ints, slices (any step), None, Ellipsis, traced integer scalars
and integer arrays (gathered in olympus.numpy.at); `x.at[idx]` functional
updates for basic indices.

Static parts become one `slice` (plus `rev` for negative steps), traced
integers a `dynamic_slice`, and a final `reshape` drops indexed axes and
inserts new ones.
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.backends.xla.array import Array
from olympus.numpy.core import aval_of, broadcast_to, to_operand
from olympus.tracer.core import Tracer


def _is_static_int(entry) -> bool:
    if isinstance(entry, (bool, np.bool_)):
        return False
    if isinstance(entry, (int, np.integer)):
        return True
    return _is_concrete_int_array_scalar(entry)


def _is_concrete_int_array_scalar(entry) -> bool:
    """A 0-d integer array with a known value, olympus or NumPy: data, so an
    out-of-bounds value clamps (as the traced index does under jit)."""
    return (isinstance(entry, (Array, np.ndarray)) and entry.ndim == 0
            and dtypes.is_integer(entry.dtype))


def _is_traced_int(entry) -> bool:
    return isinstance(entry, Tracer) and entry.ndim == 0 and dtypes.is_integer(entry.dtype)


def _expand_ellipsis(idx: tuple, ndim: int) -> tuple:
    n_ellipsis = sum(1 for e in idx if e is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for e in idx if e is not None and e is not Ellipsis)
    if n_real > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {n_real} were indexed"
        )
    fill = (slice(None),) * (ndim - n_real)
    if n_ellipsis:
        i = next(i for i, e in enumerate(idx) if e is Ellipsis)
        return idx[:i] + fill + idx[i + 1:]
    return idx + fill


def _unsupported(entry):
    kind = type(entry).__name__
    if isinstance(entry, (list, np.ndarray, Array, Tracer)) or isinstance(entry, (bool, np.bool_)):
        return IndexError(
            f"indexing with {kind} {getattr(entry, 'shape', '')} is not supported here: "
            f"boolean masks have data-dependent shapes (use jnp.where), and x.at[...] takes "
            f"only ints, slices, None, Ellipsis and traced integer scalars"
        )
    return TypeError(f"invalid index of type {kind}: {entry!r:.40}")


class _IndexPlan(NamedTuple):
    """Basic indexing spelled as lax operations: where each axis is cut, and how.

    `starts`/`limits`/`strides` describe one static `slice` (negative steps are
    cut ascending, then `reversed_dims` are reversed); `dynamic` maps an axis to
    a traced integer; `out_shape` is the shape of `x[idx]`.
    """

    starts: list
    limits: list
    strides: list
    reversed_dims: list
    dynamic: dict
    out_shape: list


def _plan(shape: tuple, idx) -> _IndexPlan:
    idx = _expand_ellipsis(idx if isinstance(idx, tuple) else (idx,), len(shape))
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    reversed_dims, dynamic, out_shape = [], {}, []
    dim = 0
    for entry in idx:
        if entry is None:
            out_shape.append(1)
            continue
        size = shape[dim]
        if isinstance(entry, slice):
            start, stop, step = entry.indices(size)
            n = len(range(start, stop, step))
            if step > 0:
                starts[dim], limits[dim], strides[dim] = start, start + (n - 1) * step + 1 if n else start, step
            else:
                last = start + (n - 1) * step if n else 0
                starts[dim], limits[dim], strides[dim] = last, (start + 1) if n else 0, -step
                reversed_dims.append(dim)
            out_shape.append(n)
        elif _is_concrete_int_array_scalar(entry) and not -size <= int(entry) < size:
            dynamic[dim] = entry  # clamped, as under jit (and as JAX does for array indices)
        elif _is_static_int(entry):
            i = int(entry)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
            i %= size
            starts[dim], limits[dim] = i, i + 1
        elif _is_traced_int(entry):
            dynamic[dim] = entry
        else:
            raise _unsupported(entry)
        dim += 1
    return _IndexPlan(starts, limits, strides, reversed_dims, dynamic, out_shape)


def _region(x, plan: _IndexPlan):
    """The indexed elements, with indexed axes still present (size 1)."""
    shape = aval_of(x).shape
    if plan.starts != [0] * len(shape) or plan.limits != list(shape) or plan.strides != [1] * len(shape):
        x = lax.slice(x, plan.starts, plan.limits, plan.strides)
    if plan.reversed_dims:
        x = lax.rev(x, plan.reversed_dims)
    if plan.dynamic:
        x = _dynamic_index(x, plan.dynamic)
    return x


def getitem(x, idx):
    """NumPy indexing of an olympus array (a functional copy, never a view)."""
    x = to_operand(x)
    entries = idx if isinstance(idx, tuple) else (idx,)
    if builtins.any(_is_bool_mask(e) for e in entries):
        entries = _masks_to_indices(entries, aval_of(x).shape)
    if builtins.any(_is_int_array(e) for e in entries):
        from olympus.numpy.at import advanced_getitem

        return advanced_getitem(x, entries)
    plan = _plan(aval_of(x).shape, idx)
    return lax.reshape(_region(x, plan), plan.out_shape)


# ---- boolean masks (concrete only: the result size depends on the values) --------
def _is_bool_mask(entry) -> bool:
    if isinstance(entry, list) and entry and builtins.all(isinstance(e, bool) for e in entry):
        return True
    if isinstance(entry, (np.ndarray, Array, Tracer)):
        return entry.dtype == np.bool_ and entry.ndim >= 1
    return False


def _dims_consumed(entry) -> int:
    if entry is None:
        return 0
    return np.ndim(entry) if _is_bool_mask(entry) else 1


def _mask_start_dim(entries: tuple, i: int, ndim: int) -> int:
    """The first array axis that entries[i] indexes (counting from the end after '...')."""
    if builtins.any(e is Ellipsis for e in entries[:i]):
        return ndim - builtins.sum(_dims_consumed(e) for e in entries[i:])
    return builtins.sum(_dims_consumed(e) for e in entries[:i])


def _masks_to_indices(entries: tuple, shape: tuple) -> tuple:
    """Each concrete mask becomes the integer arrays of its True positions (NumPy)."""
    out = []
    for i, e in enumerate(entries):
        if not _is_bool_mask(e):
            out.append(e)
            continue
        start = _mask_start_dim(entries, i, len(shape))
        mask_shape = tuple(np.shape(e))
        if shape[start:start + len(mask_shape)] != mask_shape:
            raise IndexError(
                f"boolean index of shape {mask_shape} does not match the indexed axes "
                f"{shape[start:start + len(mask_shape)]} of an array of shape {shape}"
            )
        if isinstance(e, Tracer):
            raise IndexError(
                f"boolean mask indexing needs a concrete mask, but this one is traced "
                f"({e.aval.str_short()}): the result's size would depend on its values. "
                f"Use jnp.where(mask, x, 0), or jnp.nonzero(mask, size=...) for a fixed size"
            )
        out.extend(np.nonzero(np.asarray(e)))
    return tuple(out)


# ---- integer-array indexing ------------------------------------------------------
def _is_int_array(entry) -> bool:
    """An integer index array of rank >= 1: NumPy array, list of ints, olympus array."""
    if isinstance(entry, list) and entry:
        entry = np.asarray(entry)
    if isinstance(entry, np.ndarray):
        return entry.dtype.kind in "iu" and entry.ndim >= 1
    if isinstance(entry, (Array, Tracer)):
        return dtypes.is_integer(entry.dtype) and entry.ndim >= 1
    return False


def take(a, indices, axis=None, out=None, mode=None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value=None):
    """`a` at integer `indices` along `axis` (one gather). As in JAX, an
    out-of-range index reads `fill_value` by default (mode "fill": NaN for
    inexact dtypes); modes "clip" and "wrap" are as in olympus.numpy.at.take,
    which olympus's own code calls because it clamps by default."""
    from olympus.numpy.at import take as gather_take

    mode = "fill" if mode is None else mode
    return gather_take(a, indices, axis, out, mode, unique_indices, indices_are_sorted, fill_value)


def _dynamic_index(x, dynamic: dict):
    """A size-1 dynamic_slice at each traced index (negative indices wrap)."""
    shape = aval_of(x).shape
    starts, sizes = [], []
    for d, size in enumerate(shape):
        if d in dynamic:
            starts.append(_wrapped(dynamic[d], size))
            sizes.append(1)
        else:
            starts.append(np.int32(0))
            sizes.append(size)
    return lax.dynamic_slice(x, starts, sizes)


def _wrapped(i, size: int):
    """A traced index with negative values counted from the end."""
    zero = np.zeros((), i.dtype)[()]
    return lax.select(lax.lt(i, zero), lax.add(i, np.asarray(size, i.dtype)[()]), i)


# ---- functional updates: x.at[idx].set(v) and friends ---------------------------
def _scatter_static(slab, region, plan: _IndexPlan):
    """`slab` with `region` written at the static (possibly strided) positions.

    Padding the region with `stride - 1` interior zeros lays it out exactly on
    the strided positions; a padded mask picks those positions from it.
    """
    shape = aval_of(slab).shape
    sizes = aval_of(region).shape
    if 0 in sizes:
        return slab
    starts = [0 if d in plan.dynamic else s for d, s in enumerate(plan.starts)]
    strides = [1 if d in plan.dynamic else s for d, s in enumerate(plan.strides)]
    if starts == [0] * len(shape) and strides == [1] * len(shape) and tuple(sizes) == tuple(shape):
        return region
    config = [(lo, size - (lo + (n - 1) * st + 1), st - 1)
              for lo, st, n, size in zip(starts, strides, sizes, shape)]
    zero = np.zeros((), aval_of(slab).dtype)[()]
    placed = lax.pad(region, zero, config)
    mask = lax.pad(lax.full(sizes, True), False, config)
    return lax.select(mask, placed, slab)


def _update(x, idx, values, combine=None):
    """x with x[idx] replaced by `values` (or by `combine(x[idx], values)`)."""
    x = to_operand(x)
    aval = aval_of(x)
    plan = _plan(aval.shape, idx)
    old = _region(x, plan)
    region_shape = aval_of(old).shape
    values = lax.convert_element_type(to_operand(values), aval.dtype)
    new = lax.reshape(broadcast_to(values, tuple(plan.out_shape)), region_shape)
    if combine is not None:
        new = lax.convert_element_type(combine(old, new), aval.dtype)
    if plan.reversed_dims:
        new = lax.rev(new, plan.reversed_dims)
    if not plan.dynamic:
        return _scatter_static(x, new, plan)
    starts = [_wrapped(plan.dynamic[d], size) if d in plan.dynamic else np.int32(0)
              for d, size in enumerate(aval.shape)]
    sizes = [1 if d in plan.dynamic else size for d, size in enumerate(aval.shape)]
    slab = lax.dynamic_slice(x, starts, sizes)
    return lax.dynamic_update_slice(x, _scatter_static(slab, new, plan), starts)


class IndexUpdateHelper:
    """`x.at`: indexing it gives an `IndexUpdateRef` for functional updates."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx) -> "IndexUpdateRef":
        return IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """`x.at[idx]`: each method returns a new array; `x` itself never changes.

    Indices are those of `x[idx]` (ints, slices with any step, None, Ellipsis,
    traced integer scalars). Values broadcast to `x[idx].shape` and are cast
    to `x.dtype`, as in JAX.
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def get(self, **_):
        return getitem(self.array, self.index)

    def set(self, values, **_):
        return _update(self.array, self.index, values)

    def apply(self, func, **_):
        return _update(self.array, self.index, 0, lambda old, _: func(old))

    def add(self, values, **_):
        return self._combine(values, "add")

    def subtract(self, values, **_):
        return self._combine(values, "subtract")

    def multiply(self, values, **_):
        return self._combine(values, "multiply")

    mul = multiply

    def divide(self, values, **_):
        return self._combine(values, "divide")

    def power(self, values, **_):
        return self._combine(values, "power")

    def min(self, values, **_):  # noqa: A003
        return self._combine(values, "minimum")

    def max(self, values, **_):  # noqa: A003
        return self._combine(values, "maximum")

    def _combine(self, values, ufunc_name: str):
        from olympus.numpy import ufuncs

        return _update(self.array, self.index, values, getattr(ufuncs, ufunc_name))
