"""NumPy indexing of olympus arrays: `x[idx]`, `x.at[idx]` updates and `take`.

Basic indices (ints, slices of any step, None, Ellipsis, traced integer
scalars) become one `slice` (plus `rev` for negative steps), traced integers
a `dynamic_slice`, and a final `reshape` drops indexed axes and inserts new
ones; updates write back with `pad`/`select` and `dynamic_update_slice`.

Integer arrays (NumPy's advanced indexing) go through one `gather` and the
scatter family: the integer arrays (and ints beside them) broadcast to one
shape B; if they sit next to each other the B axes replace them in the
result, otherwise B goes first. As in JAX, negative indices count from the
end; then reads clamp out-of-range indices, static ints included (the
gather clamps, so its gradient drops them), and updates drop them (mode
"clip" clamps instead). Concrete boolean masks become the integer arrays of
their True positions, for reads and updates; a bare list as the whole index
is refused, as JAX refuses it.
"""

from __future__ import annotations

import builtins
import math
from typing import NamedTuple

import numpy as np

from olympus import lax
from olympus.lax import ops as lax_ops
from olympus.lax.elementwise import convert_element_type_p
from olympus.lax.sharding import laid_out_as
from olympus.backends.xla.array import Array
from olympus.ir import dtypes
from olympus.numpy import ufuncs
from olympus.numpy.core import (
    asarray,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    to_operand,
)
from olympus.tracer.core import Tracer, eval_trace
from olympus.tracer.core import _state as core_state


# ---- kinds of index entries ----------------------------------------------------
def _is_static_int(entry) -> bool:
    if isinstance(entry, (bool, np.bool_)):
        return False
    if isinstance(entry, (int, np.integer)):
        return True
    return _is_concrete_int_array_scalar(entry)


def _is_concrete_int_array_scalar(entry) -> bool:
    """A 0-d integer array with a known value, olympus or NumPy."""
    return (
        isinstance(entry, (Array, np.ndarray))
        and entry.ndim == 0
        and dtypes.is_integer(entry.dtype)
    )


def _is_traced_int(entry) -> bool:
    return (
        isinstance(entry, Tracer) and entry.ndim == 0 and dtypes.is_integer(entry.dtype)
    )


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
        return idx[:i] + fill + idx[i + 1 :]
    return idx + fill


def _unsupported(entry):
    kind = type(entry).__name__
    if isinstance(entry, (list, np.ndarray, Array, Tracer, bool, np.bool_)):
        return IndexError(
            f"indexing with {kind} {getattr(entry, 'shape', '')} is not supported here: "
            f"boolean masks have data-dependent shapes (use jnp.where), and x.at[...] takes "
            f"only ints, slices, None, Ellipsis and traced integer scalars"
        )
    return TypeError(f"invalid index of type {kind}: {entry!r:.40}")


def _is_int_array(entry) -> bool:
    """An integer index array of rank >= 1: a NumPy or olympus array, or a
    (nested) list of ints and integer scalars, traced ones included."""
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
    return (
        isinstance(entry, (Array, Tracer))
        and entry.ndim == 0
        and dtypes.is_integer(entry.dtype)
    )


def has_int_array(idx) -> bool:
    entries = idx if isinstance(idx, tuple) else (idx,)
    return builtins.any(_is_int_array(e) for e in entries)


# ---- basic indexing: slices, ints, None, Ellipsis, traced integer scalars -------
class _BasicPlan(NamedTuple):
    """Basic indexing spelled as lax operations: where each axis is cut, and how.

    `starts`/`limits`/`strides` describe one static `slice` (negative steps are
    cut ascending, then `reversed_dims` are reversed); `dynamic` maps an axis to
    a traced integer; `out_shape` is the shape of `x[idx]`. `out_of_bounds`
    lists the axes whose static integer was out of range and was clamped (as
    JAX reads it); an update in mode "drop" writes nothing there.
    """

    starts: list
    limits: list
    strides: list
    reversed_dims: list
    dynamic: dict
    out_shape: list
    out_of_bounds: list


