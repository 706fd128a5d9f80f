"""HTML views of programs and arrays for notebooks (`_repr_html_`).

A program is a table with one row per equation: its outputs with their types,
the primitive, its parameters, its operands and the user's source line.
Sub-programs (branches of `cond`, bodies of `while`/`scan`, `pjit` callees)
sit in collapsible `<details>` blocks inside their equation's parameter cell.
Variables are named exactly as the text printer names them, so the HTML and
`print(closed)` can be read side by side. Source lines show the file's base
name (`train.py:12 (loss)`): short in a notebook cell, and the same on every
machine, so the output can be compared with a golden file.

Each output carries its own stylesheet, scoped to its root element, so the
tables look the same in JupyterLab, classic Notebook and VS Code whatever their
own table styles; a wide table scrolls sideways in its box, and a program of
more than `olympus_html_max_equations` equations starts collapsed
(tests/test_notebook_display.py measures this in a browser).
"""

from __future__ import annotations

import os
from collections import Counter
from html import escape

import numpy as np

from olympus import config
from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, displays
from olympus.ir.printer import REWRITE_MARK, VarNames, pp_literal, pp_param

# Every rule sits under the root class `olympus-html`, and each selector is
# more specific than the notebook's own table rules, so the layout survives them:
# JupyterLab's `.jp-RenderedHTMLCommon td` (right-aligned, wrapping, padded) and
# `... tbody tr:nth-child(odd)` stripes, its centred `table-layout: fixed` tables,
# classic Notebook's `.rendered_html ...` and VS Code's `table > tbody > tr > td`.
# Header lines are box shadows: VS Code removes table borders with !important.
_STYLE = """<style>
div.olympus-html { font-family: monospace; font-size: 12px; text-align: left;
  line-height: 1.4; max-width: 100%; }
div.olympus-html .olympus-scroll { overflow-x: auto; max-width: 100%; }
div.olympus-html table:is(.olympus-table, .olympus-array) { border: none;
  border-collapse: collapse; border-spacing: 0; table-layout: auto; width: auto;
  max-width: none; margin: 0; font-size: inherit; color: inherit; }
div.olympus-html table:is(.olympus-table, .olympus-array) thead { border: none; }
div.olympus-html table:is(.olympus-table, .olympus-array) tr:nth-child(n) {
  background: transparent; border: none; }
div.olympus-html table.olympus-table tbody tr:nth-child(n):hover {
  background: rgba(66, 165, 245, 0.12); }
div.olympus-html table:is(.olympus-table, .olympus-array) td:nth-child(n),
div.olympus-html table:is(.olympus-table, .olympus-array) th:nth-child(n) {
  padding: 1px 8px; text-align: left; vertical-align: top; white-space: nowrap;
  line-height: 1.4; max-width: none; border: none; font-weight: normal; }
div.olympus-html table.olympus-table th:nth-child(n) { font-weight: bold;
  box-shadow: inset 0 -1px #999; }
div.olympus-html table.olympus-table tbody tr.olympus-here:nth-child(n) {
  background: #fff3c4; color: #000; font-weight: bold; }
div.olympus-html .type, div.olympus-html .source { color: #888; }
div.olympus-html .prim { font-weight: bold; color: #3b78c4; }
div.olympus-html .lit { color: #b45f06; }
div.olympus-html details { margin-left: 1em; }
div.olympus-html details.olympus-collapsed { margin-left: 0; }
div.olympus-html summary { cursor: pointer; display: list-item; }
div.olympus-html caption { text-align: left; }
div.olympus-html pre { overflow-x: auto; margin: 2px 0; text-align: left; }
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


def _table(rows: str) -> str:
    return (
        '<table class="olympus-table"><thead><tr><th>outputs</th><th>primitive</th>'
        "<th>params</th><th>operands</th><th>source</th></tr></thead>"
        f"<tbody>{rows}\n</tbody></table>"
    )


def _collapsed(eqns, rows: str, limit: int) -> str:
    """A long program's table inside a closed `<details>`: the summary says how
    many equations of which primitives, so the cell stays short until opened."""
    counts = Counter(eqn.primitive.name for eqn in eqns)
    common = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{n} {name}" for name, n in common[:4])
    more = ", ..." if len(common) > 4 else ""
    return (
        f'<details class="olympus-collapsed"><summary>{len(eqns)} equations '
        f"({shown}{more}); collapsed beyond olympus_html_max_equations={limit}"
        f'</summary><div class="olympus-scroll">{_table(rows)}</div></details>'
    )


def _program(olympuspr: Olympuspr, names: VarNames, limit: int | None = None) -> str:
    """The signature, the table of equations and the outputs. With `limit` (the
    top level only), the table scrolls sideways in its own box and is collapsed
    when there are more than `limit` equations."""
    consts = " ".join(_binder(v, names) for v in olympuspr.constvars)
    invars = " ".join(_binder(v, names) for v in olympuspr.invars)
    rows = "".join(f"\n{_eqn_row(e, names)}" for e in olympuspr.eqns)  # a row a line
    outs = ", ".join(_atom(a, names) for a in olympuspr.outvars)
    binders = f"{consts} ; {invars}" if consts else f"; {invars}"
    if limit is None:
        table = _table(rows)
    elif len(olympuspr.eqns) > limit:
        table = _collapsed(olympuspr.eqns, rows, limit)
    else:
        table = f'<div class="olympus-scroll">{_table(rows)}</div>'
    return (
        f'<div class="signature">lambda {binders}</div>{table}'
        f'<div class="outputs">in ({outs})</div>'
    )


def scoped(root_class: str, body: str) -> str:
    """`body` under the root element that the stylesheet's rules are scoped to."""
    return f'<div class="{root_class} olympus-html">{_STYLE}\n{body}</div>\n'


def olympuspr_html(program) -> str:
    """The HTML table of an Olympuspr or ClosedOlympuspr (collapsed beyond
    `olympus_html_max_equations` equations)."""
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    limit = config.read("olympus_html_max_equations")
    return scoped("olympuspr", _program(olympuspr, VarNames(), limit))


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
