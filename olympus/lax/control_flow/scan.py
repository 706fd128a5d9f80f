"""`scan` / `map`: the `scan` primitive, a loop over the leading axis of arrays.

`scan` holds the body `olympuspr` (consts, carry, x) -> (carry, y) and runs it
`length` times (backwards with `reverse`), slicing each x from the stacked
xs and stacking the ys. It lowers to a `stablehlo.while` over an i32
counter with `dynamic_slice` / `dynamic_update_slice`. With a static trip
count it is reverse-differentiable: partial evaluation saves per-iteration
residuals as extra ys, and the transpose runs the loop backwards over them.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from olympus.tracer.tracebacks import api_boundary
from olympus.ir import dtypes
from olympus.ir.analysis import residual_vars, unknown_vars
from olympus.ir.core import ClosedOlympuspr, ShapedArray, Var
from olympus.ir.pruning import (
    Pruner,
    carry_forwards,
    dce_rules,
    forwarding_rules,
    hoisting_rules,
    live_carry,
    rebuilt,
    select,
)
from olympus.ir.structure import Structure
from olympus.backends.xla.array import to_device
from olympus.backends.xla.lowering import (
    compare,
    emit_while,
    i64_array,
    lower_closed_inline,
)
from olympus.ir.effects import has_ordered_effect
from olympus.lax import ops
from olympus.backends.xla.sharding import PartitionSpec
from olympus.lax.sharding import stacked, unstacked
from olympus.lax.elementwise import convert_element_type_p
from olympus.lax.control_flow.subprograms import (
    ScanLengthError,
    args_tree,
    forwarded_carries,
    batched_carry_fixpoint,
    blocks,
    check_carry,
    differentiable_mask,
    define_control_flow,
    invariant_values,
    leaf_paths,
    loop_jvp_program,
    merge,
    parameter_names,
    promote_weak_carry,
    python_mode,
    reorder,
    same_types,
    pruned_loop,
    select_mask,
    split_blocks,
    split_loop_body,
    tangents_out,
    to_front,
    trace_function,
    where_text,
)
from olympus.tracer.core import aval_of, set_current_trace, user_source_info
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer import refs
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import DebugInfo, function_name, trace_sub_program
from olympus.transforms.batching import batch_rules, move_batch_axis, not_mapped, vmap
from olympus.transforms.ad_util import instantiate
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import (
    UndefinedPrimal,
    backward_pass,
    is_undefined,
    partial_eval_rules,
    transpose_rules,
)
from olympus.transforms.programs import known_program, unknown_program


# ---- the primitive -------------------------------------------------------------------
def _scan_abstract_eval(
    *args, olympuspr, num_consts, num_carry, length, reverse, linear, unroll
):
    if len(linear) != len(args):
        raise OlympusTypeError(
            f"scan: linear has {len(linear)} entries for {len(args)} operands"
        )
    xs = args[num_consts + num_carry :]
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            raise OlympusTypeError(
                f"scan: scanned operand {x.str_short()} has no leading axis of {length}"
            )
    given = list(args[: num_consts + num_carry]) + [unstacked(x) for x in xs]
    if len(given) != len(olympuspr.in_avals) or not same_types(
        olympuspr.in_avals, given
    ):
        raise OlympusTypeError("scan: the body does not take the given operands")
    carry = args[num_consts : num_consts + num_carry]
    out = olympuspr.out_avals
    if not same_types(out[:num_carry], carry):
        raise OlympusTypeError("scan: the body must return the carry's types")
    ys = [stacked(y, length) for y in out[num_carry:]]
    # the carry out is typed as the body returns it, weak type and layout (JAX's):
    # a cotangent of a weak primal comes out of a transposed scan weak this way
    return list(out[:num_carry]) + ys


_I32 = ShapedArray((), dtypes.int32)


def _i32(em, value: int) -> str:
    return em.constant(np.int32(value), _I32)


def _slice_at(em, stacked: str, aval: ShapedArray, index: str) -> str:
    """`stacked[index]`: one element along the leading axis."""
    zeros = [_i32(em, 0) for _ in aval.shape[1:]]
    sizes = (1, *aval.shape[1:])
    (row,) = em.op(
        "stablehlo.dynamic_slice",
        [stacked, index, *zeros],
        [aval.update(shape=sizes)],
        f"slice_sizes = {i64_array(sizes)}",
    )
    return em.op("stablehlo.reshape", [row], [aval.update(shape=aval.shape[1:])])[0]


def _update_at(em, stacked: str, aval: ShapedArray, value: str, index: str) -> str:
    """`stacked.at[index].set(value)` along the leading axis."""
    (row,) = em.op(
        "stablehlo.reshape", [value], [aval.update(shape=(1, *aval.shape[1:]))]
    )
    zeros = [_i32(em, 0) for _ in aval.shape[1:]]
    return em.op(
        "stablehlo.dynamic_update_slice", [stacked, row, index, *zeros], [aval]
    )[0]


class _ScanPlan(NamedTuple):
    """What every iteration of a lowered scan reads: the body, its trip count
    and direction, and the constants and xs (with the xs' and ys' avals)."""

    olympuspr: object
    length: int
    reverse: bool
    consts: list
    xs: list
    xs_avals: list
    ys_avals: list


def _scan_step(em, plan: _ScanPlan, step: str, carry, ys):
    """Emits iteration `step` (an i32 value): slice the xs, run the body, store the ys."""
    at = step
    if plan.reverse:
        last = _i32(em, plan.length - 1)
        at = em.op("stablehlo.subtract", [last, step], [_I32])[0]
    x_rows = [_slice_at(em, x, a, at) for x, a in zip(plan.xs, plan.xs_avals)]
    outs = lower_closed_inline(em, plan.olympuspr, [*plan.consts, *carry, *x_rows])
    n_carry = len(carry)
    new_ys = [
        _update_at(em, s, a, y, at)
        for s, a, y in zip(ys, plan.ys_avals, outs[n_carry:])
    ]
    return outs[:n_carry], new_ys


def _scan_loop(ctx, plan: _ScanPlan, args, num_consts, num_carry, unroll, trips, ys):
    """`trips` trips of a while loop, each running `unroll` iterations; the
    carry and ys after them."""
    em, n_args = ctx.emitter, len(args)
    state = [_i32(em, 0), *args, *ys]
    avals = [_I32, *ctx.avals_in, *plan.ys_avals]

    def cond_block(inner, trip, *rest):
        return [compare(inner, trip, _i32(inner, trips), "LT", _I32.dtype)]

    def body_block(inner, trip, *rest):
        carry, ys_now = list(rest[num_consts : num_consts + num_carry]), rest[n_args:]
        first = inner.op("stablehlo.multiply", [trip, _i32(inner, unroll)], [_I32])[0]
        for j in range(unroll):
            step = first
            if j:
                step = inner.op("stablehlo.add", [first, _i32(inner, j)], [_I32])[0]
            carry, ys_now = _scan_step(inner, plan, step, carry, ys_now)
        (next_trip,) = inner.op("stablehlo.add", [trip, _i32(inner, 1)], [_I32])
        rest_xs = rest[num_consts + num_carry : n_args]
        return [next_trip, *rest[:num_consts], *carry, *rest_xs, *ys_now]

    ordered = has_ordered_effect(plan.olympuspr)
    outs = emit_while(em, state, avals, cond_block, body_block, ordered)
    return outs[1 + num_consts : 1 + num_consts + num_carry], outs[1 + n_args :]


def _scan_lower(
    ctx, *args, olympuspr, num_consts, num_carry, length, reverse, linear, unroll
):
    """A while loop over an i32 counter; xs are sliced and ys updated in place.

    With `unroll` = u, each trip of the loop runs u iterations and the
    `length % u` left over run after it, straight-line.
    """
    em = ctx.emitter
    ys_avals = ctx.avals_out[num_carry:]
    plan = _ScanPlan(
        olympuspr,
        length,
        reverse,
        consts=args[:num_consts],
        xs=args[num_consts + num_carry :],
        xs_avals=ctx.avals_in[num_consts + num_carry :],
        ys_avals=ys_avals,
    )
    carry = list(args[num_consts : num_consts + num_carry])
    ys = [em.constant(np.zeros(a.shape, a.dtype), a) for a in ys_avals]
    unroll = max(1, min(unroll, length))
    trips = length // unroll if unroll < length else 0  # fully unrolled: no loop at all
    if trips:
        carry, ys = _scan_loop(
            ctx, plan, args, num_consts, num_carry, unroll, trips, ys
        )
    for k in range(trips * unroll, length):
        carry, ys = _scan_step(em, plan, _i32(em, k), carry, ys)
    return list(carry) + list(ys)


scan_structure = Structure(
    "scan",
    ("consts", "carry", "xs"),
    ("num_consts", "num_carry", None),
    out_groups=("carry", "ys"),
    out_sizes=("num_carry", None),
    bodies=(("olympuspr", ("consts", "carry", "xs")),),
    per_operand=(("linear", ("consts", "carry", "xs")),),
)
scan_p = define_control_flow("scan", _scan_abstract_eval, _scan_lower, scan_structure)


# ---- scan and map --------------------------------------------------------------------
def _scan_length(xs_leaves, xs_tree, length, source_info) -> int:
    """The common leading axis of all xs (and `length`, if given)."""
    paths = leaf_paths(xs_tree, "xs")
    avals = [aval_of(x) for x in xs_leaves]
    for path, aval in zip(paths, avals):
        if aval.ndim == 0:
            raise ScanLengthError(
                f"scan: xs leaf {path} is a scalar {aval.str_short()}; scanned arrays need "
                f"a leading axis to scan over{where_text(source_info)}"
            )
    if length is None:
        if not avals:
            raise ValueError(
                f"scan: with no xs to scan over, pass length={where_text(source_info)}"
            )
        length, first, first_path = avals[0].shape[0], avals[0], paths[0]
    else:
        length, first, first_path = int(length), None, "length"
    for path, aval in zip(paths, avals):
        if aval.shape[0] != length:
            first_text = first.str_short() if first is not None else str(length)
            raise ScanLengthError(
                f"scan: xs leaves have different leading axes: {first_path} is "
                f"{first_text} but {path} is {aval.str_short()}; all scanned arrays "
                f"must have the same length{where_text(source_info)}"
            )
    return length


def _unroll_factor(unroll, length: int) -> int:
    """`unroll=True` unrolls fully, False means 1, ints count iterations per trip."""
    if unroll is True:
        return max(length, 1)
    if (
        isinstance(unroll, bool)
        or not isinstance(unroll, (int, np.integer))
        or unroll < 0
    ):
        if unroll is False:
            return 1
        raise ValueError(
            f"scan: unroll must be a positive int or a bool, got {unroll!r}"
        )
    return max(int(unroll), 1)


def _split_scan_output(out):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise OlympusTypeError(
            f"scan: the body must return a pair (carry, y), got {type(out).__name__}"
        )
    return out


@api_boundary
def scan(
    f: Callable,
    init,
    xs=None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int = 1,
):
    """Loops `carry, y = f(carry, x)` over the leading axis of `xs`; stacks the ys.

    The loop body is traced once and compiled as a loop, so long sequences
    (RNN steps, ODE solvers) compile quickly; it is differentiable in both
    modes.

    Args:
      f: maps `(carry, x)` to `(new_carry, y)`; new_carry keeps the carry's
        types.
      init: the initial carry (a pytree).
      xs: a pytree of arrays sharing a leading axis, or None.
      length: the number of iterations, needed when xs is None.
      reverse: if True, walk xs from the end (each y stored at its x's
        position).
      unroll: iterations per trip of the compiled loop (True: all of them).

    Returns:
      `(final_carry, stacked_ys)`, the ys stacked along a new leading axis.

    Raises:
      ScanShapeError: xs leaves disagree on the leading axis, or `length`
        disagrees with them.
      OlympusTypeError: f changes the carry's types.

    Example:
      >>> lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
      (Array(3., dtype=float32), Array([0., 0., 1.], dtype=float32, weak_type=True))
    """
    if python_mode(init, xs):
        ys_rows = _python_scan_rows(f, init, xs, length, reverse)
        if ys_rows is not None:
            return ys_rows
    return scan_with_names(f, init, xs, length, reverse, unroll, "scan", None)


def _python_scan_rows(f, init, xs, length, reverse):
    """`scan` as a Python loop (disable_jit); None for an empty scan, whose ys'
    structure only tracing can tell."""
    leaves, tree = tree_flatten(xs)
    length = _scan_length(leaves, tree, length, user_source_info())
    if length == 0:
        return None
    leaves = [to_device(x) for x in leaves]  # rows are olympus Arrays, as under jit
    carry, ys = init, [None] * length
    for i in range(length - 1, -1, -1) if reverse else range(length):
        carry, ys[i] = _split_scan_output(
            f(carry, tree_unflatten(tree, [x[i] for x in leaves]))
        )
    rows = [tree_flatten(y)[0] for y in ys]
    stacked = [
        ops.concatenate([ops.expand_dims(r, (0,)) for r in column], 0)
        for column in zip(*rows)
    ]
    return carry, tree_unflatten(tree_flatten(ys[0])[1], stacked)


@refs.threaded_scan  # the refs the body uses are carried
def scan_with_names(f, init, xs, length, reverse, unroll, what: str, carry_paths):
    """`scan` as another loop (fori_loop) presents it: `what` and `carry_paths`
    name the loop and its carry leaves in errors."""
    source_info = user_source_info()
    init_leaves, carry_tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, xs_tree, length, source_info)
    body_paths = (
        None if carry_paths is None else [*carry_paths, *leaf_paths(xs_tree, "x")]
    )
    x_avals = [unstacked(aval_of(x)) for x in xs_leaves]
    in_tree = args_tree(carry_tree, xs_tree)
    carry_out_tree = []

    def body(carry, x):
        new_carry, y = _split_scan_output(f(carry, x))
        return new_carry, y

    def trace(leaves):
        avals = [*(aval_of(x) for x in leaves), *x_avals]
        traced = trace_function(
            body,
            in_tree,
            avals,
            f"{what} body",
            function_name(f),
            parameter_names(f, 2),
            body_paths,
        )
        carry_out_tree[:] = [traced.out_tree.children[0]]
        return traced

    traced = trace(init_leaves)
    given_leaves = list(init_leaves)
    n_carry = len(init_leaves)
    init_leaves, changed = promote_weak_carry(
        init_leaves, traced.out_avals[:n_carry], strengthen=False
    )
    if changed:
        traced = trace(init_leaves)
    check_carry(
        what,
        carry_tree,
        carry_out_tree[0],
        [aval_of(x) for x in init_leaves],
        traced.out_avals[:n_carry],
        source_info,
        carry_paths,
    )
    outs = _bind_scan(
        traced.consts,
        init_leaves,
        xs_leaves,
        olympuspr=traced.closed,
        length=length,
        reverse=bool(reverse),
        unroll=_unroll_factor(unroll, length),
    )
    ys_tree = traced.out_tree.children[1]
    # a carry the body passes through is the initial value itself, as in JAX
    fwd = forwarded_carries(traced.closed, n_carry, len(xs_leaves))
    carry = [init if f else out for out, init, f in zip(outs, given_leaves, fwd)]
    return tree_unflatten(carry_tree, carry), tree_unflatten(ys_tree, outs[n_carry:])


@api_boundary
def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001
    """Applies `f` to each slice of `xs` along its leading axis, as one loop.

    `[f(x) for x in xs]` stacked, but compiled as a `scan`, so the program
    does not grow with the length. With `batch_size` = k, each iteration
    runs `vmap(f)` on k rows (fewer, longer vector operations; k times the
    memory); the leftover rows go through one more `vmap(f)` after the loop.

    Args:
      f: the function applied to each slice (pytrees allowed).
      xs: a pytree of arrays sharing a leading axis.
      batch_size: rows per iteration (None: one).

    Returns:
      The results stacked along a new leading axis.

    Raises:
      ScanShapeError: the leaves of xs disagree on the leading axis.

    Example:
      >>> lax.map(lambda x: x * 2, jnp.arange(5.0), batch_size=2)
      Array([0., 2., 4., 6., 8.], dtype=float32)
    """
    if batch_size is None:
        _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
        return ys
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, (int, np.integer))
        or batch_size < 1
    ):
        raise ValueError(f"map: batch_size must be a positive int, got {batch_size!r}")
    leaves, tree = tree_flatten(xs)
    length = _scan_length(leaves, tree, None, user_source_info())
    batch_size = int(batch_size)
    n_batches, n_left = divmod(length, batch_size)
    batched_f = vmap(f)
    parts = []
    if n_batches:
        split = n_batches * batch_size
        chunks = [
            ops.reshape(
                _rows(x, 0, split), (n_batches, batch_size, *aval_of(x).shape[1:])
            )
            for x in leaves
        ]
        _, ys = scan(
            lambda carry, x: (carry, batched_f(x)), (), tree_unflatten(tree, chunks)
        )
        ys_leaves, ys_tree = tree_flatten(ys)
        parts.append(
            [ops.reshape(y, (split, *aval_of(y).shape[2:])) for y in ys_leaves]
        )
    if n_left:
        rest = [_rows(x, length - n_left, length) for x in leaves]
        ys_leaves, ys_tree = tree_flatten(batched_f(tree_unflatten(tree, rest)))
        parts.append(ys_leaves)
    if not parts:  # no rows at all: the plain (empty) scan gives the ys' types
        return map(f, xs)
    if len(parts) == 1:
        return tree_unflatten(ys_tree, parts[0])
    return tree_unflatten(ys_tree, [ops.concatenate(pair, 0) for pair in zip(*parts)])


def _rows(x, start: int, stop: int):
    """`x[start:stop]` along the leading axis."""
    shape = aval_of(x).shape
    return ops.slice(x, (start, *(0 for _ in shape[1:])), (stop, *shape[1:]))


# ---- transformation rules ------------------------------------------------------------
def _bind_scan(consts, carry, xs, *, linear=None, **params) -> list:
    """Binds a scan of the operand groups `consts`, `carry`, `xs` (its count
    parameters from the groups; `linear` all False unless given)."""
    args, counts = scan_structure.pack(consts, carry, xs)
    linear = (False,) * len(args) if linear is None else tuple(linear)
    return scan_p.bind(*args, **params, **counts, linear=linear)


def _loop_params(params) -> dict:
    """The parameters a transformed scan keeps: all but its body, counts, linear."""
    return {k: params[k] for k in ("length", "reverse", "unroll")}


def _scan_jvp(primals, tangents, **params):
    olympuspr = params["olympuspr"]
    consts, carry, xs = scan_structure.split(params, primals)
    t_consts, t_carry, t_xs = scan_structure.split(params, tangents)
    nc, ncar, nx = len(consts), len(carry), len(xs)
    ny = len(scan_structure.split_outputs(params, olympuspr.out_avals)[1])
    const_nz = differentiable_mask(consts, t_consts)
    xs_nz = differentiable_mask(xs, t_xs)
    traced, out_nz, carry_nz = loop_jvp_program(
        olympuspr, const_nz, differentiable_mask(carry, t_carry), xs_nz, ny
    )
    ys_nz = scan_structure.split_outputs(params, out_nz)[1]
    # the jvp program takes (consts, primals, nonzero tangents); the scan's body
    # takes each group's primals then its tangents, and returns the same
    b = blocks(
        len(traced.consts), nc, ncar, nx, *(sum(m) for m in (const_nz, carry_nz, xs_nz))
    )
    o = blocks(ncar, ny, sum(carry_nz), sum(ys_nz))
    body = reorder(
        traced.closed,
        b[0] + b[1] + b[4] + b[2] + b[5] + b[3] + b[6],
        o[0] + o[2] + o[1] + o[3],
    )
    carry_t = [instantiate(t) for t in select_mask(carry_nz, t_carry)]
    outs = _bind_scan(
        [*traced.consts, *consts, *select_mask(const_nz, t_consts)],
        [*carry, *carry_t],
        [*xs, *select_mask(xs_nz, t_xs)],
        olympuspr=body,
        **_loop_params(params),
    )
    carry_out, carry_t_out, ys, ys_t = split_blocks(
        outs, ncar, len(carry_t), ny, sum(ys_nz)
    )
    carry_tan = tangents_out(carry_out, carry_nz, carry_t_out)
    return carry_out + ys, carry_tan + tangents_out(ys, ys_nz, ys_t)


def _split_residuals(params, program, residuals, consts, known_consts) -> tuple:
    """(the body's known consts -> their values, the residuals computed from
    those alone (loop-invariant: computed once, before the loop), the others
    (one per iteration, stacked))."""
    body_consts = scan_structure.split(params, program.invars)[0]
    const_env = {v: a for v, a, k in zip(body_consts, consts, known_consts) if k}
    variant = unknown_vars(program, [v in const_env for v in program.invars])
    const_res = [r for r in residuals if r not in variant]
    return const_env, const_res, [r for r in residuals if r in variant]


def _staged_order(const_res, stacked_res, *unknown) -> list[int]:
    """The staged body's inputs come (const residuals, stacked residuals,
    unknown consts, unknown carry, unknown xs); the scan takes them as
    (const residuals, unknown consts | unknown carry | stacked residuals,
    unknown xs): the positions in that order."""
    b = blocks(len(const_res), len(stacked_res), *(len(u) for u in unknown))
    return b[0] + b[2] + b[3] + b[1] + b[4]


def _scan_partial_eval(trace, args, unknown, **params):
    """Known work runs as a scan now and saves, per iteration, the values the
    tangent work needs (residuals, stacked like ys); the staged scan reads them
    as xs. Loop-invariant residuals (computed from known constants alone) are
    computed once, before the loop, and passed as constants instead."""
    known_consts, known_carry, known_xs = scan_structure.split(
        params, [not u for u in unknown]
    )
    consts, carry, xs = scan_structure.split(params, args)
    olympuspr, deferred, known_carry, out_known = split_loop_body(
        params["olympuspr"], known_consts, known_carry, known_xs, len(carry)
    )
    known_in = known_consts + known_carry + known_xs
    known_out = known_carry + scan_structure.split_outputs(params, out_known)[1]
    program = olympuspr.olympuspr
    residuals = residual_vars(program, known_in, known_out, deferred)
    const_env, const_res, stacked_res = _split_residuals(
        params, program, residuals, consts, known_consts
    )
    # A residual that is an x itself is read from the xs, not saved again.
    x_of = dict(zip(scan_structure.split(params, program.invars)[2], xs))
    saved_res = [r for r in stacked_res if r not in x_of]
    known_body = known_program(olympuspr, known_in, known_out, saved_res, deferred)
    with set_current_trace(trace.parent):
        const_values = invariant_values(program, const_env, const_res)
        outs = _bind_scan(
            [*known_body.consts, *select_mask(known_consts, consts)],
            select_mask(known_carry, carry),
            select_mask(known_xs, xs),
            olympuspr=known_body.closed,
            **_loop_params(params),
        )
    n_known = sum(known_out)
    known_outs, saved = outs[:n_known], iter(outs[n_known:])
    stacked = [x_of[r] if r in x_of else next(saved) for r in stacked_res]
    unknown_consts = select_mask([not k for k in known_consts], consts)
    unknown_carry = select_mask([not k for k in known_carry], carry)
    unknown_xs = select_mask([not k for k in known_xs], xs)
    body = reorder(
        unknown_program(
            olympuspr, known_in, known_out, const_res + stacked_res, deferred
        ),
        _staged_order(
            const_res, stacked_res, unknown_consts, unknown_carry, unknown_xs
        ),
    )
    linear = (
        (False,) * len(const_res)
        + (True,) * (len(unknown_consts) + len(unknown_carry))
        + (False,) * len(stacked_res)
        + (True,) * len(unknown_xs)
    )  # the tangents are used linearly
    with set_current_trace(trace.tangent_trace):
        unknown_outs = _bind_scan(
            [*const_values, *unknown_consts],
            unknown_carry,
            [*stacked, *unknown_xs],
            olympuspr=body,
            linear=linear,
            **_loop_params(params),
        )
    return merge(known_out, known_outs, unknown_outs)


def _transposed_body(params, const_res, xs_res, ct_weak):
    """The body of the backward scan: (residual consts; carry cotangents, the
    sums of the linear consts' cotangents; residual xs, ys cotangents) ->
    (carry cotangents, the sums, xs cotangents), for the body of scan
    `params` whose consts and xs are residuals where `const_res` / `xs_res`.
    The carry and ys cotangents are weak where `ct_weak` says: as JAX's, the
    cotangents coming in type the carry's (a weak carry made strong by the
    body gets a strong cotangent, so the backward carry keeps its type)."""
    olympuspr = params["olympuspr"]
    body_consts, carry_avals, body_xs = scan_structure.split(params, olympuspr.in_avals)
    res_c_avals = select_mask(const_res, body_consts)
    lin_const_avals = [a for a, r in zip(body_consts, const_res) if not r]
    res_x_avals = select_mask(xs_res, body_xs)
    y_avals = scan_structure.split_outputs(params, olympuspr.out_avals)[1]
    weak_c, weak_y = split_blocks(ct_weak, len(carry_avals), len(y_avals))
    carry_avals = [a.update(weak_type=w) for a, w in zip(carry_avals, weak_c)]
    y_avals = [a.update(weak_type=w) for a, w in zip(y_avals, weak_y)]
    residual_mask = const_res + [False] * len(carry_avals) + xs_res
    sizes = [len(res_c_avals), len(carry_avals), len(lin_const_avals)]
    sizes += [len(res_x_avals), len(y_avals)]

    def step(*a):
        rc, ctc, acc, rx, cty = split_blocks(a, *sizes)
        res = iter([*rc, *rx])
        primals_in = [next(res) if r else None for r in residual_mask]
        first_carry = len(body_consts)
        primals_in[first_carry : first_carry + len(carry_avals)] = [
            UndefinedPrimal(a) for a in carry_avals
        ]
        cts_in = backward_pass(olympuspr.olympuspr, [], [*ctc, *cty], primals_in)
        ct_c, ct_carry, ct_x = scan_structure.split(params, cts_in)
        ct_consts = [instantiate(ct) for ct, r in zip(ct_c, const_res) if not r]
        ct_xs = [instantiate(ct) for ct, r in zip(ct_x, xs_res) if not r]
        return [
            *(instantiate(ct) for ct in ct_carry),
            *(ops.add(s, c) for s, c in zip(acc, ct_consts)),
            *ct_xs,
        ]

    in_avals = [*res_c_avals, *carry_avals, *lin_const_avals, *res_x_avals, *y_avals]
    traced = trace_sub_program(step, in_avals, DebugInfo("transpose", "transpose", ()))
    return traced, lin_const_avals


def _scan_transpose(cts, *args, **params):
    """Runs the loop backwards: the carry holds the carry's cotangent and the sums of
    the constants' cotangents; each step reads a residual row and a ys cotangent."""
    consts, init, xs = scan_structure.split(params, args)
    const_res = [not is_undefined(c) for c in consts]
    xs_res = [not is_undefined(x) for x in xs]
    ct_carry, ct_ys = (
        [instantiate(ct) for ct in g] for g in scan_structure.split_outputs(params, cts)
    )
    ct_weak = [aval_of(ct).weak_type for ct in [*ct_carry, *ct_ys]]
    traced, lin_const_avals = _transposed_body(params, const_res, xs_res, ct_weak)
    res_c, res_xs = select_mask(const_res, consts), select_mask(xs_res, xs)
    # the sums start weak where the const is (JAX's): a weak const's cotangent is
    # then weak exactly when the body's cotangents are
    zeros = [_weak_as(ops.full(a.shape, 0, a.dtype), a) for a in lin_const_avals]
    linear = (
        (False,) * (len(traced.consts) + len(res_c))
        + (True,) * (len(init) + len(zeros))
        + (False,) * len(res_xs)
        + (True,) * len(ct_ys)
    )  # cotangents are linear
    outs = _bind_scan(
        [*traced.consts, *res_c],
        [*ct_carry, *zeros],
        [*res_xs, *ct_ys],
        olympuspr=traced.closed,
        linear=linear,
        **{**_loop_params(params), "reverse": not params["reverse"]},
    )
    ct_init, ct_consts, ct_xs = split_blocks(
        outs, len(init), len(zeros), len(outs) - len(init) - len(zeros)
    )
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return (
        [None if r else next(ct_consts) for r in const_res]
        + [ct if is_undefined(x) else None for ct, x in zip(ct_init, init)]
        + [None if r else next(ct_xs) for r in xs_res]
    )


