"""olympus.numpy.linalg: NumPy's linear algebra on olympus.lax.linalg.

Matrices are the last two axes; leading axes are batches (broadcast between
operands, as NumPy does). solve, inv, det and slogdet go through an LU
factorisation with partial pivoting, cholesky and eigh through their own
kernels, so all of them are differentiable (olympus.grad) and batch (vmap);
qr (m >= n, reduced) and svd (thin) are differentiable too, and with them
lstsq, pinv and the spectral norms.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.lax import linalg as lax_linalg
from olympus.numpy import core as _core
from olympus.numpy import products as _products
from olympus.numpy import reductions as _red
from olympus.numpy import ufuncs as _uf
from olympus.lax.custom_derivatives import custom_jvp
from olympus.numpy.compiled import jit_entry_points
from olympus.tracer.core import aval_of

__all__ = [
    "EigResult",
    "EighResult",
    "LinAlgError",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "trace",
    "vector_norm",
    "matmul",
    "tensordot",
    "vecdot",
    "cross",
    "svdvals",
]


class LinAlgError(ValueError):
    """A linear-algebra function got operands of the wrong rank or shape."""


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _inexact(a):
    """`a` as an array of an inexact dtype (integers become the default float);
    a list is refused, as JAX's linalg refuses it."""
    a = _core.asarray(_core.to_operand(a))
    if not dtypes.is_inexact(a.dtype):
        a = lax.convert_element_type(a, dtypes.canonicalize_dtype(np.float64))
    return a


def _square(name: str, a):
    a = _inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise LinAlgError(
            f"linalg.{name} needs (a batch of) square matrices, got shape {a.shape}"
        )
    return a


def _eye_like(a):
    shape = aval_of(a).shape
    return lax_linalg.diag_matrix(lax.full(shape[:-1], 1, aval_of(a).dtype), shape)


