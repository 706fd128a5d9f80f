"""Docstrings of the jnp reductions that numpy/reductions.py's factories make
(`_max_or_min`, `_bool_reduction`, `_arg_reduction`, `_cumulative`), keyed by
the function's name: one body serves several functions, so each one's text
lives in this table. A name missing here keeps its factory's default.
"""

from __future__ import annotations

_AXIS = "  axis: None (all elements), an int, or a tuple of ints."
_KEEP = "  keepdims: if True, reduced axes stay with size 1."
_OUT = "  out: unsupported (must be None); arrays are immutable."
_OUT_RAISES = "  OutArgumentError: out is not None (a NotImplementedError, as JAX's)."


def _doc(summary, note, args, returns, raises, example) -> str:
    return (
        f"{summary}\n\n{note}\n\nArgs:\n{args}\n\nReturns:\n  {returns}\n\n"
        f"Raises:\n{raises}\n\nExample:\n{example}"
    )


def _extremum(name: str, word: str, example: str) -> str:
    return _doc(
        f"The {word} of the elements of `a` over `axis`.",
        "NaN propagates (use nan" + name + " to ignore NaNs). An empty "
        "reduction needs `initial`, as NumPy's.",
        f"  a: an array.\n{_AXIS}\n{_OUT}\n{_KEEP}\n  initial: a value "
        f"included in every reduction (required for empty axes).\n  where: a "
        "boolean mask of the elements to include.",
        f"The {word}s, of a's dtype, with `axis` removed (kept with keepdims).",
        "  ValueError: an axis is out of range, or an axis is empty and "
        "initial is not given.",
        example,
    )


def _truth(name: str, summary: str, example: str) -> str:
    return _doc(
        summary,
        "Non-boolean inputs count as true where nonzero (NaN is true).",
        f"  a: an array.\n{_AXIS}\n{_OUT}\n{_KEEP}\n  where: a boolean mask "
        "of the elements to include.",
        "A boolean array with `axis` removed (kept with keepdims).",
        "  ValueError: out is given, or an axis is out of range.",
        example,
    )


def _arg(name: str, word: str, example: str) -> str:
    return _doc(
        f"The index of the {word} element of `a` along `axis`.",
        "Ties give the first index; NaN counts as the " + word + " value, as NumPy's.",
        f"  a: an array.\n  axis: an int, or None for the flattened array.\n{_OUT}\n"
        f"{_KEEP}",
        "An int32 array of indices with `axis` removed (kept with keepdims).",
        "  ValueError: `a` is empty along axis, axis is out of range, or out is\n"
        "    given.",
        example,
    )


def _running(word: str, note: str, example: str) -> str:
    return _doc(
        f"The running {word} of `a` along `axis`.",
        note,
        "  a: an array.\n  axis: an int, or None for the flattened array.\n"
        f"  dtype: the dtype to accumulate and return in.\n{_OUT}",
        "An array of a's shape (1-D for axis None).",
        "  ValueError: axis is out of range, or out is given.",
        example,
    )


def _spread(name: str, word: str, note: str, example: str) -> str:
    """var, std and their nan-variants: one parameter list, nan-variants
    leaving NaNs out (and taking no `correction`)."""
    nan = name.startswith("nan")
    args = (
        f"  a: an array.\n{_AXIS}\n  dtype: the dtype to compute and return in "
        f"(None: a's inexact dtype).\n{_OUT}\n  ddof: delta degrees of freedom: the "
        f"divisor is N - ddof.\n{_KEEP}\n  where: a boolean mask of the elements to "
        f"include{' (NaNs are left out too)' if nan else ''}.\n  mean: a's "
        f"{'nan' if nan else ''}mean over axis (kept, keepdims=True), if already "
        "computed."
    )
    if not nan:
        args += "\n  correction: the Array API's name for ddof (give one of the two)."
    return _doc(
        f"The {word} of the {'non-NaN ' if nan else ''}elements of `a` over `axis`.",
        note,
        args,
        f"The {word}s in a real floating dtype, `axis` removed (kept with\n"
        "  keepdims); NaN where N - ddof <= 0.",
        "  ArrayLikeTypeError: an argument is a list or other non-array (convert it\n"
        "    with jnp.asarray).\n  ValueError: an axis is out of range for the "
        "array's rank.",
        example,
    )


