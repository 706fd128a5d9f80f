"""Array creation and shape manipulation in olympus.numpy."""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import (
    _key_array_type,
    accepts_device,
    asarray,
    requested_dtype,
    placed,
    aval_of,
    broadcast_to,
    normalize_axes,
    normalize_axis,
    broadcast_shapes,
    promote_dtypes,
    result_type,
    to_operand,
)
from olympus.lax.ops import integer_sizes
from olympus.lax.sharding import accepts_out_sharding, refuse_unlaid_repeat
from olympus.numpy.compiled import compiled
from olympus.numpy.indexing import take
from olympus.tracer.core import user_source_info
from olympus.tracer.errors import ConcretizationTypeError as _ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_AXIS, RAISES_SIZE, RAISES_X, add_sections

__all__ = [
    "arange",
    "array_split",
    "astype",
    "atleast_1d",
    "atleast_2d",
    "concatenate",
    "diag",
    "diagonal",
    "empty",
    "empty_like",
    "expand_dims",
    "eye",
    "flip",
    "fliplr",
    "flipud",
    "full",
    "full_like",
    "hstack",
    "identity",
    "linspace",
    "meshgrid",
    "moveaxis",
    "ones",
    "ones_like",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "split",
    "squeeze",
    "swapaxes",
    "tile",
    "transpose",
    "tril",
    "triu",
    "vstack",
    "zeros",
    "zeros_like",
    "dtypes",  # jnp.dtypes (NumPy has the name): the IR's dtype module, as before
]


def _shape(shape, api: str = "jnp.zeros/ones/full/empty") -> tuple:
    """A shape argument as ints; a float size is refused, as JAX."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return integer_sizes(
        api,
        np.atleast_1d(shape).tolist() if isinstance(shape, np.ndarray) else shape,
    )


def _dtype(dtype, default=None):
    if dtype is not None:
        return requested_dtype(dtype)
    return dtypes.canonicalize_dtype(default or dtypes.default_float_dtype())


# ---- creation --------------------------------------------------------------------
@accepts_out_sharding
@accepts_device
def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value`.

    Args:
      shape: an int or a sequence of ints.
      fill_value: a scalar, or an array broadcast to shape.
      dtype: the dtype (None: fill_value's).
      device: where to place the array.
      out_sharding: how to lay the array out over a mesh.

    Returns:
      The new array.

    Raises:
      TracerIntegerConversionError: shape holds a traced value.

    Example:
      >>> jnp.full((2,), 7)
      Array([7, 7], dtype=int32, weak_type=True)
    """
    fill = to_operand(fill_value)
    if dtype is None and not aval_of(fill).shape:  # keeps a Python number weak
        return lax.full(_shape(shape), fill)
    dtype = _dtype(dtype, aval_of(fill).dtype)
    if aval_of(fill).shape:
        return broadcast_to(lax.convert_element_type(fill, dtype), _shape(shape))
    return lax.full(_shape(shape), fill, dtype)


def _constant(name: str, value: int, example: str):
    """zeros or ones: an array of `shape` filled with `value`."""

    def constant(shape, dtype=None):
        return lax.full(_shape(shape), value, _dtype(dtype))

    constant.__name__ = constant.__qualname__ = name
    constant.__doc__ = f"""An array of `shape` filled with {name}.

    Args:
      shape: an int or a sequence of ints.
      dtype: the dtype (None: the default float type).
      device: where to place the array (a Device or Sharding).
      out_sharding: how to lay the array out over a mesh.

    Returns:
      The new array.

    Raises:
      TracerIntegerConversionError: shape holds a traced value (shapes are
        static under jit).

    Example:
{example}
    """
    return accepts_out_sharding(accepts_device(constant))


zeros = _constant(
    "zeros",
    0,
    "      >>> jnp.zeros((2, 2), jnp.int32)\n      Array([[0, 0], [0, 0]], dtype=int32)",
)
ones = _constant(
    "ones", 1, "      >>> jnp.ones(3)\n      Array([1., 1., 1.], dtype=float32)"
)


@accepts_out_sharding
@accepts_device
def empty(shape, dtype=None):
    """An array of `shape` (olympus fills it with zeros).

    Args:
      shape: the result's shape (an int or a tuple of ints).
      dtype: the result's dtype; None to infer it from the inputs.
      device: the device to place the result on (None: the default one).
      out_sharding: a sharding for the result (None: the default).

    Returns:
      An array of shape and dtype (the default float).

    Example:
      >>> jnp.empty((2,))
      Array([0., 0.], dtype=float32)
    """
    return zeros(shape, dtype)


