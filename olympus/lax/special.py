"""Incomplete gamma and beta functions, the Hurwitz zeta function and the
exponentially scaled modified Bessel functions I0e, I1e: primitives with
JAX's names (igamma, igammac, igamma_grad_a, random_gamma_grad,
regularized_incomplete_beta, zeta, bessel_i0e, bessel_i1e).

zeta and bessel_i1e lower to their CHLO operations; the others have no
StableHLO or CHLO operation, so each lowers to a program of other
primitives (`lower_fun`): a fixed number of series or continued-fraction
steps in a `fori_loop`. Their derivatives are closed forms beside them.

The incomplete functions are a prefactor times a series or continued
fraction. The prefactor, x^a e^-x / Gamma(a + 1) or x^a (1-x)^b / B(a, b),
is the exponential of a difference of large logarithms where a and b are
large; it is computed from Stirling's formula with the leading terms
cancelled algebraically, so float32 keeps ~1e-6 relative accuracy up to
a = 1e3 (the naive `a log x - x - lgamma(a + 1)` loses 1e-3 there).
"""

from __future__ import annotations

import math

import numpy as np

from olympus.backends.xla.lowering import i64_array, lower_fun
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray
from olympus.lax import ops as lax
from olympus.lax.base import (
    all_weak,
    broadcast_shapes_scalar,
    define_primitive,
    dtype_kind_check,
    same_dtypes,
)
from olympus.lax.control_flow import fori_loop
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import def_elementwise
from olympus.transforms.jvp import defjvp
from olympus.lax.op_docs import (
    ARGS_REAL_X,
    RAISES_NOT_REAL_FLOAT,
    RAISES_NOT_REAL_FLOAT_OR_DIFFER,
    RETURNS_LIKE_OPERANDS,
    RETURNS_LIKE_X,
    with_sections,
)

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# Stirling's series for lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2),
# in powers of 1/z^2 after a leading 1/z.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


# ---- shared pieces ---------------------------------------------------------
def _c(value, like):
    """`value` as a rank-0 constant of like's dtype."""
    return np.asarray(value, aval_of(like).dtype)[()]


def _full(value, like):
    return lax.full(aval_of(like).shape, value, aval_of(like).dtype)


def _where(pred, on_true, on_false):
    return lax.select(pred, on_true, on_false)


def _common_shape(*args):
    """The operands broadcast to one shape (rank-0 operands are allowed)."""
    shape = max((aval_of(a).shape for a in args), key=len)
    return [
        a if aval_of(a).shape == shape else lax.broadcast_in_dim(a, shape, ())
        for a in args
    ]


def _is_double(x) -> bool:
    return aval_of(x).dtype == np.float64


def _computed_in_float32(definition):
    """Runs `definition` in float32 for float16 and bfloat16 operands."""

    def run(*args):
        dtype = aval_of(args[0]).dtype
        if dtype.itemsize >= 4:
            return definition(*args)
        wide = [lax.convert_element_type(a, np.float32) for a in args]
        return lax.convert_element_type(definition(*wide), dtype)

    run.__name__ = definition.__name__
    return run


def _stirling_correction(z):
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) for z > 0: the series
    from z = 10 on, lgamma itself below (where nothing large cancels)."""
    large = lax.ge(z, _c(10.0, z))
    y = _where(large, z, _full(10.0, z))
    w = lax.div(_c(1.0, z), lax.mul(y, y))
    series = _c(_STIRLING[-1], z)
    for coeff in reversed(_STIRLING[:-1]):
        series = lax.add(_c(coeff, z), lax.mul(w, series))
    series = lax.div(series, y)
    s = _where(large, _full(1.0, z), z)
    direct = lax.sub(
        lax.lgamma(s),
        lax.add(
            lax.sub(lax.mul(lax.sub(s, _c(0.5, z)), lax.log(s)), s),
            _c(_HALF_LOG_2PI, z),
        ),
    )
    return _where(large, series, direct)


def _log_ratio_minus_linear(t, log_ratio):
    """log(1 + t) - t, where `log_ratio` is log(1 + t) computed accurately by
    the caller: near t = 0 from the series -t^2 sum_k (-t)^k / (k + 2),
    without the cancellation of the difference."""
    terms = 52 if _is_double(t) else 24  # 0.5^k / k below the dtype's epsilon
    near = lax.lt(lax.abs(t), _c(0.5, t))
    s = _where(near, t, _full(0.0, t))
    series = _c(1 / (terms + 1), t)
    for k in range(terms - 2, -1, -1):
        series = lax.sub(_c(1 / (k + 2), t), lax.mul(s, series))
    series = lax.neg(lax.mul(lax.mul(s, s), series))
    return _where(near, series, lax.sub(log_ratio, t))


def _steps(x) -> int:
    """Series and continued-fraction steps: enough for a up to ~1e3."""
    return 320 if _is_double(x) else 256


# ---- the incomplete gamma function ----------------------------------------
def _igamma_log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a + 1)) = a (log(x/a) - (x-a)/a) - log(2 pi a)/2
    - stirling_correction(a): no large terms cancel."""
    t = lax.div(lax.sub(x, a), a)
    shape = _log_ratio_minus_linear(t, lax.log(lax.div(x, a)))
    return lax.sub(
        lax.sub(lax.mul(a, shape), lax.mul(_c(0.5, a), lax.log(a))),
        lax.add(_c(_HALF_LOG_2PI, a), _stirling_correction(a)),
    )


