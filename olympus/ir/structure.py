"""The operand structure of higher-order primitives, declared once.

A higher-order primitive (`cond`, `while`, `scan`, `pjit`, `checkpoint`, ...)
takes its operands as consecutive groups whose sizes its parameters hold:

    scan    *consts, *carry, *xs               num_consts, num_carry
    while   *cond_consts, *body_consts, *carry cond_nconsts, body_nconsts
    cond    index, *operands                   (one branch per `branches` entry)

Every consumer (jvp, partial evaluation, transpose, batching, DCE, forwarding,
the replication check, the interpreters, the stepper) needs those groups.
Rather than each one counting indices, the primitive's module declares its
`Structure` beside its definition (`declare`), and consumers `split` operands
(or any per-operand list: masks, keys, dims) into groups and `pack` groups back
into operands plus the count parameters. Two rules every loop and switch
consumer shares live here too: which branch an index runs (`branch_index`) and
the carry fixpoint (`carry_fixpoint`).

Example:
    >>> from olympus.ir.structure import Structure
    >>> scan = Structure("scan", ("consts", "carry", "xs"), ("num_consts", "num_carry", None))
    >>> scan.split({"num_consts": 1, "num_carry": 2}, ["k", "c0", "c1", "x"])
    [['k'], ['c0', 'c1'], ['x']]
    >>> scan.pack(["k"], ["c0", "c1"], ["x"])
    (['k', 'c0', 'c1', 'x'], {'num_consts': 1, 'num_carry': 2})
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable, Sequence

Size = str | int | None  # a count parameter's name, a fixed size, or "the rest"


class StructureError(ValueError):
    """Operands or outputs that do not fit a primitive's declared groups."""


@dataclass(frozen=True)
class Structure:
    """How a higher-order primitive's operands (and outputs) are grouped.

    kind: "call" (one body, every operand an argument), "switch" (an index,
    then one body per branch), "loop" (a predicate and a body over a carry) or
    "scan" (a body over consts, carry and a row of each xs).
    groups / sizes: the operand groups in order, each sized by a parameter name,
    a fixed int, or None for the one group taking the remaining operands.
    out_groups / out_sizes: the same for the outputs.
    bodies: (parameter, groups it reads in order) for each sub-program parameter;
    a switch's one entry names the tuple parameter holding its branches.
    per_operand: (parameter, groups) for each parameter holding one entry per
    operand of those groups (scan's `linear`: every operand; cond's: its
    operands after the index).
    """

    kind: str
    groups: tuple[str, ...]
    sizes: tuple[Size, ...]
    out_groups: tuple[str, ...] = ("outs",)
    out_sizes: tuple[Size, ...] = (None,)
    bodies: tuple[tuple[str, tuple[str, ...]], ...] = ()
    per_operand: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def split(self, params: dict, values: Sequence) -> list[list]:
        """`values` (one per operand) split into the operand groups, in order."""
        return _split(self.groups, self.sizes, params, values)

    def split_outputs(self, params: dict, values: Sequence) -> list[list]:
        """`values` (one per output) split into the output groups, in order."""
        return _split(self.out_groups, self.out_sizes, params, values)

    def group(self, params: dict, values: Sequence, name: str) -> list:
        """The one operand group `name` of `values`."""
        return self.split(params, values)[self.groups.index(name)]

    def offset(self, params: dict, name: str) -> int:
        """Where operand group `name` starts (the groups before it are sized)."""
        sizes = _sizes(self.groups, self.sizes, params, None)
        return sum(sizes[: self.groups.index(name)])

    def pack(self, *groups: Sequence) -> tuple[list, dict]:
        """The flat operands of `groups` (in order) and the count parameters
        that describe them, ready for `bind(*operands, **counts, ...)`."""
        if len(groups) != len(self.groups):
            raise StructureError(
                f"{self.kind} structure: {len(groups)} groups given, expected "
                f"{len(self.groups)} ({', '.join(self.groups)})"
            )
        counts = {
            size: len(g) for size, g in zip(self.sizes, groups) if isinstance(size, str)
        }
        return [x for g in groups for x in g], counts

    def counts(self, *groups: Sequence) -> dict:
        """The count parameters of `groups`, as `pack` gives them."""
        return self.pack(*groups)[1]

    def select(self, params: dict, operands: Sequence, keep: Sequence[bool]):
        """The operands where `keep` holds, and `params` updated to describe
        them (the count parameters and the per-operand ones). The sub-programs
        are the caller's to change."""
        masks = self.split(params, keep)
        kept = [_select(m, g) for m, g in zip(masks, self.split(params, operands))]
        operands, counts = self.pack(*kept)
        new = {**params, **counts}
        for name, groups in self.per_operand:
            sizes = tuple(self.sizes[self.groups.index(g)] for g in groups)
            values = _split(groups, sizes, params, params[name])
            mask = dict(zip(self.groups, masks))
            new[name] = tuple(
                x for g, v in zip(groups, values) for x in _select(mask[g], v)
            )
        return operands, new

    def body_groups(self, body: str) -> tuple[str, ...]:
        """The operand groups sub-program parameter `body` reads, in order."""
        return dict(self.bodies)[body]

    def split_body_inputs(self, params: dict, values: Sequence, body: str) -> list:
        """`values` (one per input of sub-program `body`) split into the groups
        it reads, in order (a while body's: body_consts, carry)."""
        names = self.body_groups(body)
        sizes = tuple(self.sizes[self.groups.index(n)] for n in names)
        return _split(names, sizes, params, values)

    def body_operands(self, params: dict, values: Sequence, body: str) -> list:
        """The operands (or per-operand values) sub-program `body` receives."""
        named = dict(zip(self.groups, self.split(params, values)))
        return [x for g in self.body_groups(body) for x in named[g]]