# ---- the nan-variants and the Array API's running reductions (nanfunctions.py,
# array_api.py): each pair differs only in the operation's name and example.
_ARRAYLIKE_RAISES = (
    "  ArrayLikeTypeError: {a} is a list or other non-array (convert it with\n"
    "    jnp.asarray)."
)
_NAN_RAISES = _ARRAYLIKE_RAISES.format(a="a") + "\n  ValueError: axis is out of range."
_CUM_NAMES = {"sum": "cumsum", "product": "cumprod"}


def _nan_reduction(word: str, note: str, takes: str, example: str) -> str:
    """nansum, nanprod, nanmax, nanmin, nanmean: `takes` lists the keywords
    they pass on to the reduction they wrap."""
    wrapped = {"maximum": "max", "minimum": "min", "product": "prod"}.get(word, word)
    return _doc(
        f"The {word} of the non-NaN elements of `a` over `axis`.",
        note,
        "  a: an array.\n  axis: an int, a tuple of ints, or None for all axes.\n"
        "  keepdims: whether to keep reduced axes, with size 1.\n  where: a boolean "
        "mask of the elements to include (NaNs are left out too).\n  **kwargs: what "
        f"{wrapped} also takes ({takes}).",
        "An array with the reduced axes removed (kept with keepdims).",
        _NAN_RAISES,
        example,
    )


def _nan_arg(word: str, example: str) -> str:
    return _doc(
        f"The index of the {word} non-NaN element of `a` along `axis`.",
        "A slice that holds only NaNs gives -1.",
        "  a: an array.\n  axis: an int, or None for the flattened array.\n"
        f"{_OUT}\n  keepdims: whether to keep the reduced axis, with size 1.",
        "An int array with axis removed (kept with keepdims).",
        f"{_NAN_RAISES}\n{_OUT_RAISES}",
        example,
    )


def _nan_running(word: str, nan_as: str, example: str) -> str:
    return _doc(
        f"The running {word} of `a` along `axis`, NaNs counted as {nan_as}.",
        f"Integers have no NaNs and run as in {_CUM_NAMES[word]}.",
        "  a: an array.\n  axis: an int, or None for the flattened array.\n"
        f"  dtype: the dtype to accumulate and return in.\n{_OUT}",
        "An array of a's shape (1-D for axis None).",
        f"{_NAN_RAISES}\n{_OUT_RAISES}",
        example,
    )


def _array_api_running(word: str, example: str) -> str:
    """cumulative_sum and cumulative_prod, the Array API's cumsum and cumprod."""
    return _doc(
        f"The running {word} of `x` along `axis` (the Array API's form).",
        f"Unlike {_CUM_NAMES[word]}, axis may be None only for 1-D x; "
        "include_initial puts the identity first.",
        "  x: an array of at least one dimension.\n  axis: the axis; None only for "
        "1-D x.\n  dtype: the dtype to accumulate and return in.\n  include_initial: "
        "whether to start with the identity (one more entry).",
        "An array of x's shape (one longer along axis with include_initial).",
        _ARRAYLIKE_RAISES.format(a="x")
        + "\n  ValueError: x is 0-D, or axis is out of range or None for x of "
        "rank > 1.",
        example,
    )


