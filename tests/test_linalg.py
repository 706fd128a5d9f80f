"""olympus.numpy.linalg and olympus.lax.linalg against NumPy, eagerly, under
jit and vmap and on batches; derivatives of det, slogdet, inv, solve,
cholesky, eigh, lu and triangular_solve against finite differences (f64)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.lax import linalg as lax_linalg
from olympus.test_util import check_grads

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 4)).astype(np.float32)
B = rng.standard_normal((4, 2)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
BATCH = rng.standard_normal((2, 3, 3)).astype(np.float32)
TALL = rng.standard_normal((5, 3)).astype(np.float32)
TOL = {"rtol": 2e-4, "atol": 2e-5}


def close(got, want, err_msg="", **tol):
    np.testing.assert_allclose(np.asarray(got), want, err_msg=err_msg, **(tol or TOL))


# ---- values ---------------------------------------------------------------------
def test_solve_inv_det_slogdet():
    close(jnp.linalg.solve(A, B), np.linalg.solve(A, B))
    close(jnp.linalg.solve(A, B[:, 0]), np.linalg.solve(A, B[:, 0]))
    close(jnp.linalg.inv(A), np.linalg.inv(A))
    close(jnp.linalg.det(A), np.linalg.det(A))
    sign, logdet = jnp.linalg.slogdet(A)
    want_sign, want_log = np.linalg.slogdet(A)
    assert float(sign) == want_sign
    close(logdet, want_log)
    close(jnp.linalg.det(BATCH), np.linalg.det(BATCH))
    close(jnp.linalg.inv(BATCH), np.linalg.inv(BATCH))
    close(
        jnp.linalg.solve(BATCH, BATCH[0]), np.linalg.solve(BATCH, BATCH[0])
    )  # broadcast b


def test_det_of_a_permutation_and_a_singular_matrix():
    swap = np.float32([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    assert float(jnp.linalg.det(swap)) == -1.0
    assert float(jnp.linalg.det(np.float32([[1, 2], [2, 4]]))) == 0.0


def test_cholesky_and_eigh():
    close(jnp.linalg.cholesky(SPD), np.linalg.cholesky(SPD))
    close(jnp.linalg.cholesky(SPD, upper=True), np.linalg.cholesky(SPD).T)
    w, v = jnp.linalg.eigh(SPD)
    close(w, np.linalg.eigvalsh(SPD))
    v = np.asarray(v)
    close(v @ np.diag(np.asarray(w)) @ v.T, SPD, rtol=1e-4, atol=1e-4)
    close(v.T @ v, np.eye(4), atol=1e-5)
    failed = np.asarray(jnp.linalg.cholesky(-SPD))  # not positive definite: NaN factor
    assert np.all(np.isnan(failed[np.tril_indices(4)]))


def test_qr_modes():
    for a in (TALL, TALL.T):
        q, r = jnp.linalg.qr(a)
        close(np.asarray(q) @ np.asarray(r), a)
        close(np.asarray(q).T @ np.asarray(q), np.eye(q.shape[1]), atol=1e-5)
        assert np.allclose(np.tril(np.asarray(r), -1), 0)
        qc, rc = jnp.linalg.qr(a, mode="complete")
        assert qc.shape == (a.shape[0],) * 2 and rc.shape == a.shape
        close(np.asarray(qc) @ np.asarray(rc), a)
        close(
            np.abs(np.asarray(jnp.linalg.qr(a, mode="r"))),
            np.abs(np.linalg.qr(a, mode="r")),
        )


def test_svd_lstsq_pinv_rank():
    u, s, vh = jnp.linalg.svd(TALL, full_matrices=False)
    close(s, np.linalg.svd(TALL, compute_uv=False))
    close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), TALL)
    assert jnp.linalg.svd(TALL).U.shape == (5, 5)
    y = rng.standard_normal(5).astype(np.float32)
    x, residuals, rank, _ = jnp.linalg.lstsq(TALL, y)
    want = np.linalg.lstsq(TALL, y, rcond=None)
    close(x, want[0])
    close(residuals, want[1])
    assert int(rank) == want[2]
    close(jnp.linalg.pinv(TALL), np.linalg.pinv(TALL))
    low_rank = np.outer(np.arange(1.0, 4.0), np.arange(1.0, 5.0)).astype(np.float32)
    assert int(jnp.linalg.matrix_rank(low_rank)) == 1


def test_lstsq_matrix_rhs_wide_and_rank_deficient():
    """x against NumPy for tall, wide and rank-deficient a with (M, K) b;
    residuals are always the squared column norms of a x - b (JAX's default),
    NumPy's empty array with numpy_resid=True where a is not tall and full rank."""
    rhs = rng.standard_normal((5, 2)).astype(np.float32)
    deficient = np.outer(np.arange(1.0, 6.0), np.ones(3)).astype(np.float32)
    for a, b in ((TALL, rhs), (TALL.T, rhs[:3]), (deficient, rhs)):
        x, residuals, rank, s = jnp.linalg.lstsq(a, b)
        want_x, _, want_rank, want_s = np.linalg.lstsq(a, b, rcond=None)
        close(x, want_x, rtol=1e-3, atol=1e-4)
        close(
            residuals,
            np.sum((a @ np.asarray(x) - b) ** 2, axis=0),
            rtol=1e-3,
            atol=1e-4,
        )
        assert int(rank) == want_rank and residuals.shape == (2,)
        close(s, want_s, rtol=1e-4, atol=1e-4)
    close(
        jnp.linalg.lstsq(TALL, rhs, numpy_resid=True)[1],
        np.linalg.lstsq(TALL, rhs, rcond=None)[1],
    )
    assert jnp.linalg.lstsq(deficient, rhs, numpy_resid=True)[1].shape == (0,)
    x, residuals, _, _ = jnp.linalg.lstsq(
        np.arange(6).reshape(3, 2), np.arange(3)
    )  # ints -> float
    close(
        x,
        np.linalg.lstsq(np.arange(6.0).reshape(3, 2), np.arange(3.0), rcond=None)[0],
        atol=1e-5,
    )
    assert residuals.shape == (1,)


def test_lstsq_vmap_matches_a_loop():
    a_batch = rng.standard_normal((3, 5, 3)).astype(np.float32)
    b_batch = rng.standard_normal((3, 5)).astype(np.float32)
    mapped = olympus.vmap(jnp.linalg.lstsq)(a_batch, b_batch)
    shared_a = olympus.vmap(jnp.linalg.lstsq, in_axes=(None, 0))(TALL, b_batch)
    for i in range(3):
        for got, want in zip(mapped, jnp.linalg.lstsq(a_batch[i], b_batch[i])):
            close(np.asarray(got)[i], np.asarray(want))
        close(
            np.asarray(shared_a[0])[i], np.linalg.lstsq(TALL, b_batch[i], rcond=None)[0]
        )


def test_lstsq_grad_in_a_and_b(x64):
    b = _f64(rng.standard_normal((5, 2)))
    both = lambda tall, b, wide, v: (
        *jnp.linalg.lstsq(tall, b)[:2],
        jnp.linalg.lstsq(wide, v)[0],
    )
    check_grads(both, (_f64(TALL), b, _f64(TALL.T), b[:3, 0]), order=1, modes=("rev",))


def test_lstsq_rejects_bad_ranks():
    with pytest.raises(jnp.linalg.LinAlgError, match=r"2-D matrix a .*\(2, 3, 3\)"):
        jnp.linalg.lstsq(BATCH, BATCH)
    with pytest.raises(jnp.linalg.LinAlgError, match=r"M = 5 rows .*\(4,\)"):
        jnp.linalg.lstsq(TALL, np.ones(4, np.float32))
    with pytest.raises(jnp.linalg.LinAlgError, match=r"\(5, 2, 1\)"):
        jnp.linalg.lstsq(TALL, np.ones((5, 2, 1), np.float32))


def _same_spectrum(got, want, tol=1e-4):
    """Each eigenvalue of one set is within tol of one in the other (the
    kernel's order is LAPACK's, and near-equal real parts make sorting fragile)."""
    got, want = np.asarray(got).ravel(), np.asarray(want).ravel()
    assert got.shape == want.shape
    for x, ys in ((got, want), (want, got)):
        assert np.abs(x[:, None] - ys[None, :]).min(axis=1).max() < tol * max(
            1.0, np.abs(ys).max()
        )


def _check_eigenpairs(a, w, v, tol=1e-4):
    """a v = v diag(w) with unit-norm columns: the property that defines them
    (eigenvectors are only defined up to scale and order)."""
    a, w, v = np.asarray(a), np.asarray(w), np.asarray(v)
    np.testing.assert_allclose(
        a @ v, v * w[..., None, :], atol=tol * max(1.0, np.abs(a).max())
    )
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol)


