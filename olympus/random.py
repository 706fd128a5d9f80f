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
draw feeds which step), so for the same key they give JAX's values; the ones
that do not yet are listed in docs/differences.md.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Sequence

import numpy as np

from olympus import lax
from olympus.api import device_put, jit
from olympus.ir import dtypes
from olympus.lax.bits import bitcast_convert_type, shift_left, shift_right_logical
from olympus.prng import KEY_WORDS, KeyArrayTypeError, PRNGKeyArray  # noqa: F401
from olympus.tracer.core import aval_of

__all__ = [
    "KeyArrayTypeError",
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

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = np.uint32(0x1BD11BDA)
_MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}


class KeyError_(TypeError):
    """A value passed as a PRNG key is neither a typed key nor a uint32[2] array."""


# ---- threefry2x32 ------------------------------------------------------------
def _u32(value) -> np.uint32:
    return np.uint32(value & 0xFFFFFFFF)


def _rotate_left(x, r: int):
    return lax.bitwise_or(shift_left(x, _u32(r)), shift_right_logical(x, _u32(32 - r)))


def _threefry_rounds(x0, x1, rotations):
    for r in rotations:
        x0 = lax.add(x0, x1)
        x1 = lax.bitwise_xor(_rotate_left(x1, r), x0)
    return x0, x1


