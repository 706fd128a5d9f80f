"""Window functions for spectral analysis: bartlett, blackman, hamming,
hanning and kaiser, each an array of M samples in the default float dtype."""

from __future__ import annotations

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.float_math import i0
from olympus.numpy.ufunc_docs import RAISES_NOTHING, add_sections

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _positions(name: str, M: int):
    """n / (M - 1) for n in 0..M-1, the fraction of the window covered so far."""
    if int(M) != M:
        raise TypeError(
            f"jnp.{name}: M must be an integer number of samples, got {M!r}"
        )
    M = int(M)
    dtype = dtypes.default_float_dtype()
    n = lax.iota(dtype, max(M, 0))
    return lax.div(n, np.asarray(max(M - 1, 1), dtype)[()]), dtype


def _cosine_sum(name: str, M: int, coefficients):
    """sum_k (-1)^k a_k cos(2 pi k t): the generalized cosine windows."""
    t, dtype = _positions(name, M)
    out = lax.full(lax.aval_of(t).shape, np.asarray(coefficients[0], dtype)[()])
    for k, a in enumerate(coefficients[1:], start=1):
        wave = lax.cos(lax.mul(t, np.asarray(2 * np.pi * k, dtype)[()]))
        out = lax.add(out, lax.mul(wave, np.asarray((-1) ** k * a, dtype)[()]))
    if M == 1:  # NumPy defines every one-sample window as [1.]
        return lax.full((1,), np.ones((), dtype)[()])
    return out


def _cosine_window(name: str, coefficients: tuple, summary: str, formula: str, example):
    """hamming, hanning or blackman: a generalized cosine window."""

    def window(M: int):
        return _cosine_sum(name, M, coefficients)

    window.__name__ = window.__qualname__ = name
    window.__doc__ = f"{summary}\n\n{formula}\n\nExample:\n{example}"
    return window


hamming = _cosine_window(
    "hamming",
    (0.54, 0.46),
    "The Hamming window of length M.",
    "0.54 - 0.46 cos(2 pi n / (M - 1)).",
    "  >>> jnp.hamming(4)\n"
    "  Array([0.08000001, 0.77000004, 0.77      , 0.08000001], dtype=float32)",
)
hanning = _cosine_window(
    "hanning",
    (0.5, 0.5),
    "The Hann window of length M.",
    "0.5 - 0.5 cos(2 pi n / (M - 1)).",
    "  >>> jnp.hanning(4)\n"
    "  Array([0.        , 0.75      , 0.74999994, 0.        ], dtype=float32)",
)
blackman = _cosine_window(
    "blackman",
    (0.42, 0.5, 0.08),
    "The Blackman window of length M.",
    "0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1)).",
    "  >>> jnp.blackman(4)\n"
    "  Array([-1.4901161e-08,  6.3000000e-01,  6.2999994e-01, -1.4901161e-08],"
    " dtype=float32)",
)


def bartlett(M: int):
    """The Bartlett (triangular) window of length M.

    The triangle 1 - |2n / (M - 1) - 1|.

    Example:
      >>> jnp.bartlett(4)
      Array([0.       , 0.6666667, 0.6666666, 0.       ], dtype=float32)
    """
    t, dtype = _positions("bartlett", M)
    one = np.ones((), dtype)[()]
    if M == 1:
        return lax.full((1,), one)
    return lax.sub(one, lax.abs(lax.sub(lax.mul(t, np.asarray(2, dtype)[()]), one)))


def kaiser(M: int, beta):
    """The Kaiser window of length M with shape parameter beta.

    i0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / i0(beta).

    Args:
      M: the window length, a non-negative int.
      beta: the shape parameter (0 gives a rectangle).

    Returns:
      A 1-D array of M floats.

    Example:
      >>> jnp.kaiser(4, 2.0)
      Array([0.43867627, 0.92431384, 0.9243137 , 0.43867627], dtype=float32)
    """
    t, dtype = _positions("kaiser", M)
    one = np.ones((), dtype)[()]
    if M == 1:
        return lax.full((1,), one)
    centred = lax.sub(lax.mul(t, np.asarray(2, dtype)[()]), one)
    # max(0, .) keeps rounding at the ends from taking the square root of -eps.
    inside = lax.max(lax.sub(one, lax.mul(centred, centred)), np.zeros((), dtype)[()])
    beta = (
        lax.convert_element_type(beta, dtype)
        if hasattr(beta, "aval")
        else np.asarray(beta, dtype)[()]
    )
    return lax.div(i0(lax.mul(lax.sqrt(inside), beta)), i0(beta))


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections((kaiser,), RAISES_NOTHING)
add_sections(
    (hamming, hanning, blackman, bartlett),
    "Args:\n  M: the window length, a non-negative int.",
    "Returns:\n  A 1-D array of M floats (the default float dtype).",
    "Raises:\n  TypeError: M is not an integer.",
)