# ---- sections shared by the quantile family (numpy/nanfunctions.py) -------------------
_QUANTILE_ARGS = """Args:
  a: an array.
  q: {q}
  axis: None (all elements), an int, or a tuple of ints.
  out: unsupported (must be None); arrays are immutable.
  overwrite_input: ignored (arrays are immutable).
  method: how to read between order statistics: 'linear' (default),
    'lower', 'higher', 'nearest', 'midpoint' or 'inverted_cdf'.
  keepdims: if True, reduced axes stay with size 1.
  weights: per-element weights, of a's shape or the reduced axes' shape
    (only with method='inverted_cdf')."""
QUANTILE_ARGS = _QUANTILE_ARGS.format(q="the quantile(s), floating, in [0, 1].")
PERCENTILE_ARGS = _QUANTILE_ARGS.format(q="the percentile(s), in [0, 100].")
QUANTILE_RETURNS = """Returns:
  An array of a's inexact dtype: q's shape followed by the reduced shape
  of a."""
QUANTILE_RAISES = """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  QuantileMethodError: method is unknown, or weights come without
    method='inverted_cdf'.
  QuantileTypeError: q is not floating (percentiles are converted).
  EmptyQuantileError: the reduced axes hold no elements."""
MEDIAN_ARGS = """Args:
  a: an array.
  axis: None (all elements), an int, or a tuple of ints.
  out: unsupported (must be None); arrays are immutable.
  overwrite_input: ignored (arrays are immutable).
  keepdims: if True, reduced axes stay with size 1."""
MEDIAN_RETURNS = """Returns:
  The medians, in a's inexact dtype, with the reduced axes removed (kept
  with keepdims)."""
MEDIAN_RAISES = """Raises:
  ArrayLikeTypeError: an argument is a list or other non-array (convert it
    with jnp.asarray).
  EmptyQuantileError: the reduced axes hold no elements."""


