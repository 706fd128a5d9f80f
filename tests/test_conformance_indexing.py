"""Indexing against JAX 0.10.2 (tests/jax_oracle.py): out-of-range and negative
indices in lax's dynamic slices, `x[idx]`, `x.at[idx]`, take and friends, each
checked eager, under jit and (where it makes sense) under vmap."""

from __future__ import annotations

import os

import numpy as np
import pytest

from jax_oracle import agree, x64

X5 = np.arange(5.0, dtype=np.float32)
X34 = np.arange(12.0, dtype=np.float32).reshape(3, 4)


# ---- lax: a negative traced start counts from the end, then clamps -------------
@pytest.mark.parametrize("start", [-1, -4, -10, 9])
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


@pytest.mark.parametrize(
    "starts",
    [(np.int8(1), 1), (np.int8(1), np.int8(1)), (1, np.uint8(1)), (True, 1),
     (0.0, 1), (np.int64(1), np.int32(1)), (np.int16(-1), np.int16(-1))],
    ids=repr,
)  # fmt: skip
def test_dynamic_slice_start_dtypes(starts):
    agree(lambda ox, x: ox.lax.dynamic_slice(x, starts, (2, 2)), X34)
    agree(lambda ox, x: ox.lax.dynamic_update_slice(x, x[:2, :2], starts), X34)


# ---- x.at[i] with an out-of-range index: dropped, or clipped with mode="clip" ----
_UPDATES = ["set", "add", "multiply", "mul", "min", "max", "divide", "power"]


_UPDATE_CASES = [(m, mode) for m in _UPDATES for mode in (None, "clip")] + [
    ("set", "drop"),
    ("add", "fill"),
    ("max", "promise_in_bounds"),
]


@pytest.mark.parametrize("method, mode", _UPDATE_CASES)
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


@pytest.mark.parametrize(
    "mode, fill_value",
    [(None, None), (None, -1.0), ("clip", None), ("fill", None), ("fill", -1.0),
     ("drop", -1.0), ("promise_in_bounds", None)],
)  # fmt: skip
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
@pytest.mark.parametrize(
    "mode, fill_value",
    [(None, None), (None, -3.0), ("clip", None), ("wrap", None), ("fill", -3.0)],
)
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


# ---- roll with a traced shift ---------------------------------------------------
@pytest.mark.parametrize("shift", [2, -1, 7, 0])
def test_roll_traced_shift(shift):
    def program(ox, x, s):
        def f(x, s):
            return (
                ox.jnp.roll(x, s),
                ox.jnp.roll(x, s, axis=1),
                ox.jnp.roll(x, (s, 1), axis=(0, 1)),
                ox.jnp.roll(x, s, axis=(0, 1)),
            )

        return f(ox.jnp.asarray(x), s), ox.jit(f)(x, s)

    agree(program, X34, shift)


def test_roll_vmap_over_shift():
    agree(
        lambda ox, x, s: ox.vmap(lambda s: ox.jnp.roll(x, s))(s),
        X5,
        np.array([1, -2, 13], np.int32),
    )


def test_roll_shift_array_and_mismatch():
    agree(lambda ox, x: ox.jnp.roll(x, ox.jnp.array([1, 2]), axis=(0, 1)), X34)
    agree(lambda ox, x: ox.jnp.roll(x, (1, 2, 3), axis=(0, 1)), X34)


# ---- take_along_axis: modes and fill values -------------------------------------
@pytest.mark.parametrize("mode", [None, "clip", "fill", "drop", "promise_in_bounds"])
def test_take_along_axis_modes(mode):
    idx = np.array([[0, 5], [-1, 2], [-9, 3]], np.int32)

    def program(ox, x):
        def f(x):
            return (
                ox.jnp.take_along_axis(x, idx, axis=1, mode=mode),
                ox.jnp.take_along_axis(x, idx, axis=1, mode=mode, fill_value=-2.0),
                ox.jnp.take_along_axis(x, idx[:, :1].T, axis=0, mode=mode),
            )

        return f(x), ox.jit(f)(x)

    agree(program, X34)


