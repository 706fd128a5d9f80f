"""Writes docs/api.md, the API reference, from the code's own docstrings.

    python docs/gen_api.py           # regenerate docs/api.md
    python docs/gen_api.py --check   # exit 1 if docs/api.md is stale

Each module in MODULES gets an index (every public name with its signature and
the first paragraph of its docstring), then one `###` section per function and
class defined in olympus: its signature and its whole docstring, the Args and
Raises sections as lists, Returns as text, the Example as a fenced code block.
An alias of a name documented in the same module links to that name's section
instead of repeating it. A module's public names are its `__all__` when it
has one; otherwise its attributes not starting with `_`, minus modules,
minus objects from outside olympus and NumPy (typing, `from __future__`), and
minus names re-exported from another listed module (`olympus.random.jit` is
`olympus.jit`, documented there). tests/test_docs.py regenerates the text in
memory and fails when docs/api.md differs, so a stale reference fails CI.
"""

from __future__ import annotations

import collections
import difflib
import importlib
import inspect
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API_MD = ROOT / "docs" / "api.md"
COMMAND = "python docs/gen_api.py"

MODULES = [
    "olympus",
    "olympus.numpy",
    "olympus.numpy.linalg",
    "olympus.numpy.fft",
    "olympus.lax",
    "olympus.lax.linalg",
    "olympus.random",
    "olympus.nn",
    "olympus.nn.initializers",
    "olympus.scipy.fft",
    "olympus.scipy.linalg",
    "olympus.scipy.optimize",
    "olympus.scipy.special",
    "olympus.scipy.stats",
    "olympus.scipy.stats.norm",
    "olympus.tree_util",
    "olympus.tree",
    "olympus.typing",
    "olympus.flatten_util",
    "olympus.custom_batching",
    "olympus.ad_checkpoint",
    "olympus.dtypes",
    "olympus.ref",
    "olympus.debug",
    "olympus.experimental",
    "olympus.experimental.checkify",
    "olympus.sharding",
    "olympus.distributed",
    "olympus.example_libraries.optimizers",
    "olympus.example_libraries.stax",
]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_FROZENSET = re.compile(r"frozenset\(\{([^{}]*)\}\)")


def _stable(text: str) -> str:
    """`text` without memory addresses and with each frozenset's items sorted:
    a set of classes iterates in an order that changes from run to run (their
    hashes are addresses), which would make the check below flaky."""
    text = _ADDRESS.sub("", text)
    return _FROZENSET.sub(
        lambda m: "frozenset({" + ", ".join(sorted(m.group(1).split(", "))) + "})",
        text,
    )


def _home(obj) -> str | None:
    """The module an object was defined in, if it says."""
    module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) else None


def _owner(obj, modules: list[types.ModuleType]) -> str | None:
    """The listed module whose package defines `obj` (longest prefix), if any."""
    if any(
        obj is getattr(modules[0], n, None) for n in getattr(modules[0], "__all__", ())
    ):
        return modules[0].__name__
    home = _home(obj) or ""
    best = None
    for m in modules[1:]:
        inside = home == m.__name__ or home.startswith(m.__name__ + ".")
        if inside and (best is None or len(m.__name__) > len(best)):
            best = m.__name__
    return best


def public_names(
    module: types.ModuleType, modules: list[types.ModuleType]
) -> list[str]:
    """The names this reference documents for `module` (see the module docstring)."""
    if hasattr(module, "__all__"):
        return sorted(set(module.__all__))
    names = []
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        if not isinstance(obj, (bool, int, float, complex, str, type(None))):
            top = (_home(obj) or "").split(".")[0]
            if top not in ("olympus", "numpy", "ml_dtypes"):
                continue
            owner = _owner(obj, modules)
            if owner is not None and owner != module.__name__:
                continue
        names.append(name)
    return sorted(names)