def _basic_plan(shape: tuple, idx) -> _BasicPlan:
    idx = _expand_ellipsis(idx if isinstance(idx, tuple) else (idx,), len(shape))
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    reversed_dims, dynamic, out_shape, out_of_bounds = [], {}, [], []
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
                starts[dim], limits[dim], strides[dim] = (
                    start,
                    start + (n - 1) * step + 1 if n else start,
                    step,
                )
            else:
                last = start + (n - 1) * step if n else 0
                starts[dim], limits[dim], strides[dim] = (
                    last,
                    (start + 1) if n else 0,
                    -step,
                )
                reversed_dims.append(dim)
            out_shape.append(n)
        elif _is_static_int(entry):
            i = int(entry)
            if not -size <= i < size:
                if size == 0:
                    raise IndexError(
                        f"index {i} is out of bounds for axis {dim} with size 0"
                    )
                out_of_bounds.append(dim)
            i = builtins.min(builtins.max(i + size if i < 0 else i, 0), size - 1)
            starts[dim], limits[dim] = i, i + 1
        elif _is_traced_int(entry):
            dynamic[dim] = entry
        else:
            raise _unsupported(entry)
        dim += 1
    return _BasicPlan(
        starts, limits, strides, reversed_dims, dynamic, out_shape, out_of_bounds
    )


def _region(x, plan: _BasicPlan):
    """The indexed elements, with indexed axes still present (size 1)."""
    shape = aval_of(x).shape
    if (
        plan.starts != [0] * len(shape)
        or plan.limits != list(shape)
        or plan.strides != [1] * len(shape)
    ):
        if _eager(x) and plan.strides == [1] * len(shape):
            # The starts as operands, as JAX does eagerly: one compiled program
            # serves x[0], x[1], ... (a static slice compiles one per index).
            sizes = [hi - lo for lo, hi in zip(plan.starts, plan.limits)]
            starts = [np.int32(lo) for lo in plan.starts]
            x = lax_ops.dynamic_slice(x, starts, sizes)
        else:
            x = lax.slice(x, plan.starts, plan.limits, plan.strides)
    if plan.reversed_dims:
        x = lax.rev(x, plan.reversed_dims)
    if plan.dynamic:
        x = _dynamic_index(x, plan.dynamic)
    return x


def _eager(x) -> bool:
    return type(x) is Array and core_state.trace is eval_trace


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
    return lax_ops.dynamic_slice(x, starts, sizes)


def _wrapped(i, size: int):
    """A traced index with negative values counted from the end."""
    zero = np.zeros((), i.dtype)[()]
    return lax.select(lax.lt(i, zero), lax.add(i, np.asarray(size, i.dtype)[()]), i)


class SequenceIndexError(TypeError):
    """A list (not a tuple) used as the whole index, which JAX refuses."""


def _normalized(x, idx):
    """(x, entries) with boolean masks turned into integer arrays; a 0-d mask
    adds a size-1 axis to x (read at [0] if True, at [] if False)."""
    if isinstance(idx, list):
        raise SequenceIndexError(
            f"indexing with a list ({idx!r:.40}) as the whole index is not allowed "
            f"(as in JAX): use x[jnp.array(seq)] for integer or boolean arrays, or "
            f"x[tuple(seq)] for one entry per axis"
        )
    x = to_operand(x)
    entries = idx if isinstance(idx, tuple) else (idx,)
    if builtins.any(_is_scalar_mask(e) for e in entries):
        x, entries = _scalar_masks_to_axes(x, entries)
    if builtins.any(_is_bool_mask(e) for e in entries):
        entries = _masks_to_indices(entries, aval_of(x).shape)
    return x, entries


def getitem(x, idx):
    """NumPy indexing of an olympus array (a functional copy, never a view)."""
    x, entries = _normalized(x, idx)
    if builtins.any(_is_int_array(e) for e in entries):
        return advanced_getitem(x, entries)
    plan = _basic_plan(aval_of(x).shape, entries)
    return lax.reshape(_region(x, plan), plan.out_shape)


def slice_along(x, axis: int, start, stop):
    """x[start:stop] along `axis` (a static slice, with Python's bounds rules)."""
    index = [slice(None)] * aval_of(x).ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


