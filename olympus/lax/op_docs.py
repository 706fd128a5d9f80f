"""Docstrings of the lax functions that factories make (ops.py's `_binary`,
`_unary` and `_reducer`, slicing.py's `public_scatter`), keyed by the
primitive's name: one body serves many functions, so each one's text lives
in this table. A name missing here keeps its factory's one-line default.

Hand-written lax functions of one family (elementwise special functions, bit
operations, cumulative reductions) share their Returns and Raises text: each
section is written once below and `with_sections` adds it to a function's
own docstring, which keeps its summary, Args and example beside the code.
"""

from __future__ import annotations

import inspect
from typing import Callable


_BOOL = "x's shape, of dtype bool"
_COMPLEX = "x's shape and the complex dtype of x's precision"


def _doc(summary: str, note: str, sections: tuple, example: str) -> str:
    """One function's docstring: `sections` are the (Args, Returns, Raises)
    bodies its family writes, indented by two."""
    args, returns, raises = sections
    return (
        f"{summary}\n\n{note}\n\nArgs:\n{args}\n\nReturns:\n{returns}\n\n"
        f"Raises:\n{raises}\n\nExample:\n{example}"
    )


_BINARY_NOTE = """lax does not promote: both operands must have one dtype (Python
scalars take the array's), and shapes must be equal (no broadcasting)."""
_BINARY_ARGS = (
    "  x: an array.\n  y: an array of x's shape and dtype, or a Python scalar."
)
_BINARY_RAISES = """  OlympusTypeError: the shapes or dtypes differ (use olympus.numpy for
    NumPy's promotion and broadcasting)."""
_UNARY_RAISES = """  OlympusTypeError: x's dtype is not one the operation accepts (cast
    integers with lax.convert_element_type first)."""
_REDUCER_SECTIONS = (
    "  operand: an array.\n  axes: the dimensions to reduce (a sequence of ints).",
    "  An array of operand's dtype without the reduced dimensions.",
    "  OlympusTypeError: an axis is out of range or repeated.",
)
_SCATTER_ARGS = """  operand: the array to update.
  scatter_indices: an integer array whose last axis is an index vector.
  updates: the values, shaped as the index batch plus the window.
  dimension_numbers: a ScatterDimensionNumbers: update_window_dims,
    inserted_window_dims and scatter_dims_to_operand_dims.
  indices_are_sorted: a hint that the indices are sorted (the result does
    not depend on it).
  unique_indices: a hint that no index repeats (the result does not depend
    on it).
  mode: None, 'drop', 'fill' or 'promise_in_bounds': out-of-range windows
    are dropped; 'clip' is refused."""
_SCATTER_DN = """  >>> dn = lax.ScatterDimensionNumbers(update_window_dims=(),
  ...     inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))"""


def _binary(
    summary: str, note: str, example: str, returns: str = "x's shape and dtype"
) -> str:
    sections = (_BINARY_ARGS, f"  An array of {returns}.", _BINARY_RAISES)
    return _doc(summary, f"{note} {_BINARY_NOTE}", sections, example)


def _unary(
    summary: str, note: str, example: str, accepts: str = "an inexact dtype"
) -> str:
    sections = (f"  x: an array of {accepts}.", "  An array of x's shape and dtype.")
    return _doc(summary, note, (*sections, _UNARY_RAISES), example)


def _reducer(summary: str, note: str, example: str) -> str:
    return _doc(summary, note, _REDUCER_SECTIONS, example)


def _scatter(summary: str, note: str, example: str) -> str:
    raises = (
        "  OlympusTypeError: the dimension numbers do not fit the shapes, or the\n"
        "    dtypes differ.\n  ScatterModeError: mode is 'clip' or unknown (a ValueError)."
    )
    sections = (_SCATTER_ARGS, "  A new array of operand's shape and dtype.", raises)
    note = f"{note} Out-of-range windows are dropped."
    return _doc(summary, note, sections, f"{_SCATTER_DN}\n{example}")


