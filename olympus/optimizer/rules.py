"""The rewrite-rule engine behind the algebraic (simplify.py) and numerically
stable (stable.py) tables.

A `Rule` pairs a pattern with a replacement. Patterns are trees of
`Op(primitive, *operands)` whose leaves are capture names (a string matches
any operand; the same name twice must be the same operand) and `Lit(value)`
(a scalar constant equal to `value`, sign of zero included, written as a
literal or a broadcast literal). The pattern's root matches the equation being
rewritten, inner `Op`s the equations producing its operands; the operands of
commutative primitives match in either order. The replacement is a capture
name (the equation's output becomes that operand) or a function
`(m, b) -> atom` building new equations with `b.op(...)`.

A rule fires only when the replacement has the output's exact shape and dtype
(and, for a captured operand, weak_type); the new equations carry the
rewritten equation's source line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import Eqn, Literal, Var
from olympus.optimizer.cse import COMMUTATIVE
from olympus.optimizer.program import (
    Pass,
    Walk,
    literal,
    primitive,
    rewrite_pass,
    same_type,
)


class Op:
    """Matches an operand produced by `prim` (the rule's root: the equation itself).

    `name` captures the producing equation (for its params) as `m[name]`.
    """

    __slots__ = ("name", "operands", "prim")

    def __init__(self, prim: str, *operands, name: str | None = None):
        self.prim = prim
        self.operands = operands
        self.name = name


class Lit:
    """Matches a scalar constant equal to `value` (0.0 and -0.0 differ)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Rule(NamedTuple):
    name: str
    pattern: Op
    replacement: str | Callable
    when: Callable | None = None  # (m) -> bool, checked after a match


class Match(dict):
    """Captured operands (`m.x` or `m["x"]`) and named equations; `m.walk` is
    the walk, for guards that look at an operand's producer."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class NoMatch(Exception):
    """A replacement cannot be built (its shape rule refuses the operands)."""


def constant_value(walk: Walk, atom):
    """The scalar an operand is known to be everywhere, or None."""
    if isinstance(atom, Var):
        eqn = walk.producer.get(atom)
        if eqn is None or eqn.primitive.name != "broadcast_in_dim":
            return None
        atom = eqn.invars[0]
    if isinstance(atom, Literal) and atom.aval.shape == ():
        return np.asarray(atom.val, atom.aval.dtype)
    return None


def _same_constant(value: np.ndarray, want) -> bool:
    """`value == want`, telling 0.0 from -0.0; complex and bool never match
    (x * 1 is not x for a complex infinity)."""
    if dtypes.is_integer(value.dtype):
        negative_zero = want == 0 and np.signbit(want)
        return (
            not negative_zero and float(want).is_integer() and int(value) == int(want)
        )
    if not dtypes.is_float(value.dtype):
        return False
    v = float(value)
    return v == float(want) and bool(np.signbit(v)) == bool(np.signbit(want))


def _match(walk: Walk, pattern, atom, m: Match, eqn: Eqn | None = None) -> bool:
    """Matches `pattern` against `atom` (or, at the root, `eqn`), adding its
    captures to `m`; on failure `m` is left as it was."""
    if type(pattern) is str:
        bound = m.get(pattern)
        if bound is None:
            m[pattern] = atom
            return True
        return bound is atom
    if type(pattern) is Lit:
        value = constant_value(walk, atom)
        return value is not None and _same_constant(value, pattern.value)
    if eqn is None:
        eqn = walk.producer.get(atom) if type(atom) is Var else None
        if eqn is None:
            return False
    operands = eqn.invars
    if eqn.primitive.name != pattern.prim or len(operands) != len(pattern.operands):
        return False
    orders = (operands,)
    if len(operands) == 2 and pattern.prim in COMMUTATIVE:
        orders = (operands, operands[::-1])
    size = len(m)
    for order in orders:
        if all(_match(walk, p, x, m) for p, x in zip(pattern.operands, order)):
            if pattern.name is not None:
                m[pattern.name] = eqn
            return True
        for key in list(m)[size:]:  # undo this order's partial captures
            del m[key]
    return False


class Builder:
    """Builds the replacement's equations (kept only if the rule fires)."""

    def __init__(self, eqn: Eqn):
        self.source_info = eqn.source_info
        self.eqns: list[Eqn] = []

    def op(self, name: str, *operands, **params) -> Var:
        prim = primitive(name)
        try:
            aval = prim.abstract_eval(*(x.aval for x in operands), **params)
        except (TypeError, ValueError) as err:
            raise NoMatch(str(err)) from err
        out = Var(aval)
        self.eqns.append(Eqn(prim, params, list(operands), [out], self.source_info))
        return out

    def lit(self, value, like, weak_type: bool = True) -> Literal:
        """A scalar of `like`'s dtype (weak, as a Python number in user code)."""
        return literal(value, like.aval.dtype, weak_type)


def _apply(rule: Rule, walk: Walk, eqn: Eqn) -> bool:
    m = Match()
    m.walk = walk  # guards may look at producers (`walk.producer`)
    if not _match(walk, rule.pattern, None, m, eqn):
        return False
    if rule.when is not None and not rule.when(m):
        return False
    (out,) = eqn.outvars
    if isinstance(rule.replacement, str):
        atom = m[rule.replacement]
        if not same_type(atom.aval, out.aval):
            return False
        walk.replace(out, atom)
        return True
    b = Builder(eqn)
    try:
        atom = rule.replacement(m, b)
    except NoMatch:
        return False
    if atom.aval.shape != out.aval.shape or atom.aval.dtype != out.aval.dtype:
        return False
    if b.eqns and b.eqns[-1].outvars == [atom]:
        # The last new equation binds the original output variable, so its
        # declared type (weak_type included) is unchanged.
        b.eqns[-1] = b.eqns[-1]._replace(outvars=[out])
        atom = out
    elif not same_type(atom.aval, out.aval):
        return False
    for new in b.eqns:
        walk.emit(new)
    if atom is not out:
        walk.replace(out, atom)
    walk.changed = True
    return True


def table_step(rules: list[Rule]):
    """A walk step trying each rule, in table order, on a single-output equation."""
    by_prim: dict[str, list[Rule]] = {}
    for rule in rules:
        by_prim.setdefault(rule.pattern.prim, []).append(rule)

    def step(walk: Walk, eqn: Eqn) -> bool:
        if len(eqn.outvars) != 1:
            return False
        return any(
            _apply(rule, walk, eqn) for rule in by_prim.get(eqn.primitive.name, ())
        )

    return step


def table_pass(rules: list[Rule]) -> Pass:
    """A pass applying a table of rules (see `table_step`)."""
    return rewrite_pass(table_step(rules))


def is_real(*names: str) -> Callable:
    """A guard: the captured operands are real floats or integers."""

    def check(m) -> bool:
        return all(
            dtypes.is_float(m[n].aval.dtype) or dtypes.is_integer(m[n].aval.dtype)
            for n in names
        )

    return check


def is_float(*names: str) -> Callable:
    def check(m) -> bool:
        return all(dtypes.is_float(m[n].aval.dtype) for n in names)

    return check
