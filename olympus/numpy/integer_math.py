"""Number-theoretic elementwise functions on integers: gcd, lcm, bitwise_count."""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import (
    UNSIGNED_OF_SIZE,
    as_arrays,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    scalar_like,
)
from olympus.numpy.ufunc_docs import PROMOTED_INT
from olympus.numpy.ufunc_docs import add_binary_sections, add_unary_sections
from olympus.tracer.errors import OlympusTypeError

__all__ = ["bitwise_count", "gcd", "lcm"]


def _integer_operands(name: str, *args) -> list:
    args = as_arrays(*args)
    dtype = aval_of(args[0]).dtype
    if not dtypes.is_integer(dtype):
        raise OlympusTypeError(
            f"jnp.{name} needs integer operands, got {', '.join(aval_of(a).str_short() for a in args)}"
        )
    shape = broadcast_shapes(*(aval_of(a).shape for a in args))
    return [broadcast_to(a, shape) for a in args]


def _magnitude(x):
    return x if dtypes.is_unsigned_int(aval_of(x).dtype) else lax.abs(x)


def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2|, elementwise.

    The greatest common divisor of |x1| and |x2| (gcd(0, 0) = 0), by Euclid's
    algorithm in a while_loop that runs until every pair has reached 0.

    Example:
      >>> jnp.gcd(jnp.array([12, 9]), jnp.array([8, 6]))
      Array([4, 3], dtype=int32)
    """
    x1, x2 = _integer_operands("gcd", x1, x2)
    return _gcd(_magnitude(x1), _magnitude(x2))


def _gcd(a, b):
    zero, one = scalar_like(a, 0), np.ones((), aval_of(a).dtype)[()]

    def unfinished(carry):
        _, b = carry
        return lax.reduce_or(lax.ne(b, zero), tuple(range(aval_of(b).ndim)))

    def euclid_step(carry):
        a, b = carry
        active = lax.ne(b, zero)
        remainder = lax.rem(a, lax.select(active, b, lax.full(aval_of(b).shape, one)))
        return lax.select(active, b, a), lax.select(active, remainder, b)

    return lax.while_loop(unfinished, euclid_step, (a, b))[0]


def lcm(x1, x2):
    """The least common multiple of |x1| and |x2|, elementwise (0 if either is 0).

    Example:
      >>> jnp.lcm(jnp.array([4, 3]), jnp.array([6, 5]))
      Array([12, 15], dtype=int32)
    """
    x1, x2 = _integer_operands("lcm", x1, x2)
    a, b = _magnitude(x1), _magnitude(x2)
    divisor = _gcd(a, b)
    zero = lax.eq(divisor, scalar_like(divisor, 0))
    safe = lax.select(
        zero,
        lax.full(aval_of(divisor).shape, np.ones((), aval_of(a).dtype)[()]),
        divisor,
    )
    return lax.select(zero, divisor, lax.mul(lax.div(a, safe), b))


def bitwise_count(x):
    """The number of 1 bits in |x|, elementwise.

    The number of 1 bits in |x|, as uint8 (NumPy's and JAX's dtype). A branch-
    free SWAR count: bits are summed in pairs, nibbles, then bytes, and a
    multiply by 0x0101... adds the bytes into the top one.

    Example:
      >>> jnp.bitwise_count(jnp.array([0, 7, -1]))
      Array([0, 3, 1], dtype=uint8)
    """
    (x,) = as_arrays(x)
    dtype = aval_of(x).dtype
    if dtype == dtypes.bool_:
        return lax.convert_element_type(x, np.uint8)
    if not dtypes.is_integer(dtype):
        raise OlympusTypeError(
            f"jnp.bitwise_count needs an integer operand, got {aval_of(x).str_short()}"
        )
    width = dtype.itemsize
    udtype = np.dtype(UNSIGNED_OF_SIZE[width])
    v = lax.bitcast_convert_type(_magnitude(x), udtype)

    def pattern(byte: int):
        return np.asarray(int.from_bytes(bytes([byte]) * width, "little"), udtype)[()]

    def shifted(v, n: int):
        return lax.shift_right_logical(v, np.asarray(n, udtype)[()])

    v = lax.sub(v, lax.bitwise_and(shifted(v, 1), pattern(0x55)))
    v = lax.add(
        lax.bitwise_and(v, pattern(0x33)), lax.bitwise_and(shifted(v, 2), pattern(0x33))
    )
    v = lax.bitwise_and(lax.add(v, shifted(v, 4)), pattern(0x0F))
    if width > 1:
        v = shifted(lax.mul(v, pattern(0x01)), 8 * (width - 1))
    return lax.convert_element_type(v, np.uint8)


# The Args/Returns/Raises each hand-written ufunc above shares with its family
# (ufunc_docs), by what it returns.
add_binary_sections(PROMOTED_INT, gcd, lcm)
add_unary_sections(", of dtype uint8", bitwise_count)
