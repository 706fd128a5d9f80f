"""The notebook HTML of programs, sub-programs and the stepper keeps its layout
under JupyterLab's, classic Notebook's and VS Code's table styles, measured in
headless Chromium.

The page puts each view inside three hosts, each carrying one front end's rules
for tables in rendered HTML: JupyterLab's `.jp-RenderedHTMLCommon` (right-aligned,
wrapping, padded cells, striped rows, centred tables), classic Notebook's and
nbconvert's `.rendered_html`, and VS Code's notebook output rules (scoped under
`.vscode`, which makes them stronger than in VS Code itself). A script in the
page opens the sub-programs' `<details>`, measures every table cell, scroll box
and collapsed block with getBoundingClientRect, and writes the numbers into the
page, which Chromium dumps (`--dump-dom`); the assertions are on that layout,
not on pixels. The views are those the tutorial (docs/tutorial.ipynb, run in
this process) displays, plus a long program, a wide one and the stepper. A
control view, the same HTML without its stylesheet, must fail the checks, so
the checks can fail.

The same measurements run on a second page, the real one: nbconvert executes
the tutorial (plus cells showing the long, wide and stepper views and the
control) in a Jupyter kernel, once per module, and exports it with the `lab`
template, which ships JupyterLab's own stylesheets; every HTML output there is
measured inside its output area. A cell that raises fails
test_the_tutorial_runs_under_nbconvert.

The layout tests skip where no Chromium or Chrome is installed (CI, unless it
installs one), the nbconvert ones also where nbconvert, ipykernel or a python3
Jupyter kernel is missing; the stylesheet's scoping and the collapse limit are
checked everywhere. OLYMPUS_DISPLAY_SCREENSHOT=<file.png> also saves screenshots
(<file>.png and <file>-nbconvert-lab.png).
"""

import ast
import contextlib
import importlib.util
import inspect
import io
import json
import os
import re
import shutil
import subprocess
from html import escape
from pathlib import Path

import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.ir.html import _STYLE

ROOT = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next(filter(None, map(shutil.which, BROWSERS)), None)
HOST_WIDTH_PX = 560
TOLERANCE_PX = 0.5

# JupyterLab 4's rules for rendered HTML tables (rendermime's base.css), with its
# CSS variables replaced by the light theme's values.
JUPYTERLAB_CSS = """
.jp-RenderedHTMLCommon { font-size: 14px; line-height: 1.6; }
.jp-RenderedHTMLCommon table { border-collapse: collapse; border-spacing: 0;
  border: none; color: rgba(0,0,0,.87); font-size: 13px; table-layout: fixed;
  margin-left: auto; margin-bottom: 1em; margin-right: auto; }
.jp-RenderedHTMLCommon thead { border-bottom: 1px solid #616161;
  vertical-align: bottom; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th, .jp-RenderedHTMLCommon tr {
  vertical-align: middle; padding: 0.5em; line-height: normal; white-space: normal;
  max-width: none; border: none; }
:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td,
:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon th,
:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon tr { text-align: right; }
.jp-RenderedHTMLCommon th { font-weight: bold; }
.jp-RenderedHTMLCommon tbody tr:nth-child(odd) { background: #fff; }
.jp-RenderedHTMLCommon tbody tr:nth-child(even) { background: #f5f5f5; }
.jp-RenderedHTMLCommon tbody tr:hover { background: rgba(66,165,245,.2); }
.jp-RenderedHTMLCommon pre { padding: 0; margin: 0 0 1em; }
"""