def _like_aval(a):
    """The aval `*_like` copies: an array's, or a ShapeDtypeStruct's (JAX's
    `*_like` take jax.eval_shape's results; optax's factored RMS does)."""
    from olympus.tracer.functions import ShapeDtypeStruct

    if isinstance(a, ShapeDtypeStruct):
        return a.aval
    return aval_of(to_operand(a))


def _like_dtype(a, dtype):
    return _dtype(dtype, _like_aval(a).dtype)


def _keep_weak(out, a, dtype):
    """`*_like` of a weakly typed value stays weak unless a dtype is given (JAX)."""
    if dtype is None and _like_aval(a).weak_type:
        from olympus.lax.elementwise import convert_element_type_p

        return convert_element_type_p.bind(
            out, new_dtype=aval_of(out).dtype, weak_type=True
        )
    return out


def _constant_like(name: str, constant, example: str):
    """zeros_like or ones_like: `constant` (zeros, ones) at a's shape and dtype."""

    def like(a, dtype=None, shape=None):
        shape = _like_aval(a).shape if shape is None else shape
        return _keep_weak(constant(shape, _like_dtype(a, dtype)), a, dtype)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"""{constant.__name__.capitalize()} of the shape and dtype of `a`.

    Args:
      a: an array (or anything with .shape and .dtype).
      dtype: overrides a's dtype.
      shape: overrides a's shape.
      device: where to place the array.
      out_sharding: how to lay the array out over a mesh.

    Returns:
      The new array.

    Raises:
      ArrayLikeTypeError: a is a list or other non-array (convert it with
        jnp.asarray).

    Example:
{example}
    """
    return accepts_out_sharding(accepts_device(like))


zeros_like = _constant_like(
    "zeros_like",
    zeros,
    "      >>> jnp.zeros_like(jnp.arange(3))\n      Array([0, 0, 0], dtype=int32)",
)
ones_like = _constant_like(
    "ones_like",
    ones,
    "      >>> jnp.ones_like(jnp.zeros((2,), jnp.float32))\n"
    "      Array([1., 1.], dtype=float32)",
)


@accepts_out_sharding
@accepts_device
def full_like(a, fill_value, dtype=None, shape=None):
    """An array like `a` filled with `fill_value`.

    Args:
      a: an array or scalar.
      fill_value: the value (a scalar or an array broadcasting to the shape).
      dtype: the result's dtype (None: a's).
      shape: the result's shape (None: a's).
      device: the device to place the result on (None: the default one).
      out_sharding: a sharding for the result (None: the default).

    Returns:
      An array of a's shape and dtype unless given.

    Example:
      >>> jnp.full_like(jnp.array([1, 2]), 7)
      Array([7, 7], dtype=int32)
    """
    out = full(
        _like_aval(a).shape if shape is None else shape,
        fill_value,
        _like_dtype(a, dtype),
    )
    return _keep_weak(out, a, dtype)


@accepts_device
def empty_like(prototype, dtype=None, shape=None):
    """An array like `prototype` (olympus fills it with zeros).

    Args:
      prototype: an array or scalar.
      dtype: the result's dtype (None: prototype's).
      shape: the result's shape (None: prototype's).
      device: the device to place the result on (None: the default one).

    Returns:
      An array of prototype's shape and dtype unless given.

    Example:
      >>> jnp.empty_like(jnp.array([1, 2]))
      Array([0, 0], dtype=int32)
    """
    return zeros_like(prototype, dtype, shape)


def _concrete_scalar(x, name: str):
    """`x` on the host: a Python number as it is, else a NumPy array that
    keeps the dtype."""
    try:
        return x if isinstance(x, (int, float, complex)) else np.asarray(x)
    except Exception as err:  # a tracer: the size would depend on a traced value
        raise type(err)(
            f"jnp.{name} needs concrete bounds: the number of elements is part of "
            f"the result's shape, which must be known while tracing, but a bound "
            f"is a traced {aval_of(x).str_short()}. Make it static: pass it with "
            f"jit(f, static_argnums=...) / static_argnames=..., or compute it "
            f"from Python or NumPy values (shapes such as x.shape[0] are static)"
            f"{_at_user_line()}"
        ) from None


