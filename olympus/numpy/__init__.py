"""olympus.numpy: NumPy's API on olympus arrays, built only on olympus.lax.

The modules are layered, each importing only the ones below it
(tests/test_numpy_layers.py keeps it so): core (conversion, promotion,
broadcasting, stack) < ufuncs and the other elementwise modules < indexing
(x[idx], x.at[idx], take) < creation, shaping, rearranging, diagonals <
reductions (sum, ..., nonzero) < sorting, statistics, setops, linalg and the
rest < methods (the operators of Array and tracers).
"""

import math as _math

import ml_dtypes as _ml_dtypes
import numpy as _np

from olympus.ir import dtypes as _dtypes
from olympus import prng as _prng
from olympus.backends.xla.array import PublicArray as _PublicArray
from olympus.numpy.creation import *  # noqa: F401,F403
from olympus.numpy.shaping import *  # noqa: F401,F403
from olympus.numpy.rearranging import *  # noqa: F401,F403
from olympus.numpy.diagonals import *  # noqa: F401,F403
from olympus.numpy.core import normalize_axis as _normalize_axis
from olympus.numpy.core import (  # noqa: F401
    array,
    asarray,
    astype,
    broadcast_shapes,
    broadcast_to,
    promote_dtypes,
    result_type,
    stack,
)
from olympus.numpy.reductions import *  # noqa: F401,F403
from olympus.numpy.einsum import einsum  # noqa: F401
from olympus.numpy.indexing import take  # noqa: F401
from olympus.numpy.sorting import *  # noqa: F401,F403
from olympus.numpy.signal import convolve, correlate  # noqa: F401
from olympus.numpy.setops import *  # noqa: F401,F403
from olympus.numpy.statistics import *  # noqa: F401,F403
from olympus.numpy.polynomial import *  # noqa: F401,F403
from olympus.numpy.products import *  # noqa: F401,F403
from olympus.numpy.padding import pad  # noqa: F401
from olympus.numpy.functional import *  # noqa: F401,F403
from olympus.numpy.reductions import all, any, max, min, sum  # noqa: F401,A004
from olympus.numpy.ufuncs import *  # noqa: F401,F403
from olympus.numpy.ufuncs import abs, divmod, round  # noqa: F401,A004
from olympus.numpy.reductions import where  # noqa: F401  (with size=, fill_value=)
from olympus.numpy.float_math import *  # noqa: F401,F403
from olympus.numpy.comparisons import *  # noqa: F401,F403
from olympus.numpy.float_bits import *  # noqa: F401,F403
from olympus.numpy.integer_math import *  # noqa: F401,F403
from olympus.numpy.nanfunctions import *  # noqa: F401,F403
from olympus.numpy.array_api import *  # noqa: F401,F403
from olympus.numpy.construction import *  # noqa: F401,F403
from olympus.numpy.joining import *  # noqa: F401,F403
from olympus.numpy.windows import *  # noqa: F401,F403
from olympus.numpy.index_tricks import *  # noqa: F401,F403
from olympus.numpy.packing import *  # noqa: F401,F403
from olympus.numpy.ufunc_objects import frompyfunc, jax_ufuncs as _jax_ufuncs, ufunc  # noqa: F401,E501
from numpy import (  # noqa: F401  (host-side: NumPy's own, as in JAX)
    array_repr,
    array_str,
    get_printoptions,
    object_,
    printoptions,
    save,
    savez,
    set_printoptions,
)
from numpy.exceptions import ComplexWarning  # noqa: F401
from olympus.numpy import methods as _methods  # noqa: F401  (installs operators)

globals().update(_jax_ufuncs())  # add, multiply, ...: ufunc objects, as JAX's


class _ArrayType(type):
    # jnp.ndarray is olympus.Array, as in JAX: typed PRNG key arrays included
    def __instancecheck__(cls, instance):
        return isinstance(instance, _PublicArray)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, _PublicArray)