def _igamma_series(a, x):
    """sum_n x^n / ((a+1)...(a+n)), so that P = prefactor * series (x < a + 1)."""

    def step(n, state):
        term, total = state
        n = lax.convert_element_type(n, aval_of(a).dtype)
        term = lax.mul(term, lax.div(x, lax.add(a, n)))
        return term, lax.add(total, term)

    one = _full(1.0, a)
    return fori_loop(1, _steps(a), step, (one, one))[1]


def _igamma_continued_fraction(a, x):
    """Legendre's continued fraction 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/...)),
    by the modified Lentz method, so that Q = a * prefactor * fraction
    (x >= a + 1)."""
    tiny = _c(np.finfo(aval_of(a).dtype).tiny * 16, a)

    def guard(v):
        return _where(lax.lt(lax.abs(v), tiny), _full(tiny, v), v)

    def step(i, state):
        b, c, d, h = state
        i = lax.convert_element_type(i, aval_of(a).dtype)
        an = lax.mul(lax.neg(i), lax.sub(i, a))
        b = lax.add(b, _c(2.0, a))
        d = lax.div(_c(1.0, a), guard(lax.add(lax.mul(an, d), b)))
        c = guard(lax.add(b, lax.div(an, c)))
        return b, c, d, lax.mul(h, lax.mul(c, d))

    b = lax.sub(lax.add(x, _c(1.0, a)), a)
    d = lax.div(_c(1.0, a), guard(b))
    big = _full(1 / np.finfo(aval_of(a).dtype).tiny, a)
    return fori_loop(1, _steps(a), step, (b, big, d, d))[3]


def _igamma_pair(a, x):
    """(P, Q): the one computed from its own expansion, the other as 1 minus it;
    NaN outside a > 0, x >= 0 (P = 1 at a = 0, x > 0, and at x = inf)."""
    a, x = _common_shape(a, x)
    use_series = lax.lt(x, lax.add(a, _c(1.0, a)))
    valid = lax.bitwise_and(lax.gt(a, _c(0.0, a)), lax.gt(x, _c(0.0, x)))
    finite = lax.bitwise_and(valid, lax.lt(x, _c(np.inf, x)))
    safe_a = _where(finite, a, _full(1.0, a))
    safe_x = _where(finite, x, _full(1.0, x))
    prefactor = lax.exp(_igamma_log_prefactor(safe_a, safe_x))
    below = _where(use_series, safe_x, _full(0.5, x))
    above = _where(use_series, lax.add(safe_a, _c(1.0, a)), safe_x)
    lower = lax.mul(prefactor, _igamma_series(safe_a, below))
    upper = lax.mul(
        lax.mul(prefactor, safe_a), _igamma_continued_fraction(safe_a, above)
    )
    one = _c(1.0, a)
    p = _where(use_series, lower, lax.sub(one, upper))
    q = _where(use_series, lax.sub(one, lower), upper)
    nan, zero, ones = _full(np.nan, a), _full(0.0, a), _full(1.0, a)
    p_edge = _where(lax.eq(x, _c(0.0, x)), zero, ones)  # x = 0, x = inf or a = 0
    edge = lax.bitwise_or(
        lax.bitwise_and(lax.eq(x, _c(0.0, x)), lax.gt(a, _c(0.0, a))),
        lax.bitwise_and(
            lax.bitwise_or(lax.eq(a, _c(0.0, a)), lax.eq(x, _c(np.inf, x))),
            lax.bitwise_and(lax.gt(x, _c(0.0, x)), lax.lt(a, _c(np.inf, a))),
        ),
    )
    p = _where(finite, p, _where(edge, p_edge, nan))
    q = _where(finite, q, _where(edge, lax.sub(one, p_edge), nan))
    return p, q


