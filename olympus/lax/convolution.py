"""The conv_general_dilated primitive: an N-d convolution with window
strides, explicit padding, lhs (input) and rhs (kernel) dilation, feature
groups and batch groups, in any dimension layout.

Dimension numbers are `(lhs_spec, rhs_spec, out_spec)`: lhs_spec lists the
input's batch axis, feature axis, then spatial axes; rhs_spec the kernel's
output-feature axis, input-feature axis, then spatial axes; out_spec like
lhs_spec. Both transposes are convolutions again (the derivative of a
strided convolution is an lhs-dilated one, and vice versa), and the two kinds
of grouping trade places under the kernel transpose: feature groups of the
forward convolution become batch groups of its kernel gradient, and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from olympus.backends.xla.lowering import i64_array
from olympus.ir import dtypes
from olympus.ir.core import ShapedArray, register_param_type
from olympus.lax.base import define_primitive, same_dtypes
from olympus.lax.elementwise import add_p
from olympus.lax.ops import convert_element_type
from olympus.lax.reductions import canonical_precision, precision_attr
from olympus.lax.shapes import reshape_p, rev_p, slice_p, transpose_p
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.transforms.batching import batch_rules, batch_to_front
from olympus.transforms.ad_util import Zero, instantiate, is_zero
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import is_undefined, transpose_rules


@register_param_type
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


class ConvParams(NamedTuple):
    """conv_general_dilated's params, as its shape rule and lowering read them
    (`ConvParams(**params)`)."""

    window_strides: tuple
    padding: tuple
    lhs_dilation: tuple
    rhs_dilation: tuple
    dimension_numbers: ConvDimensionNumbers
    feature_group_count: int
    batch_group_count: int
    precision: object = None


def _check_groups(lhs: ShapedArray, rhs: ShapedArray, p: ConvParams) -> None:
    """StableHLO's grouping constraints, as one readable error each."""
    lspec, rspec, _ = p.dimension_numbers
    groups, batch_groups = p.feature_group_count, p.batch_group_count
    in_f, out_f = rhs.shape[rspec[1]], rhs.shape[rspec[0]]
    where = f"conv_general_dilated (input {lhs.str_short()}, kernel {rhs.str_short()})"
    if groups < 1 or batch_groups < 1 or (groups > 1 and batch_groups > 1):
        raise OlympusTypeError(
            f"{where}: feature_group_count {groups} and batch_group_count {batch_groups} "
            f"must be positive and at least one of them 1"
        )
    if lhs.shape[lspec[1]] != in_f * groups or out_f % groups:
        raise OlympusTypeError(
            f"{where}: input features {lhs.shape[lspec[1]]} must be kernel input "
            f"features {in_f} x feature_group_count {groups}, and kernel "
            f"output features {out_f} divisible by it"
        )
    if lhs.shape[lspec[0]] % batch_groups or out_f % batch_groups:
        raise OlympusTypeError(
            f"{where}: input batch {lhs.shape[lspec[0]]} and kernel output features "
            f"{out_f} must both be divisible by batch_group_count {batch_groups}"
        )


def _conv_abstract_eval(lhs: ShapedArray, rhs: ShapedArray, **params):
    p = ConvParams(**params)
    dtype = same_dtypes("conv_general_dilated", (lhs, rhs))
    lspec, rspec, ospec = p.dimension_numbers
    strides = p.window_strides
    if lhs.ndim != rhs.ndim or lhs.ndim < 3 or len(strides) != lhs.ndim - 2:
        raise OlympusTypeError(
            f"conv_general_dilated: input {lhs.str_short()} and kernel {rhs.str_short()} need "
            f"one rank >= 3 and one stride per spatial axis, got strides {strides}"
        )
    _check_groups(lhs, rhs, p)
    in_sizes = _dilate([lhs.shape[d] for d in lspec[2:]], p.lhs_dilation)
    window = _dilate([rhs.shape[d] for d in rspec[2:]], p.rhs_dilation)
    spatial = [
        max(0, (i + lo + hi - w) // s + 1) if i + lo + hi >= w else 0
        for i, (lo, hi), w, s in zip(in_sizes, p.padding, window, strides)
    ]
    out = [0] * lhs.ndim
    out[ospec[0]] = lhs.shape[lspec[0]] // p.batch_group_count
    out[ospec[1]] = rhs.shape[rspec[0]]
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


def _conv_lower(ctx, lhs, rhs, **params):
    p = ConvParams(**params)
    lspec, rspec, ospec = p.dimension_numbers
    layout = f"{_layout(lspec, 'bf')}x{_layout(rspec, 'oi')}->{_layout(ospec, 'bf')}"
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in p.padding)
    attrs = (
        f"batch_group_count = {p.batch_group_count} : i64, "
        f"dimension_numbers = #stablehlo.conv<{layout}>, "
        f"feature_group_count = {p.feature_group_count} : i64, "
        f"lhs_dilation = {i64_array(p.lhs_dilation)}, "
        f"padding = dense<[{pads}]> : tensor<{len(p.padding)}x2xi64>, "
        f"rhs_dilation = {i64_array(p.rhs_dilation)}, "
        f"window_strides = {i64_array(p.window_strides)}"
    )
    return ctx.op(
        "stablehlo.convolution", [lhs, rhs], attrs + precision_attr(p.precision)
    )