class ndarray(metaclass=_ArrayType):
    """`isinstance(x, jnp.ndarray)` holds for Arrays and for traced arrays alike,
    so user code that checks for arrays works unchanged under jit and grad."""


class _ScalarType(type):
    """A dtype name that also builds arrays: `jnp.float32(3)` is an f32[] Array.

    It stands for NumPy's scalar type everywhere a dtype is expected
    (`np.dtype(jnp.float32)`, `x.dtype == jnp.float32`, `isinstance`).
    """

    def __call__(cls, value):
        return asarray(value, dtype=cls.dtype)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"olympus.numpy.{cls.__name__}"


def _scalar_type(np_type) -> type:
    dtype = _np.dtype(np_type)
    return _ScalarType(dtype.name, (), {"dtype": dtype})


bool_ = _scalar_type(_np.bool_)
int8, int16, int32, int64 = map(
    _scalar_type, (_np.int8, _np.int16, _np.int32, _np.int64)
)
uint8, uint16, uint32, uint64 = map(
    _scalar_type, (_np.uint8, _np.uint16, _np.uint32, _np.uint64)
)
float16, float32, float64 = map(_scalar_type, (_np.float16, _np.float32, _np.float64))
bfloat16 = _scalar_type(_dtypes.bfloat16)
_float8 = [_scalar_type(d) for d in _dtypes.float8_dtypes]  # in ir.dtypes' order
float8_e4m3fn, float8_e5m2, float8_e4m3b11fnuz, float8_e4m3fnuz = _float8[:4]
float8_e5m2fnuz, float8_e3m4, float8_e4m3, float8_e8m0fnu = _float8[4:]
complex64, complex128 = map(_scalar_type, (_np.complex64, _np.complex128))
float_, int_, complex_ = float64, int64, complex128
dtype = _np.dtype
inexact, floating, integer, number = _np.inexact, _np.floating, _np.integer, _np.number
signedinteger, unsignedinteger, complexfloating = (
    _np.signedinteger,
    _np.unsignedinteger,
    _np.complexfloating,
)
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
promote_types = _dtypes.promote_types
iinfo = _np.iinfo
# NumPy's C-style names, at the widths NumPy gives them on 64-bit Linux.
half, single, double = float16, float32, float64
csingle, cdouble = complex64, complex128
byte, short, intc, long, longlong, intp = int8, int16, int32, int64, int64, int64
ubyte, ushort, uintc, ulong, ulonglong, uintp = (
    uint8,
    uint16,
    uint32,
    uint64,
    uint64,
    uint64,
)
uint = uint64
generic, character, flexible = _np.generic, _np.character, _np.flexible


def _as_numpy_type(t):
    return t.dtype.type if isinstance(t, _ScalarType) else t


def _concrete_dtype(t):
    try:
        return _np.dtype(t)
    except TypeError:  # abstract types such as np.floating
        return None


def issubdtype(arg1, arg2) -> bool:
    """Whether dtype arg1 is arg2 or below it in NumPy's hierarchy.

    NumPy's issubdtype, knowing that bfloat16 and float8 types are floating and
    that key dtypes (`key<fry>`) are `olympus.dtypes.prng_key` and nothing else.

    Args:
      arg1: a dtype.
      arg2: a dtype or abstract type such as jnp.floating.

    Returns:
      A Python bool.

    Raises:
      TypeError: an argument is not a dtype.

    Example:
      >>> jnp.issubdtype(jnp.float32, jnp.floating)
      True
      >>> jnp.issubdtype(jnp.int32, jnp.floating)
      False
    """
    if isinstance(arg1, _prng.KeyDtype) or arg1 is _prng.prng_key:
        return arg2 is _prng.prng_key or arg2 == arg1
    if isinstance(arg2, _prng.KeyDtype) or arg2 is _prng.prng_key:
        return False
    arg1, arg2 = _as_numpy_type(arg1), _as_numpy_type(arg2)
    d1 = _concrete_dtype(arg1)
    if d1 is not None and d1 in _dtypes.ml_dtypes_floats:
        if arg2 in (_np.floating, _np.inexact, _np.number, _np.generic):
            return True
        return _concrete_dtype(arg2) == d1
    return _np.issubdtype(arg1, arg2)


