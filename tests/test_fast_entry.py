"""FastEntry (olympus/backends/xla/dispatch.py), the one execute-and-unpack
call of every hot path, and the read-back of results with np.asarray: each
path gives what JAX gives, on its first (slow) and later (fast) calls."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from jax_oracle import agree
from olympus.backends.xla import dispatch
from olympus.backends.xla.dispatch import FastEntry

X = np.linspace(-1.0, 2.0, 6, dtype=np.float32)
Y = np.arange(6, dtype=np.float32)
TABLE = np.linspace(0.0, 1.0, 6, dtype=np.float32)  # a captured constant


def _calls(ox, f, *args):
    """f's result on its first call (compiles), second and third (fast paths)."""
    return [f(*args) for _ in range(3)]


def test_jit_hits_with_arrays_numpy_and_constants_agree_with_jax():
    def program(ox, x, y):
        table = ox.jnp.asarray(TABLE)
        f = ox.jit(lambda x, y: ox.jnp.sum(x * ox.jnp.sin(y)) + table)
        g = ox.jit(lambda x: (x * 2.0, x.sum()))  # two outputs: not one entry
        xs, ys = ox.device_put(x), ox.device_put(y)
        return (
            _calls(ox, f, xs, ys),
            _calls(ox, f, x, y),
            _calls(ox, f, xs, y),
            _calls(ox, g, xs),
            _calls(ox, ox.jit(lambda x, n: x**n, static_argnums=1), xs, 3),
            ox.vmap(f)(np.stack([x, x]), np.stack([y, -y])),
        )

    agree(program, X, Y)


def test_eager_and_numpy_direct_paths_agree_with_jax():
    def program(ox, x, y):
        xs, ys = ox.device_put(x), ox.device_put(y)
        return [
            (ox.jnp.sin(xs), xs + ys, xs @ ys, ox.lax.exp(xs), ox.jnp.maximum(xs, ys))
            for _ in range(3)
        ]

    agree(program, X, Y)


def test_every_hot_path_holds_a_fast_entry():
    f = olympus.jit(lambda x, y: jnp.sum(x * y) + TABLE)
    x, y = olympus.device_put(X), olympus.device_put(Y)
    f(x, y), f(x, y)
    compiled, fast = f._fast[(x.aval, y.aval)]
    assert type(fast) is FastEntry and type(compiled.executable.fast) is FastEntry
    assert fast is not compiled.executable.fast  # it passes the constant first
    jnp.sin(x), jnp.sin(x)
    assert dispatch._hits and all(type(e) is FastEntry for e in dispatch._hits.values())


def test_a_deleted_argument_raises_on_the_fast_path_as_on_the_slow_one():
    f = olympus.jit(lambda x: x * 2.0)
    x = olympus.device_put(X)
    f(x), f(x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)
    with pytest.raises(RuntimeError, match="deleted"):
        jnp.sin(x)


def test_numpy_arguments_are_copied_so_later_writes_do_not_change_a_result():
    f = olympus.jit(lambda x: jnp.sum(jnp.sin(x) ** 2))
    big = np.ones(2**20, np.float32)
    f(big), f(big)
    want = float(f(big))
    results = []
    for _ in range(5):
        big[:] = 1.0
        results.append(f(big))
        big[:] = 5.0  # the call above may still be running
    assert all(float(r) == want for r in results)


def test_read_back_is_read_only_and_agrees_with_jax():
    def program(ox, x):
        f = ox.jit(lambda x: (x + 1.0).reshape(2, 3))
        s = ox.jit(lambda x: x.sum())
        return [
            (np.asarray(f(x)), np.asarray(s(x)), np.asarray(f(x))) for _ in range(2)
        ]

    agree(program, X)
    out = np.asarray(olympus.jit(lambda x: x + 1.0)(X))
    assert not out.flags.writeable
    assert np.asarray(olympus.jit(lambda x: x.sum())(X)).shape == ()
    bf16 = np.asarray(olympus.jit(lambda x: x.astype(jnp.bfloat16))(X))
    np.testing.assert_array_equal(bf16.astype(np.float32), X.astype(jnp.bfloat16))
