"""The conv_general_dilated primitive: an N-d convolution with window
strides, explicit padding, lhs (input) and rhs (kernel) dilation and feature
groups, in any dimension layout.

Dimension numbers are `(lhs_spec, rhs_spec, out_spec)`: lhs_spec lists the
input's batch axis, feature axis, then spatial axes; rhs_spec the kernel's
output-feature axis, input-feature axis, then spatial axes; out_spec like
lhs_spec. Both transposes are convolutions again (the derivative of a
strided convolution is an lhs-dilated one, and vice versa).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from olympus.backends.xla.lowering import i64_array
from olympus.ir.core import ShapedArray
from olympus.lax.base import define_primitive, same_dtypes
from olympus.lax.elementwise import add_p
from olympus.lax.shapes import concatenate_p, reshape_p, rev_p, slice_p
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, batch_to_front
from olympus.transforms.jvp import Zero, instantiate, is_zero, jvp_rules
from olympus.transforms.linearize import is_undefined, transpose_rules


class ConvDimensionNumbers(NamedTuple):
    """Where batch/feature/spatial axes sit in the input, kernel and output."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def default_dimension_numbers(ndim: int) -> ConvDimensionNumbers:
    """NCHW input, OIHW kernel, NCHW output (JAX's default)."""
    spec = tuple(range(ndim))
    return ConvDimensionNumbers(spec, spec, spec)


def _dilate(sizes, dilation):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(sizes, dilation))


def _conv_abstract_eval(lhs: ShapedArray, rhs: ShapedArray, *, window_strides, padding,
                        lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count):
    dtype = same_dtypes("conv_general_dilated", (lhs, rhs))
    lspec, rspec, ospec = dimension_numbers
    if lhs.ndim != rhs.ndim or lhs.ndim < 3 or len(window_strides) != lhs.ndim - 2:
        raise OlympusTypeError(
            f"conv_general_dilated: input {lhs.str_short()} and kernel {rhs.str_short()} need "
            f"one rank >= 3 and one stride per spatial axis, got strides {window_strides}")
    groups = feature_group_count
    if lhs.shape[lspec[1]] != rhs.shape[rspec[1]] * groups or rhs.shape[rspec[0]] % groups:
        raise OlympusTypeError(
            f"conv_general_dilated: input features {lhs.shape[lspec[1]]} must be kernel input "
            f"features {rhs.shape[rspec[1]]} x feature_group_count {groups}, and kernel "
            f"output features {rhs.shape[rspec[0]]} divisible by it")
    in_sizes = _dilate([lhs.shape[d] for d in lspec[2:]], lhs_dilation)
    window = _dilate([rhs.shape[d] for d in rspec[2:]], rhs_dilation)
    spatial = [max(0, (i + lo + hi - w) // s + 1) if i + lo + hi >= w else 0
               for i, (lo, hi), w, s in zip(in_sizes, padding, window, window_strides)]
    out = [0] * lhs.ndim
    out[ospec[0]], out[ospec[1]] = lhs.shape[lspec[0]], rhs.shape[rspec[0]]
    for d, size in zip(ospec[2:], spatial):
        out[d] = size
    return ShapedArray(tuple(out), dtype)


def _layout(spec, names) -> str:
    letters = [""] * len(spec)
    for d, name in zip(spec, names):
        letters[d] = name
    for i, d in enumerate(spec[2:]):
        letters[d] = str(i)
    return f"[{', '.join(letters)}]"


def _conv_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count):
    lspec, rspec, ospec = dimension_numbers
    layout = (f"{_layout(lspec, 'bf')}x{_layout(rspec, 'oi')}->{_layout(ospec, 'bf')}")
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    attrs = (f"batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<{layout}>, "
             f"feature_group_count = {feature_group_count} : i64, "
             f"lhs_dilation = {i64_array(lhs_dilation)}, "
             f"padding = dense<[{pads}]> : tensor<{len(padding)}x2xi64>, "
             f"rhs_dilation = {i64_array(rhs_dilation)}, "
             f"window_strides = {i64_array(window_strides)}")
    return ctx.op("stablehlo.convolution", [lhs, rhs], attrs)


conv_general_dilated_p = define_primitive("conv_general_dilated", _conv_abstract_eval,
                                          _conv_lower)


# ---- jvp and transposes ----------------------------------------------------------
def _conv_jvp(primals, tangents, **params):
    """Bilinear: d(lhs * rhs) = t_lhs * rhs + lhs * t_rhs."""
    lhs, rhs = primals
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    t_out = Zero(aval_of(out))
    if not is_zero(tangents[0]):
        t_out = conv_general_dilated_p.bind(instantiate(tangents[0]), rhs, **params)
    if not is_zero(tangents[1]):
        t_rhs = conv_general_dilated_p.bind(lhs, instantiate(tangents[1]), **params)
        t_out = t_rhs if is_zero(t_out) else add_p.bind(t_out, t_rhs)
    return out, t_out


