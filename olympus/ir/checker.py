"""The type checker: every transform's output must pass it (the tests make sure).

It verifies that each variable is defined exactly once before it is used,
that each equation's output types are what its primitive's shape rule says,
that literals are scalars (array constants are constvars), and that a closed
program's consts have their constvars' shapes.
"""

from __future__ import annotations

import numpy as np

from olympus.ir.core import (
    ClosedOlympuspr,
    Literal,
    Olympuspr,
    ShapedArray,
    subolympusprs,
)
from olympus.ir.printer import VarNames, pp_eqn


class OlympusprTypeError(TypeError):
    """An olympuspr is ill-typed; the message names the equation."""


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    # weak_type is a promotion hint, not part of the type being checked.
    return a.shape == b.shape and a.dtype == b.dtype


def _fail(olympuspr: Olympuspr, index: int, problem: str):
    names = VarNames()
    for v in olympuspr.constvars + olympuspr.invars:
        names(v)
    lo = max(0, index - 2)
    lines = []
    for i in range(lo, min(len(olympuspr.eqns), index + 3)):
        marker = ">>> " if i == index else "    "
        lines.append(marker + pp_eqn(olympuspr.eqns[i], names, 4, source_info=True))
    raise OlympusprTypeError(f"equation {index}: {problem}\n" + "\n".join(lines))


def _check_consts(closed: ClosedOlympuspr) -> None:
    """Each const has its constvar's shape (dtypes may still be uncanonicalised)."""
    for i, (var, const) in enumerate(zip(closed.olympuspr.constvars, closed.consts)):
        shape = tuple(np.shape(const))
        if shape != var.aval.shape:
            raise OlympusprTypeError(
                f"const {i} has shape {shape} but its constvar is {var.aval.str_short()}"
            )


def check_olympuspr(program: Olympuspr | ClosedOlympuspr) -> None:
    """Raises OlympusprTypeError at the first ill-typed equation."""
    if isinstance(program, ClosedOlympuspr):
        _check_consts(program)
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    defined: set = set()

    def define(var, where: str):
        if var in defined:
            raise OlympusprTypeError(f"variable {var} defined twice ({where})")
        defined.add(var)

    for v in olympuspr.constvars + olympuspr.invars:
        define(v, "binder")
    for i, eqn in enumerate(olympuspr.eqns):
        _check_operands(olympuspr, i, defined)
        for sub in subolympusprs(eqn.params):
            check_olympuspr(sub)
        _check_result_types(olympuspr, i)
        for v in eqn.outvars:
            define(v, str(eqn.primitive))
    for x in olympuspr.outvars:
        if not isinstance(x, Literal) and x not in defined:
            raise OlympusprTypeError("an output variable is never defined")


def _check_operands(olympuspr: Olympuspr, i: int, defined: set) -> None:
    """Equation i reads scalar literals and variables defined before it."""
    eqn = olympuspr.eqns[i]
    for x in eqn.invars:
        if isinstance(x, Literal) and x.aval.shape != ():
            _fail(
                olympuspr,
                i,
                f"{eqn.primitive} has an array literal {x.aval.str_short()}; "
                f"array constants belong in constvars",
            )
        if not isinstance(x, Literal) and x not in defined:
            _fail(olympuspr, i, f"{eqn.primitive} uses a variable before it is defined")


def _check_result_types(olympuspr: Olympuspr, i: int) -> None:
    """Equation i binds the types its primitive's shape rule gives."""
    eqn = olympuspr.eqns[i]
    rule = eqn.primitive.abstract_eval
    if rule is None:
        _fail(olympuspr, i, f"primitive {eqn.primitive} has no shape rule")
    try:
        expected = rule(*(x.aval for x in eqn.invars), **eqn.params)
    except (TypeError, ValueError) as err:
        _fail(olympuspr, i, f"{eqn.primitive} rejects its operands: {err}")
    expected = expected if eqn.primitive.multiple_results else [expected]
    got = [v.aval for v in eqn.outvars]
    if len(expected) != len(got) or not all(map(_types_match, expected, got)):
        want = ", ".join(a.str_short() for a in expected)
        have = ", ".join(a.str_short() for a in got)
        _fail(olympuspr, i, f"{eqn.primitive} should produce ({want}), binds ({have})")