def _threefry2x32_hash(k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011) of counters (x0, x1)
    under key (k0, k1); all uint32, keys rank-0 (they broadcast)."""
    ks = (k0, k1, lax.bitwise_xor(lax.bitwise_xor(k0, k1), _KS_PARITY))
    x0, x1 = lax.add(x0, ks[0]), lax.add(x1, ks[1])
    for i in range(5):
        x0, x1 = _threefry_rounds(x0, x1, _ROTATIONS[i % 2])
        x0 = lax.add(x0, ks[(i + 1) % 3])
        x1 = lax.add(lax.add(x1, ks[(i + 2) % 3]), _u32(i + 1))
    return x0, x1


_threefry2x32_jit = jit(_threefry2x32_hash)


def threefry2x32(key, counts):
    """Hashes counter pairs: `key` is uint32[2], `counts` uint32[2, ...]
    (high words then low words); returns uint32[2, ...]."""
    k0, k1 = _key_words(key)
    counts = lax.convert_element_type(counts, U32)
    x0, x1 = _first(counts), _second(counts)
    y0, y1 = _threefry2x32_jit(k0, k1, x0, x1)
    return lax.concatenate([lax.expand_dims(y0, (0,)), lax.expand_dims(y1, (0,))], 0)


def _first(pair):
    shape = aval_of(pair).shape
    return lax.reshape(lax.slice(pair, (0,) * len(shape), (1, *shape[1:])), shape[1:])


def _second(pair):
    shape = aval_of(pair).shape
    return lax.reshape(
        lax.slice(pair, (1,) + (0,) * (len(shape) - 1), shape), shape[1:]
    )


def _key_words(key):
    if isinstance(key, PRNGKeyArray):
        if key.shape != ():
            raise KeyError_(
                f"expected a single PRNG key, got a key array of shape {key.shape}; "
                f"to map over a batch of keys use olympus.vmap"
            )
        key = key.data
    aval = aval_of(key)
    if aval.shape != (2,) or aval.dtype != U32:
        raise KeyError_(
            f"expected a PRNG key, a uint32[2] array (from random.PRNGKey) or a typed key "
            f"(from random.key), got {aval.str_short()}; to map over a batch of keys use "
            f"olympus.vmap"
        )
    return _first(key), _second(key)


def _counter_words(shape: tuple):
    """The flat index of each element of `shape` as (high, low) uint32 words."""
    size = math.prod(shape)
    if size >= 2**32:
        raise ValueError(
            f"random: cannot draw {size} values (at most 2**32 - 1 per call)"
        )
    flat = lax.iota(U32, size)
    zeros = lax.full((size,), np.uint32(0))
    return lax.reshape(zeros, shape), lax.reshape(flat, shape)


def _hash_counters(key, shape: tuple):
    k0, k1 = _key_words(key)
    hi, lo = _counter_words(shape)
    return _threefry2x32_jit(k0, k1, hi, lo)


# ---- keys ------------------------------------------------------------------------
def PRNGKey(seed) -> Array:  # noqa: F821  (JAX's name)
    """A raw PRNG key, a uint32[2] array, from an integer seed (JAX's legacy keys).

    >>> olympus.random.PRNGKey(0)
    Array([0, 0], dtype=uint32)
    """
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        high = 0 if -(2**31) <= seed < 2**32 else (seed >> 32) & 0xFFFFFFFF
        return device_put(np.array([high, seed & 0xFFFFFFFF], U32))  # no compile needed
    if isinstance(seed, PRNGKeyArray):
        raise KeyError_(
            "random.key / PRNGKey: the seed must be an integer, got a PRNG key"
        )
    aval = aval_of(seed)
    if aval.shape != () or not dtypes.is_integer(aval.dtype):
        raise TypeError(
            f"random.key: the seed must be an integer scalar, got {aval.str_short()}"
        )
    low = _seed_low_word(seed, aval.dtype)
    return lax.concatenate([lax.full((1,), np.uint32(0)), lax.broadcast(low, (1,))], 0)


def key(seed) -> PRNGKeyArray:
    """A typed PRNG key (shape `()`, dtype `key<fry>`) from an integer seed; its
    words, and so every number drawn with it, are those of `PRNGKey(seed)`.

    >>> olympus.random.key(42)
    Array((), dtype=key<fry>) overlaying:
    [ 0 42]
    """
    return PRNGKeyArray(PRNGKey(seed))


def _seed_low_word(seed, dtype):
    if np.dtype(dtype).itemsize == 4:
        return bitcast_convert_type(seed, U32) if dtypes.is_signed_int(dtype) else seed
    return lax.convert_element_type(seed, U32)


def key_data(keys):
    """The uint32 words of keys, shape `(*keys.shape, 2)`; raw keys are returned as they are.

    >>> olympus.random.key_data(olympus.random.key(7)).shape
    (2,)
    """
    if isinstance(keys, PRNGKeyArray):
        return keys.data
    _check_raw_keys(keys, "key_data")
    return keys


def wrap_key_data(data, *, impl: str | None = None) -> PRNGKeyArray:
    """Typed keys from their uint32 words (`data` of shape `(..., 2)`): the inverse of `key_data`."""
    if impl is not None and impl != IMPL:
        raise ValueError(
            f"random.wrap_key_data: only the {IMPL!r} implementation exists, got {impl!r}"
        )
    if isinstance(data, PRNGKeyArray):
        raise KeyError_(
            "random.wrap_key_data: expected uint32 words, got a typed key array"
        )
    if not hasattr(data, "aval"):
        data = device_put(np.asarray(data))
    aval = aval_of(data)
    if not dtypes.is_integer(aval.dtype):
        raise KeyError_(
            f"random.wrap_key_data: expected uint32 words, got {aval.str_short()}"
        )
    if aval.dtype != U32:
        data = lax.convert_element_type(data, U32)
    _check_raw_keys(data, "wrap_key_data")
    return PRNGKeyArray(data)


def _check_raw_keys(data, name: str) -> None:
    aval = aval_of(data)
    if aval.ndim == 0 or aval.shape[-1] != KEY_WORDS or aval.dtype != U32:
        raise KeyError_(
            f"random.{name}: expected keys as uint32[..., 2] words, got {aval.str_short()}"
        )


IMPL = "threefry2x32"


def key_impl(keys) -> str:
    """The name of the PRNG implementation behind `keys` (typed or raw): "threefry2x32"."""
    if not isinstance(keys, PRNGKeyArray):
        _check_raw_keys(keys, "key_impl")
    return IMPL


def clone(key):
    """The key itself: threefry keys are values, so reusing one is already safe."""
    if not isinstance(key, PRNGKeyArray):
        _key_words(key)
    return key


def _split(key, num: int | Sequence[int] = 2):
    """`num` new keys (shape `(num, 2)`, or `(*num, 2)` for a shape),
    independent of each other and of `key`."""
    shape = (
        (int(num),)
        if isinstance(num, (int, np.integer))
        else tuple(int(n) for n in num)
    )
    y0, y1 = _hash_counters(key, shape)
    return lax.concatenate(
        [lax.expand_dims(y0, (len(shape),)), lax.expand_dims(y1, (len(shape),))],
        len(shape),
    )


def _fold_in(key, data):
    """A new key derived from `key` and the integer `data` (e.g. a step number)."""
    if isinstance(data, (int, np.integer)):
        low = lax.full((), _u32(int(data)))
    else:
        data = (
            lax.convert_element_type(data, dtypes.canonicalize_dtype(np.int64))
            if not dtypes.is_integer(aval_of(data).dtype)
            else data
        )
        low = _seed_low_word(data, aval_of(data).dtype)
    k0, k1 = _key_words(key)
    y0, y1 = _threefry2x32_jit(k0, k1, np.uint32(0), low)
    return lax.concatenate([lax.broadcast(y0, (1,)), lax.broadcast(y1, (1,))], 0)


def _shape(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


# ---- raw bits ----------------------------------------------------------------------
def _bits(key, shape: Sequence[int] = (), dtype=np.uint32):
    """Uniformly random unsigned integers of `dtype` (uint8/16/32, uint64 with x64),
    as JAX draws them: the xor of the hash's two words, truncated to 8 or 16 bits;
    for 64 bits the two words side by side."""
    dtype = np.dtype(dtype)
    if not dtypes.is_unsigned_int(dtype):
        raise TypeError(
            f"random.bits: dtype must be an unsigned integer type, got {dtype}"
        )
    dtype = dtypes.canonicalize_dtype(dtype)
    y0, y1 = _hash_counters(key, _shape(shape))
    return _words_to_bits(y0, y1, dtype)


def _words_to_bits(y0, y1, dtype):
    """One hash's two uint32 words as random bits of the unsigned `dtype`."""
    if dtype.itemsize == 8:
        high = shift_left(lax.convert_element_type(y0, dtype), np.uint64(32))
        return lax.bitwise_or(high, lax.convert_element_type(y1, dtype))
    return lax.convert_element_type(lax.bitwise_xor(y0, y1), dtype)


def _float_dtype(dtype):
    dtype = dtypes.canonicalize_dtype(np.float64 if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise TypeError(
            f"random: dtype must be a real floating-point type, got {dtype}"
        )
    return dtype


def _unit_interval(key, shape: tuple, dtype):
    """Uniform floats in [0, 1)."""
    return _unit_from_bits(_bits(key, shape, _draw_uint(dtype)), dtype)


def _draw_uint(dtype):
    """The unsigned type of the random bits a float of `dtype` is made from: its
    own width, but 8 bits for floats of fewer than 8 mantissa bits (JAX's rule)."""
    width = 8 if _MANTISSA_BITS[dtype.name] < 8 else 8 * dtype.itemsize
    return np.dtype(f"uint{width}")


def _unit_from_bits(raw, dtype):
    """The top mantissa-many of the random bits `raw` under the exponent of
    1.0, minus 1: [0, 1)."""
    drawn = 8 * aval_of(raw).dtype.itemsize
    uint = np.dtype(f"uint{8 * dtype.itemsize}")
    raw = lax.convert_element_type(raw, uint)
    mantissa = shift_right_logical(raw, uint.type(drawn - _MANTISSA_BITS[dtype.name]))
    one = np.array(1.0, dtype).view(uint)[()]
    floats = bitcast_convert_type(lax.bitwise_or(mantissa, one), dtype)
    return lax.sub(floats, np.array(1.0, dtype)[()])


def _as(x, dtype, shape: tuple):
    """`x` (Python number or array broadcastable to `shape`) as a `dtype` array of `shape`."""
    if isinstance(x, (int, float, np.number)):
        return lax.full(shape, x, dtype)
    x = lax.convert_element_type(x, dtype)
    return _broadcast_to(x, shape)


def _broadcast_to(x, shape: tuple):
    x_shape = aval_of(x).shape
    if x_shape == shape:
        return x
    lead = len(shape) - len(x_shape)
    if lead < 0 or any(s not in (1, t) for s, t in zip(x_shape, shape[lead:])):
        raise ValueError(
            f"random: parameter of shape {x_shape} does not broadcast to {shape}"
        )
    squeezed = [i for i, s in enumerate(x_shape) if s == 1 and shape[lead + i] != 1]
    x = lax.reshape(x, [s for i, s in enumerate(x_shape) if i not in squeezed])
    kept = [lead + i for i in range(len(x_shape)) if i not in squeezed]
    return lax.broadcast_in_dim(x, shape, kept)


def _param_shape(shape, *params) -> tuple:
    if shape is not None:
        return _shape(shape)
    out: tuple = ()
    for p in params:
        out = np.broadcast_shapes(
            out, np.shape(p) if isinstance(p, (int, float)) else aval_of(p).shape
        )
    return tuple(out)


# ---- continuous distributions -----------------------------------------------------
def _uniform(key, shape: Sequence[int] = (), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval).

    >>> olympus.random.uniform(olympus.random.key(0), (2,)).shape
    (2,)
    """
    dtype, shape = _float_dtype(dtype), _shape(shape)
    lo, hi = _as(minval, dtype, shape), _as(maxval, dtype, shape)
    u = _unit_interval(key, shape, dtype)
    return lax.max(lo, lax.add(lax.mul(u, lax.sub(hi, lo)), lo))


def _normal(key, shape: Sequence[int] = (), dtype=None):
    """Standard normal floats, by inverting the CDF of a uniform in (-1, 1)."""
    dtype, shape = _float_dtype(dtype), _shape(shape)
    return _normal_from_bits(_bits(key, shape, _draw_uint(dtype)), dtype)


def _normal_from_bits(raw, dtype):
    tiny = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))[()]
    u = _unit_from_bits(
        raw, dtype
    )  # to [tiny, 1), as uniform(minval=tiny, maxval=1) does
    u = lax.max(tiny, lax.add(lax.mul(u, np.array(1.0, dtype)[()] - tiny), tiny))
    return lax.mul(np.array(np.sqrt(2), dtype)[()], erf_inv(u))


def _truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats conditioned on lower < x < upper (inverse CDF)."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, lower, upper)
    lo, hi = _as(lower, dtype, shape), _as(upper, dtype, shape)
    rsqrt2 = np.array(1 / np.sqrt(2), dtype)[()]
    a, b = lax.erf(lax.mul(lo, rsqrt2)), lax.erf(lax.mul(hi, rsqrt2))
    u = lax.add(a, lax.mul(_unit_interval(key, shape, dtype), lax.sub(b, a)))
    out = lax.mul(np.array(np.sqrt(2), dtype)[()], erf_inv(u))
    return lax.clamp(lo, out, hi)


def _exponential(key, shape: Sequence[int] = (), dtype=None):
    """Exponential floats with rate 1: -log1p(-U) for U uniform in [0, 1)."""
    dtype, shape = _float_dtype(dtype), _shape(shape)
    return lax.neg(lax.log1p(lax.neg(_unit_interval(key, shape, dtype))))


def _laplace(key, shape: Sequence[int] = (), dtype=None):
    """Laplace floats (density exp(-|x|) / 2): sign(U) log(1 - |U|) for U uniform
    in (-1, 1)."""
    dtype, shape = _float_dtype(dtype), _shape(shape)
    tiny = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, shape, dtype, minval=float(tiny), maxval=1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(key, shape: Sequence[int] = (), dtype=None):
    """Standard logistic floats: log(U / (1 - U)) for U uniform in [tiny, 1)."""
    dtype, shape = _float_dtype(dtype), _shape(shape)
    u = _uniform(key, shape, dtype, minval=float(np.finfo(dtype).tiny), maxval=1.0)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


def _gumbel(key, shape: Sequence[int] = (), dtype=None):
    """Standard Gumbel floats: -log(-log(U)) for U in (0, 1)."""
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
    """The inverse of erf on (-1, 1), +-inf at +-1. Float32 accuracy by Giles'
    polynomials; wider types add Newton steps on erf."""
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


# ---- discrete distributions ---------------------------------------------------------
def _bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability `p`."""
    shape = _param_shape(shape, p)
    dtype = dtypes.canonicalize_dtype(np.float64)
    if not isinstance(p, (int, float)) and dtypes.is_float(aval_of(p).dtype):
        dtype = aval_of(p).dtype
    return lax.lt(_uniform(key, shape, dtype), _as(p, dtype, shape))


def _randint(key, shape: Sequence[int], minval, maxval, dtype=None):
    """Integers uniform in [minval, maxval) by JAX's scheme: two words of the
    dtype's width per value (one from each half of `split(key)`), reduced modulo
    the span, so the bias is at most span / 2**nbits. Dtypes narrower than 32
    bits are drawn as int32 and cast; bounds are clipped to the dtype's range
    (a maxval past its maximum makes the maximum reachable); minval >= maxval
    gives minval."""
    dtype = dtypes.canonicalize_dtype(np.int64 if dtype is None else dtype)
    shape = _shape(shape)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"random.randint: dtype must be an integer type, got {dtype}")
    lo, hi = _int_array(minval), _int_array(maxval)
    if dtype.itemsize >= 4:
        return _randint_words(key, shape, lo, hi, dtype)
    info, i32 = np.iinfo(dtype), np.dtype(np.int32)
    lo = lax.clamp(info.min, lax.convert_element_type(lo, i32), info.max)
    hi = lax.clamp(info.min, lax.convert_element_type(hi, i32), info.max + 1)
    return lax.convert_element_type(_randint_words(key, shape, lo, hi, i32), dtype)


def _int_array(bound):
    """A bound as an integer array: floats are truncated to the default int."""
    if isinstance(bound, (int, np.integer)):
        return lax.full((), int(bound), dtypes.canonicalize_dtype(np.int64))
    if not dtypes.is_integer(aval_of(bound).dtype):
        return lax.convert_element_type(bound, dtypes.canonicalize_dtype(np.int64))
    return bound


def _randint_words(key, shape: tuple, lo, hi, dtype):
    """JAX's `_randint` for a 32- or 64-bit `dtype`."""
    uint = np.dtype(f"uint{8 * dtype.itemsize}")
    hi_past_max = lax.gt(hi, _clip_to(np.iinfo(dtype).max, aval_of(hi).dtype))
    lo, hi = _broadcast_to(_clip_to(lo, dtype), shape), _clip_to(hi, dtype)
    hi_past_max = _broadcast_to(hi_past_max, shape)
    hi = _broadcast_to(hi, shape)
    k1, k2 = _split2(key)
    high_bits, low_bits = _bits(k1, shape, uint), _bits(k2, shape, uint)
    one = lax.full(shape, 1, uint)
    empty = lax.le(hi, lo)
    span = lax.select(empty, one, lax.convert_element_type(lax.sub(hi, lo), uint))
    # a maxval past the dtype's maximum widens the span by one (wrapping to 0,
    # the full range, where rem by 0 leaves its operand as it is)
    grow = lax.bitwise_and(hi_past_max, lax.bitwise_not(empty))
    span = lax.select(grow, lax.add(span, one), span)
    half = lax.rem(lax.full(shape, 2 ** (4 * dtype.itemsize), uint), span)
    multiplier = lax.rem(lax.mul(half, half), span)  # 2**nbits mod span
    offset = lax.add(
        lax.mul(lax.rem(high_bits, span), multiplier), lax.rem(low_bits, span)
    )
    offset = lax.rem(offset, span)
    return lax.add(lo, lax.convert_element_type(offset, dtype))


def _clip_to(value, dtype):
    """`value` (an int or integer array) converted to the integer `dtype`,
    saturating at its range rather than wrapping (JAX's _convert_and_clip_integer)."""
    dtype = np.dtype(dtype)
    if isinstance(value, (int, np.integer)):
        info = np.iinfo(dtype)
        return lax.full((), int(np.clip(int(value), info.min, info.max)), dtype)
    source = aval_of(value).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(source).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(source).max)
    clipped = lax.clamp(lax.full((), lo, source), value, lax.full((), hi, source))
    return lax.convert_element_type(clipped, dtype)


