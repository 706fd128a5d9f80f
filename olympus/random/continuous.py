"""Samplers of real-valued laws (uniform, normal, gamma and the laws built on
them, multivariate normal), each with JAX's algorithm and key use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.prng import KEY_WORDS, KeyArrayTypeError, PRNGKeyArray  # noqa: F401
from olympus.tracer.core import aval_of
from olympus.random.sampler_docs import BROADCAST_SHAPE, documented_sampler
from olympus.random.keys import (
    RandomParameterError,
    _as,
    _bits,
    _broadcast_to,
    _draw_uint,
    _float_dtype,
    _hash_counters,
    _nan_where,
    _param_shape,
    _shape,
    _split2,
    _threefry2x32_jit,
    _unit_from_bits,
    _unit_interval,
    _words_to_bits,
)


# ---- continuous distributions -----------------------------------------------------
@documented_sampler()
def _uniform(key, shape: Sequence[int] = (), dtype=None, minval=0.0, maxval=1.0):
    """Samples uniformly from [minval, maxval).

    Values are built from the key's random bits, so the same key gives the same draw under jit, vmap and eagerly.

    Args:
      minval: the lower bound, broadcast to shape.
      maxval: the upper bound (exclusive), broadcast to shape.

    Example:
      >>> x = olympus.random.uniform(olympus.random.key(0), (2, 3))
      >>> x.shape, x.dtype, bool(((x >= 0) & (x < 1)).all())
      ((2, 3), dtype('float32'), True)
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    lo, hi = _as(minval, dtype, shape), _as(maxval, dtype, shape)
    u = _unit_interval(key, shape, dtype)
    return lax.max(lo, lax.add(lax.mul(u, lax.sub(hi, lo)), lo))


@documented_sampler(
    dtype_error="TypeError: dtype is neither a floating nor a complex dtype."
)
def _normal(key, shape: Sequence[int] = (), dtype=None):
    """Samples from the standard normal distribution.

    Mean 0 and variance 1; for complex dtypes the real and imaginary parts each have variance 1/2. Scale and shift the result for other normals.

    Args:
      dtype: a floating or complex dtype (None: the default float type).

    Example:
      >>> x = olympus.random.normal(olympus.random.key(0), (2, 3))
      >>> x.shape, x.dtype
      ((2, 3), dtype('float32'))
    """
    if dtype is not None and dtypes.is_complex(dtypes.canonicalize_dtype(dtype)):
        return _complex_normal(key, _shape(shape), dtypes.canonicalize_dtype(dtype))
    dtype, shape = _float_dtype(dtype), _shape(shape)
    return _normal_from_bits(_bits(key, shape, _draw_uint(dtype)), dtype)


def _complex_normal(key, shape: tuple, dtype):
    """(re + 1j*im) / sqrt(2) from two halves of `key`, as JAX draws it, so
    |z|^2 has mean 1."""
    key_re, key_im = _split2(key)
    part = np.finfo(dtype).dtype
    re = _normal(key_re, shape, part)
    im = _normal(key_im, shape, part)
    root2 = np.array(np.sqrt(2), dtype)[()]
    return lax.div(lax.complex(re, im), root2)


def _normal_from_bits(raw, dtype):
    tiny = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))[()]
    u = _unit_from_bits(
        raw, dtype
    )  # to [tiny, 1), as uniform(minval=tiny, maxval=1) does
    u = lax.max(tiny, lax.add(lax.mul(u, np.array(1.0, dtype)[()] - tiny), tiny))
    return lax.mul(np.array(np.sqrt(2), dtype)[()], erf_inv(u))


@documented_sampler()
def _truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Samples from a standard normal truncated to [lower, upper].

    For initializers that must avoid large values.

    Args:
      lower: the lower bound, broadcast to shape.
      upper: the upper bound, broadcast to shape.
      shape: the output shape (None: the bounds' broadcast shape).

    Returns:
      An array within the bounds.

    Example:
      >>> x = olympus.random.truncated_normal(olympus.random.key(0), -1.0, 1.0, (5,))
      >>> bool((jnp.abs(x) <= 1).all())
      True
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, lower, upper)
    lo, hi = _as(lower, dtype, shape), _as(upper, dtype, shape)
    rsqrt2 = np.array(1 / np.sqrt(2), dtype)[()]
    a, b = lax.erf(lax.mul(lo, rsqrt2)), lax.erf(lax.mul(hi, rsqrt2))
    u = lax.add(a, lax.mul(_unit_interval(key, shape, dtype), lax.sub(b, a)))
    out = lax.mul(np.array(np.sqrt(2), dtype)[()], erf_inv(u))
    return lax.clamp(lo, out, hi)