def finfo(dtype):
    """The machine limits of a floating dtype.

    Machine limits of a float type, bfloat16 and float8 included (ml_dtypes).

    Args:
      dtype: a floating or complex dtype (bfloat16 and the float8 types
        included).

    Returns:
      An object with bits, eps, max, min, tiny, resolution, ... of the dtype.

    Raises:
      ValueError: dtype is not an inexact dtype.

    Example:
      >>> jnp.finfo(jnp.float32).eps
      np.float32(1.1920929e-07)
      >>> jnp.finfo(jnp.bfloat16).bits
      16
    """
    return _ml_dtypes.finfo(_as_numpy_type(dtype))


def shape(a):
    """The shape of `a`.

    Args:
      a: an array or scalar.

    Returns:
      A tuple of ints.

    Raises:
      Nothing: of its own for valid array or scalar input.

    Example:
      >>> jnp.shape(jnp.ones((2, 3)))
      (2, 3)
    """
    return asarray(a).shape


def ndim(a):
    """The number of dimensions of `a`.

    Args:
      a: an array or scalar.

    Returns:
      An int.

    Raises:
      Nothing: of its own for valid array or scalar input.

    Example:
      >>> jnp.ndim(jnp.ones((2, 3)))
      2
      >>> jnp.ndim(1.0)
      0
    """
    return asarray(a).ndim


def size(a, axis=None):
    """The number of elements of `a`, or along `axis`.

    The number of elements, in all of `a` or along `axis` (an int or a tuple).

    Args:
      a: an array or scalar.
      axis: an axis or tuple of axes (None: all of a).

    Returns:
      An int.

    Raises:
      ValueError: axis is out of range for the array's rank.

    Example:
      >>> jnp.size(jnp.ones((2, 3)))
      6
      >>> jnp.size(jnp.ones((2, 3)), axis=1)
      3
    """
    shape = asarray(a).shape
    if axis is None:
        return _math.prod(shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return _math.prod(shape[_normalize_axis(ax, len(shape))] for ax in axes)


bool = bool_  # noqa: A001  (NumPy 2's name; defined last so nothing above sees it)
from olympus.numpy import linalg  # noqa: E402,F401  (olympus.numpy.linalg)
from olympus.numpy import fft  # noqa: E402,F401  (olympus.numpy.fft)

# JAX defines these on typed PRNG key arrays too; keys go to olympus.prng's
stack = _prng.joining_keys(stack, _prng.stack)
concatenate = _prng.joining_keys(concatenate, _prng.concatenate)  # noqa: F405
where = _prng.selecting_keys(where, _prng.where)
array, asarray = _prng.arrays_of_keys(array), _prng.arrays_of_keys(asarray)
array_equal = _prng.comparing_keys(array_equal, _prng.words_equal(array_equal))  # noqa: F405
equal = _prng.comparing_keys(equal, _prng.PRNGKeyArray.__eq__)  # noqa: F405
not_equal = _prng.comparing_keys(not_equal, _prng.PRNGKeyArray.__ne__)  # noqa: F405
select = _prng.moving_keys(select, 1, 2, "choicelist", "default")  # noqa: F405
for _name in (
    "reshape ravel broadcast_to expand_dims squeeze transpose swapaxes moveaxis take "
    "take_along_axis tile repeat flip fliplr flipud roll rot90 hstack vstack dstack "
    "column_stack split array_split copy"
).split():
    globals()[_name] = _prng.moving_keys(globals()[_name], 0, "a", "array")
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):  # (*arrays)
    globals()[_name] = _prng.moving_keys(globals()[_name], *range(16))
for _name in ("zeros_like", "ones_like", "empty_like", "full_like"):
    globals()[_name] = _prng.words_like(globals()[_name])
del _name
