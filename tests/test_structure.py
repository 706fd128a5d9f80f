"""Higher-order primitives declare their operand groups once (olympus/ir/structure.py);
consumers split operands through the declaration instead of counting indices."""

import pathlib
import re

import numpy as np
import pytest

import olympus
from olympus import lax
from olympus.ir.structure import (
    StructureError,
    branch_index,
    carry_fixpoint,
    structure_of,
)
from jax_oracle import agree

ROOT = pathlib.Path(olympus.__file__).parent


def _eqn(fun, *args, name):
    closed = olympus.make_olympuspr(fun)(*args)
    return next(e for e in closed.olympuspr.eqns if e.primitive.name == name)


def test_scan_structure_splits_and_packs():
    def f(c, xs):
        return lax.scan(lambda c, x: (c + x * 2.0, c * x), c, xs)

    eqn = _eqn(f, 1.0, np.arange(3, dtype=np.float32), name="scan")
    s = structure_of(eqn)
    consts, carry, xs = s.split(eqn.params, eqn.invars)
    assert len(carry) == eqn.params["num_carry"] == 1
    assert len(consts) == eqn.params["num_consts"]
    assert [v.aval.shape for v in xs] == [(3,)]
    args, counts = s.pack(consts, carry, xs)
    assert args == list(eqn.invars)
    assert counts == {"num_consts": len(consts), "num_carry": 1}
    carry_out, ys = s.split_outputs(eqn.params, eqn.outvars)
    assert len(carry_out) == 1 and len(ys) == 1
    assert s.body_groups("olympuspr") == ("consts", "carry", "xs")


def test_while_structure_feeds_each_body_its_groups():
    eqn = _eqn(
        lambda x, k: lax.while_loop(lambda c: c < k, lambda c: c + x, x),
        1.0,
        5.0,
        name="while",
    )
    s = structure_of(eqn)
    cond_in = s.body_operands(eqn.params, eqn.invars, "cond_olympuspr")
    body_in = s.body_operands(eqn.params, eqn.invars, "body_olympuspr")
    assert [v.aval for v in cond_in] == list(eqn.params["cond_olympuspr"].in_avals)
    assert [v.aval for v in body_in] == list(eqn.params["body_olympuspr"].in_avals)


def test_structure_rejects_operands_that_do_not_fit():
    eqn = _eqn(
        lambda c: lax.scan(lambda c, x: (c, x), c, None, length=2), 1.0, name="scan"
    )
    with pytest.raises(StructureError):
        structure_of(eqn).split({"num_consts": 5, "num_carry": 1}, [1, 2])
    with pytest.raises(StructureError):
        structure_of(eqn).pack([1])


def test_branch_index_runs_the_last_branch_out_of_range():
    assert [branch_index(i, 3) for i in (-1, 0, 2, 3, 99)] == [2, 0, 2, 2, 2]


def test_carry_fixpoint_widens_until_stable():
    # carry i becomes True once carry i-1 is: a chain needs len(carry) passes
    passes = []

    def run(carry):
        passes.append(list(carry))
        return "result", [False] + carry[:-1]

    result, carry = carry_fixpoint(run, [True, False, False])
    assert (result, carry) == ("result", [True, True, True])
    assert len(passes) == 3
    # `and` narrows instead (known carries)
    _, known = carry_fixpoint(
        lambda c: (None, [c[0], False]), [True, True], bool.__and__
    )
    assert known == [True, False]


@pytest.mark.parametrize("index", [-3, 0, 1, 7])
def test_switch_out_of_range_index_agrees_with_jax(index):
    def program(ox, i):
        branches = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]
        return ox.jit(lambda i, x: ox.lax.switch(i, branches, x))(i, 3.0)

    assert agree(program, np.int32(index))


def test_scan_and_while_agree_with_jax_under_vmap_and_grad():
    def program(ox, xs):
        def loop(c, x):
            return c * x + 1.0, c

        def f(xs):
            c, ys = ox.lax.scan(loop, 1.0, xs)
            w = ox.lax.while_loop(
                lambda v: v[0] < 3, lambda v: (v[0] + 1, v[1] * c), (0, c)
            )
            return w[1] + ys.sum()

        return ox.jit(ox.vmap(ox.grad(f)))(xs)

    assert agree(program, np.arange(6.0, dtype=np.float32).reshape(2, 3) / 4)


# The old ways of reading a control-flow primitive's operands: counting with its
# count parameters. Only the structure and the primitives' own modules may.
_COUNT = r"(nc|nb|ncar|ncarry|n_carry|n_consts|num_consts|num_carry)"
_COUNTING = re.compile(
    r"""params\[["'](num_consts|num_carry|cond_nconsts|body_nconsts)["']\]"""
    rf"|\[\s*{_COUNT}\s*:|:\s*{_COUNT}\s*\]"
    rf"|{_COUNT}\s*\+\s*(nb|ncar|ncarry|n_carry|num_carry)\b"
)
_OWN_MODULES = {
    "ir/structure.py",
    "lax/control_flow/scan.py",  # scan's shape rule and lowering
    "lax/control_flow/loops.py",  # while's
    "lax/control_flow/cond.py",
    "lax/control_flow/subprograms.py",  # loop bodies: (carry, ys) outputs
    "lax/custom_derivatives.py",
    "lax/parallel/manual.py",  # shard_map's own operands
}