DOCS: dict[str, str] = {
    "add": _binary(
        "Elementwise x + y.",
        "The primitive behind jnp.add.",
        "  >>> lax.add(jnp.ones(2), 2.0)\n  Array([3., 3.], dtype=float32)",
    ),
    "sub": _binary(
        "Elementwise x - y.",
        "The primitive behind jnp.subtract.",
        "  >>> lax.sub(jnp.ones(2), 2.0)\n  Array([-1., -1.], dtype=float32)",
    ),
    "mul": _doc(
        "Elementwise x * y.",
        f"The primitive behind jnp.multiply. {_BINARY_NOTE} With out_dtype,"
        " both operands are cast to it first (a weak operand stays weak), as"
        " JAX's.",
        (
            f"{_BINARY_ARGS}\n  out_dtype: None, or the dtype to cast both"
            " operands to\n    and return.",
            "  An array of x's shape and dtype (out_dtype where given).",
            _BINARY_RAISES,
        ),
        "  >>> lax.mul(jnp.ones(2), 3.0)\n  Array([3., 3.], dtype=float32)\n"
        "  >>> x = jnp.array([100, -100], jnp.int8)\n"
        "  >>> lax.mul(x, x, out_dtype=jnp.int32)\n"
        "  Array([10000, 10000], dtype=int32)",
    ),
    "div": _binary(
        "Elementwise x / y; integers divide rounding toward zero.",
        "Unlike jnp.floor_divide, integer division truncates, as C's.",
        "  >>> lax.div(jnp.array([7, -7]), 2)\n  Array([ 3, -3], dtype=int32)",
    ),
    "max": _binary(
        "Elementwise maximum of x and y.",
        "A NaN operand gives NaN.",
        "  >>> lax.max(jnp.array([1.0, 5.0]), 3.0)\n  Array([3., 5.], dtype=float32)",
    ),
    "min": _binary(
        "Elementwise minimum of x and y.",
        "A NaN operand gives NaN.",
        "  >>> lax.min(jnp.array([1.0, 5.0]), 3.0)\n  Array([1., 3.], dtype=float32)",
    ),
    "exp": _unary(
        "Elementwise e**x.",
        "The primitive behind jnp.exp.",
        "  >>> lax.exp(jnp.zeros(2))\n  Array([1., 1.], dtype=float32)",
    ),
    "log": _unary(
        "Elementwise natural logarithm.",
        "log(0) is -inf; negative inputs give NaN.",
        "  >>> lax.log(jnp.ones(2))\n  Array([0., 0.], dtype=float32)",
    ),
    "sqrt": _unary(
        "Elementwise square root.",
        "Negative inputs give NaN.",
        "  >>> lax.sqrt(jnp.array([4.0]))\n  Array([2.], dtype=float32)",
    ),
    "tanh": _unary(
        "Elementwise hyperbolic tangent.",
        "Saturates to +-1 without overflow.",
        "  >>> lax.tanh(jnp.zeros(1))\n  Array([0.], dtype=float32)",
    ),
    "reduce_sum": _reducer(
        "The sum of `x` over `axes`.",
        "Keeps x's dtype (jnp.sum promotes small integers).",
        "  >>> lax.reduce_sum(jnp.array([[1.0, 2.0], [3.0, 4.0]]), (0,))\n"
        "  Array([4., 6.], dtype=float32)",
    ),
    "reduce_prod": _reducer(
        "The product of `x` over `axes`.",
        "Keeps x's dtype.",
        "  >>> lax.reduce_prod(jnp.array([2.0, 3.0]), (0,))\n"
        "  Array(6., dtype=float32)",
    ),
    "reduce_max": _reducer(
        "The maximum of `x` over `axes`.",
        "NaN propagates; an empty reduction gives the dtype's lowest value.",
        "  >>> lax.reduce_max(jnp.array([2.0, 3.0]), (0,))\n  Array(3., dtype=float32)",
    ),
    "reduce_min": _reducer(
        "The minimum of `x` over `axes`.",
        "NaN propagates; an empty reduction gives the dtype's highest value.",
        "  >>> lax.reduce_min(jnp.array([2.0, 3.0]), (0,))\n  Array(2., dtype=float32)",
    ),
    "scatter": _scatter(
        "`operand` with windows of `updates` written at the indices.",
        "The functional `x[idx] = updates`; where indices repeat, which "
        "update wins is unspecified.",
        "  >>> lax.scatter(jnp.zeros(3), jnp.array([[2]]), jnp.array([5.0]), dn)\n"
        "  Array([0., 0., 5.], dtype=float32)",
    ),
    "scatter_add": _scatter(
        "`operand` with `updates` added at the indices.",
        "The functional `x[idx] += updates`; duplicate indices accumulate.",
        "  >>> lax.scatter_add(jnp.zeros(3), jnp.array([[0], [2], [0]]),\n"
        "  ...                 jnp.array([1.0, 2.0, 3.0]), dn)\n"
        "  Array([4., 0., 2.], dtype=float32)",
    ),
    "neg": _unary(
        "Elementwise -x.",
        "The primitive behind jnp.negative; integers wrap at their minimum.",
        "  >>> lax.neg(jnp.array([1.0, -2.0]))\n  Array([-1.,  2.], dtype=float32)",
        "a numeric dtype",
    ),
    "abs": _unary(
        "Elementwise absolute value |x|.",
        "Complex x gives its real magnitude; the integer minimum wraps to itself.",
        "  >>> lax.abs(jnp.array([-1.5, 2.0]))\n  Array([1.5, 2. ], dtype=float32)",
        "a numeric dtype",
    ),
    "sign": _unary(
        "Elementwise sign: -1, 0 or 1 (NaN stays NaN).",
        "Complex x gives x / |x| (0 at 0).",
        "  >>> lax.sign(jnp.array([-3.0, 0.0, 2.0]))\n"
        "  Array([-1.,  0.,  1.], dtype=float32)",
        "a numeric dtype",
    ),
    "floor": _unary(
        "Elementwise floor: the largest integer not above x.",
        "The result keeps x's floating dtype.",
        "  >>> lax.floor(jnp.array([1.5, -1.5]))\n  Array([ 1., -2.], dtype=float32)",
        "a floating dtype",
    ),
    "ceil": _unary(
        "Elementwise ceiling: the smallest integer not below x.",
        "The result keeps x's floating dtype.",
        "  >>> lax.ceil(jnp.array([1.5, -1.5]))\n  Array([ 2., -1.], dtype=float32)",
        "a floating dtype",
    ),
    "rsqrt": _unary(
        "Elementwise 1 / sqrt(x).",
        "0 gives inf and negative inputs NaN.",
        "  >>> lax.rsqrt(jnp.array([4.0, 16.0]))\n  Array([0.5 , 0.25], dtype=float32)",
    ),
    "expm1": _unary(
        "Elementwise e**x - 1, accurate near 0.",
        "Keeps the digits that exp(x) - 1 loses for tiny x.",
        "  >>> lax.expm1(jnp.array([0.0, 1e-8]))\n"
        "  Array([0.e+00, 1.e-08], dtype=float32)",
    ),
    "log1p": _unary(
        "Elementwise log(1 + x), accurate near 0.",
        "-1 gives -inf; below -1 gives NaN.",
        "  >>> lax.log1p(jnp.array([0.0, 1e-8]))\n"
        "  Array([0.e+00, 1.e-08], dtype=float32)",
    ),
    "sin": _unary(
        "Elementwise sine (radians).",
        "The primitive behind jnp.sin.",
        "  >>> lax.sin(jnp.array([0.0, 1.0]))\n"
        "  Array([0.        , 0.84147096], dtype=float32)",
    ),
    "cos": _unary(
        "Elementwise cosine (radians).",
        "The primitive behind jnp.cos.",
        "  >>> lax.cos(jnp.array([0.0, 1.0]))\n"
        "  Array([1.       , 0.5403023], dtype=float32)",
    ),
    "tan": _unary(
        "Elementwise tangent (radians).",
        "The primitive behind jnp.tan.",
        "  >>> lax.tan(jnp.array([0.0, 1.0]))\n"
        "  Array([0.       , 1.5574077], dtype=float32)",
    ),
    "asin": _unary(
        "Elementwise inverse sine, in [-pi/2, pi/2].",
        "Real inputs outside [-1, 1] give NaN.",
        "  >>> lax.asin(jnp.array([0.0, 1.0]))\n"
        "  Array([0.       , 1.5707964], dtype=float32)",
    ),
    "acos": _unary(
        "Elementwise inverse cosine, in [0, pi].",
        "Real inputs outside [-1, 1] give NaN.",
        "  >>> lax.acos(jnp.array([1.0, 0.0]))\n"
        "  Array([0.       , 1.5707964], dtype=float32)",
    ),
    "atan": _unary(
        "Elementwise inverse tangent, in (-pi/2, pi/2).",
        "For the quadrant-aware form of y / x use lax.atan2.",
        "  >>> lax.atan(jnp.array([0.0, 1.0]))\n"
        "  Array([0.       , 0.7853982], dtype=float32)",
    ),
    "sinh": _unary(
        "Elementwise hyperbolic sine.",
        "Overflows to +-inf for large |x|.",
        "  >>> lax.sinh(jnp.array([0.0, 1.0]))\n"
        "  Array([0.       , 1.1752012], dtype=float32)",
    ),
    "cosh": _unary(
        "Elementwise hyperbolic cosine.",
        "Overflows to inf for large |x|.",
        "  >>> lax.cosh(jnp.array([0.0, 1.0]))\n"
        "  Array([1.       , 1.5430806], dtype=float32)",
    ),
    "asinh": _unary(
        "Elementwise inverse hyperbolic sine.",
        "Defined for every real x.",
        "  >>> lax.asinh(jnp.array([0.0, 1.0]))\n"
        "  Array([0.        , 0.88137364], dtype=float32)",
    ),
    "acosh": _unary(
        "Elementwise inverse hyperbolic cosine.",
        "Real inputs below 1 give NaN.",
        "  >>> lax.acosh(jnp.array([1.0, 2.0]))\n"
        "  Array([0.      , 1.316958], dtype=float32)",
    ),
    "atanh": _unary(
        "Elementwise inverse hyperbolic tangent.",
        "+-1 gives +-inf; real inputs outside [-1, 1] give NaN.",
        "  >>> lax.atanh(jnp.array([0.0, 0.5]))\n"
        "  Array([0.        , 0.54930615], dtype=float32)",
    ),
    "logistic": _unary(
        "Elementwise logistic sigmoid 1 / (1 + e**-x).",
        "The primitive behind olympus.nn.sigmoid; saturates without overflow.",
        "  >>> lax.logistic(jnp.array([0.0, 2.0]))\n"
        "  Array([0.5     , 0.880797], dtype=float32)",
    ),
    "erf": _unary(
        "Elementwise error function.",
        "Odd, with limits -1 and 1.",
        "  >>> lax.erf(jnp.array([0.0, 1.0]))\n"
        "  Array([0.        , 0.84270084], dtype=float32)",
        "a floating dtype",
    ),
    "erfc": _unary(
        "Elementwise complementary error function 1 - erf(x).",
        "Accurate for large x, where 1 - erf(x) would round to 0.",
        "  >>> lax.erfc(jnp.array([0.0, 1.0]))\n"
        "  Array([1.        , 0.15729924], dtype=float32)",
        "a floating dtype",
    ),
    "erf_inv": _unary(
        "Elementwise inverse error function.",
        "+-1 gives +-inf; outside [-1, 1] gives NaN.",
        "  >>> lax.erf_inv(jnp.array([0.0, 0.5]))\n"
        "  Array([0.        , 0.47693628], dtype=float32)",
        "a floating dtype",
    ),
    "lgamma": _unary(
        "Elementwise log |Gamma(x)|.",
        "Poles (0 and the negative integers) give inf.",
        "  >>> lax.lgamma(jnp.array([1.0, 5.0]))\n"
        "  Array([4.7683716e-07, 3.1780548e+00], dtype=float32)",
        "a floating dtype",
    ),
    "digamma": _unary(
        "Elementwise digamma psi(x), the derivative of lgamma.",
        "Poles (0 and the negative integers) give NaN or inf.",
        "  >>> lax.digamma(jnp.array([1.0, 2.0]))\n"
        "  Array([-0.5772154 ,  0.42278463], dtype=float32)",
        "a floating dtype",
    ),
    "real": _unary(
        "The real part of a complex array.",
        "The result has the matching real dtype (complex64 gives float32).",
        "  >>> lax.real(jnp.array([1.0 + 2.0j]))\n  Array([1.], dtype=float32)",
        "a complex dtype",
    ),
    "imag": _unary(
        "The imaginary part of a complex array.",
        "The result has the matching real dtype (complex64 gives float32).",
        "  >>> lax.imag(jnp.array([1.0 + 2.0j]))\n  Array([2.], dtype=float32)",
        "a complex dtype",
    ),
    "not": _unary(
        "Elementwise bitwise not (logical not on booleans).",
        "Flips every bit of an integer: ~x is -x - 1 for signed types.",
        "  >>> lax.bitwise_not(jnp.array([0, 5]))\n"
        "  Array([-1, -6], dtype=int32)\n"
        "  >>> lax.bitwise_not(jnp.array([True, False]))\n"
        "  Array([False,  True], dtype=bool)",
        "an integer or boolean dtype",
    ),
    "rem": _binary(
        "Elementwise remainder of x / y, with the sign of x.",
        "C's fmod, not Python's %: jnp.remainder takes the sign of y.",
        "  >>> lax.rem(jnp.array([7, -7]), 3)\n  Array([ 1, -1], dtype=int32)",
    ),
    "pow": _binary(
        "Elementwise x ** y.",
        "For a static integer exponent lax.integer_pow is faster.",
        "  >>> lax.pow(jnp.array([2.0, 3.0]), 2.0)\n  Array([4., 9.], dtype=float32)",
    ),
    "atan2": _binary(
        "Elementwise arctangent of x / y, in the quadrant of (y, x).",
        "Note the order: lax.atan2(x, y) is atan(x / y), as jnp.arctan2.",
        "  >>> lax.atan2(jnp.array([1.0, -1.0]), jnp.array([-1.0, -1.0]))\n"
        "  Array([ 2.3561945, -2.3561945], dtype=float32)",
    ),
    "and": _binary(
        "Elementwise bitwise and (logical and on booleans).",
        "Needs integer or boolean operands.",
        "  >>> lax.bitwise_and(jnp.array([12, 10]), 6)\n  Array([4, 2], dtype=int32)",
    ),
    "or": _binary(
        "Elementwise bitwise or (logical or on booleans).",
        "Needs integer or boolean operands.",
        "  >>> lax.bitwise_or(jnp.array([12, 10]), 6)\n  Array([14, 14], dtype=int32)",
    ),
    "xor": _binary(
        "Elementwise bitwise exclusive or.",
        "Needs integer or boolean operands.",
        "  >>> lax.bitwise_xor(jnp.array([12, 10]), 6)\n  Array([10, 12], dtype=int32)",
    ),
    "eq": _binary(
        "Elementwise x == y, as a bool array.",
        "NaN compares unequal to everything.",
        "  >>> lax.eq(jnp.array([1.0, 2.0]), 2.0)\n  Array([False,  True], dtype=bool)",
        returns=_BOOL,
    ),
    "ne": _binary(
        "Elementwise x != y, as a bool array.",
        "NaN compares unequal to everything, itself included.",
        "  >>> lax.ne(jnp.array([1.0, 2.0]), 2.0)\n  Array([ True, False], dtype=bool)",
        returns=_BOOL,
    ),
    "lt": _binary(
        "Elementwise x < y, as a bool array.",
        "Comparisons with NaN are False.",
        "  >>> lax.lt(jnp.array([1.0, 2.0]), 2.0)\n  Array([ True, False], dtype=bool)",
        returns=_BOOL,
    ),
    "le": _binary(
        "Elementwise x <= y, as a bool array.",
        "Comparisons with NaN are False.",
        "  >>> lax.le(jnp.array([1.0, 3.0]), 2.0)\n  Array([ True, False], dtype=bool)",
        returns=_BOOL,
    ),
    "gt": _binary(
        "Elementwise x > y, as a bool array.",
        "Comparisons with NaN are False.",
        "  >>> lax.gt(jnp.array([1.0, 3.0]), 2.0)\n  Array([False,  True], dtype=bool)",
        returns=_BOOL,
    ),
    "ge": _binary(
        "Elementwise x >= y, as a bool array.",
        "Comparisons with NaN are False.",
        "  >>> lax.ge(jnp.array([1.0, 2.0]), 2.0)\n  Array([False,  True], dtype=bool)",
        returns=_BOOL,
    ),
    "complex": _binary(
        "The complex number x + i*y from real and imaginary parts.",
        "float32 parts give complex64 (float64 give complex128).",
        "  >>> lax.complex(jnp.array([1.0]), jnp.array([2.0]))\n"
        "  Array([1.+2.j], dtype=complex64)",
        returns=_COMPLEX,
    ),
    "polygamma": _binary(
        "Elementwise polygamma psi^(m)(x), the m-th derivative of digamma.",
        "m (the first operand) must hold non-negative integers, in x's float dtype.",
        "  >>> lax.polygamma(jnp.array([1.0]), jnp.array([1.0]))\n"
        "  Array([1.644934], dtype=float32)",
    ),
    "reduce_and": _reducer(
        "The logical (bitwise) and of `x` over `axes`.",
        "Needs an integer or boolean x; an empty reduction gives True (all bits set).",
        "  >>> lax.reduce_and(jnp.array([True, False]), (0,))\n"
        "  Array(False, dtype=bool)",
    ),
    "reduce_or": _reducer(
        "The logical (bitwise) or of `x` over `axes`.",
        "Needs an integer or boolean x; an empty reduction gives False (0).",
        "  >>> lax.reduce_or(jnp.array([True, False]), (0,))\n"
        "  Array(True, dtype=bool)",
    ),
    "reduce_xor": _reducer(
        "The bitwise exclusive or of `x` over `axes`.",
        "Needs an integer or boolean x; an empty reduction gives 0.",
        "  >>> lax.reduce_xor(jnp.array([1, 3, 4]), (0,))\n  Array(6, dtype=int32)",
    ),
    "scatter_mul": _scatter(
        "`operand` multiplied by `updates` at the indices.",
        "The functional `x[idx] *= updates`; duplicate indices multiply together.",
        "  >>> lax.scatter_mul(jnp.ones(3), jnp.array([[0], [0]]), jnp.array([2.0, 3.0]), dn)\n"
        "  Array([6., 1., 1.], dtype=float32)",
    ),
    "scatter_max": _scatter(
        "The elementwise maximum of `operand` and `updates` at the indices.",
        "The functional `x[idx] = max(x[idx], updates)`.",
        "  >>> lax.scatter_max(jnp.ones(3), jnp.array([[0], [2]]), jnp.array([5.0, -5.0]), dn)\n"
        "  Array([5., 1., 1.], dtype=float32)",
    ),
    "scatter_sub": _scatter(
        "`operand` with `updates` subtracted at the indices.",
        "The functional `x[idx] -= updates`; duplicate indices accumulate and "
        "unsigned integers wrap around, as in JAX.",
        "  >>> lax.scatter_sub(jnp.zeros(3), jnp.array([[1], [1]]), jnp.array([2.0, 1.0]), dn)\n"
        "  Array([ 0., -3.,  0.], dtype=float32)",
    ),
    "scatter_min": _scatter(
        "The elementwise minimum of `operand` and `updates` at the indices.",
        "The functional `x[idx] = min(x[idx], updates)`.",
        "  >>> lax.scatter_min(jnp.ones(3), jnp.array([[0], [2]]), jnp.array([5.0, -5.0]), dn)\n"
        "  Array([ 1.,  1., -5.], dtype=float32)",
    ),
}

