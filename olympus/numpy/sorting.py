"""jnp.sort, argsort, lexsort and what sorting gives: partition, quantiles,
searchsorted; take_along_axis (one gather) reads their indices back."""

from __future__ import annotations

import operator

import numpy as np

from olympus import lax
from olympus.backends.xla.array import Array
from olympus.ir import dtypes
from olympus.numpy import ufuncs
from olympus.numpy.creation import arange
from olympus.numpy.core import (
    aval_of,
    broadcast_shapes,
    normalize_axis,
    promote_dtypes,
    requested_dtype,
    to_operand,
)
from olympus.numpy.indexing import advanced_getitem, take
from olympus.numpy.reductions import sum as total
from olympus.tracer.core import Tracer
from olympus.numpy.ufunc_docs import RAISES_X, add_sections

__all__ = [
    "argpartition",
    "argsort",
    "lexsort",
    "partition",
    "searchsorted",
    "sort",
    "take_along_axis",
]


def _along(a, axis):
    """`a` and the axis to sort: None sorts the flattened array, as NumPy."""
    a = to_operand(a)
    if axis is None:
        return lax.reshape(a, (aval_of(a).size,)), 0
    if aval_of(a).ndim == 0:
        raise ValueError("sort of a 0-d array needs axis=None")
    return a, normalize_axis(operator.index(axis), aval_of(a).ndim)


def sort(
    a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
    descending: bool = False,
):  # fmt: skip
    """A sorted copy of `a` along `axis`.

    NaNs sort to the end; complex numbers sort by real, then imaginary part.

    Args:
      a: an array.
      axis: the axis to sort; None sorts the flattened array.
      kind: taken for NumPy's signature (the sort is always stable).
      order: unsupported (must be None).
      stable: taken for the array API (True).
      descending: if True, sort largest first.

    Returns:
      The sorted array.

    Example:
      >>> jnp.sort(jnp.array([3, 1, 2]))
      Array([1, 2, 3], dtype=int32)
    """
    del kind, order
    a, axis = _along(a, axis)
    keys = _sort_keys(a)
    if len(keys) == 1 and keys[0] is a:
        out = lax.sort(a, dimension=axis, is_stable=stable)
    else:
        *_, out = lax.sort(
            (*keys, a), dimension=axis, is_stable=stable, num_keys=len(keys)
        )
    # Descending is the ascending sort reversed (JAX's): NaNs first, ties reversed.
    return lax.rev(out, (axis,)) if descending else out


def _sort_keys(a) -> tuple:
    """What `a` sorts by: itself, or complex numbers by real part then imaginary
    part (NumPy's order)."""
    if dtypes.is_complex(aval_of(a).dtype):
        return (lax.real(a), lax.imag(a))
    return (a,)


def argsort(
    a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
    descending: bool = False, dtype=None,
):  # fmt: skip
    """The indices that sort `a` along `axis`.

    The sort is stable: equal elements keep their order.

    Args:
      a: an array.
      axis: the axis to sort; None sorts the flattened array.
      kind: taken for NumPy's signature.
      order: unsupported (must be None).
      stable: taken for the array API (True).
      descending: if True, sort largest first (equal elements still in order).
      dtype: the indices' dtype (None: the default integer dtype).

    Returns:
      An integer array of a's shape (flattened for axis None).

    Example:
      >>> jnp.argsort(jnp.array([3.0, 1.0, 2.0]))
      Array([1, 2, 0], dtype=int32)
    """
    del kind, order
    a, axis = _along(a, axis)
    index_dtype = (
        dtypes.default_int_dtype() if dtype is None else requested_dtype(dtype)
    )
    order_ = lax.broadcasted_iota(index_dtype, aval_of(a).shape, axis)
    # A stable descending sort reverses first, so that reversing the result
    # keeps equal entries in their original order (JAX's way).
    if descending and stable:
        a, order_ = lax.rev(a, (axis,)), lax.rev(order_, (axis,))
    keys = _sort_keys(a)
    *_, indices = lax.sort(
        (*keys, order_), dimension=axis, is_stable=stable, num_keys=len(keys)
    )
    return lax.rev(indices, (axis,)) if descending else indices


