"""custom_batching.custom_vmap against JAX 0.10.2: a traced call is one
`custom_vmap_call` equation, so vmap applies the user's rule through jit,
nested vmaps and loop bodies; jvp differentiates the rule; grad is refused.

The rule below answers cos where ordinary batching of the body would give
sin, so a program that batches the body instead of calling the rule fails.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from jax_oracle import agree

import olympus
import olympus.numpy as jnp
from olympus.custom_batching import (
    CustomVmapClosureError,
    CustomVmapOutputError,
    CustomVmapReverseModeError,
    custom_vmap,
)

X = np.float32([0.5, 1.0, 2.0])
Y = np.float32([3.0, -1.0, 0.25])
OLYMPUS = types.SimpleNamespace(name="olympus", jnp=jnp)  # for direct calls
OLYMPUS_FULL = types.SimpleNamespace(name="olympus", jnp=jnp, vmap=olympus.vmap)


def _module(ox):
    return olympus.custom_batching if ox.name == "olympus" else _jax_batching()


def _jax_batching():
    import jax.custom_batching

    return jax.custom_batching


def _sin_times(ox, calls=None):
    """sin(x) * y whose vmap rule computes cos(x) * y (and logs its calls)."""

    @_module(ox).custom_vmap
    def f(x, y):
        return ox.jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        if calls is not None:
            calls.append((ox.name, axis_size, list(in_batched)))
        return ox.jnp.cos(x) * y, in_batched[0] or in_batched[1]

    return f


def _same_calls(calls, count):
    ours = [c[1:] for c in calls if c[0] == "olympus"]
    theirs = [c[1:] for c in calls if c[0] == "jax"]
    assert ours == theirs and len(ours) == count, calls


def test_rule_runs_through_jit_and_nested_vmaps():
    calls: list = []

    def program(ox, x, y):
        f = _sin_times(ox, calls)
        return (
            ox.vmap(ox.jit(f))(x, y),
            ox.jit(ox.vmap(f))(x, y),
            ox.vmap(ox.jit(f), in_axes=(0, None))(x, y[0]),
            ox.jit(ox.vmap(ox.vmap(f)))(x[None], y[None]),
            ox.vmap(ox.jit(ox.vmap(f, in_axes=(None, 0))), in_axes=(0, None))(x, y),
            ox.jit(f)(x[0], y[0]),  # no vmap: the function itself
            f(x[1], y[1]),
        )

    agree(program, X, Y)
    _same_calls(calls, 5)  # a nested vmap: the innermost applies the rule


def test_rule_runs_inside_a_scan_body_under_vmap():
    def program(ox, x, y):
        f = _sin_times(ox)

        def body(carry, xy):
            return carry + f(*xy), None

        run = lambda x, y: ox.lax.scan(body, 0.0, (x, y))[0]  # noqa: E731
        return ox.vmap(run)(ox.jnp.stack([x, y]), ox.jnp.stack([y, x]))

    agree(program, X, Y)


def test_mixed_in_batched_pytree_arguments():
    calls: list = []

    def program(ox, x, y):
        @_module(ox).custom_vmap
        def f(pair, s):
            return {"sum": pair["a"] + pair["b"] * s, "s": s}

        @f.def_vmap
        def rule(axis_size, in_batched, pair, s):
            calls.append((ox.name, axis_size, in_batched))
            out = {"sum": pair["a"] * 10 + pair["b"] * s, "s": s}
            batched = in_batched[0]["a"] or in_batched[0]["b"] or in_batched[1]
            return out, {"sum": batched, "s": in_batched[1]}

        axes = ({"a": 0, "b": None}, None)
        return ox.jit(ox.vmap(ox.jit(f), in_axes=axes))({"a": x, "b": y[0]}, y[1])

    agree(program, X, Y)
    _same_calls(calls, 1)
    assert calls[0][2] == [{"a": True, "b": False}, False]


def test_forward_mode_differentiates_the_rule_under_vmap():
    def program(ox, x, y):
        f = _sin_times(ox)
        g = lambda a: f(a, y)  # noqa: E731
        return (
            ox.jvp(ox.vmap(g), (x,), (y,)),
            ox.jvp(ox.jit(ox.vmap(g)), (x,), (y,)),
            ox.vmap(lambda a, t: ox.jvp(g, (a,), (t,)))(x, y),
            # primal batched, tangent not: the rule's jvp is vmapped over it
            ox.vmap(lambda a: ox.jvp(g, (a,), (y,)))(x),
            ox.jvp(lambda a: f(a, y[0]), (x[0],), (1.0,)),
            ox.grad(lambda a: ox.vmap(g)(a).sum())(x),  # the rule is ordinary code
        )

    agree(program, X, Y)


def test_reverse_mode_is_refused_as_in_jax():
    def program(ox, x, y):
        f = _sin_times(ox)
        return ox.grad(lambda a: f(a, y[0]))(x[0])

    agree(program, X, Y)
    f = _sin_times(OLYMPUS)
    f.__name__ = "f"
    for grad in (olympus.grad, lambda g: olympus.grad(olympus.jit(g))):
        with pytest.raises(CustomVmapReverseModeError, match="custom_vmap"):
            grad(lambda a: f(a, 2.0))(1.0)
    agree(lambda ox, x, y: ox.vmap(ox.grad(lambda a: _sin_times(ox)(a, 2.0)))(x), X, Y)


def test_make_olympuspr_shows_the_call_and_vmap_applies_the_rule():
    f = _sin_times(OLYMPUS)
    text = str(olympus.make_olympuspr(lambda x: f(x, 2.0))(1.0))
    assert "custom_vmap_call" in text and "sin" in text and "cos" not in text
    batched = str(olympus.make_olympuspr(olympus.vmap(lambda x: f(x, 2.0)))(X))
    assert "cos" in batched and "custom_vmap_call" not in batched


def test_eager_jit_and_vmap_agree():
    f = _sin_times(OLYMPUS)
    want = np.cos(X) * Y
    np.testing.assert_allclose(olympus.vmap(f)(X, Y), want, rtol=1e-6)
    np.testing.assert_allclose(olympus.vmap(olympus.jit(f))(X, Y), want, rtol=1e-6)
    np.testing.assert_allclose(olympus.jit(f)(X, Y), np.sin(X) * Y, rtol=1e-6)
    np.testing.assert_allclose(f(X, Y), np.sin(X) * Y, rtol=1e-6)
    scaled = olympus.jit(lambda a: f(a, jnp.float32(2.0)))(X)  # batched, no vmap
    np.testing.assert_allclose(scaled, np.sin(X) * 2, rtol=1e-6)


def test_rule_output_structure_is_checked():
    def program(ox, x):
        @_module(ox).custom_vmap
        def f(a):
            return (a, a)

        @f.def_vmap
        def rule(axis_size, in_batched, a):
            return (a, a), True  # one bool for a tuple: refused by JAX too

        return ox.vmap(ox.jit(f))(x)

    agree(program, X)
    bad = custom_vmap(lambda a: (a, a))
    bad.def_vmap(lambda n, b, a: ((a, a), True))
    with pytest.raises(CustomVmapOutputError, match="structure"):
        olympus.vmap(bad)(X)


def test_sequential_vmap_under_jit():
    def program(ox, x):
        g = _module(ox).sequential_vmap(lambda a, s: ox.jnp.sum(a) * s)
        return ox.vmap(ox.jit(g), in_axes=(0, None))(x.reshape(3, 1) * x, 2.0)

    agree(program, X)


def test_the_interpreter_runs_the_function_and_unused_outputs_keep_the_rule():
    from olympus.backends.interpreted import interpret

    @custom_vmap
    def f(x):
        return jnp.sin(x), x * 3

    f.def_vmap(lambda n, b, x: ((jnp.cos(x), x * 3), (True, True)))
    closed = olympus.make_olympuspr(lambda x: f(x)[0])(np.float32(1.0))
    np.testing.assert_allclose(interpret(closed, [np.float32(1.0)])[0], np.sin(1.0))
    # jit's optimizer may prune the unused output; vmap must still see both
    first = olympus.vmap(olympus.jit(lambda x: f(x)[0]))(X)
    np.testing.assert_allclose(first, np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(olympus.jit(olympus.vmap(f))(X)[0], np.cos(X), rtol=1e-6)


def test_a_closed_over_value_batched_by_the_vmap_is_refused():
    def program(ox, x, batched):
        def outer(a, c):
            @_module(ox).custom_vmap
            def f(a):
                return ox.jnp.sin(a) + c

            f.def_vmap(lambda n, b, a: (ox.jnp.cos(a) + c, True))
            return f(a)

        if batched:  # the rule cannot see c's batch axis: both refuse
            return ox.vmap(outer)(x, x)
        return ox.vmap(ox.jit(outer), in_axes=(0, None))(x, x[0])

    agree(program, X, False)
    agree(program, X, True)
    with pytest.raises(CustomVmapClosureError, match="argument"):
        program(OLYMPUS_FULL, X, True)
