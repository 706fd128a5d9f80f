"""Bits packed into bytes, and arrays from bytes, text and files.

`packbits` / `unpackbits` are array programs (they run under jit, vmap and
on traced values); `frombuffer`, `fromstring`, `fromiter` and `load` read
host data with NumPy and return an Array, as JAX's do.
"""

from __future__ import annotations

import numpy as np

from olympus.numpy import ufuncs
from olympus.numpy.shaping import moveaxis, reshape
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
    """Groups of 8 bits packed into uint8 bytes.

    Each group of 8 values along `axis` (the flattened array if None), nonzero
    or not, as the bits of one uint8; the last group is padded with 0.

    Args:
      a: an integer or boolean array (nonzero is a 1 bit).
      axis: the axis to pack (None: the flattened array).
      bitorder: 'big' (default) or 'little': the bit order within each byte.

    Returns:
      A uint8 array, axis shortened to ceil(n / 8).

    Raises:
      ValueError: axis is out of range for the array's rank.

    Example:
      >>> jnp.packbits(jnp.array([1, 0, 1, 0, 0, 0, 0, 0]))
      Array([160], dtype=uint8)
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
    """The bits of uint8 values as 0/1 uint8 values.

    The bits of uint8 values as 0/1 uint8 values, 8 per byte along `axis` (the
    flattened array if None); `count` keeps that many (negative: drops).

    Args:
      a: a uint8 array.
      axis: the axis to unpack (None: the flattened array).
      count: how many bits to keep (None: all).
      bitorder: 'big' (default) or 'little': the bit order within each byte.

    Returns:
      A uint8 array, axis 8 times longer (or count).

    Raises:
      ValueError: axis is out of range for the array's rank.

    Example:
      >>> jnp.unpackbits(jnp.array([160], dtype=jnp.uint8))
      Array([1, 0, 1, 0, 0, 0, 0, 0], dtype=uint8)
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
    """The bytes of `buffer` read as a 1-d array of `dtype`.

    Args:
      buffer: a bytes-like object.
      dtype: the element dtype.
      count: how many items to read (-1: all).
      offset: the byte offset to start at.

    Returns:
      A 1-D array.

    Raises:
      ValueError: the buffer's size does not fit the dtype, count and offset.

    Example:
      >>> jnp.frombuffer(bytes([1, 2]), dtype=jnp.uint8)
      Array([1, 2], dtype=uint8)
    """
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype=float, count: int = -1, *, sep: str):
    """Numbers written in a string, as a 1-d array.

    Numbers written in `string`, separated by `sep`, as a 1-d array.

    Args:
      string: the text.
      dtype: the element dtype.
      count: the number of items (-1: all).
      sep: the separator (required).

    Returns:
      A 1-D array.

    Raises:
      ValueError: the text does not parse as numbers.

    Example:
      >>> jnp.fromstring('1 2 3', dtype=int, sep=' ')
      Array([1, 2, 3], dtype=int32)
    """
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable, dtype, count: int = -1):
    """The values of a Python iterable as a 1-d array.

    The values of a Python iterable as a 1-d array (read once, on the host:
    inside a traced function it is read at trace time).

    Args:
      iterable: a Python iterable of numbers.
      dtype: the element dtype.
      count: the number of items (-1: all).

    Returns:
      A 1-D array.

    Raises:
      ValueError: an item does not convert to dtype.

    Example:
      >>> jnp.fromiter(range(3), dtype=int)
      Array([0, 1, 2], dtype=int32)
    """
    return asarray(np.fromiter(iterable, dtype=dtype, count=count))


def load(file, *args, **kwargs):
    """Arrays read from a .npy file (as numpy.load does), as an Array.

    `numpy.load`, with a single array returned as an Array (`.npz` files and
    pickles come back as NumPy gives them).

    Args:
      file: a path or file-like object.
      *args: passed on to numpy.load.
      **kwargs: passed on to numpy.load.

    Returns:
      An Array for a .npy file; .npz files and pickles come back as NumPy gives
      them.

    Raises:
      OSError: the file cannot be read, as numpy.load raises.

    Example:
      >>> import io
      >>> buf = io.BytesIO()
      >>> np.save(buf, np.arange(3))
      >>> _ = buf.seek(0)
      >>> jnp.load(buf)
      Array([0, 1, 2], dtype=int32)
    """
    loaded = np.load(file, *args, **kwargs)
    return asarray(loaded) if isinstance(loaded, np.ndarray) else loaded