def lexsort(keys, axis: int = -1):
    """Indices that sort by the last key, then the one before it, and so on.

    Args:
      keys: a sequence of arrays of one shape (or a 2-D array, rows as keys).
      axis: the axis to work along; negative counts from the end.

    Returns:
      An int array of the keys' shape.

    Raises:
      ValueError: axis is out of range for the array's rank.

    Example:
      >>> jnp.lexsort((jnp.array([1, 0, 1]), jnp.array([0, 0, 1])))
      Array([1, 0, 2], dtype=int32)
    """
    keys = [to_operand(k) for k in keys]
    if not keys:
        raise TypeError("jnp.lexsort needs at least one key (as NumPy and JAX)")
    shapes = {aval_of(k).shape for k in keys}
    if len(shapes) > 1:
        raise ValueError(
            f"jnp.lexsort: all keys need the same shape, got {sorted(shapes)}"
        )
    shape = shapes.pop()
    index_dtype = dtypes.default_int_dtype()  # int64 with x64 on, as JAX
    if not shape:
        return lax.full((), np.zeros((), index_dtype)[()])
    axis = normalize_axis(axis, len(shape))
    order_ = lax.broadcasted_iota(index_dtype, shape, axis)
    *_, indices = lax.sort(
        (*reversed(keys), order_), dimension=axis, is_stable=True, num_keys=len(keys)
    )
    return indices


class TakeAlongAxisError(ValueError):
    """jnp.take_along_axis got indices that do not fit the array."""


_TAKE_ALONG_MODES = {
    None: "fill",
    "fill": "fill",
    "drop": "fill",
    "clip": "clip",
    "promise_in_bounds": "promise",
}


def take_along_axis(
    arr, indices, axis: int | None = -1, mode=None, fill_value=None, *,
    wrap_negative_indices: bool | None = None,
):  # fmt: skip
    """Elements of `arr` picked along `axis` by a matching array of indices.

    The companion of argsort/argmax: `take_along_axis(a, argsort(a), axis)`
    sorts a. Indices broadcast against arr off `axis`.

    Args:
      arr: an array.
      indices: an integer array of arr's rank.
      axis: the axis to pick along; None flattens arr.
      mode: how out-of-bounds indices behave ("fill" by default, "clip").
      fill_value: the value for out-of-bounds indices in "fill" mode.
      wrap_negative_indices: if True, negative indices count from the end.

    Returns:
      An array of the indices' shape (broadcast with arr off `axis`).

    Raises:
      TakeAlongAxisError: the ranks of arr and indices differ.

    Example:
      >>> a = jnp.array([[3.0, 1.0], [2.0, 4.0]])
      >>> jnp.take_along_axis(a, jnp.argsort(a, axis=1), axis=1)
      Array([[1., 3.], [2., 4.]], dtype=float32)
    """
    arr, indices = to_operand(arr), to_operand(indices)
    _check_take_along(arr, indices, axis, mode)
    if axis is None:
        arr, axis = lax.reshape(arr, (aval_of(arr).size,)), 0
    ndim = aval_of(arr).ndim
    axis = int(axis) % ndim
    n = aval_of(arr).shape[axis]
    read = _TAKE_ALONG_MODES[getattr(mode, "name", mode)]
    if wrap_negative_indices is None:
        wrap_negative_indices = read != "promise"
    indices = lax.convert_element_type(indices, dtypes.int32)
    if not wrap_negative_indices:  # negatives stay out of range: clamp or fill
        below = np.int32(0 if read != "fill" else -n - 1)
        indices = ufuncs.where(ufuncs.less(indices, 0), below, indices)
    grid = []
    for d, size in enumerate(aval_of(arr).shape):
        if d == axis:
            grid.append(indices)
            continue
        shape = [1] * ndim
        shape[d] = size
        grid.append(lax.reshape(arange(size, dtype=dtypes.int32), tuple(shape)))
    if n == 0:
        shape = broadcast_shapes(*(aval_of(g).shape for g in grid))
        return lax.full(shape, np.zeros((), aval_of(arr).dtype)[()])
    return advanced_getitem(arr, tuple(grid), read, fill_value)


