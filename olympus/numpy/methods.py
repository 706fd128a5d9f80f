"""Operators and methods shared by `olympus.Array` and tracers.

Both classes get them here, so `x + 1`, `x @ w`, `x[0]`, `x.sum()` behave the
same eagerly, under jit, and under every transformation.
"""

from __future__ import annotations

import sys

import numpy as np

from olympus.backends.xla.array import Array
from olympus.numpy import (
    core,
    diagonals,
    indexing,
    rearranging,
    reductions,
    shaping,
    ufuncs,
)
from olympus.tracer.core import Tracer, user_source_info
from olympus.tracer.tracebacks import filter_exception


def _jnp():
    """olympus.numpy, loaded by the time a method is called (sorting and
    joining import this module's package)."""
    return sys.modules["olympus.numpy"]


def _swap(fn):
    return lambda self, other: fn(other, self)


# What a binary operator takes, as JAX's: anything else gets NotImplemented, so
# Python asks the other operand (equinox's `x ** ω` builds a tree-map wrapper).
_OPERAND_TYPES = (bool, int, float, complex, np.ndarray, np.generic, Array, Tracer)


def _defer_unknown(fn):
    """Returns NotImplemented for operands we do not understand (Python protocol)."""

    def op(self, other):
        if not isinstance(other, _OPERAND_TYPES) and not hasattr(
            other, "__jax_array__"
        ):
            return NotImplemented
        try:
            return fn(self, other)
        except Exception as error:  # the user's frames only (tracer/tracebacks.py)
            filter_exception(error)
            raise

    return op


def _setitem(self, idx, value):
    raise TypeError(
        "olympus arrays are immutable: x[idx] = y cannot change x in place "
        f"(x is {self.aval.str_short()}). Write x = x.at[idx].set(y) instead "
        "(also .add, .multiply, .min, .max), or build the new value with "
        f"jnp.where{_at_user_line()}"
    )


def _at_user_line() -> str:
    info = user_source_info()
    return f"\n  at {info}" if info is not None else ""


def _len(self) -> int:
    if not self.aval.shape:
        raise TypeError("len() of unsized object (a 0-d array)")
    return self.aval.shape[0]


def _iter(self):
    if not self.aval.shape:
        raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.aval.shape[0]))


def _reshape_method(self, *shape, order="C"):
    shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
    return shaping.reshape(self, shape, order)


def _transpose_method(self, *axes):
    axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
    return shaping.transpose(self, axes or None)


def _array_namespace(self, /, *, api_version=None):
    """olympus.numpy, the Array API namespace of olympus arrays."""
    if api_version not in (None, "2021.12", "2022.12", "2023.12"):
        raise ValueError(
            f"olympus.numpy implements Array API versions up to 2023.12, "
            f"not {api_version!r}"
        )
    return sys.modules[__package__]