def test_eig_of_general_real_and_complex_matrices():
    w, v = jnp.linalg.eig(A)
    assert w.dtype == v.dtype == np.complex64 and v.shape == (4, 4)
    _check_eigenpairs(A, w, v)
    _same_spectrum(w, np.linalg.eigvals(A))
    _same_spectrum(jnp.linalg.eigvals(A), np.linalg.eigvals(A))
    rotation = np.float32([[0, -1], [1, 0]])  # real matrix, purely imaginary spectrum
    _same_spectrum(jnp.linalg.eigvals(rotation), [1j, -1j])
    c = (A + 1j * A.T).astype(np.complex64)
    wc, vc = jnp.linalg.eig(c)
    assert wc.dtype == np.complex64
    _check_eigenpairs(c, wc, vc)
    _same_spectrum(wc, np.linalg.eigvals(c))
    w, vl, vr = lax_linalg.eig(A)  # left vectors: vl^H a = diag(w) vl^H
    _check_eigenpairs(A.T, np.conj(np.asarray(w)), vl)
    _check_eigenpairs(A, w, vr)


def test_eig_batched_jit_vmap_and_reference():
    from olympus.test_util import reference_call

    big = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w, v = olympus.jit(jnp.linalg.eig)(big)
    assert w.shape == (2, 3, 5) and v.shape == (2, 3, 5, 5)
    _check_eigenpairs(big, w, v)
    mapped = olympus.vmap(jnp.linalg.eigvals)(big[0])
    for i in range(3):
        np.testing.assert_allclose(
            np.asarray(mapped)[i], np.asarray(jnp.linalg.eigvals(big[0, i])), rtol=1e-5
        )
        _same_spectrum(mapped[i], np.linalg.eigvals(big[0, i]))
    ref_w, ref_vl, ref_vr = reference_call(lambda a: lax_linalg.eig(a), BATCH)
    _same_spectrum(ref_w, np.asarray(lax_linalg.eig(BATCH)[0]))
    _check_eigenpairs(BATCH, ref_w, ref_vr)
    _check_eigenpairs(np.swapaxes(BATCH, -1, -2), np.conj(ref_w), ref_vl)