def test_take_along_axis_flat_and_errors():
    agree(lambda ox, x: ox.jnp.take_along_axis(x, np.array([1, 20, -1]), None), X34)
    agree(lambda ox, x: ox.jnp.take_along_axis(x, np.array([1]), axis=1), X34)
    agree(lambda ox, x: ox.jnp.take_along_axis(x, np.ones((3, 1)), axis=1), X34)
    agree(
        lambda ox, x: ox.jnp.take_along_axis(
            x, np.array([[-1]]), axis=1, wrap_negative_indices=False
        ),
        X34,
    )


# ---- one-argument where, nonzero, argwhere, flatnonzero with size= ---------------
C6 = np.array([0, 3, 0, 1, 2, 0], np.float32)


@pytest.mark.parametrize(
    "size, fill_value", [(None, None), (None, -1), (2, None), (5, -1)]
)
def test_where_nonzero_sized(size, fill_value):
    def f(ox, c):
        kw = {"size": size, "fill_value": fill_value}
        return (
            ox.jnp.where(c, **kw),
            ox.jnp.nonzero(c.reshape(2, 3), **kw),
            ox.jnp.argwhere(c.reshape(2, 3), **kw),
            ox.jnp.flatnonzero(c, **kw),
        )

    agree(f, C6)
    if size is not None:
        agree(lambda ox, c: ox.jit(lambda c: f(ox, c))(c), C6)
        agree(lambda ox, c: ox.vmap(lambda c: f(ox, c))(c.reshape(2, 3)), C6)


def test_nonzero_fill_per_axis_and_errors():
    agree(
        lambda ox, c: ox.jnp.nonzero(c.reshape(2, 3), size=5, fill_value=(-1, -2)), C6
    )
    agree(lambda ox, c: ox.jit(lambda c: ox.jnp.where(c))(c), C6)
    agree(lambda ox, c: ox.jnp.where(c, c, 0.0), C6)


# ---- searchsorted: methods, NaN sorted last ---------------------------------------
@pytest.mark.parametrize(
    "method", ["scan", "scan_unrolled", "sort", "compare_all", "bogus"]
)
def test_searchsorted_methods(method):
    a = np.array([1.0, 2.0, 3.0, 3.0, 5.0, np.nan], np.float32)
    v = np.array([[0.0, 3.0, 3.5], [6.0, -1.0, np.nan]], np.float32)

    def program(ox, a, v):
        def f(a, v):
            return [
                ox.jnp.searchsorted(a, v, side=s, method=method)
                for s in ("left", "right")
            ]

        return f(a, v), ox.jit(f)(a, v), ox.vmap(f, (None, 0))(a, v)

    agree(program, a, v)


def test_searchsorted_nan_and_other_dtypes():
    def program(ox):
        jnp = ox.jnp
        out = [
            jnp.searchsorted(jnp.array([1.0, 2.0, np.nan]), jnp.array([np.nan, 1.5]))
        ]
        for side in ("left", "right"):
            out += [
                jnp.searchsorted(jnp.array([1.0, np.nan, np.nan]),
                                 jnp.array([np.nan, 1.5, -np.inf]), side=side),
                jnp.searchsorted(jnp.array([-1.0, 0.0, 1.0]), jnp.array([-0.0, 0.0]), side=side),
                jnp.searchsorted(jnp.array([1, 2, 2, 4]), jnp.array([2, 3, 9]), side=side),
                jnp.searchsorted(jnp.array([1, 2, 2, 4]), 2, side=side),
                jnp.searchsorted(jnp.array([3, 1, 2]), jnp.array([2, 3]), side=side,
                                 sorter=jnp.array([1, 2, 0])),
                jnp.searchsorted(jnp.array([], jnp.float32), jnp.array([1.0]), side=side),
            ]  # fmt: skip
        return out

    agree(program)


# ---- boolean masks on concrete arrays ----------------------------------------------
def test_boolean_masks_concrete():
    def program(ox, x):
        a = ox.jnp.asarray(x)
        return (
            a[a > 2],
            a[x > 2],
            a[np.array([True, False])],
            a[np.array([True, False]), 1:],
            a[1, np.array([True, False, True])],
            a.at[x > 2].set(0.0),
            a.at[a > 2].add(1.0),
            a.at[x > 2].set(ox.jnp.array([7.0, 8.0, 9.0])),
            a.at[x > 2].get(),
            a.at[np.array([False, True])].multiply(2.0),
            a.at[1, np.array([True, False, True])].divide(2.0),
        )

    agree(program, np.arange(6.0, dtype=np.float32).reshape(2, 3))
    agree(lambda ox, x: ox.jit(lambda x: x[x > 2])(x), X5)
    agree(lambda ox, x: ox.jit(lambda x: x.at[x > 2].set(0.0))(x), X5)


