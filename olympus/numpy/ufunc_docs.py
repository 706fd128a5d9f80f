"""Docstrings of the jnp ufuncs, and the docstring sections numpy's families
of functions share.

`_binary` and `_unary` in numpy/ufuncs.py build many functions from one body,
so their text lives here (DOCS), keyed by the ufunc's name: each gets its own
summary, note and example. What several functions say alike is written once
below: the Args/Returns/Raises of a function of one array `x` or of two
broadcasting arrays `x1` and `x2`, the common Raises sections (RAISES_*), the
`size`/`fill_value` parameters. A numpy module keeps each function's own
summary, note and example in its docstring and adds the shared sections at
its end (`add_sections`, `add_args`, `append_args`, `add_unary_sections`,
`add_binary_sections`), so `help()` shows the full format.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Callable

from olympus.lax.op_docs import with_sections

# What a ufunc's result is, after "An array of x's shape" (unary) or "An array
# of the broadcast shape" (binary).
SAME = " and dtype"
FLOAT = " and an inexact dtype (integers become the default float)"
BOOL = ", of dtype bool"
PROMOTED = " and the promoted dtype"
PROMOTED_FLOAT = " and the promoted float dtype"
PROMOTED_INT = " and the promoted integer dtype"
REAL_FLOAT = " and a float dtype"

ARGS_X = "Args:\n  x: an array or scalar."
ARGS_X1_X2 = (
    "Args:\n  x1: an array or scalar.\n  x2: an array or scalar; it broadcasts with x1."
)
_NOT_ARRAY = (
    "  ArrayLikeTypeError: an argument is a list or other non-array (convert it\n"
    "    with jnp.asarray)."
)
RAISES_X = f"Raises:\n{_NOT_ARRAY}"
RAISES_X1_X2 = f"{RAISES_X}\n  IncompatibleShapesError: the shapes do not broadcast."
RAISES_AXIS = f"{RAISES_X}\n  ValueError: an axis is out of range for the array's rank."
_OUT = "  out: unsupported (must be None); arrays are immutable, as in JAX."
_OUT_RAISES = "  OutArgumentError: out is not None (a NotImplementedError, as JAX's)."
ARGS_X_OUT = f"{ARGS_X}\n{_OUT}"
RAISES_X_OUT = f"{RAISES_X}\n{_OUT_RAISES}"
RAISES_NOTHING = "Raises:\n  Nothing: of its own for valid array or scalar input."
RAISES_SIZE = "Raises:\n  OlympusTypeError: a size is negative."


def returns(text: str) -> str:
    """A Returns section of `text`, wrapped to the docstrings' width."""
    return "Returns:\n" + textwrap.fill(
        text, 78, initial_indent="  ", subsequent_indent="  "
    )


class DocstringSectionError(ValueError):
    """A shared section added to a docstring that already has its own."""


def add_sections(fns: tuple, *sections: str) -> None:
    """Adds `sections` (Args, Returns, Raises: what a family of functions
    shares) to each of `fns`' docstrings, before its Example; a function that
    writes one of them itself is refused, so no docstring says it twice."""
    add = with_sections(*sections)
    for fn in fns:
        for header in (section.partition("\n")[0] for section in sections):
            if f"\n{header}\n" in inspect.cleandoc(fn.__doc__ or ""):
                raise DocstringSectionError(
                    f"{fn.__name__}'s docstring has its own {header} section; "
                    "remove it there or from the shared sections added to it"
                )
        add(fn)


# The static output size of functions whose result length depends on values.
SIZE_ARGS = {
    "size": "a static output length, needed under jit: the result is padded with "
    "fill_value or cut to it (None: the true length, eager only).",
    "fill_value": "the value that pads the result up to size.",
}


def _entry(name: str, text: str) -> str:
    return textwrap.fill(
        f"{name}: {text}", 78, initial_indent="  ", subsequent_indent="    "
    )


def add_args(fns: tuple, described: dict[str, str]) -> None:
    """Adds an Args section to each of `fns`' docstrings: one entry per
    parameter of its signature, as `described` (name -> text) says, so that a
    family's parameters are described once."""
    for fn in fns:
        entries = [
            _entry(name, described[name]) for name in inspect.signature(fn).parameters
        ]
        add_sections((fn,), "Args:\n" + "\n".join(entries))


