"""Integer-array indexing through `gather`, and `x.at[idx]` functional updates
through the scatter family.

NumPy's advanced indexing: the integer arrays (and ints beside them) broadcast
to one shape B; if they sit next to each other the B axes replace them in the
result, otherwise B goes first. Reads clamp out-of-range indices (JAX's
default for `x[idx]`); updates drop them (JAX's default for `x.at`).
Negative indices count from the end in both.
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

import numpy as np

from olympus import lax
from olympus.backends.xla.array import Array
from olympus.ir import dtypes
from olympus.numpy.core import (
    asarray,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    to_operand,
)
from olympus.tracer.core import Tracer


def _is_int_array(entry) -> bool:
    if isinstance(entry, list) and entry:
        return builtins.all(_is_int(e) or _is_int_array(e) for e in entry)
    if isinstance(entry, np.ndarray):
        return entry.dtype.kind in "iu" and entry.ndim >= 1
    if isinstance(entry, (Array, Tracer)):
        return dtypes.is_integer(entry.dtype) and entry.ndim >= 1
    return False


def _is_int(entry) -> bool:
    """An int or an integer scalar (concrete or traced): advanced beside arrays."""
    if isinstance(entry, (bool, np.bool_)):
        return False
    if isinstance(entry, (int, np.integer)):
        return True
    return isinstance(entry, (Array, Tracer)) and entry.ndim == 0 and dtypes.is_integer(
        entry.dtype)


def has_int_array(idx) -> bool:
    entries = idx if isinstance(idx, tuple) else (idx,)
    return builtins.any(_is_int_array(e) for e in entries)


class _AdvancedPlan(NamedTuple):
    """`x[idx]` as basic indexing (`basic`, slices and None only) followed by
    one gather: `axes` of the basic result are read at the stacked `indices`
    (shape B + (len(axes),)); the B axes land at `position` of the result."""

    basic: tuple
    axes: tuple
    indices: list
    batch_shape: tuple
    position: int


def _plan(shape: tuple, idx) -> _AdvancedPlan:
    from olympus.numpy.indexing import _expand_ellipsis

    entries = _expand_ellipsis(idx if isinstance(idx, tuple) else (idx,), len(shape))
    advanced = [i for i, e in enumerate(entries) if _is_int_array(e) or _is_int(e)]
    basic = tuple(slice(None) if i in advanced else e for i, e in enumerate(entries))
    axes = tuple(advanced)  # every entry, None included, is one axis of x[basic]
    arrays = [to_operand(asarray(entries[i]) if isinstance(entries[i], list) else entries[i])
              for i in advanced]
    batch_shape = broadcast_shapes(*(aval_of(a).shape for a in arrays))
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    return _AdvancedPlan(basic, axes, arrays, batch_shape, axes[0] if adjacent else 0)


def _stacked_indices(arrays, sizes, batch_shape, clamp: bool):
    """One int32 index array of shape B + (k,): negatives wrapped, then
    clamped into range (reads) or left out of range to be dropped (writes)."""
    columns = []
    for index, size in zip(arrays, sizes):
        index = lax.convert_element_type(index, dtypes.int32)
        index = lax.select(lax.lt(index, lax.full(aval_of(index).shape, np.int32(0))),
                           lax.add(index, lax.full(aval_of(index).shape, np.int32(size))), index)
        if clamp:
            index = lax.clamp(np.int32(0), index, np.int32(builtins.max(size - 1, 0)))
        index = broadcast_to(index, batch_shape)
        columns.append(lax.reshape(index, (*batch_shape, 1)))
    return lax.concatenate(columns, len(batch_shape))


def _window(plan: _AdvancedPlan, basic_shape: tuple):
    """The gather/scatter dimension layout shared by reads and writes."""
    n_batch = len(plan.batch_shape)
    rest = len(basic_shape) - len(plan.axes)
    out_rank = n_batch + rest
    offset = tuple(d for d in range(out_rank)
                   if not plan.position <= d < plan.position + n_batch)
    slice_sizes = tuple(1 if d in plan.axes else s for d, s in enumerate(basic_shape))
    return offset, slice_sizes


class IndexModeError(ValueError):
    """An indexing read (x.at[...].get, take) got a `mode` it does not know."""


_READ_MODES = {None: "clip", "clip": "clip", "promise_in_bounds": "clip",
               "fill": "fill", "drop": "fill", "wrap": "wrap"}


def _read_mode(api: str, mode) -> str:
    """JAX's spelling of an out-of-bounds policy for reads -> clip, fill or wrap."""
    mode = getattr(mode, "name", mode)  # lax.GatherScatterMode-like enums
    key = mode.lower() if isinstance(mode, str) else mode
    if key == "fill_or_drop":
        key = "fill"
    if key not in _READ_MODES:
        raise IndexModeError(f"{api}: unknown mode {mode!r}; use 'clip', 'fill', 'drop', 'wrap' "
                             f"or 'promise_in_bounds'")
    return _READ_MODES[key]


