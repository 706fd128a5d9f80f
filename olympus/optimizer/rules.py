"""The rewrite-rule engine behind the algebraic (simplify.py) and numerically
stable (stable.py) tables.

A `Rule` pairs a pattern with a replacement. Patterns are trees of
`Op(primitive, *operands)` whose leaves are capture names (a string matches
any operand; the same name twice must be the same operand) and `Lit(value)`
(a scalar constant equal to `value`, sign of zero included, written as a
literal or a broadcast literal). The pattern's root matches the equation being
rewritten, inner `Op`s the equations producing its operands; the operands of
commutative primitives match in either order. An inner `Op` matches through
transparent hints (`program.is_transparent`: `checkpoint_name`, a `hint`
without `precision`), identities on their value: `log(1 + name(exp(x)))` is
`log(1 + exp(x))`. The hint equation itself is left as it was, so it stays on
its value while anything else reads that value; if the rewrite leaves the
tagged value unread, dead-code elimination drops both, as for any value (a
tag on a value nothing computes would tag nothing; moved to another value it
would make a checkpoint policy save that one). The provenance lists the
hints matched through (`... -> softplus through name[name=e]`). The
replacement is a capture
name (the equation's output becomes that operand) or a function
`(m, b) -> atom` building new equations with `b.op(...)`.

A rule fires only when the replacement has the output's exact shape and dtype
(and, for a captured operand, weak_type); the new equations carry the
rewritten equation's source line with a `Rewrite` record (provenance: the
rule and the equations it replaced), which `pretty(source_info=True)`, the
HTML view and `inspect --source` show.

A guard (`when`) is pure and looks at the matched equations and at what
produces their operands (`m.walk.producer`); one that looks further (simplify's
use counts) calls `program.defer` when it refuses, so that a later round of
`optimize` revisits the equation. The engine indexes a table's rules by their
root primitive and then by what produces the equation's operands, and compiles
each pattern once into a matcher: rows stay as they are written.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from olympus.ir import dtypes
from olympus.ir.core import Eqn, Literal, Var
from olympus.ir.printer import VarNames, pp_eqn
from olympus.optimizer.cse import COMMUTATIVE
from olympus.optimizer.program import (
    HINTS,
    Pass,
    Walk,
    literal,
    primitive,
    rewrite_pass,
    same_type,
    see_through,
    sessions,
    takes,
)


class Op:
    """Matches an operand produced by `prim` (the rule's root: the equation itself).

    `name` captures the producing equation (for its params) as `m[name]`.
    `of_scalar` (broadcast_in_dim) asks for a rank-0 operand.
    """

    __slots__ = ("name", "of_scalar", "operands", "prim")

    def __init__(self, prim: str, *operands, name: str | None = None, of_scalar=False):
        self.prim = prim
        self.operands = operands
        self.name = name
        self.of_scalar = of_scalar


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
    the walk, for guards that look at an operand's producer. A capture comes
    before a dict method of its name (the engine calls those as `dict.get(m,
    ...)`): guards read captures often, and this is their fast path."""

    __slots__ = ()

    def __getattribute__(self, name):
        try:
            return dict.__getitem__(self, name)
        except KeyError:
            return object.__getattribute__(self, name)


_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def formula(pattern, nested: bool = False) -> str:
    """A pattern as a formula: `log(1 + exp(x))` (broadcasts left out)."""
    if type(pattern) is str:
        return pattern
    if type(pattern) is Lit:
        v = pattern.value
        return str(int(v)) if float(v).is_integer() and v != 0 else repr(v)
    args = pattern.operands
    if pattern.prim == "broadcast_in_dim":
        return formula(args[0], nested)
    if pattern.prim == "neg":
        return "-" + formula(args[0], True)
    if pattern.prim in _INFIX and len(args) == 2:
        a, b = (formula(x, True) for x in args)
        text = f"{a} {_INFIX[pattern.prim]} {b}"
        return f"({text})" if nested else text
    return f"{pattern.prim}({', '.join(formula(x) for x in args)})"


class Rewrite:
    """Provenance of the equations a rule made (on their `source_info.rewrite`):
    the table and rule that fired, the equations it matched (the last one
    rewritten) and the operands it captured. `str()` is the rule, `replaced`
    the matched equations as printed, captured operands by their capture name."""

    __slots__ = ("table", "rule", "eqns", "captures")

    def __init__(self, table: str, rule: Rule, eqns: list, captures: dict):
        self.table, self.rule, self.eqns, self.captures = table, rule, eqns, captures

    def __str__(self) -> str:
        text = f"{self.table}: {formula(self.rule.pattern)} -> {self.rule.name}"
        hints = [_hint_text(e) for e in self.eqns if e.primitive in HINTS]
        return f"{text} through {', '.join(hints)}" if hints else text

    @property
    def replaced(self) -> list[str]:
        given = {v: k for k, v in self.captures.items() if type(v) is Var}
        names = VarNames(given=given)
        return [pp_eqn(e, names) for e in self.eqns]

    def __repr__(self) -> str:
        return f"Rewrite({self}; replaced {'; '.join(self.replaced)})"


def _hint_text(eqn: Eqn) -> str:
    """`name[name=e]`: a hint the pattern matched through, as printed."""
    return pp_eqn(eqn._replace(invars=[], outvars=[]), VarNames()).split("= ", 1)[1]


class NoMatch(Exception):
    """A replacement cannot be built (its shape rule refuses the operands)."""


def constant_literal(walk: Walk, atom) -> Literal | None:
    """The scalar literal an operand is everywhere (itself or broadcast), or None."""
    if type(atom) is Var:
        eqn = walk.producer.get(atom)
        if eqn is None or eqn.primitive.name != "broadcast_in_dim":
            return None
        atom = eqn.invars[0]
    return atom if type(atom) is Literal and atom.aval.shape == () else None


_kinds: dict = {}


def _kind(dtype) -> str:
    """'i' integer, 'f' real float, '' anything else (cached: the dtype tests are slow)."""
    kind = _kinds.get(dtype)
    if kind is None:
        real = dtypes.is_float(dtype)
        kind = _kinds[dtype] = "i" if dtypes.is_integer(dtype) else "f" if real else ""
    return kind


def _same_constant(lit: Literal, want: float) -> bool:
    """`lit == want`, telling 0.0 from -0.0; complex and bool never match
    (x * 1 is not x for a complex infinity)."""
    kind = _kind(lit.aval.dtype)
    if kind == "i":
        negative_zero = want == 0 and math.copysign(1.0, want) < 0
        return not negative_zero and float(want).is_integer() and int(lit.val) == want
    if kind != "f":
        return False
    v = float(lit.val)
    return v == want and math.copysign(1.0, v) == math.copysign(1.0, want)


_get = dict.get


def _undo(m: Match, size: int) -> None:
    """Drops the captures made after `m` had `size` entries (a failed order)."""
    for key in list(m)[size:]:
        del m[key]


def _matcher(pattern) -> Callable:
    """`pattern` as a function `(walk, atom, m) -> bool` matching an operand and
    adding its captures to `m` (on failure `m` is left as it was). Rules are
    compiled once, when their table is made."""
    if type(pattern) is str:

        def capture(walk, atom, m, name=pattern) -> bool:
            bound = _get(m, name)
            if bound is None:
                m[name] = atom
                return True
            return bound is atom

        return capture
    if type(pattern) is Lit:

        def constant(walk, atom, m, value=pattern.value) -> bool:
            lit = constant_literal(walk, atom)
            return lit is not None and _same_constant(lit, value)

        return constant
    through = pattern.prim not in {p.name for p in HINTS}
    return _producer_matcher(_eqn_matcher(pattern), through)


def _producer_matcher(match_eqn: Callable, through: bool) -> Callable:
    """Matches an operand by its producer with `match_eqn`; `through` hints
    (a hint-key annotation is seen through unless the pattern names it)."""

    def produced(walk, atom, m) -> bool:
        eqn = walk.producer.get(atom) if type(atom) is Var else None
        if eqn is None:
            return False
        if not (through and eqn.primitive in HINTS):
            return match_eqn(walk, eqn, m)
        eqn, hints = see_through(walk.producer, eqn)
        if eqn is None or not match_eqn(walk, eqn, m):
            return False
        for hint in reversed(hints):  # matched too (provenance), innermost first
            m[id(hint)] = hint
        return True

    return produced


def _pair_match(subs, swap: bool, walk, operands, m) -> bool:
    """Two operands matched in order, or (commutative `swap`) the other way."""
    size = len(m)
    orders = ((0, 1), (1, 0)) if swap else ((0, 1),)
    for i, j in orders:
        if subs[0](walk, operands[i], m) and subs[1](walk, operands[j], m):
            return True
        if len(m) > size:
            _undo(m, size)
    return False


def _eqn_matcher(pattern: Op) -> Callable:
    """`pattern` as a function `(walk, eqn, m) -> bool` matching the equation
    itself (the rule's root, or an operand's producer)."""
    prim, name, of_scalar = pattern.prim, pattern.name, pattern.of_scalar
    subs = [_matcher(p) for p in pattern.operands]
    n = len(subs)
    swap = n == 2 and prim in COMMUTATIVE

    def operands_match(walk, operands, m) -> bool:
        if n == 1:
            return subs[0](walk, operands[0], m)
        if n == 2:
            return _pair_match(subs, swap, walk, operands, m)
        size = len(m)
        if all(sub(walk, x, m) for sub, x in zip(subs, operands)):
            return True
        _undo(m, size)
        return False

    def match(walk, eqn, m) -> bool:
        operands = eqn.invars
        if eqn.primitive.name != prim or len(operands) != n:
            return False
        if of_scalar and operands[0].aval.shape != ():
            return False
        if not operands_match(walk, operands, m):
            return False
        if name is not None:
            m[name] = eqn
        m[id(eqn)] = eqn  # the matched equations, operands' first (provenance)
        return True

    return match


class Builder:
    """Builds the replacement's equations (kept only if the rule fires)."""

    def __init__(self, eqn: Eqn, rewrite: Rewrite):
        info = eqn.source_info
        self.source_info = None if info is None else info.with_rewrite(rewrite)
        self.eqns: list[Eqn] = []

    def op(self, name: str, *operands, **params) -> Var:
        prim = primitive(name)
        avals = tuple([x.aval for x in operands])
        shapes, key, aval = sessions[-1].shapes if sessions else None, None, None
        if shapes is not None:
            try:  # the session's memo of shape rules (params of any hashable kind)
                key = (prim, avals, *[(k, type(v), v) for k, v in params.items()])
                aval = shapes.get(key)
            except TypeError:
                key = None
        if aval is None:
            try:
                aval = prim.abstract_eval(*avals, **params)
            except (TypeError, ValueError) as err:
                raise NoMatch(str(err)) from err
            if key is not None:
                shapes[key] = aval
        out = Var(aval)
        self.eqns.append(Eqn(prim, params, list(operands), [out], self.source_info))
        return out

    def lit(self, value, like, weak_type: bool = True) -> Literal:
        """A scalar of `like`'s dtype (weak, as a Python number in user code)."""
        return literal(value, like.aval.dtype, weak_type)


def _apply(rule: Rule, walk: Walk, eqn: Eqn, table: str = "", match=None) -> bool:
    m = Match(walk=walk)  # guards may look at producers (`m.walk.producer`)
    if not (match or _eqn_matcher(rule.pattern))(walk, eqn, m):
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
    return _build(rule, walk, eqn, table, m)


def _build(rule: Rule, walk: Walk, eqn: Eqn, table: str, m: Match) -> bool:
    """Builds a matched rule's replacement and feeds its equations to the walk;
    False (nothing changed) if the replacement refuses or has another type."""
    (out,) = eqn.outvars
    matched = [v for k, v in dict.items(m) if type(k) is int]
    captures = {k: v for k, v in dict.items(m) if type(v) in (Var, Literal)}
    b = Builder(eqn, Rewrite(table, rule, matched, captures))
    try:
        atom = rule.replacement(m, b)
    except NoMatch:
        return False
    if atom.aval.shape != out.aval.shape or atom.aval.dtype != out.aval.dtype:
        return False
    if b.eqns and b.eqns[-1].outvars == [atom]:
        # The last new equation binds the original output variable, so its
        # declared type (weak_type included) is unchanged.
        last = b.eqns[-1]
        b.eqns[-1] = Eqn(
            last.primitive, last.params, last.invars, [out], last.source_info
        )
        atom = out
    elif not same_type(atom.aval, out.aval):
        return False
    walk.changed = True
    for new in b.eqns:
        walk.feed(new)
    if atom is not out:
        walk.replace(out, walk.read(atom))
    return True


def _head(pattern):
    """What the operand a pattern matches must be: a primitive's name, "lit", or
    None (anything)."""
    if type(pattern) is Op:
        return pattern.prim + " of scalar" if pattern.of_scalar else pattern.prim
    return "lit" if type(pattern) is Lit else None


_LITERAL = ("lit",)
_SCALAR_SPREAD = ("broadcast_in_dim", "broadcast_in_dim of scalar")
_LITERAL_SPREAD = ("broadcast_in_dim", "broadcast_in_dim of scalar", "lit")


def _operand_kind(producer: dict, atom):
    """What produces an operand, as the rules' index tells operands apart: the
    producing primitive (past transparent hints, as patterns match), or the
    heads tuple of a literal, an input (empty) or a broadcast scalar (`_head`'s
    names it may match)."""
    if type(atom) is Literal:
        return _LITERAL
    eqn = producer.get(atom)
    if eqn is not None and eqn.primitive in HINTS:
        eqn = see_through(producer, eqn)[0]
    if eqn is None:
        return ()
    if eqn.primitive.name == "broadcast_in_dim" and eqn.invars[0].aval.shape == ():
        return _LITERAL_SPREAD if type(eqn.invars[0]) is Literal else _SCALAR_SPREAD
    return eqn.primitive


def _heads(kind) -> tuple:
    return kind if type(kind) is tuple else (kind.name,)


def _may_match(wants: tuple, heads: list, commutative: bool) -> bool:
    """A cheap pre-test on the operands' producers before the full match."""
    if len(wants) != len(heads):
        return False
    if all(w is None or w in h for w, h in zip(wants, heads)):
        return True
    return commutative and all(w is None or w in h for w, h in zip(wants, heads[::-1]))


def _typed_positions(rule: Rule) -> tuple | None:
    """Where the operand a rule's result is (a capture name that is one of the
    root's operands) may sit: the rule cannot fire unless one of those operands
    has the output's type, a test cheaper than the match (guards are pure)."""
    if type(rule.replacement) is not str:
        return None
    operands = rule.pattern.operands
    found = {i for i, p in enumerate(operands) if p == rule.replacement}
    if not found:
        return None
    if len(operands) == 2 and rule.pattern.prim in COMMUTATIVE:
        found |= {1 - i for i in found}
    return tuple(sorted(found))


def table_step(rules: list[Rule], table: str = ""):
    """A walk step trying each rule, in table order, on a single-output
    equation (`table` names the table in the provenance of what it makes).
    Rules are indexed by their root primitive, then by what produces the
    equation's operands, and their patterns compiled to matchers."""
    return _tables_step(((rules, table),))


def fused(*steps):
    """One step trying the tables of several `table_step`s in turn: what they
    do one after the other, with the operands' producers looked up once."""
    return _tables_step(tuple(t for step in steps for t in step.tables))


def _rule_index(tables: tuple) -> dict[str, list]:
    """Root primitive name -> [(entry, the operand heads its pattern wants)],
    an entry being (rule, compiled matcher, `_typed_positions`, table name)."""
    by_prim: dict[str, list] = {}
    for rules, table in tables:
        for rule in rules:
            wants = tuple(map(_head, rule.pattern.operands))
            entry = (rule, _eqn_matcher(rule.pattern), _typed_positions(rule), table)
            by_prim.setdefault(rule.pattern.prim, []).append((entry, wants))
    return by_prim


def _match_key(eqn: Eqn, producer: dict) -> tuple:
    """(primitive, *operand kinds): what decides which rules may match.
    `_operand_kind`, inlined for the common cases: this runs on most equations."""
    key = [eqn.primitive]
    for x in eqn.invars:
        if type(x) is Literal:
            key.append(_LITERAL)
            continue
        made = producer.get(x)
        if made is None:
            key.append(())
        elif made.primitive.name == "broadcast_in_dim" or made.primitive in HINTS:
            key.append(_operand_kind(producer, x))
        else:
            key.append(made.primitive)
    return tuple(key)


def _type_fits(typed: tuple | None, operands: list, out) -> bool:
    """Whether an operand at one of the `typed` positions has the output's
    type (always, for a rule without them). Shapes first: ShapedArray.__eq__
    is Python code."""
    if typed is None:
        return True
    for i in typed:
        aval = operands[i].aval
        if aval.shape == out.shape and aval == out:
            return True
    return False


def _tables_step(tables: tuple):
    by_prim = _rule_index(tables)
    chosen: dict = {}  # `_match_key` -> the entries that may match

    def candidates(key: tuple) -> list:
        name = key[0].name
        heads = [_heads(kind) for kind in key[1:]]
        commutative = name in COMMUTATIVE
        return [
            e
            for e, wants in by_prim.get(name, ())
            if _may_match(wants, heads, commutative)
        ]

    def step(walk: Walk, eqn: Eqn) -> bool:
        if len(eqn.outvars) != 1:
            return False
        key = _match_key(eqn, walk.producer)
        entries = chosen.get(key)
        if entries is None:
            entries = chosen[key] = candidates(key)
        out = eqn.outvars[0].aval
        for rule, match, typed, table in entries:
            if _type_fits(typed, eqn.invars, out) and _apply(
                rule, walk, eqn, table, match
            ):
                return True
        return False

    step.tables = tables
    return takes(by_prim)(step)


def table_pass(rules: list[Rule], table: str = "") -> Pass:
    """A pass applying a table of rules (see `table_step`)."""
    return rewrite_pass(table_step(rules, table))


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