def test_eig_derivatives(x64):
    """eigvals' jvp against central differences of NumPy's eigenvalues, and
    check_grads on the eigenvalues and on |eigenvectors| (invariant to each
    column's phase, which only LAPACK's convention fixes)."""
    a, t = _f64(A), _f64(SPD)
    _, w_dot = olympus.jvp(jnp.linalg.eigvals, (a,), (t,))
    h = 1e-6
    want = (np.linalg.eigvals(a + h * t) - np.linalg.eigvals(a - h * t)) / (
        2 * h
    )  # same LAPACK order
    np.testing.assert_allclose(np.asarray(w_dot), want, rtol=1e-6, atol=1e-8)
    f = lambda a: (
        jnp.real(jnp.linalg.eig(a)[0]),
        jnp.imag(jnp.linalg.eig(a)[0]),
        jnp.abs(jnp.linalg.eig(a)[1]),
    )
    check_grads(f, (a[:3, :3],), order=1)
    with pytest.raises(TypeError, match="left eigenvectors"):
        olympus.jvp(lambda a: lax_linalg.eig(a)[1], (a,), (t,))


def test_eig_errors():
    with pytest.raises(jnp.linalg.LinAlgError, match=r"eig needs .*square.*\(5, 3\)"):
        jnp.linalg.eig(TALL)
    with pytest.raises(TypeError, match="geev needs float32"):
        lax_linalg.eig(A.astype(olympus.numpy.bfloat16))


