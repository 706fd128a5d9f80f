"""`olympus.lax`: one public function per primitive, with JAX's signatures.

lax functions do not promote dtypes (olympus.numpy does); a Python scalar
operand takes the dtype of the array it meets, as a weak-typed constant.
"""

from __future__ import annotations

import functools
from typing import Sequence

import operator

import numpy as np

from olympus.ir import dtypes
from olympus.lax import elementwise as ew
from olympus.lax import reductions as red
from olympus.lax import shapes as sh
from olympus.lax.op_docs import DOCS as OP_DOCS
from olympus.tracer.core import aval_of
from olympus.tracer.errors import ConcretizationTypeError
from olympus.lax.op_docs import RAISES_NOT_REAL_FLOAT, RETURNS_LIKE_X, with_sections

_PY_SCALARS = (bool, int, float, complex)


def _match_scalars(*args):
    """Gives Python scalars the dtype of the first array operand."""
    target = next(
        (aval_of(a).dtype for a in args if not isinstance(a, _PY_SCALARS)), None
    )
    if target is None:
        return args
    return tuple(
        np.asarray(a, dtype=target)[()]
        if isinstance(a, _PY_SCALARS) and aval_of(a).dtype != target
        else a
        for a in args
    )


def _binary(prim):
    def op(x, y):
        if isinstance(x, _PY_SCALARS) or isinstance(y, _PY_SCALARS):
            return prim.bind(*_match_scalars(x, y))
        return prim.bind(x, y)

    op.primitive = prim  # on two arrays op only binds: olympus.numpy may dispatch it
    op.__name__ = prim.name
    op.__doc__ = OP_DOCS.get(prim.name) or (
        f"Elementwise `{prim.name}` of two arrays of one dtype (no promotion)."
    )
    return op


def _unary(prim, accuracy: bool = False):
    """lax's function binding `prim`; with `accuracy`, it takes JAX's
    `accuracy=` (XLA's result-accuracy hint, which olympus's lowering ignores:
    the default accuracy is what every backend gives)."""
    if accuracy:

        def op(x, *, accuracy=None):
            return prim.bind(x)

    else:

        def op(x):
            return prim.bind(x)

    op.primitive = prim  # op(x) only binds: olympus.numpy may dispatch it directly
    op.__name__ = prim.name
    op.__doc__ = OP_DOCS.get(prim.name) or f"Elementwise `{prim.name}`."
    return op


add, sub, _mul, div, rem = map(
    _binary, (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p)
)


def mul(x, y, *, out_dtype=None):
    if out_dtype is not None:  # JAX's: cast both operands, weak ones stay weak
        x, y = (_cast_keeping_weak(v, out_dtype) for v in _match_scalars(x, y))
    return _mul(x, y)


mul.primitive = ew.mul_p  # without out_dtype mul only binds (see _binary)
mul.__doc__ = _mul.__doc__


def _cast_keeping_weak(operand, dtype):
    """`operand` as `dtype`, weakly typed if it was."""
    new_dtype = dtypes.canonicalize_dtype(dtype)
    aval = aval_of(operand)
    if aval.dtype == new_dtype:
        return operand
    return ew.convert_element_type_p.bind(
        operand, new_dtype=new_dtype, weak_type=aval.weak_type
    )


max, min, pow, atan2 = map(_binary, (ew.max_p, ew.min_p, ew.pow_p, ew.atan2_p))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = map(_binary, (ew.and_p, ew.or_p, ew.xor_p))
eq, ne, lt, le, gt, ge = map(
    _binary, (ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p)
)
complex = _binary(ew.complex_p)  # noqa: A001

neg = _unary(ew.neg_p)
exp, log, expm1, log1p = (
    _unary(p, accuracy=True) for p in (ew.exp_p, ew.log_p, ew.expm1_p, ew.log1p_p)
)
sin, cos, tan, tanh, logistic, sqrt, rsqrt = (
    _unary(p, accuracy=True)
    for p in (
        ew.sin_p,
        ew.cos_p,
        ew.tan_p,
        ew.tanh_p,
        ew.logistic_p,
        ew.sqrt_p,
        ew.rsqrt_p,
    )
)
abs, sign = map(_unary, (ew.abs_p, ew.sign_p))  # noqa: A001
floor, ceil, erf, bitwise_not = map(_unary, (ew.floor_p, ew.ceil_p, ew.erf_p, ew.not_p))
erfc, erf_inv, lgamma, digamma = map(
    _unary, (ew.erfc_p, ew.erf_inv_p, ew.lgamma_p, ew.digamma_p)
)
_polygamma = _binary(ew.polygamma_p)


