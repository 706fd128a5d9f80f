"""Array creation and shape manipulation in olympus.numpy."""

from __future__ import annotations

import builtins
import math

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import (
    array, aval_of, broadcast_to, normalize_axes, normalize_axis, promote_dtypes, to_operand,
)


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _dtype(dtype, default=None):
    return dtypes.canonicalize_dtype(dtype if dtype is not None else (default or dtypes.default_float_dtype()))


# ---- creation --------------------------------------------------------------------
def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value`."""
    fill = to_operand(fill_value)
    dtype = _dtype(dtype, aval_of(fill).dtype)
    if aval_of(fill).shape:
        return broadcast_to(lax.convert_element_type(fill, dtype), _shape(shape))
    return lax.full(_shape(shape), fill, dtype)


def zeros(shape, dtype=None):
    return lax.full(_shape(shape), 0, _dtype(dtype))


def ones(shape, dtype=None):
    return lax.full(_shape(shape), 1, _dtype(dtype))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like_dtype(a, dtype):
    return _dtype(dtype, aval_of(to_operand(a)).dtype)


def zeros_like(a, dtype=None, shape=None):
    return zeros(aval_of(to_operand(a)).shape if shape is None else shape, _like_dtype(a, dtype))


def ones_like(a, dtype=None, shape=None):
    return ones(aval_of(to_operand(a)).shape if shape is None else shape, _like_dtype(a, dtype))


def full_like(a, fill_value, dtype=None, shape=None):
    return full(aval_of(to_operand(a)).shape if shape is None else shape, fill_value,
                _like_dtype(a, dtype))


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def _concrete_scalar(x, name: str):
    try:
        return x if isinstance(x, (int, float)) else np.asarray(x)[()].item()
    except Exception as err:  # a tracer: the size would depend on a traced value
        raise type(err)(f"jnp.{name} needs concrete bounds: {err}") from None


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop); bounds must be concrete."""
    start = _concrete_scalar(start, "arange")
    stop = None if stop is None else _concrete_scalar(stop, "arange")
    step = None if step is None else _concrete_scalar(step, "arange")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if dtype is None:
        is_float = builtins.any(isinstance(v, float) for v in (start, stop, step))
        dtype = dtypes.default_float_dtype() if is_float else dtypes.default_int_dtype()
    dtype = dtypes.canonicalize_dtype(dtype)
    size = builtins.max(0, math.ceil((stop - start) / step))
    if step == 1 and start == 0 or size == 0:
        return lax.iota(dtype, size)
    if dtypes.is_integer(dtype) and builtins.all(isinstance(v, int) for v in (start, step)):
        out = lax.mul(lax.iota(dtype, size), np.asarray(step, dtype)[()])
        return lax.add(out, np.asarray(start, dtype)[()])
    # Float steps are computed on the host, like NumPy, so the values match exactly.
    return array(np.arange(start, stop, step).astype(dtype))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    """`num` evenly spaced samples from start to stop (inclusive if endpoint)."""
    start, stop = promote_dtypes(start, stop)
    dtype = _dtype(dtype, dtypes.default_float_dtype())
    compute = dtypes.default_float_dtype() if not dtypes.is_inexact(dtype) else dtype
    start = lax.convert_element_type(array(start), compute)
    stop = lax.convert_element_type(array(stop), compute)
    div = (num - 1) if endpoint else num
    shape = aval_of(start).shape
    steps = lax.broadcasted_iota(compute, (num, *shape), 0)
    start_b = broadcast_to(start, (num, *shape))
    stop_b = broadcast_to(stop, (num, *shape))
    delta = lax.sub(stop_b, start_b)
    if div > 0:
        out = lax.add(start_b, lax.mul(steps, lax.div(delta, np.asarray(div, compute)[()])))
        if endpoint and num > 1:
            # The last sample is exactly `stop`, as in NumPy.
            head = lax.slice(out, (0,) * (len(shape) + 1), (num - 1, *shape))
            out = lax.concatenate([head, lax.reshape(stop, (1, *shape))], 0)
    else:
        out = start_b
    out = lax.convert_element_type(out, dtype)
    if axis != 0:
        out = moveaxis(out, 0, axis)
    if retstep:
        step = lax.div(lax.sub(stop, start), np.asarray(div, compute)[()]) if div > 0 else np.nan
        return out, step
    return out


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    """A 2-D array with ones on the k-th diagonal."""
    M = N if M is None else M
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    on_diag = lax.eq(lax.add(rows, np.int32(k)), cols)
    return lax.convert_element_type(on_diag, _dtype(dtype))


def identity(n: int, dtype=None):
    return eye(n, dtype=dtype)


# ---- shape manipulation --------------------------------------------------------
def reshape(a, newshape=None, order: str = "C", *, shape=None):
    """A view of `a` with a new shape; one dimension may be -1."""
    if order != "C":
        raise ValueError("jnp.reshape supports only order='C'")
    newshape = shape if shape is not None else newshape
    a = to_operand(a)
    size = aval_of(a).size
    newshape = list(_shape(newshape))
    if newshape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {tuple(newshape)}")
    if -1 in newshape:
        known = int(np.prod([d for d in newshape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
        newshape[newshape.index(-1)] = size // known
    if int(np.prod(newshape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(newshape)}")
    return lax.reshape(a, newshape)


def ravel(a):
    a = to_operand(a)
    return lax.reshape(a, (aval_of(a).size,))


def transpose(a, axes=None):
    a = to_operand(a)
    ndim = aval_of(a).ndim
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(normalize_axis(x, ndim) for x in axes)
    if axes == tuple(range(ndim)):
        return a
    return lax.transpose(a, axes)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def swapaxes(a, axis1: int, axis2: int):
    a = to_operand(a)
    ndim = aval_of(a).ndim
    perm = list(range(ndim))
    i, j = normalize_axis(axis1, ndim), normalize_axis(axis2, ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    a = to_operand(a)
    ndim = aval_of(a).ndim
    src = normalize_axes(source, ndim)
    dst = normalize_axes(destination, ndim)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def squeeze(a, axis=None):
    a = to_operand(a)
    shape = aval_of(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = normalize_axes(axis, len(shape))
        for i in axes:
            if shape[i] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one (axis {i} of shape {shape})")
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    a = to_operand(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_ndim = aval_of(a).ndim + len(axes)
    return lax.expand_dims(a, tuple(normalize_axis(x, out_ndim) for x in axes))


def atleast_1d(*arys):
    outs = [reshape(x, (1,)) if aval_of(to_operand(x)).ndim == 0 else to_operand(x) for x in arys]
    return outs[0] if len(outs) == 1 else outs


def atleast_2d(*arys):
    outs = []
    for x in arys:
        x = to_operand(x)
        nd = aval_of(x).ndim
        outs.append(reshape(x, (1,) * (2 - nd) + aval_of(x).shape) if nd < 2 else x)
    return outs[0] if len(outs) == 1 else outs


def concatenate(arrays, axis: int | None = 0):
    """Joins arrays along an existing axis (axis=None flattens first)."""
    arrays = promote_dtypes(*arrays) if len(arrays) > 1 else [to_operand(arrays[0])]
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


def stack(arrays, axis: int = 0):
    """Joins arrays of one shape along a new axis."""
    if not len(arrays):
        raise ValueError("need at least one array to stack")
    arrays = [to_operand(a) for a in arrays]
    shape = aval_of(arrays[0]).shape
    for a in arrays:
        if aval_of(a).shape != shape:
            raise ValueError(f"all input arrays must have the same shape, got {shape} and {aval_of(a).shape}")
    axis = normalize_axis(axis, len(shape) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if aval_of(arrays[0]).ndim == 1 else 1)


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], 0)


def astype(x, dtype):
    return lax.convert_element_type(to_operand(x), dtype)
