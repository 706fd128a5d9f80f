"""Counter-based pseudo-random numbers: the threefry2x32 hash, written with lax.

`key(seed)` gives a typed key (a `PRNGKeyArray` of shape `()`, dtype
`key<fry>`, see `olympus.prng`); `PRNGKey(seed)` gives the same key as a raw
`uint32[2]` array. Every function accepts both, and `split` / `fold_in` return
keys of the kind they were given. Every function is a
pure function of its key: the same key gives the same numbers eagerly, under
`jit` and under `vmap`, and `split` / `fold_in` derive new, statistically
independent keys. Element `i` of a sample hashes the counter `i` (as two
32-bit words) under the key, so a sample's values do not depend on how the
computation is staged (the scheme JAX calls "partitionable" threefry; keys,
`split`, `fold_in`, `bits` and `uniform` give JAX's numbers bit for bit).

    key = random.key(0)
    k1, k2 = random.split(key)
    x = random.normal(k1, (3,))

Samplers follow JAX's algorithms and key use (how a key is split and which
draw feeds which step), so for the same key they give JAX's values
(docs/differences.md lists the exceptions). The package is split by family:
`keys` (the hash, keys, bits and shared helpers), `continuous` (real-valued
laws) and `discrete` (integers and orders); this module compiles each
sampler once per static argument and holds the public names.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence

import numpy as np

from olympus.api import jit
from olympus.lax.sharding import accepts_out_sharding, documented_out_sharding
from olympus.prng import KEY_WORDS, KeyArrayTypeError, PRNGKeyArray  # noqa: F401
from olympus.tracer.core import aval_of
from olympus.tracer.tracebacks import api_boundary
from olympus.random.keys import (  # noqa: F401
    InvalidKeyError,
    KeyError_,
    PRNGKey,
    RandomDtypeError,
    RandomParameterError,
    _bits,
    _fold_in,
    _shape,
    _split,
    clone,
    key,
    key_data,
    key_impl,
    threefry2x32,
    wrap_key_data,
)
from olympus.random.continuous import (  # noqa: F401
    _ball,
    _bernoulli,
    _beta,
    _cauchy,
    _chisquare,
    _dirichlet,
    _double_sided_maxwell,
    _exponential,
    _f,
    _gamma,
    _generalized_normal,
    _gumbel,
    _laplace,
    _loggamma,
    _logistic,
    _lognormal,
    _maxwell,
    _multivariate_normal,
    _normal,
    _orthogonal,
    _pareto,
    _rademacher,
    _rayleigh,
    _t,
    _triangular,
    _truncated_normal,
    _uniform,
    _wald,
    _weibull_min,
    erf_inv,
)
from olympus.random.discrete import (  # noqa: F401
    _binomial,
    _categorical,
    _choice,
    _geometric,
    _multinomial,
    _permutation,
    _poisson,
    _randint,
    _random_order,
)

__all__ = [
    "KeyArrayTypeError",
    "InvalidKeyError",
    "KeyError_",
    "PRNGKey",
    "PRNGKeyArray",
    "RandomDtypeError",
    "RandomParameterError",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "erf_inv",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "shuffle",
    "split",
    "t",
    "threefry2x32",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]


# ---- the public functions: each compiled once per shape and dtype ------------------
def _static(value):
    """A static argument in a hashable, canonical form."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, (type, np.dtype)) or (
        value is not None and hasattr(value, "dtype") and isinstance(value, type)
    ):
        return np.dtype(value)
    return value


def _single_key_data(key: PRNGKeyArray, name: str):
    if key.shape != ():
        raise InvalidKeyError(
            f"random.{name}: expected a single PRNG key, got a key array of shape "
            f"{key.shape}; to map over a batch of keys use olympus.vmap"
        )
    return key.data


# The samplers that take JAX's `out_sharding=` (the layout of the sample).
_TAKE_OUT_SHARDING = frozenset(
    "ball bernoulli beta bits categorical cauchy chisquare dirichlet exponential f "
    "gamma generalized_normal geometric gumbel laplace loggamma logistic lognormal "
    "maxwell multivariate_normal normal orthogonal pareto poisson rademacher "
    "randint rayleigh t triangular truncated_normal uniform wald".split()
)


def _with_out_sharding(public):
    """`public` with JAX's keyword `out_sharding=` (see `laid_out_as`)."""
    sampler = accepts_out_sharding(public, namespace="random")
    return api_boundary(sampler)  # this wrapper's frame is olympus's too