_ACCURACY = (
    "  accuracy: an accuracy hint for XLA (None: the default); olympus\n"
    "    accepts it and computes as usual."
)
# These also take JAX's accuracy= hint for XLA's lowering of transcendentals.
for _name in "cos exp expm1 log log1p logistic rsqrt sin sqrt tan tanh".split():
    DOCS[_name] = DOCS[_name].replace("\n\nReturns:", f"\n{_ACCURACY}\n\nReturns:", 1)
# reduce_sum also takes JAX's out_sharding= (ops.reduce_sum).
DOCS["reduce_sum"] = DOCS["reduce_sum"].replace(
    "\n\nReturns:",
    "\n  out_sharding: the result's layout (a PartitionSpec on the `set_mesh`"
    "\n    mesh or a NamedSharding; None: what the operand's type says)."
    "\n\nReturns:",
    1,
)
# polygamma's operands are the order m and the point x.
DOCS["polygamma"] = DOCS["polygamma"].replace(
    "  x: an array.\n  y: an array of x's shape and dtype, or a Python scalar.",
    "  m: the derivative order, non-negative integers in x's float dtype.\n"
    "  x: the point, an array of m's shape and dtype.",
    1,
)


# ---- sections shared by families of hand-written lax functions ----------------------
_ORDER = ("Args:", "Returns:", "Raises:", "Example:")