def polygamma(m, x):
    return _polygamma(m, x)


polygamma.primitive = ew.polygamma_p
polygamma.__doc__ = _polygamma.__doc__
asin, acos, atan = map(_unary, (ew.asin_p, ew.acos_p, ew.atan_p))
sinh, cosh, asinh, acosh, atanh = map(
    _unary, (ew.sinh_p, ew.cosh_p, ew.asinh_p, ew.acosh_p, ew.atanh_p)
)
real, imag = map(_unary, (ew.real_p, ew.imag_p))


@with_sections(RETURNS_LIKE_X, RAISES_NOT_REAL_FLOAT)
def round(x, rounding_method: int = 0):  # noqa: A001
    """Elementwise rounding to the nearest integer, keeping the float dtype.

    Halfway cases round away from zero (rounding_method=0, the default) or to
    the nearest even integer (rounding_method=1, as jnp.round).

    Args:
      x: an array of a real floating dtype.
      rounding_method: 0 (away from zero) or 1 (to even); lax.RoundingMethod's
        members are these ints.

    Example:
      >>> lax.round(jnp.array([0.5, 1.5, 2.5]))
      Array([1., 2., 3.], dtype=float32)
      >>> lax.round(jnp.array([0.5, 1.5, 2.5]), 1)
      Array([0., 2., 2.], dtype=float32)
    """
    return ew.round_p.bind(x, rounding_method=int(rounding_method))


@with_sections(RETURNS_LIKE_X)
def integer_pow(x, y: int):
    """`x ** y` for a static Python int `y`, by repeated multiplication.

    Faster and more accurate than pow for small integer exponents.

    Args:
      x: the array.
      y: a Python int (negative for reciprocals of inexact types).

    Raises:
      OlympusTypeError: y is negative and x is of an integer dtype.

    Example:
      >>> lax.integer_pow(jnp.array([2.0, 3.0]), 3)
      Array([ 8., 27.], dtype=float32)
    """
    return ew.integer_pow_p.bind(x, y=int(y))


def select_n(which, *cases):
    """Picks `cases[which]` elementwise.

    The n-way form of select; a boolean `which` picks cases[1] where True.
    Out-of-range indices give unspecified values.

    Args:
      which: a boolean or integer array of the cases' shape (or a scalar).
      *cases: one or more arrays of one shape and dtype.

    Returns:
      An array of the cases' shape and dtype.

    Raises:
      OlympusTypeError: the cases' shapes or dtypes differ, or no case is
        given.

    Example:
      >>> lax.select_n(jnp.array([0, 1, 2]), jnp.zeros(3), jnp.ones(3), jnp.full(3, 2.0))
      Array([0., 1., 2.], dtype=float32)
    """
    return ew.select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """Picks `on_true` where `pred` is true and `on_false` elsewhere.

    lax's strict form of jnp.where: no broadcasting and no promotion.

    Args:
      pred: a boolean array of the cases' shape (or a scalar).
      on_true: an array.
      on_false: an array of on_true's shape and dtype.

    Returns:
      An array of on_true's shape and dtype.

    Raises:
      OlympusTypeError: shapes or dtypes differ.

    Example:
      >>> lax.select(jnp.array([True, False]), jnp.ones(2), jnp.zeros(2))
      Array([1., 0.], dtype=float32)
    """
    return ew.select_n_p.bind(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    """Clips `x` to [min, max] elementwise.

    Args:
      min: the lower bound: a scalar or an array of x's shape.
      x: the array.
      max: the upper bound, likewise.

    Returns:
      An array of x's shape and dtype.

    Raises:
      OlympusTypeError: the bounds' shapes or dtypes do not fit x.

    Example:
      >>> lax.clamp(0.0, jnp.array([-1.0, 0.5, 2.0]), 1.0)
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    return ew.clamp_p.bind(*_match_scalars(x, min, x, max)[1:])


def convert_element_type(operand, new_dtype):
    """Casts `operand` to `new_dtype`.

    Float-to-int conversion rounds toward zero; 64-bit types need x64 (they
    are narrowed to 32 bits otherwise). The result is strongly typed.

    Args:
      operand: an array or scalar.
      new_dtype: the target dtype.

    Returns:
      operand converted to new_dtype.

    Raises:
      TypeError: new_dtype is not a dtype olympus supports.

    Example:
      >>> lax.convert_element_type(jnp.array([1.7, -2.5]), jnp.int32)
      Array([ 1, -2], dtype=int32)
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    aval = aval_of(operand)
    if aval.dtype == new_dtype and not aval.weak_type:
        return operand
    return ew.convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=False)


