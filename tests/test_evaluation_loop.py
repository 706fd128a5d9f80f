"""The one evaluation loop (olympus/ir/evaluation.py): the reference
interpreter and the interpreter tier are rule tables over it, the
higher-order primitives are evaluated once per kind with the caller's
table (so the tier's own rules run inside loop and branch bodies), and the
tier writes only into memory it owns, never into a caller's array."""

from __future__ import annotations

from collections import ChainMap

import numpy as np
import pytest
from jax_oracle import OLYMPUS, agree

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.backends import interpreted
from olympus.backends.interpreted import interpret
from olympus.backends.reference import evaluate, reference_rules
from olympus.ir.evaluation import Evaluator, MissingRule, program_rules, run


def _rng():
    return np.random.default_rng(0)


def _x(*shape):
    return _rng().normal(size=shape).astype(np.float32)


def _by_the_tier(ox, f, *args):
    """`f(*args)` (a tuple) by the interpreter tier under olympus, by
    jax.jit under JAX."""
    if ox.name != "olympus":
        return ox.jit(f)(*args)
    return tuple(interpret(olympus.make_olympuspr(f)(*args), list(args)))


def _scan_cond_while(ox):
    """A matmul in a scan body, in a cond branch and in a while body."""

    def f(w, x, p):
        def step(c, row):
            c = ox.jnp.tanh(c @ w + row)
            return c, ox.jnp.sum(c)

        c, ys = ox.lax.scan(step, x[0], x, reverse=True)
        picked = ox.lax.cond(p > 0, lambda v: v @ w, lambda v: v * 2.0, c)
        _, total = ox.lax.while_loop(
            lambda s: s[0] < 2, lambda s: (s[0] + 1, s[1] @ w), (0, picked)
        )
        return c, ys, picked, total

    return f


def test_the_tiers_matmul_rule_runs_inside_loop_and_branch_bodies(monkeypatch):
    """A spy on the tier's BLAS dot_general rule: it runs once per scan
    step, in the cond branch taken and once per while iteration; the
    reference einsum rule never does."""
    w, x = _x(8, 8) / 4, _x(5, 8)
    calls, reference_calls = [], []
    fast, slow = interpreted._dot_general, reference_rules["dot_general"]
    monkeypatch.setitem(
        interpreted._rules.maps[0],
        "dot_general",
        lambda *a, **p: calls.append(1) or fast(*a, **p),
    )
    monkeypatch.setitem(
        reference_rules,
        "dot_general",
        lambda *a, **p: reference_calls.append(1) or slow(*a, **p),
    )
    f = _scan_cond_while(OLYMPUS)
    closed = olympus.make_olympuspr(f)(w, x, np.float32(1.0))
    interpret(closed, [w, x, np.float32(1.0)])
    assert len(calls) == 5 + 1 + 2 and not reference_calls
    calls.clear()
    interpret(closed, [w, x, np.float32(-1.0)])  # the branch without a matmul
    assert len(calls) == 5 + 2 and not reference_calls


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_the_tier_agrees_with_jax_on_loops_and_branches(p):
    w, x = _x(8, 8) / 4, _x(5, 8)
    agree(
        lambda ox, *a: _by_the_tier(ox, _scan_cond_while(ox), *a),
        w,
        x,
        np.float32(p),
        rtol=1e-5,
        atol=1e-5,
    )


