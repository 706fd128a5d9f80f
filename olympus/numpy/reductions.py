"""Reductions and contractions of olympus.numpy: sum, mean, max, ..., dot,
matmul, trace; running reductions (cumsum, ...); positions of nonzero
elements (nonzero, argwhere, flatnonzero)."""

from __future__ import annotations

import builtins
import functools

import numpy as np

from olympus import lax
from olympus.lax.sharding import accepts_out_sharding, refuse_split_operand
from olympus.lax import reductions as lax_reductions
from olympus.ir import dtypes
from olympus.numpy import ufuncs
from olympus.numpy.reduction_docs import DOCS as REDUCTION_DOCS
from olympus.backends.xla.dispatch import pair_op
from olympus.numpy.compiled import compiled, eager_arrays
from olympus.numpy.diagonals import diagonal
from olympus.numpy.shaping import ravel
from olympus.numpy.core import (
    refuse_out,
    aval_of,
    requested_dtype,
    broadcast_shapes,
    check_arraylike,
    broadcast_to,
    concrete_nonzero,
    normalize_axes,
    normalize_axis,
    prepare,
    promote_dtypes,
    stack,
    to_operand,
)
from olympus.numpy.indexing import take
from olympus.numpy.ufunc_docs import RAISES_AXIS, RAISES_X, SIZE_ARGS
from olympus.numpy.ufunc_docs import add_sections, append_args

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "argwhere",
    "average",
    "count_nonzero",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "cumulative_sum",
    "dot",
    "flatnonzero",
    "inner",
    "matmul",
    "max",
    "mean",
    "min",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nansum",
    "nonzero",
    "outer",
    "prod",
    "std",
    "sum",
    "tensordot",
    "trace",
    "var",
    "vdot",
]