def _compiled(impl, *static: str, returns_keys: bool = False):
    """`impl` jitted with `static` names static (shapes, dtypes, axes); eager calls
    then cost one dispatch, not one per lax operation. Typed keys go in as
    their words, and come back typed when `returns_keys`; the samplers JAX
    gives `out_sharding=` take it."""
    jitted = jit(impl, static_argnames=static)
    if impl.__name__.lstrip("_") in _TAKE_OUT_SHARDING:
        # described on the sampler itself, where doctest finds its example
        impl.__doc__ = documented_out_sharding(impl.__doc__)
    parameters = inspect.signature(impl).parameters
    names = tuple(parameters)
    defaults = {k: p.default for k, p in parameters.items() if p.default is not p.empty}

    @api_boundary  # a bad key's error shows the user's line, no frame of random's
    @functools.wraps(impl)
    def public(*args, **kwargs):
        if len(args) > len(names):
            raise TypeError(
                f"random.{public.__name__} takes at most {len(names)} arguments"
            )
        values = {
            **defaults,
            **dict(zip(names, args)),
            **kwargs,
        }  # cheaper than Signature.bind
        dynamic = {k: v for k, v in values.items() if k not in static}
        fixed = {k: _static(v) for k, v in values.items() if k in static}
        if fixed.get("shape") is not None:
            fixed["shape"] = _shape(fixed["shape"])
        typed = isinstance(dynamic.get("key"), PRNGKeyArray)
        if typed:
            dynamic["key"] = _single_key_data(dynamic["key"], public.__name__)
        out = jitted(**dynamic, **fixed)
        return PRNGKeyArray(out) if typed and returns_keys else out

    public.__name__ = public.__qualname__ = impl.__name__.lstrip("_")
    if public.__name__ in _TAKE_OUT_SHARDING:
        return _with_out_sharding(public)
    return public


split = _compiled(_split, "num", returns_keys=True)
_fold_in_compiled = _compiled(_fold_in, returns_keys=True)
bits = _compiled(_bits, "shape", "dtype")
uniform = _compiled(_uniform, "shape", "dtype")
normal = _compiled(_normal, "shape", "dtype")
truncated_normal = _compiled(_truncated_normal, "shape", "dtype")
exponential = _compiled(_exponential, "shape", "dtype")
laplace = _compiled(_laplace, "shape", "dtype")
logistic = _compiled(_logistic, "shape", "dtype")
gumbel = _compiled(_gumbel, "shape", "dtype")
bernoulli = _compiled(_bernoulli, "shape")
randint = _compiled(_randint, "shape", "dtype")
categorical = _compiled(_categorical, "axis", "shape", "replace")
gamma = _compiled(_gamma, "shape", "dtype")
beta = _compiled(_beta, "shape", "dtype")
dirichlet = _compiled(_dirichlet, "shape", "dtype")
cauchy = _compiled(_cauchy, "shape", "dtype")
rademacher = _compiled(_rademacher, "shape", "dtype")
chisquare = _compiled(_chisquare, "shape", "dtype")
t = _compiled(_t, "shape", "dtype")
f = _compiled(_f, "shape", "dtype")
multivariate_normal = _compiled(_multivariate_normal, "shape", "dtype")
poisson = _compiled(_poisson, "shape", "dtype")
binomial = _compiled(_binomial, "shape", "dtype")
geometric = _compiled(_geometric, "shape", "dtype")
pareto = _compiled(_pareto, "shape", "dtype")
weibull_min = _compiled(_weibull_min, "shape", "dtype")
loggamma = _compiled(_loggamma, "shape", "dtype")
ball = _compiled(_ball, "d", "p", "shape", "dtype")
orthogonal = _compiled(_orthogonal, "n", "shape", "dtype", "m")
generalized_normal = _compiled(_generalized_normal, "shape", "dtype")
triangular = _compiled(_triangular, "shape", "dtype")
wald = _compiled(_wald, "shape", "dtype")
maxwell = _compiled(_maxwell, "shape", "dtype")
lognormal = _compiled(_lognormal, "shape", "dtype")
rayleigh = _compiled(_rayleigh, "shape", "dtype")
double_sided_maxwell = _compiled(_double_sided_maxwell, "shape", "dtype")
_multinomial_compiled = _compiled(_multinomial, "shape", "dtype", "unroll")
_permutation_compiled = _compiled(_permutation, "axis", "independent")
_random_order_compiled = _compiled(_random_order, "n")
_choice_compiled = _compiled(_choice, "n", "shape", "replace", "axis")


@api_boundary
def fold_in(key, data):
    """A new key derived from `key` and an integer.

    For deterministic per-step or per-device keys: fold_in(key, step) gives
    a different key for each step without carrying split keys around.

    Args:
      key: a typed key or a uint32[2] key.
      data: an integer (32 bits are used), may be traced.

    Returns:
      A key of key's kind.

    Raises:
      InvalidKeyError: `key` is not a key.

    Example:
      >>> k = olympus.random.key(0)
      >>> bool((olympus.random.key_data(olympus.random.fold_in(k, 1))
      ...       != olympus.random.key_data(k)).any())
      True
    """
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        if not 0 <= int(data) < 2**32:
            raise OverflowError(
                f"random.fold_in: data {int(data)} is out of bounds for uint32 (the "
                f"data folded into a key is one 32-bit word); reduce it modulo 2**32"
            )
        data = np.uint32(int(data))
    return _fold_in_compiled(key, data)


