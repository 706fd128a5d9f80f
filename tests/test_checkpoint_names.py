"""checkpoint_name policies see tags inside jitted calls, cond branches and
scan bodies (issue #15 item 4): a tagged value that a jitted call, cond or
scan inside the checkpoint does not return is still saved by
`save_only_these_names`, and the backward pass does not recompute it (as
JAX's policies see into pjit bodies, branches and loop bodies)."""

from __future__ import annotations

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ad_checkpoint import checkpoint_name, checkpoint_policies as cp
from olympus.test_util import check_grads


def _calls(closed):
    """`closed`'s equations, those inside jitted calls and branches included."""
    for eqn in closed.olympuspr.eqns:
        yield eqn
        if eqn.primitive.name == "pjit":
            yield from _calls(eqn.params["olympuspr"])
        for branch in eqn.params.get("branches", ()):
            yield from _calls(branch)
        if eqn.primitive.name == "scan":
            yield from _calls(eqn.params["olympuspr"])


def _parts(f, x) -> dict:
    """grad(f)'s checkpoint equations by role: the forward `f`, the
    recomputation `remat` and the transposed linear part `transpose`; and
    "read", the variables that equations after the forward read."""
    program = olympus.make_olympuspr(olympus.grad(f))(x).olympuspr
    parts = {"read": {v for e in program.eqns[1:] for v in e.invars}}
    for eqn in program.eqns:
        if eqn.primitive.name == "checkpoint":
            parts[eqn.params["name"].split("(")[0]] = eqn
    return parts


_H_POLICIES = (
    ("none", None),
    ("h", cp.save_only_these_names("h")),
    ("not h", cp.save_any_names_but_these("h")),
)


def _checkpointed(f, x, policies=_H_POLICIES):
    """(label, checkpoint(f, policy)) for each policy, once its gradient (eager
    and jitted) was checked against f's own."""
    want = np.asarray(olympus.grad(f)(x))
    for label, policy in policies:
        g = olympus.checkpoint(f, policy=policy)
        np.testing.assert_allclose(np.asarray(olympus.grad(g)(x)), want, rtol=1e-12)
        np.testing.assert_allclose(
            np.asarray(olympus.jit(olympus.grad(g))(x)), want, rtol=1e-12
        )
        yield label, g


def _recomputed(f, x, op: str) -> int:
    """How many `op` equations the backward recomputation of grad(f) runs."""
    remat = _parts(f, x).get("remat")
    if remat is None:
        return 0
    return sum(e.primitive.name == op for e in _calls(remat.params["olympuspr"]))


def _saved_names(f, x) -> set[str]:
    """The checkpoint_name tags among the residuals that the forward pass of
    grad(f) hands to the backward pass (through jitted calls' outputs)."""
    parts = _parts(f, x)
    forward = parts[[k for k in parts if k not in ("read", "remat", "transpose")][0]]
    body = forward.params["olympuspr"].olympuspr
    producers = {v: e for e in body.eqns for v in e.outvars}
    names = set()
    for out, inner in zip(forward.outvars, body.outvars):
        made = producers.get(inner) if out in parts["read"] else None
        while made is not None and made.primitive.name == "pjit":
            jitted = made.params["olympuspr"].olympuspr
            inner = jitted.outvars[made.outvars.index(inner)]
            made = next((e for e in jitted.eqns if inner in e.outvars), None)
        if made is not None and made.primitive.name == "name":
            names.add(made.params["name"])
    return names


def _inner(x):  # h is read inside the call only: no output of the call
    h = checkpoint_name(jnp.sin(x) * 2.0, "h")
    return jnp.sum(jnp.cos(h) * jnp.exp(x))


def _jitted(x):
    return olympus.jit(_inner)(x)


def _jitted_twice(x):  # a jitted call inside a jitted call
    return olympus.jit(lambda x: olympus.jit(_inner)(x) * 2.0)(x)


def _jitted_two_tags(x):  # g is returned by the call, h is not
    def inner(x):
        g = checkpoint_name(jnp.tanh(x), "g")
        h = checkpoint_name(jnp.sin(g) * 2.0, "h")
        return jnp.cos(h) * g, g

    y, g = olympus.jit(inner)(x)
    return jnp.sum(y * jnp.sin(g))


@pytest.mark.parametrize("f", [_jitted, _jitted_twice])
def test_a_tag_inside_a_jitted_call_is_saved_not_recomputed(x64, f):
    x = np.array([0.3, -0.5, 1.2])
    sins, saved = {}, {}
    policies = _H_POLICIES + (
        ("all names", cp.save_any_names_but_these()),
        ("other", cp.save_only_these_names("other")),
    )
    for label, g in _checkpointed(f, x, policies):
        sins[label] = _recomputed(g, x, "sin")
        saved[label] = _saved_names(g, x)
    # Recomputed: sin x (to remake h) and sin h (cos h's tangent), or only
    # sin h when h is saved.
    assert sins == {"none": 2, "h": 1, "not h": 2, "all names": 1, "other": 2}
    assert saved == {
        "none": set(),
        "h": {"h"},
        "not h": set(),
        "all names": {"h"},
        "other": set(),
    }
    check_grads(olympus.checkpoint(f, policy=cp.save_only_these_names("h")), (x,), 1)


