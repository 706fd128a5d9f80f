"""The bottom of olympus.numpy: conversion to arrays (`array` of a list of
arrays stacks them, so `stack` lives here), dtype promotion, broadcasting,
axis normalization and float bit layouts. Every other numpy module builds on
this one; it imports none of them."""

from __future__ import annotations

import functools
import sys
import warnings
import inspect

import ml_dtypes
import numpy as np

from olympus import lax
from olympus.backends.xla.array import Array
from olympus.backends.xla.array import to_device
from olympus.backends.xla.sharding import onto_mesh_in_scope
from olympus.ir import dtypes
from olympus.lax.elementwise import convert_element_type_p
from olympus.lax.ops import integer_sizes
from olympus.lax.sharding import accepts_out_sharding
from olympus.tracer.core import Tracer, aval_of
from olympus.tracer.errors import IncompatibleShapesError, OlympusTypeError
from olympus.numpy.ufunc_docs import RAISES_X, add_sections

_PY_SCALARS = (bool, int, float, complex)


def is_array(x) -> bool:
    return isinstance(x, (Array, Tracer))


def _check_dtype_arg(dtype):
    return None if dtype is None else requested_dtype(dtype)


class DtypeTruncationWarning(UserWarning):
    """A 64-bit dtype asked for by name while x64 is off (JAX warns too)."""


def requested_dtype(dtype) -> np.dtype:
    """A dtype the user passed, as the system uses it. Without x64 a 64-bit
    request narrows to 32 bits; as JAX, that is said in a warning pointing at
    the user's line, since a silent float32 surprises (Python's `float`,
    `int` and `complex` mean the default types and are not warned about)."""
    canonical = dtypes.canonicalize_dtype(dtype)
    if any(dtype is t for t in (bool, int, float, complex)) or canonical == dtype:
        return canonical
    name = _outermost_jnp_function()
    warnings.warn(
        f"jnp.{name}: the requested dtype {np.dtype(dtype).name} is not available "
        f"and is truncated to {canonical.name}; turn 64-bit types on with "
        "olympus.config.update('olympus_enable_x64', True) or OLYMPUS_ENABLE_X64=1",
        DtypeTruncationWarning,
        stacklevel=_user_stacklevel(),
    )
    return canonical


def _outermost_jnp_function() -> str:
    """The name of the outermost `jnp` function on the stack (the one the
    user called: `asarray`, not the `array` it calls). Functions a factory
    made share one code object; their closures tell them apart."""
    functions = {}
    for key, value in vars(sys.modules["olympus.numpy"]).items():
        function = inspect.unwrap(value) if callable(value) else None
        code = getattr(function, "__code__", None)
        if code is not None and not key.startswith("_"):
            functions.setdefault(code, []).append((key, function))
    name, frame = "function", sys._getframe(1)
    while frame is not None:
        for key, function in functions.get(frame.f_code, ()):
            cells = zip(frame.f_code.co_freevars, function.__closure__ or ())
            if all(
                frame.f_locals.get(var) is cell.cell_contents for var, cell in cells
            ):
                name = key
                break
        frame = frame.f_back
    return name


def _user_stacklevel() -> int:
    """warnings.warn's stacklevel of the first frame outside olympus."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        "olympus."
    ):
        frame, level = frame.f_back, level + 1
    return level


def _host_array(obj, dtype=None) -> np.ndarray:
    """A NumPy array of nested lists/scalars/arrays in its canonical dtype."""
    try:
        value = np.asarray(obj) if dtype is None else np.asarray(obj, dtype=dtype)
    except OlympusTypeError:  # already says what went wrong (e.g. a typed PRNG key)
        raise
    except (ValueError, TypeError) as err:
        raise OlympusTypeError(
            f"cannot convert {type(obj).__name__} to an array: {err}"
        ) from None
    try:
        canonical = dtypes.canonicalize_dtype(
            value.dtype
        )  # bf16 and float8 are "V" kind
    except TypeError:
        raise OlympusTypeError(
            f"cannot convert {type(obj).__name__} with dtype {value.dtype} to an olympus "
            f"array: only numbers and booleans are supported"
        ) from None
    return value.astype(canonical, copy=False)


def _contains_tracer_or_array(obj) -> bool:
    if is_array(obj):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer_or_array(x) for x in obj)
    return False


def _key_array_type() -> type | tuple:
    """olympus.prng's key array class once keys exist (nothing matches before)."""
    prng = sys.modules.get("olympus.prng")
    return prng.PRNGKeyArray if prng is not None else ()