@documented_sampler()
def _exponential(key, shape: Sequence[int] = (), dtype=None):
    """Samples from the exponential distribution of rate 1.

    Divide by a rate for other rates.

    Returns:
      A non-negative array.

    Example:
      >>> olympus.random.exponential(olympus.random.key(0), (2,)).shape
      (2,)
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    return lax.neg(lax.log1p(lax.neg(_unit_interval(key, shape, dtype))))


@documented_sampler(example="")
def _laplace(key, shape: Sequence[int] = (), dtype=None):
    """Samples of the standard Laplace distribution.

    Laplace floats (density exp(-|x|) / 2): sign(U) log(1 - |U|) for U uniform
    in (-1, 1).
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    tiny = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, shape, dtype, minval=float(tiny), maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@documented_sampler(example="")
def _logistic(key, shape: Sequence[int] = (), dtype=None):
    """Samples of the standard logistic distribution.

    Standard logistic floats: log(U / (1 - U)) for U uniform in [tiny, 1).
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    u = _uniform(key, shape, dtype, minval=float(np.finfo(dtype).tiny), maxval=1.0)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


@documented_sampler(example="")
def _gumbel(key, shape: Sequence[int] = (), dtype=None):
    """Samples of the standard Gumbel distribution.

    Standard Gumbel floats: -log(-log(U)) for U in (0, 1).
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    u = _unit_interval(key, shape, dtype)
    tiny = np.array(
        np.finfo(np.float32).tiny if dtype.itemsize < 4 else np.finfo(dtype).tiny, dtype
    )[()]
    u = lax.max(u, tiny)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


# ---- the inverse error function ----------------------------------------------------
# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): a
# polynomial in w = -log(1 - x^2), one for the centre and one for the tails.
_ERFINV_CENTRE = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERFINV_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def _horner(coeffs, w, dtype):
    p = lax.full(aval_of(w).shape, coeffs[0], dtype)
    for c in coeffs[1:]:
        p = lax.add(lax.mul(p, w), np.array(c, dtype)[()])
    return p


def erf_inv(x):
    """The inverse error function, elementwise.

    The inverse of erf on (-1, 1), +-inf at +-1. Float32 accuracy by Giles'
    polynomials; wider types add Newton steps on erf.

    Args:
      x: an array of a floating dtype.

    Returns:
      An array of x's shape and dtype.

    Raises:
      OlympusTypeError: x is not an array or a number.

    Example:
      >>> olympus.random.erf_inv(jnp.array([0.0, 0.5]))
      Array([0.        , 0.47693628], dtype=float32)
    """
    dtype = aval_of(x).dtype
    calc = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    x = lax.convert_element_type(x, calc)
    c = lambda v: np.array(v, calc)[()]
    w = lax.neg(lax.log1p(lax.neg(lax.mul(x, x))))
    centre = _horner(_ERFINV_CENTRE, lax.sub(w, c(2.5)), calc)
    tail = _horner(_ERFINV_TAIL, lax.sub(lax.sqrt(w), c(3.0)), calc)
    y = lax.mul(lax.select(lax.lt(w, c(5.0)), centre, tail), x)
    if calc.itemsize > 4:
        y = _erf_inv_newton(x, y, c)
    edge = lax.mul(lax.sign(x), c(np.inf))
    y = lax.select(lax.eq(lax.abs(x), c(1.0)), edge, y)
    return lax.convert_element_type(y, dtype)


def _erf_inv_newton(x, y, c):
    """Two Newton steps on erf(y) = x, where erf' = 2/sqrt(pi) exp(-y^2) is not tiny."""
    for _ in range(2):
        slope = lax.mul(c(2 / np.sqrt(np.pi)), lax.exp(lax.neg(lax.mul(y, y))))
        safe = lax.gt(slope, c(1e-300))
        step = lax.div(
            lax.sub(lax.erf(y), x),
            lax.select(safe, slope, lax.full(aval_of(y).shape, 1.0, aval_of(y).dtype)),
        )
        y = lax.select(safe, lax.sub(y, step), y)
    return y


@documented_sampler()
def _bernoulli(key, p=0.5, shape=None):
    """Samples booleans that are True with probability `p`.

    For dropout masks and coin flips.

    Args:
      p: the probability of True, broadcast to shape.
      shape: the output shape (None: p's shape).

    Returns:
      A boolean array.

    Raises:
      ValueError: shape does not broadcast with p.

    Example:
      >>> olympus.random.bernoulli(olympus.random.key(0), 0.5, (3,)).dtype
      dtype('bool')
    """
    shape = _param_shape(shape, p)
    dtype = dtypes.canonicalize_dtype(np.float64)
    if not isinstance(p, (int, float)) and dtypes.is_float(aval_of(p).dtype):
        dtype = aval_of(p).dtype
    return lax.lt(_uniform(key, shape, dtype), _as(p, dtype, shape))