def _signature(obj) -> str:
    """The parameters with their defaults; annotations are left out (their text
    depends on how a module spelled them, and tests may wrap an `__init__`)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    empty = inspect.Parameter.empty
    params = [p.replace(annotation=empty) for p in sig.parameters.values()]
    sig = sig.replace(parameters=params, return_annotation=empty)
    return _stable(str(sig))


def _first_paragraph(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    paragraph = doc.strip().split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def describe(name: str, obj) -> str:
    """One list item: the name with its signature, then what its docstring says first."""
    if isinstance(obj, (bool, int, float, complex, str, type(None))):
        return f"- `{name} = {obj!r}`"
    if isinstance(obj, types.ModuleType):
        return f"- module `{obj.__name__}`: {_first_paragraph(obj)}"
    home = _home(obj)
    if home is None:  # an instance such as a NumPy dtype
        return f"- `{name} = {_stable(repr(obj))}`"
    if home.split(".")[0] != "olympus":
        return f"- `{name}`: `{home}.{getattr(obj, '__name__', name)}`"
    kind = "class " if inspect.isclass(obj) else ""
    line = f"- `{kind}{name}{_signature(obj)}`"
    alias = getattr(obj, "__name__", name)
    if inspect.isfunction(obj) and alias != name and not alias.startswith("<"):
        line += f" (alias of `{alias}`)"
    doc = _first_paragraph(obj)
    return f"{line}: {doc}" if doc else line


def _anchor(name: str) -> str:
    """The anchor GitHub gives a heading whose text is `name`."""
    return re.sub(r"[^\w\- ]", "", name.lower()).replace(" ", "-")


SECTIONS = ("Args", "Returns", "Raises", "Example")
_ITEM = re.compile(r"(\*{0,2}[\w.]+)(\s*\([^)]*\))?:\s*(.*)")


def _split_sections(doc: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """The docstring's text before its first section, and each section's name
    with its lines (dedented by the section's own indent)."""
    lines = doc.splitlines()
    starts = [
        i for i, line in enumerate(lines) if line[:-1] in SECTIONS and line[-1:] == ":"
    ]
    if not starts:
        return doc.strip(), []
    sections = []
    for at, end in zip(starts, starts[1:] + [len(lines)]):
        body = lines[at + 1 : end]
        indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
        sections.append((lines[at][:-1], [b[indent:] for b in body]))
    return "\n".join(lines[: starts[0]]).strip(), sections


def _items(lines: list[str]) -> list[str]:
    """An Args or Raises section as a Markdown list: `name: text` lines start an
    item, lines indented under them continue it."""
    items: list[list[str]] = []
    for line in lines:
        match = _ITEM.fullmatch(line) if line and not line[0].isspace() else None
        if match:
            name, kind, text = match.groups()
            kind = f" ({kind.strip()[1:-1]})" if kind else ""
            items.append([f"- `{name}`{kind}: {text}".rstrip()])
        elif line.strip() and items:
            items[-1].append(line.strip())
        elif line.strip():
            items.append([line.strip()])
    return [" ".join(item) for item in items]


def _text(block: str) -> list[str]:
    """Prose as Markdown paragraphs; indented or `>>>` blocks become code."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", block.strip()):
        if not para.strip():
            continue
        first = para.splitlines()[0]
        if first.startswith((" ", ">>>")):
            lang = "pycon" if first.startswith(">>>") else ""
            out += ["```" + lang, inspect.cleandoc("\n" + para), "```", ""]
        elif first.startswith(("- ", "* ")):  # a list: one line per item
            items: list[str] = []
            for line in para.splitlines():
                if line.startswith(("- ", "* ")):
                    items.append(line)
                else:
                    items[-1] += " " + line.strip()
            out += items + [""]
        else:
            out += [" ".join(line.strip() for line in para.splitlines()), ""]
    return out


def _section(name: str, lines: list[str]) -> list[str]:
    out = [f"**{name}**", ""]
    if name in ("Args", "Raises"):
        return out + _items(lines) + [""]
    if name == "Example":
        code = "\n".join(lines).strip("\n")
        return out + ["```pycon", code, "```", ""]
    return out + _text("\n".join(lines))


def detail(qualified: str, name: str, obj) -> list[str]:
    """One function's or class's section: heading, signature, whole docstring."""
    kind = "class " if inspect.isclass(obj) else ""
    out = [
        f"### {qualified}",
        "",
        "```python",
        f"{kind}{name}{_signature(obj)}",
        "```",
        "",
    ]
    summary, sections = _split_sections(inspect.getdoc(obj) or "")
    out += _text(summary)
    for section, lines in sections:
        out += _section(section, lines)
    return out


def _documented(module, name: str, obj) -> str | None:
    """What `name`'s section is: itself (a function or class defined in
    olympus), the name it aliases in the same module, or None (no section)."""
    if not (inspect.isclass(obj) or callable(obj)) or isinstance(obj, types.ModuleType):
        return None
    if (_home(obj) or "").split(".")[0] != "olympus" or not inspect.getdoc(obj):
        return None
    alias = getattr(obj, "__name__", name)
    if alias != name and getattr(module, alias, None) is obj:
        return alias
    return name


def _module_page(module, names: list[str], anchors: collections.Counter) -> list[str]:
    """A module's index of names, then a section for each documented one."""
    targets = {n: _documented(module, n, getattr(module, n)) for n in names}
    links = {}
    for name in names:
        if targets[name] == name:
            anchor = _anchor(f"{module.__name__}.{name}")
            seen = anchors[anchor]
            anchors[anchor] += 1
            links[name] = f"{anchor}-{seen}" if seen else anchor
    index, details = [], []
    for name in names:
        item = describe(name, getattr(module, name))
        target = targets[name]
        if target in links:
            item = re.sub(r"^- (`[^`]*`)", rf"- [\1](#{links[target]})", item, count=1)
        index.append(item)
        if target == name:
            details += detail(f"{module.__name__}.{name}", name, getattr(module, name))
    out = index + [""] + details if details else index
    while out and out[-1] == "":
        out.pop()
    return out


