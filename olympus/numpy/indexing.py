"""`x[idx]` for ints, slices (any step), None, Ellipsis and traced integer scalars.

Static parts become one `slice` (plus `rev` for negative steps), traced
integers a `dynamic_slice`, and a final `reshape` drops indexed axes and
inserts new ones.
"""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.backends.xla.array import Array
from olympus.numpy.core import aval_of, to_operand
from olympus.tracer.core import Tracer


def _is_static_int(entry) -> bool:
    if isinstance(entry, (bool, np.bool_)):
        return False
    if isinstance(entry, (int, np.integer)):
        return True
    return isinstance(entry, Array) and entry.ndim == 0 and dtypes.is_integer(entry.dtype)


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
            f"indexing with {kind} {getattr(entry, 'shape', '')} (integer-array or boolean-mask "
            f"indexing) is not supported yet; use ints, slices, None, Ellipsis or a traced "
            f"integer scalar, or lax.dynamic_slice / jnp.where"
        )
    return TypeError(f"invalid index of type {kind}: {entry!r:.40}")


def getitem(x, idx):
    """NumPy basic indexing of an olympus array (a functional copy, never a view)."""
    x = to_operand(x)
    shape = aval_of(x).shape
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
    if starts != [0] * len(shape) or limits != list(shape) or strides != [1] * len(shape):
        x = lax.slice(x, starts, limits, strides)
    if reversed_dims:
        x = lax.rev(x, reversed_dims)
    if dynamic:
        x = _dynamic_index(x, dynamic)
    return lax.reshape(x, out_shape)


def _dynamic_index(x, dynamic: dict):
    """A size-1 dynamic_slice at each traced index (negative indices wrap)."""
    shape = aval_of(x).shape
    starts, sizes = [], []
    for d, size in enumerate(shape):
        if d in dynamic:
            i = dynamic[d]
            zero = np.zeros((), i.dtype)[()]
            wrapped = lax.add(i, np.asarray(size, i.dtype)[()])
            starts.append(lax.select(lax.lt(i, zero), wrapped, i))
            sizes.append(1)
        else:
            starts.append(np.int32(0))
            sizes.append(size)
    return lax.dynamic_slice(x, starts, sizes)