def _split2(key):
    keys = _split(key, 2)
    return _first(keys), _second(keys)


def _categorical(key, logits, axis: int = -1, shape=None, replace: bool = True):
    """Indices drawn with probabilities softmax(logits) along `axis`, by the
    Gumbel-max trick (argmax of logits + Gumbel noise, the noise laid out as
    JAX lays it out); without replacement, the Gumbel-top-k trick."""
    aval = aval_of(logits)
    axis = axis % aval.ndim
    batch = aval.shape[:axis] + aval.shape[axis + 1 :]
    shape = batch if shape is None else _shape(shape)
    if shape[len(shape) - len(batch) :] != batch:
        raise ValueError(
            f"random.categorical: shape {shape} must end with the logits' batch shape {batch}"
        )
    prefix = shape[: len(shape) - len(batch)]
    index = dtypes.canonicalize_dtype(np.int64)
    if not replace:
        return _categorical_top_k(key, logits, axis, prefix)
    noise_shape = (*prefix, *aval.shape)
    noise = _gumbel(key, noise_shape, aval.dtype)
    full = lax.broadcast_in_dim(
        logits, noise_shape, tuple(range(len(prefix), len(noise_shape)))
    )
    return lax.argmax(lax.add(noise, full), len(prefix) + axis, index)


