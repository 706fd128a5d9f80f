"""jnp.unique and the set operations built on it (union1d, intersect1d,
setdiff1d, setxor1d, isin).

Their result sizes depend on the values, so each works in two ways, as in
JAX: on concrete arrays the size is read from the data; under a trace it
must be given as a static `size=`, and the result holds the first `size`
entries padded with `fill_value` (by default the smallest entry found).

Everything reduces to one idea: sort, mark the entries to keep, then move
the kept ones to the front with one scatter (`_compact`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from olympus import lax
from olympus.backends.xla.array import to_device
from olympus.ir import dtypes
from olympus.numpy import ufuncs
from olympus.numpy.shaping import concatenate, moveaxis
from olympus.numpy.compiled import compiled
from olympus.lax.ops import checked_axis
from olympus.numpy.core import (
    aval_of,
    promote_dtypes,
    promote_dtypes_inexact,
    to_operand,
)
from olympus.numpy.indexing import take
from olympus.numpy.sorting import searchsorted
from olympus.numpy.statistics import diff
from olympus.tracer.core import Tracer
from olympus.tracer.errors import ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_X, SIZE_ARGS, add_args, add_sections

__all__ = [
    "in1d",
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "sort_complex",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


class UniqueSizeError(ConcretizationTypeError):
    """A set operation on a traced array was called without a static `size=`."""


# JAX's class names (the oracle compares namedtuples by name and fields).
class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


UniqueAllResult = _UniqueAllResult
UniqueCountsResult = _UniqueCountsResult
UniqueInverseResult = _UniqueInverseResult


def _int32(x):
    return lax.convert_element_type(x, dtypes.int32)


def _index_dtype(x):
    return lax.convert_element_type(x, dtypes.default_int_dtype())


def _cumsum(x):
    # lax's cumsum keeps int32 (jnp.cumsum widens it to int64 under x64)
    return lax.cumsum(_int32(x), axis=0)


def _flat(x):
    x = to_operand(x)
    return lax.reshape(x, (aval_of(x).size,))


def _run_size(x, size, upper_bound: int, name: str) -> int:
    """The static result size to compute: `size`, or for concrete input an
    upper bound (the result is cut to the true size afterwards)."""
    if size is not None:
        return int(size)
    if isinstance(x, Tracer):
        raise UniqueSizeError(
            f"jnp.{name}: the size of the result depends on the values of a traced "
            f"array, so under jit/vmap/grad it needs a static size= argument (and "
            f"optionally fill_value=), e.g. jnp.{name}(x, size=10)"
        )
    return int(upper_bound)


def _cut(x, count, axis):
    """The first `count` entries of concrete `x` along `axis` (None: all)."""
    if axis is None:
        return x
    index = [slice(None)] * np.ndim(x)
    index[axis] = slice(0, int(np.asarray(count)))
    return to_device(np.asarray(x)[tuple(index)])


# ---- the two building blocks: sorted rows with a mask of first occurrences ------
def _sorted_rows(rows):
    """Rows of the (n, m) array sorted lexicographically (stable), with the
    original row of each sorted row."""
    n, m = aval_of(rows).shape
    columns = [lax.reshape(lax.slice(rows, (0, j), (n, j + 1)), (n,)) for j in range(m)]
    order = lax.iota(dtypes.int32, n)
    if dtypes.is_complex(aval_of(rows).dtype):
        # Complex numbers order by real part, then imaginary part, as NumPy.
        keys = [part for c in columns for part in (lax.real(c), lax.imag(c))]
        *_, perm = lax.sort(
            (*keys, order), dimension=0, is_stable=True, num_keys=len(keys)
        )
        return _take_rows(rows, perm), perm
    *sorted_columns, perm = lax.sort(
        (*columns, order), dimension=0, is_stable=True, num_keys=m
    )
    return lax.concatenate([lax.reshape(c, (n, 1)) for c in sorted_columns], 1), perm


def sort_complex(a):
    """`a` sorted along its last axis by real part, then imaginary part.

    `a` sorted along its last axis by real part, then imaginary part, as a
    complex array (the order np.unique and np.sort give complex numbers).

    Args:
      a: an array.

    Returns:
      A complex array of a's shape.

    Example:
      >>> jnp.sort_complex(jnp.array([2 + 0j, 1 + 1j, 1 + 0j]))
      Array([1.+0.j, 1.+1.j, 2.+0.j], dtype=complex64)
    """
    a = to_operand(a)
    if not dtypes.is_complex(aval_of(a).dtype) and aval_of(a).ndim:
        # JAX sorts the real values, then converts: complex128 from the 64-bit
        # types only, complex64 from the rest (float16 and bfloat16 too).
        wide = aval_of(a).dtype in (np.float64, np.int64, np.uint64)
        out = lax.sort(a, dimension=aval_of(a).ndim - 1)
        return lax.convert_element_type(out, np.complex128 if wide else np.complex64)
    (a,) = promote_dtypes_inexact(a)
    if not dtypes.is_complex(aval_of(a).dtype):
        a = lax.complex(
            a, lax.full(aval_of(a).shape, np.zeros((), aval_of(a).dtype)[()])
        )
    last = max(aval_of(a).ndim - 1, 0)
    _, _, out = lax.sort(
        (lax.real(a), lax.imag(a), a), dimension=last, is_stable=True, num_keys=2
    )
    return out


def _differs(a, b, equal_nan: bool):
    """a != b elementwise, NaN equal to NaN when `equal_nan` (as np.unique)."""
    ne = lax.ne(a, b)
    if equal_nan and dtypes.is_inexact(aval_of(a).dtype):
        ne = lax.bitwise_and(
            ne, lax.bitwise_not(lax.bitwise_and(ufuncs.isnan(a), ufuncs.isnan(b)))
        )
    return ne


def _first_of_each(sorted_rows, equal_nan: bool):
    """True at the first of each run of equal rows of a sorted (n, m) array."""
    n, m = aval_of(sorted_rows).shape
    if n == 0:
        return lax.full((0,), True)
    later = lax.slice(sorted_rows, (1, 0), (n, m))
    earlier = lax.slice(sorted_rows, (0, 0), (n - 1, m))
    new = lax.reduce_or(_differs(later, earlier, equal_nan), (1,))
    return lax.concatenate([lax.full((1,), True), new], 0)


def _compact_positions(keep, size: int):
    """Positions of the first `size` True entries of `keep`, in order, padded
    with 0; and how many True entries there are."""
    n = aval_of(keep).shape[0]
    slot = lax.select(
        keep, lax.sub(_cumsum(keep), np.int32(1)), lax.full((n,), np.int32(size))
    )
    positions = lax.full((size,), np.int32(0)).at[slot].set(lax.iota(dtypes.int32, n))
    return positions, lax.reduce_sum(_int32(keep), (0,))


def _take_rows(rows, positions):
    return take(rows, positions, axis=0, mode="clip")


def _fill(fill_value, shape: tuple, dtype):
    """`fill_value` (a Python number or a traced scalar) as an array of `shape`."""
    fill = 0 if fill_value is None else fill_value
    return lax.broadcast_in_dim(
        lax.convert_element_type(to_operand(fill), dtype), shape, ()
    )


def _fill_invalid(values, valid, fill_value):
    """`values` where `valid` (along the first axis), else `fill_value`."""
    if fill_value is None:
        return values
    shape = aval_of(values).shape
    mask = lax.broadcast_in_dim(valid, shape, (0,))
    return lax.select(mask, values, _fill(fill_value, shape, aval_of(values).dtype))


def _kept(sorted_values, keep, size: int, fill_value):
    """The kept entries of a sorted 1-d array, in order: `size` of them,
    padded with fill_value (by default the smallest kept entry, as JAX)."""
    if aval_of(sorted_values).shape[0] == 0:
        return _fill(fill_value, (size,), aval_of(sorted_values).dtype)
    positions, count = _compact_positions(keep, size)
    valid = lax.lt(lax.iota(dtypes.int32, size), count)
    values = _take_rows(sorted_values, positions)
    if fill_value is None and size:
        fill_value = lax.reshape(lax.slice(values, (0,), (1,)), ())
    return _fill_invalid(values, valid, fill_value)


# ---- unique -----------------------------------------------------------------------
def _as_rows(ar, axis):
    """The array as (n, m) rows whose uniqueness is asked, and the shape of one row."""
    ar = to_operand(ar)
    if axis is None:
        return lax.reshape(ar, (aval_of(ar).size, 1)), ()
    axis = int(axis) % max(aval_of(ar).ndim, 1)
    moved = moveaxis(ar, axis, 0)
    shape = aval_of(moved).shape
    return lax.reshape(moved, (shape[0], int(np.prod(shape[1:])))), shape[1:]


def _counts(first, n: int, size: int, count):
    """How often each of the first `size` unique rows occurs (0 for padding)."""
    starts, _ = _compact_positions(first, size + 1)
    starts = lax.select(
        lax.lt(lax.iota(dtypes.int32, size + 1), count),
        starts,
        lax.full((size + 1,), np.int32(n)),
    )
    return diff(starts)


def _inverse(first, perm, n: int):
    """For each original row, the index of its value among the unique ones."""
    group = lax.sub(_cumsum(first), np.int32(1))
    return lax.full((n,), np.int32(0)).at[perm].set(group)


def unique(
    ar,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value=None,
    sorted: bool = True,
):
    """The sorted unique elements of `ar`.

    The count depends on the data: under jit pass a static `size` (padded with fill_value).

    Args:
      ar: an array.
      return_index: also return first-occurrence indices.
      return_inverse: also return indices rebuilding ar.
      return_counts: also return each element's count.
      axis: unique slices along this axis (None: flatten).
      equal_nan: if True, NaNs count as one value.
      size: the static number of unique values to return.
      fill_value: the padding for `size`.
      sorted: accepted for NumPy 2.3's signature; the values always come back
        sorted.

    Returns:
      The unique values, or a tuple with the requested extras.

    Raises:
      UniqueSizeError: ar is traced (under jit) and size is not given (a ConcretizationTypeError).

    Example:
      >>> jnp.unique(jnp.array([3, 1, 3, 2]))
      Array([1, 2, 3], dtype=int32)
    """
    del sorted  # always sorted, as NumPy
    ar = to_operand(ar)
    axis = None if axis is None else checked_axis("jnp.unique", axis, aval_of(ar).ndim)
    rows = aval_of(ar).size if axis is None else aval_of(ar).shape[axis]
    flags = (bool(return_index), bool(return_inverse), bool(return_counts))
    outs, count = compiled(_unique)(
        ar,
        fill_value,
        axis=axis,
        equal_nan=equal_nan,
        size=_run_size(ar, size, rows, "unique"),
        flags=flags,
    )
    if size is None:  # concrete input: cut the padding off on the host
        cut_axes = [0 if axis is None else axis, 0, None, 0]
        cut_axes = [cut_axes[0]] + [a for a, f in zip(cut_axes[1:], flags) if f]
        outs = tuple(_cut(o, count, a) for o, a in zip(outs, cut_axes))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _unique(ar, fill_value, *, axis, equal_nan, size, flags):
    """unique's outputs for a static result size (one compiled program)."""
    return_index, return_inverse, return_counts = flags
    rows, row_shape = _as_rows(ar, axis)
    n = aval_of(rows).shape[0]
    aux, perm = _sorted_rows(rows)
    first = _first_of_each(aux, equal_nan)
    count = lax.reduce_sum(_int32(first), (0,))
    if n == 0:
        positions = lax.full((size,), np.int32(0))
        values = _fill(fill_value, (size, *aval_of(aux).shape[1:]), aval_of(aux).dtype)
    else:
        positions, _ = _compact_positions(first, size)
        valid = lax.lt(lax.iota(dtypes.int32, size), count)
        values = _fill_invalid(_take_rows(aux, positions), valid, fill_value)
    outs = [_restore_axis(values, row_shape, axis)]
    if return_index:
        outs.append(_index_dtype(_take_rows(perm, positions) if n else positions))
    if return_inverse:
        inverse = _inverse(first, perm, n)
        shape = aval_of(ar).shape if axis is None else (n,)
        outs.append(_index_dtype(lax.reshape(inverse, shape)))
    if return_counts:
        counts = _counts(first, n, size, count) if n else lax.full((size,), np.int32(0))
        outs.append(_index_dtype(counts))
    return tuple(outs), count