def _keepdims(out, axes, ndim):
    shape = list(aval_of(out).shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return lax.reshape(out, shape)


def _identity(name: str, dtype: np.dtype):
    """The value that leaves `name`'s result unchanged: fills masked-out elements."""
    if name in ("sum", "prod"):
        return np.asarray(0 if name == "sum" else 1, dtype)[()]
    low = name == "max"
    if dtype == dtypes.bool_:
        return np.bool_(not low)
    if dtypes.is_float(dtype):
        return dtypes.float_lowest(dtype) if low else dtypes.float_highest(dtype)
    if dtypes.is_complex(dtype):
        return np.asarray(-np.inf if low else np.inf, dtype)[()]
    info = np.iinfo(dtype)
    return np.asarray(info.min if low else info.max, dtype)[()]


_BOOLS_ONLY = "bools only"  # sum/prod(promote_integers=False): only bools widen


def _accumulation_dtype(aval, dtype, accumulate=True):
    """sum/prod of small ints and bools accumulate in the default int (NumPy's rule)."""
    if dtype is not None:
        return requested_dtype(dtype)
    if aval.dtype == dtypes.bool_ or (
        accumulate is not _BOOLS_ONLY
        and dtypes.is_integer(aval.dtype)
        and aval.dtype.itemsize < dtypes.default_int_dtype().itemsize
    ):
        if dtypes.is_unsigned_int(aval.dtype):
            return dtypes.canonicalize_dtype(np.uint64)
        return dtypes.default_int_dtype()
    return aval.dtype


def _no_out(name: str, out) -> None:
    """NumPy's out= is taken (np.sum(x) passes out=None) but only as None."""
    refuse_out(f"jnp.{name}", out)


def _reduce(name, lax_fn, a, axis, dtype, out, keepdims, initial, where, accumulate):
    _no_out(name, out)
    check_arraylike(name, a)
    a = to_operand(a)
    aval = aval_of(a)
    axes = normalize_axes(axis, aval.ndim)
    if (
        initial is None
        and where is None
        and _empty_without_identity(aval.shape, axes, name)
    ):
        raise ValueError(f"jnp.{name} of an empty axis has no identity; pass initial=")
    target = _accumulation_dtype(aval, dtype, accumulate) if accumulate else aval.dtype
    compute = _upcast_half(target) if accumulate and dtype is None else target
    if compute != aval.dtype or aval.weak_type:  # JAX's reductions type strongly
        a = lax.convert_element_type(a, compute)
    if where is not None:
        mask = broadcast_to(to_operand(where), aval.shape)
        a = lax.select(mask, a, lax.full(aval.shape, _identity(name, compute)))
    result = lax_fn(a, axes)
    if initial is not None:
        combine = {
            "sum": ufuncs.add,
            "prod": ufuncs.multiply,
            "max": ufuncs.maximum,
            "min": ufuncs.minimum,
        }[name]
        result = lax.convert_element_type(combine(result, initial), compute)
    if compute != target:
        result = lax.convert_element_type(result, target)
    return _keepdims(result, axes, aval.ndim) if keepdims else result


def _upcast_half(dtype):
    """float16 and bfloat16 sums accumulate in float32, then round once, as
    JAX's do: 4096 halves of 0.1 sum to 409.5, not the 408.2 of half steps."""
    if dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        return np.dtype(np.float32)
    return dtype


def _empty_without_identity(shape, axes, name) -> bool:
    """Only max and min lack an identity for empty axes."""
    return name in ("max", "min") and builtins.any(shape[i] == 0 for i in axes)


def sum(  # noqa: A001
    a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
    promote_integers: bool = True,
):  # fmt: skip
    """The sum of the elements of `a` over `axis`.

    Booleans and small integers are summed as the default integer type
    (`promote_integers`), as NumPy's; floats keep their dtype.

    Returns:
      The sums, with `axis` removed (kept with keepdims).

    Raises:
      ArrayLikeTypeError: `a` is a list or other non-array (convert it with
        jnp.asarray).
      ValueError: an axis is out of range or repeated.

    Example:
      >>> jnp.sum(jnp.array([[1, 2], [3, 4]]), axis=0)
      Array([4, 6], dtype=int32)
    """
    widen = True if promote_integers else _BOOLS_ONLY
    return _reduce(
        "sum", lax.reduce_sum, a, axis, dtype, out, keepdims, initial, where, widen
    )


def prod(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
    promote_integers: bool = True,
):  # fmt: skip
    """The product of the elements of `a` over `axis`.

    Returns:
      The products, with `axis` removed (kept with keepdims).

    Raises:
      ArrayLikeTypeError: `a` is not an array or scalar.

    Example:
      >>> jnp.prod(jnp.array([1.0, 2.0, 3.0]))
      Array(6., dtype=float32)
    """
    widen = True if promote_integers else _BOOLS_ONLY
    return _reduce(
        "prod", lax.reduce_prod, a, axis, dtype, out, keepdims, initial, where, widen
    )


class ReductionWhereError(ValueError):
    """max/min with a `where` mask but no `initial`: a slice the mask empties
    would have no value (JAX's ValueError)."""


def _check_where_has_initial(name: str, where, initial) -> None:
    if where is not None and initial is None:
        raise ReductionWhereError(
            f"jnp.{name}: the reduction has no identity, so a where= mask needs "
            f"initial= (the value of a slice the mask leaves empty)"
        )


def _identity_of(name: str, dtype):
    """The value max (or min) starts from in `dtype`: what masked entries give."""
    biggest = name.endswith("min")
    if dtype == dtypes.bool_:
        return biggest
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return info.max if biggest else info.min
    return np.inf if biggest else -np.inf


def _max_or_min(name, lax_fn, bool_fn):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _check_where_has_initial(name, where, initial)
        is_bool = aval_of(to_operand(a)).dtype == dtypes.bool_
        return _reduce(
            name,
            bool_fn if is_bool else lax_fn,
            a,
            axis,
            None,
            out,
            keepdims,
            initial,
            where,
            False,
        )

    fn.__name__ = name
    fn.__doc__ = REDUCTION_DOCS.get(name) or (
        f"`{name}` over `axis` (all axes by default); needs initial= for empty axes."
    )
    return fn


max = amax = _max_or_min("max", lax.reduce_max, lax.reduce_or)  # noqa: A001
min = amin = _max_or_min("min", lax.reduce_min, lax.reduce_and)  # noqa: A001


def _bool_reduction(lax_fn, name):
    identity = name == "all"  # what a masked-out element counts as

    def fn(a, axis=None, out=None, keepdims: bool = False, *, where=None):
        if out is not None:  # np.all(x) passes out=None
            raise ValueError(
                f"jnp.{name}: the out= argument is not supported (arrays are immutable)"
            )
        a = to_operand(a)
        if aval_of(a).dtype != dtypes.bool_:
            a = lax.ne(a, np.zeros((), aval_of(a).dtype)[()])
        if where is not None:
            mask = broadcast_to(to_operand(where), aval_of(a).shape)
            a = lax.select(mask, a, lax.full_like(a, identity))
        axes = normalize_axes(axis, aval_of(a).ndim)
        out = lax_fn(a, axes)
        return _keepdims(out, axes, aval_of(a).ndim) if keepdims else out

    fn.__name__ = name
    fn.__doc__ = REDUCTION_DOCS.get(name)
    return fn


all = _bool_reduction(lax.reduce_and, "all")  # noqa: A001
any = _bool_reduction(lax.reduce_or, "any")  # noqa: A001


def _count(aval, axes, where, dtype, keepdims):
    """How many elements each mean averages: a constant, or a sum of the mask."""
    if where is None:
        return np.asarray(
            int(np.prod([aval.shape[i] for i in axes], dtype=np.int64)), dtype
        )[()]
    mask = broadcast_to(to_operand(where), aval.shape)
    return sum(lax.convert_element_type(mask, dtype), axis=axes, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims: bool = False, *, where=None):
    """The arithmetic mean of the elements of `a` over `axis`.

    Integers average in floating point (the default float type).

    Args:
      a: an array.
      axis: None (all elements), an int, or a tuple of ints.
      dtype: the dtype to compute and return in.
      out: unsupported (must be None).
      keepdims: if True, reduced axes stay with size 1.
      where: a boolean mask of the elements to include.

    Returns:
      The means (NaN for an empty reduction).

    Raises:
      ArrayLikeTypeError: `a` is not an array or scalar.
      ValueError: an axis is out of range.

    Example:
      >>> jnp.mean(jnp.array([[1, 2], [3, 4]]), axis=1)
      Array([1.5, 3.5], dtype=float32)
    """
    a = to_operand(a)
    aval = aval_of(a)
    axes = normalize_axes(axis, aval.ndim)
    if dtype is None:
        result = (
            aval.dtype
            if dtypes.is_inexact(aval.dtype)
            else dtypes.default_float_dtype()
        )
        compute = _upcast_half(result)
    else:
        result = compute = requested_dtype(dtype)
    total = sum(
        lax.convert_element_type(a, compute),
        axis=axes,
        out=out,
        keepdims=keepdims,
        where=where,
    )
    quotient = lax.div(total, _count(aval, axes, where, compute, keepdims))
    return _to_dtype(quotient, result)


def _to_dtype(x, dtype):
    return x if aval_of(x).dtype == dtype else lax.convert_element_type(x, dtype)


def var(
    a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False, *,
    where=None, mean=None, correction=None,
):  # fmt: skip
    ddof = ddof if correction is None else correction
    a = to_operand(a)
    aval = aval_of(a)
    compute, result = _var_dtypes(aval.dtype, dtype)
    a = _to_dtype(a, compute)
    centered = _centered(a, axis, out, where, mean)
    if dtypes.is_complex(compute):
        sq = lax.real(
            lax.mul(
                centered, lax.complex(lax.real(centered), lax.neg(lax.imag(centered)))
            )
        )
    else:
        sq = lax.mul(centered, centered)
    axes = normalize_axes(axis, aval.ndim)
    real = aval_of(sq).dtype
    count = lax.sub(
        *prepare(_count(aval, axes, where, real, keepdims), np.asarray(ddof, real)[()])
    )
    quotient = lax.div(
        *prepare(sum(sq, axis=axes, keepdims=keepdims, where=where), count)
    )
    quotient = _to_dtype(quotient, result)
    positive = lax.gt(count, np.asarray(0, real)[()])
    nan = lax.full(aval_of(quotient).shape, np.asarray(np.nan, result)[()])
    return lax.select(broadcast_to(positive, aval_of(quotient).shape), quotient, nan)


def _centered(a, axis, out, where, a_mean):
    """a minus its mean over axis (kept), or minus the mean the caller gives."""
    compute = aval_of(a).dtype
    if a_mean is None:
        a_mean = mean(a, axis, compute, out, keepdims=True, where=where)
    else:
        a_mean = _to_dtype(to_operand(a_mean), compute)
    return lax.sub(*prepare(a, a_mean))


def _var_dtypes(a_dtype, dtype):
    """(computation dtype, result dtype) of var and std, as JAX picks them."""
    if dtype is not None:
        dtype = requested_dtype(dtype)
        return _upcast_half(dtype), dtype
    if not dtypes.is_inexact(a_dtype):
        dtype = dtypes.default_float_dtype()
        return dtype, dtype
    real = np.zeros((), a_dtype).real.dtype
    return _upcast_half(a_dtype), real


def square_root_of(spread, name: str):
    """std from var, nanstd from nanvar: the square root of `spread`'s result,
    taking `spread`'s parameters (inspect.signature reads them through
    __wrapped__)."""

    @functools.wraps(spread)
    def root(*args, **kwargs):
        return lax.sqrt(spread(*args, **kwargs))

    root.__name__ = root.__qualname__ = name
    root.__doc__ = REDUCTION_DOCS[name]
    return root


var.__doc__ = REDUCTION_DOCS["var"]
std = square_root_of(var, "std")


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """The weighted mean along `axis`.

    Weighted mean along `axis`; `weights` broadcast against `a`.

    Args:
      a: an array or scalar.
      axis: the axis to work along (None: the flattened array).
      weights: weights broadcasting against a (None: the plain mean).
      returned: whether to also return the sum of the weights.
      keepdims: whether to keep reduced axes, with size 1.

    Returns:
      The averages (and the weight sums when returned is True).

    Example:
      >>> jnp.average(jnp.array([1.0, 2.0, 4.0]), weights=jnp.array([1.0, 1.0, 2.0]))
      Array(2.75, dtype=float32)
    """
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        total = lax.full(
            aval_of(avg).shape,
            np.asarray(
                aval_of(to_operand(a)).size // builtins.max(aval_of(avg).size, 1),
                aval_of(avg).dtype,
            )[()],
        )
    else:
        a, weights = prepare(a, weights, inexact=True)
        shape = broadcast_shapes(aval_of(a).shape, aval_of(weights).shape)
        a, weights = broadcast_to(a, shape), broadcast_to(weights, shape)
        total = sum(weights, axis=axis, keepdims=keepdims)
        avg = lax.div(sum(lax.mul(a, weights), axis=axis, keepdims=keepdims), total)
    return (avg, total) if returned else avg


def _nan_reduction(name, reduction):
    def fn(a, axis=None, keepdims: bool = False, *, where=None, **kwargs):
        check_arraylike(name, a)  # names the nan-function, not this closure
        a = to_operand(a)
        aval = aval_of(a)
        if kwargs.get("initial") is None and _empty_without_identity(
            aval.shape, normalize_axes(axis, aval.ndim), name[3:]
        ):
            raise ValueError(
                f"jnp.{name} of an empty axis has no identity; pass initial="
            )
        is_nan = lax.ne(a, a)
        # The caller's mask and the not-NaN mask both apply (JAX's nan-reductions).
        present = _and_where(lax.bitwise_not(is_nan), where)
        no_initial = kwargs.get("initial") is None
        if name in ("nanmax", "nanmin"):
            _check_where_has_initial(name, where, kwargs.get("initial"))
            if no_initial:  # the NaN mask is ours: start from the identity
                kwargs["initial"] = _identity_of(name, aval.dtype)
        out = reduction(a, axis=axis, keepdims=keepdims, where=present, **kwargs)
        if (
            name in ("nanmax", "nanmin")
            and no_initial
            and dtypes.is_inexact(aval.dtype)
        ):
            out = _nan_where_all_nan(out, is_nan, axis, keepdims)
        return out

    fn.__name__ = name
    fn.__doc__ = REDUCTION_DOCS.get(name, f"`{name[3:]}` ignoring NaNs.")
    return fn


def _and_where(present, where):
    """The elements a nan-reduction reads: not NaN, and in `where` if given."""
    if where is None:
        return present
    where = to_operand(where)
    shape = broadcast_shapes(aval_of(present).shape, aval_of(where).shape)
    where = broadcast_to(lax.convert_element_type(where, dtypes.bool_), shape)
    return lax.bitwise_and(broadcast_to(present, shape), where)


def _nan_where_all_nan(out, is_nan, axis, keepdims):
    """A slice of only NaNs has no max or min: NaN, as in NumPy (the masked
    reduction alone would give its identity, -inf or +inf)."""
    all_nan = all(is_nan, axis=axis, keepdims=keepdims)
    nan = lax.full(aval_of(out).shape, np.asarray(np.nan, aval_of(out).dtype)[()])
    return lax.select(all_nan, nan, out)


nansum = _nan_reduction("nansum", sum)
nanprod = _nan_reduction("nanprod", prod)
nanmax = _nan_reduction("nanmax", max)
nanmin = _nan_reduction("nanmin", min)
nanmean = _nan_reduction("nanmean", mean)


def count_nonzero(a, axis=None, keepdims: bool = False):
    """The number of nonzero entries of `a` along `axis`.

    Args:
      a: an array or scalar.
      axis: the axis to work along (None: the flattened array).
      keepdims: whether to keep reduced axes, with size 1.

    Returns:
      The counts, of the default int dtype.

    Example:
      >>> jnp.count_nonzero(jnp.array([[0, 1], [2, 3]]))
      Array(3, dtype=int32)
      >>> jnp.count_nonzero(jnp.array([[0, 1], [2, 3]]), axis=0)
      Array([1, 2], dtype=int32)
    """
    a = to_operand(a)
    nonzero = lax.ne(a, np.zeros((), aval_of(a).dtype)[()])
    return sum(nonzero, axis=axis, keepdims=keepdims)


def _arg_reduction(lax_fn, name):
    def fn(a, axis=None, out=None, keepdims: bool = False):
        _no_out(name, out)
        a = to_operand(a)
        if axis is None:
            a = lax.reshape(a, (aval_of(a).size,))
            axis = 0
        ndim = aval_of(a).ndim
        axis = normalize_axis(axis, ndim)
        if aval_of(a).shape[axis] == 0:
            raise ValueError(f"jnp.{name}: attempt to get {name} of an empty sequence")
        out = lax_fn(a, axis, dtypes.default_int_dtype())
        return _keepdims(out, (axis,), ndim) if keepdims else out

    fn.__name__ = name
    fn.__doc__ = REDUCTION_DOCS.get(name)
    return fn


argmax = _arg_reduction(lax.argmax, "argmax")
argmin = _arg_reduction(lax.argmin, "argmin")


# ---- contractions ----------------------------------------------------------------
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """The sum along a diagonal of `a`.

    For rank > 2, the diagonal of the axis1/axis2 planes.

    Args:
      a: an array of rank >= 2.
      offset: the diagonal's offset.
      axis1: the first axis of the planes.
      axis2: the second axis.
      dtype: the dtype to accumulate in.
      out: only None (NumPy's output array; olympus arrays are immutable).

    Returns:
      The sums, without axis1 and axis2.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      ValueError: a has fewer than two dimensions, or axis1/axis2 is out of
        range.

    Example:
      >>> jnp.trace(jnp.array([[1, 2], [3, 4]]))
      Array(5, dtype=int32)
    """
    _no_out("trace", out)
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@accepts_out_sharding
def dot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of two arrays, as NumPy's `dot`.

    Scalars multiply; 1-D with 1-D is the inner product; otherwise the last
    axis of `a` is contracted with the second-to-last of `b` (the last, if
    b is 1-D). Operands promote to a common dtype.

    Args:
      a: an array or scalar.
      b: an array or scalar.
      precision: None, a lax.Precision or its name, or a pair.
      preferred_element_type: the dtype to accumulate and return in.

    Returns:
      The product array.

    Raises:
      OlympusTypeError: the contracted dimensions differ in size.

    Example:
      >>> jnp.dot(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))
      Array(11., dtype=float32)
    """
    return _product("dot", a, b, _dot_axis, precision, preferred_element_type)


def _dot_axis(ndim: int) -> int:
    """The axis of b that dot contracts: its second-to-last (its only, for 1-D)."""
    return 0 if ndim == 1 else ndim - 2


def _last_axis(ndim: int) -> int:
    return ndim - 1


def _product(name: str, a, b, b_axis, precision, preferred_element_type):
    """dot or inner: a's last axis contracted with b's axis `b_axis(b.ndim)`;
    a scalar operand multiplies."""
    check_arraylike(name, a, b)
    a, b = _promote_only(a, b)
    na, nb = aval_of(a).ndim, aval_of(b).ndim
    if na == 0 or nb == 0:
        return _preferred(_scalar_product(a, b), preferred_element_type)
    dims = (((na - 1,), (b_axis(nb),)), ((), ()))
    return _contract(a, b, dims, precision, preferred_element_type)


def _scalar_product(a, b):
    """a * b for a scalar operand; booleans AND, as JAX's dot_general
    without contracting dimensions (lax.mul refuses bool)."""
    a, b = prepare(a, b)
    if aval_of(a).dtype == dtypes.bool_:
        return lax.bitwise_and(a, b)
    return lax.mul(a, b)


def _contract(a, b, dims, precision, preferred_element_type):
    return lax.dot_general(
        a, b, dims, precision=precision, preferred_element_type=preferred_element_type
    )


def _preferred(x, preferred_element_type):
    """A product computed without dot_general (a scalar operand) in the
    preferred element type, as JAX's dot gives it."""
    if preferred_element_type is None:
        return x
    return lax.convert_element_type(x, preferred_element_type)