def _categorical_top_k(key, logits, axis: int, prefix: tuple):
    """JAX's sampling without replacement; its indices stay int32, as top_k's."""
    aval = aval_of(logits)
    count = math.prod(prefix)
    if count > aval.shape[axis]:
        raise ValueError(
            f"random.categorical: cannot take {count} samples without replacement "
            f"from {aval.shape[axis]} categories"
        )
    scores = lax.add(logits, _gumbel(key, aval.shape, aval.dtype))
    moved = lax.transpose(scores, [d for d in range(aval.ndim) if d != axis] + [axis])
    idx = lax.top_k(moved, count)[1]  # (*batch, count)
    last = aval.ndim - 1
    idx = lax.transpose(idx, (last, *range(last)))
    return lax.reshape(idx, (*prefix, *aval.shape[:axis], *aval.shape[axis + 1 :]))


def _take(x, indices, axis: int):
    """`x` indexed along `axis` by integer `indices` (any shape), exactly for
    every dtype: each output element is selected by a one-hot mask."""
    aval, idx_aval = aval_of(x), aval_of(indices)
    n = aval.shape[axis]
    before, after = aval.shape[:axis], aval.shape[axis + 1 :]
    out_shape = (*before, *idx_aval.shape, *after)
    k = len(idx_aval.shape)
    wide = (*out_shape[: axis + k], n, *after)
    x_dims = [*range(axis), axis + k, *range(axis + k + 1, len(wide))]
    x_wide = lax.broadcast_in_dim(x, wide, x_dims)
    idx = lax.broadcast_in_dim(
        lax.convert_element_type(indices, np.int32), wide, range(axis, axis + k)
    )
    mask = lax.eq(idx, lax.broadcasted_iota(np.int32, wide, axis + k))
    if aval.dtype == dtypes.bool_:
        return lax.reduce_or(lax.bitwise_and(mask, x_wide), (axis + k,))
    zeros = lax.full(wide, 0, aval.dtype)
    return lax.reduce_sum(lax.select(mask, x_wide, zeros), (axis + k,))


def _shuffle(key, x, *, axis: int):
    """`x` shuffled along `axis` as JAX does it: a few rounds of sorting by
    fresh random uint32 keys (enough rounds, 3 log(size) / log(2**32 - 1), that
    ties between keys are unlikely to survive them all)."""
    size = math.prod(aval_of(x).shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = _split2(key)
        _, x = lax.sort_key_val(_bits(subkey, aval_of(x).shape, U32), x, axis)
    return x


def _arange(n: int):
    return lax.iota(dtypes.canonicalize_dtype(np.int64), n)


def _permutation(key, x, *, axis: int, independent: bool):
    """JAX's permutation: one array shuffled along `axis` with all its other
    indices together (or each row by itself when `independent`)."""
    aval = aval_of(x)
    axis = axis % aval.ndim
    if independent or aval.ndim == 1:
        return _shuffle(key, x, axis=axis)
    return _take(x, _shuffle(key, _arange(aval.shape[axis]), axis=0), axis)


def _random_order(key, n: int):
    return _shuffle(key, _arange(n), axis=0)


def _choice(key, a, p, *, n: int, shape: tuple, replace: bool, axis: int):
    """`n` is the number of candidates; `a` is None when sampling from range(n).
    JAX's algorithms and key use: randint with replacement, a shuffle's prefix
    without; with `p`, inverting the cumulative sum at uniforms, or the top
    `count` of log p + Gumbel noise (Gumbel-top-k) without replacement."""
    count = math.prod(shape)
    if not replace and count > n:
        raise ValueError(
            f"random.choice: cannot take {count} samples from {n} without replacement"
        )
    if count == 0:
        dtype = dtypes.canonicalize_dtype(np.int64) if a is None else aval_of(a).dtype
        return lax.full(_choice_shape(a, shape, axis), 0, dtype)
    if p is not None:
        p = lax.convert_element_type(p, _float_dtype(_inexact(aval_of(p).dtype)))
    if replace and p is None:
        idx = _randint(key, shape, 0, n)
    elif replace:
        idx = _search_cumulative(key, p, shape)
    elif p is None:
        idx = lax.reshape(lax.slice(_random_order(key, n), (0,), (count,)), shape)
    else:
        noise = lax.add(_gumbel(key, (n,), aval_of(p).dtype), lax.log(p))
        idx = lax.reshape(lax.top_k(noise, count)[1], shape)
        idx = lax.convert_element_type(idx, dtypes.canonicalize_dtype(np.int64))
    return idx if a is None else _take(a, idx, axis)


def _inexact(dtype):
    return dtype if dtypes.is_float(dtype) else np.float64


def _choice_shape(a, shape: tuple, axis: int) -> tuple:
    if a is None:
        return shape
    full = aval_of(a).shape
    return (*full[:axis], *shape, *full[axis + 1 :])


def _search_cumulative(key, p, shape: tuple):
    """Indices i with cumsum(p)[i - 1] < r <= cumsum(p)[i] for r uniform in
    (0, sum p], as jnp.searchsorted(cumsum(p), r) finds them."""
    n, dtype = aval_of(p).shape[0], aval_of(p).dtype
    totals = lax.cumsum(p, axis=0)
    last = lax.reshape(lax.slice(totals, (n - 1,), (n,)), ())
    u = lax.sub(np.array(1.0, dtype)[()], _uniform(key, shape, dtype))
    r = lax.mul(last, u)
    wide = (*shape, n)
    below = lax.lt(
        lax.broadcast_in_dim(totals, wide, (len(shape),)),
        lax.broadcast_in_dim(r, wide, tuple(range(len(shape)))),
    )
    int_dtype = dtypes.canonicalize_dtype(np.int64)
    return lax.reduce_sum(lax.convert_element_type(below, int_dtype), (len(shape),))


def _row(x, j: int):
    """x[j] for an array whose leading axis is indexed by j."""
    shape = aval_of(x).shape
    start = (j, *(0,) * (len(shape) - 1))
    return lax.reshape(lax.slice(x, start, (j + 1, *shape[1:])), shape[1:])


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
def _gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) floats, differentiable in `a` (implicit reparameterisation,
    see _gamma_sample_grad)."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, a)
    return _gamma_reparameterised(key, _as(a, dtype, shape))


