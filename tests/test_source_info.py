"""Source lines survive transforms: every equation of a transformed program
names the line of the user's function it came from (not a line inside olympus,
not the line that called the transform, not None)."""

from __future__ import annotations

import inspect
import os

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import lax

X = np.array([0.5, -1.0, 2.0], np.float32)


def f(x):
    y = jnp.sin(x) * x
    z = jnp.where(x > 0, y, x**2)
    return jnp.sum(z * y) + jnp.max(x)


def looped(x):
    def body(c, r):
        return c * jnp.cos(r) + r, c * r

    c, ys = lax.scan(body, 1.0, x)
    branch = lax.cond(c > 0, lambda v: v * 2.0, lambda v: jnp.exp(v), ys)
    return jnp.sum(branch) + c


def _lines_of(fun) -> range:
    lines, start = inspect.getsourcelines(fun)
    return range(start, start + len(lines))


def _sub_programs(value):
    if hasattr(value, "olympuspr") and hasattr(value.olympuspr, "eqns"):
        yield value.olympuspr
    elif hasattr(value, "eqns"):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _sub_programs(v)


def _all_eqns(olympuspr):
    for eqn in olympuspr.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in _sub_programs(value):
                yield from _all_eqns(sub)


def _assert_lines_in(closed, fun) -> int:
    """Every equation (sub-programs included) points at a line of `fun`."""
    lines, count = _lines_of(fun), 0
    for eqn in _all_eqns(closed.olympuspr):
        where = eqn.source_info
        assert where is not None, eqn
        assert (where.file, where.line in lines) == (__file__, True), (eqn, where)
        count += 1
    return count


def test_grad():
    assert _assert_lines_in(olympus.make_olympuspr(olympus.grad(f))(X), f) > 10


def test_vmap():
    assert (
        _assert_lines_in(olympus.make_olympuspr(olympus.vmap(f))(np.stack([X, X])), f)
        > 5
    )


def test_jvp_and_linearize():
    jvp = olympus.make_olympuspr(lambda x: olympus.jvp(f, (x,), (x,)))(X)
    assert _assert_lines_in(jvp, f) > 10
    lin = olympus.make_olympuspr(lambda x: olympus.linearize(f, x)[1](x))(X)
    assert _assert_lines_in(lin, f) > 10


def test_grad_of_vmap_and_vmap_of_grad():
    per_example = olympus.grad(lambda x: olympus.vmap(f)(x).sum())
    program = olympus.make_olympuspr(per_example)(np.stack([X, X]))
    for eqn in _all_eqns(program.olympuspr):  # the lambda's own `.sum()` is on its line
        assert eqn.source_info.file == __file__
    assert (
        _assert_lines_in(
            olympus.make_olympuspr(olympus.vmap(olympus.grad(f)))(np.stack([X, X])), f
        )
        > 10
    )


def test_grad_through_a_jitted_function_keeps_the_body_lines():
    program = olympus.make_olympuspr(olympus.grad(olympus.jit(f)))(X)
    bodies = [
        eqn.params["olympuspr"]
        for eqn in program.olympuspr.eqns
        if eqn.primitive.name == "pjit"
    ]
    assert len(bodies) == 2  # known forward part and the transposed part
    assert sum(_assert_lines_in(body, f) for body in bodies) > 10


def test_control_flow_under_grad_and_vmap():
    assert (
        _assert_lines_in(olympus.make_olympuspr(olympus.grad(looped))(X), looped) > 10
    )
    assert (
        _assert_lines_in(
            olympus.make_olympuspr(olympus.vmap(looped))(np.stack([X, X])), looped
        )
        > 5
    )


def test_pretty_prints_the_users_lines():
    text = olympus.make_olympuspr(olympus.grad(f))(X).pretty(source_info=True)
    first = _lines_of(f).start
    assert f"test_source_info.py:{first + 1}" in text  # y = jnp.sin(x) * x
    assert f"test_source_info.py:{first + 3}" in text  # return ...
    package = os.path.dirname(os.path.abspath(olympus.__file__)) + os.sep
    assert package not in text  # no line inside olympus itself
    assert "/olympus/tracer/" not in text and "/olympus/lax/" not in text


def test_values_unchanged():
    g = olympus.grad(f)(X)
    eps = 1e-3
    numeric = [
        (f(X + eps * e) - f(X - eps * e)) / (2 * eps)
        for e in np.eye(3, dtype=np.float32)
    ]
    np.testing.assert_allclose(np.asarray(g), np.asarray(numeric), rtol=1e-2, atol=1e-2)


def looped_while(x):
    def body(carry):
        i, v = carry
        return i + 1, jnp.sin(v) * 1.5

    return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1].sum()


def test_loops_under_jvp_and_vmap_keep_body_lines():
    jvp = olympus.make_olympuspr(lambda x: olympus.jvp(looped_while, (x,), (x,)))(X)
    assert _assert_lines_in(jvp, looped_while) > 5
    scan_jvp = olympus.make_olympuspr(lambda x: olympus.jvp(looped, (x,), (x,)))(X)
    assert _assert_lines_in(scan_jvp, looped) > 10
    batched = olympus.make_olympuspr(olympus.vmap(looped_while))(np.stack([X, X]))
    assert _assert_lines_in(batched, looped_while) > 3
