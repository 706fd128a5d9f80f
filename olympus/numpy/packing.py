"""Bits packed into bytes, and arrays from bytes, text and files.

`packbits` / `unpackbits` are array programs (they run under jit, vmap and
on traced values); `frombuffer`, `fromstring`, `fromiter` and `load` read
host data with NumPy and return an Array, as JAX's do.
"""

from __future__ import annotations

import numpy as np

from olympus.numpy import ufuncs
from olympus.numpy.arrays import moveaxis, reshape
from olympus.numpy.core import asarray
from olympus.numpy.padding import pad
from olympus.numpy.reductions import sum as _sum

__all__ = ["frombuffer", "fromiter", "fromstring", "load", "packbits", "unpackbits"]

_BIG = np.array([128, 64, 32, 16, 8, 4, 2, 1], np.uint8)  # bit weights, first bit high


def _bitorder(bitorder: str, name: str) -> np.ndarray:
    if bitorder not in ("big", "little"):
        raise ValueError(
            f"jnp.{name}: bitorder must be 'big' or 'little', got {bitorder!r}"
        )
    return _BIG if bitorder == "big" else _BIG[::-1].copy()


def packbits(a, axis: int | None = None, bitorder: str = "big"):
    """Each group of 8 values along `axis` (the flattened array if None),
    nonzero or not, as the bits of one uint8; the last group is padded with 0.

    >>> jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 1, 1], dtype=jnp.uint8))
    Array([177, 128], dtype=uint8)
    """
    a = asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError(f"jnp.packbits: expected booleans or integers, got {a.dtype}")
    weights = _bitorder(bitorder, "packbits")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    bits = moveaxis(ufuncs.not_equal(a, 0).astype(np.uint8), axis, -1)
    n = bits.shape[-1]
    padded = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, -n % 8)])
    groups = reshape(padded, (*padded.shape[:-1], -1, 8))
    packed = _sum(groups * weights, axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(
    a, axis: int | None = None, count: int | None = None, bitorder: str = "big"
):
    """The bits of uint8 values as 0/1 uint8 values, 8 per byte along `axis`
    (the flattened array if None); `count` keeps that many (negative: drops).

    >>> jnp.unpackbits(jnp.array([177], dtype=jnp.uint8), bitorder="little")
    Array([1, 0, 0, 0, 1, 1, 0, 1], dtype=uint8)
    """
    a = asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"jnp.unpackbits: expected uint8 values, got {a.dtype}")
    weights = _bitorder(bitorder, "unpackbits")
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    moved = moveaxis(a, axis, -1)
    bits = ufuncs.not_equal(moved[..., None] & weights, 0).astype(np.uint8)
    bits = reshape(bits, (*moved.shape[:-1], -1))
    if count is not None:
        bits = bits[..., :count] if count >= 0 else bits[..., : bits.shape[-1] + count]
    return moveaxis(bits, -1, axis)


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """The bytes of `buffer` read as a 1-d array of `dtype` (NumPy's reading).

    >>> jnp.frombuffer(b"\\x01\\x02\\x03", dtype=jnp.uint8)
    Array([1, 2, 3], dtype=uint8)
    """
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype=float, count: int = -1, *, sep: str):
    """Numbers written in `string`, separated by `sep`, as a 1-d array.

    >>> jnp.fromstring("1 2 3", dtype=jnp.int32, sep=" ")
    Array([1, 2, 3], dtype=int32)
    """
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable, dtype, count: int = -1):
    """The values of a Python iterable as a 1-d array (read once, on the
    host: inside a traced function it is read at trace time).

    >>> jnp.fromiter(range(3), dtype=jnp.float32)
    Array([0., 1., 2.], dtype=float32)
    """
    return asarray(np.fromiter(iterable, dtype=dtype, count=count))


def load(file, *args, **kwargs):
    """`numpy.load`, with a single array returned as an Array (`.npz` files
    and pickles come back as NumPy gives them)."""
    loaded = np.load(file, *args, **kwargs)
    return asarray(loaded) if isinstance(loaded, np.ndarray) else loaded
