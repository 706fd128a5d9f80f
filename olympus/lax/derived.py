"""`olympus.lax` functions that are compositions of other lax functions (no
primitive of their own), with JAX's signatures: small arithmetic (square,
reciprocal, exp2, conj), array constructors (full_like, empty), slicing and
indexing along one axis, reshaping (collapse, tile, split,
broadcast_to_rank), batch_matmul, scatter_sub and axis_size.

Their derivatives, batching rules and NumPy semantics follow from the
primitives they are built of.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.lax import ops
from olympus.lax.elementwise import convert_element_type_p
from olympus.lax import slicing
from olympus.lax.parallel.axis_names import _axes, _axis_size
from olympus.lax.parallel.primitives import varying_like
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.lax.op_docs import (
    ARGS_REAL_X_ACCURACY,
    RAISES_NOT_REAL_FLOAT,
    RETURNS_LIKE_X,
    RETURNS_NEW_LIKE_OPERAND,
    with_sections,
)


class LaxArgumentError(ValueError):
    """A static argument of a lax function (an index, axis, size list or
    rank) does not fit the operand's shape."""


def _wrapped(api: str, value: int, size: int, problem: str) -> int:
    """`value` in [-size, size) as an index in [0, size); else `problem`
    (with {} for the value) as a LaxArgumentError."""
    value = operator.index(value)
    if not -size <= value < size:
        raise LaxArgumentError(f"lax.{api}: {problem.format(value)}")
    return value % size


def _axis(api: str, axis: int, ndim: int) -> int:
    return _wrapped(api, axis, ndim, f"axis {{}} is out of range for rank {ndim}")


# ---- arithmetic ------------------------------------------------------------------
@with_sections(RETURNS_LIKE_X)
def square(x):
    """x * x elementwise.

    Args:
      x: an array of a numeric dtype.

    Raises:
      OlympusTypeError: x is not an array, a NumPy array or a Python number.

    Example:
      >>> lax.square(np.int32([3, -2]))
      Array([9, 4], dtype=int32)
    """
    return ops.integer_pow(x, 2)


@with_sections(RETURNS_LIKE_X)
def reciprocal(x):
    """1 / x elementwise (floating-point x; integers raise, as in JAX).

    Args:
      x: an array of an inexact dtype.

    Raises:
      OlympusTypeError: x is of an integer dtype.

    Example:
      >>> lax.reciprocal(np.float32([2.0, 4.0]))
      Array([0.5 , 0.25], dtype=float32)
    """
    return ops.integer_pow(x, -1)


@with_sections(ARGS_REAL_X_ACCURACY, RETURNS_LIKE_X, RAISES_NOT_REAL_FLOAT)
def exp2(x, *, accuracy=None):
    """2 ** x elementwise, as exp(x ln 2).

    Example:
      >>> lax.exp2(np.float32([0.0, 3.0]))
      Array([1., 8.], dtype=float32)
    """
    dtype = aval_of(x).dtype
    if not dtypes.is_inexact(dtype):
        raise OlympusTypeError(
            f"lax.exp2 requires floating-point operands, got {dtypes.short_name(dtype)}"
        )
    return ops.exp(ops.mul(x, np.array(math.log(2), dtype)[()]))


def conj(x):
    """The complex conjugate; a real f32/f64 operand becomes complex (c64/c128) with zero imaginary part, as in JAX.

    Args:
      x: an array of a complex or real floating dtype.

    Returns:
      A complex array of x's shape.

    Raises:
      OlympusTypeError: x is of an integer dtype.

    Example:
      >>> lax.conj(np.complex64([1 + 2j]))
      Array([1.-2.j], dtype=complex64)
    """
    dtype = aval_of(x).dtype
    if dtypes.is_complex(dtype):
        return ops.complex(ops.real(x), ops.neg(ops.imag(x)))
    if dtype not in (dtypes.float32, dtypes.float64):
        raise OlympusTypeError(
            f"lax.conj requires a complex, f32 or f64 operand, got "
            f"{aval_of(x).str_short()}"
        )
    return ops.complex(x, ops.full(aval_of(x).shape, 0, dtype))