def _check_take_along(arr, indices, axis, mode) -> None:
    where = "jnp.take_along_axis"
    if getattr(mode, "name", mode) not in _TAKE_ALONG_MODES:
        raise TakeAlongAxisError(
            f"{where}: unknown mode {mode!r}; use 'fill' (the default), 'clip' "
            f"or 'promise_in_bounds'"
        )
    if not dtypes.is_integer(aval_of(indices).dtype):
        raise TypeError(
            f"{where}: indices must be integers, got {aval_of(indices).dtype}"
        )
    if axis is None and aval_of(indices).ndim != 1:
        raise TakeAlongAxisError(
            f"{where}: indices must be 1-d when axis=None, got shape "
            f"{aval_of(indices).shape}; flatten them, or name an axis"
        )
    if axis is not None and aval_of(indices).ndim != aval_of(arr).ndim:
        raise TakeAlongAxisError(
            f"{where}: indices of shape {aval_of(indices).shape} and arr of shape "
            f"{aval_of(arr).shape} must have the same rank"
        )


class PartitionArgumentError(ValueError):
    """jnp.partition/argpartition got a kth that is not a static int in range."""


def partition(a, kth: int, axis: int = -1):
    """`a` with its kth entry where a sort puts it, smaller ones before it.

    `a` with its kth smallest entry at position kth along `axis`, as JAX
    computes it: the kth + 1 smallest entries ascending, then the others
    descending (two `lax.top_k`s, so NaNs and ties land where JAX's do).

    Returns:
      An array of a's shape and dtype.

    Example:
      >>> jnp.partition(jnp.array([3.0, 1.0, 2.0]), 1)
      Array([1., 2., 3.], dtype=float32)
    """
    x, kth, axis = _partition_operand("partition", a, kth, axis)
    n = aval_of(x).shape[-1]
    if dtypes.is_unsigned_int(aval_of(x).dtype):  # -x wraps: shift by one, as JAX
        one = np.ones((), aval_of(x).dtype)[()]
        lowest = ufuncs.negative(ufuncs.add(x, one))
        bottom = ufuncs.subtract(ufuncs.negative(lax.top_k(lowest, kth + 1)[0]), one)
    else:
        bottom = ufuncs.negative(lax.top_k(ufuncs.negative(x), kth + 1)[0])
    top = lax.top_k(x, n - kth - 1)[0]
    return _swap_last(lax.concatenate([bottom, top], aval_of(x).ndim - 1), axis)


def argpartition(a, kth: int, axis: int = -1):
    """Indices that put the kth entry where a sort would, smaller ones before it.

    Indices that partition `a` as `partition` does (JAX's order: the kth + 1
    smallest first, then the remaining indices in ascending order).

    Returns:
      An int array of a's shape.

    Example:
      >>> jnp.argpartition(jnp.array([3.0, 1.0, 2.0]), 1)
      Array([1, 2, 0], dtype=int32)
    """
    x, kth, axis = _partition_operand("argpartition", a, kth, axis)
    n = aval_of(x).shape[-1]
    if dtypes.is_unsigned_int(aval_of(x).dtype):
        lowest = ufuncs.negative(ufuncs.add(x, np.ones((), aval_of(x).dtype)[()]))
    else:
        lowest = ufuncs.negative(x)
    bottom = lax.top_k(lowest, kth + 1)[1]
    # The rest: rank the positions bottom did not take (1.0) above those it did.
    last = aval_of(x).ndim - 1
    iota = lax.broadcasted_iota(aval_of(bottom).dtype, aval_of(x).shape, last)
    # taken[..., i, j]: bottom's i-th index is position j
    taken = ufuncs.equal(
        lax.expand_dims(bottom, (last + 1,)), lax.expand_dims(iota, (last,))
    )
    untaken = lax.bitwise_not(lax.reduce_or(taken, (last,)))
    proxy = lax.convert_element_type(untaken, np.float32)
    top = lax.top_k(proxy, n - kth - 1)[1]
    return _swap_last(lax.concatenate([bottom, top], last), axis)