RETURNS_LIKE_X = "Returns:\n  An array of x's shape and dtype."
RETURNS_LIKE_OPERAND = "Returns:\n  An array of operand's shape and dtype."
RETURNS_LIKE_OPERANDS = "Returns:\n  An array of the operands' shape and dtype."
RETURNS_NEW_LIKE_OPERAND = "Returns:\n  A new array of operand's shape and dtype."

_NOT_REAL_FLOAT = (
    "  OlympusTypeError: an operand is not of a real floating dtype (cast\n"
    "    integers with lax.convert_element_type)."
)
_NOT_INTEGER = "  OlympusTypeError: an operand is not of an integer dtype."
_OPERANDS_DIFFER = (
    "  OlympusTypeError: the operands' shapes or dtypes differ (lax does not\n"
    "    promote or broadcast)."
)
ARGS_REAL_X = "Args:\n  x: an array of a real floating dtype."
ARGS_REAL_X_ACCURACY = f"{ARGS_REAL_X}\n{_ACCURACY}"
RAISES_NOT_REAL_FLOAT = f"Raises:\n{_NOT_REAL_FLOAT}"
RAISES_NOT_REAL_FLOAT_OR_DIFFER = f"Raises:\n{_NOT_REAL_FLOAT}\n{_OPERANDS_DIFFER}"
RAISES_NOT_INTEGER = f"Raises:\n{_NOT_INTEGER}"
RAISES_NOT_INTEGER_OR_DIFFER = f"Raises:\n{_NOT_INTEGER}\n{_OPERANDS_DIFFER}"


