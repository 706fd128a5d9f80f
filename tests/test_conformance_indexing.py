"""Indexing against JAX 0.10.2 (tests/jax_oracle.py): out-of-range and negative
indices in lax's dynamic slices, `x[idx]`, `x.at[idx]`, take and friends, each
checked eager, under jit and (where it makes sense) under vmap."""

from __future__ import annotations

import numpy as np
import pytest

from jax_oracle import agree, x64

X5 = np.arange(5.0, dtype=np.float32)
X34 = np.arange(12.0, dtype=np.float32).reshape(3, 4)


# ---- lax: a negative traced start counts from the end, then clamps -------------
@pytest.mark.parametrize("start", [-1, -2, -4, -10, 3, 9])
def test_dynamic_slice_negative_start(start):
    agree(lambda ox, x, i: ox.lax.dynamic_slice(x, (i,), (2,)), X5, start)
    agree(
        lambda ox, x, i: ox.jit(lambda x, i: ox.lax.dynamic_slice(x, (i,), (2,)))(x, i),
        X5,
        start,
    )
    agree(
        lambda ox, x, i: ox.jit(lambda x, i: ox.lax.dynamic_slice_in_dim(x, i, 2, 1))(
            x, i
        ),
        X34,
        start,
    )


@pytest.mark.parametrize("start", [-1, -2, -7, 2, 8])
def test_dynamic_update_slice_negative_start(start):
    def program(ox, x, i):
        def f(x, i):
            ones = ox.jnp.ones(2, x.dtype)
            return (
                ox.lax.dynamic_update_slice(x, ones, (i,)),
                ox.lax.dynamic_update_slice_in_dim(x, ones, i, 0),
                ox.lax.dynamic_update_index_in_dim(x, ones[:1], i, 0),
                ox.lax.dynamic_index_in_dim(x, i, 0, False),
            )

        return f(x, i), ox.jit(f)(x, i)

    agree(program, X5, start)


def test_dynamic_slice_negative_starts_vmap():
    agree(
        lambda ox, x, i: ox.vmap(lambda i: ox.lax.dynamic_slice(x, (i, -2), (2, 2)))(i),
        X34,
        np.array([-1, 0, 1, -3, 5], np.int32),
    )


def test_dynamic_slice_without_wrapping():
    agree(
        lambda ox, x, i: ox.jit(
            lambda x, i: ox.lax.dynamic_slice(
                x, (i,), (2,), allow_negative_indices=False
            )
        )(x, i),
        X5,
        -1,
    )
    agree(
        lambda ox, x: ox.jit(
            lambda x: ox.lax.dynamic_slice(x, (-1,), (2,), allow_negative_indices=False)
        )(x),
        X5,
    )


# ---- x.at[i] with an out-of-range index: dropped, or clipped with mode="clip" ----
_UPDATES = ["set", "add", "multiply", "mul", "min", "max", "divide", "power"]