# ---- factorisations -----------------------------------------------------------------
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """L with a = L L^H (or U = L^H with upper=True); NaN if a is not positive definite.

    >>> jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 5.0]]))
    Array([[2., 0.],
           [1., 2.]], dtype=float32)
    """
    a = _square("cholesky", a)
    if (
        symmetrize_input
    ):  # the gradient then treats a as the Hermitian matrix it stands for
        a = lax.mul(
            lax.add(a, lax_linalg.matrix_transpose(a, conjugate=True)),
            np.array(0.5, a.dtype)[()],
        )
    factor = lax_linalg.cholesky(a)
    return lax_linalg.matrix_transpose(factor, conjugate=True) if upper else factor


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of a Hermitian matrix."""
    a = _square("eigh", a)
    lower = (UPLO or "L").upper() == "L"
    if symmetrize_input:
        a = lax.mul(
            lax.add(a, lax_linalg.matrix_transpose(a, conjugate=True)),
            np.array(0.5, a.dtype)[()],
        )
    v, w = lax_linalg.eigh(a, lower=lower)
    return EighResult(w, v)


def eigvalsh(a, UPLO: str | None = None):
    return eigh(a, UPLO).eigenvalues


def eig(a) -> EigResult:
    """Eigenvalues and right eigenvectors (columns, unit 2-norm) of a general
    square matrix: a @ v = v * w. Both are complex (complex64 for float32 a),
    in LAPACK geev's order; CPU only, as in JAX. Differentiable for distinct
    eigenvalues (each vector's derivative keeps its unit norm; its phase is
    LAPACK's convention, so differentiate phase-invariant functions of it).

    >>> jnp.linalg.eig(jnp.array([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
    Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    a = _square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The (complex) eigenvalues of a general square matrix, as eig without vectors."""
    a = _square("eigvals", a)
    (w,) = lax_linalg.eig(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=False
    )
    return w


def qr(a, mode: str = "reduced"):
    """a = Q R with orthonormal Q and upper-triangular R; mode "reduced",
    "complete" or "r" (R only), as NumPy."""
    a = _inexact(a)
    if a.ndim < 2:
        raise LinAlgError(f"linalg.qr needs a matrix, got shape {a.shape}")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(
            f"linalg.qr: unknown mode {mode!r} (use 'reduced', 'complete' or 'r')"
        )
    if mode == "r":
        return lax_linalg.qr(a, full_matrices=False)[1]
    return QRResult(*lax_linalg.qr(a, full_matrices=mode == "complete"))


def svd(
    a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
):
    """a = U diag(S) Vh with S descending (NumPy's order of results)."""
    a = _inexact(a)
    if a.ndim < 2:
        raise LinAlgError(f"linalg.svd needs a matrix, got shape {a.shape}")
    # singular values alone come from the thin factorisation (differentiable for any shape)
    u, s, vt = lax_linalg.svd(a, full_matrices=full_matrices and compute_uv)
    return SVDResult(u, s, vt) if compute_uv else s


# ---- solving ------------------------------------------------------------------------
def _lu_solve(factors, perm, b):
    """x with a x = b from P a = L U: x = U^-1 L^-1 (P b); b has matrix columns."""
    p = lax_linalg.permutation_matrix(perm, aval_of(factors).dtype)
    y = lax_linalg.triangular_solve(
        factors, lax_linalg.matmul(p, b), left_side=True, lower=True, unit_diagonal=True
    )
    return lax_linalg.triangular_solve(factors, y, left_side=True, lower=False)


def _broadcast_batch(a, b, b_core: int):
    """a (matrices) and b (with `b_core` core axes) broadcast to one batch shape."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[: b.ndim - b_core])
    a = _core.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = _core.broadcast_to(b, (*batch, *b.shape[b.ndim - b_core :]))
    return a, b


def solve(a, b):
    """The solution x of the linear system a @ x = b.

    More accurate and faster than inv(a) @ b.

    Args:
      a: an array (..., n, n).
      b: an array (..., n) or (..., n, k).

    Returns:
      x, of b's shape.

    Raises:
      LinAlgError: the shapes do not fit.

    Example:
      >>> jnp.linalg.solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.array([2.0, 2.0]))
      Array([1. , 0.5], dtype=float32)
    """
    a = _square("solve", a)
    b = _core.asarray(b)
    dtype = dtypes.promote_types(a.dtype, b.dtype)
    a, b = lax.convert_element_type(a, dtype), lax.convert_element_type(b, dtype)
    vector = b.ndim == 1  # NumPy 2's rule: any other b is a stack of matrices
    if vector:
        b = lax.expand_dims(b, (b.ndim,))
    a, b = _broadcast_batch(a, b, 2)
    if b.shape[-2] != a.shape[-1]:
        raise LinAlgError(
            f"linalg.solve: a has shape {a.shape} but b has {b.shape[-2]} rows"
        )
    factors, _, perm = lax_linalg.lu(a)
    x = _lu_solve(factors, perm, b)
    return lax.squeeze(x, (x.ndim - 1,)) if vector else x


def inv(a):
    """The inverse of square matrix (matrices) `a`.

    Computed by LU factorization; prefer solve for a @ x = b. A singular matrix gives inf/NaN entries, not an error.

    Args:
      a: an array of shape (..., n, n).

    Returns:
      The inverses, of a's shape.

    Raises:
      LinAlgError: a is not a batch of square matrices.

    Example:
      >>> jnp.linalg.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))
      Array([[0.5 , 0.  ], [0.  , 0.25]], dtype=float32)
    """
    a = _square("inv", a)
    return solve(a, _eye_like(a))


def _lu_det_parts(a):
    """(diagonal of U, parity of the pivoting as +-1) of a's LU factorisation."""
    factors, pivots, _ = lax_linalg.lu(a)
    swaps = lax.ne(
        pivots,
        lax.broadcasted_iota(np.int32, aval_of(pivots).shape, aval_of(pivots).ndim - 1),
    )
    count = lax.reduce_sum(
        lax.convert_element_type(swaps, np.int32), (aval_of(pivots).ndim - 1,)
    )
    odd = lax.eq(lax.rem(count, np.int32(2)), np.int32(1))
    parity = lax.select(
        odd,
        lax.full(aval_of(count).shape, -1, a.dtype),
        lax.full(aval_of(count).shape, 1, a.dtype),
    )
    return lax_linalg.diagonal(factors), parity


def det(a):
    """The determinant of square matrix (matrices) `a`.

    Via LU factorization; differentiable (also at singular matrices).

    Args:
      a: an array (..., n, n).

    Returns:
      The determinants, of shape a.shape[:-2].

    Raises:
      LinAlgError: a is not a batch of square matrices.

    Example:
      >>> jnp.linalg.det(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
      Array(-2., dtype=float32)
    """
    a = _square("det", a)
    n = aval_of(a).shape[-1]
    if n in (2, 3):
        return _det_polynomial(a, n)
    return _det_lu(a)


@custom_jvp
def _det_lu(a):
    diag, parity = _lu_det_parts(a)
    return _positive_zero(lax.mul(parity, lax.reduce_prod(diag, (diag.ndim - 1,))))


@_det_lu.defjvp
def _det_lu_jvp(primals, tangents):
    """JAX's: d det = trace(adjugate(a) @ da), the adjugate product from the LU
    factors so that it is finite (and JAX's value) at singular matrices."""
    (a,), (da,) = primals, tangents
    det_a, adjugate_da = _cofactor_solve(a, da)
    return det_a, _trace(adjugate_da)


def _trace(x):
    n = aval_of(x).shape[-1]
    eye = lax.convert_element_type(_identity(n), x.dtype)
    return lax.reduce_sum(_uf.multiply(x, eye), (x.ndim - 2, x.ndim - 1))


def _identity(n: int):
    rows = lax.broadcasted_iota(np.int32, (n, n), 0)
    return lax.eq(rows, lax.broadcasted_iota(np.int32, (n, n), 1))


def _cofactor_solve(a, b):
    """(det(a), adjugate(a) @ b) as JAX computes them: with a = P L U, the last
    pivot of U is replaced by 1 / (product of the others), so a matrix of rank
    n - 1 gives its (finite) adjugate; one of lower rank gives zeros."""
    n = aval_of(a).shape[-1]
    if n < 2:  # adjugate([[x]]) is [[1]]
        return _det_lu(a), b
    lu, pivots, permutation = lax_linalg.lu(a)
    diag, parity = _lu_det_parts(a)
    partial_det = _uf.multiply(lax.cumprod(diag, axis=diag.ndim - 1), parity[..., None])
    before_last = partial_det[..., n - 2 : n - 1, None]
    corner = _uf.logical_and(_identity(n), lax.eq(_row_iota(n), np.int32(n - 1)))
    lu = _uf.where(corner, _uf.divide(lax.full_like(before_last, 1), before_last), lu)
    ones = lax.full(aval_of(b).shape[:-1] + (1,), 1, aval_of(b).dtype)
    probe = lax_linalg.triangular_solve(lu, ones, left_side=True, lower=False)
    low_rank = _red.any(_uf.logical_not(_uf.isfinite(probe)), axis=(-2, -1))
    zero = lax.full_like(b, 0)
    x = _uf.where(low_rank[..., None, None], zero, b)
    onehot = _uf.equal(permutation[..., :, None], _row_iota(n)[None, :])
    x = _red.matmul(lax.convert_element_type(onehot, aval_of(b).dtype), x)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)  # fmt: skip
    det_a = partial_det[..., n - 1]
    scale = _uf.where(lax.eq(_row_iota(n), np.int32(n - 1))[:, None], lax.full_like(det_a, 1)[..., None, None], det_a[..., None, None])  # fmt: skip
    x = lax_linalg.triangular_solve(lu, _uf.multiply(x, scale), left_side=True, lower=False)  # fmt: skip
    return det_a, _uf.where(low_rank[..., None, None], zero, x)


def _row_iota(n: int):
    return lax.iota(np.int32, n)


def _entry(a, i: int, j: int):
    """a[..., i, j]."""
    *batch, _, _ = aval_of(a).shape
    start = [0] * len(batch) + [i, j]
    piece = lax.slice(a, start, [*batch, i + 1, j + 1])
    return lax.reshape(piece, tuple(batch))


def _det_polynomial(a, n: int):
    """The Leibniz formula: a sum over permutations of signed entry products."""
    if n == 2:
        terms = [((0, 1), 1), ((1, 0), -1)]
    else:
        terms = [((0, 1, 2), 1), ((1, 2, 0), 1), ((2, 0, 1), 1),
                 ((2, 1, 0), -1), ((0, 2, 1), -1), ((1, 0, 2), -1)]  # fmt: skip
    total = None
    for columns, sign in terms:
        product = _entry(a, 0, columns[0])
        for row in range(1, n):
            product = lax.mul(product, _entry(a, row, columns[row]))
        if total is None:
            total = product
        else:
            total = (lax.add if sign > 0 else lax.sub)(total, product)
    return total


def slogdet(a) -> SlogdetResult:
    """(sign, log|det|), without the overflow of det for large matrices."""
    a = _square("slogdet", a)
    if aval_of(a).shape[-1] == 2 and not dtypes.is_complex(a.dtype):
        # From the polynomial, as JAX: log|det|'s derivative is adjugate / det,
        # +-inf (not NaN) where `a` is singular.
        d = _det_polynomial(a, 2)
        return SlogdetResult(lax.sign(d), lax.log(lax.abs(d)))
    diag, parity = _lu_det_parts(a)
    axis = (diag.ndim - 1,)
    magnitude = lax.abs(diag)
    logabsdet = lax.reduce_sum(lax.log(magnitude), axis)
    if dtypes.is_complex(a.dtype):
        unit = lax.div(diag, lax.convert_element_type(magnitude, a.dtype))
        sign = lax.mul(parity, lax.reduce_prod(unit, axis))
    else:
        sign = lax.mul(parity, lax.reduce_prod(lax.sign(diag), axis))
    return SlogdetResult(_positive_zero(sign), logabsdet)


def _positive_zero(x):
    """x with -0.0 as +0.0: a singular matrix's det and sign are 0, as JAX's."""
    zero = lax.full(aval_of(x).shape, np.zeros((), aval_of(x).dtype)[()])
    return lax.select(lax.eq(x, zero), zero, x)


def matrix_power(a, n: int):
    """a @ a @ ... (n times) by repeated squaring; n < 0 inverts first, n = 0 gives I."""
    a = _square("matrix_power", a)
    n = int(n)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else lax_linalg.matmul(result, base)
        n >>= 1
        if n:
            base = lax_linalg.matmul(base, base)
    return _eye_like(a) if result is None else result


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse, from the SVD (singular values at or
    below rtol * max(s) are treated as zero). `rtol` may be an array, one
    tolerance per matrix of a stack; `rcond` is its older name."""
    rtol = _one_tolerance("pinv", rtol, "rcond", rcond)
    a = _inexact(a)
    m, n = a.shape[-2:]
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    if rtol is None:
        rtol = 10 * max(m, n) * float(np.finfo(_real(a.dtype)).eps)
    cutoff = _uf.multiply(_red.max(s, axis=-1, keepdims=True), _per_matrix(rtol, s))
    keep = lax.gt(s, _core.broadcast_to(cutoff, s.shape))
    inv_s = lax.select(
        keep,
        lax.div(
            lax.full(s.shape, 1, s.dtype),
            lax.select(keep, s, lax.full(s.shape, 1, s.dtype)),
        ),
        lax.full(s.shape, 0, s.dtype),
    )
    scaled = lax.mul(
        _swap_conj(vh),
        lax.broadcast_in_dim(
            lax.convert_element_type(inv_s, a.dtype),
            (*vh.shape[:-2], n, s.shape[-1]),
            (*range(s.ndim - 1), s.ndim),
        ),
    )
    return lax_linalg.matmul(scaled, _swap_conj(u))


def _swap_conj(x):
    return lax_linalg.matrix_transpose(x, conjugate=True)


def _real(dtype):
    return lax_linalg._real_dtype(dtype)


def _lstsq_operands(a, b):
    """a as an (M, N) inexact matrix and b as (M, K) of its dtype, and whether b
    was a vector; JAX's lstsq takes exactly these ranks (vmap for batches)."""
    a = _inexact(a)
    b = _core.asarray(b)
    if a.ndim != 2:
        raise LinAlgError(
            f"linalg.lstsq needs a 2-D matrix a of shape (M, N), got shape {a.shape}; "
            "map over a batch with olympus.vmap"
        )
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise LinAlgError(
            f"linalg.lstsq needs b of shape (M,) or (M, K) with M = {a.shape[0]} rows "
            f"like a {a.shape}, got shape {b.shape}"
        )
    dtype = dtypes.promote_types(a.dtype, _inexact(b).dtype)
    a, b = lax.convert_element_type(a, dtype), lax.convert_element_type(b, dtype)
    vector = b.ndim == 1
    return a, (lax.expand_dims(b, (1,)) if vector else b), vector


def _lstsq_solution(a, b, rcond):
    """(x, residuals, rank, s) for 2-D a and b: x = V diag(1/s) U^H b over the
    singular values above rcond * max(s); residuals = |a x - b|^2 per column."""
    m, n = a.shape
    u, s, vh = svd(a, full_matrices=False)
    eps = float(np.finfo(_real(a.dtype)).eps)
    rcond = eps * max(m, n) if rcond is None else float(rcond)
    keep = lax.gt(s, lax.mul(_red.max(s), np.array(rcond, s.dtype)[()]))
    safe = lax.select(keep, s, lax.full(s.shape, 1, s.dtype))
    inv_s = lax.select(
        keep,
        lax.div(lax.full(s.shape, 1, s.dtype), safe),
        lax.full(s.shape, 0, s.dtype),
    )
    uh_b = lax_linalg.matmul(_swap_conj(u), b)
    scaled = lax.mul(
        uh_b,
        lax.broadcast_in_dim(
            lax.convert_element_type(inv_s, a.dtype), uh_b.shape, (0,)
        ),
    )
    x = lax_linalg.matmul(_swap_conj(vh), scaled)
    rank = lax.reduce_sum(lax.convert_element_type(keep, np.int32), (0,))
    residual = lax.sub(lax_linalg.matmul(a, x), b)
    return x, lax.reduce_sum(_squared_magnitude(residual), (0,)), rank, s


def _squared_magnitude(x):
    """|x|^2 elementwise, smooth at 0 (unlike abs(x)**2 for complex x)."""
    if dtypes.is_complex(aval_of(x).dtype):
        re, im = lax.real(x), lax.imag(x)
        return lax.add(lax.mul(re, re), lax.mul(im, im))
    return lax.mul(x, x)


def _lstsq(a, b, rcond=None):
    """The compiled body of lstsq (one dispatch when called eagerly)."""
    a, b, vector = _lstsq_operands(a, b)
    x, residuals, rank, s = _lstsq_solution(a, b, rcond)
    return (lax.squeeze(x, (1,)) if vector else x), residuals, rank, s


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """(x, residuals, rank, s): x minimises |a x - b|_2, from the SVD of a.

    a is (M, N) and b (M,) or (M, K), as in JAX; map over batches with
    olympus.vmap (the function is differentiable in a and b for distinct
    non-zero singular values). residuals are the squared norms of the columns
    of a x - b, shape (1,) or (K,), always computed (JAX's default); with
    numpy_resid=True they are empty when rank < N or M <= N, as NumPy
    returns them, which needs a concrete rank (not under jit).

    >>> jnp.linalg.lstsq(jnp.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), jnp.array([1.0, 2.0, 3.0]))[0]
    Array([1., 2.], dtype=float32)
    """
    x, residuals, rank, s = _lstsq(a, b, rcond)
    if numpy_resid:
        m, n = _core.asarray(a).shape
        if int(rank) < n or m <= n:
            residuals = _core.asarray(np.zeros((0,), residuals.dtype))
    return x, residuals, rank, s


# ---- norms ----------------------------------------------------------------------------
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """A vector or matrix norm.

    For vectors (one axis) `ord` is p (2 by default, inf, -inf, 0); for matrices (two axes) 'fro', 'nuc', 1, 2, inf and their negatives.

    Args:
      x: an array.
      ord: the norm's order.
      axis: None (the whole array as a vector, or a matrix for 2-D), an int, or a pair.
      keepdims: if True, reduced axes stay with size 1.

    Returns:
      The norms, in a real inexact dtype.

    Raises:
      ValueError: ord is not valid for the number of axes.

    Example:
      >>> jnp.linalg.norm(jnp.array([3.0, 4.0]))
      Array(5., dtype=float32)
    """
    x = _inexact(x)
    if axis is None:
        if ord is None:
            return _frobenius(x, tuple(range(x.ndim)), keepdims)
        axis = tuple(range(x.ndim))
        if x.ndim > 2:
            raise LinAlgError(
                f"linalg.norm: ord={ord!r} needs axis for a {x.ndim}-D array"
            )
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a % x.ndim for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, axes[0], ord, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, axes, ord, keepdims)
    raise LinAlgError(f"linalg.norm: axis must name one or two axes, got {axis!r}")