def _loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) floats, accurate where the gamma sample itself would
    underflow (a << 1): the boost U**(1/a) is applied in log space."""
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


def _beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats as X / (X + Y) for gammas X ~ G(a), Y ~ G(b) drawn in
    log space with the two halves of split(key), scaled by their maximum so
    that tiny a and b keep their precision (JAX's algorithm)."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, a, b)
    key_a, key_b = _split2(key)
    log_a = _loggamma(key_a, _as(a, dtype, shape), shape, dtype)
    log_b = _loggamma(key_b, _as(b, dtype, shape), shape, dtype)
    top = lax.max(log_a, log_b)
    x, y = lax.exp(lax.sub(log_a, top)), lax.exp(lax.sub(log_b, top))
    return lax.div(x, lax.add(x, y))


def _dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors (last axis): the softmax of log-gamma samples,
    which stays accurate for small alpha (JAX's algorithm)."""
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
def _cauchy(key, shape: Sequence[int] = (), dtype=None):
    """Standard Cauchy floats: tan(pi (U - 1/2)) for U uniform in [eps, 1)."""
    dtype, shape = _float_dtype(dtype), _shape(shape)
    u = _uniform(key, shape, dtype, minval=float(np.finfo(dtype).eps), maxval=1.0)
    return lax.tan(
        lax.mul(np.array(np.pi, dtype)[()], lax.sub(u, np.array(0.5, dtype)[()]))
    )


def _rademacher(key, shape: Sequence[int] = (), dtype=None):
    """-1 or +1 with equal probability: 2 bernoulli(key, 0.5) - 1."""
    shape = _shape(shape)
    dtype = dtypes.canonicalize_dtype(np.int64 if dtype is None else dtype)
    heads = lax.convert_element_type(_bernoulli(key, 0.5, shape), dtype)
    two, one = np.array(2, dtype)[()], np.array(1, dtype)[()]
    return lax.sub(lax.mul(two, heads), one)


def _chisquare(key, df, shape=None, dtype=None):
    """Chi-squared floats with `df` degrees of freedom: 2 exp(loggamma(df / 2))."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, df)
    half = lax.div(_as(df, dtype, shape), np.array(2.0, dtype)[()])
    log_g = _loggamma(key, half, shape, dtype)
    return lax.mul(lax.exp(log_g), np.array(2.0, dtype)[()])


def _t(key, df, shape=None, dtype=None):
    """Student's t floats: Z sqrt((df / 2) / G) for Z normal and G ~ Gamma(df / 2),
    from the two halves of split(key)."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, df)
    key_n, key_g = _split2(key)
    z = _normal(key_n, shape, dtype)
    half = lax.div(_as(df, dtype, shape), np.array(2.0, dtype)[()])
    g = _gamma(key_g, half, shape, dtype)
    return lax.mul(z, lax.sqrt(lax.div(half, g)))


def _f(key, dfnum, dfden, shape=None, dtype=None):
    """F floats, (X / dfnum) / (Y / dfden) for chi-squared X, Y with dfnum and
    dfden degrees of freedom (Y from split(key)[0], X from split(key)[1]).

    >>> olympus.random.f(olympus.random.key(0), 3.0, 4.0, (2,)).shape
    (2,)
    """
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, dfnum, dfden)
    dfnum, dfden = _as(dfnum, dtype, shape), _as(dfden, dtype, shape)
    key_den, key_num = _split2(key)
    num = lax.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_den, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def _multivariate_normal(key, mean, cov, shape=None, dtype=None):
    """Normal vectors with mean `mean` (..., n) and covariance `cov` (..., n, n):
    mean + L z with L the Cholesky factor of cov (cov must be positive definite)."""
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


# ---- more laws: loops over integer counts, rejection, transforms -------------------
class RandomDtypeError(TypeError, ValueError):
    """A sampler was asked for a dtype its law cannot produce (an integer law as
    floats, say). Both a TypeError (as olympus' other dtype errors) and a
    ValueError (as JAX raises)."""


class RandomParameterError(ValueError):
    """A static parameter of a sampler (a dimension, a norm's p) is out of range."""