def advanced_getitem(x, idx, mode: str = "clip", fill_value=None):
    """`x[idx]` for indices with integer arrays, as NumPy (one gather).

    Out-of-range indices (after negatives count from the end) clamp with
    mode "clip", read `fill_value` with mode "fill" (see lax.gather), and
    wrap around the axis with mode "wrap"."""
    from olympus.numpy.indexing import getitem

    x = to_operand(x)
    plan = _plan(aval_of(x).shape, idx)
    y = getitem(x, plan.basic)
    shape = aval_of(y).shape
    sizes = [shape[a] for a in plan.axes]
    arrays = plan.indices if mode != "wrap" else [_wrapped_around(i, n) for i, n in zip(plan.indices, sizes)]
    indices = _stacked_indices(arrays, sizes, plan.batch_shape, clamp=mode != "fill")
    offset, slice_sizes = _window(plan, shape)
    dn = lax.GatherDimensionNumbers(offset, plan.axes, plan.axes)
    if mode == "fill":
        return lax.gather(y, indices, dn, slice_sizes, mode="fill", fill_value=fill_value)
    return lax.gather(y, indices, dn, slice_sizes)


def _wrapped_around(index, size: int):
    """index mod size (NumPy's mode="wrap"), as int32."""
    index = lax.convert_element_type(index, dtypes.int32)
    n = lax.full(aval_of(index).shape, np.int32(builtins.max(size, 1)))
    return lax.rem(lax.add(lax.rem(index, n), n), n)


def take(a, indices, axis=None, out=None, mode=None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value=None):
    """`a` at integer `indices` along `axis` (the flattened array if None).

    Out-of-range indices clamp by default (mode None or "clip"; note JAX's
    jnp.take defaults to "fill"); mode "fill" reads `fill_value` there (NaN
    for inexact dtypes by default), mode "wrap" wraps them around the axis.

    >>> jnp.take(jnp.arange(5.0), jnp.array([4, 0]))
    Array([4., 0.], dtype=float32)
    >>> jnp.take(jnp.arange(5.0), jnp.array([7]), mode="fill")
    Array([nan], dtype=float32)
    """
    if out is not None:
        raise TypeError("olympus.numpy.take: the 'out' argument is not supported (arrays are immutable)")
    mode = _read_mode("olympus.numpy.take", mode)
    a = to_operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (aval_of(a).size,)), 0
    axis = axis % aval_of(a).ndim
    index = to_operand(asarray(indices) if isinstance(indices, list) else indices)
    if aval_of(index).ndim == 0:
        index = lax.reshape(index, (1,))
        picked = advanced_getitem(a, (slice(None),) * axis + (index,), mode, fill_value)
        return lax.squeeze(picked, (axis,))
    return advanced_getitem(a, (slice(None),) * axis + (index,), mode, fill_value)


# ---- updates -------------------------------------------------------------------
def _check_update_index(plan: _AdvancedPlan) -> None:
    if builtins.any(e is None or (isinstance(e, slice) and e != slice(None))
                    for e in plan.basic):
        raise IndexError(
            "x.at[...] with integer arrays takes ints, integer arrays, ':' and '...'; "
            "apply partial slices or None with a separate x.at[...] step")