# Classic Notebook's and nbconvert's rules for the same (`.rendered_html`).
NOTEBOOK_CSS = """
.rendered_html * + table { margin-top: 1em; }
.rendered_html table { margin-left: auto; margin-right: auto; border: none;
  border-collapse: collapse; border-spacing: 0; color: black; font-size: 12px;
  table-layout: fixed; }
.rendered_html thead { border-bottom: 1px solid black; vertical-align: bottom; }
.rendered_html tr, .rendered_html th, .rendered_html td { text-align: right;
  vertical-align: middle; padding: 0.5em 0.5em; line-height: normal;
  white-space: normal; max-width: none; border: none; }
.rendered_html th { font-weight: bold; }
.rendered_html tbody tr:nth-child(odd) { background: #f5f5f5; }
.rendered_html tbody tr:hover { background: rgba(66, 165, 245, 0.2); }
"""

# VS Code's notebook output and markdown table rules, scoped under .vscode.
VSCODE_CSS = """
.vscode table, .vscode thead, .vscode tr, .vscode th, .vscode td, .vscode tbody {
  border: none !important; border-color: transparent; border-spacing: 0;
  border-collapse: collapse; }
.vscode table, .vscode th, .vscode tr { vertical-align: middle; text-align: right; }
.vscode thead { font-weight: bold; background-color: rgba(130,130,130,.16); }
.vscode th, .vscode td { padding: 4px 8px; }
.vscode tr:nth-child(even) { background-color: rgba(130,130,130,.08); }
.vscode table > tbody > tr + tr > td { border-top: 1px solid; }
.vscode table > thead > tr > th { text-align: left; border-bottom: 1px solid; }
"""

# Opens every sub-program (a collapsed long program stays closed), then writes
# the boxes of each case's tables, scroll boxes and collapsed blocks as JSON.
MEASURE_JS = """
const box = (e) => { const r = e.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom]; };
const contentBox = (e) => { const range = document.createRange();
  range.selectNodeContents(e); return box(range); };
const shown = (e) => e.checkVisibility();
document.querySelectorAll('details:not(.olympus-collapsed)')
  .forEach((d) => { d.open = true; });
const cases = [];
for (const c of document.querySelectorAll('.case')) {
  const host = c.closest('.host');
  const tables = [...c.querySelectorAll('table')].filter(shown).map((t) => ({
    box: box(t), parent: box(t.parentElement),
    rows: [...t.rows].map((r) => ({
      box: box(r), here: r.classList.contains('olympus-here'),
      body: r.parentElement.tagName === 'TBODY',
      background: getComputedStyle(r).backgroundColor,
      cells: [...r.cells].map((td) => ({
        box: box(td), content: contentBox(td), empty: td.textContent === '',
        align: getComputedStyle(td).textAlign,
        padding: parseFloat(getComputedStyle(td).paddingLeft) })) })) }));
  const scrolls = [...c.querySelectorAll('.olympus-scroll')].filter(shown)
    .map((s) => { s.scrollLeft = 40; const scrolled = s.scrollLeft;
      s.scrollLeft = 0; return { box: box(s), scrollWidth: s.scrollWidth,
      clientWidth: s.clientWidth, scrolled }; });
  const collapsed = [...c.querySelectorAll('details.olympus-collapsed')]
    .map((d) => ({ open: d.open, tableShown: shown(d.querySelector('table')),
      summary: d.querySelector('summary').textContent }));
  cases.push({ host: host.dataset.host, name: c.dataset.name,
    hostBox: box(host), box: box(c), tables, scrolls, collapsed });
}
document.getElementById('layout').textContent = JSON.stringify(cases);
"""


def _displayed(source: str, namespace: dict):
    """Runs a cell as IPython does; its last expression's value, if any."""
    tree = ast.parse(source)
    last = (
        tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    )
    exec(compile(tree, "<cell>", "exec"), namespace)
    if last is not None:
        return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)