def test_each_tag_of_a_jitted_call_follows_the_policy(x64):
    x = np.array([0.3, -0.5, 1.2])
    want = np.asarray(olympus.grad(_jitted_two_tags)(x))
    found = {}
    for names in ((), ("g",), ("h",), ("g", "h")):
        policy = cp.save_only_these_names(*names)
        g = olympus.checkpoint(_jitted_two_tags, policy=policy)
        np.testing.assert_allclose(np.asarray(olympus.grad(g)(x)), want, rtol=1e-12)
        found[names] = (
            _saved_names(g, x),
            _recomputed(g, x, "tanh"),
            _recomputed(g, x, "sin"),
        )
    # tanh (g) is rerun unless g is saved (tanh's own tangent reads the saved
    # g then); sin g (under h, and read outside the call) and sin h are rerun
    # unless h is saved, which leaves sin h and the outer sin g.
    assert found == {
        (): (set(), 1, 3),
        ("g",): ({"g"}, 0, 3),
        ("h",): ({"h"}, 1, 2),
        ("g", "h"): ({"g", "h"}, 0, 2),
    }


def test_the_recomputed_call_takes_the_saved_tag(x64):
    """The backward pass's copy of the jitted call reads the saved h as an
    input and remakes neither h nor sin x; the forward call returns h."""
    x = np.array([0.3, -0.5, 1.2])
    g = olympus.checkpoint(_jitted, policy=cp.save_only_these_names("h"))
    parts = _parts(g, x)
    remat = parts["remat"].params["olympuspr"]
    (call,) = [e for e in remat.olympuspr.eqns if e.primitive.name == "pjit"]
    body = call.params["olympuspr"].olympuspr
    assert len(body.invars) == 2  # x and the saved h
    assert sorted(e.primitive.name for e in body.eqns) == ["cos", "cos", "exp", "sin"]
    (sin,) = [e for e in body.eqns if e.primitive.name == "sin"]
    assert sin.invars[0] is body.invars[1]  # sin h, of the saved h
    assert not [e for e in _calls(remat) if e.primitive.name == "name"]


def test_vmap_of_grad_with_a_tag_inside_a_jitted_call(x64):
    xs = np.random.default_rng(0).uniform(-1, 1, (4, 3))
    g = olympus.checkpoint(_jitted_twice, policy=cp.save_only_these_names("h"))
    got = olympus.vmap(olympus.grad(g))(xs)
    want = np.stack([np.asarray(olympus.grad(_jitted_twice)(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def _in_cond(x):  # h is made and read inside a branch: no output of the cond
    def tagged(x):
        h = checkpoint_name(jnp.sin(x) * 2.0, "h")
        return jnp.cos(h) * jnp.exp(x)

    return jnp.sum(lax.cond(jnp.sum(x) > 0.0, tagged, lambda x: x * 3.0, x))


def _in_jitted_cond(x):
    return olympus.jit(_in_cond)(x)


@pytest.mark.parametrize("f", [_in_cond, _in_jitted_cond])
@pytest.mark.parametrize("sign", [1.0, -1.0])  # the tagging branch taken or not
def test_a_tag_inside_a_cond_branch_is_saved_not_recomputed(x64, f, sign):
    x = sign * np.array([0.3, 0.5, 1.2])
    sins = {label: _recomputed(g, x, "sin") for label, g in _checkpointed(f, x)}
    # The branch's recomputation: sin x and sin h, or sin h from the saved h.
    assert sins == {"none": 2, "h": 1, "not h": 2}
    check_grads(olympus.checkpoint(f, policy=cp.save_only_these_names("h")), (x,), 1)


def _in_scan(x):  # h is made and read inside the body, a carry reads it
    def body(c, w):
        h = checkpoint_name(jnp.sin(c * w) * 2.0, "h")
        return jnp.cos(h) + c, jnp.exp(h)

    c, ys = lax.scan(body, x, jnp.arange(1.0, 4.0))
    return jnp.sum(c) + jnp.sum(ys)


def _in_jitted_reverse_scan(x):
    def body(c, w):
        h = checkpoint_name(jnp.sin(c * w) * 2.0, "h")
        return jnp.cos(h) * c, None

    return olympus.jit(lambda x: jnp.sum(lax.scan(body, x, x, reverse=True)[0]))(x)


@pytest.mark.parametrize("f", [_in_scan, _in_jitted_reverse_scan])
def test_a_tag_inside_a_scan_body_is_saved_per_iteration(x64, f):
    """The forward scan also returns h of every iteration (stacked); the
    recomputed scan reads them as scanned operands and reruns no sin."""
    x = np.array([0.3, -0.5, 0.7])
    sins = {label: _recomputed(g, x, "sin") for label, g in _checkpointed(f, x)}
    # sin(c * w) (to remake h) and sin h (cos h's tangent), or only sin h.
    assert sins == {"none": 2, "h": 1, "not h": 2}
    check_grads(olympus.checkpoint(f, policy=cp.save_only_these_names("h")), (x,), 1)