# ---- boolean masks (concrete only: the result size depends on the values) --------
def _is_bool_mask(entry) -> bool:
    if (
        isinstance(entry, list)
        and entry
        and builtins.all(isinstance(e, bool) for e in entry)
    ):
        return True
    if isinstance(entry, (np.ndarray, Array, Tracer)):
        return entry.dtype == np.bool_ and entry.ndim >= 1
    return False


def _is_scalar_mask(entry) -> bool:
    """A 0-d boolean index: Python's True/False or a 0-d boolean array."""
    if isinstance(entry, (bool, np.bool_)):
        return True
    if isinstance(entry, (np.ndarray, Array, Tracer)):
        return entry.dtype == np.bool_ and entry.ndim == 0
    return False


def _scalar_masks_to_axes(x, entries: tuple):
    """NumPy's 0-d boolean index: a new axis of length 1 (True) or 0 (False)
    in its place, so x gets a size-1 axis there read at [0] or at []."""
    entries = list(entries)
    for i, e in enumerate(entries):
        if not _is_scalar_mask(e):
            continue
        if isinstance(e, Tracer):
            raise IndexError(
                f"boolean mask indexing needs a concrete mask, but this one is traced "
                f"({e.aval.str_short()}): the result's size would depend on its value. "
                f"Use jnp.where(mask, x, 0)"
            )
        axis = _mask_start_dim(tuple(entries), i, aval_of(x).ndim)
        x = lax.expand_dims(x, (axis,))
        entries[i] = np.arange(int(bool(e)), dtype=np.int32)
    return x, tuple(entries)


def _dims_consumed(entry) -> int:
    if entry is None or _is_scalar_mask(entry):
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
        if shape[start : start + len(mask_shape)] != mask_shape:
            raise IndexError(
                f"boolean index of shape {mask_shape} does not match the indexed axes "
                f"{shape[start : start + len(mask_shape)]} of an array of shape {shape}"
            )
        if isinstance(e, Tracer):
            raise IndexError(
                f"boolean mask indexing needs a concrete mask, but this one is traced "
                f"({e.aval.str_short()}): the result's size would depend on its values. "
                f"Use jnp.where(mask, x, 0), or jnp.nonzero(mask, size=...) for a fixed size"
            )
        out.extend(np.nonzero(np.asarray(e)))
    return tuple(out)


# ---- integer-array indexing: one gather -----------------------------------------
class _AdvancedPlan(NamedTuple):
    """`x[idx]` as basic indexing (`basic`, slices and None only) followed by
    one gather: `axes` of the basic result are read at the stacked `indices`
    (shape B + (len(axes),)); the B axes land at `position` of the result."""

    basic: tuple
    axes: tuple
    indices: list
    batch_shape: tuple
    position: int


def _advanced_plan(shape: tuple, idx) -> _AdvancedPlan:
    entries = _expand_ellipsis(idx if isinstance(idx, tuple) else (idx,), len(shape))
    advanced = [i for i, e in enumerate(entries) if _is_int_array(e) or _is_int(e)]
    basic = tuple(slice(None) if i in advanced else e for i, e in enumerate(entries))
    axes = tuple(advanced)  # every entry, None included, is one axis of x[basic]
    arrays = [
        to_operand(asarray(entries[i]) if isinstance(entries[i], list) else entries[i])
        for i in advanced
    ]
    batch_shape = broadcast_shapes(*(aval_of(a).shape for a in arrays))
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    return _AdvancedPlan(basic, axes, arrays, batch_shape, axes[0] if adjacent else 0)


def _stacked_indices(arrays, sizes, batch_shape, clamp: bool):
    """One int32 index array of shape B + (k,): negatives wrapped, then
    clamped into range (reads) or left out of range to be dropped (writes)."""
    columns = []
    for index, size in zip(arrays, sizes):
        index = lax.convert_element_type(index, dtypes.int32)
        index = lax.select(
            lax.lt(index, lax.full(aval_of(index).shape, np.int32(0))),
            lax.add(index, lax.full(aval_of(index).shape, np.int32(size))),
            index,
        )
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
    offset = tuple(
        d for d in range(out_rank) if not plan.position <= d < plan.position + n_batch
    )
    slice_sizes = tuple(1 if d in plan.axes else s for d, s in enumerate(basic_shape))
    return offset, slice_sizes


