"""Linear-algebra primitives on (batches of) matrices: the last two axes are
the matrix, leading axes a batch.

cholesky and triangular_solve lower to StableHLO ops (XLA expands them);
lu, eigh, geqrf, householder_product and svd lower to the LAPACK kernels
jaxlib ships (backends/xla/lapack.py). Derivatives: cholesky, triangular_solve
(jvp in both operands, transpose in b), lu (square matrices) and eigh have jvp
rules, which is what olympus.numpy.linalg's solve, inv, det, slogdet,
cholesky and eigh differentiate through; qr (a composite of geqrf and
householder_product, m >= n) and svd (thin, distinct singular values) too.
"""

from __future__ import annotations

import numpy as np

from olympus.backends.xla import lapack
from olympus.backends.xla.lowering import RuleContext, compare, lower_fun
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax import ops as lax
from olympus.lax.base import define_primitive, same_dtypes
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, batch_to_front
from olympus.transforms.ad_util import Zero, instantiate, is_zero
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import is_undefined, transpose_rules

__all__ = [
    "EigDerivativeError",
    "cholesky",
    "cholesky_p",
    "eig",
    "eig_p",
    "eigh",
    "eigh_p",
    "geqrf",
    "geqrf_p",
    "householder_product",
    "householder_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "qr",
    "qr_p",
    "svd",
    "svd_p",
    "triangular_solve",
    "triangular_solve_p",
]


# ---- shape-rule helpers ------------------------------------------------------------
def _check_matrix(name: str, a: ShapedArray, square: bool = False) -> None:
    if a.ndim < 2:
        raise OlympusTypeError(
            f"{name} needs a matrix (rank >= 2), got {a.str_short()}"
        )
    if not dtypes.is_inexact(a.dtype):
        raise OlympusTypeError(
            f"{name} needs floating-point or complex matrices, got {a.str_short()}"
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise OlympusTypeError(f"{name} needs square matrices, got {a.str_short()}")


def _real_dtype(dtype):
    return {
        np.dtype(np.complex64): np.dtype(np.float32),
        np.dtype(np.complex128): np.dtype(np.float64),
    }.get(np.dtype(dtype), np.dtype(dtype))


# ---- lax-level helpers used by the rules -------------------------------------------
def matrix_transpose(x, conjugate: bool = False):
    """Swaps the last two axes (and conjugates complex values when asked)."""
    nd = aval_of(x).ndim
    out = lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))
    return _conj(out) if conjugate else out


def _conj(x):
    if not dtypes.is_complex(aval_of(x).dtype):
        return x
    return lax.complex(lax.real(x), lax.neg(lax.imag(x)))


def matmul(a, b):
    """Batched a @ b on the last two axes (batch shapes equal)."""
    nd = aval_of(a).ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def triangle_mask(shape, lower: bool, k: int = 0):
    """True on and below (lower) / above the k-th diagonal of the last two axes."""
    nd = len(shape)
    rows = lax.broadcasted_iota(np.int32, shape, nd - 2)
    cols = lax.broadcasted_iota(np.int32, shape, nd - 1)
    return (
        lax.ge(lax.add(rows, np.int32(k)), cols)
        if lower
        else lax.le(lax.add(rows, np.int32(k)), cols)
    )


def _where(mask, x, fill=0):
    aval = aval_of(x)
    return lax.select(
        mask, x, lax.full(aval.shape, np.array(fill).astype(aval.dtype)[()])
    )


def tril(x, k: int = 0):
    return _where(triangle_mask(aval_of(x).shape, True, k), x)


def triu(x, k: int = 0):
    return _where(triangle_mask(aval_of(x).shape, False, k), x)


def diagonal(x):
    """The diagonal of the last two axes (exact: a masked sum of one element per row)."""
    aval = aval_of(x)
    eye = lax.eq(
        lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 2),
        lax.broadcasted_iota(np.int32, aval.shape, aval.ndim - 1),
    )
    return lax.reduce_sum(_where(eye, x), (aval.ndim - 1,))


def diag_matrix(d, like_shape):
    """A matrix of `like_shape` with `d` (last axis) on its diagonal."""
    nd = len(like_shape)
    full = lax.broadcast_in_dim(d, like_shape, tuple(range(nd - 1)))
    eye = lax.eq(
        lax.broadcasted_iota(np.int32, like_shape, nd - 2),
        lax.broadcasted_iota(np.int32, like_shape, nd - 1),
    )
    return _where(eye, full)


def hermitian_from_triangle(x, lower: bool):
    """The Hermitian matrix a kernel that reads only one triangle of `x` sees."""
    strict = matrix_transpose(
        _where(triangle_mask(aval_of(x).shape, lower, -1 if lower else 1), x), True
    )
    return lax.add(tril(x) if lower else triu(x), strict)


def _batch_all_to_front(axis_size, vals, dims):
    return [batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)]


