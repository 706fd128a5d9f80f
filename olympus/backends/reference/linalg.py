"""Reference rules of the linear-algebra primitives, through numpy.linalg.

LAPACK-shaped outputs (getrf's packed LU and 0-based pivots, geqrf's packed
Householder reflectors and taus) are rebuilt in plain NumPy; the batch
dimensions (all but the last two) are looped over.
"""

from __future__ import annotations

import numpy as np

from olympus.backends.reference.table import rule


def _per_matrix(fn, a, *others):
    """fn applied to each matrix of a batch; fn returns a tuple of arrays."""
    batch = a.shape[:-2]
    results = [fn(a[i], *(o[i] for o in others)) for i in np.ndindex(*batch)]
    if not batch:
        return list(results[0])
    n_out = len(results[0])
    return [
        np.stack([r[k] for r in results]).reshape(batch + np.shape(results[0][k]))
        for k in range(n_out)
    ]


def _triangle(a, lower: bool):
    return np.tril(a) if lower else np.triu(a)


@rule("cholesky")
def _cholesky(a):
    """The lower factor, zeros above; NaNs where a is not positive definite."""

    def one(m):
        try:
            return (np.linalg.cholesky(m),)
        except np.linalg.LinAlgError:
            return (np.full(m.shape, np.nan, m.dtype),)

    if a.size == 0:
        return a
    return _per_matrix(one, a)[0]


@rule("triangular_solve")
def _triangular_solve(
    a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    op = _triangle(a, lower)
    if unit_diagonal:
        n = a.shape[-1]
        op = op * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    if conjugate_a:
        op = np.conj(op)
    if transpose_a:
        op = np.swapaxes(op, -1, -2)
    if left_side:
        return np.linalg.solve(op, b)
    # x op = b  <=>  op^T x^T = b^T
    return np.swapaxes(
        np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2
    )


def _getrf(m):
    """Partial pivoting (largest magnitude, first on ties), LAPACK's packed form."""
    lu = m.copy()
    rows, cols = lu.shape
    k = min(rows, cols)
    pivots = np.zeros(k, np.int32)
    for j in range(k):
        p = j + int(np.argmax(np.abs(lu[j:, j])))
        pivots[j] = p
        lu[[j, p]] = lu[[p, j]]
        if lu[j, j] != 0:
            lu[j + 1 :, j] /= lu[j, j]
        lu[j + 1 :, j + 1 :] -= np.outer(lu[j + 1 :, j], lu[j, j + 1 :])
    return lu, pivots


def _getrf_with_permutation(m):
    """(packed LU, 0-based pivots, the row permutation the pivots perform)."""
    lu, pivots = _getrf(m)
    perm = np.arange(m.shape[0], dtype=np.int32)
    for i, p in enumerate(pivots):
        perm[[i, p]] = perm[[p, i]]
    return lu, pivots, perm


rule("lu")(lambda a: _per_matrix(_getrf_with_permutation, a))


@rule("eigh")
def _eigh(a, *, lower):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return [v, w]


@rule("svd")
def _svd(a, *, full_matrices):
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return [s, u, vt]


@rule("qr")
def _qr(a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


def _geqrf(m):
    h, tau = np.linalg.qr(m, mode="raw")
    return h.T.astype(m.dtype), tau.astype(m.dtype)


rule("geqrf")(lambda a: _per_matrix(_geqrf, a))


def _householder_product(a, taus):
    """Q's first n columns: H_1 ... H_k with H_i = I - tau_i v_i v_i^H."""
    m, n = a.shape
    q = np.eye(m, dtype=a.dtype)
    for i in reversed(range(taus.shape[-1])):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q = q - taus[i] * np.outer(v, np.conj(v) @ q)
    return (q[:, :n],)


rule("householder_product")(
    lambda a, taus: _per_matrix(_householder_product, a, taus)[0]
)


def _eig_one(m, compute_left: bool, compute_right: bool):
    """LAPACK's left vectors satisfy vl^H a = diag(w) vl^H: those are the right
    eigenvectors of a^H, paired with w by matching conj(eigenvalues)."""
    w, vr = np.linalg.eig(m)
    outs = [w]
    if compute_left:
        wl, vl = np.linalg.eig(m.conj().T)
        order = [int(np.argmin(np.abs(wl.conj() - x))) for x in w]
        outs.append(vl[:, order])
    if compute_right:
        outs.append(vr)
    dtype = np.result_type(m.dtype, np.complex64)
    return tuple(np.asarray(o, dtype) for o in outs)


@rule("eig")
def _eig(a, *, compute_left, compute_right):
    return _per_matrix(lambda m: _eig_one(m, compute_left, compute_right), a)