def _at_user_line() -> str:
    info = user_source_info()
    return f"\n  at {info}" if info is not None else ""


def _wrapped_int(value: int, dtype):
    """`value` in `dtype`, wrapped modulo 2**bits as JAX's arange does
    (arange(-2, 3, dtype=uint8) starts at 254)."""
    bits = np.dtype(dtype).itemsize * 8
    wrapped = value % (1 << bits)
    if dtypes.is_signed_int(dtype) and wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    return np.array(wrapped, dtype)[()]


class ArangeArgumentError(ValueError):
    """jnp.arange was given a bound that is not a real scalar."""


class ArangeDtypeError(TypeError):
    """jnp.arange was asked for bool values (XLA's iota has no bool form)."""


@accepts_out_sharding
@accepts_device
def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop) with spacing `step`.

    The bounds must be concrete (the length is a static shape). Without a
    dtype the result has the bounds' promoted dtype, as JAX's
    (`arange(np.int8(3))` is int8); values are computed on the device as
    `start + step * iota` (float16/bfloat16 in float32), so they match JAX's.

    Args:
      start: the first value (or stop, when stop is None).
      stop: the end (exclusive).
      step: the spacing (default 1).
      dtype: the dtype (None: from the arguments: int for ints).
      device: where to place the array.
      out_sharding: how to lay the array out over a mesh.

    Returns:
      A 1-D array.

    Raises:
      TracerArrayConversionError: a bound is traced (pass it as static).
      ArangeArgumentError: a bound is not a scalar, or is complex.
      ArangeDtypeError: the dtype is bool.

    Example:
      >>> jnp.arange(1, 7, 2)
      Array([1, 3, 5], dtype=int32)
    """
    names = ("stop" if stop is None and step is None else "start", "stop", "step")
    values = (start, stop, step)
    if dtype is None:
        dtype = result_type(*(to_operand(v) for v in values if v is not None))
    start, stop, step = (
        None if v is None else _arange_bound(_concrete_scalar(v, "arange"), name)
        for name, v in zip(names, values)
    )
    dtype = requested_dtype(dtype)
    if dtype == np.bool_:
        raise ArangeDtypeError(
            "jnp.arange cannot make bool values (XLA's iota takes integer, float "
            "and complex dtypes); make them with jnp.arange(n) % 2 == 1 or pass "
            f"an integer dtype{_at_user_line()}"
        )
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = dtype
        if dtypes.is_float(dtype) and np.dtype(dtype).itemsize < 4:
            working = np.dtype(np.float32)
        size = builtins.max(0, int(np.ceil((stop - start) / step)))
        steps = lax.mul(_arange_cast(step, working), lax.iota(working, size))
        out = lax.add(_arange_cast(start, working), steps)
        return lax.convert_element_type(out, dtype)
    if start == 0:
        return lax.iota(dtype, builtins.max(0, int(np.ceil(stop))))
    size = builtins.max(0, int(np.ceil(stop - start)))
    return lax.add(_arange_cast(start, dtype), lax.iota(dtype, size))


def _arange_bound(value, name: str):
    """A concrete arange bound, checked: a real scalar (a NumPy one keeps its
    dtype, so the length is computed in it as JAX computes it)."""
    if np.ndim(value) != 0:
        raise ArangeArgumentError(
            f"jnp.arange: arguments must be scalars; got {name} of shape "
            f"{np.shape(value)}. Pass one value per bound (x.item(), or "
            f"jnp.linspace for an array of bounds){_at_user_line()}"
        )
    if np.iscomplexobj(value):
        raise ArangeArgumentError(
            f"jnp.arange takes real bounds; got complex {name}={value!r}. Pass "
            f"the real part (x.real){_at_user_line()}"
        )
    return value


def _arange_cast(value, dtype):
    """An arange bound in `dtype`; a Python int wraps modulo 2**bits as JAX's
    conversion does (arange(-2, 3, dtype=uint8) starts at 254)."""
    if isinstance(value, int) and dtypes.is_integer(dtype):
        return _wrapped_int(value, dtype)
    return lax.convert_element_type(value, dtype)


@accepts_device
def linspace(
    start,
    stop,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype=None,
    axis: int = 0,
):
    """`num` evenly spaced values from `start` to `stop`.

    Args:
      start: the first value (an array gives one sequence per element).
      stop: the last value (included with endpoint=True).
      num: how many values (static).
      endpoint: whether stop is included.
      retstep: if True, also return the spacing.
      dtype: the dtype (None: the default float type).
      axis: where the new axis goes for array bounds.
      device: where to place the array.

    Returns:
      The values, or `(values, step)` with retstep.

    Raises:
      LinspaceArgumentError: num is negative.

    Example:
      >>> jnp.linspace(0.0, 1.0, 5)
      Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    if num < 0:
        raise LinspaceArgumentError(
            f"jnp.linspace: the number of samples, {num}, must be non-negative"
            f"{_at_user_line()}"
        )
    start, stop = to_operand(start), to_operand(stop)
    if dtype is None:
        dtype = _inexact(result_type(start, stop))
    dtype = dtypes.canonicalize_dtype(dtype)
    # One compiled program, as JAX's: XLA's fused arithmetic gives the same
    # last bits (which histogram bin a sample on an edge falls into).
    return compiled(_linspace)(
        start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype,
        axis=axis,
    )  # fmt: skip