def _weak_as(ct, aval: ShapedArray):
    """`ct` with `aval`'s weak type (same dtype)."""
    if aval_of(ct).weak_type == aval.weak_type:
        return ct
    return convert_element_type_p.bind(
        ct, new_dtype=aval.dtype, weak_type=aval.weak_type
    )


def _scan_batch(axis_size, vals, dims, **params):
    """Consts and carries get the batch at axis 0, xs and ys at axis 1 (axis 0 is the scan)."""
    olympuspr = params["olympuspr"]
    batched = [d is not not_mapped for d in dims]
    ny = len(scan_structure.split_outputs(params, olympuspr.out_avals)[1])
    consts, carry, xs = scan_structure.split(params, vals)
    const_dims, carry_dims, xs_dims = scan_structure.split(params, dims)
    body, out_b, carry_b = batched_carry_fixpoint(
        olympuspr,
        axis_size,
        *scan_structure.split(params, batched),
        ny,
        _step_avals(
            axis_size, [*consts, *carry], [*const_dims, *carry_dims], xs, xs_dims
        ),
    )
    outs = _bind_scan(
        [*body.consts, *to_front(consts, const_dims, axis_size)],
        [
            move_batch_axis(v, axis_size, d, 0) if b else v
            for v, d, b in zip(carry, carry_dims, carry_b)
        ],
        [
            v if d is not_mapped else move_batch_axis(v, axis_size, d, 1)
            for v, d in zip(xs, xs_dims)
        ],
        olympuspr=body.closed,
        **_loop_params(params),
    )
    ys_b = scan_structure.split_outputs(params, out_b)[1]
    out_dims = [0 if b else not_mapped for b in carry_b]
    return outs, out_dims + [1 if b else not_mapped for b in ys_b]