def _tutorial_views() -> dict:
    """The HTML views the tutorial shows, or whose text it prints."""
    cells = json.loads((ROOT / "docs" / "tutorial.ipynb").read_text())["cells"]
    namespace, views = {}, {}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in cells:
            if cell["cell_type"] == "code":
                value = _displayed("".join(cell["source"]), namespace)
                if hasattr(value, "_repr_html_"):
                    views[f"tutorial-{cell['metadata']['tags'][0]}"] = value
    make = namespace["olympus"].make_olympuspr
    views["tutorial-ir"] = namespace["program"]
    views["tutorial-ir_grad"] = make(olympus.grad(namespace["loss"]))(
        namespace["w"], namespace["x"]
    )
    stepper = olympus.debug.Stepper(namespace["repeated"], namespace["x"])
    views["tutorial-stepper"] = stepper.continue_to(primitive="add")
    return {name: value._repr_html_() for name, value in views.items()}


def _long(x):
    for _ in range(40):
        x = jnp.sin(x) * 2.0
    return x


def _wide(x):
    y = jnp.concatenate([x] * 30)
    dims = (((1,), (0,)), ((), ()))
    z = lax.dot_general(x.reshape(1, 4), y.reshape(4, 30), dims)
    return lax.cond(
        z.sum() > 0,
        lambda v: v.reshape(2, 3, 5) * 2.0,
        lambda v: jnp.cos(v).reshape(2, 3, 5),
        z,
    )


def _views() -> dict:
    views = _tutorial_views()
    x = jnp.arange(4.0)
    views["long"] = olympus.make_olympuspr(_long)(x)._repr_html_()
    opened = '<details class="olympus-collapsed" open>'
    views["long-opened"] = views["long"].replace(opened[:-6] + ">", opened)
    views["wide"] = olympus.make_olympuspr(_wide)(x)._repr_html_()
    stepper = olympus.debug.Stepper(_wide, x).continue_to(primitive="cond")
    views["stepper-in-branch"] = stepper.step_into()._repr_html_()
    return views


def _unstyled(html: str) -> str:
    """The control: a view without its stylesheet, out of reach of the others'."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    return html.replace("olympus-", "unstyled-")


def _page(views: dict) -> str:
    cases = {**views, "control-unstyled": _unstyled(views["wide"])}
    body = "".join(
        f'<div class="case" data-name="{escape(name)}">{html}</div>'
        for name, html in cases.items()
    )
    hosts = (
        f'<div class="host jp-RenderedHTMLCommon" data-host="jupyterlab" '
        f'style="width: {HOST_WIDTH_PX}px">{body}</div>'
        f'<div class="host vscode" data-host="vscode" '
        f'style="width: {HOST_WIDTH_PX}px">{body}</div>'
        f'<div class="host rendered_html" data-host="notebook" '
        f'style="width: {HOST_WIDTH_PX}px">{body}</div>'
    )
    return (
        f"<!DOCTYPE html><html><head><style>{JUPYTERLAB_CSS}{NOTEBOOK_CSS}{VSCODE_CSS}"
        "</style>"
        f'</head><body>{hosts}<pre id="layout"></pre>'
        f"<script>{MEASURE_JS}</script></body></html>"
    )


def _chromium(page: Path, *flags: str) -> str:
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", *flags]
    done = subprocess.run(
        [*command, page.as_uri()], capture_output=True, text=True, timeout=120
    )
    return done.stdout


def _measured(page: Path, *flags: str) -> dict:
    """The layout MEASURE_JS wrote into the page, by (host, view name)."""
    dom = _chromium(page, "--dump-dom", *flags)
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.S)
    assert found and found.group(1), f"no layout in Chromium's page:\n{dom[-2000:]}"
    text = found.group(1).replace("&amp;", "&").replace("&lt;", "<")
    return {(c["host"], c["name"]): c for c in json.loads(text.replace("&gt;", ">"))}


def _screenshot(page: Path, suffix: str = "", width_px: int = 1280) -> None:
    if os.environ.get("OLYMPUS_DISPLAY_SCREENSHOT"):
        shot = Path(os.environ["OLYMPUS_DISPLAY_SCREENSHOT"]).resolve()
        shot = shot.with_stem(shot.stem + suffix)
        _chromium(page, f"--screenshot={shot}", f"--window-size={width_px},4000")


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> dict:
    if BROWSER is None:
        pytest.skip("no Chromium or Chrome installed")
    page = tmp_path_factory.mktemp("display") / "page.html"
    page.write_text(_page(_views()))
    _screenshot(page)
    return _measured(page)


# The nbconvert route: the tutorial executed by a Jupyter kernel and exported with
# the `lab` template, whose page carries JupyterLab's own stylesheets (not the
# imitation above). Cells appended to the tutorial show the views it does not.
LAB_HOST = "nbconvert-lab"
LAB_WINDOW_PX = 800
COLLAPSED = '<details class="olympus-collapsed">'

# Makes every HTML output of a cell a case named by the cell's tag, inside a host
# (its output area), so that MEASURE_JS measures it as on the hosts' page.
MARK_LAB_VIEWS_JS = """
for (const cell of document.querySelectorAll('.jp-Cell')) {
  const tag = [...cell.classList].find((k) => k.startsWith('celltag_'));
  for (const out of cell.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="text/html"]')) {
    out.classList.add('host'); out.dataset.host = 'nbconvert-lab';
    out.firstElementChild.classList.add('case');
    out.firstElementChild.dataset.name = tag ? tag.slice(8) : 'untagged';
  }
}
"""

# The screenshot shows the cells with HTML output only (the page is long).
LAB_SCREENSHOT_CSS = """<style>
.jp-Cell:not(:has(.jp-OutputArea-output[data-mime-type="text/html"])) {
  display: none; }