conv_general_dilated_p = define_primitive(
    "conv_general_dilated", _conv_abstract_eval, _conv_lower
)


# ---- axis regrouping shared by the transposes and the batching rule ---------------
def _permute(x, perm):
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return transpose_p.bind(x, permutation=perm)


def _reshape(x, shape):
    shape = tuple(int(s) for s in shape)
    if aval_of(x).shape == shape:
        return x
    return reshape_p.bind(x, new_sizes=shape, dimensions=None)


def _merge_axis_into(x, src: int, dst: int, groups: int):
    """Removes axis `src` (size S) of x, growing axis `dst` (size groups*m) to
    groups*S*m, laid out (group, src index, m): each of the `groups` blocks
    of `dst` keeps its identity, now S times wider."""
    shape = aval_of(x).shape
    others = [d for d in range(len(shape)) if d not in (src, dst)]
    x = _permute(x, (dst, src, *others))
    size_s, size_d = shape[src], shape[dst]
    m = size_d // groups
    x = _reshape(x, (groups, m, size_s, *(shape[d] for d in others)))
    x = _permute(x, (0, 2, 1, *range(3, len(shape) + 1)))
    x = _reshape(x, (groups * size_s * m, *(shape[d] for d in others)))
    # axes are now (dst, *others); put dst back where it was, src gone
    kept = [d for d in range(len(shape)) if d != src]
    order = [dst, *others]
    return _permute(x, [order.index(d) for d in kept])


def _split_axis_out(x, axis: int, groups: int, size: int):
    """The inverse of _merge_axis_into with the split-off axis (of `size`)
    put first: axis `axis` laid out (group, index, m) becomes (group, m) and
    the index becomes a new leading axis."""
    shape = aval_of(x).shape
    rest = [d for d in range(len(shape)) if d != axis]
    m = shape[axis] // (groups * size)
    x = _permute(x, (axis, *rest))
    x = _reshape(x, (groups, size, m, *(shape[d] for d in rest)))
    x = _permute(x, (1, 0, 2, *range(3, len(shape) + 2)))
    x = _reshape(x, (size, groups * m, *(shape[d] for d in rest)))
    # axes are (new, axis, *rest); restore the original order after `new`
    order = [axis, *rest]
    return _permute(x, (0, *(1 + order.index(d) for d in range(len(shape)))))


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


def _dilated_sizes(lhs_shape, rhs_shape, ct_shape, params) -> tuple:
    """The input's and kernel's spatial sizes after the forward's dilations,
    and the output's after its strides: what both transposes pad by."""
    lspec, rspec, ospec = params["dimension_numbers"]
    return (
        _dilate(_spatial(lhs_shape, lspec), params["lhs_dilation"]),
        _dilate(_spatial(rhs_shape, rspec), params["rhs_dilation"]),
        _dilate(_spatial(ct_shape, ospec), params["window_strides"]),
    )