def _step_avals(axis_size, operands, dims, xs, xs_dims) -> list:
    """The body's operands' types on a batch: consts' and carries' with the
    batch at 0, one step of the xs (batch at 1 of the stacked xs) likewise."""
    avals = [_batch_moved(aval_of(v), d, 0) for v, d in zip(operands, dims)]
    for v, d in zip(xs, xs_dims):
        avals.append(unstacked(_batch_moved(aval_of(v), d, 1)))
    return avals


def _batch_moved(aval, src, dst: int):
    """`aval` with its batch axis moved from `src` to `dst` (its layout with
    it); an unbatched one as it is. Types only: nothing is bound."""
    if src is not_mapped or src == dst:
        return aval
    order = list(range(aval.ndim))
    order.insert(dst, order.pop(src))
    shape = tuple(aval.shape[d] for d in order)
    if aval.sharding is None:
        return aval.update(shape=shape)
    spec = tuple(aval.sharding.spec) + (None,) * aval.ndim
    moved = PartitionSpec(*(spec[d] for d in order))
    return aval.update(shape=shape, sharding=aval.sharding._replace(spec=moved))


jvp_rules[scan_p] = _scan_jvp
partial_eval_rules[scan_p] = _scan_partial_eval
transpose_rules[scan_p] = _scan_transpose
batch_rules[scan_p] = _scan_batch


