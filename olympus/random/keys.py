"""Keys and raw bits: the threefry2x32 hash, key construction, split and
fold_in, random words, and the float/shape helpers every sampler shares."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from olympus import lax
from olympus.api import device_put, jit
from olympus.backends.xla.sharding import onto_mesh_in_scope
from olympus.ir import dtypes
from olympus.lax.bits import bitcast_convert_type, shift_left, shift_right_logical
from olympus.prng import KEY_WORDS, KeyArrayTypeError, PRNGKeyArray  # noqa: F401
from olympus.tracer.core import aval_of
from olympus.tracer.tracebacks import api_boundary


U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = np.uint32(0x1BD11BDA)
_MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}


class InvalidKeyError(TypeError):
    """A value passed as a PRNG key is neither a typed key nor a uint32[2] array
    (olympus.errors.InvalidKeyError; a TypeError, as JAX raises)."""


KeyError_ = InvalidKeyError  # the name earlier sessions gave it


# ---- threefry2x32 ------------------------------------------------------------
def _u32(value) -> np.uint32:
    return np.uint32(value & 0xFFFFFFFF)


def _rotate_left(x, r):
    """x rotated left by r bits (r a uint32 scalar, traced inside the loop)."""
    return lax.bitwise_or(shift_left(x, r), shift_right_logical(x, _u32(32) - r))


def _threefry2x32_hash(k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011) of counters (x0, x1)
    under key (k0, k1); all uint32, keys rank-0 (they broadcast).

    The five groups of four rounds run as a loop of five iterations that
    carries the key schedule and the two rotation sets and rotates them, as
    JAX lowers the hash on CPU: written out, 20 rounds per hash made XLA's CPU
    compiler over 10x slower on programs that draw several random arrays
    (benchmarks/compile_time.py, vae_sample: 152 s against 13 s). Same bits."""
    k2 = lax.bitwise_xor(lax.bitwise_xor(k0, k1), _KS_PARITY)
    x0, x1 = lax.add(x0, k0), lax.add(x1, k1)
    rotations = tuple(_u32(r) for r in _ROTATIONS[0] + _ROTATIONS[1])

    def group(i, carry):
        x0, x1, k_first, k_second, k_third = carry[:5]
        now, after = carry[5:9], carry[9:]
        for r in now:
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(_rotate_left(x1, r), x0)
        x0 = lax.add(x0, k_first)
        step = lax.convert_element_type(lax.add(i, 1), U32)
        x1 = lax.add(lax.add(x1, k_second), step)
        return (x0, x1, k_second, k_third, k_first, *after, *now)

    out = lax.fori_loop(0, 5, group, (x0, x1, k1, k2, k0, *rotations))
    return out[0], out[1]


_threefry2x32_jit = jit(_threefry2x32_hash)