def _swap_first_two(spec):
    return (spec[1], spec[0], *spec[2:])


def _lhs_padding(in_sizes, window, strides, out_sizes, padding, lhs_dilation, rhs_dilation):
    lhs_d = _dilate(in_sizes, lhs_dilation)
    rhs_d = _dilate(window, rhs_dilation)
    out_d = _dilate(out_sizes, strides)
    before = [w - lo - 1 for w, (lo, _) in zip(rhs_d, padding)]
    after = [i + w - 1 - o - b for i, w, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _rhs_padding(in_sizes, window, strides, out_sizes, padding, lhs_dilation, rhs_dilation):
    lhs_d = _dilate(in_sizes, lhs_dilation)
    rhs_d = _dilate(window, rhs_dilation)
    out_d = _dilate(out_sizes, strides)
    return tuple((lo, (o - i) + (w - lo - 1))
                 for i, w, o, (lo, _) in zip(lhs_d, rhs_d, out_d, padding))


def _refuse_groups(feature_group_count, eqn_part: str):
    if feature_group_count != 1:
        raise TypeError(f"conv_general_dilated: the {eqn_part} transpose supports "
                        f"feature_group_count=1 only, got {feature_group_count}")


def _conv_transpose(ct, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                    dimension_numbers, feature_group_count):
    lspec, rspec, ospec = dimension_numbers
    ct = instantiate(ct)
    ct_lhs = ct_rhs = None
    if is_undefined(lhs):
        lhs_shape, rhs_shape = lhs.aval.shape, aval_of(rhs).shape
        pads = _lhs_padding([lhs_shape[d] for d in lspec[2:]], [rhs_shape[d] for d in rspec[2:]],
                            window_strides, [aval_of(ct).shape[d] for d in ospec[2:]], padding,
                            lhs_dilation, rhs_dilation)
        flipped = rev_p.bind(rhs, dimensions=tuple(rspec[2:]))
        flipped = _regroup_kernel(flipped, rspec, feature_group_count)
        ct_lhs = conv_general_dilated_p.bind(
            ct, flipped, window_strides=tuple(lhs_dilation), padding=pads,
            lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
            dimension_numbers=ConvDimensionNumbers(ospec, _swap_first_two(rspec), lspec),
            feature_group_count=feature_group_count)
        ct_lhs = _fit(ct_lhs, lhs_shape)
    if is_undefined(rhs):
        _refuse_groups(feature_group_count, "kernel")
        lhs_shape, rhs_shape = aval_of(lhs).shape, rhs.aval.shape
        pads = _rhs_padding([lhs_shape[d] for d in lspec[2:]], [rhs_shape[d] for d in rspec[2:]],
                            window_strides, [aval_of(ct).shape[d] for d in ospec[2:]], padding,
                            lhs_dilation, rhs_dilation)
        ct_rhs = conv_general_dilated_p.bind(
            lhs, ct, window_strides=tuple(rhs_dilation), padding=pads,
            lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
            dimension_numbers=ConvDimensionNumbers(
                _swap_first_two(lspec), _swap_first_two(ospec), _swap_first_two(rspec)),
            feature_group_count=1)
        ct_rhs = _fit(ct_rhs, rhs_shape)
    return [ct_lhs, ct_rhs]


def _regroup_kernel(rhs, rspec, groups: int):
    """The kernel of the input transpose with feature groups: output features
    (G*Og) become Og input features and the input features I become G*I
    output features, group-major, so each group maps back to its inputs."""
    if groups == 1:
        return rhs
    from olympus.lax.shapes import transpose_p

    shape = aval_of(rhs).shape
    perm = (rspec[0], rspec[1], *rspec[2:])
    spatial = tuple(shape[d] for d in rspec[2:])
    out_f, in_f = shape[rspec[0]], shape[rspec[1]]
    k = transpose_p.bind(rhs, permutation=perm)
    k = reshape_p.bind(k, new_sizes=(groups, out_f // groups, in_f, *spatial), dimensions=None)
    k = transpose_p.bind(k, permutation=(1, 0, *range(2, len(shape) + 1)))
    k = reshape_p.bind(k, new_sizes=(out_f // groups, groups * in_f, *spatial), dimensions=None)
    inverse = tuple(int(i) for i in sorted(range(len(perm)), key=perm.__getitem__))
    return transpose_p.bind(k, permutation=inverse)


def _fit(x, shape):
    """Strided convolutions can leave trailing positions no window reached:
    the transpose then comes out short or long by a few entries; cut to size."""
    have = aval_of(x).shape
    if have == tuple(shape):
        return x
    if all(h >= s for h, s in zip(have, shape)):
        return slice_p.bind(x, start_indices=(0,) * len(shape), limit_indices=tuple(shape),
                            strides=None)
    raise TypeError(f"conv_general_dilated transpose: cotangent {have} does not cover {shape}")


jvp_rules[conv_general_dilated_p] = _conv_jvp
transpose_rules[conv_general_dilated_p] = _conv_transpose


# ---- batching --------------------------------------------------------------------
def _conv_batch_rule(axis_size, vals, dims, **params):
    """A batched input alone folds into the convolution's batch axis; a
    batched kernel runs one convolution per example (concatenated)."""
    (lhs, rhs), (l_bdim, r_bdim) = vals, dims
    lspec, _, ospec = params["dimension_numbers"]
    if r_bdim is None:
        lhs = batch_to_front(lhs, axis_size, l_bdim)
        shape = aval_of(lhs).shape
        n_axis = lspec[0] + 1
        moved = _move_axis(lhs, 0, n_axis - 1)
        merged = list(aval_of(moved).shape)
        merged[n_axis - 1:n_axis + 1] = [axis_size * shape[n_axis]]
        out = conv_general_dilated_p.bind(
            reshape_p.bind(moved, new_sizes=tuple(merged), dimensions=None), rhs, **params)
        out_shape = list(aval_of(out).shape)
        out_shape[ospec[0]:ospec[0] + 1] = [axis_size, out_shape[ospec[0]] // axis_size]
        return reshape_p.bind(out, new_sizes=tuple(out_shape), dimensions=None), ospec[0]
    lhs = batch_to_front(lhs, axis_size, l_bdim) if l_bdim is not None else None
    rhs = batch_to_front(rhs, axis_size, r_bdim)
    outs = []
    for i in range(axis_size):
        lhs_i = vals[0] if lhs is None else _example(lhs, i)
        out = conv_general_dilated_p.bind(lhs_i, _example(rhs, i), **params)
        outs.append(reshape_p.bind(out, new_sizes=(1, *aval_of(out).shape), dimensions=None))
    return concatenate_p.bind(*outs, dimension=0), 0


def _example(x, i: int):
    shape = aval_of(x).shape
    one = slice_p.bind(x, start_indices=(i,) + (0,) * (len(shape) - 1),
                       limit_indices=(i + 1, *shape[1:]), strides=None)
    return reshape_p.bind(one, new_sizes=shape[1:], dimensions=None)


def _move_axis(x, src: int, dst: int):
    from olympus.lax.shapes import transpose_p

    order = [d for d in range(aval_of(x).ndim) if d != src]
    order.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(order))


batch_rules[conv_general_dilated_p] = _conv_batch_rule


# ---- public function -------------------------------------------------------------
def _padding(padding, lhs_shape, rhs_shape, strides, dn: ConvDimensionNumbers, rhs_dilation):
    """'SAME' / 'VALID' or explicit (lo, hi) pairs."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    if padding.upper() == "VALID":
        return ((0, 0),) * len(strides)
    pads = []
    for i, s in enumerate(strides):
        size = lhs_shape[dn.lhs_spec[2 + i]]
        window = _dilate([rhs_shape[dn.rhs_spec[2 + i]]], [rhs_dilation[i]])[0]
        out = -(-size // s)
        total = max((out - 1) * s + window - size, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding,
                         lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                         feature_group_count: int = 1):
    """N-d convolution (cross-correlation, as in XLA and JAX).

    `padding` is 'SAME', 'VALID' or one (lo, hi) pair per spatial axis;
    `dimension_numbers` a ConvDimensionNumbers (default NCHW / OIHW / NCHW).

    >>> conv_general_dilated(x, w, (1, 1), "SAME")  # x: [N, C, H, W], w: [O, C, kh, kw]
    """
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    n = len(lhs_shape) - 2
    dn = dimension_numbers or default_dimension_numbers(len(lhs_shape))
    dn = ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dn))
    strides = tuple(int(s) for s in window_strides)
    lhs_dilation = tuple(lhs_dilation or (1,) * n)
    rhs_dilation = tuple(rhs_dilation or (1,) * n)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides,
        padding=_padding(padding, lhs_shape, rhs_shape, strides, dn, rhs_dilation),
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=int(feature_group_count))


