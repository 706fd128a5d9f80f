"""Analyses of a program's data flow, each written once.

Forward: which variables depend on a set of roots (an equation reading one
makes all its outputs depend on it); partial evaluation, transposition and
loop-invariant hoisting all ask this. Backward: which equations and
variables are needed for some outputs (slicing, and the arguments an error
message names). Pure functions of the equations; nothing is evaluated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from olympus.ir.core import Eqn, Olympuspr, Var


def reads_any(eqn: Eqn, variables) -> bool:
    """Does `eqn` take one of `variables` as an operand?"""
    return any(isinstance(x, Var) and x in variables for x in eqn.invars)


def dependent_vars(olympuspr: Olympuspr, roots: Iterable[Var]) -> set[Var]:
    """The variables whose values depend on one of `roots` (roots included)."""
    dependent = set(roots)
    for eqn in olympuspr.eqns:
        if reads_any(eqn, dependent):
            dependent.update(eqn.outvars)
    return dependent


def unknown_vars(
    olympuspr: Olympuspr, known_in: Sequence[bool], deferred: Collection[Var] = ()
) -> set[Var]:
    """The variables that cannot be computed from the invars flagged in
    `known_in` alone. Constvars count as unknown: a split program gets no
    values for them. `deferred` variables count as unknown too: partial
    evaluation left their equations to the unknown part on purpose (a
    checkpoint's recomputation, which reads known values only)."""
    unknown_in = [v for v, known in zip(olympuspr.invars, known_in) if not known]
    return dependent_vars(olympuspr, [*olympuspr.constvars, *unknown_in, *deferred])


def is_unknown_eqn(eqn: Eqn, unknown: Collection[Var]) -> bool:
    """Does `eqn` belong to the unknown part (it reads an unknown variable, or
    its outputs are deferred ones)?"""
    return reads_any(eqn, unknown) or any(v in unknown for v in eqn.outvars)


def known_outputs(
    olympuspr: Olympuspr, known_in: Sequence[bool], deferred: Collection[Var] = ()
) -> list[bool]:
    """Which outputs can be computed from the known inputs alone."""
    unknown = unknown_vars(olympuspr, known_in, deferred)
    return [not (isinstance(v, Var) and v in unknown) for v in olympuspr.outvars]


def residual_vars(
    olympuspr: Olympuspr,
    known_in: Sequence[bool],
    known_out: Sequence[bool],
    deferred: Collection[Var] = (),
) -> list[Var]:
    """The known variables the unknown part reads, in first-use order: operands
    of unknown equations, then unknown-flagged outputs that are in fact known."""
    unknown = unknown_vars(olympuspr, known_in, deferred)
    residuals: dict = {}
    for eqn in olympuspr.eqns:
        if is_unknown_eqn(eqn, unknown):
            residuals.update(
                (x, None) for x in eqn.invars if isinstance(x, Var) and x not in unknown
            )
    for v, known in zip(olympuspr.outvars, known_out):
        if not known and isinstance(v, Var) and v not in unknown:
            residuals[v] = None
    return list(residuals)


def backward_slice(
    eqns: Sequence[Eqn], wanted: Iterable[Var], given: Collection[Var] = ()
) -> tuple[list[Eqn], set[Var]]:
    """The equations needed to compute `wanted`, in program order, and the
    variables they (and `wanted`) read. An equation whose outputs are all
    `given` is not needed: its values are supplied."""
    live = set(wanted)
    needed = []
    for eqn in reversed(eqns):
        if not any(v in live for v in eqn.outvars):
            continue
        if all(v in given for v in eqn.outvars):
            continue
        needed.append(eqn)
        live.update(x for x in eqn.invars if isinstance(x, Var))
    return needed[::-1], live
