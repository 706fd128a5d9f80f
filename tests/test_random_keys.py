"""Typed PRNG keys (olympus.prng): `random.key` gives a key<fry> array of
shape (), with the same words and numbers as the raw `random.PRNGKey`, and
keys pass through jit, vmap, grad, scan, fori_loop and cond as keys."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax, random
from olympus.prng import KeyArrayTypeError, PRNGKeyArray


def words(keys) -> np.ndarray:
    return np.asarray(random.key_data(keys))


# ---- shapes, dtypes and the words ------------------------------------------------
def test_key_shape_dtype_and_words():
    k = random.key(42)
    assert isinstance(k, PRNGKeyArray)
    assert (
        k.shape == ()
        and k.ndim == 0
        and str(k.dtype) == "key<fry>"
        and repr(k.dtype) == "key<fry>"
    )
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[ 0 42]"
    np.testing.assert_array_equal(words(k), np.asarray(random.PRNGKey(42)))
    assert random.key_data(k).dtype == np.uint32
    assert random.key_impl(k) == "threefry2x32" == random.key_impl(random.PRNGKey(0))
    assert jnp.issubdtype(k.dtype, olympus.dtypes.prng_key)
    assert not jnp.issubdtype(k.dtype, jnp.integer)
    assert not jnp.issubdtype(jnp.uint32, olympus.dtypes.prng_key)


def test_split_and_fold_in_keep_the_kind_of_key():
    typed, raw = random.key(3), random.PRNGKey(3)
    keys = random.split(typed, 4)
    assert isinstance(keys, PRNGKeyArray) and keys.shape == (4,) and len(keys) == 4
    assert random.split(typed, (2, 3)).shape == (2, 3)
    assert random.split(raw, 4).shape == (4, 2) and not isinstance(
        random.split(raw, 4), PRNGKeyArray
    )
    np.testing.assert_array_equal(words(keys), np.asarray(random.split(raw, 4)))
    folded = random.fold_in(typed, 5)
    assert isinstance(folded, PRNGKeyArray) and folded.shape == ()
    np.testing.assert_array_equal(words(folded), np.asarray(random.fold_in(raw, 5)))
    assert random.clone(typed) is typed


def test_key_data_wrap_key_data_round_trip():
    keys = random.split(random.key(1), (2, 3))
    data = random.key_data(keys)
    assert data.shape == (2, 3, 2) and data.dtype == np.uint32
    back = random.wrap_key_data(data)
    assert back.shape == (2, 3)
    np.testing.assert_array_equal(words(back), np.asarray(data))
    np.testing.assert_array_equal(
        words(random.wrap_key_data(np.array([0, 42], np.uint32))), [0, 42]
    )
    np.testing.assert_array_equal(
        words(random.key_data(random.PRNGKey(9))), [0, 9]
    )  # raw stays raw


def test_indexing_iteration_and_reshape():
    keys = random.split(random.key(2), (2, 3))
    np.testing.assert_array_equal(words(keys[1]), words(keys)[1])
    np.testing.assert_array_equal(words(keys[:, 2]), words(keys)[:, 2])
    np.testing.assert_array_equal(words(keys[..., 0]), words(keys)[..., 0, :])
    assert (
        keys[1, 2].shape == ()
        and keys[None].shape == (1, 2, 3)
        and keys[0, 1:].shape == (2,)
    )
    assert [k.shape for k in keys] == [(3,), (3,)]
    assert keys.reshape(6).shape == (6,) and keys.reshape((3, 2)).shape == (3, 2)
    np.testing.assert_array_equal(words(keys.reshape(6)[4]), words(keys)[1, 1])
    traced = olympus.jit(lambda ks, i: ks[i])(keys.reshape(6), np.int32(4))
    assert isinstance(traced, PRNGKeyArray)
    np.testing.assert_array_equal(words(traced), words(keys)[1, 1])


# ---- samplers take both kinds of key ------------------------------------------------
@pytest.mark.parametrize(
    "sample",
    [
        lambda k: random.normal(k, (3,)),
        lambda k: random.uniform(k, (3,)),
        lambda k: random.bits(k, (3,)),
        lambda k: random.permutation(k, 5),
    ],
)
def test_typed_and_raw_keys_give_the_same_numbers(sample):
    np.testing.assert_array_equal(
        np.asarray(sample(random.key(11))), np.asarray(sample(random.PRNGKey(11)))
    )


# ---- transformations ----------------------------------------------------------------
def test_jit_takes_and_returns_typed_keys():
    k = random.key(5)
    out_key, x = olympus.jit(lambda k: (random.split(k)[0], random.normal(k, (2,))))(k)
    assert isinstance(out_key, PRNGKeyArray) and out_key.shape == ()
    np.testing.assert_array_equal(words(out_key), words(random.split(k))[0])
    np.testing.assert_array_equal(np.asarray(x), np.asarray(random.normal(k, (2,))))
    np.testing.assert_array_equal(words(olympus.jit(random.key)(np.int32(7))), [0, 7])


def test_vmap_over_typed_keys():
    keys = random.split(random.key(0), 4)
    mapped = np.asarray(olympus.vmap(lambda k: random.normal(k, (3,)))(keys))
    looped = np.stack([np.asarray(random.normal(k, (3,))) for k in keys])
    np.testing.assert_array_equal(mapped, looped)
    split_each = olympus.vmap(random.split)(keys)  # out_axes 0 on a key output
    assert isinstance(split_each, PRNGKeyArray) and split_each.shape == (4, 2)
    np.testing.assert_array_equal(words(split_each[2]), words(random.split(keys[2])))


def test_scan_fori_loop_and_cond_carry_keys():
    def step(carry, _):
        k, total = carry
        k, sub = random.split(k)
        return (k, total + random.normal(sub)), None

    (k_end, total), _ = lax.scan(step, (random.key(4), np.float32(0.0)), None, length=3)
    k, expected = random.key(4), 0.0
    for _ in range(3):
        k, sub = random.split(k)
        expected += float(random.normal(sub))
    assert isinstance(k_end, PRNGKeyArray)
    np.testing.assert_array_equal(words(k_end), words(k))
    np.testing.assert_allclose(float(total), expected, rtol=1e-6)
    folded = lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), random.key(4))
    want = random.fold_in(random.fold_in(random.fold_in(random.key(4), 0), 1), 2)
    np.testing.assert_array_equal(words(folded), words(want))
    chosen = lax.cond(
        np.bool_(True), lambda k: random.split(k)[1], lambda k: k, random.key(4)
    )
    np.testing.assert_array_equal(words(chosen), words(random.split(random.key(4)))[1])


def test_grad_treats_the_key_as_a_constant_input():
    k = random.key(8)
    g = olympus.grad(lambda scale, k: jnp.sum(scale * random.normal(k, (4,))))(
        np.float32(2.0), k
    )
    np.testing.assert_allclose(
        float(g), np.asarray(random.normal(k, (4,))).sum(), rtol=1e-5
    )


# ---- errors ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "misuse",
    [
        lambda k: k + 1,
        lambda k: 1 * k,
        lambda k: -k,
        lambda k: jnp.sin(k),
        lambda k: jnp.add(k, 1),
        lambda k: np.asarray(k),
        lambda k: olympus.jit(lambda k: jnp.sum(k))(k),
    ],
)
def test_keys_are_not_numbers(misuse):
    with pytest.raises(KeyArrayTypeError, match="key"):
        misuse(random.key(0))


def test_key_misuse_errors():
    with pytest.raises(random.KeyError_, match="single PRNG key"):
        random.normal(random.split(random.key(0), 2), (3,))
    with pytest.raises(IndexError, match="too many indices"):
        random.key(0)[0]
    with pytest.raises(TypeError, match="scalar PRNG key"):
        len(random.key(0))
    with pytest.raises(random.KeyError_, match=r"uint32\[\.\.\., 2\]"):
        random.wrap_key_data(np.zeros((3,), np.uint32))
    with pytest.raises(random.KeyError_, match="uint32 words"):
        random.wrap_key_data(np.zeros((2,), np.float32))


# ---- JAX as an oracle -----------------------------------------------------------------
def test_split_words_match_jax():
    jax = pytest.importorskip("jax")
    ours = words(random.split(random.key(7), 3))
    theirs = np.asarray(jax.random.key_data(jax.random.split(jax.random.key(7), 3)))
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(
        words(random.fold_in(random.key(7), 3)),
        np.asarray(jax.random.key_data(jax.random.fold_in(jax.random.key(7), 3))),
    )


def test_negative_vmap_axes_count_key_dims_not_the_hidden_words():
    keys = random.split(random.key(0), 6).reshape((2, 3))
    sample = lambda k: random.normal(k, (2,))  # noqa: E731
    got = olympus.vmap(olympus.vmap(sample), in_axes=-1)(keys)  # the size-3 axis first
    want = np.stack(
        [np.stack([np.asarray(sample(keys[i, j])) for i in range(2)]) for j in range(3)]
    )
    np.testing.assert_array_equal(np.asarray(got), want)
    out = olympus.vmap(lambda k: random.split(k, 4), out_axes=-1)(
        random.split(random.key(1), 3)
    )
    assert out.shape == (4, 3)
    np.testing.assert_array_equal(
        np.asarray(random.key_data(out[:, 2])),
        np.asarray(random.key_data(random.split(random.split(random.key(1), 3)[2], 4))),
    )
