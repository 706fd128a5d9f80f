"""`olympus.lax`: one public function per primitive, with JAX's signatures.

lax functions do not promote dtypes (olympus.numpy does); a Python scalar
operand takes the dtype of the array it meets, as a weak-typed constant.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.lax import elementwise as ew
from olympus.lax import reductions as red
from olympus.lax import shapes as sh
from olympus.tracer.core import aval_of

_PY_SCALARS = (bool, int, float, complex)


def _match_scalars(*args):
    """Gives Python scalars the dtype of the first array operand."""
    target = next(
        (aval_of(a).dtype for a in args if not isinstance(a, _PY_SCALARS)), None
    )
    if target is None:
        return args
    return tuple(
        np.asarray(a, dtype=target)[()]
        if isinstance(a, _PY_SCALARS) and aval_of(a).dtype != target
        else a
        for a in args
    )


def _binary(prim):
    def op(x, y):
        if isinstance(x, _PY_SCALARS) or isinstance(y, _PY_SCALARS):
            return prim.bind(*_match_scalars(x, y))
        return prim.bind(x, y)

    op.primitive = prim  # on two arrays op only binds: olympus.numpy may dispatch it
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}` of two arrays of one dtype (no promotion)."
    return op


def _unary(prim):
    def op(x):
        return prim.bind(x)

    op.primitive = prim  # op(x) only binds: olympus.numpy may dispatch it directly
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise `{prim.name}`."
    return op


add, sub, mul, div, rem = map(
    _binary, (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p)
)
max, min, pow, atan2 = map(_binary, (ew.max_p, ew.min_p, ew.pow_p, ew.atan2_p))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = map(_binary, (ew.and_p, ew.or_p, ew.xor_p))
eq, ne, lt, le, gt, ge = map(
    _binary, (ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p)
)
complex = _binary(ew.complex_p)  # noqa: A001

neg, exp, log, expm1, log1p = map(
    _unary, (ew.neg_p, ew.exp_p, ew.log_p, ew.expm1_p, ew.log1p_p)
)
sin, cos, tan, tanh, logistic = map(
    _unary, (ew.sin_p, ew.cos_p, ew.tan_p, ew.tanh_p, ew.logistic_p)
)
sqrt, rsqrt, abs, sign = map(_unary, (ew.sqrt_p, ew.rsqrt_p, ew.abs_p, ew.sign_p))  # noqa: A001
floor, ceil, erf, bitwise_not = map(_unary, (ew.floor_p, ew.ceil_p, ew.erf_p, ew.not_p))
erfc, erf_inv, lgamma, digamma = map(
    _unary, (ew.erfc_p, ew.erf_inv_p, ew.lgamma_p, ew.digamma_p)
)
polygamma = _binary(ew.polygamma_p)
asin, acos, atan = map(_unary, (ew.asin_p, ew.acos_p, ew.atan_p))
sinh, cosh, asinh, acosh, atanh = map(
    _unary, (ew.sinh_p, ew.cosh_p, ew.asinh_p, ew.acosh_p, ew.atanh_p)
)
real, imag = map(_unary, (ew.real_p, ew.imag_p))


def round(x, rounding_method: int = 0):  # noqa: A001
    """Rounds to the nearest integer: 0 = away from zero (default), 1 = to even."""
    return ew.round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    """`x ** y` for a static Python int `y`, by repeated multiplication."""
    return ew.integer_pow_p.bind(x, y=int(y))


def select_n(which, *cases):
    """`cases[which]` elementwise; a boolean `which` picks cases[1] where True."""
    return ew.select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false` (JAX's lax.select)."""
    return ew.select_n_p.bind(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    return ew.clamp_p.bind(*_match_scalars(x, min, x, max)[1:])


def convert_element_type(x, new_dtype):
    """Casts `x` to `new_dtype` (canonicalised: 64-bit types need x64)."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    aval = aval_of(x)
    if aval.dtype == new_dtype and not aval.weak_type:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=False)


# ---- shapes ------------------------------------------------------------------
def broadcast_in_dim(x, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
    return sh.broadcast_in_dim_p.bind(
        x,
        shape=tuple(int(d) for d in shape),
        broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions),
    )


def broadcast(x, sizes: Sequence[int]):
    """Adds leading dimensions `sizes` to `x`."""
    aval = aval_of(x)
    dims = tuple(range(len(sizes), len(sizes) + aval.ndim))
    return broadcast_in_dim(x, tuple(sizes) + aval.shape, dims)


def reshape(x, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None):
    new_sizes = tuple(int(d) for d in new_sizes)
    if dimensions is None and aval_of(x).shape == new_sizes:
        return x
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    return sh.reshape_p.bind(x, new_sizes=new_sizes, dimensions=dims)


def transpose(x, permutation: Sequence[int]):
    return sh.transpose_p.bind(x, permutation=tuple(int(d) for d in permutation))


def squeeze(x, dimensions: Sequence[int]):
    ndim = aval_of(x).ndim
    dims = tuple(sorted(int(d) % ndim if ndim else int(d) for d in dimensions))
    return sh.squeeze_p.bind(x, dimensions=dims) if dims else x


def expand_dims(x, dimensions: Sequence[int]):
    out_ndim = aval_of(x).ndim + len(dimensions)
    dims = tuple(sorted(int(d) % out_ndim for d in dimensions))
    return sh.expand_dims_p.bind(x, dimensions=dims)


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001
    return sh.slice_p.bind(
        x,
        start_indices=tuple(map(int, start_indices)),
        limit_indices=tuple(map(int, limit_indices)),
        strides=None if strides is None else tuple(map(int, strides)),
    )


def _index_scalars(indices):
    avals = [aval_of(i) for i in indices]
    dtype = next((a.dtype for a in avals if not a.weak_type), dtypes.int32)
    return [
        convert_element_type(i, dtype)
        if aval_of(i).dtype != dtype or aval_of(i).weak_type
        else i
        for i in indices
    ]


def dynamic_slice(x, start_indices, slice_sizes):
    return sh.dynamic_slice_p.bind(
        x,
        *_index_scalars(start_indices),
        slice_sizes=tuple(int(s) for s in slice_sizes),
    )


def dynamic_update_slice(x, update, start_indices):
    return sh.dynamic_update_slice_p.bind(x, update, *_index_scalars(start_indices))


def dynamic_slice_in_dim(x, start_index, slice_size: int, axis: int = 0):
    """`dynamic_slice` along one axis (the others taken whole), as in JAX."""
    shape = aval_of(x).shape
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_update_slice_in_dim(x, update, start_index, axis: int):
    """`dynamic_update_slice` at `start_index` along one axis, as in JAX."""
    starts = [0] * len(aval_of(x).shape)
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def concatenate(operands, dimension: int):
    return sh.concatenate_p.bind(*operands, dimension=int(dimension))


def pad(x, padding_value, padding_config):
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return sh.pad_p.bind(*_match_scalars(x, padding_value), padding_config=config)


def iota(dtype, size: int):
    return sh.iota_p.bind(
        dtype=dtypes.canonicalize_dtype(dtype), shape=(int(size),), dimension=0
    )


def broadcasted_iota(dtype, shape: Sequence[int], dimension: int):
    return sh.iota_p.bind(
        dtype=dtypes.canonicalize_dtype(dtype),
        shape=tuple(map(int, shape)),
        dimension=int(dimension),
    )


def full(shape: Sequence[int], fill_value, dtype=None):
    """An array of `shape` filled with `fill_value` (a broadcast scalar)."""
    shape = tuple(int(d) for d in shape)
    concrete = isinstance(fill_value, (*_PY_SCALARS, np.generic, np.ndarray))
    if concrete:  # converted on the host, so the IR shows a literal
        fill_dtype = (
            aval_of(fill_value).dtype
            if dtype is None
            else dtypes.canonicalize_dtype(dtype)
        )
        fill_value = np.asarray(fill_value, dtype=fill_dtype)[()]
    elif dtype is not None:
        fill_value = convert_element_type(fill_value, dtype)
    return broadcast_in_dim(fill_value, shape, ())


# ---- reductions and contractions ---------------------------------------------
def _reducer(prim):
    def op(x, axes: Sequence[int]):
        return prim.bind(x, axes=tuple(int(a) for a in axes))

    op.__name__ = prim.name
    return op


reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or = map(
    _reducer,
    (
        red.reduce_sum_p,
        red.reduce_prod_p,
        red.reduce_max_p,
        red.reduce_min_p,
        red.reduce_and_p,
        red.reduce_or_p,
    ),
)
reduce_xor = _reducer(red.reduce_xor_p)


def argmax(x, axis: int, index_dtype):
    return red.argmax_p.bind(
        x, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype)
    )


def argmin(x, axis: int, index_dtype):
    return red.argmin_p.bind(
        x, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype)
    )


def dot_general(
    lhs,
    rhs,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    *,
    out_sharding=None,
):
    """Contracts `lhs` and `rhs`: dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); output dims are batch, lhs free, rhs free.
    `precision` (a lax.Precision, its name, "float32", ..., or a pair) becomes
    XLA's precision config, also on the matmuls of its derivatives;
    `out_sharding` (JAX's; flax.nnx passes None) lays the result out."""
    if out_sharding is not None:
        from olympus.lax import sharding

        out = dot_general(
            lhs, rhs, dimension_numbers, precision, preferred_element_type
        )
        named = sharding.named_sharding_of(out_sharding, "lax.dot_general")
        named = sharding.spelled_for_rank(named, len(out.shape))
        return sharding.sharding_constraint_p.bind(out, sharding=named)
    dn = _dimension_numbers(dimension_numbers)
    pet = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize_dtype(preferred_element_type)
    )
    prec = red.canonical_precision(precision, "lax.dot_general")
    return red.dot_general_p.bind(
        lhs, rhs, dimension_numbers=dn, precision=prec, preferred_element_type=pet
    )


_DIMENSION_NUMBERS: dict = {}  # dimension_numbers as given -> as Python ints


def _dimension_numbers(dimension_numbers) -> tuple:
    """dot_general's dimension numbers as tuples of ints, cached for hashable
    ones (an eager matmul's latency is measured)."""
    try:
        return _DIMENSION_NUMBERS[dimension_numbers]
    except (KeyError, TypeError):
        pass
    (lc, rc), (lb, rb) = dimension_numbers
    dn = (
        (tuple(map(int, lc)), tuple(map(int, rc))),
        (tuple(map(int, lb)), tuple(map(int, rb))),
    )
    try:
        if len(_DIMENSION_NUMBERS) < 1024:
            _DIMENSION_NUMBERS[dimension_numbers] = dn
    except TypeError:  # lists: not cached
        pass
    return dn


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product contracting the last axis of lhs with the first of rhs."""
    lhs_nd = aval_of(lhs).ndim
    return dot_general(
        lhs, rhs, (((lhs_nd - 1,), (0,)), ((), ())), precision, preferred_element_type
    )


def rev(x, dimensions: Sequence[int]):
    """Reverses `x` along `dimensions`."""
    return sh.rev_p.bind(x, dimensions=tuple(int(d) for d in dimensions))
