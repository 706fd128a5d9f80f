"""HTML views of programs and arrays for notebooks (`_repr_html_`).

A program is a table with one row per equation: its outputs with their types,
the primitive, its parameters, its operands and the user's source line.
Sub-programs (branches of `cond`, bodies of `while`/`scan`, `pjit` callees)
sit in collapsible `<details>` blocks inside their equation's parameter cell.
Variables are named exactly as the text printer names them, so the HTML and
`print(closed)` can be read side by side. Source lines show the file's base
name (`train.py:12 (loss)`): short in a notebook cell, and the same on every
machine, so the output can be compared with a golden file.
"""

from __future__ import annotations

import os
from html import escape

import numpy as np

from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, displays
from olympus.ir.printer import REWRITE_MARK, VarNames, pp_literal, pp_param

_STYLE = """<style>
.olympuspr table { border-collapse: collapse; font-family: monospace; font-size: 12px; }
.olympuspr td, .olympuspr th { padding: 1px 8px; text-align: left; vertical-align: top; }
.olympuspr th { border-bottom: 1px solid #999; }
.olympuspr .type { color: #666; } .olympuspr .prim { font-weight: bold; color: #0b5394; }
.olympuspr .lit { color: #b45f06; } .olympuspr .source { color: #888; }
.olympuspr details { margin-left: 1em; }
</style>"""

_MAX_ARRAY_CELLS = 100


def _binder(var, names: VarNames) -> str:
    return (
        f'<span class="var">{escape(names(var))}</span>:'
        f'<span class="type">{escape(var.aval.str_short())}</span>'
    )


def _atom(atom, names: VarNames) -> str:
    if isinstance(atom, Literal):
        return f'<span class="lit">{escape(pp_literal(atom))}</span>'
    return f'<span class="var">{escape(names(atom))}</span>'


def _programs_in(value) -> list:
    values = value if isinstance(value, tuple) else (value,)
    return [v for v in values if isinstance(v, (ClosedOlympuspr, Olympuspr))]


def _param_cell(params: dict, names: VarNames) -> str:
    parts = []
    for key, value in sorted(params.items()):
        programs = _programs_in(value)
        if not programs:
            text = pp_param(value, names)
            parts.append(f"{escape(key)}={escape(text)}")
            continue
        for i, program in enumerate(programs):
            label = f"{key}[{i}]" if isinstance(value, tuple) else key
            parts.append(_details(label, program, names))
    return "<br>".join(parts)


def _details(label: str, program, names: VarNames) -> str:
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    n = len(olympuspr.eqns)
    summary = f"{escape(label)}: {n} equation{'s' if n != 1 else ''}"
    return (
        f"<details><summary>{summary}</summary>{_program(olympuspr, names)}</details>"
    )


def _source_text(info) -> str:
    """`file.py:12 (function)`: the base name, not the machine's absolute path."""
    where = f"{os.path.basename(info.file)}:{info.line} ({info.function})"
    return f"{where} [{info.scope}]" if info.scope else where


def _eqn_row(eqn, names: VarNames) -> str:
    # Same naming order as the printer: outputs, operands, then sub-programs.
    outs = " ".join(_binder(v, names) for v in eqn.outvars)
    args = " ".join(_atom(a, names) for a in eqn.invars)
    params = _param_cell(eqn.params, names)
    info = eqn.source_info
    source = "" if info is None else escape(_source_text(info))
    cell = '<td class="source">'
    if info is not None and info.rewrite is not None:
        # The rule beside the line; what it replaced in the cell's tooltip.
        rule = escape(REWRITE_MARK + str(info.rewrite))
        source += f' <span class="rewrite">{rule}</span>'
        replaced = "replaced:\n" + "\n".join(info.rewrite.replaced)
        cell = f'<td class="source" title="{escape(replaced)}">'
    return (
        f'<tr><td>{outs}</td><td class="prim">{escape(eqn.primitive.name)}</td>'
        f'<td class="params">{params}</td><td>{args}</td>'
        f"{cell}{source}</td></tr>"
    )


def _program(olympuspr: Olympuspr, names: VarNames) -> str:
    consts = " ".join(_binder(v, names) for v in olympuspr.constvars)
    invars = " ".join(_binder(v, names) for v in olympuspr.invars)
    rows = "".join(f"\n{_eqn_row(e, names)}" for e in olympuspr.eqns)  # a row a line
    outs = ", ".join(_atom(a, names) for a in olympuspr.outvars)
    binders = f"{consts} ; {invars}" if consts else f"; {invars}"
    return (
        f'<div class="signature">lambda {binders}</div>'
        f"<table><thead><tr><th>outputs</th><th>primitive</th><th>params</th>"
        f"<th>operands</th><th>source</th></tr></thead><tbody>{rows}\n</tbody></table>"
        f'<div class="outputs">in ({outs})</div>'
    )


def olympuspr_html(program) -> str:
    """The HTML table of an Olympuspr or ClosedOlympuspr."""
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    return f'<div class="olympuspr">{_STYLE}\n{_program(olympuspr, VarNames())}</div>\n'


displays["html"] = olympuspr_html


def array_html(value: np.ndarray, type_text: str) -> str:
    """A small NumPy-like table of an array's values (text for big or >2-d ones)."""
    caption = f"<caption>Array {escape(type_text)}</caption>"
    if value.ndim > 2 or value.size > _MAX_ARRAY_CELLS:
        body = escape(np.array2string(value, threshold=_MAX_ARRAY_CELLS))
        return f'<div class="olympus-array">{caption}<pre>{body}</pre></div>'
    rows = np.atleast_2d(value)
    cells = "".join(
        "<tr>" + "".join(f"<td>{escape(str(x))}</td>" for x in row) + "</tr>"
        for row in rows
    )
    return f'<table class="olympus-array">{caption}<tbody>{cells}</tbody></table>'
