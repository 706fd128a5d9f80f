"""NumPy's and the Array API's fft module on olympus arrays.

Every transform is a sequence of one-axis `lax.fft` calls (XLA's FFT handles
at most three axes; one at a time keeps the code simple and the results
NumPy's). `norm` is "backward" (default: the inverse scales by 1/n),
"ortho" (both by 1/sqrt(n)) or "forward" (the forward one by 1/n).
"""

from __future__ import annotations

import math

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy.core import astype
from olympus.numpy.creation import arange
from olympus.numpy.rearranging import roll
from olympus.numpy.shaping import concatenate, moveaxis
from olympus.numpy.core import aval_of, normalize_axis, placed, to_operand
from olympus.numpy.ufuncs import conjugate, divide, multiply

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _complex(x):
    dtype = aval_of(x).dtype
    if dtypes.is_complex(dtype):
        return x
    return astype(x, np.complex128 if dtype == np.float64 else np.complex64)


def _real(x):
    dtype = aval_of(x).dtype
    if dtypes.is_complex(dtype):
        raise TypeError(f"this transform takes a real array, got {dtype}")
    return x if dtype in (np.float32, np.float64) else astype(x, np.float32)


def _resized(x, n: int):
    """`x` cut or zero-padded along its last axis to `n`."""
    shape = aval_of(x).shape
    if shape[-1] == n:
        return x
    if shape[-1] > n:
        return lax.slice(x, (0,) * len(shape), shape[:-1] + (n,))
    zero = np.zeros((), aval_of(x).dtype)[()]
    return lax.pad(x, zero, [(0, 0, 0)] * (len(shape) - 1) + [(0, n - shape[-1], 0)])


def _scale(x, norm: str | None, n: int, inverse: bool):
    norm = norm or "backward"
    if norm not in _NORMS:
        raise ValueError(f"jnp.fft: norm must be one of {_NORMS}, got {norm!r}")
    if norm == "ortho":
        return multiply(x, math.sqrt(n) if inverse else 1 / math.sqrt(n))
    if norm == "forward":
        return multiply(x, n) if inverse else divide(x, n)
    return x


def _one_axis(x, kind: str, n, axis: int, norm):
    x = to_operand(x)
    x = _real(x) if kind == "RFFT" else _complex(x)
    ndim = aval_of(x).ndim
    if ndim == 0:
        raise ValueError("jnp.fft needs an array of at least 1 dimension")
    axis = normalize_axis(axis, ndim)
    x = moveaxis(x, axis, -1)
    m = aval_of(x).shape[-1]
    if n is None:
        n = 2 * (m - 1) if kind == "IRFFT" else m
    if n < 1:
        raise ValueError(f"jnp.fft: invalid number of points {n}")
    x = _resized(x, n // 2 + 1 if kind == "IRFFT" else n)
    out = lax.fft(x, kind, (n,))
    out = _scale(out, norm, n, kind in ("IFFT", "IRFFT"))
    return moveaxis(out, -1, axis)


def fft(a, n=None, axis: int = -1, norm=None):
    """The 1-D discrete Fourier transform along `axis` (cut or padded to `n`)."""
    return _one_axis(a, "FFT", n, axis, norm)


def ifft(a, n=None, axis: int = -1, norm=None):
    """The inverse of fft."""
    return _one_axis(a, "IFFT", n, axis, norm)


def rfft(a, n=None, axis: int = -1, norm=None):
    """fft of a real array: its n//2 + 1 non-negative frequencies."""
    return _one_axis(a, "RFFT", n, axis, norm)


def irfft(a, n=None, axis: int = -1, norm=None):
    """The inverse of rfft: `n` (default 2 * (m - 1)) real values."""
    return _one_axis(a, "IRFFT", n, axis, norm)


def hfft(a, n=None, axis: int = -1, norm=None):
    """The fft of a signal with Hermitian symmetry (a real spectrum)."""
    return irfft(conjugate(a), n, axis, _SWAPPED[norm or "backward"])


def ihfft(a, n=None, axis: int = -1, norm=None):
    """The inverse of hfft."""
    return conjugate(rfft(a, n, axis, _SWAPPED[norm or "backward"]))


def _axes_and_sizes(a, s, axes):
    ndim = aval_of(to_operand(a)).ndim
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    axes = tuple(normalize_axis(ax, ndim) for ax in axes)
    if s is None:
        s = (None,) * len(axes)
    if len(s) != len(axes):
        raise ValueError(f"jnp.fft: s {tuple(s)} and axes {axes} differ in length")
    return axes, tuple(s)


def _along_axes(transform, a, s, axes, norm):
    """The 1-D `transform` (fft, ifft) applied along each of `axes` in turn."""
    axes, s = _axes_and_sizes(a, s, axes)
    out = _complex(to_operand(a))
    for ax, n in zip(axes, s):
        out = transform(out, n, ax, norm)
    return out


def fftn(a, s=None, axes=None, norm=None):
    """The n-D transform over `axes` (all by default)."""
    return _along_axes(fft, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The inverse of fftn."""
    return _along_axes(ifft, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """fftn of a real array, halving the last of `axes`."""
    axes, s = _axes_and_sizes(a, s, axes)
    out = rfft(a, s[-1], axes[-1], norm)
    for ax, n in zip(axes[:-1], s[:-1]):
        out = fft(out, n, ax, norm)
    return out


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of rfftn."""
    axes, s = _axes_and_sizes(a, s, axes)
    out = _complex(to_operand(a))
    for ax, n in zip(axes[:-1], s[:-1]):
        out = ifft(out, n, ax, norm)
    return irfft(out, s[-1], axes[-1], norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """fftn over the last two axes."""
    return fftn(a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """ifftn over the last two axes."""
    return ifftn(a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """rfftn over the last two axes."""
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """irfftn over the last two axes."""
    return irfftn(a, s, axes, norm)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point fft: [0, 1, ..., -1] / (d * n)."""
    dtype = dtype or dtypes.default_float_dtype()
    ints = concatenate([arange(0, (n - 1) // 2 + 1), arange(-(n // 2), 0)])
    return placed(astype(divide(ints, d * n), dtype), device)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d * n)."""
    dtype = dtype or dtypes.default_float_dtype()
    return placed(astype(divide(arange(0, n // 2 + 1), d * n), dtype), device)


def _shift(x, axes, sign: int):
    x = to_operand(x)
    shape = aval_of(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    shifts = tuple(sign * (shape[ax] // 2) for ax in axes)
    return roll(x, shifts, tuple(axes))


def fftshift(x, axes=None):
    """Moves the zero frequency to the middle."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)
