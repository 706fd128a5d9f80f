"""Array creation in olympus.numpy: arrays filled with a value (full, zeros,
ones, empty and their `*_like`), ranges (arange, linspace) and identity
matrices (eye, identity)."""

from __future__ import annotations

import builtins

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import (
    accepts_device,
    requested_dtype,
    aval_of,
    broadcast_to,
    normalize_axis,
    broadcast_shapes,
    result_type,
    to_operand,
)
from olympus.lax.ops import integer_sizes
from olympus.lax.parallel.primitives import varying_like
from olympus.lax.sharding import accepts_out_sharding
from olympus.numpy.compiled import compiled
from olympus.tracer.core import user_source_info
from olympus.numpy.ufunc_docs import RAISES_SIZE, RAISES_X, add_sections

__all__ = [
    "arange",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
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
        out = _keep_weak(constant(shape, _like_dtype(a, dtype)), a, dtype)
        return varying_like(out, a)  # in a shard_map body it varies as `a` does

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
    return varying_like(_keep_weak(out, a, dtype), a)


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


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((empty, identity), RAISES_SIZE)
add_sections((full_like, empty_like), RAISES_X)