# ---- per-value keys ---------------------------------------------------------------
# Samplers that loop per value (gamma's rejection loop) give element j of the
# result the key split(key, size)[j], and split it further inside the loop, as
# JAX's `_gamma_one` does under `lax.map`. Every step below works on a whole
# batch of keys at once: key words (k0, k1) of the sample's shape.
def _split_each(k0, k1, count: int):
    """Each key of a batch split into `count` keys: split(k, count)[i] for every k."""
    zero = lax.full(aval_of(k0).shape, np.uint32(0))
    return [
        _threefry2x32_jit(k0, k1, zero, lax.full(aval_of(k0).shape, np.uint32(i)))
        for i in range(count)
    ]


def _draw_each(k0, k1, dtype):
    """The random bits of one value of float `dtype` under each key of a batch:
    what bits(k, (), uint{width}) gives for every k."""
    zero = lax.full(aval_of(k0).shape, np.uint32(0))
    y0, y1 = _threefry2x32_jit(k0, k1, zero, zero)
    return _words_to_bits(y0, y1, _draw_uint(dtype))


def _uniform_each(k0, k1, dtype):
    return _unit_from_bits(_draw_each(k0, k1, dtype), dtype)


def _normal_each(k0, k1, dtype):
    return _normal_from_bits(_draw_each(k0, k1, dtype), dtype)


# ---- gamma and friends ---------------------------------------------------------
@documented_sampler()
def _gamma(key, a, shape=None, dtype=None):
    """Samples from Gamma distributions of shape parameter `a` (scale 1).

    Its gradient with respect to `a` is the implicit reparameterization gradient, as JAX's.

    Args:
      a: the shape parameter (> 0), broadcast to shape.
      shape: the output shape (None: a's shape).

    Returns:
      A positive array.

    Example:
      >>> olympus.random.gamma(olympus.random.key(0), 2.0, (3,)).shape
      (3,)
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, a)
    return _gamma_reparameterised(key, _as(a, dtype, shape))


@documented_sampler(shape=BROADCAST_SHAPE, example="0.1")
def _loggamma(key, a, shape=None, dtype=None):
    """Logarithms of Gamma(a, 1) samples.

    log of Gamma(a, 1) floats, accurate where the gamma sample itself would
    underflow (a << 1): the boost U**(1/a) is applied in log space.

    Args:
      a: the shape parameter, positive.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, a)
    return _loggamma_reparameterised(key, _as(a, dtype, shape))


def _marsaglia_tsang(key, alpha, log_space: bool = False):
    """Gamma(alpha, 1) floats (or their logs) by Marsaglia and Tsang's rejection
    method with JAX's key use: element j has key split(key, size)[j]; a < 1 is
    drawn as Gamma(a + 1) times U**(1/a)."""
    d, cube, log_boost, boost = _marsaglia_tsang_parts(key, alpha)
    if log_space:
        return lax.add(lax.add(lax.log(d), lax.log(cube)), log_boost)
    return lax.mul(lax.mul(d, cube), boost)


def _marsaglia_tsang_parts(key, alpha):
    """(d, V, log boost, boost): the sample is d V boost, boost = U**(1/alpha)
    for alpha < 1 and 1 otherwise (its log computed as JAX's loggamma does)."""
    dtype = aval_of(alpha).dtype
    c = lambda v: np.array(v, dtype)[()]
    k0, k1 = _hash_counters(key, aval_of(alpha).shape)
    unboosted = lax.ge(alpha, c(1.0))
    d = lax.sub(lax.select(unboosted, alpha, lax.add(alpha, c(1.0))), c(1 / 3))
    (k0, k1), (b0, b1) = _split_each(k0, k1, 2)
    cube = _marsaglia_tsang_loop(k0, k1, d, lax.div(c(1 / 3), lax.sqrt(d)))
    u = _uniform_each(b0, b1, dtype)
    log_u = lax.neg(lax.neg(lax.log1p(lax.neg(u))))  # -exponential(k)
    skip = lax.bitwise_or(unboosted, lax.eq(log_u, c(0.0)))
    log_boost = lax.mul(log_u, lax.div(c(1.0), alpha))
    log_boost = lax.select(skip, lax.full_like(alpha, 0.0), log_boost)
    boost = lax.pow(lax.sub(c(1.0), u), lax.div(c(1.0), alpha))
    boost = lax.select(unboosted, lax.full_like(alpha, 1.0), boost)
    return d, cube, log_boost, boost