def _restore_axis(values, row_shape: tuple, axis):
    if axis is None:
        return lax.reshape(values, (aval_of(values).shape[0],))
    values = lax.reshape(values, (aval_of(values).shape[0], *row_shape))
    return moveaxis(values, 0, axis)


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    """The sorted unique values of `x`.

    The sorted unique values of `x` (flattened); `size` as in `unique`. These
    array-API forms keep every NaN (equal_nan=False), as JAX's.

    Returns:
      A 1-D array.

    Example:
      >>> jnp.unique_values(jnp.array([3, 1, 3]))
      Array([1, 3], dtype=int32)
    """
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(
    x, /, *, size: int | None = None, fill_value=None
) -> _UniqueCountsResult:
    """The sorted unique values of `x` and how often each occurs.

    (values, counts) of `x` flattened; `size` as in `unique`.

    Returns:
      A (values, counts) named tuple.

    Example:
      >>> jnp.unique_counts(jnp.array([3, 1, 3]))
      _UniqueCountsResult(values=Array([1, 3], dtype=int32), counts=Array([1, 2], dtype=int32))
    """
    return _UniqueCountsResult(
        *unique(
            x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value
        )
    )


def unique_inverse(
    x, /, *, size: int | None = None, fill_value=None
) -> _UniqueInverseResult:
    """The sorted unique values of `x` and the index of each entry among them.

    (values, inverse_indices) with inverse_indices of x's shape.

    Returns:
      A (values, inverse_indices) named tuple; inverse_indices has x's shape.

    Example:
      >>> jnp.unique_inverse(jnp.array([3, 1, 3]))
      _UniqueInverseResult(values=Array([1, 3], dtype=int32), inverse_indices=Array([1, 0, 1], dtype=int32))
    """
    return _UniqueInverseResult(
        *unique(
            x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
        )
    )


