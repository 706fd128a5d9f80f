"""Stacking, splitting, inserting, deleting and rearranging arrays, beyond
shaping.py and rearranging.py: atleast_3d, column_stack/row_stack/dstack,
hsplit/vsplit/dsplit, block, append/insert/delete, rot90, rollaxis, resize,
choose, compress, broadcast_arrays and trim_zeros.

Positions (insert/delete indices, compress conditions, trim_zeros) decide the
result's shape, so they must be concrete: NumPy values or untraced Arrays.
"""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.rearranging import flip, split, tile
from olympus.numpy.shaping import (
    concatenate,
    moveaxis,
    ravel,
    reshape,
    swapaxes,
    vstack,
)
from olympus.numpy.core import (
    refuse_out,
    array,
    aval_of,
    check_arraylike,
    broadcast_shapes,
    broadcast_to,
    is_array,
    normalize_axes,
    normalize_axis,
    promote_dtypes,
    placed_operand,
    to_operand,
)
from olympus.numpy.indexing import check_mode, take
from olympus.numpy.reductions import nonzero
from olympus.numpy.ufuncs import clip, equal, remainder, where
from olympus.tracer.core import Tracer, current_trace
from olympus.tracer.errors import ConcretizationTypeError
from olympus.tracer.staging import StagingTrace
from olympus.numpy.ufunc_docs import RAISES_AXIS, RAISES_X, SIZE_ARGS
from olympus.numpy.ufunc_docs import add_sections, append_args

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


def _under_jit() -> bool:
    """Whether a jit trace is being built: JAX's jnp functions are jitted
    themselves, so there even a constant operand is abstract and a check that
    needs its value raises (jnp.choose mode='raise')."""
    trace = current_trace()
    while trace is not None:
        if isinstance(trace, StagingTrace):
            return True
        trace = getattr(trace, "parent", None)
    return False


# ---- stacking and splitting -------------------------------------------------------
def atleast_3d(*arys):
    """Each argument as an array with at least three dimensions.

    Views with at least 3 dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1).

    Args:
      *arys: one or more arrays or scalars.

    Returns:
      One array, or a list of arrays when given several.

    Example:
      >>> jnp.atleast_3d(jnp.array([1, 2])).shape
      (1, 2, 1)
    """
    outs = []
    for x in arys:
        x = placed_operand(x)
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
    """1-D arrays as the columns of a 2-D array (2-D arrays join along axis 1).

    Args:
      tup: a sequence of arrays.

    Returns:
      A 2-D array.

    Raises:
      OlympusTypeError: the arrays' shapes differ other than along the joined
        axis.

    Example:
      >>> jnp.column_stack([jnp.array([1, 2]), jnp.array([3, 4])])
      Array([[1, 3],
             [2, 4]], dtype=int32)
    """
    columns = []
    for x in tup:
        x = to_operand(x)
        columns.append(reshape(x, (aval_of(x).size, 1)) if aval_of(x).ndim < 2 else x)
    return concatenate(columns, axis=1)


row_stack = vstack  # NumPy's old name (NumPy 2 and JAX dropped it)


def dstack(tup, dtype=None):
    """Arrays joined along the third axis (after atleast_3d).

    Args:
      tup: a sequence of arrays.
      dtype: the result's dtype (None: the operands' promoted dtype).

    Returns:
      An array of at least three dimensions.

    Raises:
      OlympusTypeError: the arrays' shapes differ other than along the joined
        axis.

    Example:
      >>> jnp.dstack([jnp.array([1, 2]), jnp.array([3, 4])]).shape
      (1, 2, 2)
    """
    return concatenate([atleast_3d(x) for x in tup], axis=2, dtype=dtype)


def _split_at_least(name: str, ary, sections, axis: int, ndim: int):
    ary = to_operand(ary)
    if aval_of(ary).ndim < ndim:
        raise ValueError(
            f"jnp.{name} needs an array of at least {ndim} dimension(s), "
            f"got shape {aval_of(ary).shape}"
        )
    return split(ary, sections, axis)