class IndexTypeError(ValueError):
    """jnp.take got non-integer indices (JAX raises ValueError)."""


class IndexModeError(ValueError):
    """An indexing function (x.at[...].get, take, choose, ravel_multi_index)
    got a `mode` it does not know."""


def check_mode(api: str, mode, modes: tuple) -> None:
    """Refuses a `mode` that `api` does not take, naming the ones it does."""
    if mode not in modes:
        *most, last = map(repr, modes)
        raise IndexModeError(
            f"{api}: mode must be {', '.join(most)} or {last}, got {mode!r}"
        )


# JAX's spellings of an out-of-bounds policy -> what a read does: "promise"
# (x[idx]'s default) hands indices to gather, which clamps them, so the
# gradient (a scatter-add) drops out-of-range ones; "clip" clamps the indices
# first, so the gradient lands on the clamped position.
_READ_MODES = {
    None: "promise",
    "promise_in_bounds": "promise",
    "clip": "clip",
    "fill": "fill",
    "drop": "fill",
    "fill_or_drop": "fill",
    "wrap": "wrap",
}

# What an update does with an out-of-range index: drop it (JAX's default) or
# clamp it into range.
_UPDATE_MODES = {
    None: "drop",
    "promise_in_bounds": "drop",
    "drop": "drop",
    "fill": "drop",
    "fill_or_drop": "drop",
    "clip": "clip",
}


def _mode_key(mode):
    mode = getattr(mode, "name", mode)  # lax.GatherScatterMode-like enums
    return mode.lower() if isinstance(mode, str) else mode


def _read_mode(api: str, mode) -> str:
    """JAX's spelling of an out-of-bounds policy for reads -> promise, clip,
    fill or wrap."""
    if _mode_key(mode) not in _READ_MODES:
        raise IndexModeError(
            f"{api}: unknown mode {mode!r}; use 'clip', 'fill', 'drop', 'wrap' "
            f"or 'promise_in_bounds'"
        )
    return _READ_MODES[_mode_key(mode)]


def _update_mode(api: str, mode) -> str:
    """JAX's spelling of an out-of-bounds policy for updates -> drop or clip."""
    if _mode_key(mode) not in _UPDATE_MODES:
        raise IndexModeError(
            f"{api}: unknown mode {mode!r} for an update; use 'drop' (the "
            f"default: out-of-range indices write nothing), 'fill', 'clip' or "
            f"'promise_in_bounds'"
        )
    return _UPDATE_MODES[_mode_key(mode)]


def advanced_getitem(x, idx, mode: str = "promise", fill_value=None):
    """`x[idx]` for indices with integer arrays, as NumPy (one gather).

    Negative indices count from the end. Out-of-range indices then clamp
    (mode "promise": gather clamps, and the gradient drops them, as JAX;
    mode "clip": clamped first, so the gradient lands where they read), read
    `fill_value` with mode "fill" (see lax.gather), and wrap around the axis
    with mode "wrap"."""
    x = to_operand(x)
    plan = _advanced_plan(aval_of(x).shape, idx)
    y = getitem(x, plan.basic)
    shape = aval_of(y).shape
    sizes = [shape[a] for a in plan.axes]
    if 0 in sizes:  # gather cannot cut a size-1 window from an empty axis
        return _read_empty_axis(y, plan, sizes)
    arrays = (
        plan.indices
        if mode != "wrap"
        else [_wrapped_around(i, n) for i, n in zip(plan.indices, sizes)]
    )
    indices = _stacked_indices(arrays, sizes, plan.batch_shape, clamp=mode == "clip")
    offset, slice_sizes = _window(plan, shape)
    dn = lax.GatherDimensionNumbers(offset, plan.axes, plan.axes)
    if mode == "fill":
        return lax.gather(
            y, indices, dn, slice_sizes, mode="fill", fill_value=fill_value
        )
    return lax.gather(y, indices, dn, slice_sizes)