# ---- arange with wrapping bounds, eye with a huge k ---------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "int8"])
def test_arange_wraps_like_jax(dtype):
    agree(
        lambda ox: [
            ox.jnp.arange(*bounds, dtype=dtype)
            for bounds in [(-2, 3), (0, 5, 2), (-5, -1), (3, -2, -1), (250, 260)]
        ]
    )


def test_arange_wraps_x64():
    with x64():
        agree(lambda ox: [ox.jnp.arange(-2, 3, dtype=d) for d in ("uint64", "uint32")])


@pytest.mark.parametrize("k", [2**40, -(2**40), 2**31, 2, -1, -3])
def test_eye_tri_huge_k(k):
    agree(lambda ox: (ox.jnp.eye(3, k=k), ox.jnp.eye(3, 4, k=k)))
    agree(lambda ox: ox.jnp.tri(3, k=k))  # JAX raises OverflowError past int32
    agree(lambda ox: ox.jnp.tril(ox.jnp.ones((3, 3)), k=k if abs(k) < 2**31 else 2**40))


# ---- the sweep: indexing forms x (eager, jit, vmap, updates, fill reads, grad) ------
X345 = np.arange(60.0, dtype=np.float32).reshape(3, 4, 5)
_I = np.int32
SWEEP = [
    1, -1, 7, -9, np.int32(2), slice(1, 3), slice(None, None, -1), slice(-10, 10, 2),
    slice(2, 2), None, Ellipsis, (Ellipsis, 1), (None, 1, Ellipsis, None),
    (1, slice(None), -2), (0, 7, 1), (slice(None), -5), np.array(True), np.array(False),
    np.array([True, False, True]), np.arange(12).reshape(3, 4) % 3 == 0,
    (Ellipsis, np.array([True, False, True, False, True])), np.array([0, 2, -1], _I),
    np.array([[0, 1], [2, -3]], _I), np.array([0, 9], _I), [0, 2], ([0, 2],),
    (np.array([0, 2], _I), slice(None), np.array([1, 3], _I)),
    (slice(None), np.array([0, 1], _I), np.array([2, 3], _I)), (1, np.array([0, 2], _I)),
    (np.array([0, 1], _I), None, 1), (np.array([0, 1], _I), Ellipsis, np.array([[4], [-1]], _I)),
    np.array([], _I), (slice(None), np.array([], _I)), (1, slice(None), np.array([[0, 4]], _I)),
    (np.array([True, False, True]), 1, np.array([0, 3], _I)),
    (None, np.array([2, 0], _I), None), (slice(1, None), np.array([0, 7], _I)),
]  # fmt: skip


def _each(thunks: dict) -> dict:
    """Each thunk's result, or "raised" (error classes differ between systems)."""
    out = {}
    for name, thunk in thunks.items():
        try:
            out[name] = thunk()
        except Exception:  # the comparison is whether both raise
            out[name] = "raised"
    return out


# CI checks every other form (fixed); OLYMPUS_SWEEP_FULL=1 checks all of them.
_FULL = os.environ.get("OLYMPUS_SWEEP_FULL", "") not in ("", "0")


@pytest.mark.parametrize(
    "index", SWEEP if _FULL else SWEEP[::2], ids=lambda i: repr(i).replace("\n", "")
)
def test_indexing_sweep(index):
    def program(ox, x):
        a = ox.jnp.asarray(x)
        return _each({
            "eager": lambda: a[index],
            "jit": lambda: ox.jit(lambda x: x[index])(x),
            "vmap": lambda: ox.vmap(lambda x: x[index])(ox.jnp.stack([a, -a])),
            "set": lambda: a.at[index].set(-1.0),
            "add_jit": lambda: ox.jit(lambda x: x.at[index].add(1.0))(x),
            "get_fill": lambda: a.at[index].get(mode="fill", fill_value=-7.0),
            "grad": lambda: ox.grad(lambda x: x[index].sum())(x),
        })  # fmt: skip

    agree(program, X345)