def _promote_only(a, b):
    return promote_dtypes(a, b)


_MATRIX_PRODUCT = (((1,), (0,)), ((), ()))  # dot_general's for two matrices


@accepts_out_sharding
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """The matrix product of two arrays (the `@` operator).

    Leading dimensions broadcast as batch dimensions; a 1-D operand is
    treated as a vector (its axis is dropped from the result). Scalars are
    not allowed (use multiply).

    Args:
      a: an array of rank >= 1.
      b: an array of rank >= 1.
      precision: None, a lax.Precision or its name, or a pair.
      preferred_element_type: the dtype to accumulate and return in.

    Returns:
      The product array.

    Raises:
      ValueError: an operand is a scalar.
      OlympusTypeError: the contracted dimensions differ in size.

    Example:
      >>> jnp.matmul(jnp.ones((2, 3)), jnp.ones((3, 4))).shape
      (2, 4)
    """
    options = {"precision": precision, "preferred_element_type": preferred_element_type}
    if eager_arrays(a, b):
        if (
            precision is None
            and preferred_element_type is None
            and _matrix_params(a.aval, b.aval) is not None
        ):
            return lax.dot_general(a, b, _MATRIX_PRODUCT)  # one primitive, bound
        return compiled(_matmul)(a, b, **options)  # one dispatch, as JAX's jit
    return _matmul(a, b, **options)