def _linspace(start, stop, *, num, endpoint, retstep, dtype, axis):
    compute = _inexact(dtype)
    start = lax.convert_element_type(start, compute)
    stop = lax.convert_element_type(stop, compute)
    shape = list(broadcast_shapes(aval_of(start).shape, aval_of(stop).shape))
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    axis = normalize_axis(axis, len(shape) + 1)
    grid_shape = (*shape[:axis], 1, *shape[axis:])
    div = (num - 1) if endpoint else num
    if num > 1:
        # start * (1 - t) + stop * t, as JAX computes it: both ends are exact.
        delta = lax.div(lax.sub(stop, start), np.asarray(div, compute)[()])
        t_shape = tuple(div if i == axis else 1 for i in range(len(grid_shape)))
        t = lax.div(lax.iota(compute, div), np.asarray(div, compute)[()])
        full_shape = (*shape[:axis], div, *shape[axis:])
        t = broadcast_to(lax.reshape(t, t_shape), full_shape)
        lo = broadcast_to(lax.reshape(start, grid_shape), full_shape)
        hi = broadcast_to(lax.reshape(stop, grid_shape), full_shape)
        out = lax.add(lax.mul(lo, lax.sub(_one(compute), t)), lax.mul(hi, t))
        if endpoint:
            out = lax.concatenate([out, lax.reshape(stop, grid_shape)], axis)
    elif num == 1:
        delta = lax.full((), np.nan, compute) if endpoint else lax.sub(stop, start)
        out = lax.reshape(start, grid_shape)
    else:
        delta = lax.full((), np.nan, compute)
        out = lax.full((*shape[:axis], 0, *shape[axis:]), 0, compute)
    if not dtypes.is_inexact(dtype):
        out = lax.floor(out)
    out = lax.convert_element_type(out, dtype)
    return (out, delta) if retstep else out


class LinspaceArgumentError(ValueError):
    """jnp.linspace was asked for a negative number of samples."""


def _inexact(dtype) -> np.dtype:
    """`dtype` if it is inexact, else the default float dtype."""
    dtype = np.dtype(dtype)
    return dtype if dtypes.is_inexact(dtype) else dtypes.default_float_dtype()


def _one(dtype):
    return np.asarray(1, dtype)[()]


@accepts_device
def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    """A 2-D array with ones on a diagonal and zeros elsewhere.

    Args:
      N: the number of rows.
      M: the number of columns (None: N).
      k: the diagonal: 0 the main one, >0 above, <0 below.
      dtype: the dtype (None: the default float type).
      device: where to place the array.

    Returns:
      An N x M array.

    Raises:
      OlympusTypeError: N or M is negative.

    Example:
      >>> jnp.eye(2, dtype=jnp.int32)
      Array([[1, 0], [0, 1]], dtype=int32)
    """
    M = N if M is None else M
    if isinstance(k, (int, np.integer)):
        k = np.int32(builtins.min(builtins.max(int(k), -N), M))  # past the edges: none
    else:  # a traced diagonal, as JAX allows
        k = lax.convert_element_type(to_operand(k), dtypes.int32)
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    on_diag = lax.eq(lax.add(rows, k), cols)
    return lax.convert_element_type(on_diag, _dtype(dtype))