def _marsaglia_tsang_loop(k0, k1, d, scale):
    """V = (1 + scale x)**3 of the first accepted candidate of every element:
    each round splits the element's key in three (next key, normal, uniform)."""
    dtype = aval_of(d).dtype
    c = lambda v: np.array(v, dtype)[()]

    def rejected(state):
        _, _, x2, v, u = state
        squeeze = lax.ge(u, lax.sub(c(1.0), lax.mul(c(0.0331), lax.mul(x2, x2))))
        bound = lax.add(
            lax.mul(x2, c(0.5)),
            lax.mul(d, lax.add(lax.sub(c(1.0), v), lax.log(v))),
        )
        return lax.bitwise_and(squeeze, lax.ge(lax.log(u), bound))

    def step(state):
        live = rejected(state)
        (n0, n1), (x0, x1), (u0, u1) = _split_each(state[0], state[1], 3)
        x, v = _positive_candidate(x0, x1, scale)
        fresh = (n0, n1, lax.mul(x, x), lax.mul(lax.mul(v, v), v))
        fresh = (*fresh, _uniform_each(u0, u1, dtype))
        return tuple(lax.select(live, f, s) for f, s in zip(fresh, state))

    def pending(state):
        return lax.reduce_or(rejected(state), tuple(range(aval_of(d).ndim)))

    init = (k0, k1, lax.full_like(d, 0.0), lax.full_like(d, 1.0))
    return lax.while_loop(pending, step, (*init, lax.full_like(d, 2.0)))[3]


def _positive_candidate(k0, k1, scale):
    """(x, 1 + scale x) for the first normal x, drawn by splitting each key in
    two (next key, draw), for which 1 + scale x > 0."""
    dtype = aval_of(scale).dtype

    def step(state):
        k0, k1, x, v = state
        (n0, n1), (s0, s1) = _split_each(k0, k1, 2)
        x_new = _normal_each(s0, s1, dtype)
        v_new = lax.add(np.array(1.0, dtype)[()], lax.mul(x_new, scale))
        live = lax.le(v, np.array(0.0, dtype)[()])
        fresh = (n0, n1, x_new, v_new)
        return tuple(lax.select(live, f, s) for f, s in zip(fresh, state))

    def pending(state):
        return lax.reduce_or(
            lax.le(state[3], np.array(0.0, dtype)[()]), tuple(range(aval_of(k0).ndim))
        )

    init = (k0, k1, lax.full_like(scale, 0.0), lax.full_like(scale, -1.0))
    _, _, x, v = lax.while_loop(pending, step, init)
    return x, v


# The derivative of a gamma sample in its shape parameter (implicit
# reparameterisation: dx/da = -(dP/da)(a, x) / p(x; a)) is lax's
# random_gamma_grad primitive, as in JAX.
_gamma_sample_grad = lax.random_gamma_grad


def _gamma_reparameterised_rule(primals, tangents):
    """The key (integer words) has no tangent; the sample's is dx/da * da."""
    (key, alpha), (_, alpha_dot) = primals, tangents
    x = _marsaglia_tsang(key, alpha)
    return x, lax.mul(alpha_dot, _gamma_sample_grad(alpha, x))


def _log_marsaglia_tsang(key, alpha):
    return _marsaglia_tsang(key, alpha, log_space=True)


def _loggamma_rule(primals, tangents):
    """d log x / da = (dx/da) / x as JAX computes it, except where x = exp(log x)
    underflows (tiny a): there JAX's value is meaningless, and the derivative
    is taken through the boost instead, d log(d V) / da + d (log U / a) / da."""
    (key, alpha), (_, alpha_dot) = primals, tangents
    d, cube, log_boost, _ = _marsaglia_tsang_parts(key, alpha)
    out = lax.add(lax.add(lax.log(d), lax.log(cube)), log_boost)
    dtype = aval_of(alpha).dtype
    c = lambda v: np.array(v, dtype)[()]
    x = lax.exp(out)
    tiny = np.finfo(dtype).tiny
    underflow = lax.lt(x, c(tiny))
    x = lax.max(x, c(tiny))
    slope = lax.div(_gamma_sample_grad(alpha, x), x)
    unboosted_alpha = lax.add(d, c(1 / 3))
    dv = lax.mul(d, cube)
    through_boost = lax.sub(
        lax.div(_gamma_sample_grad(unboosted_alpha, dv), dv),
        lax.div(log_boost, alpha),
    )
    slope = lax.select(underflow, through_boost, slope)
    return out, lax.mul(alpha_dot, slope)