# ---- optimizer rules: dead code, forwarding and hoisting at the boundary -------------
def _scan_dce(pruner: Pruner, eqn, used: list[bool]):
    """Unused ys go, and each carry that neither the result nor a live part of
    the body reads; then the operands only they needed."""
    p, structure = eqn.params, scan_structure
    closed = p["olympuspr"]
    used_carry, used_ys = structure.split_outputs(p, used)
    carry, found = live_carry(
        pruner,
        closed.olympuspr,
        used_carry,
        used_ys,
        lambda u: structure.split(p, u)[1],
    )
    used_consts, _, used_xs = structure.split(p, found[2])
    keep = used_consts + carry + used_xs
    sub, _ = pruner.pruned(closed, carry + used_ys, keep, found)
    outs = carry + used_ys
    if sub is closed and all(outs):
        return eqn
    linear = tuple(select(keep, p["linear"]))
    groups = (used_consts, carry, used_xs)
    return pruned_loop(eqn, structure, groups, outs, olympuspr=sub, linear=linear)


def _scalar_spread(producer, atom):
    """s, where `atom` is broadcast_in_dim(s) of a scalar s; else None."""
    eqn = producer(atom) if type(atom) is Var else None
    if eqn is None or eqn.primitive.name != "broadcast_in_dim":
        return None
    s = eqn.invars[0]
    return s if s.aval.shape == () and s.aval.dtype == atom.aval.dtype else None


