"""olympus.example_libraries: optimizers against hand-written NumPy steps, stax
layers' shapes and values against NumPy, training, and (when installed) JAX."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import random
from olympus.example_libraries import optimizers, stax
from olympus.test_util import assert_allclose

ROOT = Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(0)
X0 = {"w": RNG.standard_normal((3, 2)).astype(np.float32), "b": np.float32(0.5)}
G1 = {"w": RNG.standard_normal((3, 2)).astype(np.float32), "b": np.float32(-1.5)}
G2 = {"w": RNG.standard_normal((3, 2)).astype(np.float32), "b": np.float32(0.25)}


# ---- optimizers: two steps against NumPy ------------------------------------------
def _sgd(x, grads, lr=0.1):
    for g in grads:
        x = x - lr * g
    return x


def _momentum(x, grads, lr=0.1, mass=0.9, nesterov=False):
    v = np.zeros_like(x)
    for g in grads:
        v = mass * v + g
        x = x - lr * (mass * v + g if nesterov else v)
    return x


def _adagrad(x, grads, lr=0.1, momentum=0.9):
    s, m = np.zeros_like(x), np.zeros_like(x)
    for g in grads:
        s = s + g**2
        m = (1 - momentum) * g / np.sqrt(s) + momentum * m
        x = x - lr * m
    return x


def _rmsprop(x, grads, lr=0.1, gamma=0.9, eps=1e-8):
    r = np.zeros_like(x)
    for g in grads:
        r = gamma * r + (1 - gamma) * g**2
        x = x - lr * g / np.sqrt(r + eps)
    return x


def _rmsprop_momentum(x, grads, lr=0.1, gamma=0.9, eps=1e-8, momentum=0.9):
    r, m = np.zeros_like(x), np.zeros_like(x)
    for g in grads:
        r = gamma * r + (1 - gamma) * g**2
        m = momentum * m + lr * g / np.sqrt(r + eps)
        x = x - m
    return x


def _adam(x, grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    m, v = np.zeros_like(x), np.zeros_like(x)
    for i, g in enumerate(grads):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat, v_hat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
        x = x - lr * m_hat / (np.sqrt(v_hat) + eps)
    return x


def _adamax(x, grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    m, u = np.zeros_like(x), np.zeros_like(x)
    for i, g in enumerate(grads):
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g))
        x = x - lr / (1 - b1 ** (i + 1)) * m / (u + eps)
    return x


def _sm3(x, grads, lr=0.1, momentum=0.9):
    x = np.atleast_1d(x)
    accs = [np.zeros(n) for n in x.shape]
    m = np.zeros_like(x)
    for g in grads:
        g = np.atleast_1d(g)
        accum = np.full(x.shape, np.inf)
        for idx in np.ndindex(*x.shape):
            accum[idx] = min(accs[a][i] for a, i in enumerate(idx))
        accum = accum + g**2
        m = (1 - momentum) * g / np.sqrt(accum) + momentum * m
        x = x - lr * m
        accs = [
            accum.max(axis=tuple(d for d in range(x.ndim) if d != a))
            for a in range(x.ndim)
        ]
    return x


OPTIMIZERS = {
    "sgd": (optimizers.sgd(0.1), _sgd),
    "momentum": (optimizers.momentum(0.1, 0.9), _momentum),
    "nesterov": (
        optimizers.nesterov(0.1, 0.9),
        lambda x, g: _momentum(x, g, nesterov=True),
    ),
    "adagrad": (optimizers.adagrad(0.1), _adagrad),
    "rmsprop": (optimizers.rmsprop(0.1), _rmsprop),
    "rmsprop_momentum": (optimizers.rmsprop_momentum(0.1), _rmsprop_momentum),
    "adam": (optimizers.adam(0.1), _adam),
    "adamax": (optimizers.adamax(0.1), _adamax),
    "sm3": (optimizers.sm3(0.1), _sm3),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_optimizer_steps_match_numpy(name, jit):
    (init_fun, update_fun, get_params), reference = OPTIMIZERS[name]
    update = olympus.jit(update_fun) if jit else update_fun
    state = init_fun(X0)
    for i, g in enumerate((G1, G2)):
        state = update(i, g, state)
    got = get_params(state)
    for key in ("w", "b"):
        want = reference(
            np.float64(X0[key]), [np.float64(G1[key]), np.float64(G2[key])]
        )
        assert np.shape(got[key]) == np.shape(X0[key])
        assert_allclose(
            got[key], np.reshape(want, np.shape(X0[key])), rtol=1e-5, atol=1e-6
        )


def test_optimizer_accepts_a_schedule():
    init_fun, update_fun, get_params = optimizers.sgd(lambda i: 0.1 * (i + 1))
    state = update_fun(2, {"x": np.float32(1.0)}, init_fun({"x": np.float32(0.0)}))
    assert_allclose(get_params(state)["x"], np.float32(-0.3))


def test_update_rejects_a_gradient_of_another_structure():
    init_fun, update_fun, _ = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match="structure"):
        update_fun(0, [np.float32(1.0)], init_fun({"x": np.float32(0.0)}))


def test_optimizer_state_is_a_pytree_of_arrays_only():
    state = optimizers.adam(0.1).init_fn(X0)
    leaves = olympus.tree_util.tree_leaves(state)
    assert len(leaves) == 6  # (x, m, v) for each of the two parameters
    rebuilt = olympus.tree_util.tree_map(lambda a: a, state)
    assert isinstance(rebuilt, optimizers.OptimizerState)


def test_pack_unpack_round_trip():
    init_fun, update_fun, get_params = optimizers.momentum(0.1, 0.9)
    state = update_fun(0, G1, init_fun(X0))
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    again = optimizers.pack_optimizer_state(marked)
    assert again.tree_def == state.tree_def
    next1 = get_params(update_fun(1, G2, state))
    next2 = get_params(update_fun(1, G2, again))
    for key in ("w", "b"):
        assert_allclose(next1[key], next2[key])


@pytest.mark.parametrize(
    "schedule, formula",
    [
        (optimizers.constant(0.5), lambda i: 0.5),
        (optimizers.exponential_decay(0.5, 10, 0.1), lambda i: 0.5 * 0.1 ** (i / 10)),
        (
            optimizers.inverse_time_decay(0.5, 10, 2.0),
            lambda i: 0.5 / (1 + 2.0 * i / 10),
        ),
        (
            optimizers.inverse_time_decay(0.5, 10, 2.0, staircase=True),
            lambda i: 0.5 / (1 + 2.0 * np.floor(i / 10)),
        ),
        (
            optimizers.polynomial_decay(0.5, 10, 0.1, power=2.0),
            lambda i: (0.5 - 0.1) * (1 - min(i, 10) / 10) ** 2 + 0.1,
        ),
        (
            optimizers.piecewise_constant([3, 7], [1.0, 0.5, 0.25]),
            lambda i: 1.0 if i <= 3 else 0.5 if i <= 7 else 0.25,
        ),
    ],
    ids=[
        "constant",
        "exponential",
        "inverse_time",
        "staircase",
        "polynomial",
        "piecewise",
    ],
)
def test_schedules(schedule, formula):
    for i in (0, 3, 4, 7, 8, 15):
        assert_allclose(np.float32(schedule(i)), np.float32(formula(i)), rtol=1e-6)
        assert_allclose(olympus.jit(schedule)(i), np.float32(formula(i)), rtol=1e-6)


def test_make_schedule_rejects_an_array():
    with pytest.raises(TypeError, match="step size"):
        optimizers.make_schedule(np.ones(3))


def test_l2_norm_and_clip_grads():
    tree = {"a": np.float32([3.0, 0.0]), "b": np.float32([[4.0]])}
    assert_allclose(optimizers.l2_norm(tree), np.float32(5.0))
    clipped = optimizers.clip_grads(tree, 1.0)
    assert_allclose(clipped["a"], np.float32([0.6, 0.0]), rtol=1e-6)
    assert_allclose(clipped["b"], np.float32([[0.8]]), rtol=1e-6)
    kept = optimizers.clip_grads(tree, 10.0)
    assert_allclose(kept["a"], tree["a"])


# ---- stax: shapes, values --------------------------------------------------------
KEY = random.PRNGKey(0)


def _init_apply(layer, shape, **kwargs):
    """Output shape from init_fun, outputs from apply_fun; the two must agree."""
    init_fun, apply_fun = layer
    out_shape, params = init_fun(KEY, shape)
    x = RNG.standard_normal(shape).astype(np.float32)
    y = apply_fun(params, x, **kwargs)
    assert tuple(out_shape) == tuple(y.shape)
    return x, params, np.asarray(y)


def _conv_nhwc(x, w, strides, pads):
    """A direct NHWC x HWIO cross-correlation in NumPy."""
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    (kh, kw, _, o), (sh, sw) = w.shape, strides
    oh, ow = (x.shape[1] - kh) // sh + 1, (x.shape[2] - kw) // sw + 1
    y = np.zeros((x.shape[0], oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * sh : i * sh + kh, j * sw : j * sw + kw, :]
            y[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
    return y


def test_dense():
    x, (W, b), y = _init_apply(stax.Dense(5), (4, 3))
    assert W.shape == (3, 5) and b.shape == (5,)
    assert_allclose(y, x @ np.asarray(W) + np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "strides, padding, pads",
    [((1, 1), "VALID", [(0, 0), (0, 0)]), ((2, 1), "SAME", [(0, 1), (1, 1)])],
)
def test_conv(strides, padding, pads):
    layer = stax.Conv(4, (3, 3), strides=strides, padding=padding)
    x, (W, b), y = _init_apply(layer, (2, 6, 5, 3))
    assert W.shape == (3, 3, 3, 4) and b.shape == (1, 1, 1, 4)
    want = _conv_nhwc(x, np.asarray(W), strides, pads) + np.asarray(b)
    assert_allclose(y, want, rtol=1e-4, atol=1e-5)


def test_general_conv_in_nchw_layout():
    layer = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (2, 3), padding="SAME")
    x, (W, b), y = _init_apply(layer, (2, 3, 5, 6))
    w_hwio = np.transpose(np.asarray(W), (2, 3, 1, 0))
    want = _conv_nhwc(np.transpose(x, (0, 2, 3, 1)), w_hwio, (1, 1), [(0, 1), (1, 1)])
    assert_allclose(
        y, np.transpose(want, (0, 3, 1, 2)) + np.asarray(b), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("window, stride", [(3, 2), (2, 3)])
def test_conv1d_transpose_scatters_the_flipped_kernel(window, stride):
    layer = stax.Conv1DTranspose(2, (window,), strides=(stride,))
    x, (W, b), y = _init_apply(layer, (1, 4, 3))
    W = np.asarray(W)
    want = np.zeros((1, 4 * stride + max(window - stride, 0), 2))
    for i in range(4):
        for u in range(window):
            want[0, i * stride + u] += x[0, i] @ W[window - 1 - u]
    assert_allclose(y, want + np.asarray(b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_transpose_shapes(padding):
    _init_apply(
        stax.ConvTranspose(3, (3, 3), strides=(2, 2), padding=padding), (2, 4, 5, 2)
    )


def _pool_reference(x, window, stride, reduce):
    n, h, w, c = x.shape
    oh, ow = (h - window[0]) // stride[0] + 1, (w - window[1]) // stride[1] + 1
    y = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            patch = x[
                :,
                i * stride[0] : i * stride[0] + window[0],
                j * stride[1] : j * stride[1] + window[1],
            ]
            y[:, i, j] = reduce(patch, axis=(1, 2))
    return y


@pytest.mark.parametrize(
    "layer, reduce",
    [(stax.MaxPool, np.max), (stax.SumPool, np.sum), (stax.AvgPool, np.mean)],
    ids=["max", "sum", "avg"],
)
def test_pooling(layer, reduce):
    x, _, y = _init_apply(layer((2, 3), strides=(2, 1)), (2, 5, 6, 3))
    assert_allclose(y, _pool_reference(x, (2, 3), (2, 1), reduce), rtol=1e-5, atol=1e-6)


def test_avg_pool_same_padding_counts_only_real_entries():
    _, apply_fun = stax.AvgPool((2, 2), padding="SAME")
    y = apply_fun((), jnp.ones((1, 3, 3, 1)))
    assert_allclose(y, np.ones((1, 3, 3, 1), np.float32))


def test_pooling_in_nchw_layout():
    x, _, y = _init_apply(stax.MaxPool((2, 2), spec="NCHW"), (2, 3, 4, 4))
    want = _pool_reference(np.transpose(x, (0, 2, 3, 1)), (2, 2), (1, 1), np.max)
    assert_allclose(y, np.transpose(want, (0, 3, 1, 2)))


def test_batch_norm():
    x, (beta, gamma), y = _init_apply(stax.BatchNorm(), (4, 3, 3, 2))
    assert beta.shape == gamma.shape == (2,)
    mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)


def test_batch_norm_scales_and_shifts():
    init_fun, apply_fun = stax.BatchNorm(axis=0)
    _, _ = init_fun(KEY, (5, 3))
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    beta, gamma = np.float32([1, 2, 3]), np.float32([2, 2, 0.5])
    y = apply_fun((beta, gamma), x)
    z = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    assert_allclose(y, z * gamma + beta, rtol=1e-4, atol=1e-5)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _log_softmax(x):
    return (
        x
        - x.max(-1, keepdims=True)
        - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))
    )


@pytest.mark.parametrize(
    "layer, reference",
    [
        (stax.Relu, lambda x: np.maximum(x, 0)),
        (stax.Tanh, np.tanh),
        (stax.Exp, np.exp),
        (stax.Sigmoid, _sigmoid),
        (stax.Elu, lambda x: np.where(x > 0, x, np.expm1(x))),
        (stax.LeakyRelu, lambda x: np.where(x >= 0, x, 0.01 * x)),
        (stax.Softplus, lambda x: np.log1p(np.exp(x))),
        (stax.LogSoftmax, _log_softmax),
        (stax.Softmax, lambda x: np.exp(_log_softmax(x))),
        (
            stax.Gelu,
            lambda x: (
                0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
            ),
        ),
        (stax.Identity, lambda x: x),
        (stax.Flatten, lambda x: x.reshape(x.shape[0], -1)),
    ],
    ids=[
        "Relu",
        "Tanh",
        "Exp",
        "Sigmoid",
        "Elu",
        "LeakyRelu",
        "Softplus",
        "LogSoftmax",
        "Softmax",
        "Gelu",
        "Identity",
        "Flatten",
    ],
)
def test_parameter_free_layers(layer, reference):
    x, params, y = _init_apply(layer, (3, 2, 4))
    assert params == ()
    assert_allclose(y, reference(x), rtol=1e-5, atol=1e-6)


def test_selu_shape():
    _init_apply(stax.Selu, (3, 4))


def test_fan_out_parallel_fan_in():
    model = stax.serial(
        stax.FanOut(2),
        stax.parallel(stax.Dense(3), stax.Identity),
        stax.FanInConcat(),
    )
    x, params, y = _init_apply(model, (4, 2))
    W, b = params[1][0]
    assert_allclose(
        y,
        np.concatenate([x @ np.asarray(W) + np.asarray(b), x], -1),
        rtol=1e-5,
        atol=1e-6,
    )
    residual = stax.serial(
        stax.FanOut(2), stax.parallel(stax.Tanh, stax.Identity), stax.FanInSum
    )
    x, _, y = _init_apply(residual, (4, 2))
    assert_allclose(y, np.tanh(x) + x, rtol=1e-6)


def test_init_with_an_unknown_batch_size():
    init_fun, apply_fun = stax.serial(
        stax.Conv(2, (3, 3), padding="SAME"),
        stax.Relu,
        stax.MaxPool((2, 2), (2, 2)),
        stax.Flatten,
        stax.Dense(3),
    )
    out_shape, params = init_fun(KEY, (-1, 6, 6, 1))
    assert out_shape == (-1, 3)
    assert apply_fun(params, jnp.ones((5, 6, 6, 1))).shape == (5, 3)


def test_dropout():
    _, apply_fun = stax.Dropout(0.5)
    x = jnp.ones((100, 10))
    y = np.asarray(apply_fun((), x, rng=KEY))
    assert set(np.unique(y)) <= {0.0, 2.0} and 300 < (y == 2.0).sum() < 700
    with pytest.raises(ValueError, match="rng"):
        apply_fun((), x)
    _, test_apply = stax.Dropout(0.5, mode="test")
    assert_allclose(test_apply((), x, rng=KEY), np.ones((100, 10), np.float32))


def test_shape_dependent():
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    _init_apply(layer, (3, 4))


def test_serial_splits_rng_among_layers():
    _, apply_fun = stax.serial(stax.Dropout(0.5), stax.Dropout(0.5))
    y = np.asarray(apply_fun([(), ()], jnp.ones((50, 50)), rng=KEY))
    assert set(np.unique(y)) <= {0.0, 4.0}


# ---- training and transformations -------------------------------------------------
def test_adam_trains_a_small_regression():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = (x @ np.float32([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
    init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Tanh, stax.Dense(1))
    _, params = init_fun(KEY, (-1, 3))
    opt_init, opt_update, get_params = optimizers.adam(0.02)

    def loss(params):
        return jnp.mean((apply_fun(params, x) - y) ** 2)

    @olympus.jit
    def step(i, state):
        return opt_update(i, olympus.grad(loss)(get_params(state)), state)

    state = opt_init(params)
    first = float(loss(params))
    for i in range(150):
        state = step(i, state)
    last = float(loss(get_params(state)))
    assert last < 0.1 * first, (first, last)


def test_jit_and_grad_through_a_convnet():
    init_fun, apply_fun = stax.serial(
        stax.Conv(3, (3, 3), padding="SAME"),
        stax.BatchNorm(),
        stax.Relu,
        stax.AvgPool((2, 2), (2, 2)),
        stax.Flatten,
        stax.Dense(2),
        stax.LogSoftmax,
    )
    _, params = init_fun(KEY, (-1, 4, 4, 1))
    x = RNG.standard_normal((3, 4, 4, 1)).astype(np.float32)

    def loss(params):
        return -jnp.mean(apply_fun(params, x)[:, 0])

    assert_allclose(
        olympus.jit(apply_fun)(params, x), apply_fun(params, x), rtol=1e-5, atol=1e-6
    )
    grads = olympus.jit(olympus.grad(loss))(params)
    eager = olympus.grad(loss)(params)
    for g, e in zip(
        olympus.tree_util.tree_leaves(grads), olympus.tree_util.tree_leaves(eager)
    ):
        assert g.shape == e.shape
        assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    # A finite difference along one kernel entry agrees with the gradient.
    W = np.asarray(params[0][0])
    eps = 1e-2
    bumped = np.array(W)
    bumped[1, 1, 0, 0] += eps
    moved = [(jnp.asarray(bumped), params[0][1])] + list(params[1:])
    numeric = (float(loss(moved)) - float(loss(params))) / eps
    assert abs(numeric - float(eager[0][0][1, 1, 0, 0])) < 5e-2 * max(1.0, abs(numeric))


# ---- against JAX, when it is installed -------------------------------------------
def test_optimizers_match_jax():
    jax_optimizers = pytest.importorskip("jax.example_libraries.optimizers")
    schedule = [3, 7], [0.1, 0.05, 0.01]
    makers = {
        "sgd": (0.1,),
        "momentum": (0.1, 0.9),
        "nesterov": (0.1, 0.9),
        "adagrad": (0.1,),
        "rmsprop": (0.1,),
        "rmsprop_momentum": (0.1,),
        "adam": (0.1,),
        "adamax": (0.1,),
        "sm3": (0.1,),
    }
    for name, args in makers.items():
        for lr in (args[0], "piecewise"):
            ours_args = theirs_args = args
            if lr == "piecewise":
                ours_args = (optimizers.piecewise_constant(*schedule), *args[1:])
                theirs_args = (jax_optimizers.piecewise_constant(*schedule), *args[1:])
            results = []
            for lib, lib_args in (
                (optimizers, ours_args),
                (jax_optimizers, theirs_args),
            ):
                init_fun, update_fun, get_params = getattr(lib, name)(*lib_args)
                state = init_fun(X0)
                for i in range(10):
                    state = update_fun(i, (G1, G2)[i % 2], state)
                results.append(get_params(state))
            for key in ("w", "b"):
                assert_allclose(
                    results[0][key], np.asarray(results[1][key]), rtol=1e-5, atol=1e-6
                )


def _jax_models(lib):
    """The same models written with either library (they differ only in `lib`)."""
    yield (
        (9, 7, 2),
        lib.serial(
            lib.Conv(4, (3, 3), strides=(2, 2), padding="SAME"),
            lib.Relu,
            lib.AvgPool((2, 2), padding="SAME"),
            lib.ConvTranspose(2, (3, 3), (2, 2)),
            lib.BatchNorm(),
            lib.MaxPool((2, 2), (1, 2)),
            lib.Flatten,
            lib.Dense(3),
            lib.LogSoftmax,
        ),
    )
    yield (
        (6, 3),
        lib.serial(
            lib.Conv1DTranspose(4, (3,), (2,), padding="SAME"),
            lib.Gelu,
            lib.FanOut(2),
            lib.parallel(lib.Dense(4), lib.Identity),
            lib.FanInSum,
            lib.SumPool((2,), spec="NWC"),
        ),
    )
    yield (
        (2, 6, 5),
        lib.serial(
            lib.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2), padding="SAME"),
            lib.Elu,
            lib.Flatten,
            lib.Dense(4),
            lib.Softmax,
        ),
    )


def test_stax_matches_jax():
    jax_stax = pytest.importorskip("jax.example_libraries.stax")
    import jax  # only here, to compare

    ours_and_theirs = zip(_jax_models(stax), _jax_models(jax_stax))
    for (shape, (init, apply)), (_, (jinit, japply)) in ours_and_theirs:
        out, params = init(KEY, (5, *shape))
        jout, jparams = jinit(jax.random.PRNGKey(0), (5, *shape))
        assert tuple(out) == tuple(int(d) for d in jout)
        # olympus.random draws JAX's bits, so the initial parameters agree too.
        leaves = olympus.tree_util.tree_leaves(params)
        jleaves = jax.tree_util.tree_leaves(jparams)
        assert len(leaves) == len(jleaves)
        for a, b in zip(leaves, jleaves):
            assert_allclose(a, np.asarray(b), rtol=1e-5, atol=1e-6)
        x = RNG.standard_normal((5, *shape)).astype(np.float32)
        want = np.asarray(japply(jparams, x))
        assert_allclose(apply(params, x), want, rtol=1e-4, atol=1e-5)


# ---- the examples, when scikit-learn is installed ---------------------------------
@pytest.mark.parametrize("script", ["mnist_digits.py", "convnet.py"])
def test_examples_run(script):
    pytest.importorskip("sklearn")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OLYMPUS_EXAMPLE_STEPS": "3"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "test accuracy" in done.stdout