DOCS: dict[str, str] = {
    "max": _extremum(
        "max",
        "maximum",
        "  >>> jnp.max(jnp.array([[1, 5], [3, 2]]), axis=0)\n"
        "  Array([3, 5], dtype=int32)",
    ),
    "min": _extremum(
        "min",
        "minimum",
        "  >>> jnp.min(jnp.array([[1, 5], [3, 2]]), axis=1)\n"
        "  Array([1, 2], dtype=int32)",
    ),
    "all": _truth(
        "all",
        "Whether every element of `a` over `axis` is true.",
        "  >>> jnp.all(jnp.array([True, False]))\n  Array(False, dtype=bool)",
    ),
    "any": _truth(
        "any",
        "Whether any element of `a` over `axis` is true.",
        "  >>> jnp.any(jnp.array([0.0, 2.0]))\n  Array(True, dtype=bool)",
    ),
    "argmax": _arg(
        "argmax",
        "largest",
        "  >>> jnp.argmax(jnp.array([1.0, 3.0, 3.0]))\n  Array(1, dtype=int32)",
    ),
    "argmin": _arg(
        "argmin",
        "smallest",
        "  >>> jnp.argmin(jnp.array([[4, 2], [1, 3]]), axis=1)\n"
        "  Array([1, 0], dtype=int32)",
    ),
    "cumsum": _running(
        "sum",
        "Booleans count in the default int; other integers keep their dtype "
        "(as JAX, unlike NumPy).",
        "  >>> jnp.cumsum(jnp.array([1, 2, 3]))\n  Array([1, 3, 6], dtype=int32)",
    ),
    "cumprod": _running(
        "product",
        "Booleans count in the default int; other integers keep their dtype.",
        "  >>> jnp.cumprod(jnp.array([1.0, 2.0, 3.0]))\n"
        "  Array([1., 2., 6.], dtype=float32)",
    ),
    "cummax": _running(
        "maximum",
        "NaN propagates to every later entry.",
        "  >>> jnp.cummax(jnp.array([1, 3, 2, 5]))\n  Array([1, 3, 3, 5], dtype=int32)",
    ),
    "cummin": _running(
        "minimum",
        "NaN propagates to every later entry.",
        "  >>> jnp.cummin(jnp.array([4, 2, 3, 1]))\n  Array([4, 2, 2, 1], dtype=int32)",
    ),
    "nansum": _nan_reduction(
        "sum",
        "NaNs count as 0: an all-NaN slice sums to 0.",
        "out=None, dtype, initial",
        "  >>> jnp.nansum(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(4., dtype=float32)",
    ),
    "nanprod": _nan_reduction(
        "product",
        "NaNs count as 1: an all-NaN slice gives 1.",
        "out=None, dtype, initial",
        "  >>> jnp.nanprod(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(3., dtype=float32)",
    ),
    "nanmax": _nan_reduction(
        "maximum",
        "An all-NaN slice gives NaN.",
        "out=None, initial",
        "  >>> jnp.nanmax(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(3., dtype=float32)",
    ),
    "nanmin": _nan_reduction(
        "minimum",
        "An all-NaN slice gives NaN.",
        "out=None, initial",
        "  >>> jnp.nanmin(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(1., dtype=float32)",
    ),
    "nanmean": _nan_reduction(
        "mean",
        "The mean of the non-NaN entries; an all-NaN slice gives NaN.",
        "out=None, dtype",
        "  >>> jnp.nanmean(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(2., dtype=float32)",
    ),
    "nanargmax": _nan_arg(
        "largest",
        "  >>> jnp.nanargmax(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(2, dtype=int32)",
    ),
    "nanargmin": _nan_arg(
        "smallest",
        "  >>> jnp.nanargmin(jnp.array([1.0, jnp.nan, 3.0]))\n  Array(0, dtype=int32)",
    ),
    "nancumsum": _nan_running(
        "sum",
        "0",
        "  >>> jnp.nancumsum(jnp.array([1.0, jnp.nan, 3.0]))\n"
        "  Array([1., 1., 4.], dtype=float32)",
    ),
    "nancumprod": _nan_running(
        "product",
        "1",
        "  >>> jnp.nancumprod(jnp.array([1.0, jnp.nan, 3.0]))\n"
        "  Array([1., 1., 3.], dtype=float32)",
    ),
    "cumulative_sum": _array_api_running(
        "sum",
        "  >>> jnp.cumulative_sum(jnp.array([1, 2, 3]))\n"
        "  Array([1, 3, 6], dtype=int32)\n"
        "  >>> jnp.cumulative_sum(jnp.array([1, 2, 3]), include_initial=True)\n"
        "  Array([0, 1, 3, 6], dtype=int32)",
    ),
    "cumulative_prod": _array_api_running(
        "product",
        "  >>> jnp.cumulative_prod(jnp.array([1, 2, 3]))\n"
        "  Array([1, 2, 6], dtype=int32)\n"
        "  >>> jnp.cumulative_prod(jnp.array([1, 2, 3]), include_initial=True)\n"
        "  Array([1, 1, 2, 6], dtype=int32)",
    ),
    "var": _spread(
        "var",
        "variance",
        "The mean squared deviation from the mean; complex values use |x - mean|.",
        "  >>> jnp.var(jnp.array([1.0, 3.0]), ddof=1)\n  Array(2., dtype=float32)",
    ),
    "std": _spread(
        "std",
        "standard deviation",
        "The square root of var, with var's parameters.",
        "  >>> jnp.std(jnp.array([1.0, 3.0]))\n  Array(1., dtype=float32)",
    ),
    "nanvar": _spread(
        "nanvar",
        "variance",
        "The non-NaN elements' count, minus `ddof`, divides, as NumPy's.",
        "  >>> jnp.nanvar(jnp.array([1.0, jnp.nan, 3.0, 4.0]))\n"
        "  Array(1.5555557, dtype=float32)",
    ),
    "nanstd": _spread(
        "nanstd",
        "standard deviation",
        "The square root of nanvar, with nanvar's parameters.",
        "  >>> jnp.nanstd(jnp.array([1.0, jnp.nan, 3.0, 4.0]))\n"
        "  Array(1.2472192, dtype=float32)",
    ),
}
