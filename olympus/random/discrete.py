"""Samplers of integer-valued laws and of orders (randint, categorical,
permutation, choice, poisson, binomial, geometric, multinomial), each with
JAX's algorithm and key use."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from olympus import lax
from olympus.ir import dtypes
from olympus.prng import KEY_WORDS, KeyArrayTypeError, PRNGKeyArray  # noqa: F401
from olympus.tracer.core import aval_of
from olympus.random.sampler_docs import (
    BROADCAST_SHAPE,
    INT_DTYPE,
    NOT_INT,
    documented_sampler,
)
from olympus.random.keys import (
    RandomParameterError,
    U32,
    _as,
    _bits,
    _broadcast_to,
    _calc_dtype,
    _float_dtype,
    _int_dtype,
    _param_shape,
    _row,
    _shape,
    _split,
    _split2,
)
from olympus.random.continuous import (
    _gumbel,
    _uniform,
)


# ---- discrete distributions ---------------------------------------------------------
@documented_sampler(
    dtype=INT_DTYPE, dtype_error="TypeError: dtype is not an integer dtype."
)
def _randint(key, shape: Sequence[int], minval, maxval, dtype=None):
    """Samples integers uniformly from [minval, maxval).

    Bounds outside the dtype's range are clipped to it.

    Args:
      minval: the lower bound (inclusive), broadcast to shape.
      maxval: the upper bound (exclusive), broadcast to shape.

    Returns:
      An integer array of `shape`.

    Example:
      >>> x = olympus.random.randint(olympus.random.key(0), (4,), 0, 10)
      >>> x.dtype, bool(((x >= 0) & (x < 10)).all())
      (dtype('int32'), True)
    """
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


@documented_sampler()
def _categorical(key, logits, axis: int = -1, shape=None, replace: bool = True):
    """Samples class indices from unnormalized log-probabilities.

    Uses the Gumbel-max trick: the argmax of logits plus Gumbel noise, so logits need no normalization (and -inf excludes a class).

    Args:
      logits: log-probabilities (up to a constant) along `axis`.
      axis: the class axis of logits.
      shape: the output shape (None: logits' shape without axis).
      replace: if False, draw without replacement.

    Returns:
      An int32 array of class indices.

    Raises:
      ValueError: shape does not broadcast with logits' batch shape.

    Example:
      >>> logits = jnp.log(jnp.array([0.0, 1.0, 0.0]))
      >>> olympus.random.categorical(olympus.random.key(0), logits)
      Array(1, dtype=int32)
    """
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


@documented_sampler(dtype=INT_DTYPE, dtype_error=NOT_INT)
def _poisson(key, lam, shape=None, dtype=None):
    """Samples counts from Poisson distributions of rate `lam`.

    Exact for every rate (no normal approximation).

    Args:
      lam: the rate (>= 0), broadcast to shape.
      shape: the output shape (None: lam's shape).

    Returns:
      An integer array of counts.

    Example:
      >>> olympus.random.poisson(olympus.random.key(0), 3.0, (2,)).dtype
      dtype('int32')
    """
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


def _transformed_rejection(key, shape: tuple, dtype, limit: int, round_):
    """Hormann's transformed-rejection loop (PTRS, BTRS): every round splits
    the key in three (next key, u, v), draws u uniform in [-1/2, 1/2) and v in
    [0, 1), and `round_(u, v, us)`, us = 1/2 - |u|, gives the candidates and
    where they are accepted; an element accepting in a round takes that
    round's candidate, and the rounds go on until every element has one."""
    c = lambda v: np.array(v, dtype)[()]

    def step(state):
        key, k_out, accepted = state
        keys = _split(key, 3)
        key, k0, k1 = (_row(keys, i) for i in range(3))
        u = lax.sub(_uniform(k0, shape, dtype), c(0.5))
        v = _uniform(k1, shape, dtype)
        k, accept = round_(u, v, lax.sub(c(0.5), lax.abs(u)))
        return key, lax.select(accept, k, k_out), lax.bitwise_or(accepted, accept)

    init = (key, lax.full(shape, -1.0, dtype), lax.full(shape, False, np.bool_))
    return _while_any(lambda st: lax.bitwise_not(st[2]), step, init, limit)[1]


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

    def round_(u, v, us):
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
        return k, accept

    return _transformed_rejection(key, shape, dtype, limit, round_)


@documented_sampler(shape=BROADCAST_SHAPE, example="10.0, 0.5")
def _binomial(key, n, p, shape=None, dtype=None):
    """Samples of the binomial distribution (counts, as floats).

    Binomial(n, p) counts as floats by JAX's algorithm: with q = min(p, 1 - p)
    (and n - X for p >= 1/2), n q <= 10 counts geometric waiting times
    (inversion), else Hormann's transformed rejection, BTRS ("The generation of
    binomial random variates", 1993); both loops start from `key`. n < 0, nan n
    or p, or p < 0 give nan; infinite n gives inf.

    Args:
      n: the number of trials.
      p: the success probability of each trial.
    """
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

    def round_(u, v, us):
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
        return k, accept

    return _transformed_rejection(key, shape, dtype, limit, round_)


@documented_sampler(
    shape=BROADCAST_SHAPE, dtype=INT_DTYPE, dtype_error=NOT_INT, example="0.5"
)
def _geometric(key, p, shape=None, dtype=None):
    """Samples of the geometric distribution (trials to the first success).

    Samples of the geometric distribution (trials to the first success).

    Args:
      p: the success probability of each trial, in (0, 1].

    Example:
      >>> bool((x >= 1).all())
      True
    """
    out_dtype = _int_dtype(dtype, "geometric")
    shape = _param_shape(shape, p)
    calc = _calc_dtype(p)
    c = lambda v: np.array(v, calc)[()]
    u = _uniform(key, shape, calc)
    u = lax.select(lax.eq(u, c(0.0)), lax.full(shape, 1.0, calc), u)
    log_q = lax.log1p(lax.neg(_as(p, calc, shape)))
    trials = lax.add(lax.floor(lax.div(lax.log(u), log_q)), c(1.0))
    return lax.convert_element_type(trials, out_dtype)


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