def _reparameterised(sampler, rule):
    from olympus.lax.custom_derivatives import custom_jvp

    wrapped = custom_jvp(sampler)  # the key stays an argument: it may be traced
    wrapped.defjvp(rule)
    return wrapped


_gamma_reparameterised = _reparameterised(_marsaglia_tsang, _gamma_reparameterised_rule)
_loggamma_reparameterised = _reparameterised(_log_marsaglia_tsang, _loggamma_rule)


@documented_sampler()
def _beta(key, a, b, shape=None, dtype=None):
    """Samples from Beta(a, b) distributions on [0, 1].

    Built from two Gamma draws.

    Args:
      a: the first shape parameter (> 0).
      b: the second shape parameter (> 0).
      shape: the output shape (None: a's and b's broadcast shape).

    Returns:
      An array with values in [0, 1].

    Example:
      >>> olympus.random.beta(olympus.random.key(0), 2.0, 3.0, (2,)).shape
      (2,)
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, a, b)
    key_a, key_b = _split2(key)
    log_a = _loggamma(key_a, _as(a, dtype, shape), shape, dtype)
    log_b = _loggamma(key_b, _as(b, dtype, shape), shape, dtype)
    top = lax.max(log_a, log_b)
    x, y = lax.exp(lax.sub(log_a, top)), lax.exp(lax.sub(log_b, top))
    return lax.div(x, lax.add(x, y))


@documented_sampler()
def _dirichlet(key, alpha, shape=None, dtype=None):
    """Samples probability vectors from Dirichlet distributions.

    Each sample is non-negative and sums to 1 along the last axis.

    Args:
      alpha: the concentrations (> 0), shape (..., k).
      shape: the batch shape (None: alpha's batch shape).

    Returns:
      An array of shape `shape + (k,)`.

    Example:
      >>> x = olympus.random.dirichlet(olympus.random.key(0), jnp.ones(3))
      >>> x.shape, bool(jnp.isclose(x.sum(), 1.0))
      ((3,), True)
    """
    dtype = _float_dtype(dtype)
    if isinstance(alpha, (list, tuple)):
        alpha = np.asarray(alpha, dtype)
    alpha = lax.convert_element_type(alpha, dtype)
    if aval_of(alpha).ndim < 1:
        raise RandomParameterError(
            "random.dirichlet: alpha needs a last axis of categories, got a scalar"
        )
    k = aval_of(alpha).shape[-1]
    batch = aval_of(alpha).shape[:-1] if shape is None else _shape(shape)
    logs = _loggamma(key, _broadcast_to(alpha, (*batch, k)), (*batch, k), dtype)
    return _softmax_last(logs)


def _softmax_last(x):
    shape, last = aval_of(x).shape, aval_of(x).ndim - 1
    keep = tuple(range(last))
    top = lax.broadcast_in_dim(lax.reduce_max(x, (last,)), shape, keep)
    e = lax.exp(lax.sub(x, top))
    return lax.div(e, lax.broadcast_in_dim(lax.reduce_sum(e, (last,)), shape, keep))


# ---- more laws built from the ones above ---------------------------------------------
@documented_sampler(example="")
def _cauchy(key, shape: Sequence[int] = (), dtype=None):
    """Samples of the standard Cauchy distribution.

    Standard Cauchy floats: tan(pi (U - 1/2)) for U uniform in [eps, 1).
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    u = _uniform(key, shape, dtype, minval=float(np.finfo(dtype).eps), maxval=1.0)
    return lax.tan(
        lax.mul(np.array(np.pi, dtype)[()], lax.sub(u, np.array(0.5, dtype)[()]))
    )


@documented_sampler(dtype_error=None, example="", example_dtype="int32")
def _rademacher(key, shape: Sequence[int] = (), dtype=None):
    """Random signs: -1 or +1 with equal probability.

    -1 or +1 with equal probability: 2 bernoulli(key, 0.5) - 1.

    Args:
      dtype: an integer or floating dtype; None for the default int.

    Example:
      >>> bool((jnp.abs(x) == 1).all())
      True
    """
    shape = _shape(shape)
    dtype = dtypes.canonicalize_dtype(np.int64 if dtype is None else dtype)
    heads = lax.convert_element_type(_bernoulli(key, 0.5, shape), dtype)
    two, one = np.array(2, dtype)[()], np.array(1, dtype)[()]
    return lax.sub(lax.mul(two, heads), one)


@documented_sampler(shape=BROADCAST_SHAPE, example="3.0")
def _chisquare(key, df, shape=None, dtype=None):
    """Samples of the chi-squared distribution.

    Chi-squared floats with `df` degrees of freedom: 2 exp(loggamma(df / 2)).

    Args:
      df: the degrees of freedom, positive (broadcasts with shape).
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, df)
    half = lax.div(_as(df, dtype, shape), np.array(2.0, dtype)[()])
    log_g = _loggamma(key, half, shape, dtype)
    return lax.mul(lax.exp(log_g), np.array(2.0, dtype)[()])


@documented_sampler(shape=BROADCAST_SHAPE, example="3.0")
def _t(key, df, shape=None, dtype=None):
    """Samples of Student's t distribution.

    Student's t floats: Z sqrt((df / 2) / G) for Z normal and G ~ Gamma(df / 2),
    from the two halves of split(key).

    Args:
      df: the degrees of freedom, positive.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, df)
    key_n, key_g = _split2(key)
    z = _normal(key_n, shape, dtype)
    half = lax.div(_as(df, dtype, shape), np.array(2.0, dtype)[()])
    g = _gamma(key_g, half, shape, dtype)
    return lax.mul(z, lax.sqrt(lax.div(half, g)))


