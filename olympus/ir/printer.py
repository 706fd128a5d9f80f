"""Prints olympusprs in the grammar of the olympuspr specification (seed 002).

    { lambda c:f32[8] ; a:f32[8] b:f32[8]. let
        d:f32[8] = sin b
        e:f32[] = reduce_sum[axes=(0,)] d
      in (e,) }

Variables are named a, b, ..., z, aa, ab, ... in order of first appearance;
sub-olympusprs continue the same naming and are indented under their equation.

Weak types (values that came from Python scalars and give way to the other
operand's dtype, `ShapedArray.weak_type`) are not shown by default: the
specification's examples print `mul a 2.0:f32[]` for a Python `2.0`, and
marking every such literal would double the noise of a typical program.
`pretty(weak_types=True)` adds `{weak}` after each weakly typed binder and
literal type, which `olympus.ir.parse` reads back:

    { lambda ; a:f32[]{weak}. let b:f32[]{weak} = mul a 2.0:f32[]{weak} in (b,) }

Use it when the text must evaluate exactly like the program: a weak output
added to a bf16 array stays bf16, a strong f32 one promotes it to f32.

The public pieces (`VarNames`, `pp_eqn`, `pp_param`, `pp_literal`, `pp_type`)
let the HTML and Graphviz views, the file format and the checker's errors name
variables and parameters exactly as the text does.
"""

from __future__ import annotations

import json

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, Var, displays

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_INLINE_WIDTH = 80


def var_name(index: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa, 27 -> ab, ..."""
    if index < 26:
        return _LETTERS[index]
    return var_name(index // 26 - 1) + _LETTERS[index % 26]


WEAK_MARK = "{weak}"  # after a type: `f32[]{weak}` (read back by the parser)

# Primitives whose str params print quoted (`hint[device="gpu"]`): their values
# are the user's, so a string that reads like a number must stay a string.
quoted_string_params: set = set()


class VarNames:
    """What one print shares: the names given so far (`names(var)` names a
    new variable with the next free name), and whether types show their
    weakness."""

    def __init__(self, weak_types: bool = False, given: dict | None = None) -> None:
        self._names: dict = dict(given or {})  # `given`: names chosen beforehand
        self.weak_types = weak_types
        self.dropped: set = set()  # the results printed `_` (no name given)

    def __call__(self, var: Var) -> str:
        name = self._names.get(var)
        if name is None:
            name = self._names[var] = var_name(len(self._names)) + var.suffix
        return name

    def as_dict(self) -> dict[Var, str]:
        """Every variable named so far, with its name."""
        return dict(self._names)


def pp_type(aval, weak_types: bool = False) -> str:
    """`f32[3]`, or `f32[]{weak}` for a weak type when `weak_types` is on."""
    text = aval.str_short()
    return text + WEAK_MARK if weak_types and aval.weak_type else text


def pp_literal(lit: Literal, weak_types: bool = False) -> str:
    if lit.aval.dtype == dtypes.float0:  # no bytes: zeros of any shape read as `0`
        return f"0:{pp_type(lit.aval, weak_types)}"
    val = lit.val
    if isinstance(val, np.ndarray):
        val = val[()]
    return f"{val}:{pp_type(lit.aval, weak_types)}"


def _pp_atom(atom, names: VarNames) -> str:
    if isinstance(atom, Literal):
        return pp_literal(atom, names.weak_types)
    return names(atom)


def _pp_binder(var: Var, names: VarNames) -> str:
    return f"{names(var)}:{pp_type(var.aval, names.weak_types)}"


def pp_param(value, names: VarNames, indent: int = 0, source_info=False) -> str:
    """A parameter's value as printed; sub-programs continue `names`."""
    if isinstance(value, (ClosedOlympuspr, Olympuspr)):
        return _pp(value, names, indent, inline_ok=True, source_info=source_info)
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, (ClosedOlympuspr, Olympuspr)) for v in value)
    ):
        pad = " " * (indent + 2)
        inner = "\n".join(
            pad + _pp(v, names, indent + 2, inline_ok=True, source_info=source_info)
            for v in value
        )
        return f"(\n{inner}\n{' ' * indent})"
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _has_subprograms(params: dict) -> bool:
    for value in params.values():
        if isinstance(value, (ClosedOlympuspr, Olympuspr)):
            return True
        if isinstance(value, tuple) and any(
            isinstance(v, (ClosedOlympuspr, Olympuspr)) for v in value
        ):
            return True
    return False