def hsplit(ary, indices_or_sections):
    """`ary` split along axis 1 (axis 0 for 1-D arrays).

    Example:
      >>> jnp.hsplit(jnp.arange(4), 2)
      [Array([0, 1], dtype=int32), Array([2, 3], dtype=int32)]
    """
    ndim = aval_of(to_operand(ary)).ndim
    return _split_at_least("hsplit", ary, indices_or_sections, 1 if ndim > 1 else 0, 1)


def vsplit(ary, indices_or_sections):
    """`ary` split along axis 0.

    split along axis 0; JAX (unlike NumPy) also splits 1-D arrays.

    Example:
      >>> jnp.vsplit(jnp.arange(4).reshape(2, 2), 2)
      [Array([[0, 1]], dtype=int32), Array([[2, 3]], dtype=int32)]
    """
    return _split_at_least("vsplit", ary, indices_or_sections, 0, 1)


def dsplit(ary, indices_or_sections):
    """`ary` split along its third axis.

    Example:
      >>> [p.shape for p in jnp.dsplit(jnp.ones((1, 1, 4)), 2)]
      [(1, 1, 2), (1, 1, 2)]
    """
    return _split_at_least("dsplit", ary, indices_or_sections, 2, 3)


def block(arrays):
    """An array assembled from nested lists of blocks.

    An array assembled from nested lists of blocks: the innermost lists join
    along the last axis, the next ones out along the one before, and so on.

    Args:
      arrays: nested lists of arrays; the innermost lists join along the last
        axis.

    Returns:
      The assembled array.

    Raises:
      OlympusTypeError: the blocks' shapes do not fit together.

    Example:
      >>> jnp.block([[jnp.eye(2), jnp.zeros((2, 1))]])
      Array([[1., 0., 0.],
             [0., 1., 0.]], dtype=float32)
    """
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
    """`values` joined after `arr`, along `axis` or flattened.

    `values` joined after `arr` (both flattened when axis is None).

    Args:
      arr: an array.
      values: the values to append; of arr's shape except along axis (any shape
        when axis is None).
      axis: the axis to join along (None: flatten both first).

    Returns:
      An array: 1-D when axis is None, else arr's rank.

    Example:
      >>> jnp.append(jnp.array([1, 2]), jnp.array([3]))
      Array([1, 2, 3], dtype=int32)
      >>> jnp.append(jnp.arange(6).reshape(2, 3), jnp.zeros((1, 3), int), axis=0).shape
      (3, 3)
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """`arr` without the entries at `obj` along `axis`.

    `arr` without the entries at `obj` (an int, slice or concrete index array).

    Args:
      arr: an array.
      obj: the positions: an int, a slice or an index array (concrete).
      axis: the axis (None: the flattened array).
      assume_unique_indices: a hint that obj has no duplicates (for jit with
        array obj).

    Returns:
      An array, shorter along axis (flattened when axis is None).

    Example:
      >>> jnp.delete(jnp.array([1, 2, 3]), 1)
      Array([1, 3], dtype=int32)
    """
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
    """`values` inserted before the positions `obj` along `axis`.

    `values` inserted before the positions `obj` along `axis`, as JAX. Positions
    are concrete; negative ones count from the end and out-of-range ones clip to
    [0, n] (NumPy raises). A single position takes all of `values`' slices;
    several take one slice each, in the order of `obj`.

    Args:
      arr: an array.
      obj: the positions: an int, a slice or an index array (concrete).
      values: the values to insert or append.
      axis: the axis (None: the flattened array).

    Returns:
      An array, longer along axis (flattened when axis is None).

    Example:
      >>> jnp.insert(jnp.array([1, 2, 3]), 1, 9)
      Array([1, 9, 2, 3], dtype=int32)
    """
    check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    arr = to_operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    ndim = aval_of(arr).ndim
    axis = _axis_of_array("insert", axis, ndim)
    n = aval_of(arr).shape[axis]
    positions = _insert_positions(obj, n)
    values = to_operand(values)
    values = reshape(
        values, (1,) * (ndim - aval_of(values).ndim) + aval_of(values).shape
    )
    if positions.size == 1:
        if (
            positions.ndim == 0
        ):  # a scalar position: values' leading axis moves to `axis`
            values = moveaxis(values, 0, axis)
        positions = np.full(aval_of(values).shape[axis], positions.ravel()[0])
    count = np.broadcast_shapes(positions.shape, (aval_of(values).shape[axis],))[0]
    shape = list(aval_of(arr).shape)
    shape[axis] = count
    values = broadcast_to(
        lax.convert_element_type(values, aval_of(arr).dtype), tuple(shape)
    )
    order = _insert_order(np.broadcast_to(positions, (count,)), n)
    return take(concatenate([arr, values], axis), order, axis=axis, mode="clip")


def _insert_positions(obj, n: int) -> np.ndarray:
    """insert's positions as a 0-d or 1-d int64 NumPy array (JAX's checks)."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    positions = _concrete(obj, "insert", "the insertion positions")
    if positions.ndim > 1:
        raise ValueError(
            f"jnp.insert: obj must be a slice, a 1-D array or a scalar; got shape "
            f"{positions.shape}"
        )
    if not np.issubdtype(positions.dtype, np.integer):
        if positions.size or is_array(obj):
            raise ValueError(
                f"jnp.insert: the positions must be integer typed, got {positions.dtype}"
                " (as in JAX); cast them, e.g. obj.astype(int)"
            )
    return positions.astype(np.int64)