@documented_sampler(shape=BROADCAST_SHAPE, example="2.0, 5.0")
def _f(key, dfnum, dfden, shape=None, dtype=None):
    """Samples of the F distribution.

    F floats, (X / dfnum) / (Y / dfden) for chi-squared X, Y with dfnum and
    dfden degrees of freedom (Y from split(key)[0], X from split(key)[1]).

    Args:
      dfnum: the numerator's degrees of freedom.
      dfden: the denominator's degrees of freedom.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, dfnum, dfden)
    dfnum, dfden = _as(dfnum, dtype, shape), _as(dfden, dtype, shape)
    key_den, key_num = _split2(key)
    num = lax.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_den, dfden, shape, dtype), dfden)
    return lax.div(num, den)


@documented_sampler()
def _multivariate_normal(key, mean, cov, shape=None, dtype=None):
    """Samples from a multivariate normal with given mean and covariance.

    The covariance is factored (Cholesky) once per call.

    Args:
      mean: the mean vector(s), shape (..., n).
      cov: the covariance matrix (matrices), shape (..., n, n), positive
        semi-definite.
      shape: the batch shape (None: mean's and cov's broadcast batch shape).

    Returns:
      An array of shape `shape + (n,)`.

    Raises:
      ValueError: mean and cov's shapes do not fit together.

    Example:
      >>> olympus.random.multivariate_normal(olympus.random.key(0), jnp.zeros(2), jnp.eye(2), (3,)).shape
      (3, 2)
    """
    from olympus.lax import linalg as lax_linalg

    dtype = _float_dtype(dtype)
    mean, cov = (
        lax.convert_element_type(mean, dtype),
        lax.convert_element_type(cov, dtype),
    )
    n = aval_of(mean).shape[-1]
    if aval_of(cov).shape[-2:] != (n, n):
        raise ValueError(
            f"random.multivariate_normal: cov of shape {aval_of(cov).shape} does not "
            f"match mean of shape {aval_of(mean).shape}"
        )
    batch = tuple(
        np.broadcast_shapes(aval_of(mean).shape[:-1], aval_of(cov).shape[:-2])
    )
    shape = batch if shape is None else _shape(shape)
    factor = _broadcast_to(lax_linalg.cholesky(cov), (*shape, n, n))
    z = lax.expand_dims(_normal(key, (*shape, n), dtype), (len(shape) + 1,))
    lz = lax.reshape(lax_linalg.matmul(factor, z), (*shape, n))
    return lax.add(_broadcast_to(mean, (*shape, n)), lz)


@documented_sampler(shape=BROADCAST_SHAPE, example="3.0")
def _pareto(key, b, shape=None, dtype=None):
    """Samples of the Pareto distribution.

    Pareto floats with density b / x^(b + 1) on x >= 1: exp(E / b) for E
    exponential (inversion). b < 0 or nan gives nan.

    Args:
      b: the shape parameter, positive.

    Example:
      >>> bool((x >= 1).all())
      True
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, b)
    b = _as(b, dtype, shape)
    x = lax.exp(lax.div(_exponential(key, shape, dtype), b))
    return _nan_where(lax.bitwise_not(lax.ge(b, np.array(0.0, dtype)[()])), x)


