"""conv_general_dilated (olympus/lax/convolution.py) against a direct NumPy
loop: strides, padding, dilations, feature groups, batch groups, layouts;
jit, gradients (both transposes, every grouping) and vmap."""

import functools

import numpy as np
import pytest

import olympus
from olympus import lax
from olympus.test_util import check_grads
from olympus.tracer.errors import OlympusTypeError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 4, 6, 5)).astype(np.float32)  # N C H W
W = RNG.normal(size=(3, 4, 3, 2)).astype(np.float32)  # O I kh kw


def _dilate(x, factors):
    """Inserts factor-1 zeros between entries along the trailing spatial axes."""
    for axis, r in zip((2, 3), factors):
        shape = list(x.shape)
        shape[axis] = (shape[axis] - 1) * r + 1
        out = np.zeros(shape, x.dtype)
        index = [slice(None)] * 4
        index[axis] = slice(None, None, r)
        out[tuple(index)] = x
        x = out
    return x


def reference(
    x,
    w,
    strides=(1, 1),
    pad=((0, 0), (0, 0)),
    rhs_dilation=(1, 1),
    groups=1,
    lhs_dilation=(1, 1),
    batch_groups=1,
):
    """Cross-correlation by explicit windows (NCHW, OIHW), in float64."""
    x = np.pad(_dilate(x.astype(np.float64), lhs_dilation), ((0, 0), (0, 0), *pad))
    w = _dilate(w.astype(np.float64), rhs_dilation)
    kh, kw = w.shape[2:]
    h = (x.shape[2] - kh) // strides[0] + 1
    wd = (x.shape[3] - kw) // strides[1] + 1
    n_out = x.shape[0] // batch_groups
    out = np.zeros((n_out, w.shape[0], h, wd))
    cin, cout = w.shape[1], w.shape[0] // (groups * batch_groups)
    for g in range(groups * batch_groups):
        f, b = g % groups, g // groups  # feature group f, batch group b
        xs = x[b * n_out : (b + 1) * n_out, f * cin : (f + 1) * cin]
        ws = w[g * cout : (g + 1) * cout]
        for i in range(h):
            for j in range(wd):
                patch = xs[
                    :,
                    :,
                    i * strides[0] : i * strides[0] + kh,
                    j * strides[1] : j * strides[1] + kw,
                ]
                out[:, g * cout : (g + 1) * cout, i, j] = np.einsum(
                    "nchw,ochw->no", patch, ws
                )
    return out


def test_values_against_loops():
    got = olympus.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"))(
        X, W
    )
    np.testing.assert_allclose(np.asarray(got), reference(X, W), atol=1e-5)
    got = lax.conv_general_dilated(X, W, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2))
    np.testing.assert_allclose(
        np.asarray(got), reference(X, W, (2, 1), ((1, 2), (0, 1)), (1, 2)), atol=1e-5
    )
    got = lax.conv_general_dilated(X, W, (1, 1), "SAME")
    assert got.shape == (2, 3, 6, 5)
    np.testing.assert_allclose(
        np.asarray(got), reference(X, W, pad=((1, 1), (0, 1))), atol=1e-5
    )
    got = lax.conv_general_dilated(X, W, (2, 1), ((0, 1), (1, 1)), lhs_dilation=(2, 1))
    want = reference(X, W, (2, 1), ((0, 1), (1, 1)), lhs_dilation=(2, 1))
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)


def test_feature_groups_and_layout():
    depthwise = RNG.normal(size=(4, 1, 3, 3)).astype(np.float32)
    got = lax.conv_general_dilated(X, depthwise, (1, 1), "VALID", feature_group_count=4)
    np.testing.assert_allclose(
        np.asarray(got), reference(X, depthwise, groups=4), atol=1e-5
    )
    nhwc, hwio = X.transpose(0, 2, 3, 1), W.transpose(2, 3, 1, 0)
    dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    got = lax.conv_general_dilated(nhwc, hwio, (1, 1), "VALID", dimension_numbers=dn)
    np.testing.assert_allclose(
        np.asarray(got), reference(X, W).transpose(0, 2, 3, 1), atol=1e-5
    )


def test_batch_groups_values():
    x = RNG.normal(size=(4, 3, 5, 6)).astype(np.float32)  # batch 4 = 2 groups of 2
    w = RNG.normal(size=(4, 3, 2, 3)).astype(
        np.float32
    )  # 4 out features = 2 groups of 2
    conv = lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2), ((1, 0), (0, 2)), rhs_dilation=(2, 1), batch_group_count=2
    )
    want = reference(x, w, (1, 2), ((1, 0), (0, 2)), (2, 1), batch_groups=2)
    assert conv(x, w).shape == (2, 4, 4, 3)
    np.testing.assert_allclose(np.asarray(conv(x, w)), want, atol=1e-4)
    np.testing.assert_allclose(np.asarray(olympus.jit(conv)(x, w)), want, atol=1e-4)
    nhwc, hwio = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    got = lax.conv_general_dilated(
        nhwc, hwio, (1, 1), "VALID", dimension_numbers=dn, batch_group_count=4
    )
    np.testing.assert_allclose(
        np.asarray(got),
        reference(x, w, batch_groups=4).transpose(0, 2, 3, 1),
        atol=1e-4,
    )


