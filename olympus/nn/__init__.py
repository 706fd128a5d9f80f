"""olympus.nn: activation functions and the normalisations around them.

Every function here is written to stay finite where a naive formula
overflows: at inputs of +-1e4 in float32 the values are exact (softplus(1e4)
is 1e4, log_sigmoid(-1e4) is -1e4, softmax of [1e4, -1e4] is [1, 0]) and
their gradients are finite. The trick is always the same: never exponentiate
a large positive number; shift by the maximum, or split on the sign.

    >>> import olympus.nn as nn
    >>> nn.softmax(jnp.array([1e4, -1e4]))
    Array([1., 0.], dtype=float32)
"""

from __future__ import annotations

import operator

import numpy as np

import olympus.numpy as jnp
from olympus import lax
from olympus.lax.custom_derivatives import custom_jvp, stop_gradient
from olympus.lax.op_docs import RETURNS_LIKE_X as _RETURNS_LIKE_X, with_sections
from olympus.numpy.core import normalize_axes, normalize_axis, promote_dtypes_inexact

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "log1mexp",
    "logmeanexp",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "logsumexp",
    "normalize",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]


# The docstring sections the activations share (see lax.op_docs.with_sections).
_ARGS_PROMOTED = (
    "Args:\n  x: an array of an inexact dtype (integers are promoted to float)."
)
_ARGS_INEXACT = "Args:\n  x: an array of an inexact dtype (or a Python number)."
_RETURNS_INEXACT = "Returns:\n  An array of x's shape and (inexact) dtype."
_RAISES_NOT_ARRAY = (
    "Raises:\n  OlympusTypeError: x is not an array, a NumPy array or a Python "
    "number (a\n    string, say)."
)


def _axes(axis, ndim: int) -> tuple:
    """`axis` (None: all) as non-negative axes; one out of range raises as JAX's."""
    return normalize_axes(axis, ndim)