</style>"""


def _lab_extra_cells(nbformat) -> list:
    """The tutorial's stepper, a long and a wide program, a stepper inside a
    branch, a long program opened and the unstyled control, as cells."""
    new = nbformat.v4.new_code_cell
    long_html = "olympus.make_olympuspr(_long)(x4)._repr_html_()"
    opened = f"{long_html}.replace({COLLAPSED!r}, {COLLAPSED[:-1] + ' open>'!r})"
    control = _unstyled(olympus.make_olympuspr(_wide)(jnp.arange(4.0))._repr_html_())
    definitions = inspect.getsource(_long) + "\n\n" + inspect.getsource(_wide)
    views = {
        "tutorial-stepper": "stepper",
        "long": "olympus.make_olympuspr(_long)(x4)",
        "long-opened": f"HTML({opened})",
        "wide": "olympus.make_olympuspr(_wide)(x4)",
        "stepper-in-branch": "olympus.debug.Stepper(_wide, x4)"
        '.continue_to(primitive="cond").step_into()',
        "control-unstyled": f"HTML({control!r})",
    }
    setup = (
        "from IPython.display import HTML\n\n" + definitions + "\nx4 = jnp.arange(4.0)"
    )
    cells = [new(setup)]
    return cells + [new(src, metadata={"tags": [t]}) for t, src in views.items()]


@pytest.fixture(scope="module")
def lab_notebook():
    """The tutorial (tags prefixed `tutorial-`) and the extra cells, executed once
    by a Jupyter kernel; a cell's error stays in its outputs."""
    nbformat = pytest.importorskip("nbformat")
    executing = pytest.importorskip("nbconvert.preprocessors")
    kernelspec = pytest.importorskip("jupyter_client.kernelspec")
    if importlib.util.find_spec("ipykernel") is None:
        pytest.skip("no ipykernel installed")
    if "python3" not in kernelspec.KernelSpecManager().find_kernel_specs():
        pytest.skip("no python3 Jupyter kernel installed")
    notebook = nbformat.read(ROOT / "docs" / "tutorial.ipynb", as_version=4)
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        cell.metadata["tags"] = [f"tutorial-{tag}" for tag in tags]
    notebook.cells += _lab_extra_cells(nbformat)
    run = executing.ExecutePreprocessor(
        kernel_name="python3", timeout=120, allow_errors=True
    )
    run.preprocess(notebook, {"metadata": {"path": str(ROOT)}})
    return notebook