def _igamma_density(a, x):
    """x^(a-1) e^-x / Gamma(a), dP/dx (its limit at x = 0: inf, 1 or 0)."""
    a, x = _common_shape(a, x)
    positive = lax.gt(x, _c(0.0, x))
    safe_x = _where(positive, x, _full(1.0, x))
    log_density = lax.add(
        _igamma_log_prefactor(a, safe_x), lax.sub(lax.log(a), lax.log(safe_x))
    )
    at_zero = _where(
        lax.lt(a, _c(1.0, a)),
        _full(np.inf, a),
        _where(lax.eq(a, _c(1.0, a)), _full(1.0, a), _full(0.0, a)),
    )
    return _where(positive, lax.exp(log_density), at_zero)


@_computed_in_float32
def _igamma_definition(a, x):
    return _igamma_pair(a, x)[0]


@_computed_in_float32
def _igammac_definition(a, x):
    return _igamma_pair(a, x)[1]


# ---- dx/da of a gamma sample, and dP/da ---------------------------------------
# A Gamma(a) sample x = F^-1(u; a) with F(x; a) = P(a, x) has, at fixed u,
# dx/da = -(dP/da)(a, x) / p(x; a) with p the density: the "implicit
# reparameterisation" gradient. Both pieces are computed as their ratio:
#   x < a + 1: P's power series P = e^-x sum_n x^(a+n) / Gamma(a+n+1),
#     differentiated term by term: dx/da = -sum_n t_n (log x - digamma(a+n+1))
#     with t_0 = x / a, t_n = t_(n-1) x / (a + n); every term has one sign
#     there, so the sum does not cancel.
#   x >= a + 1: Q = e^-x x^a / Gamma(a) * h with h Legendre's continued
#     fraction (evaluated by Lentz's method), differentiated alongside it in
#     a: dx/da = x ((log x - digamma(a)) h + dh/da).
def _dx_da_series(a, x):
    log_x = lax.log(x)

    def term(n, state):
        t, psi, total = state
        n = lax.convert_element_type(n, aval_of(a).dtype)
        t = lax.div(lax.mul(t, x), lax.add(a, n))
        psi = lax.add(psi, lax.div(_c(1.0, a), lax.add(a, n)))
        return t, psi, lax.add(total, lax.mul(t, lax.sub(log_x, psi)))

    t0 = lax.div(x, a)
    psi0 = lax.add(lax.digamma(a), lax.div(_c(1.0, a), a))
    init = (t0, psi0, lax.mul(t0, lax.sub(log_x, psi0)))
    return lax.neg(fori_loop(1, _steps(a), term, init)[2])


def _dx_da_continued_fraction(a, x):
    """h = 1/(b0 + a1/(b1 + a2/(b2 + ...))) with a_i = -i (i - a),
    b_i = x + 2 i + 1 - a; each Lentz step carries its value and its
    derivative in a (db/da = -1, da_i/da = i)."""
    one = _c(1.0, a)
    b0 = lax.sub(lax.add(x, one), a)
    d0 = lax.div(one, b0)

    def step(i, state):
        b, d, d_da, cf, cf_da, h, h_da = state
        i = lax.convert_element_type(i, aval_of(a).dtype)
        a_i = lax.neg(lax.mul(i, lax.sub(i, a)))
        b = lax.add(b, _c(2.0, a))
        d_new = lax.div(one, lax.add(lax.mul(a_i, d), b))
        d_new_da = lax.neg(
            lax.mul(
                lax.sub(lax.add(lax.mul(i, d), lax.mul(a_i, d_da)), one),
                lax.mul(d_new, d_new),
            )
        )
        cf_new = lax.add(b, lax.div(a_i, cf))
        cf_new_da = lax.sub(
            lax.sub(lax.div(i, cf), lax.div(lax.mul(a_i, cf_da), lax.mul(cf, cf))),
            one,
        )
        ratio = lax.mul(d_new, cf_new)
        ratio_da = lax.add(lax.mul(d_new_da, cf_new), lax.mul(d_new, cf_new_da))
        h_da = lax.add(lax.mul(h_da, ratio), lax.mul(h, ratio_da))
        return b, d_new, d_new_da, cf_new, cf_new_da, lax.mul(h, ratio), h_da

    d0_da = lax.mul(d0, d0)
    init = (b0, d0, d0_da, _full(1e30, a), _full(0.0, a), d0, d0_da)
    h, h_da = fori_loop(1, _steps(a), step, init)[5:]
    log_ratio = lax.sub(lax.log(x), lax.digamma(a))
    return lax.mul(x, lax.add(lax.mul(log_ratio, h), h_da))