def unique_all(x, /, *, size: int | None = None, fill_value=None) -> _UniqueAllResult:
    """The unique values of `x` with first indices, inverse indices and counts.

    (values, indices, inverse_indices, counts) of `x`, as `unique` with all
    flags.

    Returns:
      A (values, indices, inverse_indices, counts) named tuple.

    Example:
      >>> jnp.unique_all(jnp.array([3, 1, 3])).counts
      Array([1, 2], dtype=int32)
    """
    flags = dict(return_index=True, return_inverse=True, return_counts=True)
    return _UniqueAllResult(
        *unique(x, equal_nan=False, size=size, fill_value=fill_value, **flags)
    )


# ---- membership -------------------------------------------------------------------
_COMPARE_ALL_LIMIT = 1 << 16


def isin(
    element,
    test_elements,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    method: str = "auto",
):
    """Whether each entry of `element` occurs in `test_elements`.

    True where an entry of `element` occurs in `test_elements` (NaN never does).
    method 'compare_all' compares every pair (fast for small inputs), 'sort' (or
    'binary_search') looks each entry up in the sorted test elements; 'auto'
    picks by size.

    Args:
      element: an array.
      test_elements: the values to look for.
      assume_unique: a hint that the inputs have no duplicates (the result must
        not depend on it being wrong).
      invert: whether to negate the result.
      method: 'auto', 'sort', 'compare_all' or 'binary_search': the algorithm
        (not the result).

    Returns:
      A bool array of element's shape.

    Example:
      >>> jnp.isin(jnp.array([1, 2, 3]), jnp.array([2, 5]))
      Array([False,  True, False], dtype=bool)
    """
    del assume_unique
    element, test = promote_dtypes(to_operand(element), _flat(test_elements))
    if method not in ("auto", "compare_all", "sort", "binary_search"):
        raise ValueError(
            f"jnp.isin: method={method!r}; expected 'auto', 'compare_all', "
            f"'sort' or 'binary_search'"
        )
    work = aval_of(element).size * aval_of(test).size
    if method == "compare_all" or (method == "auto" and work <= _COMPARE_ALL_LIMIT):
        found = _isin_compare_all(element, test)
    else:
        found = _isin_sorted(element, test)
    return lax.bitwise_not(found) if invert else found


