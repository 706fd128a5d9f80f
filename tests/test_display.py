"""Notebook HTML, IPython pretty-printing and Graphviz views of programs and
arrays; the HTML is checked by parsing it, the DOT text by its structure."""

import importlib.util
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ir.dot import GraphvizNotFoundError

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def _program(x):
    y = jnp.sin(x) * 2.0  # line of the first equations
    z = lax.cond(y.sum() > 0, lambda v: v + 1.0, lambda v: jnp.cos(v), y)
    return jnp.sum(z, axis=0) + np.arange(3, dtype=np.float32)


CLOSED = olympus.make_olympuspr(_program)(X)
FIRST_LINE = _program.__code__.co_firstlineno + 1


class _Tree(HTMLParser):
    """Records every element as (tag, attrs, text inside, depth of <details>)."""

    def __init__(self):
        super().__init__()
        self.stack, self.elements, self.details = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.stack.append([tag, dict(attrs), "", self.details])
        self.details += tag == "details"

    def handle_endtag(self, tag):
        while self.stack:
            element = self.stack.pop()
            if self.stack:
                self.stack[-1][2] += element[2]
            self.elements.append(tuple(element))
            if element[0] == "details":
                self.details -= 1
            if element[0] == tag:
                break

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2] += data


def _parse_html(text):
    tree = _Tree()
    tree.feed(text)
    tree.close()
    assert not tree.stack, "unclosed elements"
    return tree.elements


def test_html_rows_types_sources_and_collapsible_branches():
    elements = _parse_html(CLOSED._repr_html_())
    top_rows = [e for e in elements if e[0] == "tr" and e[3] == 0][1:]  # skip header
    assert len(top_rows) == len(CLOSED.eqns)
    prims = [
        e[2]
        for e in elements
        if e[0] == "td" and e[1].get("class") == "prim" and e[3] == 0
    ]
    assert prims == [eqn.primitive.name for eqn in CLOSED.eqns]
    sources = [e[2] for e in elements if e[1].get("class") == "source" and e[3] == 0]
    assert f"test_display.py:{FIRST_LINE} (_program)" in sources[0]
    summaries = [e[2] for e in elements if e[0] == "summary"]
    assert summaries == ["branches[0]: 1 equation", "branches[1]: 1 equation"]
    branch_prims = [e[2] for e in elements if e[1].get("class") == "prim" and e[3] == 1]
    assert sorted(branch_prims) == ["add", "cos"]


def test_html_names_and_types_match_the_printed_text():
    elements = _parse_html(CLOSED._repr_html_())
    binders = []
    for tag, attrs, text, _ in elements:
        if tag == "td" and re.fullmatch(r"([a-z]+:[a-z0-9]+\[[0-9,]*\] ?)+", text):
            binders += text.split()
    printed = str(CLOSED)
    for binder in binders:
        assert re.search(rf"\b{re.escape(binder)} ", printed), binder
    assert len(binders) == sum(len(e.outvars) for e in CLOSED.eqns) + 2  # + branch eqns
    literals = [e[2] for e in elements if e[1].get("class") == "lit"]
    assert "2.0:f32[]" in literals


def test_html_escapes_text():
    closed = olympus.make_olympuspr(lambda x: olympus.jit(lambda y: y * 2)(x))(X)
    html = closed._repr_html_()
    assert "name=&lt;lambda&gt;" in html and "<lambda>" not in html


def test_repr_pretty_is_the_printed_text():
    class Printer:
        def __init__(self):
            self.out = ""

        def text(self, s):
            self.out += s

    p = Printer()
    CLOSED._repr_pretty_(p, False)
    assert p.out == str(CLOSED)


def test_array_html_table():
    elements = _parse_html(jnp.asarray(X)._repr_html_())
    cells = np.array([e[2] for e in elements if e[0] == "td"]).astype(np.float32)
    np.testing.assert_array_equal(cells, X.ravel())
    assert [e[2] for e in elements if e[0] == "caption"] == ["Array f32[2,3]"]
    assert len([e for e in elements if e[0] == "tr"]) == 2
    big = _parse_html(jnp.zeros((20, 20))._repr_html_())
    assert [e[0] for e in big] == ["caption", "pre", "div"]


def test_dot_structure():
    dot = CLOSED.to_dot()
    assert dot.startswith("digraph olympuspr {") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    nodes = dict(re.findall(r"^\s*(n\d+) \[label=\"(.*?)\"", dot, re.M))
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)", dot, re.M)
    assert all(a in nodes and b in nodes for a, b in edges)
    ellipses = re.findall(r'shape="ellipse"', dot)
    assert len(ellipses) == len(CLOSED.eqns) + 2  # top level + one per branch
    assert len(re.findall(r"subgraph cluster_\d+", dot)) == 2
    assert 'label="cond branches[0]"' in dot
    assert "input b:f32[2,3]" in nodes.values()
    sin = next(k for k, v in nodes.items() if v == "sin")
    input_node = next(
        k for k, v in nodes.items() if v.startswith("input ") and "f32[2,3]" in v
    )
    assert (input_node, sin) in edges
    consts = [v for v in nodes.values() if v.startswith("const ")]
    assert consts == ["const a:f32[3]"]  # the hoisted np.arange