def insert_section(doc: str, section: str) -> str:
    """`doc` with `section` in its place: its entries first in doc's own
    section of that name, else as a new section before the first later one
    (Args, Returns, Raises, Example, in that order), else at the end."""
    header, _, entries = section.partition("\n")
    own = doc.find(f"\n{header}\n")
    if own >= 0 and entries:
        at = own + len(header) + 2
        return f"{doc[:at]}{entries}\n{doc[at:]}"
    for later in _ORDER[_ORDER.index(header) + 1 :]:
        at = doc.find(f"\n{later}\n")
        if at >= 0:
            return f"{doc[: at + 1]}{section}\n\n{doc[at + 1 :]}"
    return f"{doc}\n\n{section}"


def with_sections(*sections: str) -> Callable[[Callable], Callable]:
    """A decorator giving a function its family's shared docstring sections
    (e.g. RETURNS_LIKE_X, RAISES_NOT_REAL_FLOAT) in their place; where the
    function's own docstring has that section (Args with its other
    parameters, say), the shared entries come first in it."""

    def add_sections(fn: Callable) -> Callable:
        doc = inspect.cleandoc(fn.__doc__ or "")
        for section in sections:
            doc = insert_section(doc, section)
        fn.__doc__ = doc
        return fn

    return add_sections