class OutArgumentError(NotImplementedError, ValueError):
    """NumPy's `out=` given an array: olympus arrays are immutable. A
    NotImplementedError as JAX's (and a ValueError, as olympus raised before)."""


def refuse_out(api: str, out) -> None:
    """NumPy's out= is taken (NumPy code passes out=None) but only as None."""
    if out is not None:
        raise OutArgumentError(
            f"{api}: the out= argument is not supported (arrays are immutable, "
            f"as in JAX); use the returned array instead"
        )


class ArrayOrderError(NotImplementedError):
    """jnp.array/asarray with a memory order other than 'K' (as JAX, which
    keeps no strides, olympus refuses it)."""


def _check_order(api: str, order) -> None:
    if order is not None and order != "K":
        raise ArrayOrderError(
            f"{api}: order={order!r} is not supported (arrays have no memory "
            f"layout to choose, as in JAX); leave order out or pass order='K'"
        )


@accepts_out_sharding
def array(
    object,  # JAX's and NumPy's name (a keyword call passes object=)
    dtype=None,
    copy: bool = True,
    ndmin: int = 0,
    *,
    order: str | None = "K",
    device=None,
):
    """An Array made from `obj`, copying it.

    Accepts nested lists and tuples, NumPy arrays, scalars and Arrays.
    64-bit inputs are narrowed to 32 bits unless x64 is enabled.

    Args:
      object: the data.
      dtype: the dtype (None: inferred, as NumPy's, then canonicalized).
      copy: whether an Array `object` gets a buffer of its own (True, the
        default) or is returned as it is.
      ndmin: the minimum rank (leading 1s are added).
      order: 'K' or None only (arrays have no memory order to choose).
      device: where to place the array (a device or a sharding).

    Returns:
      A new Array.

    Raises:
      OlympusTypeError: object holds objects that are not numbers (strings).
      ArrayOrderError: order is not 'K' or None (a NotImplementedError, as
        JAX's).

    Example:
      >>> jnp.array([[1, 2], [3, 4]])
      Array([[1, 2], [3, 4]], dtype=int32)
    """
    _check_order("jnp.array", order)
    obj = object
    if hasattr(type(obj), "__jax_array__"):
        obj = obj.__jax_array__()
    if isinstance(obj, _key_array_type()) and dtype is None:
        return type(obj)(array(obj.data, copy=copy)) if copy else obj
    dtype = _check_dtype_arg(dtype)
    if isinstance(obj, (list, tuple)) and _contains_tracer_or_array(obj):
        out = (
            stack([array(x, dtype) for x in obj])
            if len(obj)
            else array(np.zeros(0), dtype)
        )
    elif is_array(obj):
        out = obj if dtype is None else lax.convert_element_type(obj, dtype)
        if copy and out is obj and isinstance(out, Array):
            out = out.copy()  # a buffer of its own, as JAX's (donation)
    else:
        value = _host_array(obj, dtype)
        # A bare Python number has no dtype of its own, so it stays weak (as in JAX).
        weak = dtype is None and type(obj) in (int, float, complex)
        out = to_device(value, aval_of(obj)) if weak else to_device(value)
        out = onto_mesh_in_scope(out, per_dimension=False)  # JAX: P()
    if ndmin > out.ndim:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return placed(out, device)


