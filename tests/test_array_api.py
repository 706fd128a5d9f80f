"""olympus.numpy as an Array API namespace: version, inspection, Array
attributes, the linalg extension's names, DLPack both ways with NumPy."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp


def test_namespace_and_version():
    x = jnp.arange(6.0).reshape(2, 3)
    assert jnp.__array_api_version__ == "2023.12"
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2023.12") is jnp
    with pytest.raises(ValueError, match="2023.12"):
        x.__array_namespace__(api_version="2099.12")
    # Traced arrays answer the same, so generic library code works under jit.
    out = olympus.jit(lambda v: v.__array_namespace__().sum(v))(x)
    assert float(out) == 15.0


def test_namespace_info():
    info = jnp.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert info.default_device() in info.devices()
    defaults = info.default_dtypes()
    assert defaults["real floating"] == np.float32
    assert defaults["indexing"] == np.int32
    assert set(info.dtypes(kind="integral")) == {
        "int8",
        "int16",
        "int32",
        "uint8",
        "uint16",
        "uint32",
    }
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64"}
    assert "float32" in info.dtypes()


def test_array_attributes():
    x = jnp.arange(6.0).reshape(2, 3)
    assert x.device == jnp.__array_namespace_info__().default_device()
    moved = x.to_device(x.device)
    np.testing.assert_array_equal(moved, x)
    np.testing.assert_array_equal(x.mT, np.arange(6.0).reshape(2, 3).T)
    assert x.__dlpack_device__() == (1, 0)


def test_linalg_extension_names():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3, 3)).astype(np.float32)
    la = jnp.linalg
    np.testing.assert_allclose(la.matmul(a, b), a @ b, rtol=1e-5)
    np.testing.assert_allclose(la.tensordot(a[0], b[0], axes=1), a[0] @ b[0], rtol=1e-5)
    np.testing.assert_allclose(la.vecdot(a, b, axis=1), (a * b).sum(1), rtol=1e-5)
    np.testing.assert_allclose(
        la.cross(a, b, axis=-1), np.cross(a, b), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        la.svdvals(a), np.linalg.svd(a, compute_uv=False), rtol=1e-4
    )
    np.testing.assert_allclose(la.matrix_transpose(a), np.swapaxes(a, -1, -2))
    np.testing.assert_allclose(
        la.matrix_norm(a), np.linalg.norm(a, axis=(-2, -1)), rtol=1e-5
    )
    np.testing.assert_allclose(la.vector_norm(a), np.linalg.norm(a.ravel()), rtol=1e-5)
    with pytest.raises(ValueError, match="3-vectors"):
        la.cross(a[..., :2], b[..., :2])
    for name in [
        "cholesky",
        "det",
        "diagonal",
        "eigh",
        "eigvalsh",
        "inv",
        "matrix_power",
        "matrix_rank",
        "outer",
        "pinv",
        "qr",
        "slogdet",
        "solve",
        "svd",
        "trace",
    ]:
        assert callable(getattr(la, name)), name


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint16", "int32", "float16", "float32", "complex64"]
)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)])
def test_dlpack_both_ways(dtype, shape):
    value = (np.arange(int(np.prod(shape))) % 3).reshape(shape).astype(dtype)
    x = jnp.from_dlpack(value)
    assert x.shape == shape and x.dtype == value.dtype
    np.testing.assert_array_equal(np.asarray(x), value)
    back = np.from_dlpack(x)
    assert back.shape == shape and back.dtype == value.dtype
    np.testing.assert_array_equal(back, value)
    np.testing.assert_array_equal(np.from_dlpack(x, copy=True), value)


def test_from_dlpack_computes_and_canonicalizes():
    x = jnp.from_dlpack(np.arange(4.0))  # float64 without x64: converted
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x * 2, np.arange(4.0) * 2)
    y = jnp.arange(3)
    assert jnp.from_dlpack(y) is y


def test_dlpack_refusals():
    x = jnp.arange(3.0)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2, 3])


# ---- the fft extension ------------------------------------------------------------
_RNG = np.random.default_rng(0)
_REAL = _RNG.standard_normal((4, 6)).astype(np.float32)
_CPLX = (_REAL + 1j * _RNG.standard_normal((4, 6))).astype(np.complex64)


@pytest.mark.parametrize(
    "name,arg,kw",
    [
        ("fft", _CPLX, {}),
        ("ifft", _CPLX, {}),
        ("rfft", _REAL, {}),
        ("irfft", _CPLX, {}),
        ("fftn", _CPLX, {}),
        ("ifftn", _CPLX, {}),
        ("rfftn", _REAL, {}),
        ("irfftn", _CPLX, {}),
        ("hfft", _CPLX, {}),
        ("ihfft", _REAL, {}),
        ("fft", _REAL, {"n": 9, "norm": "ortho"}),
        ("irfft", _CPLX, {"n": 7, "axis": 0, "norm": "forward"}),
        ("rfftn", _REAL, {"s": (3, 5), "norm": "ortho"}),
        ("fft2", _CPLX, {}),
    ],
)
def test_fft_matches_numpy(name, arg, kw):
    got = getattr(jnp.fft, name)(arg, **kw)
    want = getattr(np.fft, name)(arg, **kw)
    assert got.shape == want.shape
    assert got.dtype == (np.complex64 if np.iscomplexobj(want) else np.float32)
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)


def test_fft_helpers():
    np.testing.assert_allclose(
        jnp.fft.fftfreq(7, 0.5), np.fft.fftfreq(7, 0.5), rtol=1e-6
    )
    np.testing.assert_allclose(jnp.fft.rfftfreq(8), np.fft.rfftfreq(8), rtol=1e-6)
    np.testing.assert_array_equal(jnp.fft.fftshift(_REAL), np.fft.fftshift(_REAL))
    np.testing.assert_array_equal(
        jnp.fft.ifftshift(_REAL, axes=1), np.fft.ifftshift(_REAL, axes=1)
    )


@pytest.mark.parametrize(
    "name,arg",
    [("fft", _CPLX), ("ifft", _CPLX), ("rfft", _REAL), ("irfft", _CPLX[:, :4])],
)
def test_fft_grads_jit_vmap(name, arg):
    from olympus.test_util import check_grads

    fn = getattr(jnp.fft, name)
    check_grads(fn, (arg,), order=2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(olympus.jit(fn)(arg), fn(arg), atol=1e-5)
    np.testing.assert_allclose(olympus.vmap(fn)(arg), fn(arg), atol=1e-5)


@pytest.mark.parametrize(
    "kind,arg,lengths",
    [
        ("FFT", _CPLX, (6,)),
        ("IFFT", _CPLX, (4, 6)),
        ("RFFT", _REAL, (6,)),
        ("IRFFT", _CPLX[:, :4], (6,)),
    ],
)
def test_fft_primitive_reference_rule(kind, arg, lengths):
    from olympus.backends.reference.interpreter import evaluate

    closed = olympus.make_olympuspr(lambda x: olympus.lax.fft(x, kind, lengths))(arg)
    assert "fft" in str(closed)
    (ref,) = evaluate(closed, arg)
    np.testing.assert_allclose(ref, olympus.lax.fft(arg, kind, lengths), atol=1e-4)


def test_creation_functions_take_device():
    device = jnp.__array_namespace_info__().default_device()
    for out in [
        jnp.zeros(3, device=device),
        jnp.arange(3, device=device),
        jnp.full((2,), 1.0, device=device),
        jnp.eye(2, device=device),
        jnp.asarray([1, 2], device=device),
        jnp.fft.fftfreq(4, device=device),
        jnp.ones_like(jnp.zeros(2), device=device),
    ]:
        assert out.device == device


_X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize(
    "idx",
    [
        True,
        False,
        np.array(True),
        np.array(False),
        (Ellipsis, np.array(True)),
        (0, True),
        (True, [0, 1]),
        (np.array([True, False]), True),
        (None, False, 1),
        (False, Ellipsis, True),
    ],
    ids=repr,
)
def test_zero_d_boolean_index_matches_numpy(idx):
    """A 0-d boolean index adds an axis of length 1 (True) or 0 (False), as in
    NumPy (the conformance suite's test_getitem_masking draws them)."""
    want = _X[idx]
    for got in (jnp.asarray(_X)[idx], olympus.jit(lambda a: a[idx])(_X)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_empty_index_into_empty_axis_matches_numpy():
    for x, idx in [
        (np.zeros(0, np.bool_), np.zeros(0, np.bool_)),
        (np.zeros((0, 3), np.float32), np.zeros(0, np.bool_)),
        (np.zeros((0, 3), np.float32), np.zeros(0, np.int32)),
        (np.zeros((2, 0), np.int32), (slice(None), np.zeros(0, np.int32))),
        (np.zeros(0, np.bool_), np.array(False)),
    ]:
        want, got = x[idx], jnp.asarray(x)[idx]
        assert got.shape == want.shape and got.dtype == want.dtype
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros(0)[np.array([1])]
    with pytest.raises(IndexError, match="concrete mask"):
        olympus.jit(lambda x, m: x[m])(_X, np.array(True))


def _assert_same_special_values(got, want):
    """Equal, with NaN where NumPy has NaN and the sign of every zero kept."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    for g, w in [(got.real, want.real), (got.imag, want.imag)]:
        np.testing.assert_allclose(g, w, rtol=1e-6)
        np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]))


_INF, _NAN = np.inf, np.nan


@pytest.mark.parametrize(
    "name,values",
    [
        ("sinh", [-0.0, 0.0, -_INF, _INF, 1.5]),
        ("arcsinh", [-0.0, 0.0, -_INF, -2.0]),
        ("arctanh", [-0.0, 2.0, -1.0, 0.5]),
        ("arcsin", [-0.0, 1.5, -0.5]),
        ("arctan", [-0.0, _INF, -_INF]),
        ("arccosh", [-_INF, 0.5, 1.0, _INF]),
        ("cosh", [-0.0, -_INF]),
        ("arccos", [1.0, -1.0, 2.0]),
    ],
)
def test_real_hyperbolic_and_inverse_special_values_match_numpy(name, values):
    """Signed zeros, infinities and out-of-domain NaN as NumPy (C99): the
    conformance suite's test_special_cases (sinh(-0) was +0 before)."""
    x = np.array(values, np.float32)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    _assert_same_special_values(getattr(jnp, name)(x), want)


@pytest.mark.parametrize(
    "name,value",
    [
        ("cosh", complex(_INF, 0.0)),
        ("cosh", complex(_NAN, 0.0)),
        ("sinh", complex(_INF, 0.0)),
        ("sinh", complex(_NAN, 0.0)),
        ("arccos", complex(0.0, 0.0)),
        ("arccos", complex(_INF, _INF)),
        ("arccos", complex(-_INF, 1.0)),
        ("arccosh", complex(_INF, _INF)),
        ("arccosh", complex(_NAN, _INF)),
        ("arccosh", complex(1.0, _INF)),
        ("arcsinh", complex(_INF, _INF)),
        ("arcsinh", complex(_NAN, _INF)),
        ("arctanh", complex(1.0, 0.0)),
        ("arctanh", complex(_INF, _INF)),
        ("arctanh", complex(0.5, _INF)),
    ],
    ids=repr,
)
def test_complex_hyperbolic_and_inverse_special_values_match_numpy(name, value):
    """C99 Annex G values at infinities, NaN and zeros (the formulas olympus
    used before gave NaN + NaN j for most of these)."""
    x = np.array([value], np.complex64)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    _assert_same_special_values(getattr(jnp, name)(x), want)
    _assert_same_special_values(olympus.jit(getattr(jnp, name))(x), want)