NORMS = [
    (None, None),
    ("fro", None),
    ("nuc", None),
    (2, None),
    (-2, None),
    (1, None),
    (-1, None),
    (np.inf, None),
    (-np.inf, None),
    (None, 1),
    (1, 0),
    (np.inf, 1),
    (-np.inf, 1),
    (0, 1),
    (3, 1),
    (0.5, 0),
]


def test_norm():
    """Every ord in one jitted program (one compile)."""
    got = olympus.jit(lambda a: [jnp.linalg.norm(a, o, ax) for o, ax in NORMS])(A)
    for (o, ax), value in zip(NORMS, got):
        close(value, np.linalg.norm(A, o, ax), err_msg=f"ord={o}, axis={ax}")


def test_norm_of_vectors_and_keepdims():
    v = B[:, 0]
    close(jnp.linalg.norm(v), np.linalg.norm(v))
    close(
        jnp.linalg.norm(BATCH, axis=(1, 2), keepdims=True),
        np.linalg.norm(BATCH, axis=(1, 2), keepdims=True),
    )


def test_matrix_power():
    for n in (0, 1, 2, 5, -1, -3):
        close(
            jnp.linalg.matrix_power(A, n),
            np.linalg.matrix_power(A, n),
            rtol=1e-3,
            atol=1e-4,
        )


def test_jit_and_vmap():
    f = lambda a, b: (
        jnp.linalg.solve(a, b),
        jnp.linalg.det(a),
        jnp.linalg.eigh(a @ a.T)[0],
    )
    eager = f(BATCH[0], BATCH[1])
    for got, want in zip(olympus.jit(f)(BATCH[0], BATCH[1]), eager):
        close(got, np.asarray(want))
    mapped = olympus.vmap(f)(BATCH, BATCH[::-1])
    for i in range(2):
        for got, want in zip(mapped, f(BATCH[i], BATCH[1 - i])):
            close(np.asarray(got)[i], np.asarray(want))
    mapped_qr = olympus.vmap(lambda a: jnp.linalg.qr(a)[1])(BATCH)
    close(np.abs(np.asarray(mapped_qr)), np.abs(np.linalg.qr(BATCH)[1]))
    mapped_svd = olympus.vmap(lambda a: jnp.linalg.svd(a, compute_uv=False))(BATCH)
    close(mapped_svd, np.linalg.svd(BATCH, compute_uv=False))


def test_errors():
    with pytest.raises(jnp.linalg.LinAlgError, match="square"):
        jnp.linalg.inv(TALL)
    with pytest.raises(jnp.linalg.LinAlgError, match="rows"):
        jnp.linalg.solve(A, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="float32, float64"):
        lax_linalg.lu(A.astype(olympus.numpy.bfloat16))


# ---- the primitives --------------------------------------------------------------
@pytest.mark.parametrize(
    "left_side, lower, transpose_a, unit_diagonal",
    [
        (True, True, False, False),
        (True, False, True, False),
        (False, True, False, True),
        (False, False, True, False),
    ],
)
def test_triangular_solve(left_side, lower, transpose_a, unit_diagonal):
    tri = np.tril(SPD) if lower else np.triu(SPD)
    used = (
        tri - np.diag(np.diag(tri)) + np.eye(4, dtype=np.float32)
        if unit_diagonal
        else tri
    )
    op = used.T if transpose_a else used
    b = B if left_side else B.T
    x = lax_linalg.triangular_solve(
        SPD,
        b,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )
    want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    close(x, want)


def test_lu_factors_and_permutation():
    factors, pivots, perm = lax_linalg.lu(A)
    lower = np.tril(np.asarray(factors), -1) + np.eye(4)
    upper = np.triu(np.asarray(factors))
    close(lower @ upper, A[np.asarray(perm)])
    assert sorted(np.asarray(perm).tolist()) == [0, 1, 2, 3]
    assert np.asarray(pivots).dtype == np.int32 and np.asarray(pivots).min() >= 0
    wide = rng.standard_normal((2, 3)).astype(np.float32)
    f, _, p = lax_linalg.lu(wide)
    close(
        (np.tril(np.asarray(f), -1)[:, :2] + np.eye(2)) @ np.triu(np.asarray(f)),
        wide[np.asarray(p)],
    )