def _abs(x):
    return lax.abs(x)  # real magnitudes for complex x too


def _frobenius(x, axes, keepdims):
    mag = _abs(x)
    return _uf.sqrt(_red.sum(lax.mul(mag, mag), axis=axes, keepdims=keepdims))


def _vector_norm(x, axis: int, ord, keepdims):
    mag = _abs(x)
    if ord is None or ord == 2:
        return _frobenius(x, (axis,), keepdims)
    if ord == np.inf:
        return _red.max(mag, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return _red.min(mag, axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = lax.convert_element_type(
            lax.ne(mag, np.array(0, mag.dtype)[()]), mag.dtype
        )
        return _red.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _red.sum(mag, axis=axis, keepdims=keepdims)
    p = float(ord)
    total = _red.sum(
        lax.pow(mag, np.array(p, mag.dtype)[()]), axis=axis, keepdims=keepdims
    )
    return lax.pow(total, np.array(1 / p, mag.dtype)[()])


def _matrix_norm(x, axes, ord, keepdims):
    row_axis, col_axis = axes
    if ord is None or ord == "fro":
        return _frobenius(x, axes, keepdims)
    mag = _abs(x)
    if ord in (1, -1, np.inf, -np.inf):
        summed_axis, reduced_axis = (
            (row_axis, col_axis) if ord in (1, -1) else (col_axis, row_axis)
        )
        sums = _red.sum(mag, axis=summed_axis, keepdims=True)
        pick = _red.max if ord in (1, np.inf) else _red.min
        out = pick(sums, axis=reduced_axis, keepdims=True)
        return out if keepdims else lax.squeeze(out, tuple(sorted(axes)))
    if ord in (2, -2, "nuc"):
        moved = _core_moveaxes(x, axes)
        s = svd(moved, compute_uv=False)
        if ord == "nuc":
            out = _red.sum(s, axis=-1)
        else:
            out = (_red.max if ord == 2 else _red.min)(s, axis=-1)
        if keepdims:
            for a in sorted(axes):
                out = lax.expand_dims(out, (a,))
        return out
    raise LinAlgError(f"linalg.norm: invalid ord {ord!r} for a matrix norm")


def _core_moveaxes(x, axes):
    rest = [d for d in range(x.ndim) if d not in axes]
    return lax.transpose(x, (*rest, *axes))


def matrix_rank(a, rtol=None, *, hermitian: bool = False, tol=None):
    """The number of singular values above the tolerance. As JAX's, a given
    `rtol` (or its older name `tol`; an array gives one per matrix) is
    compared with the singular values directly; the default is
    max(s) * max(m, n) * eps."""
    rtol = _one_tolerance("matrix_rank", rtol, "tol", tol)
    a = _inexact(a)
    if a.ndim < 2:
        return _red.any(lax.ne(a, lax.full(a.shape, 0, a.dtype))).astype(np.int32)
    s = svd(a, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        eps = float(np.finfo(_real(a.dtype)).eps)
        cutoff = lax.mul(
            _red.max(s, axis=-1, keepdims=True),
            np.array(max(a.shape[-2:]) * eps, s.dtype)[()],
        )
    else:
        cutoff = _per_matrix(rtol, s)
    above = _uf.greater(s, cutoff)
    return _red.sum(lax.convert_element_type(above, np.int32), axis=-1)


class ToleranceError(ValueError):
    """Both a tolerance and its older name given (pinv's rcond, matrix_rank's tol)."""


def _one_tolerance(name: str, rtol, old_name: str, old):
    if old is None:
        return rtol
    if rtol is not None:
        raise ToleranceError(
            f"jnp.linalg.{name}: only one of rtol and {old_name} may be specified; "
            f"drop {old_name}= (its older name)"
        )
    return old


def _per_matrix(rtol, s):
    """A tolerance (a scalar or one per matrix) as a column against the
    singular values `s` (..., k)."""
    rtol = _core.asarray(rtol)
    return lax.expand_dims(lax.convert_element_type(rtol, s.dtype), (rtol.ndim,))


# ---- array-API helpers ------------------------------------------------------------------
def matrix_transpose(x):
    """Swaps the last two axes."""
    return lax_linalg.matrix_transpose(_core.asarray(x))


def diagonal(x, offset: int = 0):
    """The diagonal of the last two axes (offset > 0 above it, < 0 below)."""
    x = _core.asarray(x)
    if x.dtype == np.bool_:  # the lax rule sums a masked matrix: via uint8
        return lax.convert_element_type(
            diagonal(lax.convert_element_type(x, np.uint8), offset), np.bool_
        )
    rows, cols = x.shape[-2:]
    start = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - start[0], cols - start[1]))
    if length == 0:
        start = (0, 0)
    square = lax.slice(
        x,
        (0,) * (x.ndim - 2) + start,
        (*x.shape[:-2], start[0] + length, start[1] + length),
    )
    return lax_linalg.diagonal(square)


def trace(x, offset: int = 0, *, dtype=None):
    """The sum of each matrix's diagonal; small integers widen as in sum."""
    return _red.sum(diagonal(x, offset), axis=-1, dtype=dtype)


def outer(x1, x2):
    x1, x2 = _core.asarray(x1), _core.asarray(x2)
    dtype = dtypes.promote_types(x1.dtype, x2.dtype)
    x1, x2 = lax.convert_element_type(x1, dtype), lax.convert_element_type(x2, dtype)
    return lax.dot_general(x1, x2, (((), ()), ((), ())))


def multi_dot(arrays):
    """The product of a chain of matrices (1-D ends are vectors), left to right."""
    arrays = [_core.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise LinAlgError("linalg.multi_dot needs at least two arrays")
    out = arrays[0]
    for a in arrays[1:]:
        dtype = dtypes.promote_types(out.dtype, a.dtype)
        out = lax.dot(
            lax.convert_element_type(out, dtype), lax.convert_element_type(a, dtype)
        )
    return out


def cond(x, p=None):
    """The condition number |x| |x^-1| (2-norm by default: s_max / s_min)."""
    x = _inexact(x)
    if p is None or p in (2, -2):
        s = svd(x, compute_uv=False)
        big, small = _red.max(s, axis=-1), _red.min(s, axis=-1)
        return lax.div(big, small) if p != -2 else lax.div(small, big)
    return lax.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


def vector_norm(x, axis=None, keepdims: bool = False, ord=2):
    x = _inexact(x)
    if axis is None:
        x, axis = lax.reshape(x, (x.size,)), 0
    return norm(x, ord, axis, keepdims)


def matrix_norm(x, ord="fro", keepdims: bool = False):
    return norm(x, ord, (-2, -1), keepdims)


def matmul(x1, x2, /):
    """The Array API's linalg.matmul: `x1 @ x2`."""
    return _red.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """The Array API's linalg.tensordot (`axes` by keyword)."""
    return _red.tensordot(x1, x2, axes)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The conjugated dot product of vectors along `axis`, broadcasting the rest.

    sum(conj(x1) * x2) along `axis`, broadcasting the other axes; with
    `preferred_element_type` the operands are widened to it first, so the
    products and their sum are exact in it (int8 vectors summed in int32).
    `precision` is dot_general's hint, which elementwise products on the host do
    not need.

    Args:
      x1: an array of vectors along axis (conjugated).
      x2: an array of vectors along axis; the batch axes broadcast.
      axis: the axis to work along; negative counts from the end.
      precision: the matmul precision (None: the default).
      preferred_element_type: the accumulation and result dtype (None: the
        inputs').

    Returns:
      An array of the broadcast batch shape.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: axis is out of range for the array's rank.
      IncompatibleShapesError: the vector axes differ in length.

    Example:
      >>> jnp.vecdot(jnp.ones((2, 3)), jnp.ones(3))
      Array([3., 3.], dtype=float32)
    """
    del precision
    if preferred_element_type is not None:
        x1, x2 = (_core.asarray(_core.to_operand(x)) for x in (x1, x2))
        x1 = lax.convert_element_type(x1, preferred_element_type)
        x2 = lax.convert_element_type(x2, preferred_element_type)
    product = _uf.multiply(_uf.conjugate(x1), x2)
    if product.dtype == np.bool_:  # a boolean dot is an OR of ANDs, as JAX's
        return _red.any(product, axis=axis)
    return _red.sum(product, axis=axis, dtype=product.dtype)


def cross(x1, x2, /, *, axis: int = -1):
    """The cross product of 3-vectors along `axis` (the Array API's linalg.cross)."""
    x1, x2 = _core.to_operand(x1), _core.to_operand(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            f"linalg.cross needs 3-vectors along axis {axis}, got shapes "
            f"{x1.shape} and {x2.shape}"
        )
    return _products.cross(x1, x2, axis=axis)


def svdvals(x, /):
    """The singular values of (a stack of) matrices, in descending order."""
    return svd(x, compute_uv=False)


# ---- compiled entry points ---------------------------------------------------------------
# Each public function is jitted (static: its non-array options), so an eager
# call costs one dispatch instead of one per lax operation, as in JAX.
_STATIC_OPTIONS = {
    "cholesky": ("upper", "symmetrize_input"),
    "eigh": ("UPLO", "symmetrize_input"),
    "eigvalsh": ("UPLO",),
    "eig": (),
    "eigvals": (),
    "qr": ("mode",),
    "svd": ("full_matrices", "compute_uv", "hermitian"),
    "solve": (),
    "inv": (),
    "det": (),
    "slogdet": (),
    "matrix_power": ("n",),
    "pinv": ("hermitian",),
    "_lstsq": ("rcond",),
    "norm": ("ord", "axis", "keepdims"),
    "matrix_rank": ("hermitian",),
    "cond": ("p",),
}


jit_entry_points(globals(), _STATIC_OPTIONS)