# ---- shapes ------------------------------------------------------------------
class AxisOutOfBoundsError(ValueError):
    """An axis outside an array's rank (NumPy's and JAX's ValueError)."""


class ShapeSizeTypeError(TypeError):
    """A shape holding something other than integers (a float size, say)."""


def checked_axis(api: str, axis, ndim: int) -> int:
    """`axis` counted from the front; JAX refuses one outside [-ndim, ndim)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisOutOfBoundsError(
            f"{api}: axis {axis} is out of bounds for array of dimension {ndim}; "
            f"pass an axis in [-{ndim}, {ndim})"
        )
    return axis % ndim


def _size(d) -> int:
    # A traced size raises its concretization error from int(); an Array is concrete.
    return int(d) if hasattr(d, "aval") else operator.index(d)


def integer_sizes(api: str, shape) -> tuple:
    """`shape` as a tuple of ints; a float size is refused as JAX does, not rounded."""
    try:
        return tuple(_size(d) for d in shape)
    except ConcretizationTypeError:
        raise  # a traced size: its own error says where the value came from
    except TypeError:
        kinds = tuple(type(d).__name__ for d in shape)
        raise ShapeSizeTypeError(
            f"{api if '.' in api else 'lax.' + api}: shape must have every element "
            f"be an integer, got {kinds}; "
            "pass ints (int(size) if the size is a whole float)"
        ) from None


def lays_out_result(fn):
    """`fn` (a lax function taking JAX's keyword `out_sharding=`) with its
    result laid out as `out_sharding` where one is given (see
    lax/sharding.py: laid_out_as); `fn` itself computes the result."""
    api = f"lax.{fn.__name__}"

    @functools.wraps(fn)
    def laid_out(*args, out_sharding=None, **kwargs):
        if out_sharding is None:
            return fn(*args, **kwargs)
        from olympus.lax import sharding  # it imports this module

        return sharding.laid_out_as(lambda: fn(*args, **kwargs), out_sharding, api)

    return laid_out


@lays_out_result
def broadcast_in_dim(
    operand,
    shape: Sequence[int],
    broadcast_dimensions: Sequence[int],
    *,
    out_sharding=None,
):
    """Broadcasts `operand` to `shape`, placing its dimensions at `broadcast_dimensions`.

    The explicit form of NumPy broadcasting: dimension i of operand becomes
    dimension broadcast_dimensions[i] of the result (size 1 or equal).

    Args:
      operand: the array.
      shape: the result's shape.
      broadcast_dimensions: for each dimension of operand, its position in shape
        (increasing).
      out_sharding: the result's layout (a PartitionSpec on the `set_mesh`
        mesh or a NamedSharding; None: what the operand's type says).

    Returns:
      An array of `shape` and operand's dtype.

    Raises:
      OlympusTypeError: a dimension of operand is neither 1 nor its target's size.
      ShapeSizeTypeError: a size in `shape` is not an integer (2.0, say).

    Example:
      >>> lax.broadcast_in_dim(jnp.array([1.0, 2.0]), (3, 2), (1,)).shape
      (3, 2)
    """
    return sh.broadcast_in_dim_p.bind(
        operand,
        shape=integer_sizes("broadcast_in_dim", shape),
        broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions),
    )


def broadcast(operand, sizes: Sequence[int], *, out_sharding=None):
    """Adds leading dimensions `sizes` to `operand`.

    Args:
      operand: the array.
      sizes: the sizes of the new leading dimensions.
      out_sharding: the result's layout (a PartitionSpec on the `set_mesh`
        mesh or a NamedSharding; None: what the operand's type says).

    Returns:
      An array of shape `sizes + operand.shape`.

    Raises:
      OlympusTypeError: a size is negative.

    Example:
      >>> lax.broadcast(jnp.array([1.0, 2.0]), (3,)).shape
      (3, 2)
    """
    aval = aval_of(operand)
    dims = tuple(range(len(sizes), len(sizes) + aval.ndim))
    shape = tuple(sizes) + aval.shape
    return broadcast_in_dim(operand, shape, dims, out_sharding=out_sharding)


@lays_out_result
def reshape(
    operand,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
    *,
    out_sharding=None,
):
    """`operand` with a new shape of the same size.

    Args:
      operand: the array.
      new_sizes: the new shape (no -1: lax wants it spelled out).
      dimensions: an optional permutation applied before reshaping.
      out_sharding: a sharding for the result (None: what the operand's type
        says; needed where a split dimension cannot be reshaped so).

    Returns:
      An array of shape new_sizes, in row-major order.

    Raises:
      OlympusTypeError: the sizes' product differs from operand.size.

    Example:
      >>> lax.reshape(jnp.arange(6), (2, 3))
      Array([[0, 1, 2], [3, 4, 5]], dtype=int32)
    """
    new_sizes = integer_sizes("reshape", new_sizes)
    if dimensions is None and aval_of(operand).shape == new_sizes:
        return operand
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    return sh.reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims)


def transpose(operand, permutation: Sequence[int]):
    """Permutes the dimensions of `operand`.

    Args:
      operand: the array.
      permutation: a permutation of range(operand.ndim): dimension i of the result
        is dimension permutation[i] of operand.

    Returns:
      The permuted array.

    Raises:
      OlympusTypeError: permutation is not a permutation of the dimensions.

    Example:
      >>> lax.transpose(jnp.ones((2, 3)), (1, 0)).shape
      (3, 2)
    """
    return sh.transpose_p.bind(operand, permutation=tuple(int(d) for d in permutation))


def squeeze(array, dimensions: Sequence[int]):
    """Removes the given dimensions of size 1.

    Args:
      array: the array.
      dimensions: the dimensions to remove; each must have size 1.

    Returns:
      array without those dimensions.

    Raises:
      OlympusTypeError: a listed dimension's size is not 1.

    Example:
      >>> lax.squeeze(jnp.ones((2, 1)), (1,)).shape
      (2,)
    """
    ndim = aval_of(array).ndim
    dims = tuple(sorted(int(d) % ndim if ndim else int(d) for d in dimensions))
    return sh.squeeze_p.bind(array, dimensions=dims) if dims else array


def expand_dims(array, dimensions: Sequence[int]):
    """Inserts dimensions of size 1 at the given positions.

    Args:
      array: the array.
      dimensions: positions in the result (negative count from its end).

    Returns:
      array with the new dimensions.

    Raises:
      OlympusTypeError: x is not an array or a number.
      AxisOutOfBoundsError: a position is outside the result's rank.
      ValueError: a position is repeated.

    Example:
      >>> lax.expand_dims(jnp.ones(2), (0,)).shape
      (1, 2)
    """
    out_ndim = aval_of(array).ndim + len(dimensions)
    dims = tuple(
        sorted(checked_axis("lax.expand_dims", d, out_ndim) for d in dimensions)
    )
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(dimensions)}")
    return sh.expand_dims_p.bind(array, dimensions=dims)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    """The static slice `operand[start:limit:stride]` on every dimension.

    Args:
      operand: the array.
      start_indices: one int per dimension.
      limit_indices: one int per dimension (exclusive).
      strides: one int per dimension, or None for all 1.

    Returns:
      The sliced array.

    Raises:
      OlympusTypeError: an index is out of range or the sequences' lengths
        differ from the rank.

    Example:
      >>> lax.slice(jnp.arange(6), (1,), (5,), (2,))
      Array([1, 3], dtype=int32)
    """
    return sh.slice_p.bind(
        operand,
        start_indices=tuple(map(int, start_indices)),
        limit_indices=tuple(map(int, limit_indices)),
        strides=None if strides is None else tuple(map(int, strides)),
    )


def _index_scalars(indices):
    avals = [aval_of(i) for i in indices]
    dtype = next((a.dtype for a in avals if not a.weak_type), dtypes.int32)
    return [
        convert_element_type(i, dtype)
        if aval_of(i).dtype != dtype or aval_of(i).weak_type
        else i
        for i in indices
    ]


def dynamic_slice(x, start_indices, slice_sizes):
    return sh.dynamic_slice_p.bind(
        x,
        *_index_scalars(start_indices),
        slice_sizes=tuple(int(s) for s in slice_sizes),
    )


def dynamic_update_slice(x, update, start_indices):
    return sh.dynamic_update_slice_p.bind(x, update, *_index_scalars(start_indices))


def dynamic_slice_in_dim(x, start_index, slice_size: int, axis: int = 0):
    """`dynamic_slice` along one axis (the others taken whole), as in JAX."""
    shape = aval_of(x).shape
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_update_slice_in_dim(x, update, start_index, axis: int):
    """`dynamic_update_slice` at `start_index` along one axis, as in JAX."""
    starts = [0] * len(aval_of(x).shape)
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def concatenate(operands, dimension: int):
    """Joins arrays along an existing dimension.

    Args:
      operands: a sequence of arrays of one rank and dtype, equal except
        along `dimension`.
      dimension: the dimension to join along.

    Returns:
      The joined array.

    Raises:
      OlympusTypeError: the operands disagree off `dimension` or in dtype.

    Example:
      >>> lax.concatenate([jnp.zeros(2), jnp.ones(1)], 0)
      Array([0., 0., 1.], dtype=float32)
    """
    return sh.concatenate_p.bind(*operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    """Pads `operand` with `padding_value`: at each edge and between elements.

    Negative padding removes elements, so pad also crops.

    Args:
      operand: the array.
      padding_value: a scalar of operand's dtype.
      padding_config: one `(low, high, interior)` triple per dimension.

    Returns:
      The padded array.

    Raises:
      OlympusTypeError: the config's length differs from the rank, interior
        padding is negative, or padding_value's dtype differs from operand's.

    Example:
      >>> lax.pad(jnp.ones(2), 0.0, [(1, 0, 1)])
      Array([0., 1., 0., 1.], dtype=float32)
    """
    config = tuple(integer_sizes("pad", widths) for widths in padding_config)
    return sh.pad_p.bind(*_match_scalars(operand, padding_value), padding_config=config)


def iota(dtype, size: int):
    """The integers 0..size-1 as an array of `dtype`.

    Args:
      dtype: the result's dtype.
      size: the length.

    Returns:
      A 1-D array.

    Raises:
      OlympusTypeError: size is negative.

    Example:
      >>> lax.iota(jnp.int32, 4)
      Array([0, 1, 2, 3], dtype=int32)
    """
    return sh.iota_p.bind(
        dtype=dtypes.canonicalize_dtype(dtype),
        shape=integer_sizes("iota", (size,)),
        dimension=0,
    )


@lays_out_result
def broadcasted_iota(dtype, shape: Sequence[int], dimension: int, *, out_sharding=None):
    """An array of `shape` counting 0, 1, ... along one dimension.

    Constant along the other dimensions: the index grid jnp.indices builds, one
    dimension at a time.

    Args:
      dtype: the result's dtype.
      shape: the result's shape.
      dimension: the dimension that counts.
      out_sharding: the result's layout (a PartitionSpec on the `set_mesh`
        mesh or a NamedSharding; None: unsplit).

    Returns:
      An array of `shape` and `dtype`.

    Raises:
      OlympusTypeError: dimension is out of range for shape, or shape has a
        negative size.

    Example:
      >>> lax.broadcasted_iota(jnp.int32, (2, 3), 1)
      Array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    return sh.iota_p.bind(
        dtype=dtypes.canonicalize_dtype(dtype),
        shape=tuple(map(int, shape)),
        dimension=int(dimension),
    )