@_computed_in_float32
def _random_gamma_grad_definition(a, x):
    """dx/da for gamma samples x of shape a; 0 where x underflowed to 0."""
    a, x = _common_shape(a, x)
    split = lax.add(a, _c(1.0, a))
    tiny = _full(np.finfo(aval_of(x).dtype).tiny, x)
    below = lax.max(lax.min(x, split), tiny)  # each branch sees its own range
    above = lax.max(x, split)
    grad = _where(
        lax.lt(x, split), _dx_da_series(a, below), _dx_da_continued_fraction(a, above)
    )
    return _where(lax.gt(x, _c(0.0, x)), grad, _full(0.0, x))


@_computed_in_float32
def _igamma_grad_a_definition(a, x):
    """dP/da = -(dx/da) p(x; a); 0 at x = 0; NaN (as JAX) outside a > 0,
    x >= 0, both finite."""
    a, x = _common_shape(a, x)
    inside = lax.bitwise_and(lax.gt(x, _c(0.0, x)), lax.lt(x, _c(np.inf, x)))
    safe_x = _where(inside, x, _full(1.0, x))
    grad = lax.neg(
        lax.mul(_random_gamma_grad_definition(a, safe_x), _igamma_density(a, safe_x))
    )
    valid = lax.bitwise_and(
        lax.bitwise_and(lax.gt(a, _c(0.0, a)), lax.lt(a, _c(np.inf, a))),
        lax.bitwise_and(lax.ge(x, _c(0.0, x)), lax.lt(x, _c(np.inf, x))),
    )
    return _where(valid, _where(inside, grad, _full(0.0, x)), _full(np.nan, x))


# ---- the incomplete beta function -------------------------------------------
def _beta_log_prefactor(a, b, x):
    """log(x^a (1-x)^b / B(a, b)) from Stirling's formula: with p = a/(a+b),
    a log(x/p) + b log((1-x)/(1-p)) + log(ab/(a+b))/2 - log(2 pi)/2 minus the
    three Stirling corrections; the first two terms' linear parts cancel
    exactly, so each is log1p(t) - t, which has no cancellation."""
    total = lax.add(a, b)
    p, q = lax.div(a, total), lax.div(b, total)
    # x - p, without the rounding of p near 1 where x is (1 - x is exact there)
    y = lax.sub(_c(1.0, x), x)
    upper = lax.div(lax.sub(lax.mul(b, x), lax.mul(a, y)), total)
    d = _where(lax.ge(x, _c(0.5, x)), upper, lax.sub(x, p))
    ta, tb = lax.div(d, p), lax.div(lax.neg(d), q)
    shape_a = _log_ratio_minus_linear(ta, lax.log(lax.div(x, p)))
    shape_b = _log_ratio_minus_linear(tb, lax.sub(lax.log1p(lax.neg(x)), lax.log(q)))
    half_log = lax.mul(
        _c(0.5, a), lax.sub(lax.add(lax.log(a), lax.log(b)), lax.log(total))
    )
    corrections = lax.sub(
        lax.add(_stirling_correction(a), _stirling_correction(b)),
        _stirling_correction(total),
    )
    return lax.sub(
        lax.add(lax.add(lax.mul(a, shape_a), lax.mul(b, shape_b)), half_log),
        lax.add(_c(_HALF_LOG_2PI, a), corrections),
    )


