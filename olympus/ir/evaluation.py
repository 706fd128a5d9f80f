"""One evaluation loop for the NumPy backends, with a rule table per evaluator.

An `Evaluator` is a backend's rule table (primitive name -> NumPy rule) and
how it stores a rule's result. `run` walks a program's equations with it:
an environment, read/write, one rule per equation, and each intermediate
dropped after its last use. The higher-order primitives are evaluated here,
once per kind (`program_rules`: a switch, a loop, a scan, a call), and they
run their bodies with the *caller's* evaluator, so a backend's own rules
(the interpreter tier's BLAS matmul, say) apply inside every loop body and
branch too. The reference interpreter (`backends/reference`) and the
interpreter tier (`backends/interpreted.py`) are evaluators over it;
constant folding (`optimizer/fold.py`) applies single equations with a
table of the reference rules (`apply_eqn`).

    >>> from olympus.ir.evaluation import Evaluator, coerce, run
    >>> closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * 2.0)(1.0)
    >>> ev = Evaluator({"sin": np.sin, "mul": np.multiply}, coerce)
    >>> run(ev, closed.olympuspr, closed.consts, [np.float32(1.0)])
    [array(1.682942, dtype=float32)]

The operand groups of each higher-order primitive come from its declared
`Structure` (olympus/ir/structure.py), so this module counts no indices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from olympus.ir.core import Literal
from olympus.ir.structure import branch_index, structure_of


class MissingRule(NotImplementedError):
    """A primitive has no rule in the evaluator's table (the reference
    backend's coverage test lists the missing ones)."""


class Pending:
    """A value still being computed elsewhere (the tier's matmul on a
    worker): the loop stores it and calls `result()` when it is first read,
    and `wait()` on any left when the program ends or fails."""

    __slots__ = ()

    def result(self):
        raise TypeError(f"{type(self).__name__} defines no result()")

    def wait(self) -> None:
        self.result()


def coerce(value, aval) -> np.ndarray:
    """A NumPy array of exactly the aval's dtype and shape (NumPy's promotion
    of scalars and mixed operands must not leak into the next equation)."""
    value = np.asarray(value)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    if value.shape != tuple(aval.shape):
        raise ValueError(
            f"a rule gave shape {value.shape}, the program says {aval.str_short()}"
        )
    return value


@dataclass(frozen=True, eq=False)
class Evaluator:
    """How one backend evaluates programs with `run`.

    rules: primitive name -> rule(*operands, **params), returning an array
    (a list for multiple-result primitives); `program_rules` take precedence
    for the higher-order primitives, so the table's own entries for them
    (kept for coverage) never run inside `run`.
    coerce: (value, aval) -> the value stored for a variable of that aval.
    apply: replaces `apply_rule` for each equation (the tier's ufuncs that
    write into a dying operand); it must call `apply_rule` for the rest.
    start: called with each new Frame before its first equation.
    name / missing: the rules' name and the error a missing one raises.
    index / truth / row / stack: how the higher-order rules read values
    (see `Call`).
    """

    rules: Mapping[str, Callable]
    coerce: Callable = coerce
    apply: Callable | None = None
    start: Callable | None = None
    name: str = "NumPy"
    missing: type = MissingRule
    index: Callable = int  # reading values in higher-order rules (`Call`)
    truth: Callable = bool
    row: Callable = lambda x, i, var: x[i]
    stack: Callable = lambda rows, var: (
        np.stack(rows) if rows else np.zeros(var.aval.shape, var.aval.dtype)
    )


class Frame:
    """One program being run: its environment, the variables read for the
    last time by the current equation (`done`), and `owned`, the variables
    whose values this evaluation allocated and nothing outside it views (an
    evaluator that reuses memory may write only into those)."""

    __slots__ = ("evaluator", "program", "env", "done", "owned", "pending", "extra")

    def __init__(self, evaluator: Evaluator, program):
        self.evaluator = evaluator
        self.program = program
        self.env: dict = {}
        self.done: list = []
        self.owned: set = set()
        self.pending = False
        self.extra = None  # the evaluator's per-program data (`start`)

    def read(self, x):
        if type(x) is Literal:
            return np.asarray(x.val, x.aval.dtype)
        value = self.env[x]
        if isinstance(value, Pending):
            value = self.env[x] = value.result()
        return value