def _isin_compare_all(element, test):
    shape = aval_of(element).shape
    m = aval_of(test).shape[0]
    pairs = lax.eq(
        lax.broadcast_in_dim(element, (*shape, m), tuple(range(len(shape)))),
        lax.broadcast_in_dim(test, (*shape, m), (len(shape),)),
    )
    return lax.reduce_or(pairs, (len(shape),))


def _isin_sorted(element, test):
    m = aval_of(test).shape[0]
    if m == 0:
        return lax.full(aval_of(element).shape, False)
    ordered = lax.sort(test, dimension=0)
    where_ = lax.clamp(
        np.int32(0), _int32(searchsorted(ordered, element)), np.int32(m - 1)
    )
    return lax.eq(_take_rows(ordered, where_), element)


if hasattr(np, "in1d"):

    def in1d(ar1, ar2, assume_unique: bool = False, invert: bool = False):
        """`isin` of the flattened `ar1` (NumPy's older name)."""
        return isin(_flat(ar1), ar2, assume_unique, invert)
else:  # NumPy 2.4 removed in1d; olympus.numpy follows the installed NumPy's names.
    __all__.remove("in1d")


# ---- set operations on 1-d arrays -------------------------------------------------
def _sorted_unique_mask(ar, equal_nan: bool = True):
    """ar flattened and sorted, with True at the first of each run of equals."""
    flat = _flat(ar)
    n = aval_of(flat).shape[0]
    aux, perm = _sorted_rows(lax.reshape(flat, (n, 1)))
    first = _first_of_each(aux, equal_nan)
    return lax.reshape(aux, (n,)), perm, first