def test_large_matrix_pivots_run_in_a_loop():
    """Beyond a few swaps the pivots become a permutation in a fori_loop."""
    big = rng.standard_normal((2, 20, 20)).astype(np.float32)
    factors, _, perm = lax_linalg.lu(big)
    for i in range(2):
        lower = np.tril(np.asarray(factors)[i], -1) + np.eye(20)
        close(
            lower @ np.triu(np.asarray(factors)[i]),
            big[i][np.asarray(perm)[i]],
            rtol=1e-4,
            atol=1e-4,
        )
    close(
        jnp.linalg.solve(big, big[:, :, :2]),
        np.linalg.solve(big, big[:, :, :2]),
        rtol=1e-3,
        atol=1e-4,
    )


def test_lapack_primitives_directly():
    packed, taus = lax_linalg.geqrf(TALL)
    q = lax_linalg.householder_product(packed, taus)
    close(np.asarray(q) @ np.triu(np.asarray(packed))[:3], TALL)
    _, w = lax_linalg.eigh(SPD)
    close(w, np.linalg.eigvalsh(SPD))
    u, s, vt = lax_linalg.svd(A, full_matrices=True)
    close(np.asarray(u) * np.asarray(s) @ np.asarray(vt), A)
    close(lax_linalg.svd(A, compute_uv=False), s)
    close(lax_linalg.cholesky(SPD), np.linalg.cholesky(SPD))
    c64 = (A + 1j * A.T).astype(np.complex64)
    herm = c64 @ c64.conj().T + 4 * np.eye(4)
    close(lax_linalg.eigh(herm)[1], np.linalg.eigvalsh(herm), rtol=1e-4, atol=1e-4)
    close(
        jnp.linalg.solve(herm, B.astype(np.complex64)),
        np.linalg.solve(herm, B),
        rtol=1e-4,
        atol=1e-5,
    )


# ---- derivatives (float64) --------------------------------------------------------
def _f64(x):
    return np.asarray(x, np.float64)


def test_grad_det_inv_solve(x64):
    """check_grads on det and solve together (each check compiles a few
    programs); inv against its closed-form derivative -a^-1 da a^-1."""
    a, b = _f64(A[:3, :3]), _f64(B[:3])
    check_grads(
        lambda a, b: (jnp.linalg.det(a), jnp.linalg.solve(a, b)), (a, b), order=1
    )
    g = np.asarray(olympus.grad(jnp.linalg.det)(a))
    np.testing.assert_allclose(
        g, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10
    )  # Jacobi's formula
    t = _f64(BATCH[0])
    inv_a = np.linalg.inv(a)
    _, tangent = olympus.jvp(jnp.linalg.inv, (a,), (t,))
    np.testing.assert_allclose(
        np.asarray(tangent), -inv_a @ t @ inv_a, rtol=1e-10, atol=1e-12
    )
    g = np.asarray(olympus.grad(lambda a: jnp.sum(jnp.linalg.inv(a) * t))(a))
    np.testing.assert_allclose(g, -inv_a.T @ t @ inv_a.T, rtol=1e-10, atol=1e-12)


def test_grad_cholesky_and_eigh(x64):
    spd = _f64(SPD[:3, :3])
    # eigenvectors are defined up to sign: check a sign-invariant function of them
    check_grads(
        lambda a: (
            jnp.linalg.cholesky(a),
            jnp.linalg.eigh(a)[0],
            jnp.linalg.eigh(a)[1] ** 2,
        ),
        (spd,),
        order=1,
    )
    g = np.asarray(olympus.grad(lambda a: jnp.linalg.eigh(a)[0][-1])(spd))
    top = np.linalg.eigh(spd)[1][:, -1]
    np.testing.assert_allclose(
        g, np.outer(top, top), rtol=1e-8, atol=1e-10
    )  # dλ = v v^T


def test_grad_primitives(x64):
    a, b = _f64(SPD[:3, :3]), _f64(B[:3])

    def f(a, b):
        return (
            lax_linalg.lu(a)[0],
            lax_linalg.triangular_solve(a, b, left_side=True, lower=True),
            lax_linalg.triangular_solve(
                a,
                b.T,
                left_side=False,
                lower=False,
                transpose_a=True,
                unit_diagonal=True,
            ),
        )

    check_grads(f, (a, b), order=1)