@pytest.mark.parametrize(
    "index",
    [1, -1, 7, -9, np.array([0, 2, -1], _I), np.array([[0, 9], [-4, 1]], _I)],
    ids=repr,
)
def test_indexing_sweep_traced(index):
    def program(ox, x, i):
        return _each({
            "jit": lambda: ox.jit(lambda x, i: x[i])(x, i),
            "set": lambda: ox.jit(lambda x, i: x.at[i].set(-1.0))(x, i),
            "clip": lambda: ox.jit(lambda x, i: x.at[i].add(1.0, mode="clip"))(x, i),
            "vmap": lambda: ox.vmap(lambda i: x[i])(ox.jnp.stack([ox.jnp.asarray(i)] * 2)),
            "grad": lambda: ox.jit(ox.grad(lambda x, i: x[i].sum()))(x, i),
        })  # fmt: skip

    agree(program, X345, index)


def test_reference_interpreter_agrees():
    """The NumPy reference interpreter (the fuzzer's oracle) reads and writes
    out-of-range positions as the compiled program does."""
    import olympus
    import olympus.numpy as jnp
    from olympus.test_util import reference_call

    programs = [
        lambda x: x[jnp.array([1, 9, -9])],
        olympus.grad(lambda x: x[jnp.array([1, 9, -9]), 2].sum()),
        lambda x: x.at[jnp.array([0, 7]), 1:].set(-1.0),
        lambda x: x.at[jnp.array([0, 5]), None, 1].add(1.0),
        lambda x: jnp.roll(x, jnp.int32(5)),
        lambda x: olympus.lax.dynamic_slice(x, (jnp.int32(-1), 1), (2, 2)),
        lambda x: x.at[jnp.int32(7)].set(1.0),
        lambda x: jnp.searchsorted(x[0], jnp.array([0.5, 9.0, np.nan])),
    ]
    for f in programs:
        np.testing.assert_array_equal(
            np.asarray(reference_call(f, X34)), np.asarray(olympus.jit(f)(X34))
        )


def test_updates_keep_weak_type_and_dtypes():
    def program(ox, i8):
        weak = ox.jnp.asarray(3.0)[None]
        a = ox.jnp.asarray(i8)
        return (
            ox.jnp.asarray(3.0).at[()].set(1.0),
            weak.at[0].add(1),
            weak.at[0].divide(2),
            weak.at[ox.jnp.array([0])].max(5.0),
            a.at[1].set(2),
            a.at[ox.jnp.array([1, 1])].mul(3),
            a.at[np.uint8(2)].get(),
            a[np.array([0, -1], np.int64)],
        )

    agree(program, np.arange(12, dtype=np.int8).reshape(3, 4))


def test_nonzero_roll_eye_edge_cases():
    def program(ox, x):
        jnp = ox.jnp
        return _each({
            "argwhere_0d": lambda: (jnp.argwhere(jnp.asarray(1.0)), jnp.argwhere(0.0)),
            "nonzero_empty": lambda: jnp.nonzero(jnp.zeros((0, 3)), size=2),
            "fill_array": lambda: jnp.nonzero(x > 9, size=4, fill_value=np.array([-1, -2])),
            "fill_tuple": lambda: jnp.nonzero(x > 9, size=4, fill_value=(-1, -2)),
            "roll_float": lambda: jnp.roll(x, 1.5),
            "roll_0d": lambda: jnp.roll(jnp.asarray(1.0), 1),
            "roll_bad_axis": lambda: jnp.roll(x, 1, axis=2),
            "eye_traced_k": lambda: ox.jit(lambda k: jnp.eye(3, 4, k=k))(-1),
        })  # fmt: skip

    agree(program, X34)


def test_ravel_multi_index_of_no_axes():
    agree(lambda ox: ox.jnp.ravel_multi_index((), ()))
    agree(lambda ox, x: ox.jnp.ravel_multi_index(x, ()), np.zeros(0, np.int32))
