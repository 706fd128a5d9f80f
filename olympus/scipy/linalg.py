"""scipy.linalg's functions on olympus arrays (JAX's `jax.scipy.linalg`),
on olympus.lax.linalg's kernels: differentiable and batched like
olympus.numpy.linalg. Matrices are the last two axes; a right-hand side
with one axis fewer than `a` is a vector (or a batch of vectors).

    >>> from olympus.scipy.linalg import cho_factor, cho_solve
    >>> a = jnp.array([[4.0, 2.0], [2.0, 3.0]])
    >>> cho_solve(cho_factor(a), jnp.array([2.0, 1.0]))
    Array([0.5, 0. ], dtype=float32)
"""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp
from olympus import lax
from olympus.lax import linalg as lax_linalg
from olympus.numpy.core import promote_dtypes, promote_dtypes_inexact
from olympus.numpy import linalg as np_linalg
from olympus.numpy.linalg import det, eigh, inv, qr, svd

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "inv",
    "lu_factor",
    "lu_solve",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
    "toeplitz",
]

_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False)}
_TRANS.update({2: (True, True), "C": (True, True)})


def _operands(a, b):
    """a and b as arrays of one inexact dtype, and whether b is a vector
    (then given a trailing axis of 1, which `_unvector` drops)."""
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    vector = b.ndim == a.ndim - 1
    return a, (b[..., None] if vector else b), vector


def _op(name: str, trans) -> tuple[bool, bool]:
    """(transpose, conjugate) for SciPy's `trans` argument."""
    if trans not in _TRANS:
        raise ValueError(
            f"{name}: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"
        )
    return _TRANS[trans]


def _unvector(x, vector: bool):
    return x[..., 0] if vector else x


def _left_solve(a, b, lower, transpose, conjugate, unit_diagonal=False):
    """x with op(a) x = b for the `lower` (or upper) triangle of `a`, op
    transposing and conjugating as asked."""
    return lax_linalg.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=transpose,
        conjugate_a=conjugate,
        unit_diagonal=unit_diagonal,
    )


def cholesky(a, lower: bool = False):
    """The Cholesky factor of a Hermitian positive-definite `a`: upper
    (a = U^H U) by default, as in SciPy; lower with lower=True."""
    return np_linalg.cholesky(jnp.asarray(a), upper=not lower, symmetrize_input=False)


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False):
    """x with op(a) x = b for triangular `a` (only its lower or upper triangle
    is read); `trans` 0/'N', 1/'T' or 2/'C' picks op."""
    transpose, conjugate = _op("solve_triangular", trans)
    a, b, vector = _operands(a, b)
    x = _left_solve(a, b, lower, transpose, conjugate, unit_diagonal)
    return _unvector(x, vector)


def cho_factor(a, lower: bool = False):
    """(c, lower) for `cho_solve`: c holds the Cholesky factor in its `lower`
    (or upper) triangle."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b):
    """x with a x = b, from `cho_factor(a)`."""
    c, lower = c_and_lower
    c, b, vector = _operands(c, b)
    # a = L L^H: solve L y = b, then L^H x = y (for an upper factor U = L^H)
    y = _left_solve(c, b, lower, not lower, not lower)
    x = _left_solve(c, y, lower, lower, lower)
    return _unvector(x, vector)


def lu_factor(a):
    """(lu, piv): L (unit lower) and U packed in `lu`, and LAPACK's row swaps
    (0-based: row i was swapped with row piv[i]), as SciPy returns them."""
    factors, pivots, _ = lax_linalg.lu(jnp.asarray(a))
    return factors, pivots


def lu_solve(lu_and_piv, b, trans=0):
    """x with op(a) x = b, from `lu_factor(a)`."""
    factors, pivots = lu_and_piv
    transpose, conjugate = _op("lu_solve", trans)
    factors, b, vector = _operands(factors, b)
    perm = lax_linalg.lu_pivots_to_permutation(pivots, factors.shape[-1])
    if not transpose:  # P a = L U: x = U^-1 L^-1 P b, as numpy.linalg.solve
        x = np_linalg._lu_solve(factors, perm, b)
    else:  # a^T = U^T L^T P: x = P^T L^-T U^-T b
        y = _left_solve(factors, b, False, True, conjugate)
        y = _left_solve(factors, y, True, True, conjugate, unit_diagonal=True)
        inverse = jnp.argsort(perm, axis=-1)
        x = jnp.take_along_axis(y, inverse[..., None], axis=-2)
    return _unvector(x, vector)


def solve(a, b, lower: bool = False, assume_a: str = "gen"):
    """x with a x = b: by LU ('gen'), or by Cholesky for a positive-definite
    `a` ('pos', reading its `lower` or upper triangle; also 'sym', 'her')."""
    if assume_a == "gen":
        return lu_solve(lu_factor(a), b)
    if assume_a in ("pos", "sym", "her"):
        a = jnp.asarray(a)
        full = a if lower else jnp.conj(jnp.swapaxes(a, -1, -2))
        return cho_solve(cho_factor(full, lower=True), b)
    raise ValueError(
        f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got {assume_a!r}"
    )


def block_diag(*arrays):
    """The block-diagonal matrix of 2-D (or smaller) arrays, in order."""
    blocks = [jnp.atleast_2d(jnp.asarray(x)) for x in arrays]
    if not blocks:
        return jnp.zeros((1, 0))
    blocks = promote_dtypes(*blocks)
    width = sum(x.shape[1] for x in blocks)
    rows, start = [], 0
    for x in blocks:
        left = jnp.zeros((x.shape[0], start), x.dtype)
        right = jnp.zeros((x.shape[0], width - start - x.shape[1]), x.dtype)
        rows.append(jnp.concatenate([left, x, right], axis=1))
        start += x.shape[1]
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column `c` and first row `r` (r[0] is
    ignored; r defaults to conj(c)); leading axes of c and r are batch axes.

    >>> olympus.scipy.linalg.toeplitz(jnp.array([1, 2, 3]))
    Array([[1, 2, 3],
           [2, 1, 2],
           [3, 2, 1]], dtype=int32)
    """
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conjugate(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    c, r = promote_dtypes(c, r)
    rows, cols = c.shape[-1], r.shape[-1]
    batch = jnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = jnp.broadcast_to(c, batch + (rows,))
    r = jnp.broadcast_to(r, batch + (cols,))
    # values along the diagonals: r reversed (without r[0]), then c
    diagonals = jnp.concatenate([jnp.flip(r[..., 1:], -1), c], axis=-1)
    index = (cols - 1) + np.arange(rows)[:, None] - np.arange(cols)[None, :]
    # strong, as JAX's (its gather drops a Python scalar's weak type)
    return lax.convert_element_type(diagonals[..., index], diagonals.dtype)
