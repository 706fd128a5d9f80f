"""jit calls with static keyword arguments or tuples and lists of Arrays
(issue 33): a hit is keyed on the Arrays' avals, the containers' types and
lengths and the keywords' names, types and values, without jaxlib's flatten
(`jit_function._plain_key`); every such call gives what JAX gives, on its
first (slow) and later (fast) calls, and calls it must not take (dynamic
keywords or scalars, dicts, None, namedtuples, deep nesting, Arrays by
keyword) still do."""

import collections

import numpy as np
import pytest

import olympus
from jax_oracle import agree
from olympus import jit_function

X = np.linspace(-1.0, 2.0, 6, dtype=np.float32)
Y = np.arange(6, dtype=np.float32)
Pair = collections.namedtuple("Pair", "a b")


def scaled(x, factor, offset=0.0):
    return x * factor + offset


def _calls(f, *args, **kwargs):
    return [f(*args, **kwargs) for _ in range(3)]  # compiles, then two hits


def test_static_keywords_agree_with_jax_on_first_and_fast_calls():
    def program(ox, x, y):
        k = ox.jit(scaled, static_argnames=("factor", "offset"))
        xs = ox.device_put(x)
        return (
            _calls(k, xs, factor=2.0),
            _calls(k, xs, factor=2),  # an int: its own signature, as in JAX
            _calls(k, xs, factor=True),
            _calls(k, xs, factor=2.0, offset=1),
            _calls(k, xs, offset=1, factor=2.0),  # the other order
            _calls(k, xs, 3.0, offset=-1.0),
            _calls(k, x, factor=2.0),  # a NumPy array: not this path
        )

    agree(program, X, Y)


def test_calls_the_plain_key_must_not_take_agree_with_jax():
    def program(ox, x, y):
        xs, ys = ox.device_put(x), ox.device_put(y)
        k = ox.jit(scaled, static_argnames="offset")  # factor is dynamic
        pair = ox.jit(lambda p, x, n: p[0] * x + p[1] * n, static_argnames="n")
        return (
            [k(xs, v, offset=1.0) for v in (2.0, 3.0, 2.0, 3.0)],  # dynamic scalar
            [k(xs, factor=v, offset=1.0) for v in (2.0, 3.0, 2.0)],  # by keyword
            _calls(k, xs, factor=ys, offset=1.0),  # an Array by keyword
            _calls(pair, Pair(xs, ys), xs, n=2),  # a namedtuple of Arrays
            _calls(pair, (xs, ys), xs, n=3),  # a tuple
        )

    agree(program, X, Y)


def test_a_static_keyword_hit_is_keyed_without_the_flatten():
    k = olympus.jit(scaled, static_argnames="factor")
    x = olympus.device_put(X)
    k(x, factor=2.0), k(x, factor=2.0)
    keys = [key for key in k._fast if key[0] is jit_function._PLAIN]
    assert keys == [(jit_function._PLAIN, x.aval, "factor", float, 2.0)]
    np.testing.assert_array_equal(np.asarray(k(x, factor=2.0)), X * 2.0)
    dynamic = olympus.jit(scaled)
    dynamic(x, factor=2.0), dynamic(x, factor=3.0)
    assert not any(key[0] is jit_function._PLAIN for key in dynamic._fast)
    np.testing.assert_array_equal(np.asarray(dynamic(x, factor=3.0)), X * 3.0)


def test_a_deleted_argument_raises_on_the_keyword_path():
    k = olympus.jit(scaled, static_argnames="factor")
    x = olympus.device_put(X)
    k(x, factor=2.0), k(x, factor=2.0)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        k(x, factor=2.0)


def test_keyword_calls_agree_under_vmap_and_grad():
    def program(ox, x):
        k = ox.jit(scaled, static_argnames="factor")
        loss = lambda v: ox.jnp.sum(k(v, factor=3.0) ** 2)  # noqa: E731
        return (
            ox.vmap(lambda v: k(v, factor=2.0))(x.reshape(2, 3)),
            ox.grad(loss)(x),
            k(x, factor=2.0),
        )

    agree(program, X)


def test_tuples_and_lists_of_arrays_agree_with_jax():
    def program(ox, x, y):
        xs, ys = ox.device_put(x), ox.device_put(y)
        affine = ox.jit(lambda p, x: p[0] * x + p[1])
        mlp = ox.jit(lambda ps, x: sum(ox.jnp.sum(w * x + b) for w, b in ps))
        static = ox.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
        deep = ox.jit(lambda t: t[0][0][0][0] + t[1])
        return (
            _calls(affine, (xs, ys), xs),
            _calls(affine, [xs, ys], xs),  # a list: its own signature
            _calls(affine, (xs, 2.0), xs),  # a dynamic scalar in the tuple
            _calls(mlp, [(xs, ys), (ys, xs)], xs),
            _calls(static, xs, (2, 3)),
            _calls(static, xs, (3, 2)),
            _calls(deep, ((((xs,),),), ys)),  # deeper than the key walks
            _calls(affine, {0: xs, 1: ys}, xs),  # a dict: jaxlib's flatten
        )

    agree(program, X, Y)


def test_a_tuple_of_arrays_is_keyed_without_the_flatten():
    affine = olympus.jit(lambda p, x: p[0] * x + p[1])
    x, y = olympus.device_put(X), olympus.device_put(Y)
    affine((x, y), x), affine((x, y), x)
    marker = jit_function._PLAIN
    assert [k for k in affine._fast if k[0] is marker] == [
        (marker, tuple, 2, x.aval, y.aval, x.aval)
    ]
    np.testing.assert_array_equal(np.asarray(affine((y, x), y)), Y * Y + X)
    with_scalar = olympus.jit(lambda p, x: p[0] * x + p[1])
    with_scalar((x, 2.0), x), with_scalar((x, 3.0), x)
    assert not any(k[0] is marker for k in with_scalar._fast)