@pytest.fixture(scope="module")
def lab_layout(lab_notebook, tmp_path_factory) -> dict:
    if BROWSER is None:
        pytest.skip("no Chromium or Chrome installed")
    exporter = pytest.importorskip("nbconvert").HTMLExporter(template_name="lab")
    html, _ = exporter.from_notebook_node(lab_notebook)
    # Offline: the CDN scripts (require.js, MathJax) play no part in the tables.
    html = re.sub(r"<script[^>]*\bsrc=[^>]*>\s*</script>", "", html)
    head, body_end, tail = html.rpartition("</body>")
    measure = f'<pre id="layout"></pre><script>{MARK_LAB_VIEWS_JS}{MEASURE_JS}</script>'
    folder = tmp_path_factory.mktemp("nbconvert")
    page, shown = folder / "tutorial.html", folder / "tutorial-shown.html"
    page.write_text(head + measure + body_end + tail)
    shown.write_text(head + LAB_SCREENSHOT_CSS + measure + body_end + tail)
    _screenshot(shown, "-nbconvert-lab", LAB_WINDOW_PX)
    return _measured(page, f"--window-size={LAB_WINDOW_PX},2000")


@pytest.fixture
def views(request, host) -> dict:
    """The views measured in `host`, by name: on the hosts' page or nbconvert's."""
    found = request.getfixturevalue("lab_layout" if host == LAB_HOST else "layout")
    return {name: case for (h, name), case in found.items() if h == host}


def _problems(case: dict) -> list[str]:
    """What is wrong with one view's layout (empty: nothing)."""
    problems = []
    if case["box"][2] > case["hostBox"][2] + TOLERANCE_PX:
        problems.append(f"overflows its output area: {case['box']}")
    for t, table in enumerate(case["tables"]):
        problems += [f"table {t}: {p}" for p in _table_problems(table)]
    return problems


def _table_problems(table: dict) -> list[str]:
    problems = []
    if table["box"][0] > table["parent"][0] + TOLERANCE_PX:
        problems.append("not at the left of its box (centred?)")
    rows = table["rows"]
    for above, below in zip(rows, rows[1:]):
        if above["box"][3] > below["box"][1] + TOLERANCE_PX:
            problems.append("rows overlap")
    backgrounds = {r["background"] for r in rows if r["body"] and not r["here"]}
    if len(backgrounds) > 1:
        problems.append(f"striped rows: {sorted(backgrounds)}")
    for row in rows:
        for j, cell in enumerate(row["cells"]):
            problems += [f"column {j}: {p}" for p in _cell_problems(cell)]
    widths = {len(r["cells"]) for r in rows}
    for j in range(min(widths)):
        lefts = {round(r["cells"][j]["box"][0], 1) for r in rows}
        if len(lefts) > 1:
            problems.append(f"column {j} misaligned: left edges {sorted(lefts)}")
    return problems


def _cell_problems(cell: dict) -> list[str]:
    (left, _, right, _), content = cell["box"], cell["content"]
    if cell["empty"]:
        return []
    problems = []
    if content[0] < left - TOLERANCE_PX or content[2] > right + TOLERANCE_PX:
        problems.append(f"content {content} overflows its cell {cell['box']}")
    if cell["align"] not in ("left", "start"):
        problems.append(f"text-align {cell['align']}")
    if content[0] - left > cell["padding"] + 1:
        problems.append("content not at the cell's left")
    return problems


HOSTS = ("jupyterlab", "notebook", "vscode", LAB_HOST)