def append_args(fns: tuple, described: dict[str, str]) -> None:
    """Appends `described` (name -> text, e.g. SIZE_ARGS) to the end of the
    Args section of each of `fns`' docstrings."""
    added = "\n".join(_entry(name, text) for name, text in described.items())
    for fn in fns:
        head, args, rest = inspect.cleandoc(fn.__doc__).partition("\nArgs:\n")
        section, blank, after = rest.partition("\n\n")
        fn.__doc__ = f"{head}{args}{section}\n{added}{blank}{after}"


def add_unary_sections(result: str, *fns: Callable) -> None:
    """Adds the Args/Returns/Raises of a function of one array `x` to each of
    `fns`' docstrings; `result` follows "An array of x's shape"."""
    add_sections(fns, ARGS_X, returns(f"An array of x's shape{result}."), RAISES_X)


def add_binary_sections(result: str, *fns: Callable) -> None:
    """Adds the Args/Returns/Raises of a function of two broadcasting arrays
    `x1` and `x2` to each of `fns`' docstrings; `result` follows "An array of
    the broadcast shape"."""
    result = returns(f"An array of the broadcast shape{result}.")
    add_sections(fns, ARGS_X1_X2, result, RAISES_X1_X2)


def _doc(summary: str, note: str, sections: tuple, example: str) -> str:
    head = f"{summary}\n\n{note}" if note else summary
    return "\n\n".join((head, *sections, f"Example:\n{example}"))


def _binary(summary: str, note: str, example: str, result: str = PROMOTED) -> str:
    sections = (
        ARGS_X1_X2,
        returns(f"An array of the broadcast shape{result}."),
        RAISES_X1_X2,
    )
    return _doc(summary, note, sections, example)


def _unary(summary: str, note: str, example: str, result: str = SAME) -> str:
    sections = (ARGS_X, returns(f"An array of x's shape{result}."), RAISES_X)
    return _doc(summary, note, sections, example)


UFUNC_OBJECTS = """add multiply subtract maximum minimum bitwise_and bitwise_or
    bitwise_xor logical_and logical_or logical_xor logaddexp logaddexp2
    negative""".split()  # jnp.ufunc objects in JAX (and olympus)


def with_out_where(doc: str) -> str:
    """`doc` of a function that jnp exposes as a ufunc object, whose call
    also takes NumPy's out= and where= (refused unless None, as JAX's);
    unchanged if it already says so."""
    if "\n  where: " in doc:
        return doc
    args = (
        "  out: unsupported (must be None); arrays are immutable, as in JAX.\n"
        "  where: unsupported (must be None); use jnp.where on the result."
    )
    raises = (
        "  UfuncArgumentError: out or where is not None (a NotImplementedError,\n"
        "    as JAX's)."
    )
    for section, extra in (("Args:", args), ("Raises:", raises)):
        head, found, rest = doc.partition(f"\n{section}\n")
        body, blank, tail = rest.partition("\n\n")
        doc = f"{head}{found}{body}\n{extra}{blank}{tail}" if found else doc
    return doc


def _unary_out(summary: str, note: str, example: str, result: str = SAME) -> str:
    """`_unary`'s docstring for a function that also takes NumPy's out=."""
    sections = (ARGS_X_OUT, returns(f"An array of x's shape{result}."), RAISES_X_OUT)
    return _doc(summary, note, sections, example)


