"""Graphviz pictures of programs: `to_dot(program)` and `to_svg(program)`.

Inputs and constants are boxes, equations are ellipses labelled with their
primitive, the outputs are one box; an edge carries a variable (labelled
`name:type`, named as the text printer names it) from the equation or input
that defines it to each equation that uses it. Each sub-program (a `cond`
branch, a loop body, a `pjit` callee) is drawn as a cluster of its own,
joined to its equation by a dashed edge.
"""

from __future__ import annotations

import shutil

from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, displays
from olympus.ir.printer import VarNames, pp_literal, pp_param

_MAX_PARAM_TEXT = 40


class GraphvizNotFoundError(RuntimeError):
    """`to_svg` needs Graphviz's `dot` program, which is not installed."""


def _quote(text: str) -> str:
    return (
        '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    )


class _Graph:
    """Accumulates DOT lines; node ids are unique across all sub-programs."""

    def __init__(self):
        self.lines: list[str] = []
        self.names = VarNames()
        self.count = 0

    def node(self, label: str, indent: str, **attrs) -> str:
        node_id = f"n{self.count}"
        self.count += 1
        extra = "".join(f", {k}={_quote(v)}" for k, v in attrs.items())
        self.lines.append(f"{indent}{node_id} [label={_quote(label)}{extra}];")
        return node_id

    def edge(self, src: str, dst: str, indent: str, **attrs) -> None:
        extra = ", ".join(f"{k}={_quote(v)}" for k, v in attrs.items() if v)
        self.lines.append(
            f"{indent}{src} -> {dst}" + (f" [{extra}]" if extra else "") + ";"
        )


def _eqn_label(eqn, names: VarNames) -> str:
    params = [
        f"{k}={pp_param(v, names)}"
        for k, v in sorted(eqn.params.items())
        if not _programs_in(v)
    ]
    text = " ".join(params)
    if len(text) > _MAX_PARAM_TEXT:
        text = text[: _MAX_PARAM_TEXT - 3] + "..."
    return eqn.primitive.name + (f"\n[{text}]" if text else "")


def _programs_in(value) -> list:
    values = value if isinstance(value, tuple) else (value,)
    return [v for v in values if isinstance(v, (ClosedOlympuspr, Olympuspr))]


def _var_label(var, names: VarNames) -> str:
    return f"{names(var)}:{var.aval.str_short()}"


def _operand(graph: _Graph, atom, producers: dict, indent: str) -> tuple[str, str]:
    """The node an operand comes from, and the edge's label."""
    if isinstance(atom, Literal):
        return graph.node(pp_literal(atom), indent, shape="plaintext"), ""
    return producers[atom], _var_label(atom, graph.names)


def _program(graph: _Graph, olympuspr: Olympuspr, indent: str) -> str:
    """Draws one program; returns the id of its first node (the cluster's anchor)."""
    producers: dict = {}
    for kind, vars_, color in (
        ("const", olympuspr.constvars, "lightyellow"),
        ("input", olympuspr.invars, "lightblue"),
    ):
        for v in vars_:
            producers[v] = graph.node(
                f"{kind} {_var_label(v, graph.names)}",
                indent,
                shape="box",
                style="filled",
                fillcolor=color,
            )
    anchor = next(iter(producers.values()), None)
    for eqn in olympuspr.eqns:
        for v in eqn.outvars:
            graph.names(v)
        node = graph.node(_eqn_label(eqn, graph.names), indent, shape="ellipse")
        anchor = anchor or node
        for atom in eqn.invars:
            src, label = _operand(graph, atom, producers, indent)
            graph.edge(src, node, indent, label=label)
        for v in eqn.outvars:
            producers[v] = node
        _subprograms(graph, eqn, node, indent)
    out = graph.node(
        "outputs", indent, shape="box", style="filled", fillcolor="lightgrey"
    )
    for atom in olympuspr.outvars:
        src, label = _operand(graph, atom, producers, indent)
        graph.edge(src, out, indent, label=label)
    return anchor or out


def _subprograms(graph: _Graph, eqn, node: str, indent: str) -> None:
    for key, value in sorted(eqn.params.items()):
        for i, program in enumerate(_programs_in(value)):
            label = f"{eqn.primitive.name} {key}" + (
                f"[{i}]" if isinstance(value, tuple) else ""
            )
            cluster = f"cluster_{graph.count}"
            graph.count += 1
            graph.lines.append(f"{indent}subgraph {cluster} {{")
            graph.lines.append(f"{indent}  label={_quote(label)}; style=dashed;")
            olympuspr = (
                program.olympuspr if isinstance(program, ClosedOlympuspr) else program
            )
            anchor = _program(graph, olympuspr, indent + "  ")
            graph.lines.append(f"{indent}}}")
            graph.edge(
                node,
                anchor,
                indent,
                style="dashed",
                lhead=cluster,
                label=label.split(" ", 1)[1],
            )


def to_dot(program) -> str:
    """The Graphviz DOT text of an Olympuspr or ClosedOlympuspr."""
    olympuspr = program.olympuspr if isinstance(program, ClosedOlympuspr) else program
    graph = _Graph()
    graph.lines += [
        "digraph olympuspr {",
        "  compound=true;",
        "  rankdir=TB;",
        '  node [fontname="monospace", fontsize=10];',
        '  edge [fontname="monospace", fontsize=9];',
    ]
    _program(graph, olympuspr, "  ")
    graph.lines.append("}")
    return "\n".join(graph.lines) + "\n"


def to_svg(program) -> str:
    """The picture as SVG text, drawn by Graphviz's `dot` program."""
    import subprocess  # only here: import olympus should not pay for it

    dot = shutil.which("dot")
    if dot is None:
        raise GraphvizNotFoundError(
            "to_svg() runs Graphviz's `dot` program, which is not on PATH; install "
            "Graphviz (`apt-get install graphviz`, `brew install graphviz`) or render "
            "the text of to_dot() elsewhere"
        )
    done = subprocess.run(
        [dot, "-Tsvg"],
        input=to_dot(program),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"dot failed (exit {done.returncode}): {done.stderr.strip()}"
        )
    return done.stdout


displays["dot"] = to_dot
displays["svg"] = to_svg