def test_the_tutorial_runs_under_nbconvert(lab_notebook):
    code = [cell for cell in lab_notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    errors = [
        (cell.metadata.get("tags"), "\n".join(out.traceback))
        for cell in code
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert errors == []
    silent = [
        cell.metadata["tags"]
        for cell in code
        if "print(" in cell.source
        and not any(out.get("name") == "stdout" and out.text for out in cell.outputs)
    ]
    assert silent == []  # every cell that prints printed


@pytest.mark.parametrize("host", HOSTS)
def test_every_view_keeps_its_layout(views, host):
    names = [name for name in views if name != "control-unstyled"]
    expected = {"tutorial-html", "tutorial-stepper", "long", "long-opened", "wide"}
    assert expected | {"stepper-in-branch"} <= set(names)
    for name in names:
        case = views[name]
        assert case["tables"] or case["collapsed"], name
        assert _problems(case) == [], (host, name)


@pytest.mark.parametrize("host", ("jupyterlab", LAB_HOST))
def test_sub_programs_are_measured_open(views, host):
    """The tutorial's jitted cond: the pjit callee's table inside the program's,
    and the two branches' inside that."""
    assert len(views["tutorial-html"]["tables"]) == 4
    assert len(views["wide"]["tables"]) == 3


@pytest.mark.parametrize("host", HOSTS)
def test_a_wide_program_scrolls_inside_its_box(views, host):
    case = views["wide"]
    (scroll,) = case["scrolls"]
    assert scroll["scrollWidth"] > scroll["clientWidth"] and scroll["scrolled"] > 0
    assert scroll["box"][2] <= case["hostBox"][2] + TOLERANCE_PX


@pytest.mark.parametrize("host", HOSTS)
def test_a_long_program_is_collapsed(views, host):
    case = views["long"]
    limit = olympus.config.read("olympus_html_max_equations")
    (block,) = case["collapsed"]
    assert not block["open"] and not block["tableShown"] and not case["tables"][1:]
    assert block["summary"].startswith("80 equations (40 mul, 40 sin)")
    assert f"olympus_html_max_equations={limit}" in block["summary"]
    assert case["box"][3] - case["box"][1] < 100  # px: three short lines
    (table,) = views["long-opened"]["tables"]
    assert len(table["rows"]) == 1 + 80


@pytest.mark.parametrize("host", HOSTS)
def test_the_checks_catch_the_hosts_styles_on_an_unstyled_table(views, host):
    problems = _problems(views["control-unstyled"])
    assert any("text-align right" in p for p in problems)
    assert any("striped rows" in p for p in problems)
    assert any("content not at the cell's left" in p for p in problems)


def test_the_limit_is_an_option():
    x = jnp.arange(4.0)
    with olympus.config.override("olympus_html_max_equations", 100):
        assert (
            '<details class="olympus-collapsed">'
            not in olympus.make_olympuspr(_long)(x)._repr_html_()
        )
    with olympus.config.override("olympus_html_max_equations", 2):
        html = olympus.make_olympuspr(_long)(x)._repr_html_()
    assert '<details class="olympus-collapsed">' in html


def test_every_style_rule_is_scoped_to_the_root():
    """No rule reaches outside olympus's own output (the notebook's other cells)."""
    rules = re.findall(r"([^{}]+)\{[^{}]*\}", _STYLE.removeprefix("<style>"))
    outside_parentheses = r",(?![^(]*\))"
    selectors = [s.strip() for r in rules for s in re.split(outside_parentheses, r)]
    assert len(selectors) > 10
    assert all(s.startswith("div.olympus-html") for s in selectors), selectors


def test_one_stylesheet_per_output():
    x = jnp.arange(4.0)
    stepper = olympus.debug.Stepper(_wide, x).continue_to(primitive="cond")
    for html in (
        olympus.make_olympuspr(_wide)(x)._repr_html_(),
        stepper._repr_html_(),
        stepper.current._repr_html_(),
    ):
        assert html.startswith('<div class="') and html.count("<style>") == 1
        assert "olympus-html" in html[: html.index(">")]