def test_to_svg_runs_dot(tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_text(
        '#!/bin/sh\n[ "$1" = "-Tsvg" ] || exit 3\n'  # shell builtins only
        "n=0; while IFS= read -r line; do n=$((n+1)); done\n"
        'echo "<svg><!-- $n lines --></svg>"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    svg = CLOSED.to_svg()
    lines = CLOSED.to_dot().count("\n")
    assert svg.strip() == f"<svg><!-- {lines} lines --></svg>"


def test_to_svg_without_graphviz_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GraphvizNotFoundError, match="apt-get install graphviz"):
        CLOSED.olympuspr.to_svg()


def test_to_svg_with_whatever_graphviz_this_machine_has():
    """Real `dot` accepts the DOT text (where Graphviz is installed)."""
    import shutil

    if shutil.which("dot") is None:
        with pytest.raises(GraphvizNotFoundError):
            CLOSED.to_svg()
        return
    svg = CLOSED.to_svg()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert "cond branches[0]" in svg and "reduce_sum" in svg


# ---- golden files: tests/golden/display/{cond,scan,grad}.{html,dot} ------------------
# Regenerate after an intended change of the output (or of
# tests/golden/display_programs.py) with
#     OLYMPUS_UPDATE_GOLDEN=1 python -m pytest tests/test_display.py -k golden
# and review the diff of the golden files before committing them.
GOLDEN_DIR = Path(__file__).parent / "golden" / "display"
UPDATE_GOLDEN = os.environ.get("OLYMPUS_UPDATE_GOLDEN") == "1"


def _golden_programs():
    """tests/golden/display_programs.py, loaded by path (tests is no package)."""
    path = Path(__file__).parent / "golden" / "display_programs.py"
    spec = importlib.util.spec_from_file_location(
        "olympus_golden_display_programs", path
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOLDEN = _golden_programs()


def _view(closed, kind: str) -> str:
    return closed._repr_html_() if kind == "html" else closed.to_dot()


@pytest.mark.parametrize("kind", ["html", "dot"])
@pytest.mark.parametrize("name", sorted(GOLDEN.PROGRAMS))
def test_golden_display(name, kind):
    text = _view(GOLDEN.traced(name), kind)
    path = GOLDEN_DIR / f"{name}.{kind}"
    if UPDATE_GOLDEN:
        path.write_text(text)
    assert path.exists(), (
        f"no golden file {path}; create it with OLYMPUS_UPDATE_GOLDEN=1"
    )
    assert text == path.read_text(), (
        f"{kind} view of {name} differs from {path}; if the change is intended, "
        "regenerate with OLYMPUS_UPDATE_GOLDEN=1 python -m pytest tests/test_display.py -k golden"
    )


def test_golden_views_are_the_same_on_every_trace_and_machine():
    """No ids, addresses or absolute paths: tracing again gives the same text,
    and source lines name the file by its base name."""
    for name in GOLDEN.PROGRAMS:
        for kind in ("html", "dot"):
            first, again = (
                _view(GOLDEN.traced(name), kind),
                _view(GOLDEN.traced(name), kind),
            )
            assert first == again
            assert str(Path(__file__).parent) not in first and " at 0x" not in first


def test_golden_html_structure():
    """The golden programs' HTML read back with html.parser: a row per
    equation, sub-programs in <details>, source lines by base name."""
    scan = GOLDEN.traced("scan")
    elements = _parse_html(scan._repr_html_())
    prims = [e[2] for e in elements if e[1].get("class") == "prim" and e[3] == 0]
    assert prims == ["scan"]
    assert [e[2] for e in elements if e[0] == "summary"] == ["olympuspr: 2 equations"]
    body = [e[2] for e in elements if e[1].get("class") == "prim" and e[3] == 1]
    assert body == ["mul", "add"]
    line = GOLDEN.scan_program.__code__.co_firstlineno + 4
    sources = [e[2] for e in elements if e[1].get("class") == "source" and e[3] == 0]
    assert sources == [f"display_programs.py:{line} (scan_program)"]
    grad = GOLDEN.traced("grad")
    rows = [e for e in _parse_html(grad._repr_html_()) if e[0] == "tr"][1:]
    assert len(rows) == len(grad.eqns) and not any(e[0] == "details" for e in rows)
