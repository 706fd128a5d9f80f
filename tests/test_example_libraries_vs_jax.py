"""example_libraries.optimizers whose init/get_params/update are shared
(issue 30: momentum and nesterov one body; zero statistics and get_params
written once) take the same steps as JAX's, on a pytree of parameters."""

import numpy as np
import pytest

import jax
from jax.example_libraries import optimizers as jax_optimizers
from jax.example_libraries import stax as jax_stax

from olympus.example_libraries import optimizers, stax

CASES = [
    ("momentum", (0.1, 0.9)),
    ("nesterov", (0.1, 0.9)),
    ("adagrad", (0.1,)),
    ("rmsprop", (0.1,)),
    ("rmsprop_momentum", (0.1,)),
    ("adam", (0.1,)),
    ("adamax", (0.1,)),
    ("sm3", (0.1,)),
]


def _steps(module, name, args, params, grads):
    init, update, get_params = getattr(module, name)(*args)
    state = init(params)
    for i, g in enumerate(grads):
        state = update(i, g, state)
    return get_params(state)


@pytest.mark.parametrize("name, args", CASES)
def test_steps_match_jax(name, args):
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": np.float32(0.5)}
    grads = [
        {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": np.float32(g)}
        for g in (0.3, -1.2, 0.7)
    ]
    ours = _steps(optimizers, name, args, params, grads)
    theirs = _steps(jax_optimizers, name, args, params, grads)
    for k in params:
        np.testing.assert_allclose(
            np.asarray(ours[k]), np.asarray(theirs[k]), rtol=1e-5
        )


@pytest.mark.parametrize("name", ["Conv", "ConvTranspose", "Conv1DTranspose"])
def test_fixed_layout_convolutions_match_jax_shapes(name):
    shape = (2, 6, 3) if "1D" in name else (2, 6, 5, 3)
    window = (3,) if "1D" in name else (3, 2)
    layer = getattr(stax, name)
    assert layer.__name__ == name
    for padding in ("SAME", "VALID"):
        ours = layer(4, window, padding=padding)[0](np.array([0, 1], np.uint32), shape)
        theirs = getattr(jax_stax, name)(4, window, padding=padding)[0](
            jax.random.PRNGKey(1), shape
        )
        assert ours[0] == theirs[0]
        assert [p.shape for p in ours[1]] == [p.shape for p in theirs[1]]


@pytest.mark.parametrize("name", ["GeneralConv", "GeneralConvTranspose"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_general_convolutions_match_jax_values(name, padding):
    """GeneralConv and GeneralConvTranspose share one factory (issue 30): each
    keeps its own output sizes and convolution, in a non-default layout."""
    dims, shape = ("NCHW", "OIHW", "NHWC"), (2, 3, 7, 6)
    ours_init, ours_apply = getattr(stax, name)(dims, 4, (3, 2), (2, 1), padding)
    jax_init, jax_apply = getattr(jax_stax, name)(dims, 4, (3, 2), (2, 1), padding)
    out_shape, params = jax_init(jax.random.PRNGKey(0), shape)
    assert ours_init(np.array([0, 1], np.uint32), shape)[0] == out_shape
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    params = [np.asarray(p) for p in params]
    ours, theirs = np.asarray(ours_apply(params, x)), np.asarray(jax_apply(params, x))
    assert ours.shape == theirs.shape == out_shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_fixed_layout_signature_is_generals_less_dimension_numbers():
    import inspect

    general = list(inspect.signature(stax.GeneralConvTranspose).parameters)
    assert list(inspect.signature(stax.ConvTranspose).parameters) == general[1:]
    assert stax.Conv(4, (2, 2), padding="SAME")[0](
        np.array([0, 1], np.uint32), (1, 5, 5, 2)
    )[0] == (1, 5, 5, 4)
