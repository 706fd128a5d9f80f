"""Array construction beyond creation.py: triangles and their index arrays, index
grids (indices, ix_, meshgrid, mgrid, ogrid, r_, c_, s_, index_exp), geometric and
logarithmic ranges, fromfunction, and the small conversion/predicate helpers
(copy, asanyarray, ascontiguousarray, iterable, isscalar, array_equiv).
"""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.compiled import compiled
from olympus.numpy.core import (
    array,
    asarray,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    is_array,
    normalize_axis,
    result_type,
    stack,
    to_operand,
)
from olympus.numpy.creation import _at_user_line, linspace
from olympus.numpy.diagonals import diag
from olympus.numpy.reductions import nonzero
from olympus.numpy.shaping import concatenate, moveaxis, ravel, reshape, transpose
from olympus.numpy.comparisons import _all
from olympus.numpy.float_math import log10
from olympus.numpy.ufuncs import equal, power, sign
from olympus.numpy.ufunc_docs import RAISES_NOTHING, RAISES_SIZE, RAISES_X, add_sections

__all__ = [
    "array_equiv",
    "asanyarray",
    "ascontiguousarray",
    "c_",
    "copy",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "fromfunction",
    "geomspace",
    "index_exp",
    "indices",
    "isscalar",
    "iterable",
    "ix_",
    "logspace",
    "meshgrid",
    "mgrid",
    "ogrid",
    "r_",
    "s_",
    "tri",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
]

# Index expressions are plain Python tuples and slices: NumPy's helpers build them.
s_ = np.s_
index_exp = np.index_exp


def _index_array(values: np.ndarray):
    return array(np.asarray(values).astype(dtypes.default_int_dtype()))


# ---- triangles ----------------------------------------------------------------------
def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    """An N x M array with ones at and below the k-th diagonal.

    An N x M array with ones at and below the k-th diagonal; float32 by default
    even with x64 on (JAX's default, unlike its other constructors).

    Args:
      N: the number of rows.
      M: the number of columns (None: N).
      k: the diagonal offset: 0 the main one, positive above, negative below.
      dtype: the result's dtype; None to infer it from the inputs.

    Returns:
      An (N, M) array of dtype (the default float).

    Example:
      >>> jnp.tri(3)
      Array([[1., 0., 0.],
             [1., 1., 0.],
             [1., 1., 1.]], dtype=float32)
    """
    M = N if M is None else M
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    below = lax.le(cols, lax.add(rows, np.int32(k)))
    return lax.convert_element_type(
        below, dtypes.canonicalize_dtype(np.float32 if dtype is None else dtype)
    )


def _matrix_shape(name: str, arr) -> tuple:
    shape = aval_of(to_operand(arr)).shape
    if len(shape) != 2:
        raise ValueError(f"jnp.{name} needs a 2-D array, got shape {shape}")
    return shape


_K = "k: the diagonal offset: 0 the main one, positive above, negative below."


def _triangle_indices(name: str, numpy_indices, example: str):
    """tril_indices or triu_indices (static sizes, so NumPy's own indices)."""

    def indices(n: int, k: int = 0, m: int | None = None) -> tuple:
        return tuple(_index_array(i) for i in numpy_indices(n, k, m))

    side = "lower" if name == "tril_indices" else "upper"
    indices.__name__ = indices.__qualname__ = name
    indices.__doc__ = f"""(rows, cols) of the {side} triangle of an n x m array, row by row.

    Args:
      n: the number of rows.
      {_K}
      m: the number of columns (None: n).

    Returns:
      A pair of int arrays.

    Raises:
      Nothing: of its own for valid array or scalar input.

    Example:
      >>> jnp.{name}(3)
      {example}
    """
    return indices


def _triangle_indices_from(name: str, indices, example: str):
    """tril_indices_from or triu_indices_from: `indices` for arr's shape."""

    def indices_from(arr, k: int = 0) -> tuple:
        n, m = _matrix_shape(name, arr)
        return indices(n, k, m)

    side = "lower" if name == "tril_indices_from" else "upper"
    indices_from.__name__ = indices_from.__qualname__ = name
    indices_from.__doc__ = f"""(rows, cols) of the {side} triangle of a 2-D array.

    Args:
      arr: a 2-D array.
      {_K}

    Returns:
      A pair of int arrays.

    Raises:
      ArrayLikeTypeError: arr is a list or other non-array (convert it with
        jnp.asarray).
      ValueError: arr is not 2-D.

    Example:
      >>> jnp.{name}(jnp.ones((2, 2)))
      {example}
    """
    return indices_from


