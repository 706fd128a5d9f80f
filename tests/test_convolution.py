"""conv_general_dilated (olympus/lax/convolution.py) against a direct NumPy
loop: strides, padding, dilations, feature groups, layouts; jit, gradients
(both transposes) and vmap."""

import numpy as np

import olympus
from olympus import lax
from olympus.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 4, 6, 5)).astype(np.float32)   # N C H W
W = RNG.normal(size=(3, 4, 3, 2)).astype(np.float32)   # O I kh kw


def reference(x, w, strides=(1, 1), pad=((0, 0), (0, 0)), rhs_dilation=(1, 1), groups=1):
    """Cross-correlation by explicit windows (NCHW, OIHW)."""
    x = np.pad(x, ((0, 0), (0, 0), *pad))
    kh = (w.shape[2] - 1) * rhs_dilation[0] + 1
    kw = (w.shape[3] - 1) * rhs_dilation[1] + 1
    h = (x.shape[2] - kh) // strides[0] + 1
    wd = (x.shape[3] - kw) // strides[1] + 1
    out = np.zeros((x.shape[0], w.shape[0], h, wd), np.float32)
    cin, cout = w.shape[1], w.shape[0] // groups
    for g in range(groups):
        xs, ws = x[:, g * cin:(g + 1) * cin], w[g * cout:(g + 1) * cout]
        for i in range(h):
            for j in range(wd):
                patch = xs[:, :, i * strides[0]:i * strides[0] + kh:rhs_dilation[0],
                           j * strides[1]:j * strides[1] + kw:rhs_dilation[1]]
                out[:, g * cout:(g + 1) * cout, i, j] = np.einsum("nchw,ochw->no", patch, ws)
    return out


def test_values_against_loops():
    got = olympus.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"))(X, W)
    np.testing.assert_allclose(np.asarray(got), reference(X, W), atol=1e-5)
    got = lax.conv_general_dilated(X, W, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2))
    np.testing.assert_allclose(np.asarray(got), reference(X, W, (2, 1), ((1, 2), (0, 1)), (1, 2)),
                               atol=1e-5)
    got = lax.conv_general_dilated(X, W, (1, 1), "SAME")
    assert got.shape == (2, 3, 6, 5)
    np.testing.assert_allclose(np.asarray(got), reference(X, W, pad=((1, 1), (0, 1))), atol=1e-5)


def test_feature_groups_and_layout():
    depthwise = RNG.normal(size=(4, 1, 3, 3)).astype(np.float32)
    got = lax.conv_general_dilated(X, depthwise, (1, 1), "VALID", feature_group_count=4)
    np.testing.assert_allclose(np.asarray(got), reference(X, depthwise, groups=4), atol=1e-5)
    nhwc, hwio = X.transpose(0, 2, 3, 1), W.transpose(2, 3, 1, 0)
    dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    got = lax.conv_general_dilated(nhwc, hwio, (1, 1), "VALID", dimension_numbers=dn)
    np.testing.assert_allclose(np.asarray(got), reference(X, W).transpose(0, 2, 3, 1), atol=1e-5)


def test_gradients_through_both_transposes():
    check_grads(lambda x, w: lax.conv_general_dilated(
        x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2)), (X, W), order=1)
    check_grads(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2), ((0, 0), (1, 0)), lhs_dilation=(2, 1)), (X[:1], W[:2]), order=1)
    # feature groups: the input's gradient (the kernel's needs batch groups, not built)
    grouped = RNG.normal(size=(6, 2, 3, 2)).astype(np.float32)
    check_grads(lambda x: lax.conv_general_dilated(
        x, grouped, (2, 1), ((1, 0), (0, 1)), feature_group_count=2), (X,), order=1)


def test_vmap_matches_stacking():
    xs = RNG.normal(size=(2, 1, 4, 5, 4)).astype(np.float32)
    ws = RNG.normal(size=(2, 3, 4, 2, 2)).astype(np.float32)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID")  # noqa: E731
    got = olympus.vmap(conv, in_axes=(0, None))(xs, W[:, :, :2, :2])
    want = np.stack([reference(x, W[:, :, :2, :2]) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    got = olympus.vmap(conv)(xs, ws)
    np.testing.assert_allclose(np.asarray(got), np.stack([reference(x, w) for x, w in zip(xs, ws)]),
                               atol=1e-5)


def test_numpy_convolve_and_correlate():
    import olympus.numpy as jnp

    for n, m in [(6, 3), (3, 5)]:
        a, v = X.ravel()[:n], W.ravel()[:m]
        for mode in ("valid", "same", "full"):
            np.testing.assert_allclose(np.asarray(jnp.convolve(a, v, mode)),
                                       np.convolve(a, v, mode), atol=1e-5)
            np.testing.assert_allclose(np.asarray(jnp.correlate(a, v, mode)),
                                       np.correlate(a, v, mode), atol=1e-5)
