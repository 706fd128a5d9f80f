"""Parameters of jnp functions that JAX 0.10.2 takes and olympus once lacked
(issue 30): each one runs through the oracle, so its meaning is JAX's."""

import numpy as np
import pytest
from jax_oracle import agree, x64

I32 = np.array([[1, 2], [3, 4]], np.int32)
F32 = np.array([[0.5, 1.5], [2.5, -1.0]], np.float32)
ROW = np.array([1.0, 2.0, 4.0], np.float32)
NANS = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]], np.float32)
OBS = np.array([[0.0, 1.0, 3.0, 2.0], [2.0, 1.0, 0.5, 0.0]], np.float32)
MASK = np.array([[True, False, True], [True, True, True]])


@pytest.mark.parametrize("dtype", [None, "int16", "bool"])
@pytest.mark.parametrize(
    "join",
    [
        lambda ox, d: ox.jnp.concatenate([I32, F32], dtype=d),
        lambda ox, d: ox.jnp.concatenate([I32, F32], axis=None, dtype=d),
        lambda ox, d: ox.jnp.concatenate([I32, 2], axis=None, dtype=d),
        lambda ox, d: ox.jnp.stack([I32, F32], axis=1, dtype=d),
        lambda ox, d: ox.jnp.hstack([I32, F32], dtype=d),
        lambda ox, d: ox.jnp.vstack((ROW, ROW), dtype=d),
        lambda ox, d: ox.jnp.dstack([I32, F32], dtype=d),
    ],
)
def test_joins_take_a_dtype(join, dtype):
    agree(join, dtype)


def test_joins_take_a_dtype_under_jit_and_x64():
    agree(lambda ox: ox.jit(lambda a: ox.jnp.stack([a, a], dtype="float16"))(I32))
    with x64():
        agree(lambda ox: ox.jnp.concatenate([I32, F32], dtype="float64"))
        agree(lambda ox: ox.jnp.hstack([I32, 1.5], dtype=None))


def test_stack_refuses_out_and_takes_tup_by_keyword():
    agree(lambda ox: ox.jnp.stack([I32, I32], out=I32))
    agree(lambda ox: ox.jnp.hstack(tup=[ROW, ROW]))
    agree(lambda ox: ox.jnp.vstack(tup=[ROW, ROW]))


@pytest.mark.parametrize("dtype", [None, "uint8"])
def test_argsort_index_dtype(dtype):
    agree(lambda ox: ox.jnp.argsort(F32, axis=0, dtype=dtype))
    agree(lambda ox: ox.jnp.argsort(ROW, descending=True, dtype=dtype))


def test_argsort_index_dtype_with_x64():
    with x64():
        agree(lambda ox: ox.jnp.argsort(ROW, dtype="int32"))
        agree(lambda ox: ox.jnp.argsort(ROW))


@pytest.mark.parametrize("dtype", [None, "float16", "float32", "complex64"])
def test_cov_and_corrcoef_dtype(dtype):
    agree(lambda ox: ox.jnp.cov(OBS, dtype=dtype))
    agree(lambda ox: ox.jnp.cov(OBS, aweights=ROW[[0, 1, 2, 2]], dtype=dtype))
    # float16 rounds once per division here, once per fused expression in XLA
    agree(lambda ox: ox.jnp.corrcoef(OBS, dtype=dtype), rtol=1e-3)
    agree(lambda ox: ox.jnp.cov(I32, rowvar=False, dtype=dtype))


def test_corrcoef_refuses_an_integer_dtype():
    agree(lambda ox: ox.jnp.corrcoef(OBS, dtype="int32"))


@pytest.mark.parametrize("dtype", [None, "int8", "uint32"])
def test_ravel_multi_index_dtype(dtype):
    rows, cols = np.array([1, 0, 2], np.int32), np.array([2, 1, 0], np.int32)
    agree(lambda ox: ox.jnp.ravel_multi_index((rows, cols), (3, 4), dtype=dtype))
    agree(
        lambda ox: ox.jnp.ravel_multi_index(
            (rows, cols), (3, 4), mode="wrap", order="F", dtype=dtype
        )
    )


def test_ravel_multi_index_dtype_too_small_or_not_integer():
    small = np.array([1, 0], np.int8)
    agree(lambda ox: ox.jnp.ravel_multi_index((small, small), (20, 20)))
    agree(lambda ox: ox.jnp.ravel_multi_index((small, small), (20, 20), dtype="int8"))
    agree(lambda ox: ox.jnp.ravel_multi_index((small, small), (2, 2), dtype="float32"))
    agree(lambda ox: ox.jnp.ravel_multi_index((small, small), (2, 2)))


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_spread_takes_a_precomputed_mean(name):
    def spread(ox, **kw):
        return getattr(ox.jnp, name)(NANS, **kw)

    given = np.array([[2.0], [4.0]], np.float32)
    agree(lambda ox: spread(ox, axis=1, mean=given))
    agree(lambda ox: spread(ox, axis=1, keepdims=True, ddof=1, mean=given))
    agree(lambda ox: spread(ox, axis=0, mean=np.zeros((1, 3), np.float32)))
    agree(lambda ox: spread(ox, axis=1, mean=given, where=MASK))
    agree(lambda ox: ox.jit(lambda m: spread(ox, axis=1, mean=m))(given))


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nan_spread_takes_where(name):
    def spread(ox, **kw):
        return getattr(ox.jnp, name)(NANS, **kw)

    agree(lambda ox: spread(ox, where=MASK))
    agree(lambda ox: spread(ox, axis=1, ddof=1, where=MASK))
    agree(lambda ox: spread(ox, axis=0, keepdims=True, where=MASK[0]))


@pytest.mark.parametrize("method", [None, "sort", "compare_all"])
def test_digitize_method(method):
    x = np.array([0.5, 1.0, 1.5, 3.0, -2.0], np.float32)
    agree(lambda ox: ox.jnp.digitize(x, np.array([1.0, 2.0]), method=method))
    agree(lambda ox: ox.jnp.digitize(x, np.array([2.0, 1.0]), True, method=method))


def test_digitize_refuses_an_unknown_method():
    agree(lambda ox: ox.jnp.digitize(ROW, ROW, method="bisect"))