@accepts_out_sharding
def asarray(a, dtype=None, order: str | None = None, *, copy=None, device=None):
    """`a` as an Array, without copying when it already is one.

    Args:
      a: an array, scalar or nested sequence.
      dtype: the dtype (None: inferred).
      order: 'K' or None only (arrays have no memory order to choose).
      copy: None or False: reuse an existing Array; True: copy.
      device: where to place the array.

    Returns:
      An Array.

    Raises:
      TypeError: a holds objects that are not numbers.
      ArrayOrderError: order is not 'K' or None (a NotImplementedError, as
        JAX's).

    Example:
      >>> jnp.asarray((1.0, 2.0))
      Array([1., 2.], dtype=float32)
    """
    _check_order("jnp.asarray", order)
    obj = a
    if isinstance(obj, _key_array_type()) and dtype is None:
        return array(obj, copy=bool(copy))  # a key array stays one, as JAX's
    if (
        is_array(obj)
        and not copy
        and (dtype is None or aval_of(obj).dtype == _check_dtype_arg(dtype))
    ):
        return placed(obj, device)
    return placed(array(obj, dtype), device)


def accepts_device(fn):
    """`fn` with the Array API's keyword `device=` (where to put the result)."""

    @functools.wraps(fn)
    def with_device(*args, device=None, **kwargs):
        return placed(fn(*args, **kwargs), device)

    signature = inspect.signature(fn)
    device = inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None)
    with_device.__signature__ = signature.replace(
        parameters=[*signature.parameters.values(), device]
    )
    return with_device


def placed(x, device):
    """`x` on `device` (the Array API's `device=` of creation functions); a
    traced value stays where its program runs."""
    if device is None or not isinstance(x, Array):
        return x
    return x.to_device(device)


class ArrayLikeTypeError(TypeError):
    """A list or tuple given where jnp (as JAX) takes only arrays and scalars."""


def check_arraylike(name: str, *args) -> None:
    """Refuses Python sequences as operands, as JAX does: `jnp.sum([1, 2])`
    would silently build an array on every call (and trace a constant)."""
    for i, x in enumerate(args):
        if isinstance(x, (list, tuple)):
            raise _sequence_error(name, x, f" at position {i}")


def _sequence_error(name: str, x, where: str = "") -> ArrayLikeTypeError:
    return ArrayLikeTypeError(
        f"jnp.{name} requires ndarray or scalar arguments, got a "
        f"{type(x).__name__}{where}; convert it first with jnp.asarray(...)"
    )


def to_operand(x):
    """Arrays, tracers and Python scalars pass through; anything else becomes an Array."""
    if isinstance(x, np.generic):  # before Python scalars: np.float64 is a float
        return (
            x
            if x.dtype == dtypes.canonicalize_dtype(x.dtype)
            else x.astype(dtypes.canonicalize_dtype(x.dtype))
        )
    if isinstance(x, (Array, Tracer, *_PY_SCALARS)):
        return x
    if isinstance(x, (list, tuple)):
        raise _sequence_error(_public_caller(), x)
    if isinstance(x, _key_array_type()):
        x.__array__()  # raises KeyArrayTypeError: keys are not numbers
    if type(x) is np.ndarray:  # as JAX binds on it: the result's type has no mesh
        return to_device(_host_array(x))
    return array(x)


def placed_operand(x):
    """`to_operand(x)` for the jnp functions JAX runs unjitted (transpose,
    flip, atleast_3d): a NumPy array goes onto the `set_mesh` mesh first, as
    `jnp.asarray` puts it, so the result's type names the mesh as in JAX."""
    return array(x) if type(x) is np.ndarray else to_operand(x)


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