@documented_sampler(example="1.0, 2.0")
def _weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Samples of the Weibull distribution.

    Weibull floats, density proportional to x^(c-1) exp(-(x/scale)^c): scale *
    E^(1/c) for E exponential (inversion). The result has the shape `shape`
    broadcast with the parameters', one independent draw per element.

    Args:
      scale: the scale, positive.
      concentration: the shape parameter c, positive.
    """
    dtype = _float_dtype(dtype)
    shape = tuple(
        np.broadcast_shapes(_shape(shape), _param_shape(None, scale, concentration))
    )
    scale, conc = _as(scale, dtype, shape), _as(concentration, dtype, shape)
    e = _exponential(key, shape, dtype)
    return lax.mul(scale, lax.pow(e, lax.div(np.array(1.0, dtype)[()], conc)))


@documented_sampler(example="1.5")
def _generalized_normal(key, p, shape=(), dtype=None):
    """Samples of the generalized normal distribution.

    Floats with density proportional to exp(-|x|^p): a random sign (from
    split(key)[1]) times G^(1/p) for G ~ Gamma(1/p) (from split(key)[0]). The
    result has `shape` broadcast with p's.

    Args:
      p: the exponent of the density exp(-|x|**p), positive.
    """
    dtype = _float_dtype(dtype)
    shape = tuple(np.broadcast_shapes(_shape(shape), _param_shape(None, p)))
    p = _as(p, dtype, shape)
    one = np.array(1.0, dtype)[()]
    k_gamma, k_sign = _split2(key)
    g = _gamma(k_gamma, lax.div(one, p), shape, dtype)
    r = _rademacher(k_sign, shape, dtype)
    return lax.mul(r, lax.pow(g, lax.div(one, p)))


@documented_sampler()
def _ball(key, d: int, p: float = 2, shape=(), dtype=None):
    """Points uniform in the unit l_p ball of R^d.

    Points uniform in the unit l_p ball of R^d, shape (*shape, d): X / (|X|_p^p
    + Y)^(1/p) for X with i.i.d. generalized-normal(p) coordinates and Y
    exponential (Barthe, Guedon, Mendelson and Naor, "A probabilistic approach
    to the geometry of the l_p^n ball", 2005).

    Args:
      d: the dimension.
      p: the norm's exponent (2 for the Euclidean ball).

    Returns:
      An array of shape (*shape, d).

    Example:
      >>> k = olympus.random.key(0)
      >>> x = olympus.random.ball(k, 3, shape=(4,))
      >>> x.shape, bool((jnp.linalg.norm(x, axis=-1) <= 1).all())
      ((4, 3), True)
    """
    dtype = _float_dtype(dtype)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
        raise RandomParameterError(
            f"random.ball: d must be a non-negative int, got {d!r}"
        )
    if not p > 0:
        raise RandomParameterError(f"random.ball: p must be positive, got {p!r}")
    shape = _shape(shape)
    k1, k2 = _split2(key)
    x = _generalized_normal(k1, float(p), (*shape, int(d)), dtype)
    y = _exponential(k2, shape, dtype)
    c = lambda v: np.array(v, dtype)[()]
    total = lax.add(lax.reduce_sum(lax.pow(lax.abs(x), c(p)), (len(shape),)), y)
    radius = lax.pow(total, c(1.0 / p))
    return lax.div(
        x, lax.broadcast_in_dim(radius, (*shape, int(d)), tuple(range(len(shape))))
    )


@documented_sampler()
def _orthogonal(key, n: int, shape=(), dtype=None, m=None):
    """Haar-random matrices with orthonormal columns (or rows).

    Haar-random matrices of shape (*shape, n, m) with orthonormal columns (n >=
    m) or rows (n < m): the QR factor of a Gaussian matrix, its columns' signs
    fixed by R's diagonal (Mezzadri, "How to generate random matrices from the
    classical compact groups", 2007). Real dtypes only.

    Args:
      n: the number of rows.
      m: the number of columns (None: n).

    Returns:
      An array of shape (*shape, n, m).

    Example:
      >>> k = olympus.random.key(0)
      >>> q = olympus.random.orthogonal(k, 3)
      >>> bool(jnp.allclose(q @ q.T, jnp.eye(3), atol=1e-5))
      True
    """
    dtype = _float_dtype(dtype)
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise RandomParameterError(
                f"random.orthogonal: {name} must be a non-negative int, got {v!r}"
            )
    from olympus.lax import linalg as lax_linalg

    shape = _shape(shape)
    tall, wide = max(n, m), min(n, m)
    z = _normal(key, (*shape, tall, wide), dtype)
    q, r = lax_linalg.qr(z, full_matrices=False)
    signs = lax.sign(lax_linalg.diagonal(r))
    signs = lax.select(
        lax.eq(signs, np.array(0.0, dtype)[()]),
        lax.full(aval_of(signs).shape, 1.0, dtype),
        signs,
    )
    rank = len(shape)
    q = lax.mul(
        q, lax.broadcast_in_dim(signs, (*shape, tall, wide), (*range(rank), rank + 1))
    )
    return q if n >= m else lax.transpose(q, (*range(rank), rank + 1, rank))


@documented_sampler(shape=BROADCAST_SHAPE, example="0.0, 1.0, 2.0")
def _triangular(key, left, mode, right, shape=None, dtype=None):
    """Samples of the triangular distribution.

    Triangular floats on [left, right] peaking at mode, by inverting the CDF.
    Parameters with left <= mode <= right violated, or left == right, give nan.

    Args:
      left: the lower end.
      mode: the peak, left <= mode <= right.
      right: the upper end.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, left, mode, right)
    lo, peak, hi = (_as(v, dtype, shape) for v in (left, mode, right))
    width = lax.sub(hi, lo)
    u = _unit_interval(key, shape, dtype)
    cut = lax.div(lax.sub(peak, lo), width)
    rising = lax.add(lo, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(peak, lo))))
    falling = lax.sub(
        hi,
        lax.sqrt(
            lax.mul(
                lax.mul(lax.sub(np.array(1.0, dtype)[()], u), width), lax.sub(hi, peak)
            )
        ),
    )
    x = lax.select(lax.lt(u, cut), rising, falling)
    ordered = lax.bitwise_and(
        lax.bitwise_and(lax.le(lo, peak), lax.le(peak, hi)), lax.lt(lo, hi)
    )
    return _nan_where(lax.bitwise_not(ordered), x)