def _select(mask, values) -> list:
    return [x for x, m in zip(values, mask) if m]


def _sizes(names, sizes, params, total) -> list[int]:
    known = [
        s if isinstance(s, int) else None if s is None else params[s] for s in sizes
    ]
    if None in known:
        if total is None:
            raise StructureError(
                f"the size of group {names[known.index(None)]!r} "
                "depends on the operand count"
            )
        known[known.index(None)] = total - sum(k for k in known if k is not None)
    return known


def _split(names, sizes, params, values) -> list[list]:
    values = list(values)
    counts = _sizes(names, sizes, params, len(values))
    if sum(counts) != len(values) or min(counts, default=0) < 0:
        raise StructureError(
            f"{len(values)} values do not fit groups "
            + ", ".join(f"{n}={c}" for n, c in zip(names, counts))
        )
    out, start = [], 0
    for c in counts:
        out.append(values[start : start + c])
        start += c
    return out


structures: dict[str, Structure] = {}  # primitive name -> its structure


def declare(primitive, structure: Structure) -> Structure:
    """Registers `primitive`'s operand structure; called beside its definition
    (as `olympus/lax/control_flow/scan.py` declares scan's)."""
    structures[primitive.name] = structure
    return structure


def structure_of(eqn_or_primitive) -> Structure | None:
    """The declared structure of an equation's primitive, a primitive, or a
    primitive's name (backends' rule tables are keyed by name); None if the
    primitive declares none."""
    primitive = getattr(eqn_or_primitive, "primitive", eqn_or_primitive)
    return structures.get(getattr(primitive, "name", primitive))


def call_structure(body: str) -> Structure:
    """A call's: every operand is an argument of the one sub-program `body`."""
    return Structure("call", ("args",), (None,), bodies=((body, ("args",)),))


# ---- rules every switch and loop consumer shares --------------------------------
def branch_index(index: int, n_branches: int) -> int:
    """The branch a switch runs for `index`: an out-of-range index runs the last
    branch, as XLA's `case` does (the public `switch` clamps before binding)."""
    return index if 0 <= index < n_branches else n_branches - 1


def carry_fixpoint(
    run: Callable[[list], tuple], carry: Sequence, join: Callable = operator.or_
):
    """Runs a loop body's analysis until its carries are stable.

    `run(carry)` analyses the body given a property of each carry (nonzero
    tangent, batched, known, the mesh axes it varies along) and returns
    `(result, carry_out)`; each carry is widened with `join(carry, carry_out)`
    (`or` for nonzero/batched/varying, `and` for known) until a pass changes
    none. Returns `(result, carry)` of the stable pass. Finite because each
    property lives in a finite lattice."""
    carry = list(carry)
    while True:
        result, out = run(carry)
        wider = [join(a, b) for a, b in zip(carry, out)]
        if wider == carry:
            return result, carry
        carry = wider
