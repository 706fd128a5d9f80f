"""Shape manipulation in olympus.numpy: reshape, ravel, transposes, squeeze
and expand_dims, atleast_1d/2d, and joining along an axis (concatenate,
hstack, vstack)."""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.numpy.core import (
    asarray,
    aval_of,
    normalize_axes,
    normalize_axis,
    promote_dtypes,
    placed_operand,
    to_operand,
)
from olympus.lax.sharding import accepts_out_sharding
from olympus.numpy.creation import _shape
from olympus.numpy.ufunc_docs import RAISES_AXIS, RAISES_X, add_sections

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "concatenate",
    "expand_dims",
    "hstack",
    "moveaxis",
    "permute_dims",
    "ravel",
    "reshape",
    "squeeze",
    "swapaxes",
    "transpose",
    "vstack",
]


@accepts_out_sharding
def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None):
    """`a` with a new shape of the same size.

    One dimension may be -1: it is inferred. Under jit, shapes are static.

    Args:
      a: an array.
      shape: an int or a tuple of ints.
      order: "C" (row-major) or "F" (column-major); "A" raises
        NotImplementedError, as JAX's.
      newshape: NumPy's older name for shape.
      copy: taken for NumPy's signature (arrays are immutable).

    Returns:
      The reshaped array.

    Raises:
      ValueError: the size differs, or more than one -1 is given.

    Example:
      >>> jnp.reshape(jnp.arange(6), (2, -1))
      Array([[0, 1, 2], [3, 4, 5]], dtype=int32)
    """
    if order not in ("C", "F"):
        raise NotImplementedError(
            f"jnp.reshape: order={order!r} is not supported; use 'C' or 'F'"
        )
    newshape = shape if shape is not None else newshape
    a = to_operand(a)
    if order == "F":  # column-major: reverse the axes, reshape, reverse back
        flipped = reshape(lax.transpose(a, tuple(range(aval_of(a).ndim))[::-1]),
                          tuple(_shape(newshape, "jnp.reshape"))[::-1])  # fmt: skip
        return lax.transpose(flipped, tuple(range(aval_of(flipped).ndim))[::-1])
    size = aval_of(a).size
    newshape = list(_shape(newshape, "jnp.reshape"))
    if newshape.count(-1) > 1:
        raise ValueError(
            f"reshape: can only specify one unknown dimension, got {tuple(newshape)}"
        )
    if -1 in newshape:
        known = int(np.prod([d for d in newshape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(
                f"cannot reshape array of size {size} into shape {tuple(newshape)}"
            )
        newshape[newshape.index(-1)] = size // known
    if int(np.prod(newshape, dtype=np.int64)) != size:
        raise ValueError(
            f"cannot reshape array of size {size} into shape {tuple(newshape)}"
        )
    return lax.reshape(a, newshape)


@accepts_out_sharding
def ravel(a, order: str = "C"):
    """`a` flattened to one dimension.

    order 'C' reads row by row, 'F' column by column.

    Args:
      a: an array.
      order: 'C' or 'F'.

    Returns:
      A 1-D array of a.size elements.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).

    Example:
      >>> jnp.ravel(jnp.array([[1, 2], [3, 4]]))
      Array([1, 2, 3, 4], dtype=int32)
    """
    a = to_operand(a)
    if order not in ("C", "F"):
        raise ValueError(f"jnp.ravel: order must be 'C' or 'F', got {order!r}")
    if order == "F":
        a = transpose(a)
    return lax.reshape(a, (aval_of(a).size,))


def transpose(a, axes=None):
    """`a` with its axes permuted (reversed by default).

    Args:
      a: an array.
      axes: a permutation of range(a.ndim); None reverses the axes.

    Returns:
      The transposed array.

    Raises:
      OlympusTypeError: axes is not a permutation of the dimensions.

    Example:
      >>> jnp.transpose(jnp.ones((2, 3, 4))).shape
      (4, 3, 2)
    """
    a = placed_operand(a)
    ndim = aval_of(a).ndim
    axes = (
        tuple(reversed(range(ndim)))
        if axes is None
        else tuple(normalize_axis(x, ndim) for x in axes)
    )
    if axes == tuple(range(ndim)):
        return a
    return lax.transpose(a, axes)


def permute_dims(a, axes=None):
    """`a` with its axes permuted (the Array API's name of transpose).

    Args:
      a: an array or scalar.
      axes: the permutation (None: reverse the axes).

    Returns:
      An array with a's dtype and permuted shape.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      OlympusTypeError: axes is not a permutation of a's axes.

    Example:
      >>> jnp.permute_dims(jnp.ones((2, 3)), (1, 0)).shape
      (3, 2)
    """
    return transpose(a, axes)


def swapaxes(a, axis1: int, axis2: int):
    """`a` with two axes interchanged.

    A transpose that names only the two axes.

    Args:
      a: an array.
      axis1: the first axis.
      axis2: the second axis.

    Returns:
      The transposed array.

    Example:
      >>> jnp.swapaxes(jnp.ones((2, 3)), 0, 1).shape
      (3, 2)
    """
    a = to_operand(a)
    ndim = aval_of(a).ndim
    perm = list(range(ndim))
    i, j = normalize_axis(axis1, ndim), normalize_axis(axis2, ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    """`a` with axes moved to new positions; the others keep their order.

    Handy to put a batch or channel axis where a function wants it.

    Args:
      a: an array.
      source: an int or ints: the axes to move.
      destination: an int or ints: their new positions.

    Returns:
      The transposed array.

    Raises:
      ValueError: source and destination differ in length.

    Example:
      >>> jnp.moveaxis(jnp.ones((2, 3, 4)), 0, -1).shape
      (3, 4, 2)
    """
    a = to_operand(a)
    ndim = aval_of(a).ndim
    src = normalize_axes(source, ndim)
    dst = normalize_axes(destination, ndim)
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: source and destination must have the same number of axes"
        )
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def squeeze(a, axis=None):
    """`a` without axes of size 1.

    Args:
      a: an array.
      axis: None (every size-1 axis), an int, or a tuple of ints.

    Returns:
      The squeezed array.

    Raises:
      ValueError: a listed axis does not have size 1.

    Example:
      >>> jnp.squeeze(jnp.ones((1, 3, 1))).shape
      (3,)
    """
    a = to_operand(a)
    shape = aval_of(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = normalize_axes(axis, len(shape))
        for i in axes:
            if shape[i] != 1:
                raise ValueError(
                    f"cannot select an axis to squeeze out which has size not equal to one (axis {i} of shape {shape})"
                )
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    """`a` with new axes of size 1 at the positions `axis`.

    Args:
      a: an array.
      axis: an int or a tuple of ints: positions in the result.

    Returns:
      The array with the new axes.

    Raises:
      ValueError: a position is out of range or repeated.

    Example:
      >>> jnp.expand_dims(jnp.ones(3), 0).shape
      (1, 3)
    """
    a = to_operand(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_ndim = aval_of(a).ndim + len(axes)
    return lax.expand_dims(a, tuple(normalize_axis(x, out_ndim) for x in axes))


def atleast_1d(*arys):
    """Each argument as an array with at least one dimension.

    Args:
      *arys: one or more arrays or scalars.

    Returns:
      One array, or a list of arrays when given several.

    Raises:
      OlympusTypeError: an argument is not an array or a number (a string, say).

    Example:
      >>> jnp.atleast_1d(1.0)
      Array([1.], dtype=float32, weak_type=True)
      >>> jnp.atleast_1d(jnp.ones(2), 3)
      [Array([1., 1.], dtype=float32), Array([3], dtype=int32, weak_type=True)]
    """
    outs = [
        reshape(x, (1,)) if aval_of(to_operand(x)).ndim == 0 else to_operand(x)
        for x in arys
    ]
    return outs[0] if len(outs) == 1 else outs


def atleast_2d(*arys):
    """Each argument as an array with at least two dimensions.

    Args:
      *arys: one or more arrays or scalars.

    Returns:
      One array, or a list of arrays when given several; a 1-D (n,) becomes (1,
      n).

    Example:
      >>> jnp.atleast_2d(jnp.array([1, 2]))
      Array([[1, 2]], dtype=int32)
    """
    outs = []
    for x in arys:
        x = to_operand(x)
        nd = aval_of(x).ndim
        outs.append(reshape(x, (1,) * (2 - nd) + aval_of(x).shape) if nd < 2 else x)
    return outs[0] if len(outs) == 1 else outs


def concatenate(arrays, axis: int | None = 0, dtype=None):
    """Joins a sequence of arrays along an existing axis.

    Operands promote to a common dtype, or are each converted to `dtype`.

    Args:
      arrays: a sequence of arrays, equal in shape except along `axis`.
      axis: the axis to join along; None flattens them first.
      dtype: the result's dtype (None: the operands' promoted dtype).

    Returns:
      The joined array.

    Raises:
      OlympusTypeError: the shapes differ off `axis` or the ranks differ.

    Example:
      >>> jnp.concatenate([jnp.zeros(2), jnp.ones(1)])
      Array([0., 0., 1.], dtype=float32)
    """
    arrays = _joinable(arrays, dtype)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    ndim = aval_of(arrays[0]).ndim
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, ndim)
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


def _joinable(arrays, dtype) -> list:
    """The operands of a join: promoted together, or each converted to dtype."""
    if dtype is not None:
        return [asarray(a, dtype=dtype) for a in arrays]
    return promote_dtypes(*arrays) if len(arrays) > 1 else [to_operand(arrays[0])]


def hstack(tup, dtype=None):
    """Arrays joined column-wise (axis 1; axis 0 for 1-D inputs).

    The horizontal companion of vstack.

    Example:
      >>> jnp.hstack([jnp.array([1, 2]), jnp.array([3])])
      Array([1, 2, 3], dtype=int32)
    """
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if aval_of(arrays[0]).ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Arrays stacked as rows (along axis 0).

    1-D inputs become rows of a 2-D result.

    Example:
      >>> jnp.vstack([jnp.array([1, 2]), jnp.array([3, 4])])
      Array([[1, 2], [3, 4]], dtype=int32)
    """
    return concatenate([atleast_2d(a) for a in tup], 0, dtype)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (hstack, vstack),
    """Args:
  tup: a sequence of arrays.
  dtype: the result's dtype (None: the operands' promoted dtype).""",
    """Returns:
  The joined array.""",
    """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  OlympusTypeError: the arrays' shapes differ other than along the joined
    axis.""",
)
add_sections((atleast_2d,), RAISES_X)
add_sections((swapaxes,), RAISES_AXIS)