def _scatter_update(x, idx, values, scatter_fn):
    """x with `scatter_fn` writing `values` (broadcast to x[idx].shape) at idx."""
    x = to_operand(x)
    shape = aval_of(x).shape
    plan = _plan(shape, idx)
    _check_update_index(plan)
    indices = _stacked_indices(plan.indices, [shape[a] for a in plan.axes], plan.batch_shape,
                               clamp=False)
    offset, _ = _window(plan, shape)
    out_shape = _result_shape(plan, shape, offset)
    updates = broadcast_to(lax.convert_element_type(to_operand(values), aval_of(x).dtype),
                           out_shape)
    dn = lax.ScatterDimensionNumbers(offset, plan.axes, plan.axes)
    return scatter_fn(x, indices, updates, dn)


def _result_shape(plan: _AdvancedPlan, shape: tuple, offset: tuple) -> tuple:
    rest = iter(s for d, s in enumerate(shape) if d not in plan.axes)
    batch = iter(plan.batch_shape)
    rank = len(plan.batch_shape) + len(shape) - len(plan.axes)
    return tuple(next(rest) if d in offset else next(batch) for d in range(rank))


def _negated(values):
    from olympus.numpy import ufuncs

    return ufuncs.negative(values)


def _reciprocal(values):
    from olympus.numpy import ufuncs

    return ufuncs.divide(1, values)


class IndexUpdateRef:
    """`x.at[idx]`: each method returns a new array; `x` itself never changes.

    Basic indices go through slices and dynamic_update_slice
    (olympus.numpy.indexing); indices with integer arrays through scatter,
    where duplicates accumulate for add/multiply/min/max (as NumPy's
    `np.add.at`) and one of them wins for set.
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def _basic(self):
        from olympus.numpy.indexing import IndexUpdateRef as BasicRef

        return BasicRef(self.array, self.index)

    def _scatter(self, values, scatter_fn, basic_name):
        if not has_int_array(self.index):
            return getattr(self._basic(), basic_name)(values)
        return _scatter_update(self.array, self.index, values, scatter_fn)

    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False):
        """x[idx]; with mode "fill" out-of-range integer indices (arrays or
        scalars) read `fill_value` (NaN for inexact dtypes by default) instead
        of clamping, and "wrap" wraps them around the axis."""
        from olympus.numpy.indexing import getitem

        mode = _read_mode("x.at[...].get", mode)
        entries = self.index if isinstance(self.index, tuple) else (self.index,)
        if mode == "clip" or not builtins.any(_is_int_array(e) or _is_int(e) for e in entries):
            return getitem(self.array, self.index)
        return advanced_getitem(self.array, self.index, mode, fill_value)

    def set(self, values, **_):
        return self._scatter(values, lax.scatter, "set")

    def add(self, values, **_):
        return self._scatter(values, lax.scatter_add, "add")

    def subtract(self, values, **_):
        return self._scatter(_negated(values), lax.scatter_add, "add")

    def multiply(self, values, **_):
        return self._scatter(values, lax.scatter_mul, "multiply")

    mul = multiply

    def divide(self, values, **_):
        if not has_int_array(self.index):
            return self._basic().divide(values)
        return self._scatter(_reciprocal(values), lax.scatter_mul, "multiply")

    def min(self, values, **_):
        return self._scatter(values, lax.scatter_min, "min")

    def max(self, values, **_):
        return self._scatter(values, lax.scatter_max, "max")

    def power(self, values, **_):
        """Read, combine, write back: repeated indices see the original value."""
        from olympus.numpy import ufuncs

        return self.set(ufuncs.power(self.get(), values))

    def apply(self, func, **_):
        return self.set(func(self.get()))


class IndexUpdateHelper:
    """`x.at`: indexing it gives an `IndexUpdateRef` for functional updates."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"IndexUpdateHelper({self.array!r})"
