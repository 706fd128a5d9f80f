"""The fast Fourier transform primitive: XLA's `stablehlo.fft` over the
trailing `len(fft_lengths)` axes (at most 3), in four types:

FFT and IFFT (complex to complex; IFFT scales by 1/n), RFFT (real to the
n//2 + 1 non-negative frequencies) and IRFFT (those back to n reals).
"""

from __future__ import annotations

import math

import numpy as np

from olympus.ir.core import ShapedArray
from olympus.lax.base import define_primitive
from olympus.lax.elementwise import complex_p, imag_p, mul_p, neg_p, real_p
from olympus.lax.shapes import broadcast_in_dim_p, pad_p
from olympus.backends.xla.lowering import i64_array
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, batch_to_front
from olympus.transforms.jvp import defjvp_linear
from olympus.transforms.linearize import transpose_rules

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def _fft_abstract_eval(x: ShapedArray, *, fft_type: str, fft_lengths: tuple):
    k = len(fft_lengths)
    if fft_type not in FFT_TYPES:
        raise OlympusTypeError(
            f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}"
        )
    if not 1 <= k <= 3 or x.ndim < k:
        raise OlympusTypeError(
            f"fft: 1 to 3 fft_lengths over an operand of at least that "
            f"rank, got {fft_lengths} for {x.str_short()}"
        )
    if fft_type == "RFFT":
        if x.dtype not in _COMPLEX_OF:
            raise OlympusTypeError(
                f"fft RFFT needs an f32 or f64 operand, got {x.str_short()}"
            )
        if x.shape[-k:] != tuple(fft_lengths):
            raise OlympusTypeError(
                f"fft RFFT: trailing shape {x.shape[-k:]} != {fft_lengths}"
            )
        shape = x.shape[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _COMPLEX_OF[x.dtype])
    if x.dtype not in _REAL_OF:
        raise OlympusTypeError(
            f"fft {fft_type} needs a c64 or c128 operand, got {x.str_short()}"
        )
    if fft_type == "IRFFT":
        expected = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
        if x.shape[-k:] != expected:
            raise OlympusTypeError(
                f"fft IRFFT: trailing shape {x.shape[-k:]} != {expected}"
            )
        return ShapedArray(x.shape[:-1] + (fft_lengths[-1],), _REAL_OF[x.dtype])
    if x.shape[-k:] != tuple(fft_lengths):
        raise OlympusTypeError(
            f"fft {fft_type}: trailing shape {x.shape[-k:]} != {fft_lengths}"
        )
    return ShapedArray(x.shape, x.dtype)


def _fft_lower(ctx, x, *, fft_type, fft_lengths):
    attrs = (
        f"fft_type = #stablehlo<fft_type {fft_type}>, "
        f"fft_length = {i64_array(fft_lengths)}"
    )
    return ctx.op("stablehlo.fft", [x], attrs)


fft_p = define_primitive("fft", _fft_abstract_eval, _fft_lower)


def fft(x, fft_type: str, fft_lengths) -> object:
    """The `fft_type` transform of `x` over its trailing len(fft_lengths) axes.

    Args:
      x: an array of a float (RFFT) or complex dtype.
      fft_type: 'FFT', 'IFFT', 'RFFT' or 'IRFFT' (or lax.FftType's members).
      fft_lengths: the transform's lengths over the trailing axes.

    Returns:
      A complex array (a real one for IRFFT) of the transform.

    Raises:
      OlympusTypeError: fft_type is not one of the four, or x's dtype does not
        fit it.

    Example:
      >>> lax.fft(jnp.array([1.0, 0.0, 0.0, 0.0]), 'RFFT', (4,))
      Array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    return fft_p.bind(
        x, fft_type=fft_type, fft_lengths=tuple(int(n) for n in fft_lengths)
    )


def _fft_batch_rule(axis_size, vals, dims, *, fft_type, fft_lengths):
    (x,), (bdim,) = vals, dims
    return fft_p.bind(
        batch_to_front(x, axis_size, bdim), fft_type=fft_type, fft_lengths=fft_lengths
    ), 0


batch_rules[fft_p] = _fft_batch_rule
defjvp_linear(fft_p)


def _scaled(x, factors: np.ndarray):
    """`x` times `factors` broadcast along its last axis."""
    aval = aval_of(x)
    const = broadcast_in_dim_p.bind(
        np.asarray(factors, aval.dtype),
        shape=aval.shape,
        broadcast_dimensions=(aval.ndim - 1,),
    )
    return mul_p.bind(x, const)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    """The DFT matrix is symmetric, so FFT and IFFT are their own transposes;
    RFFT's is FFT of the zero-padded cotangent, real part; IRFFT's is RFFT,
    weighted by how often each frequency appears, conjugated (the complex
    convention of the other primitives)."""
    if fft_type in ("FFT", "IFFT"):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    n = fft_lengths[-1]
    if fft_type == "RFFT":
        ndim, dtype = aval_of(ct).ndim, aval_of(ct).dtype
        zero = np.zeros((), dtype)[()]
        config = tuple((0, 0, 0) for _ in range(ndim - 1)) + ((0, n - (n // 2 + 1), 0),)
        full = pad_p.bind(ct, zero, padding_config=config)
        return [real_p.bind(fft_p.bind(full, fft_type="FFT", fft_lengths=fft_lengths))]
    y = fft_p.bind(ct, fft_type="RFFT", fft_lengths=fft_lengths)
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    y = _scaled(y, weights / math.prod(fft_lengths))
    return [complex_p.bind(real_p.bind(y), neg_p.bind(imag_p.bind(y)))]


transpose_rules[fft_p] = _fft_transpose