def identity(n: int, dtype=None):
    """The n x n identity matrix.

    Args:
      n: the number of rows and columns.
      dtype: the result's dtype; None to infer it from the inputs.

    Returns:
      An (n, n) array of dtype (the default float).

    Example:
      >>> jnp.identity(2)
      Array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    return eye(n, dtype=dtype)


# ---- shape manipulation --------------------------------------------------------
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
    a = to_operand(a)
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


def astype(x, dtype, /, *, copy: bool = True, device=None):
    """`x` converted to `dtype`.

    `x` converted to `dtype` (arrays are immutable, so `copy` changes nothing).

    Args:
      x: an array.
      dtype: the target dtype.
      copy: accepted for the Array API's signature (arrays are immutable).
      device: the device to place the result on (None: the default one).

    Returns:
      An array of x's shape and dtype `dtype`.

    Example:
      >>> jnp.astype(jnp.array([1.7, -1.7]), jnp.int32)
      Array([ 1, -1], dtype=int32)
    """
    if isinstance(x, _key_array_type()) and dtype == x.dtype:
        return x  # a key array to its own dtype (optax's MultiSteps state), as JAX's
    return placed(
        lax.convert_element_type(to_operand(x), requested_dtype(dtype)), device
    )


# ---- rearranging and repeating -------------------------------------------------
def flip(m, axis=None):
    """`m` with the order of elements along `axis` reversed.

    A view-free copy (arrays are immutable).

    Args:
      m: an array.
      axis: None (every axis), an int, or a tuple of ints.

    Returns:
      The flipped array.

    Example:
      >>> jnp.flip(jnp.arange(3))
      Array([2, 1, 0], dtype=int32)
    """
    m = to_operand(m)
    axes = normalize_axes(axis, aval_of(m).ndim)
    return lax.rev(m, axes) if axes else m


def _flip_along(name: str, axis: int, words: str, flipped: str):
    """fliplr (axis 1) or flipud (axis 0): flip along one fixed axis."""

    def flip_along(m):
        return flip(m, axis)

    flip_along.__name__ = flip_along.__qualname__ = name
    flip_along.__doc__ = f"""`m` reversed along axis {axis} ({words}).

    Args:
      m: an array of rank >= {axis + 1}.

    Returns:
      An array of m's shape and dtype.

    Raises:
      ArrayLikeTypeError: m is a list or other non-array (convert it with
        jnp.asarray).
      ValueError: m has fewer than {axis + 1} dimensions.

    Example:
      >>> jnp.{name}(jnp.array([[1, 2], [3, 4]]))
      Array({flipped}, dtype=int32)
    """
    return flip_along


fliplr = _flip_along("fliplr", 1, "left to right", "[[2, 1], [4, 3]]")
flipud = _flip_along("flipud", 0, "up to down", "[[3, 4], [1, 2]]")


class RollArgumentError(ValueError):
    """jnp.roll got shifts and axes that do not broadcast together."""


def roll(a, shift, axis=None):
    """`a` with elements shifted cyclically by `shift` along `axis`.

    Elements that roll past the end reappear at the start.

    Args:
      a: an array.
      shift: an int or a sequence of ints (may be traced).
      axis: None (the flattened array), an int, or a sequence of ints.

    Returns:
      The rolled array.

    Example:
      >>> jnp.roll(jnp.arange(4), 1)
      Array([3, 0, 1, 2], dtype=int32)
    """
    a = to_operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval_of(a).shape)
    shifts, axes = _roll_pairs(shift, axis)
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(ax, aval_of(a).ndim)
        n = aval_of(a).shape[ax]
        if not n:
            continue
        if isinstance(s, (int, np.integer)):
            if int(s) % n:
                cut = n - int(s) % n
                a = concatenate(
                    [_take_range(a, ax, cut, n), _take_range(a, ax, 0, cut)], ax
                )
        else:
            a = _roll_traced(a, s, ax, n)
    return a


def _roll_pairs(shift, axis) -> tuple[list, list]:
    """(shift, axis) pairs, broadcast as JAX's roll does."""
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    if isinstance(shift, (int, np.integer, float, np.floating)):
        shifts = [int(shift)]  # JAX casts a float shift to int
    elif isinstance(shift, (tuple, list)):
        shifts = list(shift)
    else:
        shift = to_operand(shift)
        kind = aval_of(shift).dtype
        if dtypes.is_float(kind) or kind == dtypes.bool_:  # cast to int, as JAX
            shift = lax.convert_element_type(shift, dtypes.int32)
        if not dtypes.is_integer(aval_of(shift).dtype) or aval_of(shift).ndim > 1:
            raise RollArgumentError(
                f"jnp.roll: shift must be an integer scalar or 1-d array, got "
                f"{aval_of(shift).str_short()}"
            )
        if aval_of(shift).ndim == 0:
            shifts = [shift]
        else:
            shifts = [lax.index_in_dim(shift, i, keepdims=False)
                      for i in range(aval_of(shift).shape[0])]  # fmt: skip
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise RollArgumentError(
            f"jnp.roll: {len(shifts)} shifts and {len(axes)} axes do not "
            f"broadcast; pass one shift per axis, or one of either"
        )
    return shifts, axes