def _beta_continued_fraction(a, b, x):
    """The continued fraction 1/(1+ d1/(1+ d2/(1+ ...))) with
    d_2m = m (b-m) x / ((a+2m-1)(a+2m)), d_2m+1 = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),
    by the modified Lentz method: I_x(a, b) = prefactor / a * fraction."""
    one = _c(1.0, a)
    tiny = _c(np.finfo(aval_of(a).dtype).tiny * 16, a)

    def guard(v):
        return _where(lax.lt(lax.abs(v), tiny), _full(tiny, v), v)

    def lentz(coefficient, c, d, h):
        d = lax.div(one, guard(lax.add(one, lax.mul(coefficient, d))))
        c = guard(lax.add(one, lax.div(coefficient, c)))
        return c, d, lax.mul(h, lax.mul(c, d))

    def step(m, state):
        c, d, h = state
        m = lax.convert_element_type(m, aval_of(a).dtype)
        a2m = lax.add(a, lax.mul(_c(2.0, a), m))
        even = lax.div(
            lax.mul(lax.mul(m, lax.sub(b, m)), x),
            lax.mul(lax.sub(a2m, one), a2m),
        )
        c, d, h = lentz(even, c, d, h)
        odd = lax.div(
            lax.neg(lax.mul(lax.mul(lax.add(a, m), lax.add(lax.add(a, b), m)), x)),
            lax.mul(a2m, lax.add(a2m, one)),
        )
        return lentz(odd, c, d, h)

    first = lax.neg(
        lax.div(lax.mul(lax.add(a, b), x), lax.add(a, one))
    )  # d_1 = -(a+b) x / (a+1)
    d = lax.div(one, guard(lax.add(one, first)))
    return fori_loop(1, _steps(a) // 2 + 1, step, (_full(1.0, a), d, d))[2]


@_computed_in_float32
def _betainc_definition(a, b, x):
    """I_x(a, b) from the continued fraction where it converges fast,
    x < (a+1)/(a+b+2), else 1 - I_(1-x)(b, a); the limits at x = 0, 1 and
    a = 0 or b = 0; NaN outside a, b >= 0 and 0 <= x <= 1."""
    a, b, x = _common_shape(a, b, x)
    zero, one = _c(0.0, a), _c(1.0, a)
    interior = lax.bitwise_and(
        lax.bitwise_and(lax.gt(a, zero), lax.gt(b, zero)),
        lax.bitwise_and(lax.gt(x, zero), lax.lt(x, one)),
    )
    interior = lax.bitwise_and(
        interior,
        lax.bitwise_and(lax.lt(a, _c(np.inf, a)), lax.lt(b, _c(np.inf, b))),
    )
    sa, sb = _where(interior, a, _full(1.0, a)), _where(interior, b, _full(1.0, b))
    sx = _where(interior, x, _full(0.5, x))
    swap = lax.gt(sx, lax.div(lax.add(sa, one), lax.add(lax.add(sa, sb), _c(2.0, a))))
    fa, fb = _where(swap, sb, sa), _where(swap, sa, sb)
    fx = _where(swap, lax.sub(one, sx), sx)
    value = lax.div(
        lax.mul(
            lax.exp(_beta_log_prefactor(sa, sb, sx)),
            _beta_continued_fraction(fa, fb, fx),
        ),
        fa,
    )
    value = _where(swap, lax.sub(one, value), value)
    nonnegative = lax.bitwise_and(lax.ge(a, zero), lax.ge(b, zero))
    in_unit = lax.bitwise_and(lax.ge(x, zero), lax.le(x, one))
    # the limits: I_0 = 0, I_1 = 1; a = 0 puts all mass at 0, b = 0 at 1
    limit = _where(
        lax.bitwise_or(
            lax.eq(x, one), lax.bitwise_and(lax.eq(a, zero), lax.gt(b, zero))
        ),
        _full(1.0, a),
        _full(0.0, a),
    )
    defined = lax.bitwise_and(
        lax.bitwise_and(nonnegative, in_unit),
        lax.bitwise_not(lax.bitwise_and(lax.eq(a, zero), lax.eq(b, zero))),
    )
    return _where(interior, value, _where(defined, limit, _full(np.nan, a)))


def _betainc_density(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b), dI/dx (0 outside [0, 1])."""
    zero, one = _c(0.0, x), _c(1.0, x)
    inside = lax.bitwise_and(lax.gt(x, zero), lax.lt(x, one))
    sx = _where(inside, x, _full(0.5, x))
    log_density = lax.sub(
        _beta_log_prefactor(a, b, sx),
        lax.add(lax.log(sx), lax.log1p(lax.neg(sx))),
    )
    return _where(inside, lax.exp(log_density), _full(0.0, x))


# ---- I0e, by its power series and its asymptotic expansion ---------------------
def _bessel_i0e_definition_wide(x):
    """e^-|x| I0(x): sum_k (x^2/4)^k / k!^2 times e^-|x| below a crossover,
    e^-|x| I0 ~ (2 pi |x|)^-1/2 sum_k ((2k-1)!!)^2 / (k! (8|x|)^k) above it
    (its terms shrink below the dtype's epsilon before they start growing)."""
    double = _is_double(x)
    crossover, series_terms, asymptotic_terms = (
        (40.0, 64, 30) if double else (15.0, 40, 12)
    )
    y = lax.abs(x)
    near = lax.lt(y, _c(crossover, x))
    s = _where(near, y, _full(0.0, x))
    quarter_square = lax.mul(_c(0.25, x), lax.mul(s, s))

    def series_step(k, state):  # a loop: XLA may not reassociate across steps
        term, total = state
        k = lax.convert_element_type(k, aval_of(x).dtype)
        term = lax.mul(term, lax.div(quarter_square, lax.mul(k, k)))
        return term, lax.add(total, term)

    one = _full(1.0, x)
    total = fori_loop(1, series_terms, series_step, (one, one))[1]
    series = lax.mul(total, lax.exp(lax.neg(s)))
    z = _where(near, _full(crossover, x), y)
    inverse = lax.div(_c(1 / 8, x), z)

    def asymptotic_step(k, state):
        term, total = state
        k = lax.convert_element_type(k, aval_of(x).dtype)
        odd = lax.sub(lax.mul(_c(2.0, x), k), _c(1.0, x))
        term = lax.mul(term, lax.mul(inverse, lax.div(lax.mul(odd, odd), k)))
        return term, lax.add(total, term)

    total = fori_loop(1, asymptotic_terms, asymptotic_step, (one, one))[1]
    asymptotic = lax.mul(total, lax.rsqrt(lax.mul(_c(2 * math.pi, x), z)))
    return _where(near, series, asymptotic)


_bessel_i0e_definition = _computed_in_float32(_bessel_i0e_definition_wide)


# ---- the primitives -------------------------------------------------------------
def _elementwise_abstract_eval(name: str):
    def abstract_eval(*avals: ShapedArray) -> ShapedArray:
        dtype = same_dtypes(name, avals)
        dtype_kind_check(name, avals[0], dtypes.is_float, "real floating-point")
        shape = broadcast_shapes_scalar(name, avals)
        return ShapedArray(shape, dtype, all_weak(avals))

    return abstract_eval


def _define(name: str, lowering):
    return define_primitive(name, _elementwise_abstract_eval(name), lowering)


def _chlo_lowering(op: str):
    def lower(ctx, *args):
        shape = ctx.aval_out.shape
        operands = [
            x
            if aval.shape == shape
            else ctx.op(
                "stablehlo.broadcast_in_dim",
                [x],
                f"broadcast_dimensions = {i64_array([])}",
                result_avals=[ShapedArray(shape, aval.dtype)],
            )
            for x, aval in zip(args, ctx.avals_in)
        ]
        return ctx.op(op, operands)

    return lower


igamma_p = _define("igamma", lower_fun(_igamma_definition))
igammac_p = _define("igammac", lower_fun(_igammac_definition))
igamma_grad_a_p = _define("igamma_grad_a", lower_fun(_igamma_grad_a_definition))
random_gamma_grad_p = _define(
    "random_gamma_grad", lower_fun(_random_gamma_grad_definition)
)
regularized_incomplete_beta_p = _define(
    "regularized_incomplete_beta", lower_fun(_betainc_definition)
)
zeta_p = _define("zeta", _chlo_lowering("chlo.zeta"))
bessel_i0e_p = _define("bessel_i0e", lower_fun(_bessel_i0e_definition))
bessel_i1e_p = _define("bessel_i1e", _chlo_lowering("chlo.bessel_i1e"))
def_elementwise(
    igamma_p,
    igammac_p,
    igamma_grad_a_p,
    random_gamma_grad_p,
    regularized_incomplete_beta_p,
    zeta_p,
    bessel_i0e_p,
    bessel_i1e_p,
)


# ---- derivatives (t: the operand's tangent, ans: the output) ------------------
def _not_differentiable(name: str, operand: str, why: str):
    def partial(t, ans, *primals):
        raise OlympusTypeError(
            f"{name}: the derivative with respect to {operand} is not defined {why}"
        )

    return partial


def _times(t, ans, value):
    """t * value at the output's shape (t may be a broadcast rank-0 tangent)."""
    t, value = _common_shape(t, value)
    if aval_of(t).shape != aval_of(ans).shape:
        t, value = _common_shape(t, value, ans)[:2]
    return lax.mul(t, value)


defjvp(
    igamma_p,  # dP/da = igamma_grad_a, dP/dx = the gamma density
    lambda t, ans, a, x: _times(t, ans, igamma_grad_a_p.bind(a, x)),
    lambda t, ans, a, x: _times(t, ans, _igamma_density(a, x)),
)
defjvp(
    igammac_p,  # Q = 1 - P
    lambda t, ans, a, x: _times(t, ans, lax.neg(igamma_grad_a_p.bind(a, x))),
    lambda t, ans, a, x: _times(t, ans, lax.neg(_igamma_density(a, x))),
)
defjvp(
    igamma_grad_a_p,  # d/dx dP/da = d/da density = density (log x - digamma(a))
    _not_differentiable("igamma_grad_a", "a", "(as in JAX)"),
    lambda t, ans, a, x: _times(
        t,
        ans,
        lax.mul(
            _igamma_density(a, x),
            lax.sub(lax.log(_common_shape(a, x)[1]), lax.digamma(a)),
        ),
    ),
)


def _random_gamma_grad_dx(t, ans, a, x):
    """r = -(dP/da) / p, so dr/dx = -(log x - digamma(a)) - r ((a - 1)/x - 1)."""
    a, x = _common_shape(a, x)
    one = _c(1.0, a)
    slope = lax.sub(lax.div(lax.sub(a, one), x), one)
    value = lax.neg(lax.add(lax.sub(lax.log(x), lax.digamma(a)), lax.mul(ans, slope)))
    return _times(t, ans, value)


defjvp(
    random_gamma_grad_p,
    _not_differentiable("random_gamma_grad", "a", "(as in JAX)"),
    _random_gamma_grad_dx,
)
_BETAINC_AB = "(as in JAX, whose betainc is differentiable in x only)"
defjvp(
    regularized_incomplete_beta_p,
    _not_differentiable("betainc", "a", _BETAINC_AB),
    _not_differentiable("betainc", "b", _BETAINC_AB),
    lambda t, ans, a, b, x: _times(t, ans, _betainc_density(*_common_shape(a, b, x))),
)
defjvp(
    zeta_p,  # d/dq zeta(x, q) = -x zeta(x + 1, q)
    _not_differentiable("zeta", "x", "(as in JAX); differentiate with respect to q"),
    lambda t, ans, x, q: _times(
        t, ans, lax.mul(lax.neg(x), zeta_p.bind(lax.add(x, _c(1.0, x)), q))
    ),
)
defjvp(
    bessel_i0e_p,  # (e^-|x| I0)' = I1e(x) - sign(x) I0e(x)
    lambda t, ans, x: lax.mul(
        t, lax.sub(bessel_i1e_p.bind(x), lax.mul(lax.sign(x), ans))
    ),
)


def _bessel_i1e_jvp(t, ans, x):
    """(e^-|x| I1)' = I0e(x) - I1e(x) (sign(x) + 1/x); 1/2 at x = 0."""
    zero = lax.eq(x, _c(0.0, x))
    safe = _where(zero, _full(1.0, x), x)
    slope = lax.sub(
        bessel_i0e_p.bind(x),
        lax.mul(ans, lax.add(lax.sign(x), lax.div(_c(1.0, x), safe))),
    )
    return lax.mul(t, _where(zero, _full(0.5, x), slope))


defjvp(bessel_i1e_p, _bessel_i1e_jvp)


# ---- public functions ------------------------------------------------------------
def _operands(*args):
    """Python scalars take the dtype of the array operands."""
    return lax._match_scalars(*args)


# The incomplete gamma functions' arguments (op_docs.with_sections).
_GAMMA_ARGS = """Args:
  a: the shape parameter, positive.
  x: the point, non-negative, of a's shape and dtype."""


@with_sections(_GAMMA_ARGS, RETURNS_LIKE_OPERANDS, RAISES_NOT_REAL_FLOAT_OR_DIFFER)
def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x).

    Example:
      >>> lax.igamma(np.float32(1.0), np.float32(2.0)).round(5)  # 1 - e^-2
      Array(0.86467, dtype=float32)
    """
    return igamma_p.bind(*_operands(a, x))


@with_sections(_GAMMA_ARGS, RETURNS_LIKE_OPERANDS, RAISES_NOT_REAL_FLOAT_OR_DIFFER)
def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), accurate where P is near 1.

    Example:
      >>> lax.igammac(jnp.float32(1.0), jnp.float32(2.0))
      Array(0.1353345, dtype=float32)
    """
    return igammac_p.bind(*_operands(a, x))


@with_sections(RETURNS_LIKE_OPERANDS, RAISES_NOT_REAL_FLOAT_OR_DIFFER)
def igamma_grad_a(a, x):
    """dP(a, x)/da, the derivative of igamma in its shape a.

    Args:
      a: the shape parameter, positive.
      x: the point, of a's shape and dtype.

    Example:
      >>> lax.igamma_grad_a(jnp.float32(1.0), jnp.float32(1.0))
      Array(-0.43172967, dtype=float32)
    """
    return igamma_grad_a_p.bind(*_operands(a, x))


@with_sections(RETURNS_LIKE_OPERANDS, RAISES_NOT_REAL_FLOAT_OR_DIFFER)
def random_gamma_grad(a, x):
    """The derivative of a Gamma(a, 1) sample x with respect to a.

    dx/da for a Gamma(a, 1) sample x held at its quantile (the implicit
    reparameterisation gradient olympus.random.gamma differentiates with).

    Args:
      a: the shape parameter, positive.
      x: a Gamma(a, 1) sample, of a's shape and dtype.

    Example:
      >>> lax.random_gamma_grad(jnp.float32(1.0), jnp.float32(1.0))
      Array(1.1735635, dtype=float32)
    """
    return random_gamma_grad_p.bind(*_operands(a, x))


@with_sections(RETURNS_LIKE_OPERANDS, RAISES_NOT_REAL_FLOAT_OR_DIFFER)
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b).

    Args:
      a: the first shape parameter, positive.
      b: the second shape parameter, positive.
      x: the point, in [0, 1]; a, b and x share one float dtype and shape.

    Example:
      >>> lax.betainc(np.float32(2.0), np.float32(3.0), np.float32(0.5)).round(5)
      Array(0.6875, dtype=float32)
    """
    return regularized_incomplete_beta_p.bind(*_operands(a, b, x))


@with_sections(RETURNS_LIKE_OPERANDS, RAISES_NOT_REAL_FLOAT_OR_DIFFER)
def zeta(x, q):
    """The Hurwitz zeta function sum_k (q + k)^-x.

    Args:
      x: the exponent, > 1 for convergence.
      q: the offset, positive, of x's shape and dtype.

    Example:
      >>> lax.zeta(jnp.float32(2.0), jnp.float32(1.0))
      Array(1.644934, dtype=float32)
    """
    return zeta_p.bind(*_operands(x, q))


@with_sections(ARGS_REAL_X, RETURNS_LIKE_X, RAISES_NOT_REAL_FLOAT)
def bessel_i0e(x):
    """The exponentially scaled modified Bessel function e**-|x| I0(x).

    Even in x, 1 at 0, decaying as 1 / sqrt(2 pi |x|): finite where I0 itself
    overflows (float32 beyond |x| of about 90).

    Example:
      >>> lax.bessel_i0e(jnp.array([0.0, 1.0]))
      Array([1.        , 0.46575963], dtype=float32)
    """
    return bessel_i0e_p.bind(x)


@with_sections(ARGS_REAL_X, RETURNS_LIKE_X, RAISES_NOT_REAL_FLOAT)
def bessel_i1e(x):
    """The exponentially scaled modified Bessel function e**-|x| I1(x).

    Odd in x and 0 at 0; bessel_i0e's derivative is
    bessel_i1e(x) - sign(x) * bessel_i0e(x).

    Example:
      >>> lax.bessel_i1e(jnp.array([0.0, 1.0]))
      Array([0.        , 0.20791042], dtype=float32)
    """
    return bessel_i1e_p.bind(x)
