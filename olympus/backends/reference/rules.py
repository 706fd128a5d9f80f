"""NumPy semantics of the elementwise, bit, shape, reduction and sub-program
primitives (linalg.py, slicing.py and windowed.py hold the other families).

A rule takes the operands as NumPy arrays and the equation's params as
keywords, and returns an array (or a list, for multiple-result primitives).
The interpreter casts each result to the dtype the program declares, so a
rule may let NumPy promote; shapes it must get right. Semantics follow
StableHLO where NumPy differs: integer division truncates, shifts by the bit
width or more give 0 (or the sign), out-of-range dynamic slice starts clamp.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from olympus.backends.reference.table import reference_rules, rule
from olympus.ir import dtypes


# ---- elementwise ------------------------------------------------------------------
_UNARY = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "expm1": np.expm1,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sqrt": np.sqrt,
    "floor": np.floor,
    "ceil": np.ceil,
    "abs": np.abs,
    "real": np.real,
    "imag": np.imag,
    "stop_gradient": lambda x: x,
}
rule("name")(lambda x, *, name: x)  # checkpoint_name's tag: the value itself
rule("hint")(lambda x, **hints: x)  # olympus.hint: the value itself
for _name, _fn in _UNARY.items():
    reference_rules[_name] = _fn

rule("logistic")(lambda x: 1 / (1 + np.exp(-x)))
rule("rsqrt")(lambda x: 1 / np.sqrt(x))
rule("erf")(lambda x: np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x)
rule("not")(lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x))


@rule("sign")
def _sign(x):
    if np.issubdtype(x.dtype, np.complexfloating):
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
    if np.issubdtype(x.dtype, np.unsignedinteger):
        return (x != 0).astype(x.dtype)
    return np.sign(x)


@rule("round")
def _round(x, *, rounding_method):
    to_even = np.round(x)
    if rounding_method == 1:
        return to_even
    halfway = np.abs(x - np.trunc(x)) == 0.5
    return np.where(halfway, np.trunc(x) + np.sign(x), to_even)


@rule("integer_pow")
def _integer_pow(x, *, y):
    """Square-and-multiply, as the lowering does (the same rounding, and
    `x * x` for a square is several times faster than `np.power`)."""
    if x.dtype == np.bool_:
        return x
    if y == 0:
        return np.ones_like(x)
    if y == 1:
        return x.copy()  # a value of its own, as every rule's result
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if n:
            base = base * base
    return result if y > 0 else np.asarray(1, x.dtype) / result


_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
    "atan2": np.arctan2,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
for _name, _fn in _BINARY.items():
    reference_rules[_name] = _fn


@rule("div")
def _div(x, y):
    if not np.issubdtype(x.dtype, np.integer):
        return np.true_divide(x, y)
    safe = np.where(
        y == 0, 1, y
    )  # integer division by zero: all bits set, as XLA's CPU
    quotient = np.abs(x.astype(np.int64)) // np.abs(safe.astype(np.int64))
    signed = np.where((x < 0) != (safe < 0), -quotient, quotient)
    return np.where(y == 0, -1, signed).astype(x.dtype)


@rule("rem")
def _rem(x, y):
    if np.issubdtype(x.dtype, np.integer):
        safe = np.where(y == 0, 1, y)
        return np.where(y == 0, x, np.fmod(x, safe))
    return np.fmod(x, y)


@rule("pow")
def _pow(x, y):
    return np.power(x, y)


@rule("complex")
def _complex(x, y):
    # Filled part by part: x + 1j * y would turn an imaginary -0 into +0 and an
    # infinite imaginary part into a nan real part (0 * inf).
    dtype = np.complex128 if x.dtype == np.float64 else np.complex64
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), dtype)
    out.real, out.imag = x, y
    return out


@rule("select_n")
def _select_n(which, *cases):
    if which.dtype == np.bool_:
        which = which.astype(np.int32)
    # Out-of-range indices take the nearest case, as JAX's lowering (a binary
    # search with `which < mid`).
    which = np.clip(which, 0, len(cases) - 1)
    out = np.broadcast_to(cases[-1], cases[0].shape)
    for i in range(len(cases) - 2, -1, -1):
        out = np.where(which == i, cases[i], out)
    return out


@rule("clamp")
def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


@rule("convert_element_type")
def _convert(x, *, new_dtype, weak_type):
    new_dtype = np.dtype(new_dtype)
    if np.issubdtype(x.dtype, np.complexfloating) and not np.issubdtype(
        new_dtype, np.complexfloating
    ):
        x = np.real(x)
    if new_dtype == np.bool_:
        return x != 0
    if _is_real_float(x.dtype) and np.issubdtype(new_dtype, np.integer):
        return _saturating_to_int(x, new_dtype)
    return x.astype(new_dtype)


def _is_real_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == dtypes.bfloat16


def _saturating_to_int(x, new_dtype):
    """Float to int as XLA converts: toward zero, NaN to 0, and values beyond
    the type's range to its min or max (NumPy's cast would wrap or be undefined)."""
    info = np.iinfo(new_dtype)
    wide = np.trunc(x.astype(np.float64))  # every narrower float is exact in float64
    wide = np.where(np.isnan(wide), 0.0, wide)
    high, low = wide >= float(info.max), wide <= float(info.min)
    inside = np.where(high | low, 0.0, wide).astype(new_dtype)
    return np.where(high, info.max, np.where(low, info.min, inside)).astype(new_dtype)


# ---- bits -------------------------------------------------------------------------
def _unsigned(dtype):
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def _out_of_range(y, bits: int):
    return (y < 0) | (y >= bits)


def _logical_shift(np_shift):
    """A shift on the unsigned bits; an amount outside [0, bits) gives 0, as in XLA."""

    def shift(x, y):
        bits = x.dtype.itemsize * 8
        u = x.astype(_unsigned(x.dtype))
        amount = np.where(_out_of_range(y, bits), 0, y).astype(u.dtype)
        shifted = np_shift(u, amount).astype(x.dtype)
        return np.where(_out_of_range(y, bits), 0, shifted).astype(x.dtype)

    return shift


rule("shift_left")(_logical_shift(np.left_shift))
rule("shift_right_logical")(_logical_shift(np.right_shift))


@rule("shift_right_arithmetic")
def _shift_right_arithmetic(x, y):
    bits = x.dtype.itemsize * 8
    signed = x.astype(np.dtype(f"i{x.dtype.itemsize}"))
    amount = np.where(_out_of_range(y, bits), bits - 1, y).astype(signed.dtype)
    return np.right_shift(signed, amount).astype(x.dtype)


@rule("bitcast_convert_type")
def _bitcast(x, *, new_dtype):
    return np.ascontiguousarray(x).view(np.dtype(new_dtype))


@rule("population_count")
def _population_count(x):
    """Set bits of the two's complement representation, counted per byte."""
    u = np.array(x, dtype=_unsigned(x.dtype), order="C")
    as_bytes = u.reshape(*u.shape, 1).view(np.uint8)  # one row of bytes per element
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1).astype(x.dtype)