def _x_to_consts(groups, j: int, value=None):
    """(consts, carry, xs) with xs[j] (or `value` for it) moved to the end of consts."""
    consts, carry, xs = groups
    moved = xs[j] if value is None else value
    return [*consts, moved], carry, [*xs[:j], *xs[j + 1 :]]


def _scan_hoist(eqn, producer):
    """A scan over broadcast_in_dim(s) of a scalar s (a cotangent of ones, say)
    reads s in every step: s becomes a constant of the scan instead."""
    p, structure = eqn.params, scan_structure
    groups = structure.split(p, eqn.invars)
    for j, x in enumerate(groups[2]):
        s = _scalar_spread(producer, x) if x.aval.ndim == 1 else None
        if s is None:
            continue
        body = p["olympuspr"]
        program = body.olympuspr
        body_in = structure.split_body_inputs(p, program.invars, "olympuspr")
        invars = structure.pack(*_x_to_consts(body_in, j))[0]
        linear = structure.pack(*_x_to_consts(structure.split(p, p["linear"]), j))[0]
        ops, counts = structure.pack(*_x_to_consts(groups, j, s))
        moved = ClosedOlympuspr(rebuilt(program, invars=invars), body.consts)
        params = {**p, "olympuspr": moved, **counts, "linear": tuple(linear)}
        return _scan_hoist(eqn._replace(params=params, invars=ops), producer)
    return eqn


dce_rules[scan_p] = _scan_dce
forwarding_rules[scan_p] = carry_forwards("olympuspr")
hoisting_rules[scan_p] = _scan_hoist