def _int_dtype(dtype, name: str):
    dtype = dtypes.canonicalize_dtype(np.int64 if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise RandomDtypeError(
            f"random.{name}: dtype must be an integer type, got {dtype}"
        )
    return dtype


def _calc_dtype(*params, dtype=None):
    """The float type to compute a law in: `dtype` if given, else the float type
    of the first float array parameter, else the default float; never narrower
    than float32 (counts and log-densities need the mantissa)."""
    if dtype is None:
        floats = [
            aval_of(p).dtype
            for p in params
            if not isinstance(p, (int, float)) and dtypes.is_float(aval_of(p).dtype)
        ]
        dtype = floats[0] if floats else np.float64
    dtype = _float_dtype(dtype)
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def _nan_where(bad, x):
    return lax.select(bad, lax.full(aval_of(x).shape, np.nan, aval_of(x).dtype), x)


def _while_any(pending_each, step, init, limit: int):
    """`step` repeated while any element is pending and fewer than `limit`
    rounds have run (JAX's max_iters); `init` is a tuple, the round counter
    is carried in front of it and dropped."""

    def pending(state):
        live = pending_each(state[1:])
        everywhere = lax.reduce_or(live, tuple(range(aval_of(live).ndim)))
        return lax.bitwise_and(everywhere, lax.lt(state[0], np.int32(limit)))

    def body(state):
        return (lax.add(state[0], np.int32(1)), *step(state[1:]))

    return lax.while_loop(pending, body, (np.int32(0), *init))[1:]


def _poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts by JAX's algorithm, in float32 whatever the dtype:
    lam < 10 (or nan) by Knuth's product of uniforms, else by Hormann's
    transformed rejection, PTRS ("The transformed rejection method for
    generating Poisson random variables", 1993); both loops start from `key`
    and split it once per round."""
    out_dtype = _int_dtype(dtype, "poisson")
    shape = _param_shape(shape, lam)
    f32 = np.dtype(np.float32)
    lam = _as(lam, f32, shape)
    c = lambda v: np.array(v, f32)[()]
    knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, c(10.0)))
    limit = min(np.iinfo(out_dtype).max, np.iinfo(np.int32).max)
    small = _poisson_knuth(key, lax.select(knuth, lam, lax.full_like(lam, 0.0)), limit)
    large = _poisson_rejection(
        key, lax.select(knuth, lax.full_like(lam, 1e5), lam), limit
    )
    k = lax.convert_element_type(lax.select(knuth, small, large), out_dtype)
    return lax.select(lax.eq(lam, c(0.0)), lax.full(shape, 0, out_dtype), k)


def _poisson_knuth(key, lam, limit: int):
    """Knuth: one less than the number of uniforms whose product first falls
    below exp(-lam) (as float32 counts)."""
    shape, dtype = aval_of(lam).shape, aval_of(lam).dtype

    def pending(state):
        return lax.gt(state[2], lax.neg(lam))

    def step(state):
        key, k, log_prod = state
        key, subkey = _split2(key)
        k = lax.select(pending(state), lax.add(k, np.array(1.0, dtype)[()]), k)
        u = _uniform(subkey, shape, dtype)
        return key, k, lax.add(log_prod, lax.log(u))

    zeros = lax.full(shape, 0.0, dtype)
    _, k, _ = _while_any(pending, step, (key, zeros, zeros), limit)
    return lax.sub(k, np.array(1.0, dtype)[()])


def _poisson_rejection(key, lam, limit: int):
    """PTRS; every round splits the key in three (next key, u, v), and any
    element accepting in a round takes that round's candidate."""
    shape, dtype = aval_of(lam).shape, aval_of(lam).dtype
    c = lambda v: np.array(v, dtype)[()]
    log_lam = lax.log(lam)
    b = lax.add(c(0.931), lax.mul(c(2.53), lax.sqrt(lam)))
    a = lax.add(c(-0.059), lax.mul(c(0.02483), b))
    inv_alpha = lax.add(c(1.1239), lax.div(c(1.1328), lax.sub(b, c(3.4))))
    v_r = lax.sub(c(0.9277), lax.div(c(3.6224), lax.sub(b, c(2.0))))

    def step(state):
        key, k_out, accepted = state
        keys = _split(key, 3)
        key, k0, k1 = (_row(keys, i) for i in range(3))
        u = lax.sub(_uniform(k0, shape, dtype), c(0.5))
        v = _uniform(k1, shape, dtype)
        us = lax.sub(c(0.5), lax.abs(u))
        k = lax.floor(
            lax.add(
                lax.add(lax.mul(lax.add(lax.div(lax.mul(c(2.0), a), us), b), u), lam),
                c(0.43),
            )
        )
        hat = lax.log(
            lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(us, us)), b))
        )
        target = lax.sub(
            lax.add(lax.neg(lam), lax.mul(k, log_lam)), lax.lgamma(lax.add(k, c(1.0)))
        )
        squeeze = lax.bitwise_and(lax.ge(us, c(0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(
            lax.lt(k, c(0.0)), lax.bitwise_and(lax.lt(us, c(0.013)), lax.gt(v, us))
        )
        accept = lax.bitwise_or(
            squeeze, lax.bitwise_and(lax.bitwise_not(reject), lax.le(hat, target))
        )
        return key, lax.select(accept, k, k_out), lax.bitwise_or(accepted, accept)

    init = (key, lax.full(shape, -1.0, dtype), lax.full(shape, False, np.bool_))
    return _while_any(lambda st: lax.bitwise_not(st[2]), step, init, limit)[1]


def _binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats by JAX's algorithm: with q = min(p, 1 - p)
    (and n - X for p >= 1/2), n q <= 10 counts geometric waiting times
    (inversion), else Hormann's transformed rejection, BTRS ("The generation
    of binomial random variates", 1993); both loops start from `key`. n < 0,
    nan n or p, or p < 0 give nan; infinite n gives inf."""
    out_dtype = _float_dtype(dtype)
    shape = _param_shape(shape, n, p)
    calc = _calc_dtype(p)
    c = lambda v: np.array(v, calc)[()]
    n, p = _as(n, calc, shape), _as(p, calc, shape)
    below_half = lax.lt(p, c(0.5))
    q = lax.select(below_half, p, lax.sub(c(1.0), p))
    bad_n = lax.bitwise_or(lax.ne(n, n), lax.lt(n, c(0.0)))
    inf_n = lax.eq(lax.abs(n), c(np.inf))
    nan_q, neg_q = lax.ne(q, q), lax.lt(q, c(0.0))
    q = lax.select(lax.bitwise_or(nan_q, neg_q), lax.full_like(q, 0.01), q)
    inversion = lax.bitwise_or(bad_n, lax.le(lax.mul(n, q), c(10.0)))
    n = lax.floor(n)
    limit = np.iinfo(np.int32).max
    waiting = _binomial_inversion(
        key, lax.select(inversion, n, lax.full_like(n, 0.0)), q, limit
    )
    btrs = _binomial_btrs(
        key,
        lax.select(inversion, lax.full_like(n, 1e4), n),
        lax.select(inversion, lax.full_like(q, 0.5), q),
        limit,
    )
    k = lax.convert_element_type(lax.select(inversion, waiting, btrs), out_dtype)
    invalid = functools.reduce(lax.bitwise_or, [neg_q, nan_q, bad_n])
    k = lax.select(invalid, lax.full(shape, np.nan, out_dtype), k)
    k = lax.select(
        lax.bitwise_and(inf_n, lax.bitwise_not(invalid)),
        lax.full(shape, np.inf, out_dtype),
        k,
    )
    kept = functools.reduce(lax.bitwise_or, [below_half, bad_n, nan_q, inf_n])
    return lax.select(kept, k, lax.sub(lax.convert_element_type(n, out_dtype), k))


def _binomial_inversion(key, n, q, limit: int):
    """One less than the number of geometric(q) waiting times whose running sum
    first passes n; each round splits the key in two (draw, next key)."""
    shape, dtype = aval_of(q).shape, aval_of(q).dtype
    log_q = lax.log1p(lax.neg(q))

    def pending(state):
        return lax.le(state[2], n)

    def step(state):
        key, count, total = state
        subkey, key = _split2(key)
        count = lax.select(
            pending(state), lax.add(count, np.array(1.0, dtype)[()]), count
        )
        u = _uniform(subkey, shape, dtype)
        return key, count, lax.add(total, lax.ceil(lax.div(lax.log(u), log_q)))

    zeros = lax.full(shape, 0.0, dtype)
    _, count, _ = _while_any(pending, step, (key, zeros, zeros), limit)
    return lax.sub(count, np.array(1.0, dtype)[()])


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k):
    """lgamma(k + 1) minus Stirling's approximation of it: tabulated for k <= 9,
    else the series 1/12 - (1/360 - 1/1260 / (k+1)^2) / (k+1)^2, over k + 1."""
    dtype = aval_of(k).dtype
    c = lambda v: np.array(v, dtype)[()]
    small = lax.le(k, c(9.0))
    k = lax.clamp(c(0.0), k, c(9.0))
    k1 = lax.add(k, c(1.0))
    sq = lax.mul(k1, k1)
    series = lax.div(
        lax.sub(c(1 / 12), lax.div(lax.sub(c(1 / 360), lax.div(c(1 / 1260), sq)), sq)),
        k1,
    )
    table = lax.full_like(k, 0.0)
    whole = lax.floor(k)
    for i, v in enumerate(_STIRLING_TAIL):
        table = lax.select(lax.eq(whole, c(float(i))), lax.full_like(k, v), table)
    return lax.select(small, table, series)


def _binomial_btrs(key, n, p, limit: int):
    """BTRS; every round splits the key in three (next key, u, v), and any
    element accepting in a round takes that round's candidate."""
    shape, dtype = aval_of(p).shape, aval_of(p).dtype
    c = lambda v: np.array(v, dtype)[()]
    stddev = lax.sqrt(lax.mul(lax.mul(n, p), lax.sub(c(1.0), p)))
    b = lax.add(c(1.15), lax.mul(c(2.53), stddev))
    a = lax.add(lax.add(c(-0.0873), lax.mul(c(0.0248), b)), lax.mul(c(0.01), p))
    centre = lax.add(lax.mul(n, p), c(0.5))
    v_r = lax.sub(c(0.92), lax.div(c(4.2), b))
    r = lax.div(p, lax.sub(c(1.0), p))
    alpha = lax.mul(lax.add(c(2.83), lax.div(c(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(n, c(1.0)), p))
    log = lax.log
    head = lax.add(
        lax.mul(
            lax.add(m, c(0.5)),
            log(
                lax.div(lax.add(m, c(1.0)), lax.mul(r, lax.add(lax.sub(n, m), c(1.0))))
            ),
        ),
        lax.add(_stirling_tail(m), _stirling_tail(lax.sub(n, m))),
    )

    def step(state):
        key, k_out, accepted = state
        keys = _split(key, 3)
        key, k0, k1 = (_row(keys, i) for i in range(3))
        u = lax.sub(_uniform(k0, shape, dtype), c(0.5))
        v = _uniform(k1, shape, dtype)
        us = lax.sub(c(0.5), lax.abs(u))
        squeeze = lax.bitwise_and(lax.ge(us, c(0.07)), lax.le(v, v_r))
        k = lax.floor(
            lax.add(lax.mul(lax.add(lax.div(lax.mul(c(2.0), a), us), b), u), centre)
        )
        reject = lax.bitwise_or(lax.lt(k, c(0.0)), lax.gt(k, n))
        v = log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        rest = lax.add(lax.sub(n, k), c(1.0))
        bound = lax.add(
            lax.add(
                head,
                lax.mul(
                    lax.add(n, c(1.0)),
                    log(lax.div(lax.add(lax.sub(n, m), c(1.0)), rest)),
                ),
            ),
            lax.mul(
                lax.add(k, c(0.5)), log(lax.div(lax.mul(r, rest), lax.add(k, c(1.0))))
            ),
        )
        bound = lax.sub(
            lax.sub(bound, _stirling_tail(k)), _stirling_tail(lax.sub(n, k))
        )
        accept = lax.bitwise_or(
            squeeze, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, bound))
        )
        return key, lax.select(accept, k, k_out), lax.bitwise_or(accepted, accept)

    init = (key, lax.full(shape, -1.0, dtype), lax.full(shape, False, np.bool_))
    return _while_any(lambda st: lax.bitwise_not(st[2]), step, init, limit)[1]


def _geometric(key, p, shape=None, dtype=None):
    """Trials up to and including the first success, each succeeding with
    probability p: 1 + floor(log U / log(1 - p)) (inversion, U uniform in (0, 1),
    0 drawn as 1)."""
    out_dtype = _int_dtype(dtype, "geometric")
    shape = _param_shape(shape, p)
    calc = _calc_dtype(p)
    c = lambda v: np.array(v, calc)[()]
    u = _uniform(key, shape, calc)
    u = lax.select(lax.eq(u, c(0.0)), lax.full(shape, 1.0, calc), u)
    log_q = lax.log1p(lax.neg(_as(p, calc, shape)))
    trials = lax.add(lax.floor(lax.div(lax.log(u), log_q)), c(1.0))
    return lax.convert_element_type(trials, out_dtype)


def _pareto(key, b, shape=None, dtype=None):
    """Pareto floats with density b / x^(b + 1) on x >= 1: exp(E / b) for E
    exponential (inversion). b < 0 or nan gives nan."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, b)
    b = _as(b, dtype, shape)
    x = lax.exp(lax.div(_exponential(key, shape, dtype), b))
    return _nan_where(lax.bitwise_not(lax.ge(b, np.array(0.0, dtype)[()])), x)


def _weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats, density proportional to x^(c-1) exp(-(x/scale)^c):
    scale * E^(1/c) for E exponential (inversion). The result has the shape
    `shape` broadcast with the parameters', one independent draw per element."""
    dtype = _float_dtype(dtype)
    shape = tuple(
        np.broadcast_shapes(_shape(shape), _param_shape(None, scale, concentration))
    )
    scale, conc = _as(scale, dtype, shape), _as(concentration, dtype, shape)
    e = _exponential(key, shape, dtype)
    return lax.mul(scale, lax.pow(e, lax.div(np.array(1.0, dtype)[()], conc)))


def _generalized_normal(key, p, shape=(), dtype=None):
    """Floats with density proportional to exp(-|x|^p): a random sign (from
    split(key)[1]) times G^(1/p) for G ~ Gamma(1/p) (from split(key)[0]). The
    result has `shape` broadcast with p's."""
    dtype = _float_dtype(dtype)
    shape = tuple(np.broadcast_shapes(_shape(shape), _param_shape(None, p)))
    p = _as(p, dtype, shape)
    one = np.array(1.0, dtype)[()]
    k_gamma, k_sign = _split2(key)
    g = _gamma(k_gamma, lax.div(one, p), shape, dtype)
    r = _rademacher(k_sign, shape, dtype)
    return lax.mul(r, lax.pow(g, lax.div(one, p)))


def _ball(key, d: int, p: float = 2, shape=(), dtype=None):
    """Points uniform in the unit l_p ball of R^d, shape (*shape, d): X / (|X|_p^p
    + Y)^(1/p) for X with i.i.d. generalized-normal(p) coordinates and Y
    exponential (Barthe, Guedon, Mendelson and Naor, "A probabilistic approach
    to the geometry of the l_p^n ball", 2005)."""
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


def _orthogonal(key, n: int, shape=(), dtype=None, m=None):
    """Haar-random matrices of shape (*shape, n, m) with orthonormal columns
    (n >= m) or rows (n < m): the QR factor of a Gaussian matrix, its columns'
    signs fixed by R's diagonal (Mezzadri, "How to generate random matrices
    from the classical compact groups", 2007). Real dtypes only."""
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


def _triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on [left, right] peaking at mode, by inverting the CDF.
    Parameters with left <= mode <= right violated, or left == right, give nan."""
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


def _wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats with mean `mean` and shape parameter 1, by
    Michael, Schucany and Haas' transformation with multiple roots (1976): the
    normal from split(key)[0], the uniform choosing a root from split(key)[1]."""
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


def _maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell floats (density proportional to x^2 exp(-x^2 / 2)): the
    length of a standard normal vector in R^3."""
    dtype, shape = _float_dtype(dtype), _shape(shape)
    z = _normal(key, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(z, z), (len(shape),)))


def _lognormal(key, sigma=1.0, shape=None, dtype=None):
    """Log-normal floats: exp(sigma Z) for a standard normal Z."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, sigma)
    return lax.exp(lax.mul(_as(sigma, dtype, shape), _normal(key, shape, dtype)))


def _rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats (density x / s^2 exp(-x^2 / (2 s^2))): the inverse CDF,
    s sqrt(-2 log U), at U uniform in [0, 1)."""
    dtype = _float_dtype(dtype)
    shape = _param_shape(shape, scale)
    log_u = lax.log(_uniform(key, shape, dtype))
    root = lax.sqrt(lax.mul(log_u, np.array(-2.0, dtype)[()]))
    return lax.mul(_as(scale, dtype, shape), root)


def _double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """loc + scale * (a random sign times a one-sided Maxwell float). The shape
    is `shape` (the parameters' shape if empty) followed by the parameters'
    broadcast shape, as JAX has it."""
    dtype = _float_dtype(dtype)
    params = _param_shape(None, loc, scale)
    shape = (_shape(shape) or params) + params
    k_length, k_sign = _split2(key)
    signs = _rademacher(k_sign, shape, dtype)
    z = lax.mul(signs, _maxwell(k_length, shape, dtype))
    return lax.add(lax.mul(z, _as(scale, dtype, shape)), _as(loc, dtype, shape))


def _multinomial(key, n, p, shape=None, dtype=None, unroll=1):
    """Counts of n draws over the categories on p's last axis, as a chain of
    binomials: category i takes Binomial(what is left, p_i / (p_i + ... + p_k))
    (so p need not sum to 1). `shape` is the whole result shape (its last
    entry the number of categories), as JAX's multinomial takes it."""
    out_dtype = _float_dtype(dtype)
    calc = _calc_dtype(dtype=out_dtype)
    p = lax.convert_element_type(p, calc)
    p_shape = aval_of(p).shape
    if not p_shape:
        raise RandomParameterError(
            "random.multinomial: p needs a last axis of categories, got a scalar"
        )
    shape = p_shape if shape is None else _shape(shape)
    if not shape or shape[-1] != p_shape[-1]:
        raise RandomParameterError(
            f"random.multinomial: shape {shape} must end with the number of "
            f"categories {p_shape[-1]} (p has shape {p_shape})"
        )
    p = _broadcast_to(p, shape)
    remaining = _as(n, calc, shape[:-1])
    last = len(shape) - 1
    tail_mass = lax.cumsum(p, axis=last, reverse=True)
    share = lax.div(p, lax.max(tail_mass, np.array(np.finfo(calc).tiny, calc)[()]))
    share = lax.clamp(np.array(0.0, calc)[()], share, np.array(1.0, calc)[()])
    order = (last, *range(last))  # categories in front, for the scan

    def draw(left, key_and_share):
        k, q = key_and_share
        count = _binomial(k, left, q, shape[:-1], calc)
        return lax.sub(left, count), count

    keys = _split(key, shape[-1])
    _, counts = lax.scan(
        draw, remaining, (keys, lax.transpose(share, order)), unroll=unroll
    )
    counts = lax.transpose(counts, (*range(1, last + 1), 0))
    return lax.convert_element_type(counts, out_dtype)


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
        raise KeyError_(
            f"random.{name}: expected a single PRNG key, got a key array of shape "
            f"{key.shape}; to map over a batch of keys use olympus.vmap"
        )
    return key.data


def _compiled(impl, *static: str, returns_keys: bool = False):
    """`impl` jitted with `static` names static (shapes, dtypes, axes); eager calls
    then cost one dispatch, not one per lax operation. Typed keys go in as
    their words, and come back typed when `returns_keys`."""
    jitted = jit(impl, static_argnames=static)
    parameters = inspect.signature(impl).parameters
    names = tuple(parameters)
    defaults = {k: p.default for k, p in parameters.items() if p.default is not p.empty}

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


def fold_in(key, data):
    """A new key derived from `key` and the integer `data` (e.g. a step number),
    which is taken as a uint32, as JAX does: Python ints must lie in [0, 2**32).

    >>> olympus.random.fold_in(olympus.random.PRNGKey(0), 2**32 - 1).dtype
    dtype('uint32')
    """
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        if not 0 <= int(data) < 2**32:
            raise OverflowError(
                f"random.fold_in: data {int(data)} is out of bounds for uint32 (the "
                f"data folded into a key is one 32-bit word); reduce it modulo 2**32"
            )
        data = np.uint32(int(data))
    return _fold_in_compiled(key, data)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of `n` draws over the categories on `p`'s last axis (floats of
    `dtype`); `p` is normalised along that axis, `n` broadcasts to the other
    axes; `shape`, if given, is the whole result shape.

    >>> olympus.random.multinomial(olympus.random.key(0), 10.0, jnp.array([0.5, 0.5])).sum()
    Array(10., dtype=float32)
    """
    return _multinomial_compiled(key, n, p, shape=shape, dtype=dtype, unroll=unroll)


def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of `range(x)` for an int `x`, else `x` shuffled along
    `axis` (every slice the same way, or each independently).

    >>> olympus.random.permutation(olympus.random.key(0), 4).shape
    (4,)
    """
    if isinstance(x, (int, np.integer)):
        return _random_order_compiled(key, n=int(x))
    if aval_of(x).ndim == 0:
        raise TypeError(
            f"random.permutation: x must be an integer or an array of at least one "
            f"dimension, got {aval_of(x).str_short()}; pass an int n to permute range(n)"
        )
    return _permutation_compiled(key, x, axis=axis, independent=bool(independent))


def shuffle(key, x, axis: int = 0):
    """`x` shuffled along `axis` (JAX's deprecated name for permutation)."""
    return permutation(key, x, axis)


def choice(
    key, a, shape: Sequence[int] = (), replace: bool = True, p=None, axis: int = 0
):
    """Samples from `range(a)` (an int) or the entries of `a` along `axis`,
    uniformly or with probabilities `p`, with or without replacement."""
    if isinstance(a, (int, np.integer)):
        n, a = int(a), None
    else:
        axis = axis % aval_of(a).ndim
        n = aval_of(a).shape[axis]
    return _choice_compiled(
        key, a, p, n=n, shape=_shape(shape), replace=bool(replace), axis=axis
    )