def _union_keep(ar1, ar2):
    aux, perm, first = _sorted_unique_mask(concatenate([ar1, ar2]))
    return aux, perm, first


def _difference_keep(ar1, ar2):
    aux, perm, first = _sorted_unique_mask(ar1)
    return aux, perm, lax.bitwise_and(first, isin(aux, ar2, invert=True))


def _xor_keep(ar1, ar2):
    aux, perm, first = _sorted_unique_mask(concatenate([ar1, ar2]))
    in_one = lax.ne(isin(aux, ar1), isin(aux, ar2))
    keep = lax.bitwise_and(first, in_one)
    if not dtypes.is_inexact(aval_of(aux).dtype) or not aval_of(aux).shape[0]:
        return aux, perm, keep
    # JAX uniques each array (one NaN each), then keeps what differs from its
    # neighbours, and NaN differs from NaN: a NaN of each array stays.
    n = aval_of(aux).shape[0]
    from_ar1 = lax.lt(perm, lax.full((n,), np.int32(aval_of(ar1).shape[0])))
    nan = ufuncs.isnan(aux)
    changes = lax.bitwise_or(
        lax.bitwise_not(_shift_right_one(nan)),
        lax.ne(from_ar1, _shift_right_one(from_ar1)),
    )
    first_nan_of_each = lax.bitwise_and(nan, lax.bitwise_or(changes, _is_first(n)))
    return aux, perm, lax.bitwise_or(keep, first_nan_of_each)


def _shift_right_one(x):
    """x[i - 1] at i (x[0] at 0), for comparing neighbours of a 1-d array."""
    n = aval_of(x).shape[0]
    return lax.concatenate([lax.slice(x, (0,), (1,)), lax.slice(x, (0,), (n - 1,))], 0)


def _is_first(n: int):
    return lax.eq(lax.iota(dtypes.int32, n), lax.full((n,), np.int32(0)))


def _intersection_keep(ar1, ar2):
    aux, perm, first = _sorted_unique_mask(ar1)
    return aux, perm, lax.bitwise_and(first, isin(aux, ar2))


def _kept_values(ar1, ar2, fill_value, *, keep_fn, size, return_indices=False):
    """The entries `keep_fn` marks, first `size` of them, in sorted order
    (with their first indices in ar1 and ar2 when asked, for intersect1d),
    and how many there are."""
    aux, perm, keep = keep_fn(ar1, ar2)
    count = lax.reduce_sum(_int32(keep), (0,))
    values = _kept(aux, keep, size, fill_value)
    if not return_indices:
        return (values,), count
    positions, _ = _compact_positions(keep, size)
    index1 = _take_rows(perm, positions) if aval_of(aux).shape[0] else positions
    index2 = _first_index_in(ar2, values)
    # Padding gets out-of-range indices (len(ar1), len(ar2)), as JAX.
    valid = lax.lt(lax.iota(dtypes.int32, size), count)
    index1 = lax.select(
        valid, _int32(index1), lax.full((size,), np.int32(aval_of(ar1).shape[0]))
    )
    index2 = lax.select(
        valid, _int32(index2), lax.full((size,), np.int32(aval_of(ar2).shape[0]))
    )
    return (values, _index_dtype(index1), _index_dtype(index2)), count