def _roll_traced(a, shift, axis: int, n: int):
    """a rolled by a traced `shift`: the window of [a, a] starting at n - shift % n."""
    shift = lax.convert_element_type(to_operand(shift), dtypes.int32)
    size = np.int32(n)
    r = lax.rem(shift, size)
    r = lax.select(lax.lt(r, np.int32(0)), lax.add(r, size), r)
    doubled = lax.concatenate([a, a], axis)
    starts = [np.int32(0)] * aval_of(a).ndim
    starts[axis] = lax.sub(size, r)
    return lax.dynamic_slice(
        doubled, starts, aval_of(a).shape, allow_negative_indices=False
    )


def _take_range(a, axis: int, start: int, stop: int):
    shape = aval_of(a).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, starts, limits)


def tile(A, reps):
    """`A` repeated `reps` times along each axis.

    When reps is longer than A's rank, A gets leading axes of size 1.

    Args:
      A: an array.
      reps: an int or a sequence of ints.

    Returns:
      The tiled array.

    Example:
      >>> jnp.tile(jnp.array([1, 2]), 2)
      Array([1, 2, 1, 2], dtype=int32)
    """
    A = to_operand(A)
    reps = (
        (int(reps),)
        if isinstance(reps, (int, np.integer))
        else tuple(int(r) for r in reps)
    )
    ndim = builtins.max(aval_of(A).ndim, len(reps))
    A = reshape(A, (1,) * (ndim - aval_of(A).ndim) + aval_of(A).shape)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = aval_of(A).shape
    interleaved = [d for pair in zip(reps, shape) for d in pair]
    expanded = broadcast_to(reshape(A, [d for s in shape for d in (1, s)]), interleaved)
    return reshape(expanded, [r * s for r, s in zip(reps, shape)])


@accepts_out_sharding
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element of `a` repeated `repeats` times along `axis`.

    Array repeats make the output size data-dependent: under jit pass a static total_repeat_length.

    Args:
      a: an array.
      repeats: an int or an array of counts per element.
      axis: the axis to repeat along (None: the flattened array).
      total_repeat_length: the static output length for array repeats.

    Returns:
      The repeated array.

    Raises:
      ConcretizationTypeError: traced repeats without total_repeat_length.

    Example:
      >>> jnp.repeat(jnp.array([1, 2]), 2)
      Array([1, 1, 2, 2], dtype=int32)
    """
    a = to_operand(a)
    counts = _static_repeats(repeats)
    if axis is None:
        a, axis = ravel(a), 0
    shape = aval_of(a).shape
    axis = normalize_axis(axis, len(shape))
    refuse_unlaid_repeat(a, axis)  # as JAX on an Explicit mesh
    if counts.ndim or total_repeat_length is not None:
        return _repeat_by_gather(a, counts, axis, total_repeat_length)
    repeats = int(counts)
    expanded = expand_dims(a, axis + 1)
    target = shape[: axis + 1] + (int(repeats),) + shape[axis + 1 :]
    out_shape = shape[:axis] + (shape[axis] * int(repeats),) + shape[axis + 1 :]
    return reshape(broadcast_to(expanded, target), out_shape)


def _static_repeats(repeats) -> np.ndarray:
    """The repeat counts as a NumPy int array: they fix the output's shape."""
    try:
        counts = np.asarray(repeats)
    except TypeError as error:
        raise _ConcretizationTypeError(
            "jnp.repeat needs repeats known when tracing (a Python int or a list/NumPy "
            f"array of ints), got {repeats!r}"
        ) from error
    if counts.dtype.kind not in "iub" or counts.ndim > 1:
        raise ValueError(
            "jnp.repeat: repeats must be an int or a 1-D sequence of ints, "
            f"got {counts.dtype} of shape {counts.shape}"
        )
    if np.any(counts < 0):
        raise ValueError(
            f"jnp.repeat: repeats may not be negative, got {counts.tolist()}"
        )
    return counts.astype(np.int64)