tril_indices = _triangle_indices(
    "tril_indices",
    np.tril_indices,
    "(Array([0, 1, 1, 2, 2, 2], dtype=int32), Array([0, 0, 1, 0, 1, 2], dtype=int32))",
)
triu_indices = _triangle_indices(
    "triu_indices",
    np.triu_indices,
    "(Array([0, 0, 0, 1, 1, 2], dtype=int32), Array([0, 1, 2, 1, 2, 2], dtype=int32))",
)
tril_indices_from = _triangle_indices_from(
    "tril_indices_from",
    tril_indices,
    "(Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))",
)
triu_indices_from = _triangle_indices_from(
    "triu_indices_from",
    triu_indices,
    "(Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))",
)


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """The indices of the main diagonal of an n x n x ... array.

    Indices of the main diagonal of an n x n x ... array: ndim copies of
    arange(n).

    Args:
      n: the size of each axis.
      ndim: the number of axes.

    Returns:
      A tuple of ndim int arrays of length n.

    Example:
      >>> jnp.diag_indices(2)
      (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    index = lax.iota(dtypes.default_int_dtype(), int(n))
    return (index,) * ndim


def diag_indices_from(arr) -> tuple:
    """The indices of the main diagonal of `arr`.

    Args:
      arr: an array of rank >= 2 whose axes have one length.

    Returns:
      A tuple of arr.ndim int arrays.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: arr has fewer than two dimensions or unequal axes.

    Example:
      >>> jnp.diag_indices_from(jnp.ones((2, 2)))
      (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    shape = aval_of(to_operand(arr)).shape
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(
            f"jnp.diag_indices_from needs an array of at least 2 dimensions, "
            f"all of equal length; got shape {shape}"
        )
    return diag_indices(shape[0], len(shape))


def diagflat(v, k: int = 0):
    """A 2-D array with the flattened `v` on its k-th diagonal.

    Args:
      v: an array (flattened).
      k: the diagonal offset: 0 the main one, positive above, negative below.

    Returns:
      A square 2-D array of v's dtype.

    Example:
      >>> jnp.diagflat(jnp.array([1, 2]))
      Array([[1, 0],
             [0, 2]], dtype=int32)
    """
    return diag(ravel(to_operand(v)), k)


# ---- index grids --------------------------------------------------------------------
def indices(dimensions, dtype=None, sparse: bool = False):
    """The index of every position of a grid, one array per axis.

    The index of every position of a grid of shape `dimensions`, per axis.

    Args:
      dimensions: the grid's shape.
      dtype: the result's dtype; None to infer it from the inputs.
      sparse: whether to return broadcastable open grids instead of full arrays.

    Returns:
      An array of shape (len(dimensions), *dimensions), or a tuple of open grids
      when sparse.

    Example:
      >>> jnp.indices((2, 2))
      Array([[[0, 0],
              [1, 1]],
      <BLANKLINE>
             [[0, 1],
              [0, 1]]], dtype=int32)
    """
    dtype = dtypes.canonicalize_dtype(
        dtypes.default_int_dtype() if dtype is None else dtype
    )
    dimensions = tuple(int(d) for d in dimensions)
    grids = []
    for axis, size in enumerate(dimensions):
        if sparse:
            shape = tuple(size if i == axis else 1 for i in range(len(dimensions)))
            grids.append(lax.broadcasted_iota(dtype, shape, axis))
        else:
            grids.append(lax.broadcasted_iota(dtype, dimensions, axis))
    if sparse:
        return tuple(grids)
    return stack(grids) if grids else lax.full((0,), np.zeros((), dtype)[()])


def ix_(*args) -> tuple:
    """An open mesh from 1-D sequences, for indexing cross products.

    An open mesh from 1-D sequences: the i-th output has shape (1, .., n_i, ..,
    1). Boolean sequences stand for their nonzero positions, so they must be
    concrete.

    Args:
      *args: 1-D integer or boolean arrays.

    Returns:
      A tuple of arrays, the i-th of shape (1, ..., n_i, ..., 1).

    Raises:
      ValueError: an argument is not 1-D.

    Example:
      >>> [i.shape for i in jnp.ix_(jnp.array([0, 1]), jnp.array([2, 3, 4]))]
      [(2, 1), (1, 3)]
    """
    out = []
    for i, seq in enumerate(args):
        seq = to_operand(seq) if is_array(seq) else asarray(seq)
        if aval_of(seq).ndim != 1:
            raise ValueError(
                f"jnp.ix_: every argument must be 1-D, argument {i} has shape "
                f"{aval_of(seq).shape}"
            )
        if aval_of(seq).dtype == dtypes.bool_:
            (seq,) = nonzero(seq)
        shape = [1] * len(args)
        shape[i] = aval_of(seq).shape[0]
        if aval_of(seq).size == 0:  # an empty index is integer, as in NumPy and JAX
            seq = lax.full((0,), np.zeros((), dtypes.canonicalize_dtype(np.intp))[()])
        out.append(reshape(seq, shape))
    return tuple(out)


class MeshgridShapeError(ValueError):
    """jnp.meshgrid was given an array that is not 1-D."""


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-D coordinate vectors.

    indexing='xy' (Cartesian, the default) swaps the first two output axes relative to 'ij' (matrix indexing).

    Args:
      *xi: 1-D arrays.
      copy: accepted for NumPy's signature (results are always new arrays).
      indexing: 'xy' or 'ij'.
      sparse: if True, return broadcastable arrays instead of full grids.

    Returns:
      A list of arrays, one per input.

    Example:
      >>> xs, ys = jnp.meshgrid(jnp.arange(2), jnp.arange(3))
      >>> xs.shape
      (3, 2)
    """
    xi = [to_operand(x) for x in xi]
    shapes = [aval_of(x).shape for x in xi]
    if builtins.any(len(shape) != 1 for shape in shapes):
        raise MeshgridShapeError(
            f"jnp.meshgrid takes 1-D arrays, got shapes {shapes}; flatten them "
            f"first (jnp.ravel(x)){_at_user_line()}"
        )
    shape = [s[0] for s in shapes]
    if indexing == "xy" and len(xi) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    outs = []
    for i, x in enumerate(xi):
        axis = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and len(xi) > 1 else i
        sparse_shape = [1] * len(xi)
        sparse_shape[axis] = shape[axis]
        x = reshape(x, sparse_shape)
        outs.append(x if sparse else broadcast_to(x, shape))
    return outs


def _slice_values(s: slice):
    """The points of a grid slice: start:stop:step, or `n` points when step is `nj`."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)), endpoint=True)
    values = np.arange(start, s.stop, step)
    return array(values.astype(dtypes.canonicalize_dtype(values.dtype)))


class _Grid:
    """mgrid/ogrid: `mgrid[0:2, 0:3]` is a dense (2, 2, 3) grid, `ogrid` its open form."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        dtype = (
            dtypes.promote_types(*[aval_of(a).dtype for a in axes])
            if len(axes) > 1
            else None
        )
        shape = [aval_of(a).shape[0] for a in axes]
        grids = []
        for i, a in enumerate(axes):
            a = a if dtype is None else lax.convert_element_type(a, dtype)
            open_shape = [n if j == i else 1 for j, n in enumerate(shape)]
            a = reshape(a, open_shape)
            grids.append(
                a
                if self.sparse
                else lax.broadcast_in_dim(a, shape, tuple(range(len(shape))))
            )
        return list(grids) if self.sparse else stack(grids)  # a list, as JAX's


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


class _Concatenator:
    """r_/c_: `r_[1:4, 0, x]` concatenates slices (as ranges), scalars and arrays.

    A leading string 'axis[,ndmin[,trans1d]]' sets the joining axis, the
    minimum rank and where a lifted 1-D array's axis goes, as in NumPy.
    """

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.defaults = (axis, ndmin, trans1d)

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.defaults
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = self._directive(items.pop(0))
        parts = [self._part(item, ndmin, trans1d) for item in items]
        if not parts:
            return array(np.zeros(0))
        return concatenate(parts, axis=axis)

    def _directive(self, text: str) -> tuple:
        try:
            fields = [int(f) for f in text.split(",")]
        except ValueError:
            raise ValueError(
                f"jnp.r_/c_: unsupported directive {text!r}; use "
                f"'axis[,ndmin[,trans1d]]' (matrix directives are NumPy-only)"
            ) from None
        defaults = list(self.defaults)
        defaults[: len(fields)] = fields
        return tuple(defaults)

    @staticmethod
    def _part(item, ndmin: int, trans1d: int):
        x = _slice_values(item) if isinstance(item, slice) else item
        if not is_array(x):  # r_/c_ take lists, as JAX's
            x = array(x)
        nd = aval_of(x).ndim
        if nd == 0:
            x = reshape(x, (1,))
            nd = 1
        if nd >= ndmin:
            return x
        x = reshape(x, (1,) * (ndmin - nd) + aval_of(x).shape)
        # The item's own axes go to position trans1d (counted from the end if negative).
        k2 = ndmin - nd
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        order = list(range(ndmin))
        return transpose(x, order[:k1] + order[k2:] + order[k1:k2])


r_ = _Concatenator(axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator(axis=-1, ndmin=2, trans1d=0)


# ---- ranges and functions of the index --------------------------------------------
def logspace(
    start,
    stop,
    num: int = 50,
    endpoint: bool = True,
    base=10.0,
    dtype=None,
    axis: int = 0,
):
    """Numbers spaced evenly on a log scale: base ** linspace(start, stop).

    base ** linspace(start, stop): `num` points evenly spaced on a log scale.

    Args:
      start: the first value (as an exponent for logspace).
      stop: the last value.
      num: the number of points.
      endpoint: whether stop is included.
      base: the logarithm's base.
      dtype: the result's dtype; None to infer it from the inputs.
      axis: where the samples go when start or stop is an array.

    Returns:
      A 1-D array of num values (the default float unless dtype).

    Example:
      >>> jnp.logspace(0.0, 2.0, 3)
      Array([  1.,  10., 100.], dtype=float32)
    """
    options = dict(num=num, endpoint=endpoint, axis=axis)
    return _spaced(_logspace, start, stop, dtype, base, **options)


def _spaced(kernel, start, stop, dtype, *args, **options):
    """logspace or geomspace: `kernel` compiled on the bounds, in their dtype."""
    start, stop = to_operand(start), to_operand(stop)
    dtype = _spaced_dtype(start, stop, dtype)
    return compiled(kernel)(start, stop, *args, dtype=dtype, **options)


def _spaced_dtype(start, stop, dtype) -> np.dtype:
    """The dtype of logspace/geomspace: given, or the bounds' promoted
    inexact dtype (float16 stays float16), as JAX's."""
    if dtype is None:
        dtype = result_type(start, stop)
        if not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float_dtype()
    return dtypes.canonicalize_dtype(dtype)


def _computation_dtype(dtype) -> np.dtype:
    return dtype if dtypes.is_inexact(dtype) else dtypes.default_float_dtype()


def _logspace(start, stop, base, *, num, endpoint, dtype, axis):
    """One compiled program, as JAX's, so the last bits of base ** t agree."""
    compute = _computation_dtype(dtype)
    start = lax.convert_element_type(start, compute)
    stop = lax.convert_element_type(stop, compute)
    exponents = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return lax.convert_element_type(power(base, exponents), dtype)


def geomspace(
    start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0
):
    """Numbers spaced evenly on a log scale from start to stop.

    `num` points from start to stop in a geometric progression (same-signed
    ends).

    Args:
      start: the first value (nonzero).
      stop: the last value, of start's sign.
      num: the number of points.
      endpoint: whether stop is included.
      dtype: the result's dtype; None to infer it from the inputs.
      axis: where the samples go when start or stop is an array.

    Returns:
      A 1-D array of num values.

    Example:
      >>> jnp.geomspace(1.0, 100.0, 3)
      Array([  1.,  10., 100.], dtype=float32)
    """
    options = dict(num=num, endpoint=endpoint, axis=axis)
    return _spaced(_geomspace, start, stop, dtype, **options)


def _geomspace(start, stop, *, num, endpoint, dtype, axis):
    """sign(start) * logspace of |ends| as JAX computes it (one compiled
    program; ends of opposite signs or at zero give NaN, not an error)."""
    compute = _computation_dtype(dtype)
    start = lax.convert_element_type(start, compute)
    stop = lax.convert_element_type(stop, compute)
    sign_ = sign(start)
    out = logspace(
        log10(start / sign_), log10(stop / sign_), num, endpoint=endpoint,
        base=10.0, dtype=compute,
    )  # fmt: skip
    out = sign_ * out
    if axis != 0:
        out = moveaxis(out, 0, normalize_axis(axis, aval_of(out).ndim))
    return lax.convert_element_type(out, dtype)


def fromfunction(function, shape, *, dtype=None, **kwargs):
    """An array whose entry at each index is function(*index).

    function(*indices(shape)): the function gets one index array per axis.

    Args:
      function: a function of one index array per axis.
      shape: the grid's shape.
      dtype: the result's dtype; None to infer it from the inputs.
      **kwargs: passed on to function.

    Returns:
      What function returns for the index grids.

    Example:
      >>> jnp.fromfunction(lambda i, j: i + j, (2, 2), dtype=int)
      Array([[0, 1],
             [1, 2]], dtype=int32)
    """
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    grids = indices(shape, dtype=dtype, sparse=False)
    return function(*(grids[i] for i in range(len(tuple(shape)))), **kwargs)


# ---- conversions and predicates ------------------------------------------------------
def copy(a, order: str | None = None):
    """A copy of `a`'s values as a new array.

    A copy of `a`; arrays are immutable, so this is an array with a's values.

    Args:
      a: an array or scalar.
      order: accepted for NumPy's signature (layout is not observable).

    Returns:
      An array of a's shape and dtype.

    Raises:
      OlympusTypeError: a is not an array or a number (a string, say).

    Example:
      >>> jnp.copy(jnp.array([1, 2]))
      Array([1, 2], dtype=int32)
    """
    return array(a)


def asanyarray(a, dtype=None, order=None):
    """`a` as an Array (olympus has no array subclasses).

    Args:
      a: an array, scalar or nested sequence of them.
      dtype: the result's dtype; None to infer it from the inputs.
      order: accepted for NumPy's signature (layout is not observable).

    Returns:
      An Array.

    Example:
      >>> jnp.asanyarray([1, 2])
      Array([1, 2], dtype=int32)
    """
    return asarray(a, dtype)


def ascontiguousarray(a, dtype=None):
    """`a` as an Array (every olympus array is contiguous).

    asarray: olympus arrays have no strides, so every array is contiguous.

    Args:
      a: an array, scalar or nested sequence of them.
      dtype: the result's dtype; None to infer it from the inputs.

    Returns:
      An Array.

    Example:
      >>> jnp.ascontiguousarray([1, 2])
      Array([1, 2], dtype=int32)
    """
    out = asarray(a, dtype)
    return reshape(out, (1,)) if aval_of(out).ndim == 0 else out


def iterable(y) -> bool:
    """Whether iter(y) works.

    Whether `iter(y)` works (0-d arrays are not iterable).

    Args:
      y: any object.

    Returns:
      A Python bool.

    Example:
      >>> jnp.iterable(jnp.ones(2))
      True
      >>> jnp.iterable(1.0)
      False
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


def isscalar(element) -> bool:
    """Whether `element` is a scalar: a Python or NumPy number, or a 0-d array.

    True for Python and NumPy numbers and for 0-d arrays (JAX's reading).

    Args:
      element: any object.

    Returns:
      A Python bool.

    Example:
      >>> jnp.isscalar(1.0)
      True
      >>> jnp.isscalar(jnp.ones(2))
      False
    """
    if is_array(element) or isinstance(element, np.ndarray):
        return element.ndim == 0
    return isinstance(
        element, (builtins.bool, int, float, complex, np.number, np.bool_)
    )


def array_equiv(a1, a2):
    """Whether a1 and a2 broadcast together and are equal everywhere.

    Args:
      a1: an array or scalar.
      a2: an array or scalar.

    Returns:
      A bool scalar array (False when the shapes do not broadcast).

    Example:
      >>> jnp.array_equiv(jnp.array([1, 1]), 1)
      Array(True, dtype=bool)
    """
    a1, a2 = to_operand(a1), to_operand(a2)
    try:
        broadcast_shapes(aval_of(a1).shape, aval_of(a2).shape)
    except ValueError:
        return lax.full((), False)
    return _all(equal(a1, a2))


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((tri, diag_indices, indices), RAISES_SIZE)
add_sections(
    (logspace, geomspace),
    """Raises:
  ValueError: axis is out of range for the array's rank.""",
)
add_sections(
    (
        fromfunction,
        asanyarray,
        ascontiguousarray,
        iterable,
        isscalar,
    ),
    RAISES_NOTHING,
)
add_sections((diagflat, array_equiv, meshgrid), RAISES_X)