def _public_caller() -> str:
    """The name of the public jnp function that was given a sequence (the
    first caller outside this package's private helpers), for the error."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_name
        module = frame.f_globals.get("__name__", "")
        public = not name.startswith(("_", "<"))
        if module.startswith("olympus.numpy") and public:
            submodule = module.rsplit(".", 1)[-1]
            return f"{submodule}.{name}" if submodule in ("linalg", "fft") else name
        frame = frame.f_back
    return "function"


def result_type(*args) -> np.dtype:
    """The dtype that jnp operations promote the arguments to.

    `jnp.result_type`: the dtype that numpy-style ops promote `args` to.

    Args:
      *args: arrays, dtypes or Python scalars (weakly typed).

    Returns:
      A numpy dtype.

    Raises:
      TypeError: an argument is not a dtype, array or scalar.

    Example:
      >>> jnp.result_type(jnp.int32, 1.0)
      dtype('float32')
      >>> jnp.result_type(jnp.array([1], jnp.int8), jnp.uint8)
      dtype('int16')
    """
    return _promoted(args)[0]


def _dtype_and_weak(x):
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(x), False
    aval = aval_of(x)
    return aval.dtype, aval.weak_type


def _promoted(args):
    return dtypes.promote([_dtype_and_weak(x) for x in args])


_WEAK_PY_TYPE = {"b": bool, "i": int, "u": int, "f": float, "V": float, "c": complex}


def _convert(x, dtype, weak: bool):
    """`x` as `dtype`; a weak result keeps every operand weak, as JAX does."""
    if isinstance(x, _PY_SCALARS) and not isinstance(x, np.generic):
        # Python scalars convert on the host: to another Python number while the
        # result is weak (so it stays weak), else to a strong NumPy scalar.
        if weak:
            return _WEAK_PY_TYPE[dtype.kind](x)
        return np.asarray(x, dtype=dtype)[()]
    aval = aval_of(x)
    if aval.dtype == dtype and (
        weak or not aval.weak_type or not isinstance(x, Tracer)
    ):
        return x
    # A traced weak operand meeting a strong one is made strong explicitly, as
    # JAX does: the conversion's transpose gives its cotangent back the weak
    # type, so `grad(lambda x: x * jnp.float32(2))(3.0)` is weak like JAX's.
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak)


def promote_dtypes(*args):
    """The arguments converted to their common dtype.

    Converts operands to their common dtype (JAX's lattice, weak scalars).

    Args:
      *args: arrays or Python scalars.

    Returns:
      A list of arrays of the promoted dtype (Python scalars stay weakly typed).

    Example:
      >>> jnp.promote_dtypes(jnp.array([1]), 2.5)
      [Array([1.], dtype=float32, weak_type=True), 2.5]
    """
    if _one_strong_dtype(args):
        return list(args)
    args = [to_operand(x) for x in args]
    if len(args) < 2:
        return args
    dtype, weak = _promoted(args)
    return [_convert(x, dtype, weak) for x in args]


def promote_dtypes_inexact(*args):
    """Like promote_dtypes, then integers and bools become the default float."""
    args = promote_dtypes(*args)
    dtype, weak = _promoted(args)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float_dtype()
        return [_convert(x, dtype, weak) for x in args]
    return args


def broadcast_shapes(*shapes) -> tuple:
    """The shape that broadcasting gives the shapes together.

    NumPy broadcasting of shapes, with an error naming them when they clash.

    Args:
      *shapes: shapes (tuples of ints).

    Returns:
      A tuple of ints.

    Raises:
      IncompatibleShapesError: the shapes do not broadcast (a ValueError and
        TypeError).

    Example:
      >>> jnp.broadcast_shapes((2, 1), (3,))
      (2, 3)
    """
    try:
        return _broadcast_shapes_cached(shapes)
    except TypeError:  # a shape given as a list
        return _broadcast_shapes(shapes)


@functools.lru_cache(maxsize=1024)
def _broadcast_shapes_cached(shapes: tuple) -> tuple:
    return _broadcast_shapes(shapes)


def _broadcast_shapes(shapes) -> tuple:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise IncompatibleShapesError(
                f"shapes {', '.join(map(str, shapes))} cannot be broadcast together"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


@accepts_out_sharding
def broadcast_to(array, shape):
    """`array` broadcast to `shape`.

    NumPy's broadcasting rules: trailing dimensions must match or be 1.

    Args:
      array: an array.
      shape: the target shape.

    Returns:
      An array of `shape`.

    Raises:
      IncompatibleShapesError: array does not broadcast to shape.

    Example:
      >>> jnp.broadcast_to(jnp.array([1, 2]), (2, 2))
      Array([[1, 2], [1, 2]], dtype=int32)
    """
    x = to_operand(array)
    shape = integer_sizes(
        "jnp.broadcast_to",
        shape if isinstance(shape, (tuple, list)) else (shape,),
    )
    aval = aval_of(x)
    if aval.shape == shape:
        return x
    if broadcast_shapes(aval.shape, shape) != shape:
        raise ValueError(f"cannot broadcast an array of shape {aval.shape} to {shape}")
    kept_shape, dims = _broadcast_plan(aval.shape, shape)
    if kept_shape is not None:  # size-1 axes that grow are dropped, then re-broadcast
        x = lax.reshape(x, kept_shape)
    return lax.broadcast_in_dim(x, shape, dims)


@functools.lru_cache(maxsize=1024)
def _broadcast_plan(from_shape: tuple, shape: tuple) -> tuple:
    """(the shape to reshape to first, or None; broadcast_in_dim's dimensions)."""
    lead = len(shape) - len(from_shape)
    keep = [i for i, d in enumerate(from_shape) if d == shape[lead + i]]
    kept_shape = None if len(keep) == len(from_shape) else [from_shape[i] for i in keep]
    return kept_shape, tuple(lead + i for i in keep)


def broadcast_operands(*args):
    """Broadcasts array operands to one shape; rank-0 operands stay scalars."""
    shapes = [aval_of(x).shape for x in args]
    shape = broadcast_shapes(*shapes)
    return [
        x if s == shape or s == () else broadcast_to(x, shape)
        for x, s in zip(args, shapes)
    ]


def prepare(*args, inexact: bool = False):
    """Promote, then broadcast: what every numpy binary function does first."""
    if _already_agree(args, inexact):
        return list(args)
    args = promote_dtypes_inexact(*args) if inexact else promote_dtypes(*args)
    return broadcast_operands(*args)


def _one_strong_dtype(args: tuple) -> bool:
    """Whether `promote_dtypes` would return `args` unchanged: Arrays (or
    tracers) of one dtype, none weakly typed (skips the promotion lattice)."""
    dtype = None
    for x in args:
        if type(x) is not Array and not isinstance(x, Tracer):
            return False
        aval = x.aval
        if aval.weak_type or (dtype is not None and aval.dtype != dtype):
            return False
        dtype = aval.dtype
    return dtype is not None


def _already_agree(args: tuple, inexact: bool) -> bool:
    """Whether `prepare` would return `args` unchanged: arrays (or tracers) of
    one strong aval, inexact when asked. The usual case, so it skips
    promotion and broadcasting (eager op latency is measured)."""
    aval = None
    for x in args:
        if type(x) is not Array and not isinstance(x, Tracer):
            return False
        if aval is None:
            aval = x.aval
        elif x.aval is not aval and x.aval != aval:
            return False
    if aval is None or aval.weak_type:
        return False
    return not inexact or aval.dtype in INEXACT_DTYPES


INEXACT_DTYPES = frozenset(
    np.dtype(d)
    for d in (
        dtypes.float16,
        dtypes.bfloat16,
        dtypes.float32,
        dtypes.float64,
        dtypes.complex64,
        dtypes.complex128,
        *dtypes.float8_dtypes,
    )
)


def normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(
            f"axis {axis} is out of bounds for an array of dimension {ndim}"
        )
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(normalize_axis(int(a), ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return out


def stack(arrays, axis: int = 0, out=None, dtype=None):
    """Joins arrays of one shape along a new axis.

    Args:
      arrays: a sequence of arrays of one shape.
      axis: where the new axis goes in the result.
      out: unsupported (must be None); arrays are immutable.
      dtype: the result's dtype (None: the operands' promoted dtype).

    Returns:
      An array with one more dimension, of size len(arrays) at `axis`.

    Raises:
      ValueError: the shapes differ, `arrays` is empty, or out is given.

    Example:
      >>> jnp.stack([jnp.zeros(2), jnp.ones(2)], axis=1)
      Array([[0., 1.], [0., 1.]], dtype=float32)
    """
    if out is not None:
        raise ValueError("jnp.stack: out is unsupported (arrays are immutable)")
    if not len(arrays):
        raise ValueError("need at least one array to stack")
    arrays = [to_operand(a) if dtype is None else asarray(a, dtype) for a in arrays]
    shape = aval_of(arrays[0]).shape
    for a in arrays:
        if aval_of(a).shape != shape:
            raise ValueError(
                f"all input arrays must have the same shape, got {shape} and {aval_of(a).shape}"
            )
    axis = normalize_axis(axis, len(shape) + 1)
    expanded = [lax.expand_dims(a, (axis,)) for a in arrays]
    if len(expanded) == 1:
        return expanded[0]
    return lax.concatenate(promote_dtypes(*expanded), axis)


def as_arrays(*args, inexact: bool = False) -> list:
    """`prepare`d operands as arrays: Python scalars become weakly typed Arrays,
    so lax functions that need an aval can take every operand."""
    return [x if is_array(x) else array(x) for x in prepare(*args, inexact=inexact)]


def scalar_like(x, value):
    """`value` as a NumPy scalar of `x`'s dtype (a constant operand for lax)."""
    return np.asarray(value, aval_of(x).dtype)[()]


def require_real(name: str, x) -> None:
    """For functions of the real line only (rounding toward an integer, hypot):
    NumPy and JAX raise on complex input too, and returning the input unchanged
    or a formula's complex value would hide the mistake."""
    if dtypes.is_complex(aval_of(x).dtype):
        raise OlympusTypeError(
            f"jnp.{name} is not defined for complex input ({aval_of(x).str_short()})"
        )


def concrete_nonzero(a) -> tuple:
    """`jnp.nonzero(a)` without `size=`: computed on the host, so `a` must be
    concrete (the result's size depends on its values)."""
    a = to_operand(a)
    if not isinstance(a, Tracer):
        int_dtype = dtypes.default_int_dtype()
        return tuple(to_operand(i.astype(int_dtype)) for i in np.nonzero(np.asarray(a)))
    raise ValueError(
        "jnp.nonzero of a traced array needs a static size= (its result size would "
        "depend on the values); pass size= and optionally fill_value="
    )


# ---- float bit layouts (signbit in ufuncs; frexp, ldexp, ... in float_bits) -----
UNSIGNED_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SIGNED_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_LAYOUT_DTYPES = tuple(
    np.dtype(d) for d in (np.float16, dtypes.bfloat16, np.float32, np.float64)
)


class FloatLayout:
    """Bit layout of a float dtype: mantissa width, exponent bias, integer views."""

    def __init__(self, dtype: np.dtype):
        info = ml_dtypes.finfo(dtype)
        self.dtype = dtype
        self.nmant = int(info.nmant)
        self.bias = int(info.maxexp) - 1
        self.exponent_mask = 2 * int(info.maxexp) - 1
        self.uint = np.dtype(UNSIGNED_OF_SIZE[dtype.itemsize])
        self.int = np.dtype(_SIGNED_OF_SIZE[dtype.itemsize])
        self.smallest_normal = np.asarray(info.smallest_normal, dtype)[()]

    def uconst(self, value: int):
        return np.asarray(value, self.uint)[()]


def float_layout(name: str, x) -> FloatLayout:
    """The layout of `x`'s dtype; an error naming `jnp.<name>` for other dtypes."""
    dtype = aval_of(x).dtype
    if dtype not in _LAYOUT_DTYPES:
        raise OlympusTypeError(
            f"jnp.{name} needs a real float16/bfloat16/float32/float64 operand, "
            f"got {dtypes.short_name(dtype)}"
        )
    return FloatLayout(dtype)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((promote_dtypes, astype), RAISES_X)