def render() -> str:
    """The whole of docs/api.md."""
    modules = [importlib.import_module(name) for name in MODULES]
    out = [
        "# olympus API reference",
        "",
        # ruff format (tests/test_style.py) would rewrap the code blocks: they
        # show signatures and docstring examples as written, so it is off.
        "<!-- fmt:off -->",
        "",
        f"Generated from the docstrings by `{COMMAND}`; do not edit by hand",
        "(tests/test_docs.py fails when this file is stale). Each module lists its",
        "names with their signatures and the first paragraph of their docstrings,",
        "then gives each function and class its own section with the whole",
        "docstring: arguments, return value, the errors it raises and an example.",
        "",
    ]
    anchors: collections.Counter = collections.Counter()
    for m in modules:
        anchors[_anchor(m.__name__)] += 1
    anchors["olympus-api-reference"] += 1
    out += [f"- [`{m.__name__}`](#{_anchor(m.__name__)})" for m in modules]
    for module in modules:
        names = public_names(module, modules)
        source = "`__all__`" if hasattr(module, "__all__") else "public attributes"
        out += ["", f"## {module.__name__}", ""]
        summary = _first_paragraph(module)
        if summary:
            out += [summary, ""]
        out += [f"{len(names)} names (from {source}).", ""]
        out += _module_page(module, names, anchors)
    while out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        written = API_MD.read_text() if API_MD.exists() else ""
        if written != text:
            diff = difflib.unified_diff(
                written.splitlines(),
                text.splitlines(),
                "docs/api.md",
                "generated",
                lineterm="",
            )
            print("\n".join(list(diff)[:40]), file=sys.stderr)
            print(f"{API_MD} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    API_MD.write_text(text)
    print(f"wrote {API_MD} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
