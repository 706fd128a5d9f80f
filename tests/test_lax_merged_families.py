"""lax functions that share one body or one docstring section (issue 30):
each still agrees with JAX, and the shared sections land where the full
docstring format puts them."""

import numpy as np
import pytest

from jax_oracle import agree
from olympus import lax
from olympus.lax import op_docs
from olympus.lax.slicing import ScatterModeError

DN = dict(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


@pytest.mark.parametrize("mode", [None, "fill", "drop", "promise_in_bounds"])
@pytest.mark.parametrize("name", ["scatter_add", "scatter_sub", "scatter_max"])
def test_scatters_take_every_dropping_mode_as_jax(name, mode):
    """'fill' (JAX's name for fill-or-drop) was refused by all but scatter_sub."""

    def program(ox, x):
        dn = ox.lax.ScatterDimensionNumbers(**DN)
        indices = ox.jnp.array([[1], [5]])  # 5 is out of range: dropped
        updates = ox.jnp.array([2.0, 1.0])
        return getattr(ox.lax, name)(x, indices, updates, dn, mode=mode)

    agree(program, np.zeros(3, np.float32))


def test_scatter_clip_is_refused_with_a_named_error():
    dn = lax.ScatterDimensionNumbers(**DN)
    args = (np.zeros(3, np.float32), np.array([[1]]), np.ones(1, np.float32), dn)
    with pytest.raises(ScatterModeError, match="clip"):
        lax.scatter_add(*args, mode="clip")
    with pytest.raises(ScatterModeError, match="clip"):  # one error for the family
        lax.scatter_sub(*args, mode="clip")


@pytest.mark.parametrize(
    "x",
    [
        np.array([1.0, np.nan, 2.0, -np.inf], np.float32),
        np.array([3, -1, 7, 2], np.int8),
        np.array([3, 1, 200, 2], np.uint8),
        np.array([[True, False], [False, True]]),
    ],
)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cummax_cummin_agree_with_jax(name, reverse, x):
    agree(lambda ox, x: getattr(ox.lax, name)(x, 0, reverse), x)
    agree(lambda ox, x: ox.jit(lambda x: getattr(ox.lax, name)(x, 0, reverse))(x), x)


def test_cummax_under_vmap_agrees_with_jax():
    x = np.array([[1.0, 3.0, 2.0], [5.0, 4.0, 6.0]], np.float32)
    agree(lambda ox, x: ox.vmap(lambda r: ox.lax.cummax(r, 0, True))(x), x)


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or", "reduce_xor"])
def test_bitwise_reductions_agree_with_jax(name):
    x = np.array([[5, 3], [6, 1]], np.int32)
    agree(lambda ox, x: getattr(ox.lax, name)(x, (0,)), x)
    agree(lambda ox, x: getattr(ox.lax, name)(x > 2, (1,)), x)


def test_shared_sections_go_in_the_format_order():
    @op_docs.with_sections(op_docs.RAISES_NOT_REAL_FLOAT, op_docs.RETURNS_LIKE_X)
    def f(x):
        """Summary.

        Args:
          x: an array.

        Example:
          >>> 1
          1
        """

    headers = [h for h in ("Args:", "Returns:", "Raises:", "Example:")]
    positions = [f.__doc__.index(f"\n{h}\n") for h in headers]
    assert positions == sorted(positions)
    assert "  An array of x's shape and dtype." in f.__doc__

    @op_docs.with_sections(op_docs.ARGS_REAL_X, op_docs.RETURNS_LIKE_X)
    def g(x):
        """Summary without other sections."""

    assert g.__doc__.startswith("Summary without other sections.\n\nArgs:\n  x: ")
    assert g.__doc__.index("Args:") < g.__doc__.index("Returns:")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_agree_with_jax(name):
    x = np.array([[1.0, np.nan, 0.5], [2.0, 2.0, -1.0]], np.float32)
    for axis in (0, 1):
        agree(lambda ox, x: getattr(ox.lax, name)(x, axis, ox.jnp.int32), x)


@pytest.mark.parametrize(
    "name", ["shift_left", "shift_right_logical", "shift_right_arithmetic"]
)
def test_shifts_agree_with_jax(name):
    x = np.array([-8, 1, 7, 2**30], np.int32)
    agree(lambda ox, x: getattr(ox.lax, name)(x, np.int32(3)), x)


def test_jit_with_options_only_is_a_decorator_keeping_every_option():
    """jit(**options) returns a decorator (its options now passed on as one
    dict): static and donated arguments and inline are all honoured."""

    def program(ox, x):
        @ox.jit(static_argnames="n", donate_argnums=(), inline=True)
        def f(x, n):
            return x * n if n > 1 else -x

        return f(x, n=3), f(x, n=1)

    agree(program, np.arange(3.0, dtype=np.float32))


def test_index_and_axis_checks_agree_with_jax():
    """index_in_dim's index and axis go through one range check."""
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    agree(lambda ox, x: ox.lax.index_in_dim(x, -1, -1), x)
    agree(lambda ox, x: ox.lax.index_in_dim(x, 1, 0, keepdims=False), x)
    with pytest.raises(lax.LaxArgumentError, match="index 5 is out of bounds"):
        lax.index_in_dim(x, 5, 1)
    with pytest.raises(lax.LaxArgumentError, match="axis 4 is out of range"):
        lax.index_in_dim(x, 0, 4)


@pytest.mark.parametrize("precision", [None, "HIGHEST"])
def test_conv_and_dot_lower_their_precision_alike(precision):
    """dot_general and conv_general_dilated write XLA's precision config with
    one helper: present (one entry per operand) exactly when asked for."""
    import olympus

    x, w = np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.float32)
    conv = olympus.jit(
        lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", precision=precision)
    )
    dot = olympus.jit(lambda a, b: lax.dot(a, b, precision=precision))
    a = np.ones((2, 2), np.float32)
    for text in (conv.lower(x, w).as_text(), dot.lower(a, a).as_text()):
        assert ("HIGHEST" in text) == bool(precision)
    agree(lambda ox, x, w: ox.lax.conv_general_dilated(x, w, (1,), "VALID"), x, w)


def test_conv_transposes_share_their_padding_and_agree_with_jax():
    """Both transposes pad by one _dilated_sizes: strides, both dilations and
    uneven padding give JAX's gradients for the input and the kernel."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 9, 7)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)

    def program(ox, x, w):
        def loss(x, w):
            out = ox.lax.conv_general_dilated(
                x, w, (2, 1), ((1, 2), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1)
            )
            return (out * out).sum()

        return ox.grad(loss, argnums=(0, 1))(x, w)

    agree(program, x, w, rtol=2e-5, atol=1e-4)


@pytest.mark.parametrize("name", ["approx_max_k", "approx_min_k"])
def test_approx_k_agree_with_jax(name):
    """approx_max_k and approx_min_k: one body with JAX's signature."""
    x = np.array([[3.0, 1.0, 2.0, 5.0], [0.0, -1.0, 4.0, 4.0]], np.float32)
    agree(lambda ox, x: getattr(ox.lax, name)(x, 2), x)
    agree(lambda ox, x: getattr(ox.lax, name)(x, 1, reduction_dimension=0), x)
