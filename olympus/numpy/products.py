"""Products of olympus.numpy beyond dot/matmul: kron and cross."""

from __future__ import annotations

from olympus import lax
from olympus.ir import dtypes
from olympus.numpy import creation, shaping
from olympus.numpy.compiled import jit_entry_points
from olympus.numpy.core import (
    aval_of,
    broadcast_shapes,
    broadcast_to,
    normalize_axis,
    promote_dtypes,
    stack,
    to_operand,
)
from olympus.tracer.errors import OlympusTypeError

__all__ = ["cross", "kron"]


class CrossDimensionError(ValueError):
    """jnp.cross got vectors that are not of dimension 2 or 3."""


def kron(a, b):
    """The Kronecker product of `a` and `b`.

    The Kronecker product: blocks a[i, j] * b, for arrays of any rank (the
    shorter shape is padded with leading 1s).

    Args:
      a: an array.
      b: an array.

    Returns:
      An array whose shape is the product of the operands' shapes.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      OlympusTypeError: the operands are bool (as in JAX).

    Example:
      >>> jnp.kron(jnp.eye(2), jnp.array([[1.0, 2.0]]))
      Array([[1., 2., 0., 0.],
             [0., 0., 1., 2.]], dtype=float32)
    """
    a, b = promote_dtypes(to_operand(a), to_operand(b))
    if aval_of(a).dtype == dtypes.bool_:
        raise OlympusTypeError(
            "jnp.kron does not accept bool operands (as JAX: its product is lax.mul, "
            "which takes numbers); cast them, e.g. a.astype(jnp.int32)"
        )
    ndim = max(aval_of(a).ndim, aval_of(b).ndim)
    a_shape = (1,) * (ndim - aval_of(a).ndim) + aval_of(a).shape
    b_shape = (1,) * (ndim - aval_of(b).ndim) + aval_of(b).shape
    # Interleave the axes: a on even positions, b on odd ones, then merge pairs.
    a = lax.reshape(a, tuple(d for s in a_shape for d in (s, 1)))
    b = lax.reshape(b, tuple(d for s in b_shape for d in (1, s)))
    return lax.reshape(a * b, tuple(m * n for m, n in zip(a_shape, b_shape)))


def _components(v, axis: int, name: str):
    """The 2 or 3 components of the vectors along `axis`, as separate arrays."""
    v = shaping.moveaxis(v, normalize_axis(axis, aval_of(v).ndim), -1)
    n = aval_of(v).shape[-1]
    if n not in (2, 3):
        raise CrossDimensionError(
            f"jnp.cross: {name} has vectors of dimension {n} (shape {aval_of(v).shape}); "
            "cross products need dimension 2 or 3"
        )
    return [v[..., i] for i in range(n)]


def cross(
    a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
):
    """The cross product of 2- or 3-vectors.

    The cross product of 2- or 3-vectors along the given axes (2-vectors have z
    = 0; two 2-vectors give the z component only).

    Args:
      a: vectors of length 2 or 3 along axisa.
      b: vectors of length 2 or 3 along axisb.
      axisa: the axis of a holding the vectors.
      axisb: the axis of b holding the vectors.
      axisc: the axis of the result holding the vectors.
      axis: if given, overrides axisa, axisb and axisc.

    Returns:
      The products, vectors along axisc.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: axis is out of range for the array's rank.
      CrossDimensionError: a vector axis has a length other than 2 or 3 (a
        ValueError).

    Example:
      >>> jnp.cross(jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
      Array([0., 0., 1.], dtype=float32)
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(to_operand(a), to_operand(b))
    ua, ub = _components(a, axisa, "a"), _components(b, axisb, "b")
    shape = broadcast_shapes(aval_of(ua[0]).shape, aval_of(ub[0]).shape)
    ua = [broadcast_to(c, shape) for c in ua]
    ub = [broadcast_to(c, shape) for c in ub]
    z = ua[0] * ub[1] - ua[1] * ub[0]
    if len(ua) == 2 and len(ub) == 2:
        return z
    zero = creation.zeros_like(z)
    a0, a1, a2 = ua if len(ua) == 3 else (*ua, zero)
    b0, b1, b2 = ub if len(ub) == 3 else (*ub, zero)
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return shaping.moveaxis(out, -1, normalize_axis(axisc, aval_of(out).ndim))


# kron and cross run as one compiled program per call, axes static.
jit_entry_points(globals(), {"kron": (), "cross": ("axisa", "axisb", "axisc", "axis")})
