"""The Python Array API standard: its version, the inspection namespace
(`__array_namespace_info__`), DLPack import (`from_dlpack`), and the functions
NumPy 2 also adopted: concat, unstack, matrix_transpose, matvec, vecmat,
vecdot, cumulative_sum, cumulative_prod, isdtype and can_cast.
"""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.backends.xla import client
from olympus.backends.xla.array import Array
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.numpy import reductions
from olympus.numpy.shaping import concatenate, moveaxis, squeeze, swapaxes
from olympus.numpy.core import (
    asarray,
    aval_of,
    normalize_axis,
    placed_operand,
    to_operand,
)
from olympus.numpy.linalg import vecdot
from olympus.numpy.reduction_docs import DOCS as REDUCTION_DOCS
from olympus.numpy.ufuncs import conjugate
from olympus.numpy.ufunc_docs import RAISES_AXIS, add_sections

__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "from_dlpack",
    "can_cast",
    "concat",
    "cumulative_prod",
    "cumulative_sum",
    "isdtype",
    "matrix_transpose",
    "matvec",
    "unstack",
    "vecdot",
    "vecmat",
]


def concat(arrays, /, *, axis: int | None = 0):
    """Arrays joined along an existing axis (the Array API's name of concatenate).

    The Array API's name for concatenate.

    Args:
      arrays: a sequence of arrays, equal in shape except along axis.
      axis: the axis to join along (None: flatten first).

    Returns:
      An array of the promoted dtype.

    Raises:
      ValueError: axis is out of range for the array's rank.
      OlympusTypeError: the shapes differ other than along axis.

    Example:
      >>> jnp.concat([jnp.ones(2), jnp.zeros(1)])
      Array([1., 1., 0.], dtype=float32)
    """
    return concatenate(arrays, axis)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of `x` along `axis`, as a tuple.

    The slices of `x` along `axis`, as a tuple (the inverse of stack).

    Args:
      x: an array of rank >= 1.
      axis: the axis to work along; negative counts from the end.

    Returns:
      A tuple of x.shape[axis] arrays.

    Example:
      >>> jnp.unstack(jnp.arange(4).reshape(2, 2))
      (Array([0, 1], dtype=int32), Array([2, 3], dtype=int32))
    """
    x = to_operand(x)
    axis = normalize_axis(axis, aval_of(x).ndim)
    x = moveaxis(x, axis, 0)
    shape = aval_of(x).shape
    return tuple(
        squeeze(lax.slice(x, (i,) + (0,) * (len(shape) - 1), (i + 1,) + shape[1:]), 0)
        for i in range(shape[0])
    )


def matrix_transpose(x, /):
    """Each matrix of a stack transposed: the last two axes swapped.

    Swaps the last two axes (a stack of matrices, each transposed).

    Args:
      x: an array of rank >= 2.

    Returns:
      An array of x's dtype.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: x has fewer than two dimensions.

    Example:
      >>> jnp.matrix_transpose(jnp.ones((4, 2, 3))).shape
      (4, 3, 2)
    """
    x = placed_operand(x)
    if aval_of(x).ndim < 2:
        raise ValueError(
            f"jnp.matrix_transpose needs an array of at least 2 dimensions, "
            f"got shape {aval_of(x).shape}"
        )
    return swapaxes(x, -1, -2)


def _check_core(name: str, x, ndim: int):
    if aval_of(x).ndim < ndim:
        raise ValueError(
            f"jnp.{name}: operand of shape {aval_of(x).shape} needs at least "
            f"{ndim} dimension(s)"
        )


def matvec(x1, x2, /):
    """Matrix-vector products over broadcast batches.

    Matrix-vector products over broadcast batches: (..., m, n) x (..., n) ->
    (..., m).

    Args:
      x1: matrices of shape (..., m, n).
      x2: vectors of shape (..., n).


    Example:
      >>> jnp.matvec(jnp.eye(2), jnp.array([1.0, 2.0]))
      Array([1., 2.], dtype=float32)
    """
    x1, x2 = to_operand(x1), to_operand(x2)
    _check_core("matvec", x1, 2)
    _check_core("matvec", x2, 1)
    return squeeze(reductions.matmul(x1, lax.expand_dims(x2, (aval_of(x2).ndim,))), -1)


def vecmat(x1, x2, /):
    """Conjugated vector-matrix products over broadcast batches.

    conj(x1) times matrices: (..., n) x (..., n, m) -> (..., m).

    Args:
      x1: vectors of shape (..., n) (conjugated).
      x2: matrices of shape (..., n, m).


    Example:
      >>> jnp.vecmat(jnp.array([1.0, 2.0]), jnp.eye(2))
      Array([1., 2.], dtype=float32)
    """
    x1, x2 = to_operand(x1), to_operand(x2)
    _check_core("vecmat", x1, 1)
    _check_core("vecmat", x2, 2)
    row = lax.expand_dims(conjugate(x1), (aval_of(x1).ndim - 1,))
    return squeeze(reductions.matmul(row, x2), -2)


def _cumulative_with_initial(name: str, running):
    def fn(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False):
        x = to_operand(x)
        ndim = aval_of(x).ndim
        if axis is None:
            if ndim > 1:
                raise ValueError(
                    f"jnp.{name}: axis must be given for an array of "
                    f"{ndim} dimensions (shape {aval_of(x).shape})"
                )
            axis = 0
        if ndim == 0:
            raise ValueError(f"jnp.{name} needs an array of at least 1 dimension")
        axis = normalize_axis(axis, ndim)
        if dtype is None and name == "cumulative_sum":
            dtype = _summed_int_dtype(aval_of(x).dtype)
        out = running(x, axis=axis, dtype=dtype)
        if include_initial:
            identity = np.asarray(
                0 if name == "cumulative_sum" else 1, aval_of(out).dtype
            )[()]
            config = [(1, 0, 0) if d == axis else (0, 0, 0) for d in range(ndim)]
            out = lax.pad(out, identity, config)
        return out

    fn.__name__ = name
    fn.__doc__ = REDUCTION_DOCS.get(name, f"The running `{name}` along `axis`.")
    return fn


def _summed_int_dtype(dtype):
    """The dtype cumulative_sum gives narrow ints and bools: the default int
    (uint for unsigned), as sum and JAX do (cumsum keeps them; None: keep)."""
    width = dtypes.default_int_dtype().itemsize
    if dtype == dtypes.bool_ or (
        dtypes.is_signed_int(dtype) and dtype.itemsize < width
    ):
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned_int(dtype) and dtype.itemsize < width:
        return np.dtype(f"uint{8 * width}")
    return None


cumulative_sum = _cumulative_with_initial("cumulative_sum", reductions.cumsum)
cumulative_prod = _cumulative_with_initial("cumulative_prod", reductions.cumprod)


_KINDS = {
    "bool": lambda d: d == dtypes.bool_,
    "signed integer": lambda d: dtypes.is_integer(d) and not dtypes.is_unsigned_int(d),
    "unsigned integer": dtypes.is_unsigned_int,
    "integral": dtypes.is_integer,
    "real floating": dtypes.is_float,
    "complex floating": dtypes.is_complex,
    "numeric": lambda d: d != dtypes.bool_,
}


def _as_dtype(t) -> np.dtype:
    """A dtype from a dtype, a scalar type (NumPy's or olympus's), or an array."""
    inner = getattr(t, "dtype", None)
    return inner if isinstance(inner, np.dtype) else np.dtype(t)


def isdtype(dtype, kind) -> bool:
    """Whether `dtype` belongs to `kind`.

    Whether `dtype` is of `kind`: a dtype, a kind name such as 'real floating'
    (bfloat16 and float8 count as real floating), or a tuple of these.

    Args:
      dtype: a dtype.
      kind: a dtype, a kind name ('bool', 'signed integer', 'unsigned integer',
        'integral', 'real floating', 'complex floating', 'numeric') or a tuple
        of them.

    Returns:
      A Python bool.

    Raises:
      ValueError: kind is not a dtype or a known kind name.

    Example:
      >>> jnp.isdtype(jnp.float32, 'real floating')
      True
      >>> jnp.isdtype(jnp.int8, ('bool', 'signed integer'))
      True
    """
    dtype = _as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(
                f"jnp.isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}"
            )
        return bool(_KINDS[kind](dtype))
    return dtype == _as_dtype(kind)


def can_cast(from_, to, casting: str = "safe") -> bool:
    """Whether NumPy's casting rule allows `from_` to become `to`.

    NumPy's can_cast on dtypes; an array or Python scalar stands for its dtype.

    Args:
      from_: a dtype, or an array or scalar standing for its dtype.
      to: the target dtype.
      casting: 'no', 'equiv', 'safe', 'same_kind' or 'unsafe'.

    Returns:
      A Python bool.

    Raises:
      ValueError: casting is not one of the five names.

    Example:
      >>> jnp.can_cast(jnp.int32, jnp.float32)
      False
      >>> jnp.can_cast(jnp.float32, jnp.int32)
      False
    """
    if not isinstance(from_, (np.dtype, type, str)) and not hasattr(from_, "aval"):
        from_ = to_operand(from_)
    if hasattr(from_, "aval"):
        from_ = aval_of(from_).dtype
    return bool(np.can_cast(_as_dtype(from_), _as_dtype(to), casting))


__array_api_version__ = "2023.12"


class _Info:
    """The Array API's inspection namespace: what this library and its devices do."""

    __module__ = "olympus.numpy"

    def capabilities(self) -> dict:
        # nonzero, unique and boolean masks give data-dependent shapes (eagerly only).
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": None,
        }

    def default_device(self):
        return client.default_device()

    def devices(self) -> list:
        return list(client.device_list())

    def default_dtypes(self, *, device=None) -> dict:
        return {
            "real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(),
            "indexing": dtypes.default_int_dtype(),
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes (64-bit ones only with x64 on), by `kind`."""
        names = [
            "bool",
            "int8",
            "int16",
            "int32",
            "uint8",
            "uint16",
            "uint32",
            "float32",
            "complex64",
        ]
        if dtypes.x64_enabled():
            names += ["int64", "uint64", "float64", "complex128"]
        found = {n: np.dtype(n) for n in names}
        if kind is None:
            return found
        return {n: d for n, d in found.items() if isdtype(d, kind)}


_INFO = _Info()


def __array_namespace_info__() -> _Info:
    """The standard's inspection API (capabilities, devices, default and supported dtypes)."""
    return _INFO


def from_dlpack(x, /, *, device=None, copy: bool | None = None) -> Array:
    """An Array from an object that supports DLPack.

    An Array from any object with `__dlpack__` (a NumPy array, a tensor of
    another library). It shares the producer's memory where DLPack allows it
    (same device, copy not True); a dtype olympus does not use without x64
    (int64, float64) is converted through a host copy.

    Args:
      x: an object with __dlpack__ (a NumPy array, a tensor of another library).
      device: the device to place the result on (None: the default one).
      copy: None, True or False, as the Array API says.

    Returns:
      An Array sharing or copying x's data.

    Raises:
      TypeError: x does not support DLPack.

    Example:
      >>> jnp.from_dlpack(np.arange(3))
      Array([0, 1, 2], dtype=int32)
    """
    if isinstance(x, Array):
        out = x if device is None else x.to_device(device)
        return out.copy() if copy and out is x else out
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"jnp.from_dlpack needs an object with __dlpack__, got {type(x)}"
        )
    host = (1, 0) == tuple(x.__dlpack_device__())
    target = client.default_device() if device is None else device
    if host and target.platform != "cpu":
        if copy is False:
            raise BufferError(
                "from_dlpack: a host array reaches an accelerator only by a copy"
            )
        return asarray(np.from_dlpack(x)).to_device(target)
    # jaxlib's imported buffer carries no shape: the producer's attributes give it.
    aval = ShapedArray(tuple(x.shape), np.dtype(str(x.dtype).removeprefix("torch.")))
    buf = client.from_dlpack(x.__dlpack__(), target, copy)
    if dtypes.canonicalize_dtype(aval.dtype) != aval.dtype:
        return asarray(client.host_array(buf, aval, target))
    out = Array(buf, aval)
    return out if target == client.default_device() else out.to_device(target)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (matvec, vecmat),
    """Returns:
  An array of shape (..., m).""",
    """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  OlympusTypeError: the inner dimensions differ.""",
)
add_sections((unstack,), RAISES_AXIS)