# ---- elementwise activations ------------------------------------------------------
@custom_jvp
@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def relu(x):
    """The rectified linear unit max(x, 0), elementwise.

    Its derivative at 0 is taken as 0, as JAX's.

    Example:
      >>> olympus.nn.relu(jnp.array([-1.0, 0.0, 2.0]))
      Array([0., 0., 2.], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.maximum(x, jnp.zeros_like(x))


@relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    x = jnp.asarray(x)
    return relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


@custom_jvp
@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def relu6(x):
    """relu capped at 6: min(max(x, 0), 6), elementwise.

    Bounded activations suit low-precision arithmetic.

    Example:
      >>> olympus.nn.relu6(jnp.array([-1.0, 3.0, 8.0]))
      Array([0., 3., 6.], dtype=float32)
    """
    return jnp.minimum(jnp.maximum(jnp.asarray(x), 0.0), 6.0)


@relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    x = jnp.asarray(x)
    inside = (x > 0) & (x < 6)
    return relu6(x), jnp.where(inside, t, jnp.zeros_like(t))


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def leaky_relu(x, negative_slope: float = 1e-2):
    """relu with a small slope for negative inputs: x if x >= 0 else slope * x.

    Keeps a gradient flowing for negative inputs.

    Args:
      negative_slope: the slope for x < 0.

    Example:
      >>> olympus.nn.leaky_relu(jnp.array([-1.0, 2.0]), 0.1)
      Array([-0.1,  2. ], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def elu(x, alpha: float = 1.0):
    """The exponential linear unit: x for x > 0, alpha * (exp(x) - 1) else.

    Smooth negative part that saturates at -alpha.

    Args:
      alpha: the scale of the negative part.

    Example:
      >>> olympus.nn.elu(jnp.array([-1.0, 1.0]))
      Array([-0.63212055,  1.        ], dtype=float32)
    """
    x = jnp.asarray(x)
    safe = jnp.where(x > 0, jnp.zeros_like(x), x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def selu(x):
    """The scaled ELU, with the constants that make activations self-normalize.

    scale * elu(x, alpha) with alpha ~ 1.6733 and scale ~ 1.0507.

    Example:
      >>> olympus.nn.selu(jnp.array([0.0]))
      Array([0.], dtype=float32)
    """
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * elu(x, alpha)


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def celu(x, alpha: float = 1.0):
    """The continuously differentiable ELU: max(x, 0) + alpha * min(exp(x / alpha) - 1, 0).

    Unlike elu, its derivative is continuous for every alpha.

    Args:
      alpha: the scale of the negative part.

    Example:
      >>> olympus.nn.celu(jnp.array([-1.0, 1.0]), alpha=2.0)  # 2 (e^-0.5 - 1)
      Array([-0.78693867,  1.        ], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x)), elementwise.

    Computed stably for large |x| (no overflow).

    Example:
      >>> olympus.nn.sigmoid(jnp.array([0.0]))
      Array([0.5], dtype=float32)
    """
    x = jnp.asarray(x)
    return lax.logistic(x if _is_float(x) else x.astype(jnp.float32))


def _is_float(x) -> bool:
    return jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating)


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def softplus(x):
    """The smooth relu log(1 + exp(x)), elementwise, computed stably.

    Positive everywhere; approaches x for large x without overflow.

    Example:
      >>> olympus.nn.softplus(jnp.array([0.0]))
      Array([0.6931472], dtype=float32)
    """
    return jnp.logaddexp(jnp.asarray(x), 0.0)


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def log_sigmoid(x):
    """log(sigmoid(x)), elementwise, computed stably.

    Equal to -softplus(-x); accurate where sigmoid underflows.

    Example:
      >>> olympus.nn.log_sigmoid(jnp.array([0.0]))
      Array([-0.6931472], dtype=float32)
    """
    return -softplus(-jnp.asarray(x))


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def silu(x):
    """The SiLU (swish) activation x * sigmoid(x), elementwise.

    Smooth and non-monotonic near 0; `swish` is the same function.

    Example:
      >>> olympus.nn.silu(jnp.array([0.0]))
      Array([0.], dtype=float32)
    """
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def hard_sigmoid(x):
    """A piecewise-linear sigmoid, relu6(x + 3) / 6.

    Cheap to compute: 0 below -3, 1 above 3 and linear between.

    Example:
      >>> olympus.nn.hard_sigmoid(jnp.array([-2.0, 0.0, 2.0]))
      Array([0.16666667, 0.5       , 0.8333334 ], dtype=float32)
    """
    return relu6(jnp.asarray(x) + 3.0) / 6.0


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def hard_silu(x):
    """x * hard_sigmoid(x); another name of hard_silu.

    The MobileNetV3 name of hard_silu; the two are the same function.

    Example:
      >>> olympus.nn.hard_swish(jnp.array([-2.0, 0.0, 2.0]))
      Array([-0.33333334,  0.        ,  1.6666667 ], dtype=float32)
    """
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def hard_tanh(x):
    """tanh's piecewise-linear approximation: x clipped to [-1, 1].

    Cheap where tanh's curvature does not matter.

    Example:
      >>> olympus.nn.hard_tanh(jnp.array([-2.0, 0.5]))
      Array([-1. ,  0.5], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def soft_sign(x):
    """x / (|x| + 1), a sigmoid-shaped function with polynomial tails.

    Bounded in (-1, 1); it approaches its limits more slowly than tanh.

    Example:
      >>> olympus.nn.soft_sign(jnp.array([-2.0, 0.0, 2.0]))
      Array([-0.6666667,  0.       ,  0.6666667], dtype=float32)
    """
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1.0)


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def mish(x):
    """The self-gated activation x * tanh(softplus(x)).

    x * tanh(softplus(x)) (Misra, 2019); softplus is the stable one above, so
    mish(-100) is a tiny negative number and mish(100) is 100.

    Example:
      >>> olympus.nn.mish(jnp.array([-2.0, 0.0, 2.0]))
      Array([-0.25250146,  0.        ,  1.943959  ], dtype=float32)
    """
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2, a smooth relu without exponentials.

    (x + sqrt(x^2 + b)) / 2, a smooth relu without exp (So, 2021). For x < 0 it
    is written b / (2 (sqrt(x^2 + b) - x)), which does not cancel.

    Args:
      b: the smoothness, a positive number (4 by default); 0 gives relu.

    Example:
      >>> olympus.nn.squareplus(jnp.array([-2.0, 0.0, 2.0]))
      Array([0.41421354, 1.        , 2.4142137 ], dtype=float32)
    """
    x = jnp.asarray(x)
    # Each branch sees only its own side, so neither divides by a cancelled
    # difference; at 0 the derivative is the positive branch's 1/2 (JAX's).
    below = jnp.where(x < 0, x, jnp.zeros_like(x))
    above = jnp.where(x < 0, jnp.zeros_like(x), x)  # NaN stays on this side
    negative = b / (2 * (jnp.sqrt(below * below + b) - below))
    positive = (above + jnp.sqrt(above * above + b)) / 2
    return jnp.where(x < 0, negative, positive)


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def sparse_plus(x):
    """A softplus whose curved part is a parabola on (-1, 1).

    0 for x <= -1, (x + 1)^2 / 4 for -1 < x < 1, x for x >= 1: the softplus-like
    function of sparsemax (Martins and Astudillo, 2016).

    Example:
      >>> olympus.nn.sparse_plus(jnp.array([-2.0, 0.0, 0.5, 2.0]))
      Array([0.    , 0.25  , 0.5625, 2.    ], dtype=float32)
    """
    x = jnp.asarray(x)
    inner = (x + 1.0) * (x + 1.0) / 4.0
    return jnp.where(x <= -1.0, jnp.zeros_like(x), jnp.where(x < 1.0, inner, x))


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def sparse_sigmoid(x):
    """A sigmoid that is exactly 0 below -1 and 1 above 1.

    The derivative of sparse_plus: 0, (x + 1) / 2 and 1 on its three pieces.

    Example:
      >>> olympus.nn.sparse_sigmoid(jnp.array([-2.0, 0.0, 0.5, 2.0]))
      Array([0.  , 0.5 , 0.75, 1.  ], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.clip((x + 1.0) / 2.0, 0.0, 1.0)


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X)
def tanh(x):
    """Elementwise hyperbolic tangent, as an activation.

    The same function as jnp.tanh (JAX's nn re-exports it); saturates to +-1
    without overflow.

    Raises:
      ArrayLikeTypeError: x is a list or other non-array (convert it with
        jnp.asarray).

    Example:
      >>> olympus.nn.tanh(jnp.array([0.0, 1.0]))
      Array([0.       , 0.7615942], dtype=float32)
    """
    return jnp.tanh(x)


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def identity(x):
    """x itself: the activation that does nothing.

    Useful as a default where a layer takes an activation.

    Example:
      >>> olympus.nn.identity(jnp.array([1.0, -1.0]))
      Array([ 1., -1.], dtype=float32)
    """
    return jnp.asarray(x)


@with_sections(_ARGS_PROMOTED, _RETURNS_INEXACT, _RAISES_NOT_ARRAY)
def gelu(x, approximate: bool = True):
    """The Gaussian error linear unit x * Phi(x), elementwise.

    With approximate=True, the tanh approximation (faster, as JAX's default); otherwise the exact form with erf.

    Args:
      approximate: whether to use the tanh approximation.

    Example:
      >>> olympus.nn.gelu(jnp.array([0.0]))
      Array([0.], dtype=float32)
    """
    x = jnp.asarray(x)
    if approximate:
        c = float(np.sqrt(2 / np.pi))
        return 0.5 * x * (1.0 + jnp.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1.0 + lax.erf(x * float(1 / np.sqrt(2))))


def glu(x, axis: int = -1):
    """The gated linear unit: x's first half times sigmoid of its second half.

    Args:
      x: an array whose `axis` has even size.
      axis: the axis split in two.

    Returns:
      An array with `axis` halved.

    Raises:
      ValueError: the axis' size is odd.

    Example:
      >>> olympus.nn.glu(jnp.array([2.0, 0.0]))
      Array([1.], dtype=float32)
    """
    x = jnp.asarray(x)
    n = x.shape[axis] // 2
    return _half(x, 0, n, axis) * sigmoid(_half(x, n, 2 * n, axis))


def _half(x, start: int, stop: int, axis: int):
    axis = axis % x.ndim
    starts = [0] * x.ndim
    stops = list(x.shape)
    starts[axis], stops[axis] = start, stop
    return lax.slice(x, starts, stops)


# ---- reductions over an axis --------------------------------------------------------
def logsumexp(
    a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None
):
    """log(sum(b * exp(a))) over `axis`, computed without overflow.

    The maximum is factored out before exponentiating, so huge or tiny
    values stay finite.

    Args:
      a: an array.
      axis: None (all elements), an int, or a tuple of ints.
      b: optional weights, broadcast against a.
      keepdims: if True, reduced axes stay with size 1.
      return_sign: if True, also return the sign of the sum (for negative b).
      where: a boolean mask of the elements to include.

    Returns:
      The reduced array, or `(result, sign)` with return_sign.

    Raises:
      IncompatibleShapesError: b does not broadcast with a.

    Example:
      >>> olympus.nn.logsumexp(jnp.array([0.0, 0.0]))
      Array(0.6931472, dtype=float32)
    """
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is None:
        (a,) = promote_dtypes_inexact(jnp.asarray(a))
    else:
        a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
        a = jnp.where(b != 0, a, -jnp.inf)  # a zero weight drops its term
    axes = _axes(axis, a.ndim)
    complex_ = jnp.iscomplexobj(a)
    # initial=-inf: an empty axis (or an all-False `where`) sums to 0, log 0 = -inf
    m = jnp.max(jnp.real(a), axis=axes, keepdims=True, where=where, initial=-jnp.inf)
    m = stop_gradient(jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m)))
    e = jnp.exp(a - m.astype(a.dtype))
    if b is not None:
        e = e * b
    total = jnp.sum(e, axis=axes, keepdims=keepdims, where=where)
    sign = jnp.sign(total)
    if return_sign or not complex_:
        total = jnp.abs(total)
    m = m if keepdims else jnp.squeeze(m, axes)
    out = jnp.log(total) + m.astype(total.dtype)
    if return_sign:
        return out, sign
    if b is not None and not complex_:
        out = jnp.where(sign < 0, jnp.asarray(np.nan, out.dtype), out)  # as JAX
    return out


@with_sections(_ARGS_INEXACT, _RETURNS_LIKE_X, _RAISES_NOT_ARRAY)
def log1mexp(x):
    """log(1 - exp(-x)), accurate for every x >= 0.

    log(1 - exp(-x)) for x >= 0, accurate at both ends: log(-expm1(-x)) below
    log 2, log1p(-exp(-x)) above (Maechler's note); NaN for x < 0.

    Example:
      >>> olympus.nn.log1mexp(jnp.array([0.1, 10.0]))
      Array([-2.3521686e+00, -4.5400961e-05], dtype=float32)
    """
    x = jnp.asarray(x)
    if not _is_float(x):
        x = x.astype(jnp.float32)
    small = x < np.log(2.0)
    near = jnp.log(-jnp.expm1(-jnp.where(small, x, 1.0)))
    far = jnp.log1p(-jnp.exp(-jnp.where(small, 1.0, x)))
    return jnp.where(x < 0, jnp.nan, jnp.where(small, near, far))


def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """log(mean(exp(x))) over `axis`, without overflow.

    log(mean(exp(x))) over `axis` (the entries `where` selects): logsumexp minus
    the log of how many entries it summed.

    Args:
      x: an array.
      axis: the axis or axes to reduce; None for all.
      where: a boolean mask of the entries to include; None for all.
      keepdims: whether to keep reduced axes with size 1.

    Returns:
      An array of x's dtype without the reduced axes (unless keepdims).

    Raises:
      OlympusTypeError: x is not an array, a NumPy array or a Python number (a
        string, say); an out-of-range axis is not refused yet.

    Example:
      >>> olympus.nn.logmeanexp(jnp.array([0.0, 0.0, 0.0]))
      Array(0., dtype=float32)
    """
    x = jnp.asarray(x)
    axes = _axes(axis, x.ndim)
    if where is None:
        count = np.prod([x.shape[a] for a in axes], dtype=np.float64)
    else:
        count = jnp.sum(jnp.broadcast_to(where, x.shape), axis=axes, keepdims=keepdims)
    total = logsumexp(x, axis=axes, keepdims=keepdims, where=where)
    return total - jnp.log(jnp.asarray(count, dtype=total.dtype))


@with_sections(_RAISES_NOT_ARRAY)
def softmax(x, axis=-1, where=None):
    """Normalized exponentials of `x` along `axis`: positive and summing to 1.

    Computed stably (the maximum is subtracted first), so large logits do
    not overflow. Its gradient is the closed form, not differentiation of
    the implementation.

    Args:
      x: an array of logits.
      axis: an int or a tuple of ints: the axes normalized over.
      where: a boolean mask; masked-out entries get 0 and are left out of
        the sum.

    Returns:
      An array of x's shape.

    Example:
      >>> olympus.nn.softmax(jnp.array([0.0, 0.0]))
      Array([0.5, 0.5], dtype=float32)
    """
    x = jnp.asarray(x)
    axes = _axes(axis, x.ndim)
    e = jnp.exp(_shifted(x, axes, where))
    out = e / jnp.sum(e, axis=axes, where=where, keepdims=True)
    return out if where is None else jnp.where(where, out, 0)


@with_sections(_RAISES_NOT_ARRAY)
def log_softmax(x, axis=-1, where=None):
    """The logarithm of softmax along `axis`: x minus its logsumexp.

    More accurate than log(softmax(x)) and the usual input to a
    cross-entropy loss.

    Args:
      x: an array of logits.
      axis: an int or a tuple of ints: the axes normalized over.
      where: a boolean mask; masked-out entries are left out of the sum.

    Returns:
      An array of x's shape.

    Example:
      >>> olympus.nn.log_softmax(jnp.array([0.0, 0.0]))
      Array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = jnp.asarray(x)
    axes = _axes(axis, x.ndim)
    shifted = _shifted(x, axes, where)
    total = jnp.sum(jnp.exp(shifted), axis=axes, where=where, keepdims=True)
    out = shifted - jnp.log(total)
    return out if where is None else jnp.where(where, out, -jnp.inf)


def _shifted(x, axes, where):
    """x minus its (constant) max over `axes`; masked entries are -inf. The max
    is not made finite, so +inf gives NaN and an all -inf slice NaN, as JAX."""
    m = jnp.max(x, axis=axes, where=where, initial=-jnp.inf, keepdims=True)
    safe = x if where is None else jnp.where(where, x, -jnp.inf)
    return safe - stop_gradient(m)


@with_sections(_RAISES_NOT_ARRAY)
def standardize(
    x, axis=-1, mean=None, variance=None, epsilon: float = 1e-5, where=None
):
    """`x` shifted to mean 0 and scaled to variance 1 along `axis`.

    The normalization step of layer norm; pass `mean` and `variance` to use
    precomputed statistics.

    Args:
      x: an array.
      axis: an int or a tuple of ints: the axes the statistics cover.
      mean: precomputed means (None: computed from x).
      variance: precomputed variances (None: computed from x).
      epsilon: added to the variance before the square root, for stability.
      where: a boolean mask of the elements the statistics include.

    Returns:
      An array of x's shape.

    Example:
      >>> olympus.nn.standardize(jnp.array([1.0, 3.0]))
      Array([-0.999995,  0.999995], dtype=float32)
    """
    x = jnp.asarray(x)
    axes = _axes(axis, x.ndim)
    if mean is None:
        mean = _masked_mean(x, axes, where)
    if variance is None:
        centred = x - mean
        variance = _masked_mean(centred * centred, axes, where)
    return (x - mean) * lax.rsqrt(variance + jnp.asarray(epsilon, dtype=x.dtype))


def _masked_mean(x, axes, where):
    if where is None:
        return jnp.mean(x, axis=axes, keepdims=True)
    total = jnp.sum(jnp.where(where, x, jnp.zeros_like(x)), axis=axes, keepdims=True)
    count = jnp.sum(
        jnp.where(where, jnp.ones_like(x), jnp.zeros_like(x)), axis=axes, keepdims=True
    )
    return total / count


normalize = standardize


def one_hot(x, num_classes: int, *, dtype=jnp.float32, axis=-1):
    """One-hot encodes integer class labels.

    Labels outside [0, num_classes) give all-zero rows rather than an
    error, as JAX's.

    Args:
      x: an integer array of labels.
      num_classes: the number of classes (static).
      dtype: the dtype of the encoding.
      axis: where the new class axis goes.

    Returns:
      An array with a new axis of size num_classes.

    Raises:
      OlympusTypeError: x is not an array or a number.

    Example:
      >>> olympus.nn.one_hot(jnp.array([0, 2]), 3)
      Array([[1., 0., 0.], [0., 0., 1.]], dtype=float32)
    """
    x = jnp.asarray(x)
    out_ndim = x.ndim + 1
    axis = normalize_axis(operator.index(axis), out_ndim)
    shape = list(x.shape)
    shape.insert(axis, operator.index(num_classes))
    kept = [d for d in range(out_ndim) if d != axis]
    labels = lax.broadcast_in_dim(x, shape, kept)
    classes = lax.broadcasted_iota(x.dtype, shape, axis)
    return lax.convert_element_type(lax.eq(labels, classes), dtype)


# ---- attention ---------------------------------------------------------------------------
def dot_product_attention(
    query, key, value, bias=None, mask=None, *, scale=None, is_causal: bool = False
):
    """Scaled dot-product attention: softmax(q k^T * scale + bias) v.

    The core of a transformer layer, with optional bias, boolean mask and
    causal masking; heads may be grouped (fewer key/value heads than query
    heads).

    Args:
      query: an array of shape (B, T, N, H) (or without B).
      key: an array of shape (B, S, K, H), K dividing N.
      value: an array of key's shape.
      bias: an optional array added to the logits, broadcast to (B, N, T, S).
      mask: an optional boolean array; False positions are excluded.
      scale: the logit scale (None: 1 / sqrt(H)).
      is_causal: if True, position t attends only to positions <= t.

    Returns:
      An array of query's shape.

    Raises:
      ValueError: the shapes of query, key and value do not fit together.

    Example:
      >>> q = jnp.ones((1, 4, 2, 8))
      >>> olympus.nn.dot_product_attention(q, q, q, is_causal=True).shape
      (1, 4, 2, 8)
    """
    query, key, value = jnp.asarray(query), jnp.asarray(key), jnp.asarray(value)
    unbatched = query.ndim == 3
    if unbatched:
        query, key, value = query[None], key[None], value[None]
    h, n, k = query.shape[3], query.shape[2], key.shape[2]
    if n % k:
        raise ValueError(
            f"dot_product_attention: {n} query heads do not group over {k} key heads"
        )
    if k != n:  # each key head serves n // k query heads
        key, value = _repeat_heads(key, n // k), _repeat_heads(value, n // k)
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    logits = (
        lax.dot_general(query, key, (((3,), (3,)), ((0, 2), (0, 2)))) * scale
    )  # (B, N, T, S)
    if bias is not None:
        logits = logits + bias
    allowed = (
        None if mask is None else jnp.broadcast_to(jnp.asarray(mask), logits.shape)
    )
    if is_causal:
        rows = lax.broadcasted_iota(np.int32, logits.shape, 2)
        causal = rows >= lax.broadcasted_iota(np.int32, logits.shape, 3)
        allowed = causal if allowed is None else jnp.logical_and(allowed, causal)
    if allowed is not None:
        logits = jnp.where(allowed, logits, float(jnp.finfo(logits.dtype).min))
    probs = softmax(logits.astype(jnp.float32), axis=-1).astype(value.dtype)
    out = lax.dot_general(
        probs, value, (((3,), (1,)), ((0, 1), (0, 2)))
    )  # (B, N, T, H)
    out = lax.transpose(out, (0, 2, 1, 3))
    return out[0] if unbatched else out


def _repeat_heads(x, times: int):
    b, s, k, h = x.shape
    wide = lax.broadcast_in_dim(x, (b, s, k, times, h), (0, 1, 2, 4))
    return lax.reshape(wide, (b, s, k * times, h))


from olympus.nn import initializers  # noqa: E402, F401  (a submodule built on the above)
