"""`olympus.Array`: device-resident data, host conversion, printing, Python protocols."""

import pickle

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp


def test_repr_like_numpy():
    assert repr(jnp.array([0.0, 1.0])) == "Array([0., 1.], dtype=float32)"
    assert (
        repr(jnp.array([[1, 2], [3, 4]]))
        == "Array([[1, 2],\n       [3, 4]], dtype=int32)"
    )
    assert repr(jnp.array([True, False])) == "Array([ True, False], dtype=bool)"
    assert repr(jnp.zeros((), jnp.int8)) == "Array(0, dtype=int8)"
    assert repr(jnp.ones(2, jnp.bfloat16)) == "Array([1, 1], dtype=bfloat16)"
    assert repr(jnp.asarray(2)) == "Array(2, dtype=int32, weak_type=True)"
    assert repr(jnp.zeros((0, 2))) == "Array([], shape=(0, 2), dtype=float32)"


def test_str_and_format():
    assert str(jnp.array([1.5, 2.0])) == str(np.array([1.5, 2.0], np.float32))
    assert f"{jnp.asarray(3.14159):.2f}" == "3.14"
    assert f"{jnp.arange(2)}" == "[0 1]"


def test_numpy_conversion():
    x = jnp.arange(6.0).reshape(2, 3)
    host = np.asarray(x)
    assert isinstance(host, np.ndarray) and host.dtype == np.float32
    np.testing.assert_array_equal(host, np.arange(6.0).reshape(2, 3))
    assert np.asarray(x, dtype=np.int64).dtype == np.int64
    copy = np.array(x)
    copy[0, 0] = 10.0  # a copy is the caller's to mutate
    assert float(x[0, 0]) == 0.0
    assert np.asarray(jnp.ones(2, jnp.bfloat16)).dtype == jnp.bfloat16


def test_metadata():
    x = jnp.ones((2, 3), jnp.float16)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.nbytes == 12
    assert x.dtype == np.float16 and not x.weak_type
    assert isinstance(x, jnp.ndarray) and isinstance(x, olympus.Array)
    assert len(x) == 2
    assert len(x.devices()) == 1


def test_python_scalar_conversions():
    assert float(jnp.asarray(2.5)) == 2.5
    assert int(jnp.asarray(7)) == 7
    assert bool(jnp.asarray(True)) is True and not jnp.asarray(0.0)
    assert complex(jnp.asarray(1 + 2j)) == 1 + 2j
    assert jnp.asarray(3).item() == 3 and jnp.arange(3).tolist() == [0, 1, 2]
    assert [10, 20, 30][jnp.asarray(1)] == 20  # __index__
    assert list(range(jnp.asarray(3))) == [0, 1, 2]
    with pytest.raises(TypeError, match="integer"):
        [1, 2][jnp.asarray(1.0)]
    with pytest.raises(ValueError):
        bool(jnp.ones(2))


def test_iteration():
    rows = list(jnp.arange(6).reshape(3, 2))
    assert len(rows) == 3 and all(isinstance(r, olympus.Array) for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[2]), [4, 5])
    with pytest.raises(TypeError, match="0-d"):
        iter(jnp.asarray(1.0))
    with pytest.raises(TypeError, match="unsized"):
        len(jnp.asarray(1.0))


def test_unhashable_and_immutable():
    x = jnp.ones(2)
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0


def test_methods_and_properties():
    x = jnp.arange(6.0).reshape(2, 3)
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    z = jnp.asarray(np.array([1 + 2j, 3 - 1j], np.complex64))
    np.testing.assert_array_equal(np.asarray(z.real), [1, 3])
    np.testing.assert_array_equal(np.asarray(z.imag), [2, -1])
    np.testing.assert_array_equal(np.asarray(z.conj()), [1 - 2j, 3 + 1j])
    np.testing.assert_array_equal(np.asarray(x.ravel()), np.arange(6.0))
    np.testing.assert_array_equal(
        np.asarray(x.swapaxes(0, 1)), np.arange(6.0).reshape(2, 3).T
    )
    assert float(x.std()) == pytest.approx(np.arange(6.0).std(), rel=1e-6)
    assert x.astype(jnp.int32).dtype == np.int32 and x.copy() is not None


def test_numpy_functions_accept_arrays():
    x = jnp.arange(4.0)
    assert float(np.sum(x)) == 6.0
    np.testing.assert_allclose(np.sin(x), np.sin(np.arange(4.0)), rtol=1e-6)


def test_stays_on_device_through_jit():
    f = olympus.jit(lambda a: a * 2)
    x = jnp.ones(3)
    y = f(f(x))
    assert isinstance(y, olympus.Array) and y._npy is None  # never copied to the host
    np.testing.assert_array_equal(np.asarray(y), [4, 4, 4])
    assert y.block_until_ready() is y
    out = olympus.block_until_ready({"y": y})
    assert out["y"] is y


def test_device_put_and_get():
    x = olympus.device_put(np.arange(3, dtype=np.float64))
    assert isinstance(x, olympus.Array) and x.dtype == np.float32
    assert olympus.devices()
    host = olympus.device_get({"x": x})
    np.testing.assert_array_equal(np.asarray(host["x"]), [0, 1, 2])


def test_pickle_round_trip():
    x = jnp.arange(3, dtype=jnp.int16)
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, olympus.Array) and y.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(y), [0, 1, 2])


def test_delete():
    x = jnp.ones(2) + 1
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_scalar_dtype_constructors_build_arrays():
    x = jnp.float32(3)
    assert isinstance(x, olympus.Array) and x.dtype == np.float32 and not x.weak_type
    assert jnp.int8(np.arange(3)).dtype == np.int8
    assert jnp.bfloat16(1.5).dtype == jnp.bfloat16
    assert np.dtype(jnp.float32) == np.float32 and jnp.float32 == np.float32
    assert (
        jnp.zeros(2, jnp.uint8).dtype == np.uint8
        and np.zeros(2, jnp.int16).dtype == np.int16
    )
    assert isinstance(np.float32(1.0), jnp.float32)
    assert jnp.issubdtype(jnp.float32, jnp.floating) and not jnp.issubdtype(
        jnp.int32, jnp.floating
    )
    out = olympus.jit(lambda v: jnp.float32(v) * 2)(3)
    assert out.dtype == np.float32 and float(out) == 6.0