def _insert_order(positions: np.ndarray, n: int) -> np.ndarray:
    """Where each output slice comes from in concatenate([arr, values]):
    value i lands at its clipped position plus its rank among the positions."""
    count = positions.size
    positions = np.clip(np.where(positions < 0, positions + n, positions), 0, n)
    landing = positions.copy()
    landing[np.argsort(positions, kind="stable")] += np.arange(count)
    order = np.empty(n + count, np.int32)
    from_arr = np.ones(n + count, bool)
    from_arr[landing] = False
    order[landing] = n + np.arange(count)
    order[from_arr] = np.arange(n)
    return order


def _axis_of_array(name: str, axis: int, ndim: int) -> int:
    """normalize_axis, also refusing axis 0 of a 0-d array (as JAX)."""
    if ndim == 0:
        raise ValueError(
            f"jnp.{name}: axis {axis} is out of bounds for an array of dimension 0"
        )
    return normalize_axis(axis, ndim)


# ---- rearranging --------------------------------------------------------------------
def rot90(m, k: int = 1, axes: tuple = (0, 1)):
    """`m` rotated by 90 degrees k times in the plane of `axes`.

    `m` rotated by 90 degrees k times, from the first axis toward the second.

    Args:
      m: an array of rank >= 2.
      k: the number of quarter turns (negative: clockwise).
      axes: the two axes of the plane, rotating from the first toward the
        second.

    Returns:
      An array of m's dtype.

    Example:
      >>> jnp.rot90(jnp.array([[1, 2], [3, 4]]))
      Array([[2, 4],
             [1, 3]], dtype=int32)
    """
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
    """`a` with `axis` moved to sit before position `start`.

    Moves `axis` to sit before position `start` (moveaxis is the clearer
    spelling).

    Args:
      a: an array.
      axis: the axis to move.
      start: the position to move it before.

    Returns:
      An array of a's dtype with permuted axes.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      TypeError: axis is out of range for the array's rank.

    Example:
      >>> jnp.rollaxis(jnp.ones((2, 3, 4)), 2).shape
      (4, 2, 3)
    """
    a = to_operand(a)
    ndim = aval_of(a).ndim
    axis = _axis_of_array("rollaxis", axis, ndim)
    if not -ndim <= start <= ndim:
        raise ValueError(
            f"jnp.rollaxis: start={start} is out of range for {ndim} dimensions"
        )
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


def resize(a, new_shape):
    """An array of `new_shape` filled by repeating a's flattened values.

    Args:
      a: an array or scalar.
      new_shape: the result's shape.

    Returns:
      An array of new_shape and a's dtype.

    Example:
      >>> jnp.resize(jnp.array([1, 2, 3]), (2, 2))
      Array([[1, 2],
             [3, 1]], dtype=int32)
    """
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