def _front_batch_rule(primitive):
    """Batching by moving the batch to the front: the ops take leading batch dims."""

    def rule(axis_size, vals, dims, **params):
        out = primitive.bind(*_batch_all_to_front(axis_size, vals, dims), **params)
        return (out, [0] * len(out)) if primitive.multiple_results else (out, 0)

    return rule


# ---- cholesky ------------------------------------------------------------------
def _cholesky_abstract_eval(a: ShapedArray) -> ShapedArray:
    _check_matrix("cholesky", a, square=True)
    return a.update(weak_type=False)


def _cholesky_lower(ctx, a):
    """XLA's cholesky leaves the upper triangle unspecified: it is zeroed here."""
    aval = ctx.avals_in[0]
    factor = ctx.op("stablehlo.cholesky", [a], "lower = true")
    nd = aval.ndim
    idx = ShapedArray(aval.shape, np.dtype(np.int32))
    rows = ctx.op(
        "stablehlo.iota", [], f"iota_dimension = {nd - 2} : i64", result_avals=[idx]
    )
    cols = ctx.op(
        "stablehlo.iota", [], f"iota_dimension = {nd - 1} : i64", result_avals=[idx]
    )
    keep = compare(ctx.emitter, rows, cols, "GE", idx.dtype, aval.shape)
    zero_aval = ShapedArray((), aval.dtype)
    zero = ctx.emitter.constant(np.zeros((), aval.dtype), zero_aval)
    zeros = ctx.op(
        "stablehlo.broadcast_in_dim",
        [zero],
        "broadcast_dimensions = array<i64>",
        result_avals=[aval],
    )
    return ctx.op("stablehlo.select", [keep, factor, zeros])


cholesky_p = define_primitive("cholesky", _cholesky_abstract_eval, _cholesky_lower)
batch_rules[cholesky_p] = _front_batch_rule(cholesky_p)


def _cholesky_jvp(primals, tangents):
    """dL = L phi(L^-1 dA L^-H), phi taking the lower triangle with half the diagonal."""
    (a,), (a_dot,) = primals, tangents
    factor = cholesky_p.bind(a)
    if is_zero(a_dot):
        return factor, Zero(aval_of(factor))
    a_dot = hermitian_from_triangle(a_dot, lower=True)
    left = triangular_solve(factor, a_dot, left_side=True, lower=True)
    middle = triangular_solve(
        factor, left, left_side=False, lower=True, transpose_a=True, conjugate_a=True
    )
    shape = aval_of(middle).shape
    half_diagonal = lax.mul(
        diag_matrix(diagonal(middle), shape), np.array(0.5, aval_of(a).dtype)[()]
    )
    phi = lax.sub(tril(middle), half_diagonal)
    return factor, matmul(factor, phi)


jvp_rules[cholesky_p] = _cholesky_jvp


# ---- triangular_solve ------------------------------------------------------------
def _triangular_solve_abstract_eval(
    a: ShapedArray,
    b: ShapedArray,
    *,
    left_side,
    lower,
    transpose_a,
    conjugate_a,
    unit_diagonal,
) -> ShapedArray:
    _check_matrix("triangular_solve", a, square=True)
    same_dtypes("triangular_solve", (a, b))
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise OlympusTypeError(
            f"triangular_solve: a and b need the same batch shape, got {a.str_short()} and {b.str_short()}"
        )
    m = a.shape[-1]
    if (b.shape[-2] if left_side else b.shape[-1]) != m:
        side = "rows" if left_side else "columns"
        raise OlympusTypeError(
            f"triangular_solve: b must have {m} {side} to match a, got {a.str_short()} and {b.str_short()}"
        )
    return b.update(weak_type=False)


def _triangular_solve_lower(
    ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    if (
        conjugate_a and not transpose_a
    ):  # StableHLO has no plain conjugate: bind on conj(a) instead
        raise OlympusTypeError(
            "triangular_solve: conjugate_a without transpose_a is not lowered"
        )
    mode = (
        ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    )
    attrs = (
        f"left_side = {str(left_side).lower()}, lower = {str(lower).lower()}, "
        f"transpose_a = #stablehlo<transpose {mode}>, unit_diagonal = {str(unit_diagonal).lower()}"
    )
    return ctx.op("stablehlo.triangular_solve", [a, b], attrs)


triangular_solve_p = define_primitive(
    "triangular_solve", _triangular_solve_abstract_eval, _triangular_solve_lower
)


def triangular_solve(
    a,
    b,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
):
    """Solves op(a) x = b (left_side) or x op(a) = b for triangular `a`, where
    op transposes and/or conjugates; only a's `lower` (or upper) triangle is read."""
    if conjugate_a and not transpose_a:
        a, conjugate_a = _conj(a), False
    if not dtypes.is_complex(aval_of(a).dtype):
        conjugate_a = False
    return triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )


