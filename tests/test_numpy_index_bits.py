"""jnp.unravel_index, ravel_multi_index, mask_indices, packbits, unpackbits
and the host-side readers, against NumPy (and JAX where it differs from
NumPy by design)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.tracer.errors import ConcretizationTypeError


def test_unravel_index_matches_numpy_in_range_and_clips_like_jax_outside():
    shape = (3, 4, 5)
    flat = np.arange(60, dtype=np.int32)
    got = jnp.unravel_index(flat, shape)
    for g, w in zip(got, np.unravel_index(flat, shape)):
        np.testing.assert_array_equal(np.asarray(g), w)
    edge = jnp.unravel_index(jnp.array([-1, -60, 60, 1000]), shape)
    want = np.unravel_index(np.array([59, 0, 59, 59]), shape)
    for g, w in zip(edge, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    jitted = olympus.jit(lambda i: jnp.unravel_index(i, shape))(flat)
    assert [np.asarray(a).tolist() for a in jitted] == [
        np.asarray(a).tolist() for a in got
    ]
    # Float indices divide as floats, as JAX's (no refusal).
    floats = jnp.unravel_index(jnp.array([7.0, 61.0]), shape)
    assert [np.asarray(a).tolist() for a in floats] == [[0, 2], [1, 3], [2, 4]]
    assert all(a.dtype == np.float32 for a in floats)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index_matches_numpy(order):
    dims = (3, 4, 5)
    rng = np.random.default_rng(0)
    idx = tuple(rng.integers(0, d, 20).astype(np.int32) for d in dims)
    want = np.ravel_multi_index(idx, dims, order=order)
    got = jnp.ravel_multi_index(idx, dims, order=order)
    np.testing.assert_array_equal(np.asarray(got), want)
    wild = tuple(rng.integers(-7, 9, 20).astype(np.int32) for d in dims)
    for mode in ("wrap", "clip"):
        np.testing.assert_array_equal(
            np.asarray(jnp.ravel_multi_index(wild, dims, mode=mode, order=order)),
            np.ravel_multi_index(wild, dims, mode=mode, order=order),
        )
        f = olympus.jit(lambda *i, m=mode: jnp.ravel_multi_index(i, dims, mode=m))
        np.testing.assert_array_equal(
            np.asarray(f(*wild)), np.ravel_multi_index(wild, dims, mode=mode)
        )


def test_ravel_multi_index_raise_mode_needs_concrete_values():
    with pytest.raises(ValueError, match="out of range"):
        jnp.ravel_multi_index((jnp.array([1, 3]), jnp.array([2, 0])), (2, 3))
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        olympus.jit(lambda a: jnp.ravel_multi_index((a, a), (2, 3)))(jnp.array([1, 0]))
    with pytest.raises(ValueError, match="2 index arrays for 3 dimensions"):
        jnp.ravel_multi_index((jnp.array([0]), jnp.array([0])), (2, 3, 4))


def test_round_trip_of_unravel_and_ravel():
    dims = (2, 3, 4)
    flat = jnp.arange(24)
    again = jnp.ravel_multi_index(jnp.unravel_index(flat, dims), dims)
    np.testing.assert_array_equal(np.asarray(again), np.arange(24))


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_mask_indices_matches_numpy(k):
    for func, np_func in ((jnp.triu, np.triu), (jnp.tril, np.tril)):
        got = jnp.mask_indices(4, func, k)
        for g, w in zip(got, np.mask_indices(4, np_func, k)):
            np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_packbits_and_unpackbits_match_numpy(axis, bitorder):
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2, (5, 11)).astype(np.uint8)
    want = np.packbits(bits, axis=axis, bitorder=bitorder)
    got = jnp.packbits(bits, axis=axis, bitorder=bitorder)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(got), want)
    for count in (None, 3, -2):
        np.testing.assert_array_equal(
            np.asarray(jnp.unpackbits(want, axis=axis, count=count, bitorder=bitorder)),
            np.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
        )


def test_packbits_of_booleans_and_ints_under_jit_and_vmap():
    x = np.array([[True, False, True], [False, False, True]])
    np.testing.assert_array_equal(
        np.asarray(olympus.jit(lambda a: jnp.packbits(a, axis=1))(x)),
        np.packbits(x, axis=1),
    )
    counts = np.array([[0, 3, -2, 0, 7, 0, 0, 1]], np.int32)
    np.testing.assert_array_equal(
        np.asarray(jnp.packbits(counts)), np.packbits(counts != 0)
    )
    per_row = olympus.vmap(jnp.unpackbits)(np.array([[177], [3]], np.uint8))
    np.testing.assert_array_equal(
        np.asarray(per_row), np.unpackbits(np.array([[177], [3]], np.uint8), axis=1)
    )
    with pytest.raises(TypeError, match="uint8"):
        jnp.unpackbits(np.array([1], np.int32))
    with pytest.raises(ValueError, match="bitorder"):
        jnp.packbits(x, bitorder="middle")


def test_readers_from_bytes_text_iterables_and_files(tmp_path):
    data = np.arange(6, dtype=np.int16)
    got = jnp.frombuffer(data.tobytes(), dtype=np.int16, offset=2)
    assert isinstance(got, olympus.Array)
    np.testing.assert_array_equal(np.asarray(got), data[1:])
    np.testing.assert_array_equal(
        np.asarray(jnp.fromstring("1.5, 2, 3", sep=",")), [1.5, 2, 3]
    )
    np.testing.assert_array_equal(
        np.asarray(jnp.fromiter((i * i for i in range(4)), dtype=np.int32)),
        [0, 1, 4, 9],
    )
    path = tmp_path / "x.npy"
    jnp.save(path, jnp.arange(3.0))
    loaded = jnp.load(path)
    assert isinstance(loaded, olympus.Array) and loaded.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(loaded), [0.0, 1.0, 2.0])
    buffer = io.BytesIO()
    jnp.savez(buffer, a=np.ones(2))
    buffer.seek(0)
    assert jnp.load(buffer)["a"].tolist() == [1.0, 1.0]
    with jnp.printoptions(precision=2):
        assert "3.14" in repr(jnp.array([3.14159]))
    assert jnp.array_str(np.array([1, 2])) == "[1 2]"


def test_matches_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp

    idx = np.array([-3, 0, 7, 100], np.int32)
    for ours, theirs in zip(
        jnp.unravel_index(idx, (3, 4)), jjnp.unravel_index(idx, (3, 4))
    ):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    x = np.array([[1, 0, 1], [1, 1, 0]], np.uint8)
    np.testing.assert_array_equal(
        np.asarray(jnp.packbits(x, axis=0, bitorder="little")),
        np.asarray(jjnp.packbits(x, axis=0, bitorder="little")),
    )
    del jax
