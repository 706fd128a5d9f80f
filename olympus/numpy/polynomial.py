"""NumPy's polynomial functions on coefficient arrays, highest power first:
poly, polyval, polyadd, polysub, polymul, polydiv, polyder, polyint,
polyfit, roots.

Shapes stay static, as in JAX: results keep leading zero coefficients
unless `trim_leading_zeros=True` is asked for (concrete input only), so
polymul/polydiv of inputs with leading zeros differ from NumPy's trimmed
results by those zeros.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from olympus import lax
from olympus.numpy import creation, shaping
from olympus.numpy import linalg
from olympus.numpy import reductions as _red
from olympus.numpy import ufuncs as _uf
from olympus.numpy.compiled import jit_entry_points
from olympus.ir import dtypes
from olympus.numpy.core import (
    astype,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    promote_dtypes,
    promote_dtypes_inexact,
    stack,
    to_operand,
)
from olympus.numpy.signal import convolve
from olympus.tracer.core import Tracer
from olympus.tracer.errors import ConcretizationTypeError
from olympus.numpy.ufunc_docs import RAISES_X, add_sections

__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
    "vander",
]


class PolynomialShapeError(ValueError):
    """A polynomial argument has the wrong number of dimensions or length."""


class PolynomialScalarError(PolynomialShapeError, IndexError):
    """A 0-d array where coefficients along a first axis are expected (JAX
    raises IndexError reading its length)."""


class PolynomialTypeError(TypeError):
    """Coefficients of a dtype the operation has no arithmetic for (bool)."""


def _leading_axis(p, name: str):
    """`p` as an operand with a first axis (the coefficients, highest power
    first; further axes are batch axes, as JAX allows)."""
    p = to_operand(p)
    if aval_of(p).ndim == 0:
        raise PolynomialScalarError(
            f"jnp.{name}: coefficients must have a first axis, got a 0-d array; "
            "pass jnp.atleast_1d(p)"
        )
    return p


def _coefficients(p, name: str):
    p = to_operand(p)
    if aval_of(p).ndim != 1:
        raise PolynomialShapeError(
            f"jnp.{name}: coefficients must be a 1-d array, got shape {aval_of(p).shape}"
        )
    return p


def _concrete(x, name: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            f"jnp.{name}: trimming zero coefficients needs concrete values; under jit "
            f"pass trim_leading_zeros=False (or strip_zeros=False for roots)"
        )
    return np.asarray(x)


def _trim_leading_zeros(p, name: str):
    values = _concrete(p, name)
    nonzero = np.flatnonzero(values)
    start = nonzero[0] if nonzero.size else values.size - 1
    return p[int(start) :]


def _left_pad(p, length: int):
    """`p` with zeros in front, to `length` coefficients."""
    n = aval_of(p).shape[0]
    zero = np.zeros((), aval_of(p).dtype)[()]
    return lax.pad(p, zero, [(length - n, 0, 0)]) if length > n else p


# ---- evaluation and arithmetic ---------------------------------------------------------
def polyval(p, x, *, unroll: int = 16):
    """The polynomial with coefficients `p` evaluated at `x`.

    The polynomial with coefficients `p` (along p's first axis; the rest
    broadcast against x) at `x`, by Horner's rule.

    Args:
      p: polynomial coefficients, highest power first.
      x: the points.
      unroll: how many steps of the loop to unroll.

    Returns:
      An array of x's shape.

    Example:
      >>> jnp.polyval(jnp.array([1, 0, -1]), jnp.array([2, 3]))
      Array([3, 8], dtype=int32)
    """
    del unroll  # the loop is unrolled at trace time: p's length is static
    p, x = promote_dtypes(_leading_axis(p, "polyval"), to_operand(x))
    shape = broadcast_shapes(aval_of(p).shape[1:], aval_of(x).shape)
    y = creation.zeros(shape, aval_of(x).dtype)
    for i in range(aval_of(p).shape[0]):
        y = y * x + p[i]
    return y


def polyadd(a1, a2):
    """The sum of two polynomials.

    The sum of two polynomials (the shorter added into the end of the longer,
    along the first axis, as JAX).


    Example:
      >>> jnp.polyadd(jnp.array([1, 2]), jnp.array([1, 0, 0]))
      Array([1, 1, 2], dtype=int32)
    """
    a1, a2 = promote_dtypes(_leading_axis(a1, "polyadd"), _leading_axis(a2, "polyadd"))
    added = a2 if aval_of(a2).shape[0] <= aval_of(a1).shape[0] else a1
    if aval_of(a1).dtype == np.bool_ and aval_of(added).size:
        raise PolynomialTypeError(
            "jnp.polyadd: bool coefficients have no sum (JAX's scatter-add takes "
            "numbers); cast them first (a.astype(int))"
        )
    if added is a2:
        return a1.at[-aval_of(a2).shape[0] :].add(a2)
    return a2.at[-aval_of(a1).shape[0] :].add(a1)


def polysub(a1, a2):
    """The difference of two polynomials.


    Example:
      >>> jnp.polysub(jnp.array([1, 2]), jnp.array([1, 0, 0]))
      Array([-1,  1,  2], dtype=int32)
    """
    a1, a2 = promote_dtypes(_leading_axis(a1, "polysub"), _leading_axis(a2, "polysub"))
    return polyadd(a1, _uf.negative(a2))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials.

    The product of two polynomials (the convolution of their coefficients).

    Args:
      a1: polynomial coefficients, highest power first.
      a2: polynomial coefficients, highest power first.
      trim_leading_zeros: whether to drop leading zero coefficients (not jit-
        compatible).

    Returns:
      The coefficients, highest power first.

    Example:
      >>> jnp.polymul(jnp.array([1, 1]), jnp.array([1, -1]))
      Array([ 1.,  0., -1.], dtype=float32)
    """
    a1, a2 = _coefficients(a1, "polymul"), _coefficients(a2, "polymul")
    if trim_leading_zeros:
        a1, a2 = _trim_leading_zeros(a1, "polymul"), _trim_leading_zeros(a2, "polymul")
    if aval_of(a1).shape[0] == 0 or aval_of(a2).shape[0] == 0:
        a1, a2 = promote_dtypes_inexact(a1, a2)  # as convolve's, JAX's
        return lax.full((1,), np.zeros((), aval_of(a1).dtype)[()])
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Quotient and remainder of polynomial division u / v.

    Quotient and remainder of polynomial division u / v (v's leading coefficient
    nonzero). The remainder keeps u's length unless trimmed.

    Args:
      u: the dividend's coefficients.
      v: the divisor's coefficients (leading one nonzero).
      trim_leading_zeros: whether to drop leading zero coefficients (not jit-
        compatible).

    Returns:
      (quotient, remainder) coefficient arrays.

    Example:
      >>> jnp.polydiv(jnp.array([1.0, 0.0, -1.0]), jnp.array([1.0, 1.0]))
      (Array([ 1., -1.], dtype=float32), Array([0., 0., 0.], dtype=float32))
    """
    u, v = promote_dtypes_inexact(
        _coefficients(u, "polydiv"), _coefficients(v, "polydiv")
    )
    m, n = aval_of(u).shape[0] - 1, aval_of(v).shape[0] - 1
    scale = 1 / v[0]
    quotient, remainder = [], u
    for k in range(max(m - n + 1, 0)):
        d = scale * remainder[k]
        quotient.append(d)
        update = _left_pad(d * v, k + n + 1)
        remainder = remainder - lax.pad(
            update, np.zeros((), aval_of(u).dtype)[()], [(0, m - k - n, 0)]
        )
    q = (
        stack(quotient)
        if quotient
        else lax.full((1,), np.zeros((), aval_of(u).dtype)[()])
    )
    if trim_leading_zeros:
        values = _concrete(remainder, "polydiv")
        keep = len(values)
        while keep > 1 and np.allclose(values[len(values) - keep], 0, rtol=1e-14):
            keep -= 1
        remainder = remainder[len(values) - keep :]
    return q, remainder


# ---- calculus ---------------------------------------------------------------------------
def polyder(p, m: int = 1):
    """The m-th derivative of a polynomial.

    The m-th derivative of the polynomial (coefficients along p's first axis).

    Args:
      p: polynomial coefficients, highest power first.
      m: the order of the derivative.

    Returns:
      The coefficients, highest power first.

    Example:
      >>> jnp.polyder(jnp.array([1, 2, 3]))
      Array([2., 2.], dtype=float32)
    """
    (p,) = promote_dtypes_inexact(_leading_axis(p, "polyder"))  # as JAX
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"jnp.polyder: order m={m} must be non-negative")
    if m == 0:
        return p
    n = aval_of(p).shape[0]
    # k (k - 1) ... (k - m + 1) for the powers k = n - 1 down to m.
    powers = np.arange(m, builtins.max(n, m))
    coeff = np.prod(powers[None, :] - np.arange(m)[:, None], axis=0)
    return p[:-m] * coeff[::-1].astype(aval_of(p).dtype)


def polyint(p, m: int = 1, k=None):
    """The m-th antiderivative of a polynomial.

    The m-th antiderivative, with integration constants `k` (one per step, or
    one scalar for all; zeros by default).

    Args:
      p: polynomial coefficients, highest power first.
      m: the order of the antiderivative.
      k: the integration constants (None: zeros).

    Returns:
      The coefficients, highest power first.

    Example:
      >>> jnp.polyint(jnp.array([3.0, 2.0]))
      Array([1.5, 2. , 0. ], dtype=float32)
    """
    (p,) = promote_dtypes_inexact(_coefficients(p, "polyint"))
    if m < 0:
        raise ValueError(f"jnp.polyint: order m={m} must be non-negative")
    constants = (
        creation.zeros((int(m),), aval_of(p).dtype) if k is None else to_operand(k)
    )
    if aval_of(constants).ndim == 0:
        constants = broadcast_to(constants, (int(m),))
    if aval_of(constants).shape[0] != m:
        raise PolynomialShapeError(
            f"jnp.polyint: k has {aval_of(constants).shape[0]} "
            f"constants for m={m} integrations"
        )
    constants = astype(constants, aval_of(p).dtype)
    for i in range(int(m)):
        n = aval_of(p).shape[0]
        divisors = np.arange(n, 0, -1).astype(aval_of(p).dtype)
        p = shaping.concatenate([p / divisors, constants[i : i + 1]])
    return p


# ---- roots and fitting --------------------------------------------------------------------
def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots.

    The monic polynomial with the given roots (or the characteristic polynomial
    of a square matrix); a scalar is one root, no roots give 1.

    Args:
      seq_of_zeros: the roots (or a square matrix: its characteristic
        polynomial).

    Returns:
      The coefficients, highest power first.

    Example:
      >>> jnp.poly(jnp.array([1.0, 2.0]))
      Array([ 1., -3.,  2.], dtype=float32)
    """
    (zeros,) = promote_dtypes_inexact(to_operand(seq_of_zeros))
    zeros = shaping.atleast_1d(zeros)
    shape = aval_of(zeros).shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros = linalg.eigvals(zeros)
    elif len(shape) != 1:
        raise PolynomialShapeError(
            f"jnp.poly: expected a 1-d array of roots or a non-empty square "
            f"matrix, got shape {shape}"
        )
    one = np.ones((), aval_of(zeros).dtype)[()]
    if shape[0] == 0:
        return lax.full((), one)
    a = lax.full((1,), one)
    for i in range(aval_of(zeros).shape[0]):
        factor = shaping.concatenate([a[:1] * 0 + 1, -zeros[i : i + 1]])
        a = convolve(a, factor, mode="full")
    return a


def roots(p, *, strip_zeros: bool = True):
    """The roots of a polynomial, as eigenvalues of its companion matrix.

    The roots of the polynomial: eigenvalues of its companion matrix (complex).
    With `strip_zeros` (needs concrete p) leading zeros are dropped, as JAX;
    without it, p[0] must be nonzero and the result has len(p) - 1 roots. Fewer
    than two coefficients have no roots.

    Args:
      p: polynomial coefficients, highest power first.
      strip_zeros: whether to drop leading zeros first (not jit-compatible).

    Returns:
      A complex array of roots.

    Example:
      >>> jnp.sort_complex(jnp.roots(jnp.array([1.0, -3.0, 2.0])))
      Array([1.+0.j, 2.+0.j], dtype=complex64)
    """
    (p,) = promote_dtypes_inexact(to_operand(p))
    p = shaping.atleast_1d(p)
    if aval_of(p).ndim != 1:
        raise PolynomialShapeError(
            f"jnp.roots: coefficients must be a 1-d array, got shape {aval_of(p).shape}"
        )
    if aval_of(p).size < 2:
        return lax.full((0,), np.zeros((), _complex_dtype(aval_of(p).dtype))[()])
    if strip_zeros:
        values = _concrete(p, "roots")
        nonzero = np.flatnonzero(values)
        p = p[int(nonzero[0]) if nonzero.size else len(values) :]
    return _companion_roots(p, aval_of(p).shape[0] - 1, linalg)


def _complex_dtype(dtype) -> np.dtype:
    """The complex dtype eigenvalues of real `dtype` have (complex64 below 64 bits)."""
    if dtypes.is_complex(dtype):
        return np.dtype(dtype)
    return np.dtype(np.complex128 if np.dtype(dtype).itemsize == 8 else np.complex64)


def _companion_roots(p, n: int, linalg):
    """Eigenvalues of the companion matrix of p (n = its degree)."""
    if n < 1:
        return lax.full((0,), np.zeros((), _complex_dtype(aval_of(p).dtype))[()])
    first_row = lax.reshape(-p[1:] / p[0], (1, n))
    below = creation.eye(n - 1, n, dtype=aval_of(p).dtype)
    return linalg.eigvals(shaping.concatenate([first_row, below], axis=0))


def vander(x, N: int | None = None, increasing: bool = False):
    """The Vandermonde matrix of 1-d x.

    The Vandermonde matrix of 1-d x: column j holds x ** (N - 1 - j) (x ** j if
    `increasing`); N defaults to len(x). The powers are an iota in x's dtype, as
    JAX's (so bool x is refused).

    Args:
      x: a 1-D array.
      N: the number of columns (None: len(x)).
      increasing: whether powers increase left to right.

    Returns:
      An (len(x), N) array.

    Example:
      >>> jnp.vander(jnp.array([1, 2, 3]), 3)
      Array([[1, 1, 1],
             [4, 2, 1],
             [9, 3, 1]], dtype=int32)
    """
    x = to_operand(x)
    if aval_of(x).ndim != 1:
        raise PolynomialShapeError(
            f"jnp.vander: x must be 1-d, got shape {aval_of(x).shape}"
        )
    n = aval_of(x).shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(f"jnp.vander: N={n} must be non-negative")
    dtype = aval_of(x).dtype
    if dtype == np.bool_:
        raise PolynomialTypeError(
            "jnp.vander: bool x has no powers (JAX's iota of the exponents takes "
            "numbers); cast it first (x.astype(int))"
        )
    if not increasing and dtypes.is_unsigned_int(dtype) and n == 0:
        raise OverflowError(
            f"jnp.vander: the exponents N - 1 = -1 do not fit {dtype}, as in JAX; "
            "pass N > 0 or a signed x"
        )
    powers = lax.iota(dtype, n)
    if not increasing:
        powers = lax.sub(lax.full((n,), np.asarray(n - 1, dtype)[()]), powers)
    return _uf.power(x[:, None], powers[None, :])


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """The least-squares polynomial fit of degree `deg`.

    Least-squares fit of a degree-`deg` polynomial to points (x, y): the
    coefficients, highest power first (y may hold several columns). `full` also
    returns residuals, rank, singular values and rcond; `cov` the coefficients'
    covariance (scaled by the residual variance unless cov='unscaled').

    Args:
      x: the sample points.
      y: the sample values (a 1-D or 2-D array).
      deg: the degree of the fit.
      rcond: the cut-off for small singular values.
      full: whether to also return the diagnostics of the fit.
      w: weights per sample point.
      cov: whether to also return the covariance of the coefficients.

    Returns:
      The coefficients, highest power first (more with full or cov).

    Example:
      >>> jnp.polyfit(jnp.array([0.0, 1.0, 2.0]), jnp.array([1.0, 3.0, 5.0]), 1).round(4)
      Array([2., 1.], dtype=float32)
    """
    x, y = promote_dtypes_inexact(to_operand(x), to_operand(y))
    deg = int(deg)
    if deg < 0:
        raise ValueError(f"jnp.polyfit: deg={deg} must be non-negative")
    if (
        aval_of(x).ndim != 1
        or aval_of(y).ndim not in (1, 2)
        or aval_of(y).shape[0] != aval_of(x).shape[0]
    ):
        raise PolynomialShapeError(
            f"jnp.polyfit: x must be 1-d and y 1-d or 2-d with as many "
            f"rows, got {aval_of(x).shape} and {aval_of(y).shape}"
        )
    order = deg + 1
    n = aval_of(x).shape[0]
    rcond = (
        n * float(np.finfo(np.dtype(aval_of(x).dtype)).eps) if rcond is None else rcond
    )
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = astype(to_operand(w), aval_of(x).dtype)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if aval_of(y).ndim == 1 else w[:, None])
    scale = _uf.sqrt(_red.sum(lhs * lhs, axis=0))
    c, resids, rank, s = linalg.lstsq(lhs / scale, rhs, rcond=rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        return c, _fit_covariance(lhs, scale, resids, n, order, cov, aval_of(y).ndim)
    return c


def _fit_covariance(lhs, scale, resids, n: int, order: int, cov, y_ndim: int):
    """NumPy's polyfit covariance: inv(A^T A) / outer(scale, scale), times the
    residual variance unless cov='unscaled'."""
    scaled = lhs / scale
    base = linalg.inv(scaled.T @ scaled) / _red.outer(scale, scale)
    if cov == "unscaled":
        return base
    if n <= order:
        raise ValueError(
            f"jnp.polyfit: the covariance needs more points ({n}) than "
            f"coefficients ({order})"
        )
    factor = resids / (n - order)
    return base * factor if y_ndim == 1 else base[:, :, None] * factor


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (polyadd, polysub),
    """Args:
  a1: polynomial coefficients, highest power first.
  a2: polynomial coefficients, highest power first.""",
    """Returns:
  The coefficients, highest power first.""",
)
add_sections(
    (
        polyval,
        polyadd,
        polysub,
        polymul,
        polydiv,
        polyder,
        polyint,
        poly,
        roots,
        vander,
        polyfit,
    ),
    RAISES_X,
)


# Public functions whose every call is one compiled program; their options static.
_STATIC_OPTIONS = {
    "polyval": ("unroll",),
    "polyadd": (),
    "polysub": (),
    "polyder": ("m",),
    "polyint": ("m",),
    "poly": (),
    "vander": ("N", "increasing"),
    "polyfit": ("deg", "rcond", "full", "cov"),
}


jit_entry_points(globals(), _STATIC_OPTIONS)