def test_grad_qr_svd_and_spectral_functions(x64):
    tall = _f64(TALL)

    def f(a):
        q, r = jnp.linalg.qr(a)
        # singular vectors up to sign: products within a column / row are invariant
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        wide_u, wide_s, wide_vh = jnp.linalg.svd(a.T, full_matrices=False)
        return (
            q,
            r,
            s,
            u * u[:1, :],
            vh * vh[:, :1],
            wide_s,
            wide_u * wide_u[:1, :],
            wide_vh * wide_vh[:, :1],
        )

    check_grads(f, (tall,), order=1)
    g = np.asarray(olympus.grad(lambda a: jnp.linalg.norm(a, "nuc"))(tall))
    u, _, vh = np.linalg.svd(tall, full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-8, atol=1e-10)  # d|a|_* = U V^H
    q_grad = olympus.grad(lambda a: jnp.sum(lax_linalg.qr(a)[0][:, 0]))(tall)
    assert np.all(np.isfinite(np.asarray(q_grad)))


def test_grad_under_jit_and_vmap(x64):
    batch = _f64(BATCH)
    grads = olympus.vmap(olympus.grad(lambda a: jnp.linalg.slogdet(a)[1]))(batch)
    np.testing.assert_allclose(
        np.asarray(grads), np.linalg.inv(batch).transpose(0, 2, 1), rtol=1e-10
    )
    jitted = olympus.jit(olympus.grad(lambda a: jnp.sum(jnp.linalg.inv(a))))(batch[0])
    eager = olympus.grad(lambda a: jnp.sum(jnp.linalg.inv(a)))(batch[0])
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-10)


def test_array_api_helpers():
    a = BATCH[:, :, :2]  # (2, 3, 2)
    for offset in (0, 1, -1, 3):
        close(jnp.linalg.diagonal(a, offset), np.diagonal(a, offset, -2, -1))
        close(jnp.linalg.trace(a, offset), np.trace(a, offset, axis1=-2, axis2=-1))
    assert jnp.linalg.matrix_transpose(a).shape == (2, 2, 3)
    close(jnp.linalg.outer(B[:, 0], B[:, 1]), np.outer(B[:, 0], B[:, 1]))
    chain = [B[:, 0], A, A.T, B[:, 1]]
    close(jnp.linalg.multi_dot(chain), np.linalg.multi_dot(chain))
    close(jnp.linalg.cond(A), np.linalg.cond(A))
    close(jnp.linalg.cond(A, "fro"), np.linalg.cond(A, "fro"))
    close(jnp.linalg.vector_norm(BATCH), np.linalg.norm(BATCH.ravel()))
    close(
        jnp.linalg.matrix_norm(BATCH, "nuc"),
        np.linalg.norm(BATCH, "nuc", axis=(-2, -1)),
    )


def test_rule_coverage_of_linalg_primitives():
    """Every matrix primitive batches; all but LAPACK's raw QR pieces (used
    through qr) differentiate; triangular_solve, linear in b, transposes."""
    from olympus.transforms.batching import batch_rules
    from olympus.transforms.jvp import jvp_rules
    from olympus.transforms.linearize import transpose_rules

    prims = {
        name: getattr(lax_linalg, f"{name}_p")
        for name in (
            "cholesky",
            "triangular_solve",
            "lu",
            "eigh",
            "qr",
            "svd",
            "geqrf",
            "householder_product",
        )
    }
    assert all(p in batch_rules for p in prims.values())
    assert sorted(n for n, p in prims.items() if p not in jvp_rules) == [
        "geqrf",
        "householder_product",
    ]
    assert lax_linalg.triangular_solve_p in transpose_rules


def test_lax_svd_returns_u_s_vt_as_jax():
    """lax.linalg.svd's results come in JAX's order (u, s, vt); with
    compute_uv=False only the singular values."""
    from jax_oracle import agree

    def prog(ox, a):
        u, s, vt = ox.lax.linalg.svd(a, full_matrices=False)
        alone = ox.lax.linalg.svd(a, compute_uv=False)
        return [t.shape for t in (u, s, vt)], s, alone, ox.jnp.abs(u @ vt)

    agree(prog, np.diag(np.float32([3.0, 2.0, 1.0]))[:, :2].copy())