def _set_operation(name: str, keep_fn, ar1, ar2, size, fill_value, **options):
    ar1, ar2 = promote_dtypes(_flat(ar1), _flat(ar2))
    traced = ar1 if isinstance(ar1, Tracer) else ar2
    n1, n2 = aval_of(ar1).shape[0], aval_of(ar2).shape[0]
    bound = n1 if keep_fn in (_difference_keep, _intersection_keep) else n1 + n2
    outs, count = compiled(_kept_values)(
        ar1,
        ar2,
        fill_value,
        keep_fn=keep_fn,
        size=_run_size(traced, size, bound, name),
        **options,
    )
    if size is None:
        outs = tuple(_cut(o, count, 0) for o in outs)
    return outs[0] if len(outs) == 1 else outs


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """The sorted unique values found in either array.

    Example:
      >>> jnp.union1d(jnp.array([1, 2]), jnp.array([2, 3]))
      Array([1, 2, 3], dtype=int32)
    """
    return _set_operation("union1d", _union_keep, ar1, ar2, size, fill_value)


def setdiff1d(
    ar1, ar2, assume_unique: bool = False, *, size: int | None = None, fill_value=None
):
    """The sorted unique values of `ar1` not in `ar2`.

    Example:
      >>> jnp.setdiff1d(jnp.array([1, 2, 3]), jnp.array([2]))
      Array([1, 3], dtype=int32)
    """
    del assume_unique
    # JAX pads setdiff1d with 0 (not with the smallest value, as the others).
    fill_value = 0 if fill_value is None else fill_value
    return _set_operation("setdiff1d", _difference_keep, ar1, ar2, size, fill_value)


def setxor1d(
    ar1, ar2, assume_unique: bool = False, *, size: int | None = None, fill_value=None
):
    """The sorted values in exactly one of the arrays.

    Example:
      >>> jnp.setxor1d(jnp.array([1, 2, 3]), jnp.array([2, 4]))
      Array([1, 3, 4], dtype=int32)
    """
    del assume_unique
    return _set_operation("setxor1d", _xor_keep, ar1, ar2, size, fill_value)


def intersect1d(
    ar1,
    ar2,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: int | None = None,
    fill_value=None,
):
    """The sorted unique values found in both arrays.

    The sorted unique values in both arrays; with `return_indices`, also where
    each first occurs in `ar1` and in `ar2` (padding gets the out-of-range
    indices len(ar1) and len(ar2)).

    Returns:
      A 1-D array (and the indices into each when return_indices).

    Example:
      >>> jnp.intersect1d(jnp.array([1, 2, 3]), jnp.array([2, 3, 4]))
      Array([2, 3], dtype=int32)
    """
    del assume_unique
    return _set_operation(
        "intersect1d",
        _intersection_keep,
        ar1,
        ar2,
        size,
        fill_value,
        return_indices=bool(return_indices),
    )


def _first_index_in(ar, values):
    """For each value, the index of its first occurrence in `ar` (clamped)."""
    n = aval_of(ar).shape[0]
    if n == 0:
        return lax.full(aval_of(values).shape, np.int32(0))
    aux, perm = _sorted_rows(lax.reshape(ar, (n, 1)))
    where_ = lax.clamp(
        np.int32(0),
        _int32(searchsorted(lax.reshape(aux, (n,)), values)),
        np.int32(n - 1),
    )
    return _take_rows(perm, where_)


# Docstring sections the functions above share with their families (ufunc_docs).
add_args(
    (unique_values, unique_counts, unique_inverse, unique_all),
    {"x": "an array (flattened for the values).", **SIZE_ARGS},
)
add_args(
    (union1d, setdiff1d, setxor1d, intersect1d),
    {
        "ar1": "an array (flattened).",
        "ar2": "an array (flattened).",
        "assume_unique": "a hint that the inputs have no duplicates (the result "
        "must not depend on it being wrong).",
        "return_indices": "whether to also return the first index of each value "
        "in ar1 and ar2.",
        **SIZE_ARGS,
    },
)
add_sections((union1d, setdiff1d, setxor1d), "Returns:\n  A 1-D array.")
add_sections(
    (
        sort_complex,
        unique_values,
        unique_counts,
        unique_inverse,
        unique_all,
        isin,
        union1d,
        setdiff1d,
        setxor1d,
        intersect1d,
    ),
    RAISES_X,
)