@pytest.mark.parametrize("mode", [None, "drop", "clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("method", _UPDATES)
def test_at_update_out_of_bounds(method, mode):
    kwargs = {} if mode is None else {"mode": mode}

    def program(ox, x, i):
        def f(x, i):
            return getattr(x.at[i], method)(3.0, **kwargs)

        x = ox.jnp.asarray(x)
        static = [f(x, j) for j in (7, -7, -2)]
        return static, ox.jit(f)(x, i), ox.vmap(f, (None, 0))(x, ox.jnp.asarray([i]))

    agree(program, X5, 7)
    agree(program, X5, -6)


@pytest.mark.parametrize("mode", [None, "drop", "clip", "fill"])
def test_at_update_out_of_bounds_arrays(mode):
    kwargs = {} if mode is None else {"mode": mode}

    def program(ox, x, idx):
        def f(x, idx):
            return x.at[idx].add(1.0, **kwargs), x.at[1:, idx].set(-1.0, **kwargs)

        return f(x, idx), ox.jit(f)(x, idx)

    agree(program, X34, np.array([0, 4, -5, -1, 9], np.int32))


@pytest.mark.parametrize("mode", [None, "clip", "fill", "drop", "promise_in_bounds"])
@pytest.mark.parametrize("fill_value", [None, -1.0])
def test_at_get_out_of_bounds(mode, fill_value):
    kwargs = {"fill_value": fill_value} if mode is None else {"mode": mode}
    if fill_value is not None:
        kwargs["fill_value"] = fill_value

    def program(ox, x, i):
        def f(x, i):
            return x.at[i].get(**kwargs)

        x = ox.jnp.asarray(x)
        static = [f(x, j) for j in (11, -11, 4, -5)]
        indices = ox.jnp.asarray([i, -1, 9])
        return static, ox.jit(f)(x, i), f(x, indices), ox.jit(f)(x, indices)

    for i in (7, -7, -2):
        agree(program, X5, i)


def test_at_update_unknown_mode_raises():
    agree(lambda ox, x: ox.jnp.asarray(x).at[1].set(0.0, mode="sideways"), X5)


# ---- take: default fill, clip does not count negatives from the end --------------
@pytest.mark.parametrize("mode", [None, "clip", "wrap", "fill"])
@pytest.mark.parametrize("fill_value", [None, -3.0])
def test_take_modes(mode, fill_value):
    def program(ox, x):
        def f(x):
            idx = ox.jnp.array([-1, 7, -7, 2, -6, 0])
            return (
                ox.jnp.take(x, idx, mode=mode, fill_value=fill_value),
                ox.jnp.take(x, -1, mode=mode, fill_value=fill_value),
            )

        return f(x), ox.jit(f)(x)

    agree(program, X5)
    agree(
        lambda ox, x: ox.jnp.take(
            x, ox.jnp.array([[-1], [4]]), axis=1, mode=mode, fill_value=fill_value
        ),
        X34,
    )


def test_take_unknown_mode_raises():
    agree(lambda ox, x: ox.jnp.take(x, ox.jnp.array([1]), mode="sideways"), X5)


# ---- static out-of-range ints and slices clamp as in JAX -------------------------
@pytest.mark.parametrize(
    "index",
    [11, -11, 4, -5, (1, 9), (-9, -1), slice(3, 11), slice(-11, 2), slice(11, 20),
     slice(None, None, -2), slice(-11, None, -1), (Ellipsis, 7), (None, -8)],
    ids=repr,
)  # fmt: skip
def test_static_out_of_bounds(index):
    x = (
        X5
        if not isinstance(index, tuple) or Ellipsis in index or None in index
        else X34
    )
    agree(lambda ox, x: ox.jnp.asarray(x)[index], x)
    agree(lambda ox, x: ox.jit(lambda x: x[index])(x), x)
    agree(lambda ox, x: ox.jnp.asarray(x).at[index].get(), x)


def test_static_index_into_empty_axis_raises():
    agree(lambda ox, x: ox.jnp.asarray(x)[0], np.zeros(0, np.float32))


# ---- the gradient of an out-of-range gather is dropped ---------------------------
def test_grad_of_out_of_bounds_gather():
    def program(ox, x):
        def loss(x):
            return x[ox.jnp.array([1, 9])].sum() + x[ox.jnp.array([-9, 2])].sum()

        return ox.grad(loss)(x), ox.jit(ox.grad(loss))(x)

    agree(program, X5)


def test_grad_of_out_of_bounds_gather_clip_and_fill():
    def program(ox, x):
        idx = ox.jnp.array([1, 9, -9])
        clip = ox.grad(lambda x: x.at[idx].get(mode="clip").sum())(x)
        fill = ox.grad(lambda x: x.at[idx].get(mode="fill", fill_value=0.0).sum())(x)
        return clip, fill

    agree(program, X5)


def test_grad_of_traced_scalar_index():
    agree(lambda ox, x, i: ox.jit(ox.grad(lambda x, i: x[i]))(x, i), X5, 9)
    agree(lambda ox, x, i: ox.jit(ox.grad(lambda x, i: x[i]))(x, i), X5, -9)


def test_int64_indices_x64():
    with x64():
        agree(
            lambda ox, x, i: ox.jit(lambda x, i: (x[i], x.at[i].set(1.0)))(x, i),
            X5,
            np.int64(-7),
        )