def last_uses(olympuspr) -> list[list]:
    """For each equation, the variables read for the last time there (the
    program's outputs never: they outlive it)."""
    keep = set(olympuspr.outvars)
    last: dict = {}
    for i, eqn in enumerate(olympuspr.eqns):
        for x in eqn.invars:
            if type(x) is not Literal and x not in keep:
                last[x] = i
    dead: list[list] = [[] for _ in olympuspr.eqns]
    for var, i in last.items():
        dead[i].append(var)
    return dead


def run(
    evaluator: Evaluator, olympuspr, consts: Sequence, args: Sequence, dead=None
) -> list:
    """Runs `olympuspr` on `args` (its constvars bound to `consts`) with
    `evaluator`'s rules; returns its outputs. `dead`: its `last_uses`, for a
    caller that runs one program many times (a loop body)."""
    return run_frame(evaluator, olympuspr, consts, args, dead)[0]


def run_frame(
    evaluator: Evaluator, olympuspr, consts: Sequence, args: Sequence, dead=None
) -> tuple[list, Frame]:
    """`run`, and the frame it ran in (which outputs the evaluation owns)."""
    frame = Frame(evaluator, olympuspr)
    env, store = frame.env, evaluator.coerce
    for var, value in zip(olympuspr.constvars, consts):
        env[var] = store(value, var.aval)
    for var, value in zip(olympuspr.invars, args):
        env[var] = store(value, var.aval)
    if evaluator.start is not None:
        evaluator.start(frame)
    apply, read = evaluator.apply or apply_rule, frame.read
    try:
        with np.errstate(all="ignore"):  # NaN/inf/overflow are values, as in XLA
            for eqn, done in zip(olympuspr.eqns, dead or last_uses(olympuspr)):
                frame.done = done
                outs = apply(frame, eqn, [read(x) for x in eqn.invars])
                env.update(zip(eqn.outvars, outs))
                for var in done:
                    env.pop(var, None)
            return [read(x) for x in olympuspr.outvars], frame
    finally:
        if frame.pending:  # none may run past the evaluation
            for value in list(env.values()):
                if isinstance(value, Pending):
                    value.wait()


