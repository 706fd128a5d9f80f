"""`olympus.Array`: an array whose data lives on a device.

It wraps one PjRt buffer today; the buffer list and `sharding` leave room for
an array spread over several devices later. Operators come from olympus.numpy.
"""

from __future__ import annotations

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.backends.xla import client
from olympus.tracer.core import aval_of


class Array:
    """A device-resident array; `np.asarray(x)` copies it to the host."""

    __slots__ = ("aval", "_buf", "_npy", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buf, aval: ShapedArray):
        self._buf = buf
        self.aval = aval
        self._npy = None

    # ---- properties --------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    def devices(self) -> set:
        return {client.default_device()}

    @property
    def sharding(self):
        return self._buf.sharding if hasattr(self._buf, "sharding") else self._buf._sharding

    # ---- host conversion ---------------------------------------------------
    def _value(self) -> np.ndarray:
        if self._buf is None:
            raise RuntimeError(
                "this Array was donated to a jitted computation and deleted"
            )
        if self._npy is None:
            # client.host_array handles bf16/fp8, which the buffer protocol
            # lacks, without jaxlib's host-copy methods (they import jax).
            npy = client.host_array(self._buf, self.aval)
            npy.flags.writeable = False
            self._npy = npy
        return self._npy

    def __array__(self, dtype=None, copy=None):
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def block_until_ready(self) -> Array:
        self._buf.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return self._buf is None

    def delete(self) -> None:
        if self._buf is not None:
            self._buf.delete()
            self._buf = None

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def copy(self) -> Array:
        return self

    def __bool__(self) -> bool:
        return bool(self._value())

    def __int__(self) -> int:
        return int(self._value())

    def __float__(self) -> float:
        return float(self._value())

    def __complex__(self) -> complex:
        return complex(self._value())

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self._value())

    def __hash__(self):
        raise TypeError("unhashable type: 'Array'")

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._value()[()], spec)
        return format(str(self), spec)

    def __str__(self) -> str:
        return str(self._value())

    def __repr__(self) -> str:
        value = self._value()
        body = np.array2string(value, prefix="Array(", separator=", ")
        weak = ", weak_type=True" if self.aval.weak_type else ""
        # "[]" alone hides the shape of an empty array, so NumPy (and we) spell it out.
        shape = f", shape={value.shape}" if value.size == 0 and value.shape != (0,) else ""
        return f"Array({body}{shape}, dtype={value.dtype.name}{weak})"

    def _repr_html_(self) -> str:
        """A small table of the values, for notebooks (olympus.ir.html)."""
        from olympus.ir.html import array_html

        return array_html(self._value(), self.aval.str_short())

    def __reduce__(self):
        return (to_device, (self._value(),))


def to_device(x, aval: ShapedArray | None = None) -> Array:
    """An Array holding `x` (NumPy array or Python/NumPy scalar) on the device."""
    if isinstance(x, Array):
        return x
    aval = aval or aval_of(x)
    return Array(client.host_to_device(np.asarray(x, dtype=aval.dtype), aval), aval)