def _op_a(a, transpose_a, conjugate_a):
    return matrix_transpose(a, conjugate_a) if transpose_a else a


def _triangular_solve_jvp(primals, tangents, **params):
    """d x = op(a)^-1 (db - op(da) x) (left side), (db - x op(da)) op(a)^-1 (right)."""
    (a, b), (a_dot, b_dot) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    rhs = Zero(aval_of(x)) if is_zero(b_dot) else b_dot
    if not is_zero(a_dot):
        strict = (-1 if params["lower"] else 1) if params["unit_diagonal"] else 0
        used = triangle_mask(aval_of(a).shape, params["lower"], strict)
        op_da = _op_a(_where(used, a_dot), params["transpose_a"], params["conjugate_a"])
        prod = matmul(op_da, x) if params["left_side"] else matmul(x, op_da)
        rhs = lax.neg(prod) if is_zero(rhs) else lax.sub(rhs, prod)
    if is_zero(rhs):
        return x, rhs
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(
    ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    """x = op(a)^-1 b is linear in b; its transpose applies op(a)^-T."""
    if is_undefined(a):
        raise TypeError("triangular_solve is not linear in its matrix a")
    ct = instantiate(ct)
    if transpose_a:  # op = a^T or a^H: the transpose applies a or conj(a)
        a_used = _conj(a) if conjugate_a else a
        out = triangular_solve_p.bind(
            a_used,
            ct,
            left_side=left_side,
            lower=lower,
            transpose_a=False,
            conjugate_a=False,
            unit_diagonal=unit_diagonal,
        )
    else:
        out = triangular_solve_p.bind(
            a,
            ct,
            left_side=left_side,
            lower=lower,
            transpose_a=True,
            conjugate_a=False,
            unit_diagonal=unit_diagonal,
        )
    return [None, out]


def _triangular_solve_batch(axis_size, vals, dims, **params):
    a, b = _batch_all_to_front(axis_size, vals, dims)
    return triangular_solve_p.bind(a, b, **params), 0


jvp_rules[triangular_solve_p] = _triangular_solve_jvp
transpose_rules[triangular_solve_p] = _triangular_solve_transpose
batch_rules[triangular_solve_p] = _triangular_solve_batch


# ---- lu (LAPACK getrf) -------------------------------------------------------------
def _lu_abstract_eval(a: ShapedArray):
    _check_matrix("lu", a)
    k = min(a.shape[-2:])
    batch = a.shape[:-2]
    return [
        a.update(weak_type=False),
        ShapedArray((*batch, k), np.dtype(np.int32)),
        ShapedArray((*batch, a.shape[-2]), np.dtype(np.int32)),
    ]


def _lu_lower(ctx, a):
    """getrf, its 1-based pivots made 0-based, and the permutation they perform
    (computed by inlining lu_pivots_to_permutation's program)."""
    aval = ctx.avals_in[0]
    lu_aval, piv_aval, _ = ctx.avals_out
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    factors, pivots, _ = lapack.custom_call(
        ctx.emitter,
        lapack.target_name("getrf", aval.dtype),
        [a],
        [aval],
        [lu_aval, piv_aval, info],
        aliases={0: 0},
    )
    one = ctx.emitter.constant(
        np.ones((), np.int32), ShapedArray((), np.dtype(np.int32))
    )
    ones = ctx.op(
        "stablehlo.broadcast_in_dim",
        [one],
        "broadcast_dimensions = array<i64>",
        result_avals=[piv_aval],
    )
    pivots = ctx.op("stablehlo.subtract", [pivots, ones], result_avals=[piv_aval])
    perm_ctx = RuleContext(ctx.emitter, [piv_aval], [piv_aval], ctx.primitive)
    perm = lower_fun(lu_pivots_to_permutation)(perm_ctx, pivots, size=aval.shape[-2])
    return [factors, pivots, perm]


lu_p = define_primitive("lu", _lu_abstract_eval, _lu_lower, multiple_results=True)
batch_rules[lu_p] = _front_batch_rule(lu_p)


def lu_pivots_to_permutation(pivots, size: int):
    """The row permutation that LAPACK's sequence of row swaps (0-based
    `pivots`) performs: perm[i] is the original row now at row i. Each swap is
    an elementwise select (so it batches); a few swaps are unrolled, more run
    in a fori_loop so the program does not grow with the matrix."""
    shape = aval_of(pivots).shape
    batch, k = shape[:-1], shape[-1]
    positions = lax.broadcasted_iota(np.int32, (*batch, size), len(batch))
    if k <= _UNROLLED_SWAPS:
        perm = positions
        for i in range(k):
            perm = _apply_swap(perm, pivots, positions, np.int32(i))
        return perm
    from olympus.lax.control_flow import fori_loop

    return fori_loop(
        0, k, lambda i, perm: _apply_swap(perm, pivots, positions, i), positions
    )


_UNROLLED_SWAPS = 8


def _apply_swap(perm, pivots, positions, i):
    """perm with entries i and pivots[..., i] exchanged (i may be traced)."""
    batch = aval_of(perm).shape[:-1]
    nd = len(batch) + 1
    spread = lambda v: lax.broadcast_in_dim(
        v, aval_of(perm).shape, tuple(range(nd - 1))
    )
    column = lambda x: lax.reshape(
        lax.dynamic_slice(x, (0,) * (nd - 1) + (i,), (*batch, 1)), batch
    )
    at_target = lax.eq(positions, spread(column(pivots)))
    value_at_target = lax.reduce_sum(_where(at_target, perm), (nd - 1,))
    perm = lax.select(at_target, spread(column(perm)), perm)
    return lax.select(
        lax.eq(positions, spread(lax.full(batch, i, np.int32) if batch else i)),
        spread(value_at_target),
        perm,
    )


def permutation_matrix(perm, dtype):
    """P with P[i, j] = 1 where perm[i] == j: P @ a = a[perm]."""
    shape = aval_of(perm).shape
    full = (*shape, shape[-1])
    rows = lax.broadcast_in_dim(perm, full, tuple(range(len(shape))))
    return lax.convert_element_type(
        lax.eq(rows, lax.broadcasted_iota(np.int32, full, len(shape))), dtype
    )


def _lu_jvp(primals, tangents):
    """For P a = L U (square a): with x = L^-1 P da U^-1, dL = L tril(x, -1)
    and dU = triu(x) U; the packed factors' tangent is their sum."""
    (a,), (a_dot,) = primals, tangents
    factors, pivots, perm = lu_p.bind(a)
    outs_zero = [Zero(aval_of(factors)), Zero(aval_of(pivots)), Zero(aval_of(perm))]
    if is_zero(a_dot):
        return [factors, pivots, perm], outs_zero
    shape = aval_of(a).shape
    if shape[-1] != shape[-2]:
        raise OlympusTypeError(
            f"the derivative of lu is only defined for square matrices, got {shape}"
        )
    p = permutation_matrix(perm, aval_of(a).dtype)
    lower = _where(triangle_mask(shape, True, -1), factors)
    eye = diag_matrix(lax.full(shape[:-1], 1, aval_of(a).dtype), shape)
    l_unit = lax.add(lower, eye)
    upper = triu(factors)
    x = triangular_solve(
        l_unit, matmul(p, a_dot), left_side=True, lower=True, unit_diagonal=True
    )
    x = triangular_solve(upper, x, left_side=False, lower=False)
    tangent = lax.add(matmul(l_unit, tril(x, -1)), matmul(triu(x), upper))
    return [factors, pivots, perm], [tangent, *outs_zero[1:]]


jvp_rules[lu_p] = _lu_jvp


# ---- eigh (LAPACK syevd / heevd) -----------------------------------------------------
def _eigh_abstract_eval(a: ShapedArray, *, lower: bool):
    _check_matrix("eigh", a, square=True)
    return [a.update(weak_type=False), ShapedArray(a.shape[:-1], _real_dtype(a.dtype))]


def _eigh_lower(ctx, a, *, lower):
    aval = ctx.avals_in[0]
    v_aval, w_aval = ctx.avals_out
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    v, w, _ = lapack.custom_call(
        ctx.emitter,
        lapack.target_name("syevd", aval.dtype, complex_base="heevd"),
        [a],
        [aval],
        [v_aval, w_aval, info],
        config={"mode": ord("V"), "uplo": ord("L" if lower else "U")},
        aliases={0: 0},
    )
    return [v, w]


eigh_p = define_primitive(
    "eigh", _eigh_abstract_eval, _eigh_lower, multiple_results=True
)
batch_rules[eigh_p] = _front_batch_rule(eigh_p)


def _eigh_jvp(primals, tangents, *, lower):
    """With a = V diag(w) V^H: dw = diag(V^H da V), dV = V (F o (V^H da V)),
    F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it (distinct eigenvalues)."""
    (a,), (a_dot,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    if is_zero(a_dot):
        return [v, w], [Zero(aval_of(v)), Zero(aval_of(w))]
    a_dot = hermitian_from_triangle(a_dot, lower)
    shape = aval_of(v).shape
    nd = len(shape)
    vh_da_v = matmul(matrix_transpose(v, conjugate=True), matmul(a_dot, v))
    w_row = lax.broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1))
    w_col = lax.broadcast_in_dim(w, shape, tuple(range(nd - 1)))
    gaps = lax.sub(w_row, w_col)
    off = lax.ne(
        lax.broadcasted_iota(np.int32, shape, nd - 2),
        lax.broadcasted_iota(np.int32, shape, nd - 1),
    )
    ones = lax.full(shape, 1, aval_of(w).dtype)
    f = _where(off, lax.div(ones, lax.select(off, gaps, ones)))
    f = lax.convert_element_type(f, aval_of(v).dtype)
    v_dot = matmul(v, lax.mul(f, vh_da_v))
    w_dot = diagonal(vh_da_v)
    if dtypes.is_complex(aval_of(w_dot).dtype):
        w_dot = lax.real(w_dot)
    return [v, w], [v_dot, w_dot]


