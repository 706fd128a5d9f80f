"""What every pass shares: rebuilding programs, recursing into sub-programs,
and a forward walk that renames operands as equations are replaced.

A pass maps a ClosedOlympuspr to a ClosedOlympuspr and returns the very same
object when it changed nothing, so the pipeline can tell a fixed point by
identity (no program comparison).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import olympus.lax  # noqa: F401  (fills the primitive registry the rules emit from)
from olympus.ir.core import (
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    ShapedArray,
    Var,
    all_primitives,
)
from olympus.ir.effects import eqn_has_ordered_effect, ordered_effect_primitives
from olympus.ir.pruning import rebuilt
from olympus.lax.checkpoint import name_p
from olympus.lax.hints import hint_keys, hint_p

Pass = Callable[[ClosedOlympuspr], ClosedOlympuspr]
MAX_FEED_DEPTH = 4  # rewrites of rewrites within one walk (later rounds go on)
# How often a walk left work a later round may do: a rewrite chain stopped at
# MAX_FEED_DEPTH, or a rewrite held back by a reader that may yet go away.
deferred = [0]


class Session:
    """What one `optimize` call keeps across its walks and rounds."""

    __slots__ = ("forwards", "deferred_at", "shapes")

    def __init__(self):
        # Old variable -> the atom standing for it now, for every replacement
        # a walk makes (CSE, simplification, forwarding, folding, a rule's
        # result), so a value the user named stays reachable (`forwarding`).
        self.forwards: dict = {}
        # The equations that left work a later round may do (`defer`): the
        # next round revisits them instead of the whole program.
        self.deferred_at: list = []
        # (primitive, operand types, params) -> result type, for the equations
        # rules build (`rules.Builder`): a program repeats them.
        self.shapes: dict = {}


sessions: list[Session] = []  # the `optimize` calls under way (innermost last)


def defer(eqn: Eqn) -> None:
    """`eqn`, as emitted, holds work a later round may do."""
    deferred[0] += 1
    if sessions:
        sessions[-1].deferred_at.append(eqn)


HINTS = frozenset({name_p, hint_p})  # annotations on a value (`is_transparent`)


def is_transparent(eqn: Eqn) -> bool:
    """An identity that only annotates its value: `checkpoint_name`, or a
    `hint` none of whose keys changes what its readers do (`precision` does).
    Rewrite patterns match through it (`see_through`); the equation itself
    stays on its value for as long as anything reads that value."""
    prim = eqn.primitive
    if prim is name_p:
        return True
    return prim is hint_p and hint_keys.keys().isdisjoint(eqn.params)


def see_through(producer: dict, eqn: Eqn | None) -> tuple[Eqn | None, list]:
    """The equation making the value `eqn` makes, past transparent hints (and
    those hints, outermost first); `producer` maps variables to equations."""
    hints = []
    while eqn is not None and eqn.primitive in HINTS and is_transparent(eqn):
        hints.append(eqn)
        x = eqn.invars[0]
        eqn = producer.get(x) if type(x) is Var else None
    return eqn, hints


def primitive(name: str):
    return all_primitives[name]


def holds_programs(params: dict) -> bool:
    """Whether a param holds a sub-program (itself, or in a tuple or list): the
    cheap test that spares most equations the walk into their params."""
    for value in params.values():
        kind = type(value)
        if kind in _PLAIN:
            continue
        if kind in _PROGRAMS:
            return True
        if isinstance(value, (tuple, list)) and not _PROGRAMS.isdisjoint(
            map(type, value)
        ):
            return True
    return False


_PROGRAMS = frozenset({ClosedOlympuspr, Olympuspr})
_PLAIN = frozenset({int, bool, str, float, type(None)})


def is_effectful(eqn: Eqn) -> bool:
    """Never removed, merged or reordered (debug callbacks, at any depth)."""
    if eqn.primitive in ordered_effect_primitives:
        return True
    return holds_programs(eqn.params) and eqn_has_ordered_effect(eqn)


def _map_value(value, fn: Pass):
    """`fn` over a param holding programs: one, or a tuple/list of them (cond's
    branches); any other value (most params) is returned as it is."""
    if isinstance(value, ClosedOlympuspr):
        return fn(value)
    if isinstance(value, Olympuspr):
        if value.constvars:
            return value
        out = fn(ClosedOlympuspr(value, []))
        return out.olympuspr if not out.consts else value
    if (
        isinstance(value, (tuple, list))
        and value
        and isinstance(value[0], (ClosedOlympuspr, Olympuspr))
    ):
        new = [_map_value(v, fn) for v in value]
        if all(a is b for a, b in zip(new, value)):
            return value
        return type(value)(new)
    return value


def map_subprograms(eqn: Eqn, fn: Pass) -> Eqn:
    """`eqn` with `fn` applied to every sub-program in its params (the same
    eqn object when none changed). Sub-program signatures must not change."""
    if not holds_programs(eqn.params):
        return eqn
    params = None
    for key, value in eqn.params.items():
        new = _map_value(value, fn)
        if new is not value:
            params = dict(eqn.params) if params is None else params
            params[key] = new
    return eqn if params is None else eqn._replace(params=params)


def same_type(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shape, dtype and weak_type: a value of one may stand for the other."""
    return a == b


