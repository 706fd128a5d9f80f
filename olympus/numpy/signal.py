"""jnp.convolve and jnp.correlate: 1-d sequences as one conv_general_dilated."""

from __future__ import annotations

from olympus import lax
from olympus.numpy import ufuncs
from olympus.numpy.ufunc_docs import add_sections
from olympus.numpy.core import (
    aval_of,
    promote_dtypes,
    promote_dtypes_inexact,
    to_operand,
)

__all__ = ["convolve", "correlate"]


def _padding(mode: str, n: int, m: int) -> tuple:
    if mode == "valid":
        return (0, 0)
    if mode == "full":
        return (m - 1, m - 1)
    if mode == "same":
        lo = m // 2
        return (lo, m - 1 - lo)
    raise ValueError(f"mode must be 'valid', 'same' or 'full', got {mode!r}")


def _correlate(a, v, mode: str, precision=None, preferred_element_type=None):
    n, m = aval_of(a).shape[0], aval_of(v).shape[0]
    out = lax.conv_general_dilated(
        lax.reshape(a, (1, 1, n)),
        lax.reshape(v, (1, 1, m)),
        (1,),
        (_padding(mode, n, m),),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    return lax.reshape(out, (aval_of(out).shape[-1],))


def _operands(a, v, preferred_element_type=None):
    """Both as one dtype: inexact (NumPy's convolutions, and JAX's) unless the
    caller names the result's type."""
    promote = promote_dtypes if preferred_element_type else promote_dtypes_inexact
    a, v = promote(to_operand(a), to_operand(v))
    if aval_of(a).ndim != 1 or aval_of(v).ndim != 1:
        raise ValueError("convolve/correlate take 1-d arrays")
    if 0 in (aval_of(a).shape[0], aval_of(v).shape[0]):
        raise ValueError("convolve/correlate: inputs cannot be empty")
    return a, v


def correlate(
    a, v, mode: str = "valid", *, precision=None, preferred_element_type=None
):
    """The cross-correlation of two 1-d sequences.

    Cross-correlation c[k] = sum_n a[n + k] * conj(v[n]) (NumPy's definition).

    Args:
      a: a 1-d array.
      v: a 1-d array (conjugated).
      mode: 'valid' (default), 'same' or 'full'.
      precision: the matmul precision (None: the default).
      preferred_element_type: the accumulation and result dtype (None: the
        inputs').


    Example:
      >>> jnp.correlate(jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, 1.0]))
      Array([3., 5.], dtype=float32)
    """
    a, v = _operands(a, v, preferred_element_type)
    options = dict(precision=precision, preferred_element_type=preferred_element_type)
    if aval_of(a).shape[0] < aval_of(v).shape[0]:
        flipped = _correlate(v, ufuncs.conjugate(a), mode, **options)
        return lax.rev(ufuncs.conjugate(flipped), (0,))
    return _correlate(a, ufuncs.conjugate(v), mode, **options)


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-d sequences.

    Args:
      a: a 1-d array.
      v: a 1-d array.
      mode: 'full' (default), 'same' or 'valid'.
      precision: the matmul precision (None: the default).
      preferred_element_type: the accumulation and result dtype (None: the
        inputs').


    Example:
      >>> jnp.convolve(jnp.array([1.0, 2.0]), jnp.array([1.0, 1.0]))
      Array([1., 3., 2.], dtype=float32)
    """
    a, v = _operands(a, v, preferred_element_type)
    if aval_of(a).shape[0] < aval_of(v).shape[0]:
        a, v = v, a
    return _correlate(a, lax.rev(v, (0,)), mode, precision, preferred_element_type)


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (correlate, convolve),
    """Returns:
  A 1-D array (length by mode).""",
    """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  ValueError: an operand is not 1-D, or mode is unknown.""",
)
