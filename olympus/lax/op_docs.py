"""Docstrings of the lax functions that factories make (ops.py's `_binary`,
`_unary` and `_reducer`, slicing.py's `_public_scatter`), keyed by the
primitive's name: one body serves many functions, so each one's text lives
in this table. A name missing here keeps its factory's one-line default.
"""

from __future__ import annotations


def _binary(summary: str, note: str, example: str) -> str:
    return f"""{summary}

{note} lax does not promote: both operands must have one dtype (Python
scalars take the array's), and shapes must be equal (no broadcasting).

Args:
  x: an array.
  y: an array of x's shape and dtype, or a Python scalar.

Returns:
  An array of x's shape and dtype.

Raises:
  OlympusTypeError: the shapes or dtypes differ (use olympus.numpy for
    NumPy's promotion and broadcasting).

Example:
{example}"""


def _unary(summary: str, note: str, example: str) -> str:
    return f"""{summary}

{note}

Args:
  x: an array of an inexact dtype.

Returns:
  An array of x's shape and dtype.

Raises:
  OlympusTypeError: x's dtype is not one the operation accepts (cast
    integers with lax.convert_element_type first).

Example:
{example}"""


def _reducer(summary: str, note: str, example: str) -> str:
    return f"""{summary}

{note}

Args:
  x: an array.
  axes: the dimensions to reduce (a sequence of ints).

Returns:
  An array of x's dtype without the reduced dimensions.

Raises:
  OlympusTypeError: an axis is out of range or repeated.

Example:
{example}"""


def _scatter(summary: str, note: str, example: str) -> str:
    return f"""{summary}

{note} Out-of-range windows are dropped.

Args:
  operand: the array to update.
  scatter_indices: an integer array whose last axis is an index vector.
  updates: the values, shaped as the index batch plus the window.
  dimension_numbers: a ScatterDimensionNumbers: update_window_dims,
    inserted_window_dims and scatter_dims_to_operand_dims.

Returns:
  A new array of operand's shape and dtype.

Raises:
  OlympusTypeError: the dimension numbers do not fit the shapes, or the
    dtypes differ.

Example:
  >>> dn = lax.ScatterDimensionNumbers(update_window_dims=(),
  ...     inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
{example}"""


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
    "mul": _binary(
        "Elementwise x * y.",
        "The primitive behind jnp.multiply.",
        "  >>> lax.mul(jnp.ones(2), 3.0)\n  Array([3., 3.], dtype=float32)",
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
}
