"""The olympuspr language. Glossary:

aval        abstract value: a `ShapedArray(shape, dtype, weak_type)`
Var         a variable of a program; its aval is its type
Literal     a scalar constant written inline (`3.0:f32[]`)
atom        a Var or a Literal: what equations take as operands
Eqn         `outvars = primitive[params] invars`, with the user's source line
Olympuspr   `{ lambda constvars ; invars. let eqns in (outvars) }`
ClosedOlympuspr  an Olympuspr with values (`consts`) for its constvars
Primitive   an operation; `bind(*arrays, **params)` applies it under the current trace
weak_type   a value from a Python scalar, which gives way in dtype promotion
ct          cotangent (reverse-mode autodiff)
"""

from olympus.ir.checker import OlympusprTypeError, check_olympuspr
from olympus.ir.core import (
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    Primitive,
    ShapedArray,
    SourceInfo,
    Var,
)
from olympus.ir.printer import pp_olympuspr
from olympus.ir import dot, html  # noqa: F401  (fill core.displays: HTML, Graphviz)

# The text parser and the file format load on first use (import time matters).
_LAZY = {
    "parse": "olympus.ir.parser",
    "OlympusprParseError": "olympus.ir.parser",
    "save": "olympus.ir.serialize",
    "load": "olympus.ir.serialize",
    "OlympusprFormatError": "olympus.ir.serialize",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'olympus.ir' has no attribute {name!r}")


__all__ = [
    "ClosedOlympuspr",
    "Eqn",
    "Literal",
    "Olympuspr",
    "OlympusprTypeError",
    "Primitive",
    "ShapedArray",
    "SourceInfo",
    "Var",
    "check_olympuspr",
    "pp_olympuspr",
    "OlympusprParseError",
    "OlympusprFormatError",
    "parse",
    "save",
    "load",
]