def choose(a, choices, out=None, mode: str = "raise"):
    """choices[a] elementwise: each entry picks from the choice `a` names.

    choices[a] elementwise, broadcasting `a` and every choice together.
    mode='clip' clamps indices and 'wrap' takes them modulo len(choices);
    'raise' checks the bounds of `a`, so it needs a concrete `a` (not under jit).

    Args:
      a: an integer array of choice indices.
      choices: a sequence of arrays broadcasting with a.
      out: unsupported (must be None); arrays are immutable, as in JAX.
      mode: 'raise' (eager only), 'wrap' or 'clip' for indices out of range.

    Returns:
      An array of the broadcast shape.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ConcretizationTypeError: mode='raise' under jit or with a traced `a`.
      IndexModeError: mode is not 'raise', 'clip' or 'wrap'.
      OutArgumentError: out is not None (a NotImplementedError, as JAX's).

    Example:
      >>> jnp.choose(jnp.array([0, 1, 0]), [jnp.array([1, 2, 3]), jnp.array([10, 20, 30])])
      Array([ 1, 20,  3], dtype=int32)
    """
    refuse_out("jnp.choose", out)
    a = to_operand(a)
    if not dtypes.is_integer(aval_of(a).dtype):
        raise ValueError(
            f"jnp.choose: the index array `a` must be integer typed, got "
            f"{aval_of(a).str_short()} (as in JAX); cast it, e.g. a.astype(int)"
        )
    check_mode("jnp.choose", mode, ("raise", "clip", "wrap"))
    n = len(choices)
    if mode == "raise":
        if _under_jit():
            raise ConcretizationTypeError(
                "jnp.choose: mode='raise' checks the index values, which are abstract "
                "under jit (as in JAX); pass mode='clip' or mode='wrap'"
            )
        index = _concrete(a, "choose", "a (with mode='raise'; or pass mode='clip')")
        if index.size and (index.min() < 0 or index.max() >= n):
            raise ValueError(
                f"jnp.choose: index out of range for {n} choices "
                f"(got values in [{index.min()}, {index.max()}])"
            )
    a = remainder(a, n) if mode == "wrap" else clip(a, 0, n - 1)
    choices = promote_dtypes(*choices)
    shape = broadcast_shapes(aval_of(a).shape, *(aval_of(c).shape for c in choices))
    out = broadcast_to(choices[0], shape)
    for i, choice in enumerate(choices[1:], start=1):
        out = where(equal(a, i), choice, out)
    return out


def compress(
    condition,
    a,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value=0,
    out=None,
):
    """The slices of `a` along `axis` where `condition` holds.

    A concrete condition gives exactly those slices; a traced one needs a static
    `size` (the first `size` selected slices, then `fill_value` ones).

    Args:
      condition: a 1-D boolean array.
      a: an array.
      axis: the axis to work along (None: the flattened array).
      size: the number of slices returned (needed under jit).
      fill_value: the value of slices beyond those selected, up to size.
      out: unsupported (must be None); arrays are immutable, as in JAX.

    Returns:
      An array whose axis keeps only the selected slices.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: axis is out of range for the array's rank.
      ConcretizationTypeError: size is None and the condition is traced.
      OutArgumentError: out is not None (a NotImplementedError, as JAX's).

    Example:
      >>> jnp.compress(jnp.array([True, False, True]), jnp.array([1, 2, 3]))
      Array([1, 3], dtype=int32)
    """
    refuse_out("jnp.compress", out)
    a = to_operand(a)
    condition = to_operand(condition)
    if aval_of(condition).ndim != 1:
        raise ValueError(
            f"jnp.compress: condition must be a 1-D array, got shape "
            f"{aval_of(condition).shape} (as in JAX); ravel it first"
        )
    if axis is None:
        a, axis = ravel(a), 0
    a = moveaxis(a, _axis_of_array("compress", axis, aval_of(a).ndim), 0)
    n = builtins.min(aval_of(a).shape[0], aval_of(condition).shape[0])
    if size is None:
        selected = np.flatnonzero(
            _concrete(condition, "compress", "condition (without size=)")
        )
        if selected.size and selected[-1] >= n:
            raise ValueError(
                f"jnp.compress: condition selects entry {selected[-1]}, out of bounds "
                f"for an axis of {n}"
            )
        out = take(a, selected.astype(np.int32), axis=0, mode="clip")
    else:
        out = _compress_to_size(condition, a, n, size, fill_value)
    return moveaxis(out, 0, axis)