def _read_empty_axis(y, plan: _AdvancedPlan, sizes: list):
    """x[idx] where an indexed axis has size 0: empty for empty indices (as
    NumPy), else an IndexError (NumPy's; there is no element to clamp to)."""
    if 0 not in plan.batch_shape:
        axis = plan.axes[sizes.index(0)]
        raise IndexError(
            f"index is out of bounds for axis {axis} with size 0: indices of shape "
            f"{plan.batch_shape} into an array of shape {aval_of(y).shape}"
        )
    shape = aval_of(y).shape
    offset, _ = _window(plan, shape)
    zero = np.zeros((), aval_of(y).dtype)[()]
    return lax.full(_result_shape(plan, shape, offset), zero)


def _wrapped_around(index, size: int):
    """index mod size (NumPy's mode="wrap"), as int32."""
    index = lax.convert_element_type(index, dtypes.int32)
    n = lax.full(aval_of(index).shape, np.int32(builtins.max(size, 1)))
    return lax.rem(lax.add(lax.rem(index, n), n), n)


_TAKE_MODES = (None, "fill", "clip", "wrap")


def take(
    a,
    indices,
    axis=None,
    out=None,
    mode=None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value=None,
):
    """Elements of `a` at `indices` along `axis`.

    Out-of-bounds indices do not raise (arrays on accelerators cannot): by
    default they give `fill_value` (NaN for inexact dtypes), as JAX's
    "fill" mode; mode="clip" clamps and mode="wrap" wraps.

    Args:
      a: an array.
      indices: an integer array.
      axis: the axis to index; None indexes the flattened array.
      out: unsupported (must be None).
      mode: None/"fill", "clip", "wrap", or "promise_in_bounds".
      unique_indices: a promise that indices are unique (faster scatter in
        gradients).
      indices_are_sorted: a promise that indices are sorted.
      fill_value: the value for out-of-bounds indices in "fill" mode.

    Returns:
      An array with `axis` replaced by the indices' shape.

    Raises:
      ValueError: mode is not one of the names.

    Example:
      >>> jnp.take(jnp.array([10.0, 20.0, 30.0]), jnp.array([2, 0, 5]))
      Array([30., 10., nan], dtype=float32)
    """
    if out is not None:
        raise TypeError(
            "olympus.numpy.take: the 'out' argument is not supported (arrays are immutable)"
        )
    if mode not in _TAKE_MODES:
        raise IndexModeError(
            f"olympus.numpy.take: unknown mode {mode!r}; use 'fill' (the default), "
            f"'clip' or 'wrap'"
        )
    mode = "fill" if mode is None else mode
    a = to_operand(a)
    if axis is None:
        a, axis = lax.reshape(a, (aval_of(a).size,)), 0
    axis = axis % aval_of(a).ndim
    index = to_operand(asarray(indices) if isinstance(indices, list) else indices)
    n, index_dtype = aval_of(a).shape[axis], aval_of(index).dtype
    if index_dtype == dtypes.bool_:  # JAX gathers at 0 and 1
        index = lax.convert_element_type(index, dtypes.int32)
    elif not dtypes.is_integer(index_dtype) and aval_of(index).size:
        raise IndexTypeError(
            f"jnp.take: indices must have an integer type, got {aval_of(index).str_short()}"
            " (as in JAX); cast them, e.g. indices.astype(int)"
        )
    if n == 0 or aval_of(index).size == 0:
        return _take_nothing(a, index, axis)
    if np.dtype(index_dtype).itemsize > 4 and mode in ("fill", "clip", "wrap"):
        index = _narrow_wide_index(index, n, mode)
    if mode == "clip":  # before negatives could count from the end
        size = builtins.max(n - 1, 0)
        index = lax.clamp(
            np.int32(0), lax.convert_element_type(index, dtypes.int32), np.int32(size)
        )
    if aval_of(index).ndim == 0:
        index = lax.reshape(index, (1,))
        picked = advanced_getitem(a, (slice(None),) * axis + (index,), mode, fill_value)
        return lax.squeeze(picked, (axis,))
    return advanced_getitem(a, (slice(None),) * axis + (index,), mode, fill_value)