def test_the_tier_agrees_with_jax_on_calls_switches_and_vmap():
    """pjit, checkpoint, custom_jvp, an out-of-range switch index (the last
    branch) and a vmapped scan, by the tier, against jax.jit; and eager,
    jit and the tier give one answer."""

    def f(ox):
        @ox.custom_jvp
        def softplus(v):
            return ox.jnp.logaddexp(v, 0.0)

        softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * ox.nn.sigmoid(p[0])))

        def g(x, i):
            a = ox.jit(lambda v: v * 3.0)(x)
            b = ox.checkpoint(lambda v: ox.jnp.sin(v) @ v.T)(a)
            c = softplus(b)
            d = ox.lax.switch(i, [lambda v: v + 1, lambda v: v - 1], c)
            e = ox.vmap(lambda r: ox.lax.cumsum(r))(d)
            return c, d, e

        return g

    x = _x(4, 6)
    for i in (np.int32(0), np.int32(7)):
        agree(lambda ox, *a: _by_the_tier(ox, f(ox), *a), x, i, rtol=1e-5, atol=1e-5)
        tier = _by_the_tier(OLYMPUS, f(OLYMPUS), x, i)
        for other in (f(OLYMPUS)(x, i), olympus.jit(f(OLYMPUS))(x, i)):
            for a, b in zip(tier, other):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_any_evaluator_runs_its_own_rules_in_every_body():
    """An evaluator built from a table: its `sin` rule runs inside pjit,
    checkpoint, custom_jvp, cond, while and scan bodies, and the result is
    the reference interpreter's."""
    seen = []

    def sin(v):
        seen.append(1)
        return np.sin(v)

    evaluator = Evaluator(ChainMap({"sin": sin}, reference_rules))

    @olympus.custom_jvp
    def h(v):
        return jnp.sin(v)

    h.defjvp(lambda p, t: (h(p[0]), t[0]))

    def f(x):
        x = olympus.jit(jnp.sin)(x)
        x = olympus.checkpoint(jnp.sin)(x)
        x = h(x)
        x = lax.cond(True, jnp.sin, jnp.cos, x)
        x = lax.fori_loop(0, 3, lambda i, v: jnp.sin(v), x)
        return lax.scan(lambda c, r: (c, jnp.sin(r)), 0.0, x)[1]

    x = _x(4)
    closed = olympus.make_olympuspr(f)(x)
    (got,) = run(evaluator, closed.olympuspr, closed.consts, [x])
    assert len(seen) == 1 + 1 + 1 + 1 + 3 + 4
    np.testing.assert_array_equal(got, evaluate(closed, x)[0])
    assert set(program_rules) >= {"cond", "while", "scan", "pjit", "checkpoint"}


def test_a_missing_rule_names_the_primitive_and_the_evaluator():
    closed = olympus.make_olympuspr(lambda x: lax.cond(True, jnp.exp, jnp.sin, x))(
        np.float32(1.0)
    )
    evaluator = Evaluator(
        {
            "sin": np.sin,
            "convert_element_type": reference_rules["convert_element_type"],
        },
        name="partial",
    )
    with pytest.raises(MissingRule, match="no partial rule for the primitive exp"):
        run(evaluator, closed.olympuspr, closed.consts, [np.float32(1.0)])


def _dies_at_a_ufunc(ox):
    """`x` (the caller's) is read for the last time by elementwise ops of
    its own shape: a donor by reference counts, never by ownership."""

    def f(x):
        y = ox.jnp.exp(x)
        return (y * 2.0 + ox.jnp.exp(y),)

    return f


def test_a_callers_array_is_never_written(monkeypatch):
    """Ufuncs write only into arrays the tier allocated: never into an
    argument, even one the caller holds no other reference to (whose
    memory a spy on `_donor` compares by address), and the arguments the
    caller keeps are unchanged."""
    donated = []
    donor = interpreted._donor

    def spy(frame, eqn):
        found = donor(frame, eqn)
        if found is not None:
            donated.append(found[1].ctypes.data)
        return found

    monkeypatch.setattr(interpreted, "_donor", spy)
    shape = (128, 256)
    closed = olympus.make_olympuspr(_dies_at_a_ufunc(OLYMPUS))(
        np.ones(shape, np.float32)
    )
    addresses = []

    def argument():
        x = interpreted._aligned_empty(shape, np.float32)  # aligned, owned by no one
        x[...] = 0.5
        addresses.append(x.ctypes.data)
        return x

    (out,) = interpreted.run_numpy(closed.olympuspr, closed.consts, [argument()])
    np.testing.assert_allclose(out, np.exp(0.5) * 2 + np.exp(np.exp(0.5)), rtol=1e-6)
    assert donated and addresses[0] not in donated  # intermediates only
    kept = argument()
    got = interpret(closed, [kept])
    np.testing.assert_array_equal(kept, 0.5)
    np.testing.assert_allclose(got[0], out, rtol=1e-6)
    x = _x(*shape)
    agree(lambda ox, x: _by_the_tier(ox, _dies_at_a_ufunc(ox), x), x, rtol=1e-5)