def _compress_to_size(condition, a, n: int, size: int, fill_value):
    """The first `size` selected slices of `a` (axis 0), then fill_value ones."""
    if not 0 <= size <= n:
        raise ValueError(
            f"jnp.compress: size must be in [0, {n}] (the axis' length), got {size}"
        )
    condition = lax.slice(condition, (0,), (n,))
    condition = lax.ne(
        condition, lax.full((n,), np.zeros((), aval_of(condition).dtype)[()])
    )
    a = lax.slice_in_dim(a, 0, n, axis=0) if aval_of(a).shape[0] != n else a
    (selected,) = nonzero(condition, size=size, fill_value=n)
    fill_shape = (1,) + aval_of(a).shape[1:]
    filler = lax.full(fill_shape, np.asarray(fill_value, aval_of(a).dtype)[()])
    return take(concatenate([a, filler], 0), selected, axis=0, mode="clip")


def broadcast_arrays(*args):
    """The arguments broadcast to one common shape.

    Args:
      *args: arrays or scalars.

    Returns:
      A list of arrays of the common shape.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      IncompatibleShapesError: the shapes do not broadcast (a ValueError and
        TypeError).

    Example:
      >>> [x.shape for x in jnp.broadcast_arrays(jnp.ones((2, 1)), jnp.ones(3))]
      [(2, 3), (2, 3)]
    """
    args = [to_operand(x) for x in args]
    shape = broadcast_shapes(*(aval_of(x).shape for x in args))
    return [
        broadcast_to(array(x) if not hasattr(x, "aval") else x, shape) for x in args
    ]


def trim_zeros(filt, trim: str = "fb", axis=None):
    """`filt` without its leading and/or trailing zeros.

    `filt` without its leading ('f') and/or trailing ('b') all-zero slices along
    each of `axis` (all axes when None), as JAX; a 0-d array comes back
    unchanged. The result's shape depends on the values, so `filt` must be
    concrete.

    Args:
      filt: an array.
      trim: 'f' to trim the front, 'b' the back, 'fb' both.
      axis: the axes to trim (None: all).

    Returns:
      A shorter array.

    Example:
      >>> jnp.trim_zeros(jnp.array([0, 1, 2, 0]))
      Array([1, 2], dtype=int32)
    """
    filt = to_operand(filt)
    values = _concrete(filt, "trim_zeros", "the array")
    trim = trim.lower()
    axes = set(normalize_axes(axis, values.ndim)) if values.ndim else set()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    start, limit = [0] * values.ndim, list(values.shape)
    for ax in axes:
        others = tuple(i for i in range(values.ndim) if i != ax)
        nonzero = np.flatnonzero(np.any(values != 0, axis=others))
        if not nonzero.size:
            start[ax], limit[ax] = 0, 0
            continue
        start[ax] = int(nonzero[0]) if "f" in trim else 0
        limit[ax] = int(nonzero[-1]) + 1 if "b" in trim else values.shape[ax]
    return lax.slice(filt, tuple(start), tuple(limit))


# Docstring sections the functions above share with their families (ufunc_docs).
append_args((compress,), SIZE_ARGS)
add_sections(
    (hsplit, vsplit, dsplit),
    """Args:
  ary: an array.
  indices_or_sections: the number of equal sections, or the indices to cut
    before.""",
    "Returns:\n  A list of arrays.",
    """Raises:
  ArrayLikeTypeError: ary is a list or other non-array (convert it with
    jnp.asarray).
  ValueError: ary has too few dimensions (3 for dsplit), or the sections do
    not divide the axis.""",
)
add_sections((atleast_3d, rot90, resize), RAISES_X)
add_sections((append, delete, insert, trim_zeros), RAISES_AXIS)