DOCS: dict[str, str] = {
    "add": _binary(
        "Elementwise sum `x1 + x2`.",
        "On booleans it is logical or, as NumPy's.",
        "  >>> jnp.add(jnp.array([1, 2]), 10)\n  Array([11, 12], dtype=int32)",
        PROMOTED,
    ),
    "subtract": _binary(
        "Elementwise difference `x1 - x2`.",
        "Booleans are not subtracted (NumPy raises too); cast them first.",
        "  >>> jnp.subtract(jnp.array([5.0, 1.0]), 2.0)\n"
        "  Array([ 3., -1.], dtype=float32)",
        PROMOTED,
    ),
    "multiply": _binary(
        "Elementwise product `x1 * x2`.",
        "On booleans it is logical and, as NumPy's.",
        "  >>> jnp.multiply(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))\n"
        "  Array([3., 8.], dtype=float32)",
        PROMOTED,
    ),
    "divide": _binary(
        "Elementwise true division `x1 / x2`.",
        "Integers divide in floating point; dividing by zero gives inf or "
        "NaN, never an error.",
        "  >>> jnp.divide(jnp.array([1, 3]), 2)\n  Array([0.5, 1.5], dtype=float32)",
        FLOAT,
    ),
    "maximum": _binary(
        "Elementwise larger of `x1` and `x2`.",
        "A NaN in either operand gives NaN (use fmax to ignore NaNs); "
        "complex numbers compare by real, then imaginary part.",
        "  >>> jnp.maximum(jnp.array([1.0, 5.0]), 3.0)\n"
        "  Array([3., 5.], dtype=float32)",
        PROMOTED,
    ),
    "minimum": _binary(
        "Elementwise smaller of `x1` and `x2`.",
        "A NaN in either operand gives NaN (use fmin to ignore NaNs); "
        "complex numbers compare by real, then imaginary part.",
        "  >>> jnp.minimum(jnp.array([1.0, 5.0]), 3.0)\n"
        "  Array([1., 3.], dtype=float32)",
        PROMOTED,
    ),
    "arctan2": _binary(
        "Elementwise angle of the point (x2, x1): arctan(x1 / x2) in the right "
        "quadrant.",
        "The result lies in [-pi, pi]; the signs of both operands pick the "
        "quadrant, and x2 = 0 is handled.",
        "  >>> jnp.arctan2(1.0, 0.0)\n  Array(1.5707964, dtype=float32, weak_type=True)",
        FLOAT,
    ),
    "equal": _binary(
        "Elementwise `x1 == x2`.",
        "NaN equals nothing, itself included.",
        "  >>> jnp.equal(jnp.array([1, 2]), 2)\n  Array([False,  True], dtype=bool)",
        BOOL,
    ),
    "not_equal": _binary(
        "Elementwise `x1 != x2`.",
        "NaN differs from everything, itself included.",
        "  >>> jnp.not_equal(jnp.array([1, 2]), 2)\n  Array([ True, False], dtype=bool)",
        BOOL,
    ),
    "less": _binary(
        "Elementwise `x1 < x2`.",
        "Comparisons with NaN are false; complex numbers compare by real, "
        "then imaginary part.",
        "  >>> jnp.less(jnp.array([1, 3]), 2)\n  Array([ True, False], dtype=bool)",
        BOOL,
    ),
    "greater": _binary(
        "Elementwise `x1 > x2`.",
        "Comparisons with NaN are false; complex numbers compare by real, "
        "then imaginary part.",
        "  >>> jnp.greater(jnp.array([1, 3]), 2)\n  Array([False,  True], dtype=bool)",
        BOOL,
    ),
    "exp": _unary(
        "Elementwise exponential e**x.",
        "Overflows to inf rather than raising.",
        "  >>> jnp.exp(jnp.array([0.0, 1.0]))\n"
        "  Array([1.       , 2.7182817], dtype=float32)",
        FLOAT,
    ),
    "log": _unary(
        "Elementwise natural logarithm.",
        "log(0) is -inf and a negative real gives NaN, never an error.",
        "  >>> jnp.log(jnp.array([1.0, 0.0]))\n  Array([  0., -inf], dtype=float32)",
        FLOAT,
    ),
    "log1p": _unary(
        "Elementwise log(1 + x), accurate for small x.",
        "Prefer it to log(1 + x) when x may be tiny: the sum would round.",
        "  >>> jnp.log1p(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        FLOAT,
    ),
    "expm1": _unary(
        "Elementwise e**x - 1, accurate for small x.",
        "Prefer it to exp(x) - 1 when x may be tiny.",
        "  >>> jnp.expm1(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        FLOAT,
    ),
    "sqrt": _unary(
        "Elementwise non-negative square root.",
        "Negative reals give NaN (pass a complex array for complex roots).",
        "  >>> jnp.sqrt(jnp.array([4.0, 9.0]))\n  Array([2., 3.], dtype=float32)",
        FLOAT,
    ),
    "sin": _unary(
        "Elementwise sine of an angle in radians.",
        "Accurate for moderate arguments; very large ones lose precision, as "
        "in every float implementation.",
        "  >>> jnp.sin(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        FLOAT,
    ),
    "cos": _unary(
        "Elementwise cosine of an angle in radians.",
        "Accurate for moderate arguments.",
        "  >>> jnp.cos(jnp.array([0.0]))\n  Array([1.], dtype=float32)",
        FLOAT,
    ),
    "tanh": _unary(
        "Elementwise hyperbolic tangent.",
        "Saturates to +-1 for large |x| without overflow.",
        "  >>> jnp.tanh(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        FLOAT,
    ),
    "negative": _unary(
        "Elementwise negation `-x`.",
        "Unsigned integers wrap around, as NumPy's; booleans are refused.",
        "  >>> jnp.negative(jnp.array([1, -2]))\n  Array([-1,  2], dtype=int32)",
        SAME,
    ),
    "tan": _unary(
        "Elementwise tangent (radians).",
        "Poles at odd multiples of pi/2 give large finite values in floating point.",
        "  >>> jnp.tan(jnp.array([0.0, 1.0]))\n"
        "  Array([0.       , 1.5574077], dtype=float32)",
        FLOAT,
    ),
    "invert": _unary(
        "Elementwise bitwise not (logical not on booleans).",
        "Also named bitwise_not and bitwise_invert; ~x is -x - 1 for signed integers.",
        "  >>> jnp.invert(jnp.array([0, 5]))\n"
        "  Array([-1, -6], dtype=int32)\n"
        "  >>> jnp.bitwise_not(jnp.array([True, False]))\n"
        "  Array([False,  True], dtype=bool)",
        SAME,
    ),
    "bitwise_and": _binary(
        "Elementwise bitwise and (logical and on booleans).",
        "Integer or boolean operands only.",
        "  >>> jnp.bitwise_and(jnp.array([12, 10]), 6)\n  Array([4, 2], dtype=int32)",
        PROMOTED,
    ),
    "bitwise_or": _binary(
        "Elementwise bitwise or (logical or on booleans).",
        "Integer or boolean operands only.",
        "  >>> jnp.bitwise_or(jnp.array([12, 10]), 6)\n  Array([14, 14], dtype=int32)",
        PROMOTED,
    ),
    "bitwise_xor": _binary(
        "Elementwise bitwise exclusive or.",
        "Integer or boolean operands only.",
        "  >>> jnp.bitwise_xor(jnp.array([12, 10]), 6)\n  Array([10, 12], dtype=int32)",
        PROMOTED,
    ),
    "greater_equal": _binary(
        "Elementwise x1 >= x2.",
        "Comparisons with NaN are False.",
        "  >>> jnp.greater_equal(jnp.array([1.0, 2.0, 3.0]), 2.0)\n"
        "  Array([False,  True,  True], dtype=bool)",
        BOOL,
    ),
    "less_equal": _binary(
        "Elementwise x1 <= x2.",
        "Comparisons with NaN are False.",
        "  >>> jnp.less_equal(jnp.array([1.0, 2.0, 3.0]), 2.0)\n"
        "  Array([ True,  True, False], dtype=bool)",
        BOOL,
    ),
    "fmax": _binary(
        "Elementwise maximum that ignores NaNs.",
        "NaN only where both are NaN (jnp.maximum propagates NaN).",
        "  >>> jnp.fmax(jnp.array([1.0, jnp.nan]), jnp.array([jnp.nan, jnp.nan]))\n"
        "  Array([ 1., nan], dtype=float32)",
        PROMOTED,
    ),
    "fmin": _binary(
        "Elementwise minimum that ignores NaNs.",
        "NaN only where both are NaN (jnp.minimum propagates NaN).",
        "  >>> jnp.fmin(jnp.array([1.0, jnp.nan]), 0.0)\n"
        "  Array([0., 0.], dtype=float32)",
        PROMOTED,
    ),
    "isposinf": _unary_out(
        "Whether x is +inf, elementwise.",
        "Integers are never infinite; complex input raises OlympusTypeError.",
        "  >>> jnp.isposinf(jnp.array([1.0, jnp.inf, -jnp.inf]))\n"
        "  Array([False,  True, False], dtype=bool)",
        BOOL,
    ),
    "isneginf": _unary_out(
        "Whether x is -inf, elementwise.",
        "Integers are never infinite; complex input raises OlympusTypeError.",
        "  >>> jnp.isneginf(jnp.array([1.0, jnp.inf, -jnp.inf]))\n"
        "  Array([False, False,  True], dtype=bool)",
        BOOL,
    ),
    "sinh": _unary(
        "Elementwise hyperbolic sine.",
        "Overflows to +-inf for large |x|.",
        "  >>> jnp.sinh(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([0.        , 0.52109534, 1.1752012 ], dtype=float32)",
        FLOAT,
    ),
    "cosh": _unary(
        "Elementwise hyperbolic cosine.",
        "Overflows to inf for large |x|.",
        "  >>> jnp.cosh(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([1.       , 1.127626 , 1.5430806], dtype=float32)",
        FLOAT,
    ),
    "arctan": _unary(
        "Elementwise inverse tangent, in (-pi/2, pi/2).",
        "Also named atan, the Array API's name.",
        "  >>> jnp.atan(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([0.       , 0.4636476, 0.7853982], dtype=float32)",
        FLOAT,
    ),
    "arcsin": _unary(
        "Elementwise inverse sine, in [-pi/2, pi/2].",
        "Also named asin, the Array API's name; |x| > 1 gives NaN.",
        "  >>> jnp.asin(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([0.       , 0.5235988, 1.5707964], dtype=float32)",
        FLOAT,
    ),
    "arccos": _unary(
        "Elementwise inverse cosine, in [0, pi].",
        "Also named acos, the Array API's name; |x| > 1 gives NaN.",
        "  >>> jnp.acos(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([1.5707964, 1.0471976, 0.       ], dtype=float32)",
        FLOAT,
    ),
    "arcsinh": _unary(
        "Elementwise inverse hyperbolic sine.",
        "Also named asinh, the Array API's name.",
        "  >>> jnp.asinh(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([0.        , 0.48121184, 0.88137364], dtype=float32)",
        FLOAT,
    ),
    "arccosh": _unary(
        "Elementwise inverse hyperbolic cosine.",
        "Also named acosh, the Array API's name; x < 1 gives NaN.",
        "  >>> jnp.acosh(jnp.array([1.0, 2.0]))\n"
        "  Array([0.      , 1.316958], dtype=float32)",
        FLOAT,
    ),
    "arctanh": _unary(
        "Elementwise inverse hyperbolic tangent.",
        "Also named atanh, the Array API's name; +-1 give +-inf.",
        "  >>> jnp.atanh(jnp.array([0.0, 0.5, 1.0]))\n"
        "  Array([0.        , 0.54930615,        inf], dtype=float32)",
        FLOAT,
    ),
    "logical_and": _binary(
        "Elementwise logical and (nonzero is true).",
        "",
        "  >>> jnp.logical_and(jnp.array([0, 1, 2]), jnp.array([1, 1, 0]))\n"
        "  Array([False,  True, False], dtype=bool)",
        BOOL,
    ),
    "logical_or": _binary(
        "Elementwise logical or (nonzero is true).",
        "",
        "  >>> jnp.logical_or(jnp.array([0, 1, 0]), jnp.array([0, 0, 3]))\n"
        "  Array([False,  True,  True], dtype=bool)",
        BOOL,
    ),
    "logical_xor": _binary(
        "Elementwise logical exclusive or (nonzero is true).",
        "",
        "  >>> jnp.logical_xor(jnp.array([0, 1, 1]), jnp.array([0, 0, 2]))\n"
        "  Array([False,  True, False], dtype=bool)",
        BOOL,
    ),
}
for _name in UFUNC_OBJECTS:  # their calls also take out= and where=
    if _name in DOCS:
        DOCS[_name] = with_out_where(DOCS[_name])
del _name
