"""Docstrings of the jnp ufuncs that numpy/ufuncs.py's factories make.

`_binary` and `_unary` build many functions from one body, so their text
lives here, keyed by the ufunc's name: each gets its own summary, note and
example, while the Args/Returns/Raises sections (the same for every ufunc
of an arity) are written once below. A name missing from DOCS keeps the
factory's one-line default.
"""

from __future__ import annotations

_BINARY = """{summary}

{note}

Args:
  x1: an array or scalar.
  x2: an array or scalar; the two broadcast together and promote to a
    common dtype, as NumPy's (Python scalars are weakly typed and take
    the array's dtype).

Returns:
  An array of the broadcast shape{returns}.

Raises:
  IncompatibleShapesError: the shapes do not broadcast.
  ArrayLikeTypeError: an operand is a list or other non-array (convert
    it with jnp.asarray).

Example:
{example}"""

_UNARY = """{summary}

{note}

Args:
  x: an array or scalar.

Returns:
  An array of x's shape{returns}.

Raises:
  ArrayLikeTypeError: x is a list or other non-array (convert it with
    jnp.asarray).

Example:
{example}"""


def _binary(summary: str, note: str, example: str, returns: str = "") -> str:
    return _BINARY.format(summary=summary, note=note, example=example, returns=returns)


def _unary(summary: str, note: str, example: str, returns: str = "") -> str:
    return _UNARY.format(summary=summary, note=note, example=example, returns=returns)


_FLOAT = " and an inexact dtype (integers become the default float)"
_BOOL = ", of dtype bool"