jvp_rules[eigh_p] = _eigh_jvp


# ---- QR: geqrf and householder_product (LAPACK geqrf / orgqr) ----------------------
def _geqrf_abstract_eval(a: ShapedArray):
    _check_matrix("geqrf", a)
    return [
        a.update(weak_type=False),
        ShapedArray((*a.shape[:-2], min(a.shape[-2:])), a.dtype),
    ]


def _geqrf_lower(ctx, a):
    aval = ctx.avals_in[0]
    return lapack.custom_call(
        ctx.emitter,
        lapack.target_name("geqrf", aval.dtype),
        [a],
        [aval],
        list(ctx.avals_out),
        aliases={0: 0},
    )


geqrf_p = define_primitive(
    "geqrf", _geqrf_abstract_eval, _geqrf_lower, multiple_results=True
)
batch_rules[geqrf_p] = _front_batch_rule(geqrf_p)


def _householder_product_abstract_eval(
    a: ShapedArray, taus: ShapedArray
) -> ShapedArray:
    _check_matrix("householder_product", a)
    same_dtypes("householder_product", (a, taus))
    m, n = a.shape[-2:]
    if m < n or taus.shape != (*a.shape[:-2], taus.shape[-1]) or taus.shape[-1] > n:
        raise OlympusTypeError(
            f"householder_product needs m >= n and at most n reflectors, got {a.str_short()} "
            f"and taus {taus.str_short()}"
        )
    return a.update(weak_type=False)