def test_no_consumer_counts_control_flow_operands():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in _OWN_MODULES:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if _COUNTING.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "count operands through olympus.ir.structure:\n" + "\n".join(
        found
    )


def test_checkpoint_parts_carry_their_role():
    """Reverse mode splits a checkpoint into parts that say what they are; the
    name each part prints is derived from the role, and inverts back to it."""
    from olympus.lax.checkpoint import checkpoint_base, part_name

    f = olympus.checkpoint(lambda x: np.float32(2.0) * olympus.numpy.sin(x))
    closed = olympus.make_olympuspr(olympus.grad(f))(np.float32(1.0))
    parts = {
        e.params["role"]: e.params
        for e in closed.olympuspr.eqns
        if e.primitive.name == "checkpoint"
    }
    assert set(parts) == {"call", "remat", "transpose"}
    base = parts["call"]["name"]
    for role, params in parts.items():
        assert params["name"] == part_name(role, base)
        assert checkpoint_base(params) == base


def test_optimizer_reads_roles_not_names():
    text = (ROOT / "optimizer/fuse.py").read_text()
    assert not re.search(r"""["'](remat|lin|transpose\(lin)\(""", text)


def test_primitive_traits_replace_the_passes_name_lists():
    from olympus.lax.traits import names_with

    prims = olympus.ir.core.all_primitives
    assert "commutative" in prims["add"].traits
    assert "commutative" not in prims["sub"].traits
    assert "exact" in prims["add"].traits and "exact" not in prims["exp"].traits
    assert "never_merged" in prims["checkpoint"].traits
    assert {"elementwise_unary", "exact"} <= prims["neg"].traits
    # every declared name is a real primitive (a typo would silently match nothing)
    for trait in ("elementwise_unary", "reduction", "commutative", "exact", "cheap"):
        missing = [n for n in names_with(trait) if n not in prims]
        assert not missing, (trait, missing)


def _defining_module(prim) -> pathlib.Path:
    """The lax module whose top level defines `prim` (`<name>_p = ...`)."""
    pattern = re.compile(rf"^{re.escape(prim.name)}_p = ", re.M)
    found = [p for p in (ROOT / "lax").rglob("*.py") if pattern.search(p.read_text())]
    assert len(found) == 1, (prim.name, found)
    return found[0]


@pytest.mark.parametrize("table", ["dce_rules", "forwarding_rules", "hoisting_rules"])
def test_optimizer_rules_register_beside_their_primitive(table):
    from olympus.ir import pruning

    rules = getattr(pruning, table)
    assert rules, table
    for prim in rules:
        text = _defining_module(prim).read_text()
        # a call primitive (pjit, checkpoint) gets the shared call rules by
        # declaring itself one (transforms/linearize.py: declare_call_primitive)
        beside = (
            f"{table}[{prim.name}_p] = ",
            f"declare_call_primitive({prim.name}_p)",
        )
        assert any(s in text for s in beside), (table, prim.name)


def test_optimizer_engines_name_no_higher_order_primitive():
    names = "pjit|checkpoint|cond|scan|while|optimization_barrier|shard_map"
    for module in ("dce.py", "forward.py"):
        text = (ROOT / "optimizer" / module).read_text()
        code = re.sub(r'"""[\s\S]*?"""|#.*', "", text)  # docstrings and comments
        # a rule table keyed by a primitive's name, or a test of the name
        rule_row = rf"""["']({names})["']\s*:\s*_"""
        name_test = rf"""name\s*[!=]=\s*["']({names})["']"""
        assert not re.search(rule_row, code), module
        assert not re.search(name_test, code), module


def test_dce_and_forwarding_through_control_flow_agree_with_jax():
    """Unused loop carries, cond outputs and pass-through values are pruned
    and forwarded; the program still computes what JAX's does."""

    def program(ox, x, xs):
        def f(x, xs):
            (c, unused), ys = ox.lax.scan(
                lambda c, x: ((c[0] + x, c[1] * x), c[0]), (x, x), xs
            )
            kept, _ = ox.lax.cond(x > 0, lambda a: (a, a * 2), lambda a: (a, -a), c)
            n, dead = ox.lax.while_loop(
                lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0), (0, x)
            )
            return kept + ys.sum() + n

        return ox.jit(f)(x, xs), ox.vmap(f, (None, 0))(x, xs[None]), ox.grad(f)(x, xs)

    agree(program, np.float32(1.5), np.arange(4, dtype=np.float32))


def test_dce_prunes_the_unused_carry_of_a_scan():
    from olympus.optimizer import optimize

    def f(x, xs):
        (c, _), _ = lax.scan(lambda c, x: ((c[0] + x, c[1] * x), None), (x, x), xs)
        return c

    closed = olympus.make_olympuspr(f)(1.0, np.arange(3, dtype=np.float32))
    before = next(e for e in closed.eqns if e.primitive.name == "scan")
    after = next(e for e in optimize(closed).eqns if e.primitive.name == "scan")
    assert before.params["num_carry"] == 2 and after.params["num_carry"] == 1


@pytest.mark.parametrize("name", ["pjit", "checkpoint", "shard_map"])
def test_call_primitives_transpose_through_the_shared_rule(name):
    """One transpose for every call-like primitive (transforms/programs.py's
    `transpose_call`); shard_map supplies only how its body is split and bound."""
    import inspect

    from olympus.transforms.linearize import transpose_rules

    prim = olympus.ir.core.all_primitives[name]
    assert "transpose_call(" in inspect.getsource(transpose_rules[prim])
