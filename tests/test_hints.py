"""Hints (issue #15 item 4): named_scope, olympus.hint, checkpoint_name
policies: printed in the IR, kept by jvp/transpose/vmap/checkpoint and the
optimizer, lowered (op locations, precision config), parsed back."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ad_checkpoint import checkpoint_name, checkpoint_policies as cp
from olympus.ir import parse, serialize


def scoped(x):
    with olympus.named_scope("outer"):
        y = jnp.sin(x)
        with olympus.named_scope("inner"):
            z = y * 2.0
    return jnp.sum(z)


def scopes(closed) -> list[str]:
    """The scope of every equation, sub-programs included."""
    return [
        p.eqns[i].source_info.scope
        for p, i in serialize.walk_eqns(closed)
        if p.eqns[i].source_info is not None
    ]


def lowered(f, *args) -> str:
    return olympus.jit(f).trace(*args).lower().as_text(generic=True)


# ---- named_scope ----------------------------------------------------------------
def test_named_scope_prints_with_source_info_only():
    closed = olympus.make_olympuspr(scoped)(jnp.ones(3))
    text = closed.pretty(source_info=True)
    assert "(scoped) [outer]" in text and "(scoped) [outer/inner]" in text
    lines = text.splitlines()
    assert lines[-2].endswith("(scoped)")  # reduce_sum: outside any scope
    assert "[outer" not in str(closed)  # the plain print is unchanged


def test_named_scope_is_a_decorator():
    @olympus.named_scope("block")
    def f(x):
        return jnp.cos(x)

    assert scopes(olympus.make_olympuspr(f)(1.0)) == ["block"]


def test_named_scope_rejects_a_non_string():
    with pytest.raises(
        TypeError, match="named_scope: the name must be a non-empty str"
    ):
        with olympus.named_scope(3):
            pass


def test_named_scope_survives_grad_and_vmap():
    x = jnp.ones(3)
    grad_scopes = scopes(olympus.make_olympuspr(olympus.grad(scoped))(x))
    # forward sin/cos and the backward mul of each scope keep the forward scope
    assert grad_scopes.count("outer") == 3 and grad_scopes.count("outer/inner") == 2
    program = olympus.make_olympuspr(olympus.grad(scoped))(x).olympuspr
    backward = [e for e in program.eqns if e.source_info.backward]
    assert {e.source_info.scope for e in backward} >= {"outer", "outer/inner"}
    assert scopes(olympus.make_olympuspr(olympus.vmap(scoped))(jnp.ones((2, 3)))) == [
        "outer",
        "outer/inner",
        "",
    ]


def test_named_scope_survives_checkpoint_and_the_optimizer():
    x = jnp.ones(3)
    remat = olympus.make_olympuspr(olympus.grad(olympus.checkpoint(scoped)))(x)
    recompute = [e for e in remat.eqns if e.params.get("name") == "remat(scoped)"]
    assert recompute and "outer" in scopes(recompute[0].params["olympuspr"])
    optimized = olympus.make_olympuspr(olympus.grad(scoped), optimize=True)(x)
    assert "outer" in scopes(optimized) and "outer/inner" in scopes(optimized)


def test_jit_body_scopes_are_relative_and_lowering_prefixes_them():
    inner = olympus.jit(scoped)

    def f(x):
        with olympus.named_scope("model"):
            return inner(x)

    closed = olympus.make_olympuspr(f)(jnp.ones(3))
    assert closed.eqns[0].source_info.scope == "model"
    body = closed.eqns[0].params["olympuspr"]
    assert scopes(body) == ["outer", "outer/inner", ""]
    text = lowered(f, jnp.ones(3))
    assert 'loc("model/outer/sin"(' in text and 'loc("model/outer/inner/mul"(' in text
    assert 'loc("model/reduce_sum"(' in text


def test_lowering_names_ops_and_compiles():
    text = lowered(scoped, jnp.ones(3))
    assert (
        'stablehlo.sine"(%0) : (tensor<3xf32>) -> tensor<3xf32> loc("outer/sin"('
        in text
    )
    assert "reduce" in text and text.count("loc(") < text.count("stablehlo.")
    compiled = olympus.jit(scoped).trace(jnp.ones(3)).lower().compile()
    assert 'op_name="outer/sin"' in compiled.as_text()
    np.testing.assert_allclose(compiled(jnp.ones(3)), 6 * np.sin(1.0), rtol=1e-6)


def test_backward_ops_are_named_transpose_of_their_scope():
    text = lowered(olympus.grad(scoped), jnp.ones(3))
    assert 'loc("transpose(outer/inner)/mul"(' in text


def test_lowering_without_scopes_has_no_locations():
    assert "loc(" not in lowered(lambda x: jnp.sum(jnp.sin(x) * 2.0), jnp.ones(3))


def test_scope_names_are_escaped_in_mlir():
    def f(x):
        with olympus.named_scope('a"b\\c'):
            return jnp.sin(x)

    text = lowered(f, jnp.ones(2))
    assert 'loc("a\\22b\\5Cc/sin"(' in text
    np.testing.assert_allclose(
        olympus.jit(f)(jnp.ones(2)), np.sin(np.ones(2)), rtol=1e-6
    )


def test_scopes_parse_and_serialize_back(tmp_path):
    closed = olympus.make_olympuspr(olympus.grad(scoped))(jnp.ones(3))
    text = closed.pretty(source_info=True)
    assert parse(text).pretty(source_info=True) == text
    path = tmp_path / "p.olympuspr"
    serialize.save(closed, path)
    assert serialize.load(path).pretty(source_info=True) == text


# ---- olympus.hint ---------------------------------------------------------------
def hinted(x):
    return jnp.sum(olympus.hint(x, device="gpu", unroll=4, note="7") * 3.0)


def hint_params(closed) -> list[dict]:
    return [
        p.eqns[i].params
        for p, i in serialize.walk_eqns(closed)
        if p.eqns[i].primitive.name == "hint"
    ]


def test_hint_prints_its_params_and_parses_back():
    closed = olympus.make_olympuspr(hinted)(jnp.ones(3))
    assert 'b:f32[3] = hint[device="gpu" note="7" unroll=4] a' in str(closed)
    again = parse(str(closed))
    assert str(again) == str(closed)
    assert hint_params(again) == [{"device": "gpu", "note": "7", "unroll": 4}]


def test_hint_values_of_every_kind_round_trip():
    def f(x):
        return olympus.hint(x, s="a b", i=-2, r=0.5, b=True, n=None, t=(1, "x"))

    closed = olympus.make_olympuspr(f)(1.0)
    assert hint_params(parse(str(closed))) == hint_params(closed)


@pytest.mark.parametrize("value", [3, "3", 0.5, None, (1, "x")])
def test_a_hint_key_called_name_parses_back_as_written(value):
    """`name` params of other primitives are always strings; a hint quotes its
    strings, so an unquoted `name=3` is the number."""
    closed = olympus.make_olympuspr(lambda x: olympus.hint(x, name=value))(1.0)
    again = parse(str(closed))
    assert hint_params(again) == [{"name": value}]
    assert str(again) == str(closed)


def test_hint_is_the_identity_everywhere():
    x = np.array([0.5, 1.5], np.float32)
    assert olympus.hint(x, device="gpu") is x  # eager: the value itself
    np.testing.assert_allclose(olympus.jit(hinted)(x), 6.0)
    np.testing.assert_allclose(olympus.grad(hinted)(x), [3.0, 3.0])
    tree = olympus.make_olympuspr(lambda t: olympus.hint(t, k=1))({"a": x, "b": x})
    assert len(hint_params(tree)) == 2


def test_hint_survives_jvp_transpose_vmap_checkpoint_optimizer():
    x = jnp.ones(3)
    want = {"device": "gpu", "note": "7", "unroll": 4}
    # grad: the primal's hint, and the cotangent's (transpose of the tangent's)
    assert hint_params(olympus.make_olympuspr(olympus.grad(hinted))(x)) == [want, want]
    jvp = olympus.make_olympuspr(lambda x, t: olympus.jvp(hinted, (x,), (t,)))(x, x)
    assert hint_params(jvp) == [want, want]
    assert hint_params(
        olympus.make_olympuspr(olympus.vmap(hinted))(jnp.ones((2, 3)))
    ) == [want]
    remat = olympus.make_olympuspr(olympus.grad(olympus.checkpoint(hinted)))(x)
    assert want in hint_params(remat)
    optimized = olympus.make_olympuspr(olympus.grad(hinted), optimize=True)(x)
    assert hint_params(optimized) == [want]  # the cotangent's; the primal's is dead


def test_optimizer_keeps_a_used_hint_and_drops_an_unused_one():
    def f(x):
        olympus.hint(x, dead=True)
        return olympus.hint(x, live=True) + 1.0

    assert hint_params(olympus.make_olympuspr(f, optimize=True)(1.0)) == [
        {"live": True}
    ]


def test_precision_hint_sets_the_matmul_precision_config():
    def f(x, w):
        return jnp.sum(olympus.hint(x, precision="highest") @ w)

    x, w = jnp.ones((2, 3)), jnp.ones((3, 4))
    assert hint_params(olympus.make_olympuspr(f)(x, w)) == [{"precision": "HIGHEST"}]
    text = lowered(f, x, w)
    assert (
        "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]"
        in text
    )
    # the backward matmul that reads the hinted value too (w's cotangent)
    grad_text = lowered(olympus.grad(f, argnums=1), x, w)
    assert "#stablehlo<precision HIGHEST>" in grad_text
    np.testing.assert_allclose(olympus.jit(f)(x, w), 24.0)

    # an explicit precision= wins over the hint
    def g(x, w):
        return lax.dot(olympus.hint(x, precision="highest"), w, precision="high")

    assert "#stablehlo<precision HIGHEST>" not in lowered(g, x, w)
    assert "precision_config" not in lowered(lambda x, w: x @ w, x, w)


def test_precision_hint_accepts_lax_precision():
    def f(x):
        return olympus.hint(x, precision=lax.Precision.HIGH)

    assert hint_params(olympus.make_olympuspr(f)(1.0)) == [{"precision": "HIGH"}]


def test_unknown_precision_value_is_a_named_error():
    with pytest.raises(
        lax.HintValueError,
        match=r"olympus.hint: unknown value "
        r"precision='fast' at .*test_hints.py:\d+",
    ):
        olympus.hint(jnp.ones(2), precision="fast")
    with pytest.raises(ValueError, match="precision=None"):
        olympus.make_olympuspr(lambda x: olympus.hint(x, precision=None))(1.0)


def test_unprintable_hint_value_is_a_named_error():
    with pytest.raises(
        lax.HintTypeError,
        match=r"olympus.hint: tile=\[8, 8\] has type list "
        r"at .*test_hints.py:\d+.*str, int, float, bool, None or tuples",
    ):
        olympus.make_olympuspr(lambda x: olympus.hint(x, tile=[8, 8]))(1.0)


# ---- checkpoint_name policies ------------------------------------------------------
def tagged(x):
    a = checkpoint_name(jnp.sin(x), "a")
    b = checkpoint_name(jnp.cos(a), "b")
    return jnp.sum(jnp.sin(b) * a)


def saved_residuals(f, x) -> set[str]:
    """The values the forward checkpoint of grad(f) passes to the backward
    pass, by checkpoint_name (or primitive name when untagged)."""
    program = olympus.make_olympuspr(olympus.grad(f))(x).olympuspr
    forward = program.eqns[0]
    assert forward.primitive.name == "checkpoint"
    used = {v for e in program.eqns[1:] for v in e.invars}
    body = forward.params["olympuspr"].olympuspr
    producers = {v: e for e in body.eqns for v in e.outvars}
    names = set()
    for out, inner in zip(forward.outvars[1:], body.outvars[1:]):
        if out in used:
            eqn = producers[inner]
            while eqn.primitive.name == "pjit":  # a value tagged inside a jitted call
                jitted = eqn.params["olympuspr"].olympuspr
                inner = jitted.outvars[eqn.outvars.index(inner)]
                eqn = next(e for e in jitted.eqns if inner in e.outvars)
            names.add(
                eqn.params["name"]
                if eqn.primitive.name == "name"
                else eqn.primitive.name
            )
    return names


@pytest.mark.parametrize(
    "policy, saved",
    [
        (None, set()),
        (cp.save_only_these_names("a"), {"a"}),
        (cp.save_only_these_names("a", "b"), {"a", "b"}),
        (cp.save_any_names_but_these("a"), {"b"}),
        (cp.save_any_names_but_these(), {"a", "b"}),
    ],
)
def test_checkpoint_name_policies_choose_the_saved_residuals(policy, saved):
    x = np.array([0.3, 0.5], np.float32)
    f = olympus.checkpoint(tagged, policy=policy)
    assert saved_residuals(f, x) == saved
    np.testing.assert_allclose(
        olympus.jit(olympus.grad(f))(x), olympus.grad(tagged)(x), rtol=1e-6
    )


@pytest.mark.parametrize(
    "policy, saved",
    [
        (None, set()),
        (cp.save_only_these_names("a"), {"a"}),
        # b is no residual of the jitted call, but its readers' are: saved as JAX does
        (cp.save_only_these_names("b"), {"b"}),
    ],
)
def test_name_policies_see_tags_inside_a_jitted_call(policy, saved):
    x = np.array([0.3, 0.5], np.float32)
    jitted = olympus.jit(tagged)
    f = olympus.checkpoint(lambda x: jitted(x), policy=policy)
    assert saved_residuals(f, x) == saved
    np.testing.assert_allclose(olympus.grad(f)(x), olympus.grad(tagged)(x), rtol=1e-6)
    np.testing.assert_allclose(
        olympus.jit(olympus.grad(f))(x), olympus.grad(tagged)(x), rtol=1e-6
    )


def test_scopes_inside_control_flow_regions_lower_and_run():
    def body(c, x):
        with olympus.named_scope("step"):
            return c + jnp.sin(x), c

    def f(xs):
        with olympus.named_scope("loop"):
            c, _ = lax.scan(body, 0.0, xs)
        return lax.cond(c > 0, lambda c: c * 2.0, lambda c: c, c)

    xs = jnp.arange(3.0)
    text = lowered(f, xs)
    assert 'loc("loop/step/sin"(' in text and 'loc("loop/scan"(' in text
    want = 2 * np.sum(np.sin(np.arange(3.0)))
    np.testing.assert_allclose(olympus.jit(f)(xs), want, rtol=1e-6)
    grad_text = lowered(olympus.grad(f), xs)
    assert "transpose(loop/step)/" in grad_text
    np.testing.assert_allclose(
        olympus.jit(olympus.grad(f))(xs), 2 * np.cos(np.arange(3.0)), rtol=1e-6
    )


# ---- hints between the ops of a stable rewrite ------------------------------------
TAGS = {
    "checkpoint_name": lambda v: checkpoint_name(v, "e"),
    "hint": lambda v: olympus.hint(v, device="gpu"),
    "both": lambda v: olympus.hint(checkpoint_name(v, "e"), device="gpu"),
}
X_LARGE = np.array([1000.0, 100.0, -100.0, 0.5], np.float32)
X_MODERATE = np.linspace(-3.0, 2.5, 8).astype(np.float32)


def _softplus64(x):
    return np.logaddexp(0.0, np.asarray(x, np.float64))


def _sigmoid64(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, np.float64)))


def _all_eqns(closed):
    return [p.eqns[i] for p, i in serialize.walk_eqns(closed)]


def _rules(closed) -> set[str]:
    return {
        str(e.source_info.rewrite)
        for e in _all_eqns(closed)
        if e.source_info is not None and e.source_info.rewrite is not None
    }


NAIVE_TAGGED = {
    # tag -> (f, closed form, the rule that fires)
    "log(1 + tag(exp(x)))": (
        lambda tag: lambda x: jnp.log(1 + tag(jnp.exp(x))),
        _softplus64,
        "log(1 + exp(x)) -> softplus",
    ),
    "log1p(tag(exp(x)))": (
        lambda tag: lambda x: jnp.log1p(tag(jnp.exp(x))),
        _softplus64,
        "log1p(exp(x)) -> softplus_log1p",
    ),
    "tag(exp(x)) / (1 + tag(exp(x)))": (
        lambda tag: lambda x: (lambda e: e / (1 + e))(tag(jnp.exp(x))),
        _sigmoid64,
        "exp(x) / (1 + exp(x)) -> logistic_ratio",
    ),
}


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("program", NAIVE_TAGGED)
def test_stable_rewrites_match_through_a_hint(program, tag):
    """A tag between exp and log is the identity on its value: the stable row
    fires through it, the result at large x is the closed form (optimizer off:
    inf or NaN, as in JAX), the provenance names the rule and the hint, and at
    moderate x the optimizer on and off agree."""
    make, closed_form, rule = NAIVE_TAGGED[program]
    f = make(TAGS[tag])
    got = np.asarray(olympus.jit(f)(X_LARGE))
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, closed_form(X_LARGE), rtol=1e-6, atol=1e-30)
    with olympus.config.override("olympus_optimize", False):
        assert not np.all(np.isfinite(np.asarray(olympus.jit(f)(X_LARGE))))
        naive = np.asarray(olympus.jit(f)(X_MODERATE))
    np.testing.assert_allclose(olympus.jit(f)(X_MODERATE), naive, rtol=2e-6)
    optimized = olympus.make_olympuspr(f, optimize=True)(X_LARGE)
    printed = optimized.pretty(source_info=True)
    assert f"rewritten by stable: {rule} through " in printed
    hints = {"checkpoint_name": ["name[name=e]"], "hint": ['hint[device="gpu"]']}
    for text in hints.get(tag, hints["checkpoint_name"] + hints["hint"]):
        assert text in printed
    assert parse(printed).pretty(source_info=True) == printed


def test_a_tag_read_elsewhere_stays_on_its_value():
    """The rewrite reads through the tag; the tagged value, which the program
    also returns, is still computed and still tagged in the optimized IR."""

    def f(x):
        e = checkpoint_name(jnp.exp(x), "e")
        return jnp.log(1 + e), e

    optimized = olympus.make_olympuspr(f, optimize=True)(X_LARGE)
    assert "name[name=e]" in str(optimized)
    (tag,) = [e for e in optimized.eqns if e.primitive.name == "name"]
    assert optimized.olympuspr.outvars[1] is tag.outvars[0]
    assert tag.invars[0] in [
        e.outvars[0] for e in optimized.eqns if e.primitive.name == "exp"
    ]
    value, e = olympus.jit(f)(X_LARGE)
    np.testing.assert_allclose(value, _softplus64(X_LARGE), rtol=1e-6, atol=1e-30)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(e, np.exp(X_LARGE), rtol=1e-6, atol=1e-30)


def test_a_precision_hint_is_not_seen_through():
    """`precision` changes what the matmuls reading the value do, so a rewrite
    that bypassed it could drop it: patterns stop at such a hint."""
    f = lambda x: jnp.log(1 + olympus.hint(jnp.exp(x), precision="highest"))  # noqa: E731
    optimized = olympus.make_olympuspr(f, optimize=True)(X_LARGE)
    assert [e.primitive.name for e in optimized.eqns] == ["exp", "hint", "log1p"]


def _saved_tag_softplus(policy):
    return olympus.checkpoint(
        lambda x: jnp.log(1 + checkpoint_name(jnp.exp(x), "e")), policy=policy
    )


@pytest.mark.parametrize(
    "policy",
    [cp.save_only_these_names("e"), cp.save_any_names_but_these("other"), None],
    ids=["save_only_these_names", "save_any_names_but_these", "no policy"],
)
def test_gradient_of_a_saved_tagged_exp_in_a_checkpoint_is_finite(policy):
    """Under a policy that saves the tagged exp, the backward pass reads the
    saved e and computes (1 / (1 + e)) * e: NaN at e = inf (JAX too). The
    optimizer redoes exp from the checkpoint's input in the transposed part,
    where the stable row takes the product to logistic(x); the saved e is
    then read by nobody and dropped with its tag. Value and gradient are the
    closed form, agree with the optimizer off at moderate x and with finite
    differences."""
    f = _saved_tag_softplus(policy)
    loss = olympus.jit(olympus.value_and_grad(lambda x: jnp.sum(f(x))))
    value, grad = loss(X_LARGE)
    np.testing.assert_allclose(value, _softplus64(X_LARGE).sum(), rtol=1e-6)
    assert np.all(np.isfinite(np.asarray(grad)))
    np.testing.assert_allclose(grad, _sigmoid64(X_LARGE), rtol=1e-6, atol=1e-30)
    with olympus.config.override("olympus_optimize", False):
        assert not np.all(np.isfinite(np.asarray(loss(X_LARGE)[1])))
        naive = loss(X_MODERATE)
    on = loss(X_MODERATE)
    np.testing.assert_allclose(on[0], naive[0], rtol=1e-6)
    np.testing.assert_allclose(on[1], naive[1], rtol=1e-5, atol=1e-7)
    total, eps = olympus.jit(lambda x: jnp.sum(f(x))), 1e-2
    for i in range(X_MODERATE.size):
        up, down = X_MODERATE.copy(), X_MODERATE.copy()
        up[i] += eps
        down[i] -= eps
        difference = (float(total(up)) - float(total(down))) / (2 * eps)
        np.testing.assert_allclose(difference, on[1][i], rtol=2e-3, atol=2e-3)
    # Nothing runs twice: no more exp than the traced program has.
    traced = olympus.make_olympuspr(olympus.grad(lambda x: jnp.sum(f(x))))(X_LARGE)
    optimized = olympus.make_olympuspr(
        olympus.grad(lambda x: jnp.sum(f(x))), optimize=True
    )(X_LARGE)
    count = lambda c: [e.primitive.name for e in _all_eqns(c)].count("exp")  # noqa: E731
    assert count(optimized) <= count(traced)
    assert any("logistic" in rule for rule in _rules(optimized))


def test_a_saved_tag_the_rows_cannot_use_stays_saved():
    """The transposed part is only rebuilt from the checkpoint's input when a
    row then reads none of the redone steps: sin(tanh(x)) with the tanh saved
    keeps reading the saved, tagged tanh (one tanh, the forward's)."""
    f = olympus.checkpoint(
        lambda x: jnp.sin(checkpoint_name(jnp.tanh(x), "t")),
        policy=cp.save_only_these_names("t"),
    )
    grad = olympus.grad(lambda x: jnp.sum(f(x)))
    optimized = olympus.make_olympuspr(grad, optimize=True)(X_MODERATE)
    prims = [e.primitive.name for e in _all_eqns(optimized)]
    assert prims.count("tanh") == 1 and "name" in prims
    with olympus.config.override("olympus_optimize", False):
        naive = olympus.jit(grad)(X_MODERATE)
    np.testing.assert_allclose(olympus.jit(grad)(X_MODERATE), naive, rtol=1e-6)