def test_bad_groups_name_the_primitive_and_shapes():
    with pytest.raises(
        OlympusTypeError, match=r"conv_general_dilated.*batch_group_count 3"
    ):
        lax.conv_general_dilated(X, W, (1, 1), "VALID", batch_group_count=3)
    with pytest.raises(OlympusTypeError, match="at least one of them 1"):
        lax.conv_general_dilated(
            X, W[:2, :2], (1, 1), "VALID", feature_group_count=2, batch_group_count=2
        )
    with pytest.raises(OlympusTypeError, match="feature_group_count 3"):
        lax.conv_general_dilated(X, W, (1, 1), "VALID", feature_group_count=3)


def test_gradients_through_both_transposes():
    check_grads(
        lambda x, w: lax.conv_general_dilated(
            x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2)
        ),
        (X, W),
        order=1,
    )
    check_grads(
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 2), ((0, 0), (1, 0)), lhs_dilation=(2, 1)
        ),
        (X[:1], W[:2]),
        order=1,
    )


# (input shape, kernel shape, params): every grouping with strides, padding and dilations
GROUPED_CASES = {
    "depthwise, strided, rhs-dilated": (
        (2, 4, 7, 6),
        (4, 1, 2, 3),
        {
            "window_strides": (2, 1),
            "padding": ((1, 0), (0, 2)),
            "rhs_dilation": (2, 1),
            "feature_group_count": 4,
        },
    ),
    "depthwise x2 multiplier, lhs-dilated": (
        (1, 3, 4, 5),
        (6, 1, 3, 2),
        {
            "window_strides": (1, 2),
            "padding": ((1, 1), (1, 0)),
            "lhs_dilation": (2, 1),
            "feature_group_count": 3,
        },
    ),
    "2 feature groups, both dilations": (
        (2, 4, 5, 5),
        (6, 2, 2, 2),
        {
            "window_strides": (2, 2),
            "padding": ((0, 1), (2, 1)),
            "lhs_dilation": (1, 2),
            "rhs_dilation": (2, 1),
            "feature_group_count": 2,
        },
    ),
    "2 batch groups, strided, padded": (
        (4, 3, 6, 5),
        (4, 3, 3, 2),
        {
            "window_strides": (2, 1),
            "padding": ((1, 2), (0, 1)),
            "rhs_dilation": (1, 2),
            "batch_group_count": 2,
        },
    ),
    "batch groups = batch, lhs-dilated": (
        (3, 2, 4, 4),
        (3, 2, 2, 3),
        {
            "window_strides": (1, 2),
            "padding": ((0, 1), (1, 1)),
            "lhs_dilation": (2, 2),
            "batch_group_count": 3,
        },
    ),
}


def _grouped_conv(params):
    return lambda x, w: lax.conv_general_dilated(x, w, **params)


SECOND_ORDER = ("2 feature groups, both dilations", "2 batch groups, strided, padded")


@pytest.mark.parametrize("name", list(GROUPED_CASES))
def test_grouped_gradients(x64, name):
    """Both transposes (input and kernel), fwd and rev: the kernel's gradient
    of a feature-grouped conv is a batch-grouped conv and the input's gradient
    of a batch-grouped conv is feature-grouped; second order (transposes of
    transposes) for one case of each kind, to keep the test fast."""
    x_shape, w_shape, params = GROUPED_CASES[name]
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=x_shape), rng.normal(size=w_shape)
    order = 2 if name in SECOND_ORDER else 1
    check_grads(_grouped_conv(params), (x, w), order=order, modes=("fwd", "rev"))


def test_grouped_gradients_in_scrambled_layouts(x64):
    """The regrouping transposes and reshapes follow the dimension numbers:
    every role on a different axis of input, kernel and output."""
    dn = lax.ConvDimensionNumbers((3, 0, 2, 1), (1, 3, 0, 2), (2, 0, 3, 1))
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 6, 5, 4))  # C, W, H, N
    for kernel_shape, groups in [
        ((2, 4, 3, 3), {"batch_group_count": 2}),
        ((2, 6, 3, 1), {"feature_group_count": 3}),
    ]:
        conv = functools.partial(
            lax.conv_general_dilated,
            window_strides=(2, 1),
            padding=((1, 0), (0, 2)),
            lhs_dilation=(1, 2),
            dimension_numbers=dn,
            **groups,
        )
        check_grads(conv, (x, rng.normal(size=kernel_shape)), order=1, modes=("rev",))