def _partition_operand(name: str, a, kth, axis: int):
    """(a with `axis` last, kth in [0, n), axis) after JAX's checks: kth is a
    static int (JAX hashes it, so an array raises), complex is refused."""
    if isinstance(kth, (np.ndarray, Array, Tracer)):
        raise PartitionArgumentError(
            f"jnp.{name}: kth must be a static Python int, got an array "
            f"({np.shape(kth)}); pass int(kth)"
        )
    kth = operator.index(kth)
    a = to_operand(a)
    if dtypes.is_complex(aval_of(a).dtype):
        raise NotImplementedError(
            f"jnp.{name} of complex dtypes is not implemented (as in JAX)"
        )
    ndim = aval_of(a).ndim
    if not -ndim <= axis < ndim:
        raise PartitionArgumentError(
            f"jnp.{name}: axis {axis} is out of bounds for an array of dimension {ndim}"
        )
    axis %= ndim
    n = aval_of(a).shape[axis]
    if not -n <= kth < n:
        raise PartitionArgumentError(
            f"jnp.{name}: kth={kth} is out of bounds for an axis of length {n}"
        )
    return _swap_last(a, axis), kth % n, axis


def _swap_last(x, axis: int):
    last = aval_of(x).ndim - 1
    if axis == last:
        return x
    perm = list(range(last + 1))
    perm[axis], perm[last] = last, axis
    return lax.transpose(x, tuple(perm))


class SearchSortedMethodError(ValueError):
    """jnp.searchsorted got a `method` it does not know."""


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Where to insert `v` in sorted `a` to keep it sorted.

    A binary search per element of v; `method` chooses the algorithm ('scan', 'scan_unrolled', 'sort', 'compare_all'), not the result.

    Args:
      a: a sorted 1-D array.
      v: the values to place.
      side: 'left' (first suitable index) or 'right' (last).
      sorter: indices that sort a.
      method: the search algorithm.

    Returns:
      An int32 array of v's shape.

    Raises:
      ValueError: side or method is not one of the names.

    Example:
      >>> jnp.searchsorted(jnp.array([1, 3, 5]), jnp.array([0, 3, 6]))
      Array([0, 1, 3], dtype=int32)
    """
    if method not in _SEARCH_METHODS:
        raise SearchSortedMethodError(
            f"jnp.searchsorted: unknown method {method!r}; use one of "
            f"{', '.join(map(repr, _SEARCH_METHODS))}"
        )
    if side not in ("left", "right"):
        raise ValueError(
            f"jnp.searchsorted: side must be 'left' or 'right', got {side!r}"
        )
    a, v = to_operand(a), to_operand(v)
    if aval_of(a).ndim != 1:
        raise ValueError(
            f"jnp.searchsorted: a must be 1-d, got shape {aval_of(a).shape}"
        )
    if sorter is not None:
        a = take_along_axis(a, to_operand(sorter), 0)
    a, v = promote_dtypes(a, v)

    def goes_right(entry, value):  # value belongs after entry
        if side == "left":
            return _sorts_before(entry, value)
        return ufuncs.logical_not(_sorts_before(value, entry))

    if method in ("sort", "compare_all"):
        column = lax.reshape(a, (aval_of(a).size,) + (1,) * aval_of(v).ndim)
        return total(goes_right(column, v), axis=0, dtype=dtypes.int32)
    return _bisect(a, v, goes_right)


def _sorts_before(x, y):
    """x < y in the order sorting uses: NaN after every number."""
    less = ufuncs.less(x, y)
    if not dtypes.is_float(aval_of(x).dtype):
        return less
    nan_after = ufuncs.logical_and(ufuncs.isnan(y), ufuncs.logical_not(ufuncs.isnan(x)))
    return ufuncs.logical_or(less, nan_after)


def _bisect(a, v, goes_right):
    """For each value, the first position whose entry it does not go right of."""
    n = aval_of(a).size
    shape = aval_of(v).shape
    low = lax.full(shape, np.int32(0))
    high = lax.full(shape, np.int32(n))
    for _ in range(n.bit_length()):
        mid = lax.div(lax.add(low, high), lax.full(shape, np.int32(2)))
        entry = take(a, mid, mode="clip")
        active = ufuncs.less(low, high)
        right = goes_right(entry, v)
        low = ufuncs.where(
            ufuncs.logical_and(active, right), lax.add(mid, np.int32(1)), low
        )
        high = ufuncs.where(
            ufuncs.logical_and(active, ufuncs.logical_not(right)), mid, high
        )
    return low


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (partition, argpartition),
    """Args:
  a: an array.
  kth: the index (or indices) to put in sorted position.
  axis: the axis to work along; negative counts from the end.""",
    """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  PartitionArgumentError: axis is out of range for the array's rank.""",
)
add_sections((sort, argsort), RAISES_X)