_OPERATORS = {
    "__add__": ufuncs.add,
    "__sub__": ufuncs.subtract,
    "__mul__": ufuncs.multiply,
    "__truediv__": ufuncs.divide,
    "__floordiv__": ufuncs.floor_divide,
    "__mod__": ufuncs.remainder,
    "__pow__": ufuncs.power,
    "__matmul__": reductions.matmul,
    "__and__": ufuncs.bitwise_and,
    "__or__": ufuncs.bitwise_or,
    "__xor__": ufuncs.bitwise_xor,
    "__divmod__": ufuncs.divmod,
    "__lshift__": ufuncs.left_shift,
    "__rshift__": ufuncs.right_shift,
    "__lt__": ufuncs.less,
    "__le__": ufuncs.less_equal,
    "__gt__": ufuncs.greater,
    "__ge__": ufuncs.greater_equal,
    "__eq__": ufuncs.equal,
    "__ne__": ufuncs.not_equal,
}
_REFLECTED = {
    "__radd__": ufuncs.add,
    "__rsub__": ufuncs.subtract,
    "__rmul__": ufuncs.multiply,
    "__rtruediv__": ufuncs.divide,
    "__rfloordiv__": ufuncs.floor_divide,
    "__rmod__": ufuncs.remainder,
    "__rpow__": ufuncs.power,
    "__rmatmul__": reductions.matmul,
    "__rand__": ufuncs.bitwise_and,
    "__ror__": ufuncs.bitwise_or,
    "__rxor__": ufuncs.bitwise_xor,
    "__rdivmod__": ufuncs.divmod,
    "__rlshift__": ufuncs.left_shift,
    "__rrshift__": ufuncs.right_shift,
}
_UNARY = {
    "__neg__": ufuncs.negative,
    "__pos__": ufuncs.positive,
    "__abs__": ufuncs.absolute,
    "__invert__": ufuncs.invert,
}
_METHODS = {
    "__len__": _len,
    "__iter__": _iter,
    "__array_namespace__": _array_namespace,
    "__getitem__": indexing.getitem,
    "__setitem__": _setitem,
    "sum": reductions.sum,
    "prod": reductions.prod,
    "mean": reductions.mean,
    "max": reductions.max,
    "min": reductions.min,
    "var": reductions.var,
    "std": reductions.std,
    "all": reductions.all,
    "any": reductions.any,
    "argmax": reductions.argmax,
    "argmin": reductions.argmin,
    "dot": reductions.dot,
    "reshape": _reshape_method,
    "transpose": _transpose_method,
    "ravel": shaping.ravel,
    "flatten": shaping.ravel,
    "squeeze": shaping.squeeze,
    "swapaxes": shaping.swapaxes,
    "astype": core.astype,
    "clip": ufuncs.clip,
    "round": ufuncs.round,
    "conj": ufuncs.conjugate,
    "conjugate": ufuncs.conjugate,
    "__round__": lambda x, ndigits=None: ufuncs.round(x, ndigits or 0),
    "cumsum": reductions.cumsum,
    "cumprod": reductions.cumprod,
    "take": indexing.take,
    "diagonal": diagonals.diagonal,
    "trace": reductions.trace,
    "repeat": rearranging.repeat,
    "sort": lambda self, *a, **k: _jnp().sort(self, *a, **k),
    "argsort": lambda self, *a, **k: _jnp().argsort(self, *a, **k),
    "argpartition": lambda self, *a, **k: _jnp().argpartition(self, *a, **k),
    "searchsorted": lambda self, *a, **k: _jnp().searchsorted(self, *a, **k),
    "nonzero": lambda self, **k: _jnp().nonzero(self, **k),
    "ptp": lambda self, *a, **k: _jnp().ptp(self, *a, **k),
    "choose": lambda self, *a, **k: _jnp().choose(self, *a, **k),
    # a.compress(condition) is jnp.compress(condition, a), as NumPy's method
    "compress": lambda self, condition, *a, **k: _jnp().compress(
        condition, self, *a, **k
    ),
}
_PROPERTIES = {
    "itemsize": lambda x: x.aval.dtype.itemsize,
    "T": shaping.transpose,
    "real": ufuncs.real,
    "imag": ufuncs.imag,
    "mT": lambda x: shaping.swapaxes(x, -1, -2),
    "at": indexing.IndexUpdateHelper,
}


def install(cls: type) -> None:
    for name, fn in _OPERATORS.items():
        setattr(cls, name, _defer_unknown(fn))
    for name, fn in _REFLECTED.items():
        setattr(cls, name, _defer_unknown(_swap(fn)))
    for name, fn in {**_UNARY, **_METHODS}.items():
        setattr(cls, name, fn)
    for name, fn in _PROPERTIES.items():
        setattr(cls, name, property(fn))


for _cls in (Array, Tracer):
    install(_cls)


def _tracer_copy(self):
    """`x.copy()` of a traced value: the value itself (a compiled program's
    outputs are new buffers anyway); Array.copy makes a new buffer."""
    return self


Tracer.copy = _tracer_copy