def threefry2x32(key, counts):
    """The Threefry-2x32 hash of counter pairs under `key`.

    Hashes counter pairs: `key` is uint32[2], `counts` uint32[2, ...] (high
    words then low words); returns uint32[2, ...].

    Args:
      key: a uint32[2] raw key.
      counts: uint32 counters of shape (2, ...): high words, then low words.

    Returns:
      uint32 hashes of counts' shape.

    Raises:
      InvalidKeyError: key is not a PRNG key (a TypeError).

    Example:
      >>> h = olympus.random.threefry2x32(olympus.random.PRNGKey(0), jnp.zeros((2, 3), jnp.uint32))
      >>> h.shape, h.dtype
      ((2, 3), dtype('uint32'))
    """
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
            raise InvalidKeyError(
                f"expected a single PRNG key, got a key array of shape {key.shape}; "
                f"to map over a batch of keys use olympus.vmap"
            )
        key = key.data
    aval = aval_of(key)
    if aval.shape != (2,) or aval.dtype != U32:
        raise InvalidKeyError(
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
@api_boundary  # a bad seed's or key's error shows no frame of olympus's
def PRNGKey(seed) -> Array:  # noqa: F821  (JAX's name)
    """A raw uint32[2] PRNG key made from an integer seed.

    JAX's older key form: a plain uint32 array, accepted wherever a key is.
    Prefer random.key, whose dtype marks it as a key.

    Args:
      seed: a Python int or an integer scalar array.

    Returns:
      A uint32 array of shape (2,).

    Raises:
      TypeError: seed is not an integer.

    Example:
      >>> olympus.random.PRNGKey(0)
      Array([0, 0], dtype=uint32)
    """
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        high = 0 if -(2**31) <= seed < 2**32 else (seed >> 32) & 0xFFFFFFFF
        words = device_put(np.array([high, seed & 0xFFFFFFFF], U32))  # no compile
        return onto_mesh_in_scope(words)  # where JAX's jitted key maker puts it
    if isinstance(seed, PRNGKeyArray):
        raise InvalidKeyError(
            "random.key / PRNGKey: the seed must be an integer, got a PRNG key"
        )
    aval = aval_of(seed)
    if aval.shape != () or not dtypes.is_integer(aval.dtype):
        raise TypeError(
            f"random.key: the seed must be an integer scalar, got {aval.str_short()}"
        )
    low = _seed_low_word(seed, aval.dtype)
    return lax.concatenate([lax.full((1,), np.uint32(0)), lax.broadcast(low, (1,))], 0)


@api_boundary
def key(seed) -> PRNGKeyArray:
    """A typed PRNG key made from an integer seed.

    olympus's random numbers are functional: every draw takes a key, and the
    same key gives the same numbers. Make one key per program from a seed,
    then derive others with split or fold_in. Typed keys have a key dtype,
    so they cannot be mistaken for data.

    Args:
      seed: a Python int or an integer scalar array (may be traced).

    Returns:
      A scalar array of dtype key<fry> (threefry2x32).

    Raises:
      TypeError: seed is not an integer.

    Example:
      >>> k = olympus.random.key(0)
      >>> k.shape, olympus.random.key_data(k)
      ((), Array([0, 0], dtype=uint32))
    """
    return PRNGKeyArray(PRNGKey(seed))


def _seed_low_word(seed, dtype):
    if np.dtype(dtype).itemsize == 4:
        return bitcast_convert_type(seed, U32) if dtypes.is_signed_int(dtype) else seed
    return lax.convert_element_type(seed, U32)


@api_boundary
def key_data(keys):
    """The uint32 words underlying typed keys.

    For saving keys or passing them to code that wants raw arrays; undo it
    with wrap_key_data.

    Args:
      keys: an array of typed keys (raw uint32 keys pass through).

    Returns:
      A uint32 array of shape `keys.shape + (2,)`.

    Raises:
      InvalidKeyError: keys is not an array of keys.

    Example:
      >>> olympus.random.key_data(olympus.random.key(1))
      Array([0, 1], dtype=uint32)
    """
    if isinstance(keys, PRNGKeyArray):
        return keys.data
    _check_raw_keys(keys, "key_data")
    return keys


@api_boundary
def wrap_key_data(data, *, impl: str | None = None) -> PRNGKeyArray:
    """Typed keys made from their uint32 words; the inverse of key_data.

    Typed keys from their uint32 words (`data` of shape `(..., 2)`): the inverse
    of `key_data`.

    Args:
      data: uint32 words of shape (..., 2).
      impl: the implementation's name; None or 'threefry2x32'.

    Returns:
      Typed keys of shape data.shape[:-1].

    Raises:
      InvalidKeyError: data is not uint32 words of shape (..., 2) (a TypeError).
      ValueError: impl names another implementation.

    Example:
      >>> d = olympus.random.key_data(olympus.random.key(0))
      >>> k = olympus.random.wrap_key_data(d)
      >>> bool(jnp.array_equal(olympus.random.key_data(k), d))
      True
    """
    if impl is not None and impl != IMPL:
        raise ValueError(
            f"random.wrap_key_data: only the {IMPL!r} implementation exists, got {impl!r}"
        )
    if isinstance(data, PRNGKeyArray):
        raise InvalidKeyError(
            "random.wrap_key_data: expected uint32 words, got a typed key array"
        )
    if not hasattr(data, "aval"):
        data = device_put(np.asarray(data))
    aval = aval_of(data)
    if not dtypes.is_integer(aval.dtype):
        raise InvalidKeyError(
            f"random.wrap_key_data: expected uint32 words, got {aval.str_short()}"
        )
    if aval.dtype != U32:
        data = lax.convert_element_type(data, U32)
    _check_raw_keys(data, "wrap_key_data")
    return PRNGKeyArray(data)


def _check_raw_keys(data, name: str) -> None:
    aval = aval_of(data)
    if aval.ndim == 0 or aval.shape[-1] != KEY_WORDS or aval.dtype != U32:
        raise InvalidKeyError(
            f"random.{name}: expected keys as uint32[..., 2] words, got {aval.str_short()}"
        )


IMPL = "threefry2x32"


@api_boundary
def key_impl(keys) -> str:
    """The name of the PRNG implementation behind `keys`.

    The name of the PRNG implementation behind `keys` (typed or raw):
    "threefry2x32".

    Args:
      keys: typed keys (random.key) or raw uint32[..., 2] keys (random.PRNGKey).

    Returns:
      The implementation's name, a str.

    Raises:
      InvalidKeyError: keys are neither (a TypeError).

    Example:
      >>> olympus.random.key_impl(olympus.random.key(0))
      'threefry2x32'
    """
    if not isinstance(keys, PRNGKeyArray):
        _check_raw_keys(keys, "key_impl")
    return IMPL


@api_boundary
def clone(key):
    """A copy of `key` that may be used independently.

    The key itself: threefry keys are values, so reusing one is already safe.

    Args:
      key: a PRNG key.

    Returns:
      key itself.

    Raises:
      InvalidKeyError: key is not a PRNG key (a TypeError).

    Example:
      >>> k = olympus.random.key(0)
      >>> c = olympus.random.clone(k)
      >>> bool(jnp.array_equal(olympus.random.key_data(c), olympus.random.key_data(k)))
      True
    """
    if not isinstance(key, PRNGKeyArray):
        _key_words(key)
    return key


def _split(key, num: int | Sequence[int] = 2):
    """Splits a key into `num` new, independent keys.

    The way to get fresh randomness: split, use one key for a draw and keep
    another for later splits. The input key should not be used again.

    Args:
      key: a typed key or a uint32[2] key.
      num: how many keys (an int), or a shape of keys.

    Returns:
      An array of keys of shape `(num,)` (or `num` as a shape), of key's
      kind (typed, or uint32 with a trailing axis of 2).

    Raises:
      InvalidKeyError: `key` is not a key.

    Example:
      >>> keys = olympus.random.split(olympus.random.key(0), 3)
      >>> keys.shape
      (3,)
    """
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
    """Uniformly random unsigned integers.

    Uniformly random unsigned integers of `dtype` (uint8/16/32, uint64 with
    x64), as JAX draws them: the xor of the hash's two words, truncated to 8 or
    16 bits; for 64 bits the two words side by side.

    Args:
      key: a PRNG key (olympus.random.key or PRNGKey).
      shape: the sample shape (a tuple of ints); () for one number.
      dtype: an unsigned dtype: uint8, uint16, uint32 (default), uint64 with
        x64.

    Returns:
      An array of `shape` and `dtype` holding the samples.

    Raises:
      InvalidKeyError: key is not a PRNG key (a TypeError).
      TypeError: dtype is not an unsigned integer dtype.

    Example:
      >>> k = olympus.random.key(0)
      >>> x = olympus.random.bits(k, (3,))
      >>> x.shape, x.dtype
      ((3,), dtype('uint32'))
    """
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


def _split2(key):
    keys = _split(key, 2)
    return _first(keys), _second(keys)


def _row(x, j: int):
    """x[j] for an array whose leading axis is indexed by j."""
    shape = aval_of(x).shape
    start = (j, *(0,) * (len(shape) - 1))
    return lax.reshape(lax.slice(x, start, (j + 1, *shape[1:])), shape[1:])