@api_boundary
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n draws over categories (as floats).

    Counts of `n` draws over the categories on `p`'s last axis (floats of
    `dtype`); `p` is normalised along that axis, `n` broadcasts to the other
    axes; `shape`, if given, is the whole result shape.

    Args:
      key: a PRNG key (olympus.random.key or PRNGKey).
      n: the number of draws (broadcasts with p's leading axes).
      p: the category probabilities on the last axis (normalised there).
      shape: the sample shape; None for the parameters' broadcast shape.
      dtype: a floating dtype; None for the default float.
      unroll: how many categories the sampling loop handles per iteration (speed
        only).

    Returns:
      An array of counts, shape `shape` (or the broadcast shape) followed by p's
      last axis.

    Raises:
      InvalidKeyError: key is not a PRNG key (a TypeError).
      TypeError: dtype is not a floating dtype.

    Example:
      >>> k = olympus.random.key(0)
      >>> x = olympus.random.multinomial(k, 10.0, jnp.array([0.2, 0.8]))
      >>> x.shape, float(x.sum())
      ((2,), 10.0)
    """
    return _multinomial_compiled(key, n, p, shape=shape, dtype=dtype, unroll=unroll)


@_with_out_sharding
@api_boundary
def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of `x`, or of arange(x) for an int.

    Shuffles along `axis`; with independent=True every slice along the other axes is shuffled separately.

    Args:
      key: a typed key (random.key) or a uint32[2] key (random.PRNGKey).
        Never reuse a key for two draws: split it first.
      x: an array, or an int n meaning arange(n).
      axis: the axis to permute.
      independent: if True, permute each slice independently.

    Returns:
      The permuted array.

    Raises:
      InvalidKeyError: `key` is neither a typed key nor a uint32[2] array.
      ValueError: axis is out of range.

    Example:
      >>> p = olympus.random.permutation(olympus.random.key(0), 4)
      >>> jnp.sort(p)
      Array([0, 1, 2, 3], dtype=int32)
    """
    if isinstance(x, (int, np.integer)):
        return _random_order_compiled(key, n=int(x))
    if aval_of(x).ndim == 0:
        raise TypeError(
            f"random.permutation: x must be an integer or an array of at least one "
            f"dimension, got {aval_of(x).str_short()}; pass an int n to permute range(n)"
        )
    return _permutation_compiled(key, x, axis=axis, independent=bool(independent))


@api_boundary
def shuffle(key, x, axis: int = 0):
    """x shuffled along an axis (JAX's deprecated name of permutation).

    Args:
      key: a PRNG key (olympus.random.key or PRNGKey).
      x: the array to shuffle.
      axis: the axis to shuffle along.

    Returns:
      An array of x's shape and dtype.

    Raises:
      InvalidKeyError: key is not a PRNG key (a TypeError).

    Example:
      >>> k = olympus.random.key(0)
      >>> jnp.sort(olympus.random.shuffle(k, jnp.arange(4)))
      Array([0, 1, 2, 3], dtype=int32)
    """
    return permutation(key, x, axis)


@api_boundary
def choice(
    key, a, shape: Sequence[int] = (), replace: bool = True, p=None, axis: int = 0
):
    """Samples elements of `a`, with or without replacement.

    An int `a` samples from arange(a). With `p`, elements are drawn with those probabilities.

    Args:
      key: a typed key (random.key) or a uint32[2] key (random.PRNGKey).
        Never reuse a key for two draws: split it first.
      a: an array, or an int n meaning arange(n).
      shape: the output shape.
      replace: if False, no element is drawn twice.
      p: probabilities of a's entries along axis (None: uniform).
      axis: the axis of a to draw along.

    Returns:
      An array of the drawn elements.

    Raises:
      InvalidKeyError: `key` is neither a typed key nor a uint32[2] array.
      ValueError: more elements without replacement than a has, or p's length differs from a's.

    Example:
      >>> olympus.random.choice(olympus.random.key(0), 5, (3,), replace=False).shape
      (3,)
    """
    if isinstance(a, (int, np.integer)):
        n, a = int(a), None
    else:
        axis = axis % aval_of(a).ndim
        n = aval_of(a).shape[axis]
    return _choice_compiled(
        key, a, p, n=n, shape=_shape(shape), replace=bool(replace), axis=axis
    )