DROPPED = "_"  # the name of a result nothing reads (JAX prints it so too)


def _pp_result(var: Var, names: VarNames, dead: frozenset) -> str:
    if var in dead:
        names.dropped.add(var)
        return f"{DROPPED}:{pp_type(var.aval, names.weak_types)}"
    return _pp_binder(var, names)


def _dead_results(olympuspr) -> frozenset:
    """The equations' results that no equation and no output of the program
    reads: printed `_`, so a reader sees at once what is dead."""
    read = {v for e in olympuspr.eqns for v in e.invars if not isinstance(v, Literal)}
    read.update(v for v in olympuspr.outvars if not isinstance(v, Literal))
    return frozenset(v for e in olympuspr.eqns for v in e.outvars if v not in read)


def pp_eqn(
    eqn, names: VarNames, indent: int = 0, source_info: bool = False,
    dead: frozenset = frozenset(),
) -> str:  # fmt: skip
    """One equation as printed (`indent`: where its sub-programs' lines start;
    `dead`: results printed `_`)."""
    lhs = " ".join(_pp_result(v, names, dead) for v in eqn.outvars)
    args = " ".join(_pp_atom(a, names) for a in eqn.invars)
    params = sorted(eqn.params.items())
    if not params:
        head = eqn.primitive.name
    elif _has_subprograms(eqn.params):
        pad = " " * (indent + 2)
        lines = [
            f"{pad}{k}={pp_param(v, names, indent + 2, source_info)}" for k, v in params
        ]
        head = f"{eqn.primitive.name}[\n" + "\n".join(lines) + f"\n{' ' * indent}]"
    else:
        quoted = eqn.primitive in quoted_string_params
        kvs = " ".join(
            f"{k}={json.dumps(v) if quoted and isinstance(v, str) else pp_param(v, names, indent)}"
            for k, v in params
        )
        head = f"{eqn.primitive.name}[{kvs}]"
    text = f"{lhs} = {head} {args}".rstrip()
    if source_info and eqn.source_info is not None:
        text += f"  # {source_comment(eqn.source_info)}"
    return text


def source_comment(info) -> str:
    """`file.py:12 (f) [scope]`, and on an equation an optimizer rule made, the
    rule: `file.py:12 (f) rewritten by stable: log(1 + exp(x)) -> softplus`
    (not bracketed: `[...]` is the scope, which the parser reads back)."""
    if info.rewrite is None:
        return str(info)
    return f"{info} {REWRITE_MARK}{info.rewrite}"


REWRITE_MARK = "rewritten by "


def _pp(
    program, names: VarNames, indent: int, inline_ok: bool, source_info=False
) -> str:
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    consts = " ".join(_pp_binder(v, names) for v in olympuspr.constvars)
    invars = " ".join(_pp_binder(v, names) for v in olympuspr.invars)
    header = f"{{ lambda {consts}{' ' if consts else ''}; {invars}. let"
    dead = _dead_results(olympuspr)
    eqn_texts = [
        pp_eqn(e, names, indent + 4, source_info, dead) for e in olympuspr.eqns
    ]
    outs = ", ".join(_pp_atom(a, names) for a in olympuspr.outvars)
    footer = f"in ({outs}{',' if len(olympuspr.outvars) == 1 else ''}) }}"
    one_line = f"{header} {' '.join(eqn_texts)} {footer}"
    if (
        inline_ok
        and len(eqn_texts) <= 1
        and "\n" not in one_line
        and "#" not in one_line
    ):
        if len(one_line) + indent <= _INLINE_WIDTH:
            return one_line.replace("let  in", "let in")
    body = "".join(f"\n{' ' * (indent + 4)}{t}" for t in eqn_texts)
    return f"{header}{body}\n{' ' * (indent + 2)}{footer}"


def pp_olympuspr(
    program,
    source_info: bool = False,
    weak_types: bool = False,
    names: VarNames | None = None,
) -> str:
    """The printed form of an olympuspr (or ClosedOlympuspr): with
    `source_info`, each equation's `# file:line (function)`; with
    `weak_types`, a `{weak}` mark on weakly typed binders and literals.
    Pass `names` to learn the name each variable was given."""
    names = VarNames(weak_types) if names is None else names
    return _pp(program, names, 0, inline_ok=False, source_info=source_info)


displays["text"] = pp_olympuspr
