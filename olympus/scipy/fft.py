"""olympus.scipy.fft: SciPy's discrete cosine transform (type 2, as JAX's
`jax.scipy.fft`), for spectral methods and compression-style features.

>>> olympus.scipy.fft.dct(jnp.array([1.0, 2.0, 3.0]))
Array([12.       , -3.4641016,  0.       ], dtype=float32)
"""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp
from olympus import lax
from olympus.numpy.core import promote_dtypes_inexact


class DctTypeError(NotImplementedError):
    """A DCT type other than 2 (JAX implements only type 2, and so does olympus)."""


class DctNormError(ValueError):
    """A `norm` other than None, 'backward' or 'ortho'."""


def _check(name: str, type: int, norm) -> None:
    if type != 2:
        raise DctTypeError(
            f"olympus.scipy.fft.{name}: only DCT type 2 is implemented (got "
            f"type={type}), as in JAX; pass type=2"
        )
    if norm not in (None, "backward", "ortho"):
        raise DctNormError(
            f"olympus.scipy.fft.{name}: norm={norm!r} is not implemented; use "
            "None, 'backward' or 'ortho'"
        )


def _ortho_matrix(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The orthonormal DCT-II matrix C[k, n] = s_k 2 cos(pi k (2n + 1) / 2N), and s."""
    k = np.arange(size)[:, None]
    n = np.arange(size)[None, :]
    scale = np.full((size, 1), np.sqrt(1 / (2 * size)))
    scale[0] = np.sqrt(1 / (4 * size))
    return scale * 2 * np.cos(np.pi * k * (2 * n + 1) / (2 * size)), scale[:, 0]


def _resized(x, n, axis: int):
    """`x` zero-padded or cut to length `n` along `axis` (SciPy's `n`)."""
    if n is None:
        return x
    pads = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, np.zeros((), x.dtype), pads)


def _along(x, matrix: np.ndarray, axis: int):
    """`matrix @ x` along `axis`."""
    moved = jnp.moveaxis(x, axis, -1)
    out = jnp.matmul(moved, jnp.asarray(matrix.T, x.dtype))
    return jnp.moveaxis(out, -1, axis)


def _transform(name, x, type, n, axis, norm, inverse: bool):
    _check(name, type, norm)
    x = jnp.asarray(x)
    if jnp.iscomplexobj(x):
        args = (type, n, axis, norm, inverse)
        return lax.complex(
            _transform(name, x.real, *args), _transform(name, x.imag, *args)
        )
    (x,) = promote_dtypes_inexact(x)
    axis = axis % x.ndim
    x = _resized(x, n, axis)
    ortho, scale = _ortho_matrix(x.shape[axis])
    if norm == "ortho":
        matrix = ortho.T if inverse else ortho
    else:  # unnormalized: D = diag(1/s) C, whose inverse is C^T diag(s)
        matrix = ortho.T * scale[None, :] if inverse else ortho / scale[:, None]
    return _along(x, matrix, axis)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm=None):
    """The discrete cosine transform (type 2) of `x` along `axis`, as SciPy's."""
    return _transform("dct", x, type, n, axis, norm, False)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm=None):
    """The inverse of `dct` (type 2) along `axis`: idct(dct(x)) == x."""
    return _transform("idct", x, type, n, axis, norm, True)


__all__ = ["dct", "idct"]