def apply_rule(frame: Frame, eqn, values: list) -> list:
    """One equation's outputs: its kind's rule from `program_rules` for a
    higher-order primitive, else the evaluator's table entry, each output
    stored as the evaluator stores values."""
    name = eqn.primitive.name
    program_rule = program_rules.get(name)
    if program_rule is not None:
        outs = _evaluate_kind(program_rule, frame.evaluator, eqn, values)
    else:
        rule = frame.evaluator.rules.get(name)
        if rule is None:
            raise frame.evaluator.missing(
                f"no {frame.evaluator.name} rule for the primitive {name}"
            )
        outs = rule(*values, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
    store = frame.evaluator.coerce
    return [store(out, var.aval) for out, var in zip(outs, eqn.outvars)]


def apply_eqn(evaluator: Evaluator, eqn, values: list) -> list:
    """One equation's outputs by `evaluator`, outside any program (constant
    folding's step)."""
    with np.errstate(all="ignore"):
        return apply_rule(Frame(evaluator, None), eqn, values)


# ---- the higher-order primitives, once per kind ------------------------------------
class Call(NamedTuple):
    """A body a higher-order rule asks its driver to run: `body` on `args`;
    `label` and `iteration` name it (the stepper's frames: "scan iteration
    3"), `family` the sub-programs whose runs the stepper counts together,
    `dead` the body's `last_uses` where the rule computed them."""

    body: object
    args: list
    label: str
    iteration: int | None
    family: tuple
    dead: list | None = None


# A rule is a generator: rule(ops, eqn, operands) yields a Call for each body
# to run, is sent that body's outputs, and returns the equation's outputs.
# `ops` says how to read a value: `ops.index(v)` (an int), `ops.truth(v)` (a
# bool), `ops.row(x, i, var)` (row i of a scanned operand, for the body's
# input `var`) and `ops.stack(rows, var)` (the rows a scan gave for output
# `var`, in order). The NumPy evaluators read NumPy arrays; the stepper reads
# its (device value, key) pairs, and runs each Call equation by equation.
def _call(parameter: str) -> Callable:
    """A call's rule: its one body (`parameter`) on every operand."""

    def call(ops, eqn, values: list):
        body = eqn.params[parameter]
        label = f"{eqn.primitive.name} {eqn.params.get('name', '')}".rstrip()
        return (yield Call(body, values, label, None, (body,)))

    return call


def _switch(ops, eqn, values: list):
    """The branch the index picks, on the operands after it."""
    (index,), operands = structure_of(eqn).split(eqn.params, values)
    branches = eqn.params["branches"]
    i = branch_index(ops.index(index), len(branches))
    return (yield Call(branches[i], operands, f"cond branch {i}", None, branches))


def _loop(ops, eqn, values: list):
    """The body on the carry while the predicate holds."""
    p = eqn.params
    cond_consts, body_consts, carry = structure_of(eqn).split(p, values)
    cond, body = p["cond_olympuspr"], p["body_olympuspr"]
    cond_dead, body_dead = last_uses(cond.olympuspr), last_uses(body.olympuspr)
    i = 0
    while True:
        label = f"while condition, iteration {i}"
        pred = yield Call(cond, cond_consts + carry, label, i, (cond, body), cond_dead)
        if not ops.truth(pred[0]):
            return carry
        label = f"while body, iteration {i}"
        carry = yield Call(body, body_consts + carry, label, i, (cond, body), body_dead)
        i += 1


def _scan(ops, eqn, values: list):
    """The body over the carry and one row of each xs per step; the rows
    it returns stacked (in the scan's order, reversed for `reverse`)."""
    p, structure = eqn.params, structure_of(eqn)
    body, length = p["olympuspr"], p["length"]
    consts, carry, xs = structure.split(p, values)
    x_vars = structure.group(p, body.olympuspr.invars, "xs")
    ys_vars = structure.split_outputs(p, eqn.outvars)[1]
    rows: list = [None] * length
    dead = last_uses(body.olympuspr)
    for step in range(length):
        i = length - 1 - step if p["reverse"] else step
        x_i = [ops.row(x, i, var) for x, var in zip(xs, x_vars)]
        args = consts + carry + x_i
        outs = yield Call(body, args, f"scan iteration {i}", i, (body,), dead)
        carry, rows[i] = structure.split_outputs(p, outs)
    ys = [ops.stack([row[j] for row in rows], v) for j, v in enumerate(ys_vars)]
    return carry + ys


def _evaluate_kind(rule: Callable, evaluator: Evaluator, eqn, values: list) -> list:
    """Drives a higher-order rule: each body it asks for runs with
    `evaluator` (the caller's)."""
    calls = rule(evaluator, eqn, values)
    try:
        call = next(calls)
        while True:
            outs = run(
                evaluator, call.body.olympuspr, call.body.consts, call.args, call.dead
            )
            call = calls.send(outs)
    except StopIteration as stop:
        return stop.value


program_rules: dict[str, Callable] = {
    "cond": _switch,
    "while": _loop,
    "scan": _scan,
    "pjit": _call("olympuspr"),
    "checkpoint": _call("olympuspr"),
    "custom_jvp_call": _call("call"),  # the primal function: the custom rules
    "custom_vjp_call": _call("call"),  # matter only to differentiation
    "custom_vmap_call": _call("call"),  # (and custom_vmap's to vmap)
}