DOCS: dict[str, str] = {
    "add": _binary(
        "Elementwise sum `x1 + x2`.",
        "On booleans it is logical or, as NumPy's.",
        "  >>> jnp.add(jnp.array([1, 2]), 10)\n  Array([11, 12], dtype=int32)",
        " and the promoted dtype",
    ),
    "subtract": _binary(
        "Elementwise difference `x1 - x2`.",
        "Booleans are not subtracted (NumPy raises too); cast them first.",
        "  >>> jnp.subtract(jnp.array([5.0, 1.0]), 2.0)\n"
        "  Array([ 3., -1.], dtype=float32)",
        " and the promoted dtype",
    ),
    "multiply": _binary(
        "Elementwise product `x1 * x2`.",
        "On booleans it is logical and, as NumPy's.",
        "  >>> jnp.multiply(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))\n"
        "  Array([3., 8.], dtype=float32)",
        " and the promoted dtype",
    ),
    "divide": _binary(
        "Elementwise true division `x1 / x2`.",
        "Integers divide in floating point; dividing by zero gives inf or "
        "NaN, never an error.",
        "  >>> jnp.divide(jnp.array([1, 3]), 2)\n  Array([0.5, 1.5], dtype=float32)",
        _FLOAT,
    ),
    "maximum": _binary(
        "Elementwise larger of `x1` and `x2`.",
        "A NaN in either operand gives NaN (use fmax to ignore NaNs); "
        "complex numbers compare by real, then imaginary part.",
        "  >>> jnp.maximum(jnp.array([1.0, 5.0]), 3.0)\n"
        "  Array([3., 5.], dtype=float32)",
        " and the promoted dtype",
    ),
    "minimum": _binary(
        "Elementwise smaller of `x1` and `x2`.",
        "A NaN in either operand gives NaN (use fmin to ignore NaNs); "
        "complex numbers compare by real, then imaginary part.",
        "  >>> jnp.minimum(jnp.array([1.0, 5.0]), 3.0)\n"
        "  Array([1., 3.], dtype=float32)",
        " and the promoted dtype",
    ),
    "arctan2": _binary(
        "Elementwise angle of the point (x2, x1): arctan(x1 / x2) in the right "
        "quadrant.",
        "The result lies in [-pi, pi]; the signs of both operands pick the "
        "quadrant, and x2 = 0 is handled.",
        "  >>> jnp.arctan2(1.0, 0.0)\n  Array(1.5707964, dtype=float32, weak_type=True)",
        _FLOAT,
    ),
    "equal": _binary(
        "Elementwise `x1 == x2`.",
        "NaN equals nothing, itself included.",
        "  >>> jnp.equal(jnp.array([1, 2]), 2)\n  Array([False,  True], dtype=bool)",
        _BOOL,
    ),
    "not_equal": _binary(
        "Elementwise `x1 != x2`.",
        "NaN differs from everything, itself included.",
        "  >>> jnp.not_equal(jnp.array([1, 2]), 2)\n  Array([ True, False], dtype=bool)",
        _BOOL,
    ),
    "less": _binary(
        "Elementwise `x1 < x2`.",
        "Comparisons with NaN are false; complex numbers compare by real, "
        "then imaginary part.",
        "  >>> jnp.less(jnp.array([1, 3]), 2)\n  Array([ True, False], dtype=bool)",
        _BOOL,
    ),
    "greater": _binary(
        "Elementwise `x1 > x2`.",
        "Comparisons with NaN are false; complex numbers compare by real, "
        "then imaginary part.",
        "  >>> jnp.greater(jnp.array([1, 3]), 2)\n  Array([False,  True], dtype=bool)",
        _BOOL,
    ),
    "exp": _unary(
        "Elementwise exponential e**x.",
        "Overflows to inf rather than raising.",
        "  >>> jnp.exp(jnp.array([0.0, 1.0]))\n"
        "  Array([1.       , 2.7182817], dtype=float32)",
        _FLOAT,
    ),
    "log": _unary(
        "Elementwise natural logarithm.",
        "log(0) is -inf and a negative real gives NaN, never an error.",
        "  >>> jnp.log(jnp.array([1.0, 0.0]))\n  Array([  0., -inf], dtype=float32)",
        _FLOAT,
    ),
    "log1p": _unary(
        "Elementwise log(1 + x), accurate for small x.",
        "Prefer it to log(1 + x) when x may be tiny: the sum would round.",
        "  >>> jnp.log1p(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        _FLOAT,
    ),
    "expm1": _unary(
        "Elementwise e**x - 1, accurate for small x.",
        "Prefer it to exp(x) - 1 when x may be tiny.",
        "  >>> jnp.expm1(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        _FLOAT,
    ),
    "sqrt": _unary(
        "Elementwise non-negative square root.",
        "Negative reals give NaN (pass a complex array for complex roots).",
        "  >>> jnp.sqrt(jnp.array([4.0, 9.0]))\n  Array([2., 3.], dtype=float32)",
        _FLOAT,
    ),
    "sin": _unary(
        "Elementwise sine of an angle in radians.",
        "Accurate for moderate arguments; very large ones lose precision, as "
        "in every float implementation.",
        "  >>> jnp.sin(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        _FLOAT,
    ),
    "cos": _unary(
        "Elementwise cosine of an angle in radians.",
        "Accurate for moderate arguments.",
        "  >>> jnp.cos(jnp.array([0.0]))\n  Array([1.], dtype=float32)",
        _FLOAT,
    ),
    "tanh": _unary(
        "Elementwise hyperbolic tangent.",
        "Saturates to +-1 for large |x| without overflow.",
        "  >>> jnp.tanh(jnp.array([0.0]))\n  Array([0.], dtype=float32)",
        _FLOAT,
    ),
    "negative": _unary(
        "Elementwise negation `-x`.",
        "Unsigned integers wrap around, as NumPy's; booleans are refused.",
        "  >>> jnp.negative(jnp.array([1, -2]))\n  Array([-1,  2], dtype=int32)",
        " and dtype",
    ),
    "tan": _unary(
        "Elementwise tangent (radians).",
        "Poles at odd multiples of pi/2 give large finite values in floating point.",
        "  >>> jnp.tan(jnp.array([0.0, 1.0]))\n"
        "  Array([0.       , 1.5574077], dtype=float32)",
        _FLOAT,
    ),
    "invert": _unary(
        "Elementwise bitwise not (logical not on booleans).",
        "Also named bitwise_not and bitwise_invert; ~x is -x - 1 for signed integers.",
        "  >>> jnp.invert(jnp.array([0, 5]))\n"
        "  Array([-1, -6], dtype=int32)\n"
        "  >>> jnp.bitwise_not(jnp.array([True, False]))\n"
        "  Array([False,  True], dtype=bool)",
        " and dtype",
    ),
    "bitwise_and": _binary(
        "Elementwise bitwise and (logical and on booleans).",
        "Integer or boolean operands only.",
        "  >>> jnp.bitwise_and(jnp.array([12, 10]), 6)\n  Array([4, 2], dtype=int32)",
        " and the promoted dtype",
    ),
    "bitwise_or": _binary(
        "Elementwise bitwise or (logical or on booleans).",
        "Integer or boolean operands only.",
        "  >>> jnp.bitwise_or(jnp.array([12, 10]), 6)\n  Array([14, 14], dtype=int32)",
        " and the promoted dtype",
    ),
    "bitwise_xor": _binary(
        "Elementwise bitwise exclusive or.",
        "Integer or boolean operands only.",
        "  >>> jnp.bitwise_xor(jnp.array([12, 10]), 6)\n  Array([10, 12], dtype=int32)",
        " and the promoted dtype",
    ),
    "greater_equal": _binary(
        "Elementwise x1 >= x2.",
        "Comparisons with NaN are False.",
        "  >>> jnp.greater_equal(jnp.array([1.0, 2.0, 3.0]), 2.0)\n"
        "  Array([False,  True,  True], dtype=bool)",
        _BOOL,
    ),
    "less_equal": _binary(
        "Elementwise x1 <= x2.",
        "Comparisons with NaN are False.",
        "  >>> jnp.less_equal(jnp.array([1.0, 2.0, 3.0]), 2.0)\n"
        "  Array([ True,  True, False], dtype=bool)",
        _BOOL,
    ),
    "fmax": _binary(
        "Elementwise maximum that ignores NaNs.",
        "NaN only where both are NaN (jnp.maximum propagates NaN).",
        "  >>> jnp.fmax(jnp.array([1.0, jnp.nan]), jnp.array([jnp.nan, jnp.nan]))\n"
        "  Array([ 1., nan], dtype=float32)",
        " and the promoted dtype",
    ),
    "fmin": _binary(
        "Elementwise minimum that ignores NaNs.",
        "NaN only where both are NaN (jnp.minimum propagates NaN).",
        "  >>> jnp.fmin(jnp.array([1.0, jnp.nan]), 0.0)\n"
        "  Array([0., 0.], dtype=float32)",
        " and the promoted dtype",
    ),
    "isposinf": _unary(
        "Whether x is +inf, elementwise.",
        "Integers are never infinite; complex input raises OlympusTypeError.",
        "  >>> jnp.isposinf(jnp.array([1.0, jnp.inf, -jnp.inf]))\n"
        "  Array([False,  True, False], dtype=bool)",
        _BOOL,
    ),
    "isneginf": _unary(
        "Whether x is -inf, elementwise.",
        "Integers are never infinite; complex input raises OlympusTypeError.",
        "  >>> jnp.isneginf(jnp.array([1.0, jnp.inf, -jnp.inf]))\n"
        "  Array([False, False,  True], dtype=bool)",
        _BOOL,
    ),
}