def _repeat_by_gather(a, counts, axis: int, total_repeat_length):
    """Per-element counts: gather each source index as many times as it repeats."""
    length = aval_of(a).shape[axis]
    if counts.ndim and counts.size not in (1, length):
        raise ValueError(
            f"jnp.repeat: {counts.size} repeats for an axis of length {length}"
        )
    source = np.repeat(
        np.arange(length), np.broadcast_to(counts.reshape(-1), (length,))
    )
    if total_repeat_length is not None:
        source = _fit_length(source, int(total_repeat_length))
    return take(a, source.astype(np.int32), axis=axis, mode="clip")


def _fit_length(source: np.ndarray, total: int) -> np.ndarray:
    if len(source) >= total or len(source) == 0:
        return source[:total]
    return np.concatenate([source, np.full(total - len(source), source[-1])])


def split(ary, indices_or_sections, axis: int = 0):
    """Splits `ary` into pieces along `axis`.

    Args:
      ary: an array.
      indices_or_sections: an int N (N equal pieces) or a sequence of split
        points.
      axis: the axis to split along.

    Returns:
      A list of arrays.

    Raises:
      ValueError: an int N does not divide the axis evenly.

    Example:
      >>> jnp.split(jnp.arange(4), 2)
      [Array([0, 1], dtype=int32), Array([2, 3], dtype=int32)]
    """
    return _split(ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis: int = 0):
    """`ary` split into sections that may differ in size by one.

    Like split, but unequal sections are allowed (the first ones are larger).

    Args:
      ary: an array.
      indices_or_sections: the number of equal sections, or the indices to cut
        before.
      axis: the axis to work along; negative counts from the end.

    Returns:
      A list of arrays.

    Example:
      >>> jnp.array_split(jnp.arange(5), 2)
      [Array([0, 1, 2], dtype=int32), Array([3, 4], dtype=int32)]
    """
    return _split(ary, indices_or_sections, axis, equal=False)


def _split(ary, sections, axis, equal: bool):
    ary = to_operand(ary)
    axis = normalize_axis(axis, aval_of(ary).ndim)
    n = aval_of(ary).shape[axis]
    if isinstance(sections, (int, np.integer)):
        sections = int(sections)
        if equal and n % sections:
            raise ValueError(
                f"array split does not result in an equal division ({n} into {sections})"
            )
        size, extra = divmod(n, sections)
        cuts = np.cumsum([size + (i < extra) for i in range(sections)])[:-1].tolist()
    else:
        cuts = [
            builtins.min(builtins.max(int(c) % (n + 1) if int(c) < 0 else int(c), 0), n)
            for c in sections
        ]
    bounds = [0, *cuts, n]
    return [
        _take_range(ary, axis, lo, builtins.max(lo, hi))
        for lo, hi in zip(bounds, bounds[1:])
    ]


# ---- diagonals and triangles ------------------------------------------------------
def _require_matrix(name: str, shape) -> None:
    """tril/triu act on the last two axes, so a vector or scalar has none to mask."""
    if len(shape) < 2:
        raise ValueError(
            f"jnp.{name} needs an array of at least 2 dimensions, got shape {shape}"
        )


def _diagonal_mask(shape, k: int, above: bool):
    rows = lax.broadcasted_iota(dtypes.int32, shape, len(shape) - 2)
    cols = lax.broadcasted_iota(dtypes.int32, shape, len(shape) - 1)
    offset = lax.sub(cols, rows)
    return lax.ge(offset, np.int32(k)) if above else lax.le(offset, np.int32(k))