@rule("reduce_precision")
def _reduce_precision(x, *, exponent_bits, mantissa_bits):
    """Computed on values, not bits: x rounded to nearest-even at
    `mantissa_bits` below its leading bit (x's own subnormals at its smallest
    normal exponent, where XLA's bit rounding puts them); if the exponent
    range narrows, magnitudes past its largest binade become inf and those
    below its smallest normal number signed zeros (XLA keeps no subnormals).
    """
    info = ml_dtypes.finfo(x.dtype)
    v = x.astype(np.float64)
    out = v
    if mantissa_bits < info.nmant:
        finite = np.isfinite(v) & (v != 0)
        _, exp = np.frexp(np.where(finite, v, 1.0))
        quantum = np.ldexp(1.0, np.maximum(exp - 1, info.minexp) - mantissa_bits)
        out = np.where(finite, np.round(v / quantum) * quantum, v)
    if exponent_bits < x.dtype.itemsize * 8 - 1 - info.nmant:
        bias = 2 ** (exponent_bits - 1) - 1
        magnitude = np.abs(out)
        out = np.where(magnitude >= 2.0 ** (bias + 1), np.copysign(np.inf, out), out)
        out = np.where(magnitude < 2.0 ** (1 - bias), np.copysign(0.0, out), out)
    return np.where(np.isnan(v), v, out)


@rule("clz")
def _clz(x):
    """Leading zero bits: the width minus the bit length of the unsigned view."""
    bits = x.dtype.itemsize * 8
    u = np.array(x, dtype=_unsigned(x.dtype), order="C").astype(np.uint64)
    length = np.zeros(u.shape, np.int64)
    for shift in range(bits):
        length = np.where(u >> np.uint64(shift) != 0, shift + 1, length)
    return (bits - length).astype(x.dtype)


rule("cbrt")(np.cbrt)
rule("is_finite")(np.isfinite)


# ---- shapes -----------------------------------------------------------------------
@rule("broadcast_in_dim")
def _broadcast_in_dim(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), tuple(shape))


@rule("reshape")
def _reshape(x, *, new_sizes, dimensions=None):
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, tuple(new_sizes))


rule("transpose")(lambda x, *, permutation: np.transpose(x, permutation))
rule("squeeze")(lambda x, *, dimensions: np.squeeze(x, axis=tuple(dimensions)))
rule("expand_dims")(lambda x, *, dimensions: np.expand_dims(x, tuple(dimensions)))
rule("rev")(
    lambda x, *, dimensions: np.flip(x, axis=tuple(dimensions)) if dimensions else x
)
rule("concatenate")(lambda *xs, dimension: np.concatenate(xs, axis=dimension))