def _narrow_wide_index(index, n: int, mode: str):
    """A 64-bit take index as int32, the way JAX's gather reads it: "wrap"
    takes the remainder and "clip" clamps in the wide type; "fill" counts negatives from the end in the wide
    type, then keeps the low 32 bits (so 2**62 reads entry 0, as in JAX), and
    what is negative after that is out of range (filled)."""
    dtype = aval_of(index).dtype
    if mode == "wrap":  # the remainder in the wide type, as JAX's mod
        size = lax.full(aval_of(index).shape, np.asarray(n, dtype)[()])
        return lax.convert_element_type(ufuncs.remainder(index, size), dtypes.int32)
    if mode == "clip":
        low, high = (np.asarray(v, dtype)[()] for v in (0, max(n - 1, 0)))
        return lax.convert_element_type(lax.clamp(low, index, high), dtypes.int32)
    if dtypes.is_signed_int(dtype):
        size = lax.full(aval_of(index).shape, np.asarray(n, dtype)[()])
        index = lax.select(lax.lt(index, lax.full_like(index, 0)), lax.add(index, size), index)  # fmt: skip
    index = lax.convert_element_type(index, dtypes.int32)
    beyond = lax.full(aval_of(index).shape, np.int32(n))
    return lax.select(lax.lt(index, lax.full_like(index, 0)), beyond, index)


def _take_nothing(a, index, axis: int):
    """take from an empty axis (only with no indices: `a` itself, as JAX) or
    with no indices (zeros of the result's shape)."""
    shape = aval_of(a).shape
    if aval_of(index).size:
        raise IndexError(
            f"jnp.take: cannot take {aval_of(index).size} entries from the empty axis "
            f"{axis} of an array of shape {shape}"
        )
    if shape[axis] == 0:
        return a
    out_shape = shape[:axis] + aval_of(index).shape + shape[axis + 1 :]
    return lax.full(out_shape, np.zeros((), aval_of(a).dtype)[()])


# ---- updates at basic indices: x.at[idx].set(v) and friends ----------------------
def _scatter_static(slab, region, plan: _BasicPlan):
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
    if (
        starts == [0] * len(shape)
        and strides == [1] * len(shape)
        and tuple(sizes) == tuple(shape)
    ):
        return region
    config = [
        (lo, size - (lo + (n - 1) * st + 1), st - 1)
        for lo, st, n, size in zip(starts, strides, sizes, shape)
    ]
    zero = np.zeros((), aval_of(slab).dtype)[()]
    placed = lax.pad(region, zero, config)
    mask = lax.pad(lax.full(sizes, True), False, config)
    return lax.select(mask, placed, slab)


def _update_basic(x, idx, values, combine=None, mode: str = "drop"):
    """x with x[idx] replaced by `values` (or by `combine(x[idx], values)`).

    An out-of-range integer index writes nothing in mode "drop" (JAX's
    default) and is clamped into range in mode "clip"."""
    x = to_operand(x)
    aval = aval_of(x)
    plan = _basic_plan(aval.shape, idx)
    old = _region(x, plan)
    region_shape = aval_of(old).shape
    values = lax.convert_element_type(to_operand(values), aval.dtype)
    new = lax.reshape(broadcast_to(values, tuple(plan.out_shape)), region_shape)
    if combine is not None:
        new = lax.convert_element_type(combine(old, new), aval.dtype)
    if plan.reversed_dims:
        new = lax.rev(new, plan.reversed_dims)
    if mode == "drop" and plan.out_of_bounds:
        return x
    if not plan.dynamic:
        return _scatter_static(x, new, plan)
    starts = [
        _wrapped(plan.dynamic[d], size) if d in plan.dynamic else np.int32(0)
        for d, size in enumerate(aval.shape)
    ]
    sizes = [1 if d in plan.dynamic else size for d, size in enumerate(aval.shape)]
    old_slab = lax_ops.dynamic_slice(x, starts, sizes)
    slab = _scatter_static(old_slab, new, plan)
    if mode == "drop":  # an out-of-range index rewrites the clamped window as it was
        inside = _in_bounds(plan.dynamic, aval.shape)
        slab_shape = aval_of(slab).shape
        slab = lax.select(lax.broadcast_in_dim(inside, slab_shape, ()), slab, old_slab)
    return lax_ops.dynamic_update_slice(x, slab, starts)