def _lhs_padding(lhs_d, rhs_d, out_d, padding):
    before = [w - lo - 1 for w, (lo, _) in zip(rhs_d, padding)]
    after = [i + w - 1 - o - b for i, w, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return tuple(zip(before, after))


def _rhs_padding(lhs_d, rhs_d, out_d, padding):
    return tuple(
        (lo, (o - i) + (w - lo - 1))
        for i, w, o, (lo, _) in zip(lhs_d, rhs_d, out_d, padding)
    )


def _spatial(shape, spec):
    return [shape[d] for d in spec[2:]]


def _transpose_lhs(ct, rhs, lhs_shape, **params):
    """The input's cotangent: ct convolved with the flipped kernel, its two
    feature axes swapped. Either kind of group becomes feature groups here;
    with batch groups, group b's input features land in batch block b."""
    lspec, rspec, ospec = params["dimension_numbers"]
    sizes = _dilated_sizes(lhs_shape, aval_of(rhs).shape, aval_of(ct).shape, params)
    batch_groups = params["batch_group_count"]
    groups = params["feature_group_count"] * batch_groups  # one of them is 1
    flipped = rev_p.bind(rhs, dimensions=tuple(rspec[2:]))
    ct_lhs = conv_general_dilated_p.bind(
        ct,
        _regroup_kernel(flipped, rspec, groups),
        window_strides=tuple(params["lhs_dilation"]),
        padding=_lhs_padding(*sizes, params["padding"]),
        lhs_dilation=tuple(params["window_strides"]),
        rhs_dilation=tuple(params["rhs_dilation"]),
        dimension_numbers=ConvDimensionNumbers(ospec, _swap_first_two(rspec), lspec),
        feature_group_count=groups,
        batch_group_count=1,
        precision=params.get("precision"),
    )
    if batch_groups > 1:
        ct_lhs = _features_into_batch(ct_lhs, lspec, batch_groups)
    return _fit(ct_lhs, lhs_shape)


def _features_into_batch(x, lspec, groups: int):
    """[Nb, groups*I] (group-major features) -> [groups*Nb, I] (group-major batch)."""
    split = _split_axis_out(x, lspec[1], 1, groups)  # the group index now leads
    return _merge_axis_into(split, 0, lspec[0] + 1, 1)


def _transpose_rhs(ct, lhs, rhs_shape, **params):
    """The kernel's cotangent: the input convolved with ct, batch and feature
    axes swapped in both; the forward's feature groups become batch groups
    (each kernel group only sees its own input features) and vice versa."""
    lspec, rspec, ospec = params["dimension_numbers"]
    sizes = _dilated_sizes(aval_of(lhs).shape, rhs_shape, aval_of(ct).shape, params)
    ct_rhs = conv_general_dilated_p.bind(
        lhs,
        ct,
        window_strides=tuple(params["rhs_dilation"]),
        padding=_rhs_padding(*sizes, params["padding"]),
        lhs_dilation=tuple(params["lhs_dilation"]),
        rhs_dilation=tuple(params["window_strides"]),
        dimension_numbers=ConvDimensionNumbers(
            _swap_first_two(lspec), _swap_first_two(ospec), _swap_first_two(rspec)
        ),
        feature_group_count=params["batch_group_count"],
        batch_group_count=params["feature_group_count"],
        precision=params.get("precision"),
    )
    return _fit(ct_rhs, rhs_shape)


def _conv_transpose(ct, lhs, rhs, **params):
    ct = instantiate(ct)
    ct_lhs = (
        _transpose_lhs(ct, rhs, lhs.aval.shape, **params) if is_undefined(lhs) else None
    )
    ct_rhs = (
        _transpose_rhs(ct, lhs, rhs.aval.shape, **params) if is_undefined(rhs) else None
    )
    return [ct_lhs, ct_rhs]


def _regroup_kernel(rhs, rspec, groups: int):
    """The kernel of the input transpose with groups: output features
    (G*Og) become Og input features and the input features I become G*I
    output features, group-major, so each group maps back to its inputs."""
    if groups == 1:
        return rhs
    shape = aval_of(rhs).shape
    perm = (rspec[0], rspec[1], *rspec[2:])
    spatial = tuple(shape[d] for d in rspec[2:])
    out_f, in_f = shape[rspec[0]], shape[rspec[1]]
    k = transpose_p.bind(rhs, permutation=perm)
    k = reshape_p.bind(
        k, new_sizes=(groups, out_f // groups, in_f, *spatial), dimensions=None
    )
    k = transpose_p.bind(k, permutation=(1, 0, *range(2, len(shape) + 1)))
    k = reshape_p.bind(
        k, new_sizes=(out_f // groups, groups * in_f, *spatial), dimensions=None
    )
    inverse = tuple(int(i) for i in sorted(range(len(perm)), key=perm.__getitem__))
    return transpose_p.bind(k, permutation=inverse)


def _fit(x, shape):
    """Strided convolutions can leave trailing positions no window reached:
    the transpose then comes out short or long by a few entries; cut to size."""
    have = aval_of(x).shape
    if have == tuple(shape):
        return x
    if all(h >= s for h, s in zip(have, shape)):
        return slice_p.bind(
            x, start_indices=(0,) * len(shape), limit_indices=tuple(shape), strides=None
        )
    raise TypeError(
        f"conv_general_dilated transpose: cotangent {have} does not cover {shape}"
    )


jvp_rules[conv_general_dilated_p] = _conv_jvp
transpose_rules[conv_general_dilated_p] = _conv_transpose


# ---- batching --------------------------------------------------------------------
def _conv_batch_rule(axis_size, vals, dims, **params):
    """One convolution for the whole batch. A batched input folds into the
    input's batch axis, a batched kernel into its output features (inside
    each group), and both together into extra feature groups (or extra batch
    groups when the convolution already has batch groups)."""
    (lhs, rhs), (l_bdim, r_bdim) = vals, dims
    lspec, rspec, ospec = params["dimension_numbers"]
    groups = params["feature_group_count"] * params["batch_group_count"]
    if r_bdim is None:
        lhs = batch_to_front(lhs, axis_size, l_bdim)
        lhs = _merge_axis_into(lhs, 0, lspec[0] + 1, params["batch_group_count"])
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _split_axis_out(out, ospec[0], 1, axis_size), 0
    rhs = batch_to_front(rhs, axis_size, r_bdim)
    if l_bdim is None:
        rhs = _merge_axis_into(rhs, 0, rspec[0] + 1, groups)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _split_axis_out(out, ospec[1], groups, axis_size), 0
    lhs, rhs, folded = _fold_both(axis_size, lhs, l_bdim, rhs, params)
    out = conv_general_dilated_p.bind(lhs, rhs, **folded)
    return _split_axis_out(out, ospec[1], 1, axis_size), 0


def _fold_both(axis_size, lhs, l_bdim, rhs, params):
    """Example v becomes group v of a convolution with axis_size times the groups
    (v-major): feature groups, or batch groups if those are already in use."""
    lspec, rspec, _ = params["dimension_numbers"]
    lhs = batch_to_front(lhs, axis_size, l_bdim)
    rhs = _merge_axis_into(rhs, 0, rspec[0] + 1, 1)
    if params["batch_group_count"] == 1:
        lhs = _merge_axis_into(lhs, 0, lspec[1] + 1, 1)
        count = {"feature_group_count": axis_size * params["feature_group_count"]}
    else:
        lhs = _merge_axis_into(lhs, 0, lspec[0] + 1, 1)
        count = {"batch_group_count": axis_size * params["batch_group_count"]}
    return lhs, rhs, dict(params, **count)


batch_rules[conv_general_dilated_p] = _conv_batch_rule


# ---- public functions -------------------------------------------------------------
class ConvPaddingError(ValueError):
    """A convolution's `padding` is neither 'SAME', 'SAME_LOWER', 'VALID' nor
    one (lo, hi) pair per spatial axis."""


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """Explicit (lo, hi) pads for a named padding of windows.

    Explicit (lo, hi) pairs for 'VALID', 'SAME' or 'SAME_LOWER' padding of
    spatial sizes `in_shape` by windows `window_shape` moving by
    `window_strides`. 'SAME' pads so that the output has ceil(size / stride)
    entries, the odd entry of padding going high ('SAME_LOWER': low); 'VALID'
    pads nothing.

    Args:
      in_shape: the spatial sizes.
      window_shape: the window sizes.
      window_strides: the strides.
      padding: 'VALID', 'SAME' or 'SAME_LOWER'.

    Returns:
      A list of (lo, hi) pairs, one per spatial dimension.

    Raises:
      ConvPaddingError: padding is not one of the three names (a ValueError).

    Example:
      >>> lax.padtype_to_pads((5,), (3,), (2,), 'SAME')
      [(1, 1)]
    """
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ConvPaddingError(
            f"padtype_to_pads: padding must be 'VALID', 'SAME' or 'SAME_LOWER', "
            f"got {padding!r}"
        )
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if kind == "SAME_LOWER" else (small, large))
    return pads


def _padding(
    padding, lhs_shape, rhs_shape, strides, dn: ConvDimensionNumbers, rhs_dilation
):
    """'SAME' / 'SAME_LOWER' / 'VALID' or explicit (lo, hi) pairs."""
    if not isinstance(padding, str):
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
        if len(pads) != len(strides):
            raise ConvPaddingError(
                f"conv: padding {pads} needs one (lo, hi) pair per spatial axis "
                f"of the input {tuple(lhs_shape)} ({len(strides)})"
            )
        return pads
    sizes = [lhs_shape[d] for d in dn.lhs_spec[2:]]
    windows = _dilate([rhs_shape[d] for d in dn.rhs_spec[2:]], rhs_dilation)
    return tuple(padtype_to_pads(sizes, windows, strides, padding))


def _spec_positions(spec: str, names: str, spatial: list) -> tuple:
    return (
        spec.index(names[0]),
        spec.index(names[1]),
        *(spec.index(c) for c in spatial),
    )


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """Convolution dimension numbers from layout strings or axis positions.

    ConvDimensionNumbers from None (NCHW / OIHW / NCHW of the operands' rank),
    axis positions, or layout strings such as ('NHWC', 'HWIO', 'NHWC'). In
    strings, spatial axes pair up by letter and follow the kernel's order, as in
    JAX.

    Args:
      lhs_shape: the input's shape.
      rhs_shape: the kernel's shape.
      dimension_numbers: None, a ConvDimensionNumbers, or three layout strings
        (input, kernel, output).

    Returns:
      A ConvDimensionNumbers of axis positions.

    Raises:
      OlympusTypeError: the layout strings do not name the operands' axes.

    Example:
      >>> lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
      ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if dimension_numbers is None:
        return default_dimension_numbers(len(lhs_shape))
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(
            *(tuple(int(d) for d in s) for s in dimension_numbers)
        )
    lhs, rhs, out = dimension_numbers
    if not isinstance(lhs, str):
        return ConvDimensionNumbers(
            *(tuple(int(d) for d in s) for s in (lhs, rhs, out))
        )
    spatial = [c for c in rhs if c not in "OI"]
    if sorted(lhs) != sorted(out) or sorted(c for c in lhs if c not in "NC") != sorted(
        spatial
    ):
        raise OlympusTypeError(
            f"conv_dimension_numbers: layouts {dimension_numbers} must name N, C and "
            f"the kernel's spatial letters in the input and output, O and I in the kernel"
        )
    return ConvDimensionNumbers(
        _spec_positions(lhs, "NC", spatial),
        _spec_positions(rhs, "OI", spatial),
        _spec_positions(out, "NC", spatial),
    )


def conv_general_dilated(
    lhs,
    rhs,
    window_strides: Sequence[int],
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """N-d convolution (cross-correlation, as in XLA and JAX), with dilation.

    The primitive behind every convolution layer: strides, padding, input
    (lhs) dilation for transposed convolutions, kernel (rhs) dilation for
    atrous ones, and feature or batch groups. With `feature_group_count` G
    the input features split into G groups, each seen by its own block of
    output features (G = input features is depthwise); with
    `batch_group_count` B the batch splits into B groups instead (a kernel
    gradient's form).

    Args:
      lhs: the input, e.g. [N, C, H, W].
      rhs: the kernel, e.g. [O, I, kh, kw].
      window_strides: one stride per spatial axis.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or one (lo, hi) pair per
        spatial axis.
      lhs_dilation: input dilation per spatial axis (None: 1).
      rhs_dilation: kernel dilation per spatial axis (None: 1).
      dimension_numbers: a ConvDimensionNumbers or layout strings such as
        ('NHWC', 'HWIO', 'NHWC'); None: NCHW / OIHW / NCHW.
      feature_group_count: the number of feature groups.
      batch_group_count: the number of batch groups.
      precision: as dot_general's (None: olympus_default_matmul_precision).
      preferred_element_type: the output dtype (operands converted to it).
      out_sharding: the result's layout (a PartitionSpec on the `set_mesh`
        mesh or a NamedSharding; None: what the operands' types say).

    Returns:
      The output array in the output layout.

    Raises:
      ConvPaddingError: `padding` is a string that is not one of the names.
      OlympusTypeError: shapes, groups or layouts do not fit together.

    Example:
      >>> x = jnp.ones((1, 1, 4, 4))  # [N, C, H, W]
      >>> w = jnp.ones((2, 1, 3, 3))  # [O, C, kh, kw]
      >>> y = lax.conv_general_dilated(x, w, (1, 1), "SAME")
      >>> y.shape, y[0, 0]
      ((1, 2, 4, 4), Array([[4., 6., 6., 4.],
             [6., 9., 9., 6.],
             [6., 9., 9., 6.],
             [4., 6., 6., 4.]], dtype=float32))
    """
    if out_sharding is not None:
        from olympus.lax import sharding

        args = (lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation)
        options = (dimension_numbers, feature_group_count, batch_group_count)
        return sharding.laid_out_as(
            lambda: conv_general_dilated(
                *args, *options, precision, preferred_element_type
            ),
            out_sharding,
            "lax.conv_general_dilated",
        )
    lhs, rhs = _operands_as(lhs, rhs, preferred_element_type)
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    n = len(lhs_shape) - 2
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    strides = tuple(int(s) for s in window_strides)
    lhs_dilation = tuple(lhs_dilation or (1,) * n)
    rhs_dilation = tuple(rhs_dilation or (1,) * n)
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=strides,
        padding=_padding(padding, lhs_shape, rhs_shape, strides, dn, rhs_dilation),
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dn,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count),
        precision=canonical_precision(precision, "lax.conv_general_dilated"),
    )


def _operands_as(lhs, rhs, preferred_element_type):
    """The operands in `preferred_element_type` (the output dtype)."""
    if preferred_element_type is None:
        return lhs, rhs
    dtype = dtypes.canonicalize_dtype(preferred_element_type)
    return (
        convert_element_type(lhs, dtype),
        convert_element_type(rhs, dtype),
    )


def conv_with_general_padding(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    precision=None,
    preferred_element_type=None,
):
    """conv_general_dilated in NCHW/OIHW layouts with explicit dilations.

    conv_general_dilated with NCHW input, OIHW kernel and NCHW output, explicit
    dilations and no grouping.

    Args:
      lhs: the input, NCHW.
      rhs: the kernel, OIHW.
      window_strides: the strides per spatial axis.
      padding: 'SAME', 'VALID' or (lo, hi) pairs.
      lhs_dilation: the input's dilation; None for 1.
      rhs_dilation: the kernel's dilation; None for 1.
      precision: the matmul precision; None for the default.
      preferred_element_type: the accumulation and result dtype; None for the
        inputs'.

    Returns:
      The output, NCHW.

    Raises:
      OlympusTypeError: the shapes or dtypes do not fit.

    Example:
      >>> x, w = jnp.ones((1, 1, 3, 3)), jnp.ones((1, 1, 2, 2))
      >>> lax.conv_with_general_padding(x, w, (1, 1), "VALID", (2, 2), None).shape
      (1, 1, 4, 4)
    """
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv(
    lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None
):
    """A plain convolution: NCHW input, OIHW kernel, NCHW output, no dilation.

    The common case of conv_general_dilated.

    Args:
      lhs: the input [N, C, spatial...].
      rhs: the kernel [O, C, window...].
      window_strides: one stride per spatial axis.
      padding: 'SAME', 'SAME_LOWER', 'VALID' or (lo, hi) pairs.
      precision: as dot_general's.
      preferred_element_type: the output dtype.

    Returns:
      The output [N, O, spatial...].

    Raises:
      ConvPaddingError: `padding` is a string that is not one of the names.

    Example:
      >>> lax.conv(jnp.ones((1, 1, 4, 4)), jnp.ones((2, 1, 3, 3)), (1, 1), "VALID").shape
      (1, 2, 2, 2)
    """
    return conv_with_general_padding(
        lhs, rhs, window_strides, padding, None, None, precision, preferred_element_type
    )


_TRANSPOSE_LAYOUTS = {  # conv_transpose's default layouts by operand rank
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose_padding(window: int, stride: int, padding: str) -> tuple:
    """The padding that makes a stride-1 convolution transpose a strided one.

    The (lo, hi) padding of the stride-dilated input that makes a stride-1
    convolution the transpose of a `stride`-strided one with `window`: 'SAME'
    gives size * stride outputs, 'VALID' size * stride + max(window - stride,
    0).

    Args:
      window: the kernel size (after dilation).
      stride: the forward convolution's stride.
      padding: 'SAME' or 'VALID'.

    Returns:
      A (lo, hi) pair of ints.

    Raises:
      ConvPaddingError: padding is not 'SAME' or 'VALID' (a ValueError).

    Example:
      >>> lax.conv_transpose_padding(3, 2, 'SAME')
      (2, 1)
    """
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == "SAME":
        total = window + stride - 2
        lo = window - 1 if stride > window - 1 else -(-total // 2)
    elif kind == "VALID":
        total = window + stride - 2 + max(window - stride, 0)
        lo = window - 1
    else:
        raise ConvPaddingError(
            f"conv_transpose: padding must be 'SAME', 'VALID' or (lo, hi) pairs, "
            f"got {padding!r}"
        )
    return lo, total - lo


def conv_transpose(
    lhs,
    rhs,
    strides,
    padding,
    rhs_dilation=None,
    dimension_numbers=None,
    transpose_kernel: bool = False,
    precision=None,
    preferred_element_type=None,
    use_consistent_padding: bool = False,
):
    """A transposed (fractionally strided) convolution, which upsamples by `strides`.

    A transposed ("fractionally strided") convolution, which upsamples by
    `strides`: a stride-1 convolution of `lhs` dilated by `strides`. Layouts
    default to NHWC input, HWIO kernel, NHWC output (NC/IO, NHC/HIO, NHWDC/HWDIO
    by rank). 'SAME' padding gives size * stride outputs, 'VALID' size * stride
    + max(window - stride, 0); explicit (lo, hi) pairs pad the dilated input.
    With `transpose_kernel` the kernel's spatial axes are flipped and its I and
    O swapped, which makes this exactly the gradient of conv_general_dilated
    with these strides and kernel.

    Args:
      lhs: the input, NHWC by default.
      rhs: the kernel, HWIO by default.
      strides: the upsampling factor per spatial axis.
      padding: 'SAME', 'VALID' or (lo, hi) pairs.
      rhs_dilation: the kernel's dilation; None for 1.
      dimension_numbers: the layouts; None for the defaults above.
      transpose_kernel: whether to flip the kernel and swap its I and O axes
        (the exact gradient of a strided convolution).
      precision: the matmul precision; None for the default.
      preferred_element_type: the accumulation and result dtype; None for the
        inputs'.
      use_consistent_padding: read (lo, hi) pairs as the forward convolution's
        padding too (PyTorch's convention: each side gets
        window - 1 - pad), so this is the gradient of a convolution given the
        same padding; False (JAX's default) keeps pairs as the padding of the
        dilated input.

    Returns:
      The upsampled output, of the layout's shape.

    Raises:
      OlympusTypeError: the shapes or dtypes do not fit the layouts.
      ConvPaddingError: padding is not 'SAME', 'VALID' or pairs (a ValueError).

    Example:
      >>> x, w = jnp.ones((1, 2, 2, 1)), jnp.ones((3, 3, 1, 1))  # NHWC, HWIO
      >>> lax.conv_transpose(x, w, (2, 2), "SAME").shape
      (1, 4, 4, 1)
    """
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    if dimension_numbers is None:
        if len(lhs_shape) not in _TRANSPOSE_LAYOUTS:
            raise OlympusTypeError(
                f"conv_transpose: input {aval_of(lhs).str_short()} needs rank 2 to 5 "
                f"for default layouts; pass dimension_numbers"
            )
        dimension_numbers = _TRANSPOSE_LAYOUTS[len(lhs_shape)]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    strides = tuple(int(s) for s in strides)
    rhs_dilation = tuple(rhs_dilation or (1,) * len(strides))
    windows = _dilate([rhs_shape[d] for d in dn.rhs_spec[2:]], rhs_dilation)
    if isinstance(padding, str):
        padding = [
            conv_transpose_padding(w, s, padding) for w, s in zip(windows, strides)
        ]
    elif use_consistent_padding:  # the forward padding: window - 1 - pad a side
        padding = [(w - 1 - lo, w - 1 - hi) for w, (lo, hi) in zip(windows, padding)]
    if transpose_kernel:
        rhs = rev_p.bind(rhs, dimensions=tuple(dn.rhs_spec[2:]))
        perm = list(range(len(rhs_shape)))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose_p.bind(rhs, permutation=tuple(perm))
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * len(strides),
        padding,
        lhs_dilation=strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