@rule("slice")
def _slice(x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[
        tuple(
            slice(lo, hi, st)
            for lo, hi, st in zip(start_indices, limit_indices, strides)
        )
    ]


def _clamped_starts(indices, shape, sizes) -> list[int]:
    return [int(min(max(int(i), 0), d - s)) for i, d, s in zip(indices, shape, sizes)]


@rule("dynamic_slice")
def _dynamic_slice(x, *indices, slice_sizes):
    starts = _clamped_starts(indices, x.shape, slice_sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


@rule("dynamic_update_slice")
def _dynamic_update_slice(x, update, *indices):
    starts = _clamped_starts(indices, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return out


@rule("pad")
def _pad(x, padding_value, *, padding_config):
    for axis, (lo, hi, interior) in enumerate(padding_config):
        x = _pad_axis(x, padding_value, axis, lo, hi, interior)
    return x


def _pad_axis(x, value, axis: int, lo: int, hi: int, interior: int):
    """Interior padding first, then edge padding (negative edges crop)."""
    n = x.shape[axis]
    size = n + max(n - 1, 0) * interior
    spread = np.full(x.shape[:axis] + (size,) + x.shape[axis + 1 :], value, x.dtype)
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, size, interior + 1)
    spread[tuple(index)] = x
    edge = [(0, 0)] * x.ndim
    edge[axis] = (max(lo, 0), max(hi, 0))
    padded = np.pad(spread, edge, constant_values=value)
    index[axis] = slice(max(-lo, 0), padded.shape[axis] - max(-hi, 0))
    return padded[tuple(index)]


@rule("iota")
def _iota(*, dtype, shape, dimension):
    counts = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(counts.reshape(expanded), tuple(shape))


# ---- reductions -------------------------------------------------------------------
def _identity(kind: str, dtype):
    dtype = np.dtype(dtype)
    if kind in ("sum", "or", "xor"):
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if kind == "and":
        return np.array(True) if dtype == np.bool_ else np.invert(np.zeros((), dtype))
    if dtype == np.bool_:
        return np.array(kind == "min")
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.array(info.min if kind == "max" else info.max, dtype)
    return np.array(
        dtypes.float_lowest(dtype) if kind == "max" else dtypes.float_highest(dtype)
    )


def _reduction(kind: str, ufunc, bool_ufunc=None):
    def reduce(x, *, axes):
        fn = bool_ufunc if (bool_ufunc is not None and x.dtype == np.bool_) else ufunc
        return fn.reduce(x, axis=tuple(axes), initial=_identity(kind, x.dtype)[()])

    return reduce


reference_rules["reduce_sum"] = _reduction("sum", np.add, np.logical_or)
reference_rules["reduce_prod"] = _reduction("prod", np.multiply, np.logical_and)
reference_rules["reduce_max"] = _reduction("max", np.maximum, np.logical_or)
reference_rules["reduce_min"] = _reduction("min", np.minimum, np.logical_and)
reference_rules["reduce_and"] = _reduction("and", np.bitwise_and, np.logical_and)
reference_rules["reduce_or"] = _reduction("or", np.bitwise_or, np.logical_or)
reference_rules["reduce_xor"] = _reduction("xor", np.bitwise_xor, np.logical_xor)


def _arg_reduction(pick):
    """NumPy's argmax/argmin: first index on ties, NaN wins (as in the lowering)."""

    def reduce(x, *, axes, index_dtype):
        return pick(x, axis=axes[0]).astype(index_dtype)

    return reduce


reference_rules["argmax"] = _arg_reduction(np.argmax)
reference_rules["argmin"] = _arg_reduction(np.argmin)


@rule("dot_general")
def _dot_general(
    lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None
):
    """One einsum: batch dims, then lhs free dims, then rhs free dims."""
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        rhs_sub[b] = lhs_sub[a]
    batch = [lhs_sub[d] for d in lb]
    lhs_free = [s for i, s in enumerate(lhs_sub) if i not in lc and i not in lb]
    rhs_free = [s for i, s in enumerate(rhs_sub) if i not in rc and i not in rb]
    spec = (
        f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(batch + lhs_free + rhs_free)}"
    )
    dtype = (
        np.dtype(preferred_element_type)
        if preferred_element_type is not None
        else lhs.dtype
    )
    if dtype == np.bool_:
        return np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
    return np.einsum(spec, lhs.astype(dtype), rhs.astype(dtype))


# ---- sub-programs -----------------------------------------------------------------
# cond, while, scan, pjit, checkpoint and the custom-derivative calls are
# evaluated by the loop itself (olympus/ir/evaluation.py `program_rules`),
# their bodies with the caller's rules.
@rule("custom_lin")
def _custom_lin(*args, name, **params):
    """A custom_vjp's tangent map exists only to be transposed (its bwd is the
    rule); evaluating it forward is the same error as the eager primitive's."""
    raise TypeError(
        f"forward-mode differentiation of the custom_vjp function {name} "
        f"has no value: it only has a reverse-mode rule"
    )


@rule("optimization_barrier")
def _optimization_barrier(*args):
    return list(args)


@rule("sharding_constraint")
def _sharding_constraint(x, *, sharding):
    return x  # a layout request: the values are unchanged


@rule("fft")
def _fft(x, *, fft_type, fft_lengths):
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes).astype(x.dtype)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes).astype(x.dtype)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes).astype(np.result_type(x.dtype, np.complex64))
    real = np.float32 if x.dtype == np.complex64 else np.float64
    return np.fft.irfftn(x, s=fft_lengths, axes=axes).astype(real)