@documented_sampler(shape=BROADCAST_SHAPE, example="1.0")
def _wald(key, mean, shape=None, dtype=None):
    """Samples of the Wald (inverse Gaussian) distribution.

    Wald (inverse Gaussian) floats with mean `mean` and shape parameter 1, by
    Michael, Schucany and Haas' transformation with multiple roots (1976): the
    normal from split(key)[0], the uniform choosing a root from split(key)[1].

    Args:
      mean: the mean, positive.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, mean)
    c = lambda v: np.array(v, dtype)[()]
    mu = _as(mean, dtype, shape)
    k1, k2 = _split2(key)
    v = _normal(k1, shape, dtype)
    z = _uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    mu2 = lax.integer_pow(mu, 2)
    root = lax.sqrt(
        lax.add(lax.mul(lax.mul(c(4.0), mu), y), lax.mul(mu2, lax.integer_pow(y, 2)))
    )
    x = lax.sub(
        lax.add(mu, lax.div(lax.mul(mu2, y), c(2.0))),
        lax.mul(lax.div(mu, c(2.0)), root),
    )
    return lax.select(lax.le(z, lax.div(mu, lax.add(mu, x))), x, lax.div(mu2, x))


@documented_sampler(example="")
def _maxwell(key, shape=(), dtype=None):
    """Samples of the one-sided Maxwell distribution.

    One-sided Maxwell floats (density proportional to x^2 exp(-x^2 / 2)): the
    length of a standard normal vector in R^3.

    Example:
      >>> bool((x >= 0).all())
      True
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    z = _normal(key, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(z, z), (len(shape),)))


@documented_sampler(shape=BROADCAST_SHAPE, example="0.5")
def _lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Samples of the log-normal distribution.

    Log-normal floats: exp(sigma Z) for a standard normal Z.

    Args:
      sigma: the standard deviation of the underlying normal.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, sigma)
    return lax.exp(lax.mul(_as(sigma, dtype, shape), _normal(key, shape, dtype)))


@documented_sampler(shape=BROADCAST_SHAPE, example="1.0")
def _rayleigh(key, scale, shape=None, dtype=None):
    """Samples of the Rayleigh distribution.

    Rayleigh floats (density x / s^2 exp(-x^2 / (2 s^2))): the inverse CDF, s
    sqrt(-2 log U), at U uniform in [0, 1).

    Args:
      scale: the scale, positive.
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, scale)
    log_u = lax.log(_uniform(key, shape, dtype))
    root = lax.sqrt(lax.mul(log_u, np.array(-2.0, dtype)[()]))
    return lax.mul(_as(scale, dtype, shape), root)


@documented_sampler(example="0.0, 1.0")
def _double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Samples of the double-sided Maxwell distribution.

    loc + scale * (a random sign times a one-sided Maxwell float). The shape is
    `shape` (the parameters' shape if empty) followed by the parameters'
    broadcast shape, as JAX has it.

    Args:
      loc: the location.
      scale: the scale, positive.
    """
    dtype = _float_dtype(dtype)
    params = _param_shape(None, loc, scale)
    shape = (_shape(shape) or params) + params
    k_length, k_sign = _split2(key)
    signs = _rademacher(k_sign, shape, dtype)
    z = lax.mul(signs, _maxwell(k_length, shape, dtype))
    return lax.add(lax.mul(z, _as(scale, dtype, shape)), _as(loc, dtype, shape))