def _triangle(name: str, above: bool, ones_3x3: str):
    """triu (above=True) or tril: `m` with the entries on the other side of
    the k-th diagonal of its last two axes zeroed."""

    def triangle(m, k: int = 0):
        m = to_operand(m)
        shape = aval_of(m).shape
        _require_matrix(name, shape)
        zero = lax.full(shape, np.zeros((), aval_of(m).dtype)[()])
        return lax.select(_diagonal_mask(shape, k, above), m, zero)

    side = "below" if above else "above"
    triangle.__name__ = triangle.__qualname__ = name
    triangle.__doc__ = f"""`m` with the entries {side} the k-th diagonal zeroed.

    Zeros {side} the k-th diagonal of the last two axes (of every matrix in a
    stack).

    Args:
      m: an array of rank >= 2 (the last two axes).
      k: the diagonal offset: 0 the main one, positive above, negative below.

    Returns:
      An array of m's shape and dtype.

    Raises:
      ArrayLikeTypeError: m is a list or other non-array (convert it with
        jnp.asarray).
      ValueError: m has fewer than 2 dimensions.

    Example:
      >>> jnp.{name}(jnp.ones((3, 3)))
      Array({ones_3x3}, dtype=float32)
    """
    return triangle


triu = _triangle("triu", True, "[[1., 1., 1.], [0., 1., 1.], [0., 0., 1.]]")
tril = _triangle("tril", False, "[[1., 0., 0.], [1., 1., 0.], [1., 1., 1.]]")


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The `offset` diagonal of the (axis1, axis2) planes of `a`, as its last axis.

    Args:
      a: an array or scalar.
      offset: the diagonal's offset.
      axis1: the first axis of the planes.
      axis2: the second axis of the planes.

    Returns:
      An array with axis1 and axis2 removed and the diagonal appended.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: a has fewer than two dimensions, or an axis is out of range.

    Example:
      >>> jnp.diagonal(jnp.arange(6).reshape(2, 3))
      Array([0, 4], dtype=int32)
    """
    a = to_operand(a)
    ndim = aval_of(a).ndim
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    shape = aval_of(a).shape
    n, m = shape[-2:]
    length = builtins.max(
        0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m)
    )
    if ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions")
    masked = lax.select(
        lax.eq(
            lax.sub(
                lax.broadcasted_iota(dtypes.int32, shape, ndim - 1),
                lax.broadcasted_iota(dtypes.int32, shape, ndim - 2),
            ),
            np.int32(offset),
        ),
        a,
        lax.full(shape, np.zeros((), aval_of(a).dtype)[()]),
    )
    # Each row holds at most one diagonal element: summing the row extracts it.
    row_sums = (
        lax.reduce_sum(masked, (ndim - 1,))
        if aval_of(a).dtype != dtypes.bool_
        else lax.reduce_or(masked, (ndim - 1,))
    )
    first_row = builtins.max(0, -offset)
    return _take_range(row_sums, ndim - 2, first_row, first_row + length)


def diag(v, k: int = 0):
    """The k-th diagonal of a 2-D array, or a 2-D array with v on it.

    For 1-D v it builds a matrix; for 2-D v it extracts a diagonal.

    Args:
      v: a 1-D or 2-D array.
      k: the diagonal (0 main, >0 above, <0 below).

    Returns:
      A 2-D array (for 1-D v) or a 1-D array (for 2-D v).

    Raises:
      ValueError: v is neither 1-D nor 2-D.

    Example:
      >>> jnp.diag(jnp.array([[1, 2], [3, 4]]))
      Array([1, 4], dtype=int32)
    """
    v = to_operand(v)
    if aval_of(v).ndim == 2:
        return diagonal(v, k)
    if aval_of(v).ndim != 1:
        raise ValueError("jnp.diag expects a 1-D or 2-D array")
    n = aval_of(v).shape[0] + builtins.abs(k)
    zero = np.zeros((), aval_of(v).dtype)[()]
    # Column j of the diagonal holds v[j - k] (k >= 0) or v[j] (k < 0).
    padded = lax.pad(v, zero, [(builtins.max(0, k), builtins.max(0, -k), 0)])
    on_diagonal = lax.eq(
        lax.sub(
            lax.broadcasted_iota(dtypes.int32, (n, n), 1),
            lax.broadcasted_iota(dtypes.int32, (n, n), 0),
        ),
        np.int32(k),
    )
    return lax.select(on_diagonal, broadcast_to(padded, (n, n)), lax.full((n, n), zero))


# ---- grids (jnp.pad, with all of np.pad's modes, is in olympus/numpy/padding.py) ----
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


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((empty, identity), RAISES_SIZE)
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
add_sections(
    (
        full_like,
        empty_like,
        atleast_2d,
        astype,
        tile,
        meshgrid,
    ),
    RAISES_X,
)
add_sections((swapaxes, flip, roll, array_split), RAISES_AXIS)