def test_an_owned_value_a_live_view_reads_is_not_written():
    """`y` dies at `y + 1` while its transpose lives on: it is no longer
    owned once the view is made, so the ufunc allocates."""

    def f(x):
        y = jnp.exp(x)
        t = y.T
        z = y + 1.0
        return t * 1.0, z

    x = _x(128, 256)
    got = interpret(olympus.make_olympuspr(f)(x), [x])
    np.testing.assert_allclose(got[0], np.exp(x).T, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.exp(x) + 1, rtol=1e-6)


def test_constant_folding_applies_its_table_of_exact_reference_rules(monkeypatch):
    """Folding computes an equation of constants with the evaluation loop's
    `apply_eqn` and its own table (exact primitives only): a spy on its
    `add` rule runs, and `exp` (not exact) is never in the table."""
    from olympus.optimizer import fold

    seen = []
    add = fold._folding.rules["add"]
    monkeypatch.setitem(
        fold._folding.rules, "add", lambda *a: seen.append(1) or add(*a)
    )
    assert "exp" not in fold._folding.rules and set(fold._folding.rules) <= set(
        fold.EXACT
    )
    closed = olympus.make_olympuspr(
        lambda x: x + (jnp.float32(2.0) + jnp.float32(3.0)), optimize=True
    )(np.float32(1.0))
    assert seen and "5.0" in str(closed)
    agree(lambda ox, x: ox.jit(lambda v: v + (ox.jnp.float32(2.0) + 3.0))(x), 1.0)


def test_the_stepper_steps_into_bodies_by_the_shared_rules(monkeypatch):
    """The step debugger enters a scan through the loop's scan rule (a spy
    sees its value reader, not a NumPy evaluator's), each iteration a frame
    of its own, and finishes with jit's values."""
    from olympus.backends.stepping import ProgramStepper

    readers = []
    scan = program_rules["scan"]

    def spy(ops, eqn, values):
        readers.append(ops)
        return (yield from scan(ops, eqn, values))

    monkeypatch.setitem(program_rules, "scan", spy)

    def f(xs):
        return lax.scan(lambda c, x: (c + jnp.sin(x), c * 2.0), 0.0, xs)

    xs = _x(3)
    stepper = ProgramStepper(olympus.make_olympuspr(f)(xs), [xs])
    while stepper.current.eqn.primitive.name != "scan":
        stepper.step()
    stepper.step_into()
    assert stepper.path[-1].startswith("scan iteration 0")
    assert len(readers) == 1 and not isinstance(readers[0], Evaluator)
    outs = stepper.finish()
    for got, want in zip(outs, olympus.tree_util.tree_leaves(olympus.jit(f)(xs))):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    evaluate(olympus.make_olympuspr(f)(xs), xs)  # the reference: an Evaluator
    assert isinstance(readers[-1], Evaluator)


def test_an_output_a_body_returns_twice_is_not_written():
    """A jitted callee returns one array twice: the two outer variables
    share it, so neither is written into where the other lives on."""

    def f(ox):
        def body(v):
            y = ox.jnp.exp(v)
            return y, y

        twice = ox.jit(body)

        def g(x):
            a, b = twice(x)
            return b, a + 1.0

        return g

    x = _x(128, 256)
    closed = olympus.make_olympuspr(f(OLYMPUS))(x)
    assert "pjit" in str(closed)
    got = interpret(closed, [x])
    np.testing.assert_allclose(got[0], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.exp(x) + 1, rtol=1e-6)
    agree(lambda ox, x: _by_the_tier(ox, f(ox), x), x, rtol=1e-5)


def test_a_result_fed_back_as_a_constant_is_never_written():
    """A tier result (sharing memory with its Array) captured by a new
    program, which passes it through a callee to a ufunc where it dies: it
    belongs to the earlier interpretation, so it is not written."""
    x = np.ones((256, 256), np.float32)
    (r1,) = interpret(olympus.make_olympuspr(lambda a: a @ a)(x), [x])

    def g(y):
        return (olympus.jit(lambda: r1)() + y,)

    (got,) = interpret(olympus.make_olympuspr(g)(x), [x])
    np.testing.assert_array_equal(np.asarray(r1), 256.0)
    np.testing.assert_array_equal(np.asarray(got), 257.0)
    assert not interpreted._allocated(np.asarray(r1))