def _in_bounds(dynamic: dict, shape: tuple):
    """Whether every traced index lies in [-size, size) of its axis (a bool scalar)."""
    inside = None
    for d, i in dynamic.items():
        fits = lax.lt(i, np.array(shape[d], i.dtype)[()])
        if dtypes.is_signed_int(i.dtype):
            fits = lax.bitwise_and(lax.ge(i, np.array(-shape[d], i.dtype)[()]), fits)
        inside = fits if inside is None else lax.bitwise_and(inside, fits)
    return inside


# ---- updates at integer arrays: the scatter family --------------------------------
def _needs_flat_update(plan: _AdvancedPlan) -> bool:
    """Whether the index mixes integer arrays with None or partial slices,
    which one scatter with these dimension numbers cannot express."""
    return builtins.any(
        e is None or (isinstance(e, slice) and e != slice(None)) for e in plan.basic
    )


def _flat_update(x, idx, values, scatter_fn, mode: str):
    """x.at[idx] for any index: read the flat positions x[idx] names (out of
    range ones as -1, or clamped in mode "clip"), then scatter into ravel(x)."""
    shape = aval_of(x).shape
    size = builtins.max(math.prod(shape), 1)
    positions = lax.reshape(lax.iota(dtypes.int32, math.prod(shape)), shape)
    if mode == "clip":
        picked = advanced_getitem(positions, idx, "clip")
    else:
        picked = advanced_getitem(positions, idx, "fill", np.int32(-1))
        picked = lax.select(
            lax.lt(picked, lax.full(aval_of(picked).shape, np.int32(0))),
            lax.full(aval_of(picked).shape, np.int32(size)),
            picked,
        )
    picked_shape = aval_of(picked).shape
    updates = broadcast_to(
        lax.convert_element_type(to_operand(values), aval_of(x).dtype), picked_shape
    )
    n = math.prod(picked_shape)
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    flat = scatter_fn(
        lax.reshape(x, (math.prod(shape),)),
        lax.reshape(picked, (n, 1)),
        lax.reshape(updates, (n,)),
        dn,
    )
    return lax.reshape(flat, shape)


def _scatter_update(x, idx, values, scatter_fn, mode: str = "drop"):
    """x with `scatter_fn` writing `values` (broadcast to x[idx].shape) at idx;
    out-of-range indices are dropped (mode "drop") or clamped ("clip")."""
    x = to_operand(x)
    shape = aval_of(x).shape
    plan = _advanced_plan(shape, idx)
    if _needs_flat_update(plan):
        return _flat_update(x, idx, values, scatter_fn, mode)
    indices = _stacked_indices(
        plan.indices,
        [shape[a] for a in plan.axes],
        plan.batch_shape,
        clamp=mode == "clip",
    )
    offset, _ = _window(plan, shape)
    out_shape = _result_shape(plan, shape, offset)
    updates = broadcast_to(
        lax.convert_element_type(to_operand(values), aval_of(x).dtype), out_shape
    )
    dn = lax.ScatterDimensionNumbers(offset, plan.axes, plan.axes)
    return scatter_fn(x, indices, updates, dn)


def _result_shape(plan: _AdvancedPlan, shape: tuple, offset: tuple) -> tuple:
    rest = iter(s for d, s in enumerate(shape) if d not in plan.axes)
    batch = iter(plan.batch_shape)
    rank = len(plan.batch_shape) + len(shape) - len(plan.axes)
    return tuple(next(rest) if d in offset else next(batch) for d in range(rank))