def full(shape: Sequence[int], fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with `fill_value`.

    Args:
      shape: the result's shape.
      fill_value: a scalar.
      dtype: the result's dtype (None: fill_value's).
      sharding: where an eager result is laid out (a Sharding; inside jit it
        is ignored, as JAX ignores it: use with_sharding_constraint there).

    Returns:
      The filled array.

    Raises:
      OlympusTypeError: fill_value is not a scalar, or shape has a negative
        size.

    Example:
      >>> lax.full((2,), 7.0)
      Array([7., 7.], dtype=float32, weak_type=True)
    """
    if sharding is not None:  # as JAX: placed eagerly, not weak; ignored in jit
        from olympus.lax import sharding as layouts

        typed = aval_of(fill_value).dtype if dtype is None else dtype
        return layouts.placed_if_concrete(full(shape, fill_value, typed), sharding)
    shape = integer_sizes("full", shape)
    concrete = isinstance(fill_value, (*_PY_SCALARS, np.generic, np.ndarray))
    if dtype is None and type(fill_value) in (int, float, complex):
        pass  # a Python number stays weakly typed, as JAX's
    elif concrete:  # converted on the host, so the IR shows a literal
        fill_dtype = (
            aval_of(fill_value).dtype
            if dtype is None
            else dtypes.canonicalize_dtype(dtype)
        )
        fill_value = np.asarray(fill_value, dtype=fill_dtype)[()]
    elif dtype is not None:
        fill_value = convert_element_type(fill_value, dtype)
    return broadcast_in_dim(fill_value, shape, ())


# ---- reductions and contractions ---------------------------------------------
def _reducer(prim):
    def op(operand, axes: Sequence[int]):
        return prim.bind(operand, axes=tuple(int(a) for a in axes))

    op.__name__ = prim.name
    op.__doc__ = OP_DOCS.get(prim.name)
    return op


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or = map(
    _reducer,
    (
        red.reduce_sum_p,
        red.reduce_prod_p,
        red.reduce_max_p,
        red.reduce_min_p,
        red.reduce_and_p,
        red.reduce_or_p,
    ),
)
reduce_xor = _reducer(red.reduce_xor_p)
_reduce_sum = reduce_sum


@lays_out_result
def reduce_sum(operand, axes: Sequence[int], *, out_sharding=None):
    return _reduce_sum(operand, axes)


reduce_sum.__doc__ = _reduce_sum.__doc__


# The sections argmax and argmin share (op_docs.with_sections).
_ARG_EXTREME_ARGS = """Args:
  operand: the array.
  axis: the axis to reduce.
  index_dtype: the integer dtype of the result."""
_ARG_EXTREME_RETURNS = "Returns:\n  An array of index_dtype without `axis`."
_ARG_EXTREME_RAISES = """Raises:
  OlympusTypeError: axis is out of range or index_dtype is not an
    integer type."""


def _arg_extreme(primitive, operand, axis: int, index_dtype):
    return primitive.bind(
        operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype)
    )


@with_sections(_ARG_EXTREME_ARGS, _ARG_EXTREME_RETURNS, _ARG_EXTREME_RAISES)
def argmax(operand, axis: int, index_dtype):
    """The index of the largest element along `axis`.

    Ties give the lowest index; NaN counts as the largest value.

    Example:
      >>> lax.argmax(jnp.array([1.0, 3.0, 2.0]), 0, jnp.int32)
      Array(1, dtype=int32)
    """
    return _arg_extreme(red.argmax_p, operand, axis, index_dtype)


@with_sections(_ARG_EXTREME_ARGS, _ARG_EXTREME_RETURNS, _ARG_EXTREME_RAISES)
def argmin(operand, axis: int, index_dtype):
    """The index of the smallest element along `axis`.

    Ties give the lowest index; a NaN counts as smaller than every number, so
    its index is the answer.

    Example:
      >>> lax.argmin(jnp.array([1.0, 3.0, 0.5]), 0, jnp.int32)
      Array(2, dtype=int32)
      >>> lax.argmin(jnp.array([1.0, jnp.nan, 0.5]), 0, jnp.int32)
      Array(1, dtype=int32)
    """
    return _arg_extreme(red.argmin_p, operand, axis, index_dtype)


@lays_out_result
def dot_general(
    lhs,
    rhs,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    *,
    out_sharding=None,
):
    """A general tensor contraction: batched matrix products and more.

    The primitive behind jnp.dot, matmul and einsum. Dimensions of `lhs`
    and `rhs` listed as contracting are summed over; batch dimensions are
    kept and paired. Operands must have one dtype (no promotion).

    Args:
      lhs: an array.
      rhs: an array of the same dtype.
      dimension_numbers: `((lhs_contract, rhs_contract), (lhs_batch,
        rhs_batch))`, each a sequence of axes.
      precision: None, a lax.Precision, its name ("highest", "float32", ...)
        or a pair (one per operand); XLA's precision config, also on the
        matmuls of the derivatives.
      preferred_element_type: the dtype to accumulate and return in.
      out_sharding: a sharding for the result (None: what XLA chooses).

    Returns:
      An array whose dimensions are the batch ones, then lhs's free ones,
      then rhs's free ones.

    Raises:
      OlympusTypeError: paired dimensions differ in size, or the dtypes
        differ.

    Example:
      >>> x, y = jnp.ones((2, 2, 3)), jnp.ones((2, 3, 4))
      >>> lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))).shape
      (2, 2, 4)
    """
    from olympus.lax import sharding

    dn = _dimension_numbers(dimension_numbers)
    sharding.refuse_ambiguous_contraction(lhs, rhs, dn)
    pet = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize_dtype(preferred_element_type)
    )
    prec = red.canonical_precision(precision, "lax.dot_general")
    return red.dot_general_p.bind(
        lhs, rhs, dimension_numbers=dn, precision=prec, preferred_element_type=pet
    )


_DIMENSION_NUMBERS: dict = {}  # dimension_numbers as given -> as Python ints


def _dimension_numbers(dimension_numbers) -> tuple:
    """dot_general's dimension numbers as tuples of ints, cached for hashable
    ones (an eager matmul's latency is measured)."""
    try:
        return _DIMENSION_NUMBERS[dimension_numbers]
    except (KeyError, TypeError):
        pass
    (lc, rc), (lb, rb) = dimension_numbers
    dn = (
        (tuple(map(int, lc)), tuple(map(int, rc))),
        (tuple(map(int, lb)), tuple(map(int, rb))),
    )
    try:
        if len(_DIMENSION_NUMBERS) < 1024:
            _DIMENSION_NUMBERS[dimension_numbers] = dn
    except TypeError:  # lists: not cached
        pass
    return dn


class DotDimensionNumbersError(ValueError):
    """lax.dot of operands that are not vectors or matrices, without
    dimension_numbers."""


def dot(
    lhs,
    rhs,
    precision=None,
    preferred_element_type=None,
    *,
    dimension_numbers=None,
    out_sharding=None,
):
    """The vector/matrix product of `lhs` and `rhs`.

    Contracts the last axis of lhs with the first of rhs (vector-vector,
    matrix-vector or matrix-matrix), without NumPy's promotion.

    Args:
      lhs: a 1-D or 2-D array.
      rhs: a 1-D or 2-D array of the same dtype.
      precision: as dot_general's.
      preferred_element_type: the dtype to accumulate and return in.
      dimension_numbers: dot_general's ((lhs_contract, rhs_contract),
        (lhs_batch, rhs_batch)); None for the vector/matrix product above.
      out_sharding: a sharding for the result (None: what the operands'
        types say).

    Returns:
      The product array.

    Raises:
      OlympusTypeError: the contracted sizes or the dtypes differ.
      DotDimensionNumbersError: operands of rank 0 or above 2 without
        dimension_numbers (a ValueError, as JAX's).

    Example:
      >>> lax.dot(jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.ones(2))
      Array([3., 7.], dtype=float32)
      >>> lax.dot(jnp.ones((2, 3)), jnp.ones((2, 3)),
      ...         dimension_numbers=(((1,), (1,)), ((0,), (0,))))
      Array([3., 3.], dtype=float32)
    """
    if dimension_numbers is None:
        lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
        if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2):
            raise DotDimensionNumbersError(
                f"lax.dot: operands of shapes {lhs_shape} and {rhs_shape} are "
                f"not vectors or matrices; pass dimension_numbers=(((lhs "
                f"contracting,), (rhs contracting,)), ((lhs batch,), (rhs batch,)))"
            )
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return dot_general(
        lhs,
        rhs,
        dimension_numbers,
        precision,
        preferred_element_type,
        out_sharding=out_sharding,
    )


def rev(operand, dimensions: Sequence[int]):
    """Reverses `operand` along `dimensions`.

    Args:
      operand: the array.
      dimensions: the dimensions to reverse.

    Returns:
      The reversed array.

    Raises:
      OlympusTypeError: a dimension is out of range.

    Example:
      >>> lax.rev(jnp.arange(3), (0,))
      Array([2, 1, 0], dtype=int32)
    """
    return sh.rev_p.bind(operand, dimensions=tuple(int(d) for d in dimensions))
