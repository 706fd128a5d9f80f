"""Writes docs/api.md, the API reference, from the code's own docstrings.

    python docs/gen_api.py           # regenerate docs/api.md
    python docs/gen_api.py --check   # exit 1 if docs/api.md is stale

Every public name of each module in MODULES gets its signature and the first
paragraph of its docstring. A module's public names are its `__all__` when it
has one; otherwise its attributes not starting with `_`, minus modules,
minus objects from outside olympus and NumPy (typing, `from __future__`), and
minus names re-exported from another listed module (`olympus.random.jit` is
`olympus.jit`, documented there). tests/test_docs.py regenerates the text in
memory and fails when docs/api.md differs, so a stale reference fails CI.
"""

from __future__ import annotations

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
    return name.replace(".", "")


def render() -> str:
    """The whole of docs/api.md."""
    modules = [importlib.import_module(name) for name in MODULES]
    out = [
        "# olympus API reference",
        "",
        f"Generated from the docstrings by `{COMMAND}`; do not edit by hand",
        "(tests/test_docs.py fails when this file is stale). Each name shows its",
        "signature and the first paragraph of its docstring.",
        "",
    ]
    out += [f"- [`{m.__name__}`](#{_anchor(m.__name__)})" for m in modules]
    for module in modules:
        names = public_names(module, modules)
        source = "`__all__`" if hasattr(module, "__all__") else "public attributes"
        out += ["", f"## {module.__name__}", ""]
        summary = _first_paragraph(module)
        if summary:
            out += [summary, ""]
        out += [f"{len(names)} names (from {source}).", ""]
        out += [describe(name, getattr(module, name)) for name in names]
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