def test_grouped_kernel_gradient_against_numpy(x64):
    """vjp's kernel cotangent equals the NumPy derivative: ct_w[o, i, k] sums
    x[n, g(o) * I + i, window k] * ct[n, o] over batch and output positions."""
    x_shape, w_shape, params = GROUPED_CASES["2 feature groups, both dilations"]
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=x_shape), rng.normal(size=w_shape)
    out, vjp = olympus.vjp(lambda w: _grouped_conv(params)(x, w), w)
    ct = rng.normal(size=out.shape)
    want = np.zeros(w.shape)
    for index in np.ndindex(*w.shape):  # <ct, conv(x, e_index)>: conv is linear in w
        basis = np.zeros(w.shape)
        basis[index] = 1.0
        want[index] = np.sum(
            ct
            * reference(
                x,
                basis,
                params["window_strides"],
                params["padding"],
                params["rhs_dilation"],
                params["feature_group_count"],
                params["lhs_dilation"],
            )
        )
    np.testing.assert_allclose(np.asarray(vjp(ct)[0]), want, atol=1e-10)


@pytest.mark.parametrize(
    "name",
    [
        "depthwise, strided, rhs-dilated",
        "2 feature groups, both dilations",
        "2 batch groups, strided, padded",
    ],
)
def test_grouped_vmap_matches_stacking(name):
    x_shape, w_shape, params = GROUPED_CASES[name]
    rng = np.random.default_rng(3)
    xs = rng.normal(size=(2, *x_shape)).astype(np.float32)
    ws = rng.normal(size=(2, *w_shape)).astype(np.float32)
    conv = olympus.jit(_grouped_conv(params))  # one compile per batching
    for in_axes, per_example in [
        ((0, None), lambda i: conv(xs[i], ws[0])),
        ((None, 0), lambda i: conv(xs[0], ws[i])),
        ((0, 0), lambda i: conv(xs[i], ws[i])),
    ]:
        args = (xs if in_axes[0] == 0 else xs[0], ws if in_axes[1] == 0 else ws[0])
        got = olympus.vmap(conv, in_axes=in_axes)(*args)
        want = np.stack([np.asarray(per_example(i)) for i in range(2)])
        np.testing.assert_allclose(
            np.asarray(got), want, atol=1e-4, err_msg=str(in_axes)
        )


def test_vmap_matches_stacking():
    xs = RNG.normal(size=(2, 1, 4, 5, 4)).astype(np.float32)
    ws = RNG.normal(size=(2, 3, 4, 2, 2)).astype(np.float32)
    conv = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID")
    got = olympus.vmap(conv, in_axes=(0, None))(xs, W[:, :, :2, :2])
    want = np.stack([reference(x, W[:, :, :2, :2]) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    got = olympus.vmap(conv)(xs, ws)
    np.testing.assert_allclose(
        np.asarray(got), np.stack([reference(x, w) for x, w in zip(xs, ws)]), atol=1e-5
    )
    # batch axes elsewhere than 0, and an NHWC layout
    dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    nhwc = olympus.jit(
        lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "VALID", dimension_numbers=dn, feature_group_count=2
        )
    )
    xs_nhwc = RNG.normal(size=(1, 5, 3, 3, 4)).astype(np.float32)  # [N, H, vmap, W, C]
    ws_hwio = RNG.normal(size=(2, 2, 2, 6, 3)).astype(
        np.float32
    )  # [kh, kw, I, O, vmap]
    got = olympus.vmap(nhwc, in_axes=(2, 4))(xs_nhwc, ws_hwio)
    want = np.stack(
        [np.asarray(nhwc(xs_nhwc[:, :, i], ws_hwio[..., i])) for i in range(3)]
    )
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)


def _squared_norm(conv):
    return lambda x, w: (conv(x, w) ** 2).sum()


def test_grouped_gradients_match_jax(x64):
    """Optional oracle: the same grouped convolutions' gradients under JAX."""
    jax = pytest.importorskip("jax")
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        for name in (
            "depthwise x2 multiplier, lhs-dilated",
            "2 batch groups, strided, padded",
        ):
            x_shape, w_shape, params = GROUPED_CASES[name]
            rng = np.random.default_rng(4)
            x, w = rng.normal(size=x_shape), rng.normal(size=w_shape)
            got = olympus.jit(
                olympus.grad(_squared_norm(_grouped_conv(params)), argnums=(0, 1))
            )(x, w)
            jax_conv = functools.partial(jax.lax.conv_general_dilated, **params)
            want = jax.jit(jax.grad(_squared_norm(jax_conv), argnums=(0, 1)))(x, w)
            for g, e in zip(got, want):
                np.testing.assert_allclose(
                    np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-9, err_msg=name
                )
    finally:
        jax.config.update("jax_enable_x64", previous)


def test_numpy_convolve_and_correlate():
    import olympus.numpy as jnp

    for n, m in [(6, 3), (3, 5)]:
        a, v = X.ravel()[:n], W.ravel()[:m]
        for mode in ("valid", "same", "full"):
            np.testing.assert_allclose(
                np.asarray(jnp.convolve(a, v, mode)), np.convolve(a, v, mode), atol=1e-5
            )
            np.testing.assert_allclose(
                np.asarray(jnp.correlate(a, v, mode)),
                np.correlate(a, v, mode),
                atol=1e-5,
            )