def _householder_product_lower(ctx, a, taus):
    aval = ctx.avals_in[0]
    (q,) = lapack.custom_call(
        ctx.emitter,
        lapack.target_name("orgqr", aval.dtype, complex_base="ungqr"),
        [a, taus],
        list(ctx.avals_in),
        [ctx.aval_out],
        aliases={0: 0},
    )
    return q


householder_product_p = define_primitive(
    "householder_product",
    _householder_product_abstract_eval,
    _householder_product_lower,
)
batch_rules[householder_product_p] = _front_batch_rule(householder_product_p)


# ---- svd (LAPACK gesdd) -------------------------------------------------------------
def _svd_abstract_eval(a: ShapedArray, *, full_matrices: bool):
    _check_matrix("svd", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if k == 0:
        raise OlympusTypeError(
            f"svd of an empty matrix {a.str_short()} is not supported"
        )
    batch = a.shape[:-2]
    u = ShapedArray((*batch, m, m if full_matrices else k), a.dtype)
    vt = ShapedArray((*batch, n if full_matrices else k, n), a.dtype)
    return [ShapedArray((*batch, k), _real_dtype(a.dtype)), u, vt]


def _svd_lower(ctx, a, *, full_matrices):
    aval = ctx.avals_in[0]
    s, u, vt = ctx.avals_out
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    _, s_out, u_out, vt_out, _ = lapack.custom_call(
        ctx.emitter,
        lapack.target_name("gesdd", aval.dtype),
        [a],
        [aval],
        [aval, s, u, vt, info],
        config={"mode": ord("A" if full_matrices else "S")},
        aliases={0: 0},
    )
    return [s_out, u_out, vt_out]


svd_p = define_primitive("svd", _svd_abstract_eval, _svd_lower, multiple_results=True)
batch_rules[svd_p] = _front_batch_rule(svd_p)


# ---- eig (LAPACK geev): general square matrices --------------------------------------
def _complex_dtype(dtype):
    return {
        np.dtype(np.float32): np.dtype(np.complex64),
        np.dtype(np.float64): np.dtype(np.complex128),
    }.get(np.dtype(dtype), np.dtype(dtype))


def _eig_abstract_eval(a: ShapedArray, *, compute_left: bool, compute_right: bool):
    """Complex eigenvalues (..., n) and the asked-for eigenvector matrices
    (..., n, n), complex whatever the input (real matrices have complex spectra)."""
    _check_matrix("eig", a, square=True)
    dtype = _complex_dtype(a.dtype)
    vectors = ShapedArray(a.shape, dtype)
    return [ShapedArray(a.shape[:-1], dtype)] + [vectors] * (
        int(compute_left) + int(compute_right)
    )


def _nan_where_failed(ctx, info, value: str, aval: ShapedArray) -> str:
    """`value` with every matrix whose kernel reported info != 0 replaced by NaN."""
    batch = aval.shape[: len(ctx.avals_in[0].shape) - 2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    zeros = ctx.op(
        "stablehlo.broadcast_in_dim",
        [
            ctx.emitter.constant(
                np.zeros((), np.int32), ShapedArray((), np.dtype(np.int32))
            )
        ],
        "broadcast_dimensions = array<i64>",
        result_avals=[info_aval],
    )
    ok = compare(ctx.emitter, info, zeros, "EQ", info_aval.dtype, batch)
    dims = ", ".join(str(d) for d in range(len(batch)))
    ok = ctx.op(
        "stablehlo.broadcast_in_dim",
        [ok],
        f"broadcast_dimensions = array<i64{': ' + dims if dims else ''}>",
        result_avals=[ShapedArray(aval.shape, np.dtype(np.bool_))],
    )
    nan = ctx.emitter.constant(
        np.full((), np.nan, aval.dtype), ShapedArray((), aval.dtype)
    )
    nans = ctx.op(
        "stablehlo.broadcast_in_dim",
        [nan],
        "broadcast_dimensions = array<i64>",
        result_avals=[aval],
    )
    return ctx.op("stablehlo.select", [ok, value, nans], result_avals=[aval])


def _eig_lower(ctx, a, *, compute_left, compute_right):
    """geev returns real and imaginary parts of the eigenvalues separately for
    real matrices (joined here) and always both vector slots, filled only when
    asked (its compute_left / compute_right flags are LAPACK's 'V' / 'N')."""
    aval = ctx.avals_in[0]
    w_aval = ctx.avals_out[0]
    vectors = ShapedArray(aval.shape, w_aval.dtype)
    info_aval = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    real = not dtypes.is_complex(aval.dtype)
    w_parts = [ShapedArray(w_aval.shape, aval.dtype)] * 2 if real else [w_aval]
    flag = lambda on: ord("V" if on else "N")
    *w, vl, vr, info = lapack.custom_call(
        ctx.emitter,
        lapack.target_name("geev", aval.dtype),
        [a],
        [aval],
        [*w_parts, vectors, vectors, info_aval],
        config={
            "compute_left": flag(compute_left),
            "compute_right": flag(compute_right),
        },
    )
    w = ctx.op("stablehlo.complex", w, result_avals=[w_aval]) if real else w[0]
    outs = [w] + ([vl] if compute_left else []) + ([vr] if compute_right else [])
    return [
        _nan_where_failed(ctx, info, out, out_aval)
        for out, out_aval in zip(outs, ctx.avals_out)
    ]


eig_p = define_primitive("eig", _eig_abstract_eval, _eig_lower, multiple_results=True)
batch_rules[eig_p] = _front_batch_rule(eig_p)


def _solve_square(a, b):
    """a^-1 b through LU with partial pivoting (used by eig's derivative)."""
    factors, _, perm = lu_p.bind(a)
    pb = matmul(permutation_matrix(perm, aval_of(a).dtype), b)
    y = triangular_solve(factors, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(factors, y, left_side=True, lower=False)


class EigDerivativeError(TypeError):
    """The derivative of eig's left eigenvectors was asked for (not defined here)."""


def _eig_jvp(primals, tangents, *, compute_left, compute_right):
    """With a = V diag(w) V^-1 and distinct eigenvalues: C = V^-1 da V,
    dw = diag(C), dV = V (F o C) with F_ij = 1 / (w_j - w_i) off the diagonal,
    less each column's component along itself that would change its unit norm."""
    (a,), (a_dot,) = primals, tangents
    outs = eig_p.bind(a, compute_left=compute_left, compute_right=compute_right)
    if is_zero(a_dot):
        return outs, [Zero(aval_of(o)) for o in outs]
    if compute_left:
        raise EigDerivativeError(
            "eig: the derivative of the left eigenvectors is not defined; "
            "call eig with compute_left_eigenvectors=False"
        )
    w, v = eig_p.bind(a, compute_left=False, compute_right=True)
    dtype = aval_of(w).dtype
    c = _solve_square(v, matmul(lax.convert_element_type(a_dot, dtype), v))
    w_dot = diagonal(c)
    if not compute_right:
        return outs, [w_dot]
    shape = aval_of(v).shape
    nd = len(shape)
    gaps = lax.sub(
        lax.broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1)),
        lax.broadcast_in_dim(w, shape, tuple(range(nd - 1))),
    )
    off = lax.ne(
        lax.broadcasted_iota(np.int32, shape, nd - 2),
        lax.broadcasted_iota(np.int32, shape, nd - 1),
    )
    ones = lax.full(shape, 1, dtype)
    v_dot = matmul(
        v, lax.mul(_where(off, lax.div(ones, lax.select(off, gaps, ones))), c)
    )
    along = lax.real(lax.reduce_sum(lax.mul(_conj(v), v_dot), (nd - 2,)))
    along = lax.broadcast_in_dim(
        lax.convert_element_type(along, dtype), shape, (*range(nd - 2), nd - 1)
    )
    return outs, [w_dot, lax.sub(v_dot, lax.mul(v, along))]


jvp_rules[eig_p] = _eig_jvp


# ---- qr --------------------------------------------------------------------------------
def _qr_shapes(a: ShapedArray, full_matrices: bool):
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = a.shape[:-2]
    return ShapedArray((*batch, m, k), a.dtype), ShapedArray((*batch, k, n), a.dtype)


def _qr_abstract_eval(a: ShapedArray, *, full_matrices: bool):
    _check_matrix("qr", a)
    return list(_qr_shapes(a, full_matrices))


def _slice_matrix(x, rows: int, cols: int):
    shape = aval_of(x).shape
    return lax.slice(x, (0,) * len(shape), (*shape[:-2], rows, cols))


def _qr_definition(a, *, full_matrices: bool):
    """Q from LAPACK's Householder vectors (padded with zero columns when a
    complete Q of a wide-than-reduced shape is asked for), R from the upper triangle."""
    shape = aval_of(a).shape
    m, n = shape[-2:]
    k = m if full_matrices else min(m, n)
    packed, taus = geqrf_p.bind(a)
    r = triu(_slice_matrix(packed, k, n))
    reflectors = _slice_matrix(packed, m, min(n, k))
    if k > n:
        config = [(0, 0, 0)] * (len(shape) - 1) + [(0, k - n, 0)]
        reflectors = lax.pad(reflectors, np.array(0, aval_of(a).dtype)[()], config)
    return householder_product_p.bind(reflectors, taus), r


qr_p = define_primitive(
    "qr",
    _qr_abstract_eval,
    lower_fun(_qr_definition, multiple_results=True),
    multiple_results=True,
)
batch_rules[qr_p] = _front_batch_rule(qr_p)


def _qr_jvp(primals, tangents, *, full_matrices):
    """For a = Q R with m >= n (reduced Q): with C = Q^H da R^-1 and Omega the
    skew-Hermitian part built from C's strict lower triangle,
    dQ = Q (Omega - C) + da R^-1 and dR = (C - Omega) R."""
    (a,), (a_dot,) = primals, tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    if is_zero(a_dot):
        return [q, r], [Zero(aval_of(q)), Zero(aval_of(r))]
    m, n = aval_of(a).shape[-2:]
    if m < n or (full_matrices and m > n):
        raise OlympusTypeError(
            f"the derivative of qr needs m >= n and the reduced factorisation, got a {m}x{n} matrix "
            f"with full_matrices={full_matrices}"
        )
    da_rinv = triangular_solve(r, a_dot, left_side=False, lower=False)
    c = matmul(matrix_transpose(q, conjugate=True), da_rinv)
    strict_lower = tril(c, -1)
    omega = lax.sub(strict_lower, matrix_transpose(strict_lower, conjugate=True))
    if dtypes.is_complex(
        aval_of(a).dtype
    ):  # the diagonal's imaginary part is free: keep C's
        shape = aval_of(c).shape
        omega = lax.add(
            omega,
            diag_matrix(
                lax.complex(
                    lax.full(shape[:-1], 0, _real_dtype(aval_of(a).dtype)),
                    lax.imag(diagonal(c)),
                ),
                shape,
            ),
        )
    dq = lax.add(matmul(q, lax.sub(omega, c)), da_rinv)
    dr = matmul(lax.sub(c, omega), r)
    return [q, r], [dq, dr]


jvp_rules[qr_p] = _qr_jvp


# ---- derivative of svd -------------------------------------------------------------
def _svd_jvp(primals, tangents, *, full_matrices):
    """The thin SVD's derivative (distinct, non-zero singular values): with
    dP = U^H da V, ds = re diag(dP); dU and dV from the off-diagonal of dP over
    s_j^2 - s_i^2, plus the parts of da outside the span of U (tall) or V (wide)."""
    (a,), (a_dot,) = primals, tangents
    s, u, vt = svd_p.bind(a, full_matrices=full_matrices)
    if is_zero(a_dot):
        return [s, u, vt], [Zero(aval_of(x)) for x in (s, u, vt)]
    m, n = aval_of(a).shape[-2:]
    if full_matrices and m != n:
        raise OlympusTypeError(
            "the derivative of svd needs full_matrices=False for non-square matrices"
        )
    dtype = aval_of(a).dtype
    uh, v = matrix_transpose(u, conjugate=True), matrix_transpose(vt, conjugate=True)
    dp = matmul(uh, matmul(a_dot, v))
    ds = diagonal(dp)
    ds = lax.real(ds) if dtypes.is_complex(dtype) else ds
    s_inv = _inverse_or_zero(s)
    inner_u, inner_v = _svd_inner_tangents(s, s_inv, dp, dtype)
    du, dv = matmul(u, inner_u), matmul(v, inner_v)
    if m > n:
        da_v = matmul(a_dot, v)
        du = lax.add(du, _outside_span(da_v, u, uh, s_inv, dtype))
    if n > m:
        dah_u = matmul(matrix_transpose(a_dot, conjugate=True), u)
        dv = lax.add(dv, _outside_span(dah_u, v, vt, s_inv, dtype))
    return [s, u, vt], [ds, du, matrix_transpose(dv, conjugate=True)]


def _inverse_or_zero(x):
    """1 / x elementwise, 0 where x is 0 (a repeated or zero singular value
    contributes nothing rather than inf)."""
    aval = aval_of(x)
    nonzero = lax.ne(x, lax.full(aval.shape, 0, aval.dtype))
    ones = lax.full(aval.shape, 1, aval.dtype)
    return _where(nonzero, lax.div(ones, lax.select(nonzero, x, ones)))


def _along_columns(s, shape):
    """s broadcast to `shape` with s[..., j] in every row's column j."""
    nd = len(shape)
    return lax.broadcast_in_dim(s, shape, (*range(nd - 2), nd - 1))


def _svd_inner_tangents(s, s_inv, dp, dtype):
    """U^H dU and V^H dV: F o sym(dP S) plus dP's skew part over s, and
    F o sym(S dP), where F is 1 / (s_j^2 - s_i^2) off the diagonal."""
    shape = aval_of(dp).shape
    s_row = _along_columns(s, shape)  # s_j along columns
    s_col = lax.broadcast_in_dim(s, shape, tuple(range(len(shape) - 1)))  # s_i
    gaps = lax.mul(lax.add(s_row, s_col), lax.sub(s_row, s_col))  # s_j^2 - s_i^2
    f = lax.convert_element_type(_inverse_or_zero(gaps), dtype)
    s_c = lax.convert_element_type(s_col, dtype)
    s_r = lax.convert_element_type(s_row, dtype)
    sym = lambda x: lax.add(x, matrix_transpose(x, conjugate=True))
    skew = lax.sub(dp, matrix_transpose(dp, conjugate=True))
    skew_diag = lax.mul(
        lax.mul(skew, np.array(0.5, dtype)[()]),
        lax.convert_element_type(diag_matrix(s_inv, shape), dtype),
    )
    inner_u = lax.add(lax.mul(f, sym(lax.mul(dp, s_r))), skew_diag)
    return inner_u, lax.mul(f, sym(lax.mul(s_c, dp)))


def _outside_span(d, basis, basis_h, s_inv, dtype):
    """(d - B B^H d) diag(1 / s): the part of d outside the span of the
    orthonormal columns B, scaled column by column by 1 / s."""
    s_inv_cols = lax.convert_element_type(
        _along_columns(s_inv, aval_of(d).shape), dtype
    )
    return lax.mul(lax.sub(d, matmul(basis, matmul(basis_h, d))), s_inv_cols)


jvp_rules[svd_p] = _svd_jvp


# ---- public functions ----------------------------------------------------------------
def cholesky(a):
    """The lower Cholesky factor L of a Hermitian positive-definite `a` (a = L L^H);
    NaN where `a` is not positive definite."""
    return cholesky_p.bind(a)


def lu(a):
    """(lu, pivots, permutation): P a = L U with L unit-lower and U upper packed
    in `lu`, `pivots` LAPACK's 0-based row swaps, `permutation` their effect."""
    factors, pivots, perm = lu_p.bind(a)
    return factors, pivots, perm


def eigh(a, lower: bool = True):
    """(v, w): eigenvectors (columns) and ascending eigenvalues of a Hermitian
    `a`, read from its lower (or upper) triangle."""
    v, w = eigh_p.bind(a, lower=bool(lower))
    return v, w


def eig(
    a, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True
):
    """[w, vl, vr] (vectors only where asked) of a general square `a`: complex
    eigenvalues w, right eigenvectors a vr = vr diag(w) and left ones
    vl^H a = diag(w) vl^H, each column of unit 2-norm (LAPACK geev, CPU)."""
    return list(
        eig_p.bind(
            a,
            compute_left=bool(compute_left_eigenvectors),
            compute_right=bool(compute_right_eigenvectors),
        )
    )


def geqrf(a):
    """LAPACK's compact QR: R in the upper triangle, Householder vectors below, and taus."""
    return tuple(geqrf_p.bind(a))


def householder_product(a, taus):
    """The orthonormal Q whose Householder reflectors `geqrf` stored in `a`."""
    return householder_product_p.bind(a, taus)


def qr(a, full_matrices: bool = False):
    """(q, r) with a = q r, q orthonormal columns, r upper triangular."""
    q, r = qr_p.bind(a, full_matrices=bool(full_matrices))
    return q, r


def svd(a, *, full_matrices: bool = True, compute_uv: bool = True):
    """(u, s, vt) with a = u diag(s) vt, s descending (JAX's order); the
    singular values alone with compute_uv=False."""
    s, u, vt = svd_p.bind(a, full_matrices=bool(full_matrices and compute_uv))
    return (u, s, vt) if compute_uv else s