# ---- constructors ----------------------------------------------------------------
def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like `x` filled with `fill_value`.

    Args:
      x: an array (its shape and dtype are used unless given).
      fill_value: a scalar.
      dtype: overrides x's dtype.
      shape: overrides x's shape.
      sharding: how to lay the result out (None: as x, if it has one).

    Returns:
      The filled array.

    Raises:
      OlympusTypeError: x or fill_value is not an array or number.

    Example:
      >>> lax.full_like(np.float32([1.0, 2.0]), 3)
      Array([3., 3.], dtype=float32)
    """
    aval = aval_of(x)
    shape = aval.shape if shape is None else tuple(int(d) for d in shape)
    out = ops.full(shape, fill_value, aval.dtype if dtype is None else dtype)
    if dtype is None and aval.weak_type:  # x's weak type too, as JAX's full_like
        out = convert_element_type_p.bind(out, new_dtype=aval.dtype, weak_type=True)
    return varying_like(out, x)  # in a shard_map body it varies as x does


def empty(shape, dtype, *, out_sharding=None):
    """An array whose values must be written before they are read.

    An array of `shape` and `dtype` whose values the program must not read
    before writing (olympus fills it with zeros; JAX leaves it to the backend).

    Args:
      shape: the result's shape.
      dtype: the result's dtype.
      out_sharding: a sharding for the result; None for the default.

    Returns:
      An array of `shape` and `dtype`.

    Raises:
      OlympusTypeError: shape has a negative size.

    Example:
      >>> lax.empty((2,), jnp.float32).shape
      (2,)
    """
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    return ops.full(shape, 0, dtype)


# ---- one axis at a time ----------------------------------------------------------
def _static_index(api: str, index: int, size: int) -> int:
    problem = f"index {{}} is out of bounds for an axis of size {size}"
    return _wrapped(api, index, size, problem)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """Element `index` (a Python int) of `axis`.

    Args:
      operand: the array.
      index: a Python int; negative counts from the end.
      axis: the axis to index.
      keepdims: if True, keep `axis` with size 1.

    Returns:
      The selected slice.

    Raises:
      LaxArgumentError: index is out of range.

    Example:
      >>> lax.index_in_dim(np.arange(6).reshape(2, 3), -1, axis=1, keepdims=False)
      Array([2, 5], dtype=int32)
    """
    shape = aval_of(operand).shape
    axis = _axis("index_in_dim", axis, len(shape))
    index = _static_index("index_in_dim", index, shape[axis])
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else ops.squeeze(out, (axis,))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """`operand[start:limit:stride]` along one axis.

    None and negative bounds behave as in Python slicing of that axis.

    Args:
      operand: the array.
      start_index: the start (None: 0).
      limit_index: the end, exclusive (None: the axis' size).
      stride: the step.
      axis: the axis to slice.

    Returns:
      The sliced array.

    Raises:
      LaxArgumentError: axis is out of range for the operand's rank (a
        ValueError).

    Example:
      >>> lax.slice_in_dim(np.arange(10), -8, None, 2)
      Array([2, 4, 6, 8], dtype=int32)
    """
    shape = aval_of(operand).shape
    axis = _axis("slice_in_dim", axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start, limit = (b + size if b < 0 else b for b in (start, limit))
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return ops.slice(operand, starts, limits, strides)


def _dynamic_index(index, size: int, allow_negative: bool):
    """`index` (traced or not) with negative values counted from the end."""
    if isinstance(index, (int, np.integer)):
        return int(index) + size if allow_negative and index < 0 else int(index)
    if not allow_negative:
        return index
    dtype = aval_of(index).dtype
    if dtypes.is_unsigned_int(dtype):
        return index
    return ops.select(
        ops.lt(index, np.zeros((), dtype)[()]),
        ops.add(index, np.array(size, dtype)[()]),
        index,
    )


def dynamic_index_in_dim(
    operand, index, axis: int = 0, keepdims: bool = True, *, allow_negative_indices=True
):
    """Element `index` of `axis`, where index may be traced.

    Negative indices count from the end; out-of-range ones clamp, as in
    dynamic_slice.

    Args:
      operand: the array.
      index: a scalar integer.
      axis: the axis to index.
      keepdims: if True, keep `axis` with size 1.
      allow_negative_indices: if True, negative indices count from the end.

    Returns:
      The selected slice.

    Raises:
      LaxArgumentError: axis is out of range for the operand's rank (a
        ValueError).

    Example:
      >>> lax.dynamic_index_in_dim(np.arange(6).reshape(2, 3), -1, 1, False)
      Array([2, 5], dtype=int32)
    """
    shape = aval_of(operand).shape
    axis = _axis("dynamic_index_in_dim", axis, len(shape))
    index = _dynamic_index(index, shape[axis], allow_negative_indices)
    out = ops.dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else ops.squeeze(out, (axis,))


@with_sections(RETURNS_NEW_LIKE_OPERAND)
def dynamic_update_index_in_dim(
    operand, update, index, axis: int, *, allow_negative_indices=True
):
    """`operand` with element `index` of `axis` replaced by `update`.

    `operand` with element `index` of `axis` replaced by `update` (of the
    operand's shape without that axis, or with it as size 1).

    Args:
      operand: the array to update.
      update: the new slice: operand's shape without `axis`, or with it of size
        1.
      index: the position along axis, an int or a traced integer scalar (clamped
        into range).
      axis: the axis.
      allow_negative_indices: whether negative indices count from the end.

    Raises:
      LaxArgumentError: axis is out of range for the operand's rank (a
        ValueError).

    Example:
      >>> lax.dynamic_update_index_in_dim(jnp.zeros((3, 2)), jnp.ones(2), 1, 0)
      Array([[0., 0.],
             [1., 1.],
             [0., 0.]], dtype=float32)
    """
    shape = aval_of(operand).shape
    axis = _axis("dynamic_update_index_in_dim", axis, len(shape))
    if aval_of(update).ndim == len(shape) - 1:
        update = ops.expand_dims(update, (axis,))
    index = _dynamic_index(index, shape[axis], allow_negative_indices)
    return ops.dynamic_update_slice_in_dim(operand, update, index, axis)


# ---- reshaping ---------------------------------------------------------------------
def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """`operand` with dimensions [start, stop) merged into one.

    Dimensions [start, stop) merged into one (row-major), e.g. shape (2, 3, 4)
    collapsed from 0 to 2 is (6, 4).

    Args:
      operand: an array.
      start_dimension: the first dimension to merge.
      stop_dimension: one past the last; None for the end.

    Returns:
      An array of operand's values and dtype with the dimensions merged.

    Raises:
      LaxArgumentError: the dimensions do not fit the operand's shape (a
        ValueError).

    Example:
      >>> lax.collapse(np.zeros((2, 3, 4)), 1).shape
      (2, 12)
    """
    shape = aval_of(operand).shape
    ndim = len(shape)
    stop = ndim if stop_dimension is None else operator.index(stop_dimension)
    start = operator.index(start_dimension)
    start, stop = (d + ndim if d < 0 else d for d in (start, stop))
    if not 0 <= start <= stop <= ndim:
        raise LaxArgumentError(
            f"lax.collapse: dimensions [{start_dimension}, {stop_dimension}) do not "
            f"fit an operand of shape {shape}"
        )
    merged = math.prod(shape[start:stop])
    return ops.reshape(operand, (*shape[:start], merged, *shape[stop:]))


def tile(operand, reps: Sequence[int]):
    """`operand` repeated reps[i] times along each axis i (one rep per axis).

    Args:
      operand: an array.
      reps: one non-negative repetition count per axis.

    Returns:
      An array of operand's dtype, each axis reps[i] times longer.

    Raises:
      LaxArgumentError: reps has the wrong length or a negative count (a
        ValueError).

    Example:
      >>> lax.tile(np.int32([1, 2]), (2,))
      Array([1, 2, 1, 2], dtype=int32)
    """
    shape = aval_of(operand).shape
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != len(shape) or any(r < 0 for r in reps):
        raise LaxArgumentError(
            f"lax.tile: need one non-negative rep per axis of an operand of shape "
            f"{shape}, got reps={reps}"
        )
    interleaved = tuple(d for pair in zip(reps, shape) for d in pair)
    kept = tuple(range(1, 2 * len(shape), 2))
    spread = ops.broadcast_in_dim(operand, interleaved, kept)
    return ops.reshape(spread, tuple(r * d for r, d in zip(reps, shape)))


def split(operand, sizes: Sequence[int], axis: int = 0):
    """`operand` cut along `axis` into consecutive pieces of `sizes`.

    `operand` cut along `axis` into consecutive pieces of `sizes` (which must
    add up to the axis length).

    Args:
      operand: an array.
      sizes: the pieces' lengths, adding up to the axis length.
      axis: the axis to cut.

    Returns:
      A list of arrays, one per size.

    Raises:
      LaxArgumentError: the sizes are negative or do not add up (a ValueError).

    Example:
      >>> [p.shape for p in lax.split(np.zeros(5), (2, 3))]
      [(2,), (3,)]
    """
    shape = aval_of(operand).shape
    axis = _axis("split", axis, len(shape))
    sizes = tuple(operator.index(s) for s in sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise LaxArgumentError(
            f"lax.split: sizes {sizes} must be non-negative and add up to "
            f"{shape[axis]}, the length of axis {axis} of shape {shape}"
        )
    ends = np.cumsum((0,) + sizes)
    return [
        slice_in_dim(operand, int(lo), int(hi), 1, axis)
        for lo, hi in zip(ends[:-1], ends[1:])
    ]


def broadcast_to_rank(x, rank: int):
    """`x` with leading axes of size 1 added up to `rank`.

    Args:
      x: an array.
      rank: the rank to reach, at least x's.

    Returns:
      An array of x's values with rank `rank`.

    Raises:
      LaxArgumentError: rank is below x's rank (a ValueError).

    Example:
      >>> lax.broadcast_to_rank(np.float32([1.0, 2.0]), 3).shape
      (1, 1, 2)
    """
    ndim = aval_of(x).ndim
    rank = operator.index(rank)
    if rank < ndim:
        raise LaxArgumentError(
            f"lax.broadcast_to_rank: cannot lower the rank of {aval_of(x).str_short()} "
            f"to {rank}"
        )
    return x if rank == ndim else ops.broadcast(x, (1,) * (rank - ndim))


# ---- products and scatters -------------------------------------------------------------
def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch axes: [..., m, k] @ [..., k, n].

    Args:
      lhs: an array of rank >= 2.
      rhs: an array of lhs's rank with equal batch axes.
      precision: as dot_general's.

    Returns:
      An array [..., m, n].

    Raises:
      LaxArgumentError: the ranks differ or are below 2, or the batch axes
        differ.

    Example:
      >>> lax.batch_matmul(np.ones((4, 2, 3)), np.ones((4, 3, 5))).shape
      (4, 2, 5)
    """
    ls, rs = aval_of(lhs).shape, aval_of(rhs).shape
    if len(ls) != len(rs) or len(ls) < 2 or ls[:-2] != rs[:-2] or ls[-1] != rs[-2]:
        raise LaxArgumentError(
            f"lax.batch_matmul: needs operands [..., m, k] and [..., k, n] with the "
            f"same batch axes, got shapes {ls} and {rs}"
        )
    batch = tuple(range(len(ls) - 2))
    contract = (((len(ls) - 1,), (len(rs) - 2,)), (batch, batch))
    return ops.dot_general(lhs, rhs, contract, precision)


scatter_sub = slicing.public_scatter(
    slicing.scatter_add_p, "", name="scatter_sub", on_updates=ops.neg
)


# ---- named axes ---------------------------------------------------------------------------
def axis_size(axis_name) -> int:
    """The size of the mapped axis `axis_name`.

    The size of the mapped axis `axis_name` (a name bound by an enclosing
    shard_map, or vmap's axis_name; a tuple of names gives the product), as a
    Python int.

    Args:
      axis_name: the mapped axis' name (or a tuple of names, whose sizes
        multiply).

    Returns:
      The size, a Python int.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> olympus.vmap(lambda v: v * lax.axis_size('i'), axis_name='i')(jnp.ones(3))
      Array([3., 3., 3.], dtype=float32)
    """
    return math.prod(_axis_size(n, "axis_size") for n in _axes(axis_name, "axis_size"))