class IndexUpdateRef:
    """`x.at[idx]`: each method returns a new array; `x` itself never changes.

    Basic indices go through slices and dynamic_update_slice, indices with
    integer arrays through scatter, where duplicates accumulate for
    add/multiply/min/max (as NumPy's `np.add.at`) and one of them wins for
    set. Values broadcast to `x[idx].shape` and are cast to `x.dtype`, as in
    JAX.
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def _update(self, values, scatter_fn, combine, mode=None, out_sharding=None, **_):
        if out_sharding is not None:  # JAX's keyword: the result's layout
            update = lambda: self._update(values, scatter_fn, combine, mode)  # noqa: E731
            return laid_out_as(update, out_sharding, f"x.at[...].{scatter_fn.__name__}")
        mode = _update_mode(f"x.at[...].{scatter_fn.__name__}", mode)
        aval = aval_of(to_operand(self.array))
        x, index = _normalized(self.array, self.index)
        if has_int_array(index):
            out = _scatter_update(x, index, values, scatter_fn, mode)
        else:
            out = _update_basic(x, index, values, combine, mode)
        if aval_of(out).shape != aval.shape:
            out = lax.reshape(out, aval.shape)
        if aval.weak_type and not aval_of(out).weak_type:  # JAX keeps x's weak type
            out = convert_element_type_p.bind(out, new_dtype=aval.dtype, weak_type=True)
        return out

    def get(
        self,
        *,
        mode=None,
        fill_value=None,
        indices_are_sorted=False,
        unique_indices=False,
        out_sharding=None,
    ):
        """x[idx]; with mode "fill" out-of-range integer indices (arrays or
        scalars) read `fill_value` (NaN for inexact dtypes by default) instead
        of clamping, and "wrap" wraps them around the axis; `out_sharding`
        lays the result out (JAX's keyword, for a split operand or indices)."""
        if out_sharding is not None:
            read = lambda: self.get(mode=mode, fill_value=fill_value)  # noqa: E731
            return laid_out_as(read, out_sharding, "x.at[...].get")
        mode = _read_mode("x.at[...].get", mode)
        x, entries = _normalized(self.array, self.index)
        if mode == "promise" or not builtins.any(
            _is_int_array(e) or _is_int(e) for e in entries
        ):
            return getitem(x, entries)
        if mode == "clip" and not has_int_array(entries):
            return getitem(x, entries)  # scalars clamp there too
        return advanced_getitem(x, entries, mode, fill_value)

    def set(self, values, *, mode=None, **_):
        return self._update(values, lax.scatter, None, mode, **_)

    def add(self, values, *, mode=None, **_):
        return self._update(values, lax.scatter_add, ufuncs.add, mode, **_)

    def subtract(self, values, *, mode=None, **_):
        negated = ufuncs.negative(values)
        return self._update(negated, lax.scatter_add, ufuncs.add, mode, **_)

    def multiply(self, values, *, mode=None, **_):
        return self._update(values, lax.scatter_mul, ufuncs.multiply, mode, **_)

    mul = multiply

    def divide(self, values, *, mode=None, **_):
        if not has_int_array(self.index) and not builtins.any(
            _is_bool_mask(e) or _is_scalar_mask(e)
            for e in (self.index if isinstance(self.index, tuple) else (self.index,))
        ):
            return self._update(values, lax.scatter_mul, ufuncs.divide, mode, **_)
        reciprocal = ufuncs.divide(1, values)
        return self._update(reciprocal, lax.scatter_mul, ufuncs.multiply, mode, **_)

    def min(self, values, *, mode=None, **_):
        return self._update(values, lax.scatter_min, ufuncs.minimum, mode, **_)

    def max(self, values, *, mode=None, **_):
        return self._update(values, lax.scatter_max, ufuncs.maximum, mode, **_)

    def power(self, values, *, mode=None, **_):
        """Read, combine, write back: repeated indices see the original value."""
        read_mode = "clip" if _update_mode("x.at[...].power", mode) == "clip" else None
        old = self.get(mode=read_mode)
        return self.set(ufuncs.power(old, values), mode=mode)

    def apply(self, func, *, mode=None, **_):
        read_mode = "clip" if _update_mode("x.at[...].apply", mode) == "clip" else None
        return self.set(func(self.get(mode=read_mode)), mode=mode)


class IndexUpdateHelper:
    """`x.at`: indexing it gives an `IndexUpdateRef` for functional updates."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"IndexUpdateHelper({self.array!r})"