def literal(value, dtype, weak_type: bool) -> Literal:
    dtype = np.dtype(dtype)
    return Literal(np.asarray(value, dtype)[()], ShapedArray((), dtype, weak_type))


def _unchanged(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    return closed


class Walk:
    """A forward walk that emits equations, renaming operands through `subst`.

    `producer` maps each variable emitted so far to its equation, which is what
    rewrite rules look through to match nested patterns.
    """

    def __init__(self, olympuspr: Olympuspr, consts=()):
        self.olympuspr = olympuspr
        self.const_values = dict(zip(olympuspr.constvars, consts))
        self.new_consts: list = []  # (constvar, value) a pass added
        self.subst: dict = {}
        self.eqns: list[Eqn] = []
        self.producer: dict = {}
        self.changed = False
        self.memo: dict = {}  # a pass's own bookkeeping for this program
        self.run_sub: Pass = _unchanged  # the walk's pass (rewrite_pass sets it)

    def read(self, atom):
        return self.subst.get(atom, atom) if isinstance(atom, Var) else atom

    def renamed(self, eqn: Eqn) -> Eqn:
        subst = self.subst
        if not subst:
            return eqn
        for x in eqn.invars:
            if x in subst:  # only variables are keys
                break
        else:
            return eqn
        invars = [subst.get(x, x) for x in eqn.invars]
        return Eqn(eqn.primitive, eqn.params, invars, eqn.outvars, eqn.source_info)

    def emit(self, eqn: Eqn) -> None:
        self.eqns.append(eqn)
        for v in eqn.outvars:
            self.producer[v] = eqn

    def feed(self, eqn: Eqn) -> None:
        """A new equation a rule built: passed through the walk's steps (so
        its result is simplified, folded and merged in the same walk)."""
        self.emit(eqn)

    def replace(self, var: Var, atom) -> None:
        """Later uses of `var` read `atom` instead."""
        self.subst[var] = atom
        if sessions:
            sessions[-1].forwards[var] = atom
        self.changed = True
        uses = self.memo.get("uses")  # simplify's read counts, if it made them
        if uses is not None and type(atom) is Var:
            uses[atom] = uses.get(atom, 0) + uses.get(var, 0)

    def add_const(self, value, aval: ShapedArray) -> Var:
        var = Var(aval)
        self.new_consts.append((var, value))
        self.const_values[var] = value
        self.changed = True
        return var

    def finish(self, closed: ClosedOlympuspr) -> ClosedOlympuspr:
        if not self.changed:
            return closed
        program = rebuilt(
            self.olympuspr,
            constvars=self.olympuspr.constvars + [v for v, _ in self.new_consts],
            eqns=self.eqns,
            outvars=[self.read(x) for x in self.olympuspr.outvars],
        )
        return ClosedOlympuspr(program, closed.consts + [c for _, c in self.new_consts])


def takes(names) -> Callable:
    """Marks a walk step as one that only ever takes equations of the
    primitives `names`: `rewrite_pass` does not call it on others."""

    def mark(step):
        step.primitives = frozenset(names)
        return step

    return mark


def sees_all(step):
    """Marks a walk step whose decision on an equation depends on equations
    other than its operands' producers (CSE's earlier equations): a revisiting
    round still runs it on the equations it does not revisit."""
    step.sees_all = True
    return step


def rewrite_pass(*steps: Callable[[Walk, Eqn], bool]) -> Pass:
    """A pass from per-equation steps: `step(walk, eqn)` sees `eqn` with its
    operands renamed and its sub-programs rewritten, and returns True when it
    emitted or replaced the equation itself (later steps then skip it);
    an equation no step takes is emitted as it is. Several steps share one
    walk (the default pipeline fuses its rewrites so). A step marked with
    `takes` is only called on its primitives' equations.

    `run(closed, revisit)` is a later round of `optimize` (a set of ids of
    the equations the last round deferred work on, `defer`): every equation
    the last round emitted as it is, whose operands and their producers are
    unchanged, is left so (it would be again), save for `sees_all` steps; the
    deferred equations, those holding sub-programs and whatever reads a
    value this round changed go through every step."""
    steps_for, seeing_all = _step_index(steps)

    def run(closed: ClosedOlympuspr, revisit: set | None = None) -> ClosedOlympuspr:
        walk = Walk(closed.olympuspr, closed.consts)

        def process(eqn: Eqn) -> None:
            new = walk.renamed(eqn) if walk.subst else eqn
            if holds_programs(new.params):
                new = map_subprograms(new, run)
                if new is not eqn:
                    walk.changed = True
            for step in steps_for(new.primitive):
                if step(walk, new):
                    return
            walk.emit(new)

        walk.feed = _feeder(walk, process)
        walk.run_sub = run  # this pass, for sub-programs a step rebuilds
        if revisit is None:
            for eqn in closed.olympuspr.eqns:
                process(eqn)
        else:
            _revisit(
                walk, closed.olympuspr.eqns, revisit, process, steps_for, seeing_all
            )
        return walk.finish(closed)

    return run


def _step_index(steps) -> tuple[Callable, dict]:
    """`steps_for(primitive)`: the steps that may take its equations (all but
    the `takes` steps of other primitives), memoised; and the memo of those
    among them marked `sees_all`, by primitive."""
    by_primitive: dict = {}
    seeing_all: dict = {}

    def steps_for(prim) -> tuple:
        found = by_primitive.get(prim)
        if found is None:
            found = by_primitive[prim] = tuple(
                step
                for step in steps
                if getattr(step, "primitives", None) is None
                or prim.name in step.primitives
            )
            seeing_all[prim] = tuple(
                step for step in found if getattr(step, "sees_all", False)
            )
        return found

    return steps_for, seeing_all


def _feeder(walk: Walk, process: Callable) -> Callable:
    """`walk.feed`: a step's new equation goes through the steps again, up to
    MAX_FEED_DEPTH deep (rules that keep rewriting their own output are
    then deferred to the next round)."""
    depth = [0]

    def feed(eqn: Eqn) -> None:
        if depth[0] >= MAX_FEED_DEPTH:
            new = walk.renamed(eqn)
            defer(new)
            walk.emit(new)
            return
        depth[0] += 1
        try:
            process(eqn)
        finally:
            depth[0] -= 1

    return feed


def _revisit(walk, eqns, revisit, process, steps_for, seeing_all) -> None:
    """The walk of a revisiting round (see `rewrite_pass`)."""
    subst = walk.subst
    changed: set = set()  # variables whose producer this walk replaced
    emitted = walk.eqns
    for eqn in eqns:
        if id(eqn) not in revisit and not holds_programs(eqn.params):
            for x in eqn.invars:
                if type(x) is Var and (x in subst or x in changed):
                    break
            else:
                steps_for(eqn.primitive)
                for step in seeing_all[eqn.primitive]:
                    if step(walk, eqn):
                        break
                else:
                    walk.emit(eqn)
                continue
        size = len(emitted)
        process(eqn)
        if len(emitted) != size + 1 or emitted[-1] is not eqn:
            changed.update(eqn.outvars)