def _matrix_params(a, b) -> dict | None:
    """dot_general's params where `a @ b` of these avals only binds it: two
    matrices of one strong dtype (nothing to promote)."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.weak_type or b.weak_type:
        return None
    return {
        "dimension_numbers": _MATRIX_PRODUCT,
        "precision": lax_reductions.canonical_precision(None),
        "preferred_element_type": None,
    }


# From its second call on two matrices, `a @ b` runs its executable directly.
matmul = pair_op(lax_reductions.dot_general_p, matmul, _matrix_params)


def _matmul(a, b, *, precision=None, preferred_element_type=None):
    def dot(a, b, dims):
        return lax.dot_general(
            a,
            b,
            dims,
            precision=precision,
            preferred_element_type=preferred_element_type,
        )

    a, b = _promote_only(a, b)
    na, nb = aval_of(a).ndim, aval_of(b).ndim
    if na == 2 and nb == 2:  # the common case: no batch dimensions
        return dot(a, b, _MATRIX_PRODUCT)
    if na == 0 or nb == 0:
        raise ValueError(
            "matmul: operands must be at least 1-dimensional; use * for scalars"
        )
    if na == 1 and nb == 1:
        return dot(a, b, (((0,), (0,)), ((), ())))
    if nb == 1:
        return dot(a, b, (((na - 1,), (0,)), ((), ())))
    if na == 1:
        out = dot(a, b, (((0,), (nb - 2,)), ((), ())))
        return lax.transpose(out, (*range(nb - 2), nb - 2)) if nb > 2 else out
    a_shape, b_shape = aval_of(a).shape, aval_of(b).shape
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    a = broadcast_to(a, batch + a_shape[-2:])
    b = broadcast_to(b, batch + b_shape[-2:])
    nbatch = len(batch)
    dims = tuple(range(nbatch))
    return dot(a, b, (((nbatch + 1,), (nbatch,)), (dims, dims)))


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened operands, the first conjugated.

    Args:
      a: an array (flattened, conjugated).
      b: an array with a's number of elements.
      precision: the matmul precision (None: the default).
      preferred_element_type: the accumulation and result dtype (None: the
        inputs').

    Returns:
      A scalar array.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      OlympusTypeError: the operands' sizes differ.

    Example:
      >>> jnp.vdot(jnp.array([1 + 1j, 2]), jnp.array([1, 1j]))
      Array(1.+1.j, dtype=complex64)
    """
    check_arraylike("vdot", a, b)
    a, b = _promote_only(a, b)
    a = lax.reshape(ufuncs.conjugate(a), (aval_of(a).size,))
    b = lax.reshape(b, (aval_of(b).size,))
    dims = (((0,), (0,)), ((), ()))
    return _contract(a, b, dims, precision, preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """The sum product over the last axes of `a` and `b`.

    Args:
      a: an array.
      b: an array whose last axis matches a's.
      precision: the matmul precision (None: the default).
      preferred_element_type: the accumulation and result dtype (None: the
        inputs').

    Returns:
      An array of shape a.shape[:-1] + b.shape[:-1].

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      OlympusTypeError: the last axes differ in length.

    Example:
      >>> jnp.inner(jnp.array([1, 2]), jnp.array([3, 4]))
      Array(11, dtype=int32)
    """
    return _product("inner", a, b, _last_axis, precision, preferred_element_type)


def outer(a, b, out=None):
    """The outer product of two vectors: out[i, j] = a[i] * b[j].

    Inputs are flattened first, as NumPy's.

    Args:
      a: an array.
      b: an array.
      out: only None (NumPy's output array; olympus arrays are immutable).

    Returns:
      A 2-D array of shape (a.size, b.size).

    Example:
      >>> jnp.outer(jnp.array([1, 2]), jnp.array([1, 10]))
      Array([[ 1, 10], [ 2, 20]], dtype=int32)
    """
    _no_out("outer", out)
    a, b = _promote_only(a, b)
    a = lax.reshape(a, (aval_of(a).size,))
    b = lax.reshape(b, (aval_of(b).size,))
    return lax.dot_general(a, b, (((), ()), ((), ())))


@accepts_out_sharding
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """The sum product of `a` and `b` over the given axes.

    The sum product over `axes` (a count of trailing/leading axes, or a pair of
    axis lists).

    Args:
      a: an array.
      b: an array.
      axes: an int n (a's last n axes with b's first n) or a pair of axis
        sequences.
      precision: the matmul precision (None: the default).
      preferred_element_type: the accumulation and result dtype (None: the
        inputs').

    Returns:
      An array of a's free axes followed by b's.

    Raises:
      ArrayLikeTypeError: an argument is a list or other non-array (convert it
        with jnp.asarray).
      OlympusTypeError: the contracted axes differ in length.

    Example:
      >>> jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 4)), axes=1).shape
      (2, 4)
    """
    check_arraylike("tensordot", a, b)
    a, b = _promote_only(a, b)
    na, nb = aval_of(a).ndim, aval_of(b).ndim
    if isinstance(axes, int):
        ca, cb = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
    ca = tuple(normalize_axis(x, na) for x in ca)
    cb = tuple(normalize_axis(x, nb) for x in cb)
    return _contract(a, b, ((ca, cb), ((), ())), precision, preferred_element_type)


# ---- cumulative reductions ----------------------------------------------------
def _cumulative(name: str, lax_fn, accumulate: bool):
    """NumPy's running reduction: lax's along one axis (the flattened array if
    `axis` is None), in the dtype JAX keeps (`_running_dtype`)."""

    def fn(a, axis=None, dtype=None, out=None):
        _no_out(f"cum{name}", out)
        a = to_operand(a)
        if axis is None:
            a, axis = lax.reshape(a, (aval_of(a).size,)), 0
        aval = aval_of(a)
        axis = normalize_axis(axis, aval.ndim)
        target = _running_dtype(aval, dtype) if accumulate else aval.dtype
        if target != aval.dtype or aval.weak_type:  # strong, as JAX's cumsum
            a = lax.convert_element_type(a, target)
        return lax_fn(a, axis)

    fn.__name__ = f"cum{name}"
    fn.__doc__ = REDUCTION_DOCS.get(f"cum{name}") or (
        f"Running {name} along `axis` (the flattened array if None)."
    )
    return fn


def _running_dtype(aval, dtype):
    """cumsum/cumprod keep small ints as they are (JAX, unlike NumPy and sum);
    only booleans count in the default int."""
    if dtype is not None:
        return requested_dtype(dtype)
    if aval.dtype == dtypes.bool_:
        return dtypes.default_int_dtype()
    return aval.dtype


cumsum = _cumulative("sum", lax.cumsum, accumulate=True)
cumprod = _cumulative("prod", lax.cumprod, accumulate=True)
cummax = _cumulative("max", lax.cummax, accumulate=False)
cummin = _cumulative("min", lax.cummin, accumulate=False)
cumulative_sum = cumsum


# ---- positions of nonzero elements ---------------------------------------------
def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of `a`, one array per dimension.

    The output's length depends on the data: under jit pass a static `size` (extra slots get fill_value, extra indices are dropped).

    Args:
      a: an array.
      size: the static number of indices to return.
      fill_value: the padding for `size` (default 0).

    Returns:
      A tuple of int32 index arrays.

    Raises:
      ValueError: a is traced (under jit) and size is not given.
      ShardingTypeError: a is split between devices on Explicit mesh axes
        (as JAX: the positions are a running count over all of a).

    Example:
      >>> jnp.nonzero(jnp.array([0, 5, 0, 7]))
      (Array([1, 3], dtype=int32),)
    """
    refuse_split_operand("jnp.nonzero", a)
    if size is None:
        return concrete_nonzero(a)
    a = to_operand(a)
    fills = _nonzero_fills(fill_value, aval_of(a).ndim)
    if aval_of(a).size == 0:  # nothing found: every slot is padding
        return tuple(
            broadcast_to(lax.convert_element_type(to_operand(f), dtypes.int32),
                         (int(size),))
            for f in fills
        )  # fmt: skip
    flat_mask = lax.ne(
        lax.reshape(a, (aval_of(a).size,)), np.zeros((), aval_of(a).dtype)[()]
    )
    flat_index = _first_true_positions(flat_mask, int(size))
    found = _first_true_count(flat_mask, int(size))
    # Coordinates along each axis of every flat position, looked up at the found ones.
    coordinates = np.unravel_index(np.arange(aval_of(a).size), aval_of(a).shape)
    return tuple(
        lax.select(
            found,
            _take_flat(np.asarray(c, np.int32), flat_index),
            broadcast_to(
                lax.convert_element_type(to_operand(fill), dtypes.int32), (int(size),)
            ),
        )  # fmt: skip
        for c, fill in zip(coordinates, fills)
    )


def _nonzero_fills(fill_value, ndim: int) -> list:
    """One padding value per axis (JAX takes a scalar or a tuple of ndim)."""
    if fill_value is None:
        return [np.int32(0)] * ndim
    if not isinstance(fill_value, tuple) and np.ndim(fill_value) == 0:
        return [fill_value] * ndim
    if not isinstance(fill_value, tuple) or len(fill_value) != ndim:
        raise ValueError(
            f"jnp.nonzero: fill_value must be a scalar or a tuple with one entry "
            f"per axis ({ndim}), got {fill_value!r:.60}"
        )
    return list(fill_value)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Picks from `x` where `condition` is true and from `y` elsewhere.

    The three operands broadcast together and x, y promote to a common
    dtype, as NumPy's. With only `condition`, it returns the indices of
    its nonzero elements (as `nonzero`): that form's output size depends on
    the data, so under jit pass a static `size`.

    Args:
      condition: a boolean array (other dtypes: nonzero is true).
      x: the values where condition is true.
      y: the values where condition is false.
      size: with condition alone, the static number of indices to return
        (padded with fill_value, or truncated).
      fill_value: the padding for `size`.

    Returns:
      An array of the broadcast shape and promoted dtype; or, with condition
      alone, a tuple of index arrays, one per dimension.

    Raises:
      IncompatibleShapesError: the operands do not broadcast.
      ValueError: only one of x and y is given.
      ValueError: the one-argument form is traced without size.

    Example:
      >>> jnp.where(jnp.array([True, False, True]), 1.0, jnp.zeros(3))
      Array([1., 0., 1.], dtype=float32)
      >>> jnp.where(jnp.array([0, 3, 0, 5]))
      (Array([1, 3], dtype=int32),)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError(
            "jnp.where: size and fill_value belong to the one-argument form "
            "where(condition, size=..., fill_value=...); drop them with x and y"
        )
    return ufuncs.where(condition, x, y)


def _first_true_positions(mask, size: int):
    """Flat positions of the first `size` True entries (0 where there are fewer)."""
    rank = lax.sub(cumsum(mask), np.int32(1))  # slot of each True entry
    n = aval_of(mask).shape[0]
    slots = lax.broadcasted_iota(dtypes.int32, (size, n), 0)
    hits = lax.bitwise_and(
        lax.eq(slots, lax.broadcast_in_dim(rank, (size, n), (1,))),
        lax.broadcast_in_dim(mask, (size, n), (1,)),
    )
    positions = lax.broadcasted_iota(dtypes.int32, (size, n), 1)
    return lax.reduce_sum(
        lax.select(hits, positions, lax.full((size, n), np.int32(0))), (1,)
    )


def _first_true_count(mask, size: int):
    total = lax.reduce_sum(lax.convert_element_type(mask, dtypes.int32), (0,))
    return lax.lt(lax.iota(dtypes.int32, size), total)


def _take_flat(table: np.ndarray, index):
    return take(table, index, mode="clip")


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero entries of the flattened `a`.

    Args:
      a: an array.

    Returns:
      A 1-D int array.

    Example:
      >>> jnp.flatnonzero(jnp.array([0, 3, 0, 4]))
      Array([1, 3], dtype=int32)
    """
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one row per element.

    As nonzero, transposed; under jit pass a static `size`.

    Args:
      a: an array.
      size: the static number of rows to return.
      fill_value: the padding for `size`.

    Returns:
      An int32 array of shape (count, a.ndim).

    Raises:
      ValueError: a is traced (under jit) and size is not given.

    Example:
      >>> jnp.argwhere(jnp.array([[0, 1], [1, 0]]))
      Array([[0, 1], [1, 0]], dtype=int32)
    """
    if np.ndim(a) == 0:
        found = nonzero(ravel(a), size=size, fill_value=fill_value)[0]
        index = np.zeros((), dtypes.default_int_dtype())[()]  # int64 with x64, as JAX
        return lax.full((aval_of(found).shape[0], 0), index)
    indices = nonzero(a, size=size, fill_value=fill_value)
    return stack(indices, axis=1) if indices else lax.full((0, 0), np.int32(0))


# Docstring sections the functions above share with their families (ufunc_docs).
add_sections(
    (sum, prod),
    """Args:
  a: an array.
  axis: None (all elements), an int, or a tuple of ints.
  dtype: the dtype to accumulate and return in.
  out: unsupported (must be None); arrays are immutable.
  keepdims: if True, reduced axes stay with size 1.
  initial: a starting value, included in every reduction.
  where: a boolean mask of the elements to include.
  promote_integers: if True, booleans and narrow integers reduce in the
    default int.""",
)
append_args((flatnonzero,), SIZE_ARGS)
add_sections((average, count_nonzero), RAISES_AXIS)
add_sections((outer, flatnonzero), RAISES_X)
