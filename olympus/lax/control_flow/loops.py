"""`while_loop` / `fori_loop`: the `while` primitive, a loop with a run-time test.

`while` holds `cond_olympuspr` (carry -> bool[]) and `body_olympuspr`
(carry -> carry), each with its constants as leading operands
(`cond_nconsts`, `body_nconsts`). It lowers to `stablehlo.while`. A while
loop can be differentiated forwards and linearized but, as in JAX, not
transposed: reverse mode needs a static trip count, i.e. `scan` (which
`fori_loop` uses when its bounds are Python ints).

Unlike JAX, `while_loop(..., max_steps=N)` is reverse-differentiable: its
`cond_olympuspr` also tests a step counter (at most N trips) and the
equation carries `max_steps=N`. It runs as a while loop (stopping when the
condition fails); only reverse mode (partial evaluation) turns it into a
masked scan of N steps, where the steps after the condition fails leave the
carry unchanged, checkpointed two levels deep (about sqrt(N) outer steps of
sqrt(N) inner ones), so the backward pass stores O(sqrt(N)) carries.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from olympus.tracer.tracebacks import api_boundary
from olympus.ir import dtypes
from olympus.ir.analysis import known_outputs
from olympus.backends.xla.lowering import emit_while, lower_closed_inline
from olympus.ir.effects import has_ordered_effect
from olympus.ir.pruning import (
    Pruner,
    carry_forwards,
    dce_rules,
    forwarding_rules,
    live_carry,
)
from olympus.ir.structure import Structure
from olympus.lax import ops
from olympus.lax.control_flow.cond import cond
from olympus.lax.control_flow.scan import scan, scan_p, scan_structure, scan_with_names
from olympus.lax.checkpoint import checkpoint
from olympus.lax.elementwise import convert_element_type_p
from olympus.lax.control_flow.subprograms import (
    args_tree,
    forwarded_carries,
    reads,
    batched_carry_fixpoint,
    blocks,
    convert_carry,
    differentiable_mask,
    define_control_flow,
    loop_jvp_program,
    merge,
    python_mode,
    reorder,
    same_types,
    pruned_loop,
    select_mask,
    split_loop_body,
    stage_all,
    tangents_out,
    to_front,
    trace_function,
    trace_loop_body,
    where_text,
    with_ignored_invars,
)
from olympus.tracer.core import aval_of, set_current_trace, user_source_info
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.evaluation import eval_program
from olympus.tracer import refs
from olympus.tracer.pytree import tree_flatten, tree_paths, tree_unflatten
from olympus.tracer.staging import (
    DebugInfo,
    SubProgram,
    function_name,
    trace_sub_program,
)
from olympus.transforms.batching import batch_rules, move_batch_axis, not_mapped
from olympus.transforms.ad_util import instantiate
from olympus.transforms.jvp import MissingRuleError, jvp_rules
from olympus.transforms.linearize import partial_eval_rules, transpose_rules
from olympus.transforms.programs import batch_program, known_program, split_nested


# ---- the primitive -------------------------------------------------------------------
def _while_abstract_eval(
    *args, cond_olympuspr, body_olympuspr, cond_nconsts, body_nconsts, max_steps=None
):
    carry = args[cond_nconsts + body_nconsts :]
    cond_in = args[:cond_nconsts] + carry
    body_in = args[cond_nconsts:]
    programs = (("cond", cond_olympuspr, cond_in), ("body", body_olympuspr, body_in))
    for name, program, given in programs:
        if len(program.in_avals) != len(given) or not same_types(
            program.in_avals, given
        ):
            raise OlympusTypeError(
                f"while: {name}_olympuspr does not take the given operands"
            )
    pred = cond_olympuspr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise OlympusTypeError("while: cond_olympuspr must return one bool[] scalar")
    out = body_olympuspr.out_avals
    if len(out) != len(carry) or not same_types(out, carry):
        raise OlympusTypeError("while: body_olympuspr must return the carry's types")
    return list(out)  # typed as the body returns (JAX's), weak types too


def _while_lower(
    ctx,
    *args,
    cond_olympuspr,
    body_olympuspr,
    cond_nconsts,
    body_nconsts,
    max_steps=None,
):
    nconsts = cond_nconsts + body_nconsts

    def cond_block(em, *state):
        cond_args = state[:cond_nconsts] + state[nconsts:]
        return lower_closed_inline(em, cond_olympuspr, cond_args)

    def body_block(em, *state):
        return [
            *state[:nconsts],
            *lower_closed_inline(em, body_olympuspr, state[cond_nconsts:]),
        ]

    ordered = has_ordered_effect(cond_olympuspr) or has_ordered_effect(body_olympuspr)
    outs = emit_while(ctx.emitter, args, ctx.avals_in, cond_block, body_block, ordered)
    return outs[nconsts:]


while_structure = Structure(
    "loop",
    ("cond_consts", "body_consts", "carry"),
    ("cond_nconsts", "body_nconsts", None),
    out_groups=("carry",),
    bodies=(
        ("cond_olympuspr", ("cond_consts", "carry")),
        ("body_olympuspr", ("body_consts", "carry")),
    ),
)
while_p = define_control_flow(
    "while", _while_abstract_eval, _while_lower, while_structure
)


# ---- while_loop and fori_loop --------------------------------------------------------
@api_boundary
def while_loop(
    cond_fun: Callable, body_fun: Callable, init_val, max_steps: int | None = None
):
    """Repeats `val = body_fun(val)` while `cond_fun(val)`, compiled as one loop.

    The loop stays in the program (it is not unrolled), so its trip count
    may depend on traced values. The carry `val` is a pytree whose types
    the body must keep. Forward mode (jvp) differentiates it; reverse mode
    needs `max_steps`, with which it becomes a masked, checkpointed scan of
    at most that many steps (forward results are those of the while loop).

    Args:
      cond_fun: maps the carry to a scalar boolean: whether to continue.
      body_fun: maps the carry to the next carry, of the same types.
      init_val: the initial carry (a pytree).
      max_steps: a Python int bounding the trip count, for reverse mode.

    Returns:
      The carry after the last iteration.

    Raises:
      OlympusTypeError: body_fun changes the carry's types, or cond_fun
        does not return a boolean scalar.

    Example:
      >>> lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)
      Array(16, dtype=int32, weak_type=True)
    """
    if max_steps is not None:
        if (
            isinstance(max_steps, bool)
            or not isinstance(max_steps, (int, np.integer))
            or max_steps < 0
        ):
            raise ValueError(
                f"while_loop: max_steps must be a non-negative Python int, got {max_steps!r}"
            )
        max_steps = int(max_steps)
    if python_mode(init_val):
        val, steps = init_val, 0
        while (max_steps is None or steps < max_steps) and bool(cond_fun(val)):
            val, steps = body_fun(val), steps + 1
        return val
    if max_steps is None:
        return _while_loop(cond_fun, body_fun, init_val, "while_loop", None)

    def bounded_cond(carry):
        steps, val = carry
        return ops.bitwise_and(ops.lt(steps, np.int32(max_steps)), cond_fun(val))

    def counted_body(carry):
        steps, val = carry
        return steps + np.int32(1), body_fun(val)

    bounded_cond.__qualname__ = function_name(cond_fun)
    counted_body.__qualname__ = function_name(body_fun)
    paths = ["steps", *tree_paths(init_val, "init_val")]
    return _while_loop(
        bounded_cond,
        counted_body,
        (np.int32(0), init_val),
        "while_loop",
        paths,
        max_steps,
    )[1]


@refs.threaded_while  # the refs the body and test use are carried
def _while_loop(cond_fun, body_fun, init_val, what: str, carry_paths, max_steps=None):
    source_info = user_source_info()
    init_leaves, tree = tree_flatten(init_val)
    body, leaves = trace_loop_body(
        body_fun, tree, init_leaves, what, source_info, carry_paths
    )
    test = trace_function(
        cond_fun, args_tree(tree), [aval_of(x) for x in leaves], f"{what} cond"
    )
    pred = test.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        got = ", ".join(a.str_short() for a in pred) or "nothing"
        raise OlympusTypeError(
            f"{what}: cond_fun must return a bool[] scalar, got {got}{where_text(source_info)}"
        )
    outs = while_p.bind(
        *test.consts,
        *body.consts,
        *leaves,
        cond_olympuspr=test.closed,
        body_olympuspr=body.closed,
        cond_nconsts=len(test.consts),
        body_nconsts=len(body.consts),
        **_bound(max_steps),
    )
    # a carry the body passes through and the test never reads is the initial
    # value itself, as JAX returns it (a Python float stays one)
    cond_reads = reads(test.closed)
    cond_carries = test.closed.olympuspr.invars[
        len(test.closed.olympuspr.invars) - len(leaves) :
    ]
    outs = [
        init if fwd and v not in cond_reads else out
        for out, init, fwd, v in zip(
            outs, init_leaves, forwarded_carries(body.closed, len(leaves)), cond_carries
        )
    ]
    return tree_unflatten(tree, outs)


def _bound(max_steps) -> dict:
    """The `max_steps` param, present only on bounded loops (so an unbounded
    loop's equation prints as before)."""
    return {} if max_steps is None else {"max_steps": max_steps}


def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@api_boundary
def fori_loop(
    lower,
    upper,
    body_fun: Callable,
    init_val,
    max_steps: int | None = None,
    *,
    unroll: int | bool | None = None,
):
    """Runs `val = body_fun(i, val)` for i in range(lower, upper).

    With Python-int bounds the trip count is static and the loop is a
    `scan` (reverse-differentiable); with traced bounds it is a `while`,
    which reverse mode can differentiate when `max_steps` bounds its trip
    count (see `while_loop`).

    Args:
      lower: the first index (an int or a scalar integer array).
      upper: one past the last index.
      body_fun: maps `(i, val)` to the next val, of the same types.
      init_val: the initial carry (a pytree).
      max_steps: a Python int bounding the trip count for traced bounds.
      unroll: iterations per trip of the compiled loop (static bounds only;
        True: all of them).

    Returns:
      The carry after the last iteration (`init_val` if upper <= lower).

    Raises:
      OlympusTypeError: body_fun changes the carry's types.
      TypeError: the bounds are not integers.

    Example:
      >>> lax.fori_loop(0, 5, lambda i, total: total + i, 0)
      Array(10, dtype=int32, weak_type=True)
    """
    if python_mode(lower, upper, init_val):
        return _fori_in_python(lower, upper, body_fun, init_val, max_steps)
    if _is_static_int(lower) and _is_static_int(upper):
        return _fori_as_scan(lower, upper, body_fun, init_val, max_steps, unroll)
    if unroll is not None:
        raise LoopUnrollError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically "
            "known; pass Python ints as lower and upper, or drop unroll="
        )
    return _fori_as_while(lower, upper, body_fun, init_val, max_steps)


def _fori_in_python(lower, upper, body_fun: Callable, init_val, max_steps):
    """fori_loop run by Python (`python_mode`: nothing traced)."""
    val, stop = init_val, int(upper)
    if max_steps is not None:
        stop = min(stop, int(lower) + int(max_steps))
    for i in range(int(lower), stop):
        val = body_fun(np.int32(i), val)
    return val


def _fori_as_scan(lower, upper, body_fun: Callable, init_val, max_steps, unroll):
    """fori_loop over static bounds: a scan of known length, which reverse
    mode differentiates. The index starts as a Python int, so it is weakly
    typed int32 (JAX's: i + 0.5 stays float32 and a Python-int carry plus i
    stays weak)."""

    def step(carry, _):
        i, val = carry
        return (i + 1, body_fun(i, val)), None

    paths = ["lower", *tree_paths(init_val, "init_val")]
    trip_count = max(int(upper) - int(lower), 0)
    if max_steps is not None:
        trip_count = min(trip_count, int(max_steps))
    step.__qualname__ = function_name(body_fun)
    steps = 1 if unroll is None else unroll
    (_, result), _ = scan_with_names(
        step, (int(lower), init_val), None, trip_count, False, steps, "fori_loop", paths
    )
    return result


def _fori_as_while(lower, upper, body_fun: Callable, init_val, max_steps):
    """fori_loop over traced bounds: a while loop carrying the index and the
    bound (reverse-differentiable only with `max_steps`)."""
    lower, upper = _loop_bounds(lower, upper)

    def keep_going(carry):
        return ops.lt(carry[0], carry[1])

    def step(carry):
        i, stop, val = carry
        return i + 1, stop, body_fun(i, val)

    step.__qualname__ = keep_going.__qualname__ = function_name(body_fun)
    if max_steps is not None:
        return while_loop(keep_going, step, (lower, upper, init_val), max_steps)[2]
    paths = ["lower", "upper", *tree_paths(init_val, "init_val")]
    carry = _while_loop(keep_going, step, (lower, upper, init_val), "fori_loop", paths)
    return carry[2]


class LoopUnrollError(ValueError):
    """fori_loop(unroll=...) with bounds known only at run time."""


def _loop_bounds(lower, upper):
    """Both bounds in one integer dtype; converted only when their dtypes differ."""
    avals = [aval_of(b) for b in (lower, upper)]
    for a in avals:
        if a.shape != () or not dtypes.is_integer(a.dtype):
            raise OlympusTypeError(
                f"fori_loop: bounds must be integer scalars, got {a.str_short()}"
            )
    if avals[0].dtype == avals[1].dtype:
        return [lower, upper]
    dtype = np.promote_types(avals[0].dtype, avals[1].dtype)
    return [convert_carry(b, dtype) for b in (lower, upper)]


# ---- transformation rules ------------------------------------------------------------
def _bind_while(cond_consts, body_consts, carry, **params) -> list:
    """Binds a while loop of the operand groups (its count parameters from them)."""
    args, counts = while_structure.pack(cond_consts, body_consts, carry)
    return while_p.bind(*args, **params, **counts)


def _while_jvp(primals, tangents, **params):
    cond_olympuspr, body_olympuspr = params["cond_olympuspr"], params["body_olympuspr"]
    cconsts, bconsts, carry = while_structure.split(params, primals)
    _, t_bconsts, t_carry = while_structure.split(params, tangents)
    bconst_nz = differentiable_mask(bconsts, t_bconsts)
    carry_nz = differentiable_mask(carry, t_carry)
    traced, _, carry_nz = loop_jvp_program(body_olympuspr, bconst_nz, carry_nz, [], 0)
    k, n, nb = len(traced.consts), len(carry), len(bconsts)
    b_k, b_consts, b_carry, b_tconsts, b_tcarry = blocks(
        k, nb, n, sum(bconst_nz), sum(carry_nz)
    )
    body = reorder(traced.closed, b_k + b_consts + b_tconsts + b_carry + b_tcarry)
    carry_t = [instantiate(t) for t in select_mask(carry_nz, t_carry)]
    test = with_ignored_invars(cond_olympuspr, [aval_of(t) for t in carry_t])
    outs = _bind_while(
        cconsts,
        [*traced.consts, *bconsts, *select_mask(bconst_nz, t_bconsts)],
        [*carry, *carry_t],
        cond_olympuspr=test,
        body_olympuspr=body,
        **_bound(params.get("max_steps")),
    )
    return outs[:n], tangents_out(outs[:n], carry_nz, outs[n:])


def _while_partial_eval(trace, args, unknown, **params):
    """The known carries run in a loop now; the whole loop is also staged (recomputing
    the known carries) for the unknown ones. Like JAX, a while loop can be
    linearized but not transposed: reverse mode needs `scan` (fori_loop with
    Python-int bounds), or the bound `max_steps`, with which the loop is
    partially evaluated as a masked scan instead."""
    cond_olympuspr, body_olympuspr = params["cond_olympuspr"], params["body_olympuspr"]
    if params.get("max_steps") is not None:
        with set_current_trace(trace):
            return _masked_scan(args, params)
    params = {k: v for k, v in params.items() if k != "max_steps"}
    known_cc, known_bc, known_carry = while_structure.split(
        params, [not u for u in unknown]
    )
    cconsts, bconsts, carry = while_structure.split(params, args)
    # The known halves use bodies with nested calls split (a nested cond taking a
    # tangent would otherwise make the primal carries it computes unknown).
    split_body, deferred, known_carry, _ = split_loop_body(
        body_olympuspr, known_bc, known_carry, [], len(carry)
    )
    split_test, test_deferred = split_nested(cond_olympuspr, known_cc + known_carry)
    cond_known = known_outputs(
        split_test.olympuspr, known_cc + known_carry, test_deferred
    )[0]
    if not cond_known or not all(known_cc) or not any(known_carry):
        return stage_all(trace, while_p, args, params)
    known_body = known_program(
        split_body, known_bc + known_carry, known_carry, [], deferred
    )
    known_test = known_program(
        split_test, known_cc + known_carry, [True], [], test_deferred
    )
    with set_current_trace(trace.parent):
        known_outs = _bind_while(
            [*known_test.consts, *cconsts],
            [*known_body.consts, *select_mask(known_bc, bconsts)],
            select_mask(known_carry, carry),
            cond_olympuspr=known_test.closed,
            body_olympuspr=known_body.closed,
        )
    staged = stage_all(trace, while_p, args, params)
    return merge(
        known_carry, known_outs, select_mask([not k for k in known_carry], staged)
    )


def _masked_scan(args, params):
    """The loop as `max_steps` steps of `carry = body(carry) if cond(carry) else
    carry` (the same result: the condition bounds the trip count), in two
    nested scans of about sqrt(max_steps) steps whose bodies are checkpointed:
    reverse mode saves one carry per outer step and, while it runs backwards
    through an outer step, one per inner step. The constants are explicit
    operands at every level (`args` are values of the partial-evaluation
    trace, which the traces of sub-programs may not close over)."""
    max_steps = params["max_steps"]
    cconsts, bconsts, carry = while_structure.split(params, args)
    consts = cconsts + bconsts
    if max_steps == 0:
        return carry
    avals = [aval_of(c) for c in carry]
    inner_steps = math.isqrt(max_steps - 1) + 1  # ceil(sqrt(max_steps))
    outer_steps = -(-max_steps // inner_steps)

    def step(*vals):  # the checkpoint's name in printed programs
        return _masked_step(params, avals, *vals)

    one = checkpoint(step)
    body, length = (
        (one, inner_steps)
        if outer_steps == 1
        else (checkpoint(_repeated(one, inner_steps, len(consts))), outer_steps)
    )
    traced = trace_sub_program(
        lambda *vals: body(*vals),
        [*(aval_of(c) for c in consts), *avals],
        DebugInfo("while as masked scan", "while_loop", ()),
    )
    operands, counts = scan_structure.pack([*traced.consts, *consts], carry, [])
    return scan_p.bind(
        *operands,
        olympuspr=traced.closed,
        **counts,
        length=length,
        reverse=False,
        linear=(False,) * len(operands),
        unroll=1,
    )


def _masked_step(params, avals, *vals) -> list:
    """One step of the masked loop: `body(carry) if cond(carry) else carry`,
    over the while's operands (constants, then the carry of types `avals`)."""
    test, body = params["cond_olympuspr"], params["body_olympuspr"]
    cconsts, bconsts, val = while_structure.split(params, vals)
    (go,) = eval_program(test.olympuspr, test.consts, [*cconsts, *val])

    def advance(val):
        new = eval_program(body.olympuspr, body.consts, [*bconsts, *val])
        return [_like(x, a) for x, a in zip(new, avals)]

    return cond(go, advance, lambda val: [_like(x, a) for x, a in zip(val, avals)], val)


def _repeated(fun, length: int, n_consts: int) -> Callable:
    """`fun(*consts, *carry) -> carry` run `length` times in a scan."""

    def loop(*vals):
        ks, init = vals[:n_consts], list(vals[n_consts:])

        def step_carry(val, _):
            return fun(*ks, *val), None

        return scan(step_carry, init, None, length=length)[0]

    return loop


def _like(x, aval):
    """`x` with the carry's type (a body may return a weak type for a strong one)."""
    if aval_of(x).weak_type == aval.weak_type:
        return x
    return convert_element_type_p.bind(
        x, new_dtype=aval.dtype, weak_type=aval.weak_type
    )


def _while_batch(axis_size, vals, dims, **params):
    cond_olympuspr, body_olympuspr = params["cond_olympuspr"], params["body_olympuspr"]
    max_steps = params.get("max_steps")
    cconsts, bconsts, carry = while_structure.split(
        params, to_front(vals, dims, axis_size)
    )
    cc_b, bc_b, carry_b = while_structure.split(
        params, [d is not not_mapped for d in dims]
    )
    carry_dims = while_structure.group(params, dims, "carry")
    body, _, carry_b = batched_carry_fixpoint(
        body_olympuspr, axis_size, bc_b, carry_b, [], 0
    )
    test, pred_b = batch_program(
        cond_olympuspr, axis_size, cc_b + carry_b, [False], "vmap"
    )
    if pred_b[0] and not all(
        carry_b
    ):  # finished examples keep their carry: all batched
        carry_b = [True] * len(carry)
        body, _ = batch_program(
            body_olympuspr, axis_size, bc_b + carry_b, carry_b, "vmap"
        )
        test, _ = batch_program(
            cond_olympuspr, axis_size, cc_b + carry_b, [False], "vmap"
        )
    carry = [
        move_batch_axis(c, axis_size, not_mapped, 0) if b and d is not_mapped else c
        for c, b, d in zip(carry, carry_b, carry_dims)
    ]
    if pred_b[0]:
        outs = _while_batched_predicate(test, body, cconsts, bconsts, carry, max_steps)
    else:
        outs = _bind_while(
            [*test.consts, *cconsts],
            [*body.consts, *bconsts],
            carry,
            cond_olympuspr=test.closed,
            body_olympuspr=body.closed,
            **_bound(max_steps),
        )
    return outs, [0 if b else not_mapped for b in carry_b]


def _while_batched_predicate(
    test: SubProgram, body: SubProgram, cconsts, bconsts, carry, max_steps=None
) -> list:
    """A loop whose predicate differs per example: it runs while any example goes
    on, and examples that have stopped keep their carry (a select per step)."""
    test_consts = [*test.consts, *cconsts]
    body_consts = [*body.consts, *bconsts]
    carry_avals = [aval_of(c) for c in carry]
    n_tc = len(test_consts)

    def any_going(*args):
        (pred,) = eval_program(test.closed.olympuspr, [], args)
        return [ops.reduce_or(pred, (0,))]

    def step(*args):
        n_bc = len(body_consts)
        tc, bc, old = args[:n_tc], args[n_tc : n_tc + n_bc], args[n_tc + n_bc :]
        (pred,) = eval_program(test.closed.olympuspr, [], [*tc, *old])
        new = eval_program(body.closed.olympuspr, [], [*bc, *old])
        return [
            ops.select(ops.broadcast_in_dim(pred, aval_of(o).shape, (0,)), n, o)
            for n, o in zip(new, old)
        ]

    debug = DebugInfo("vmap", "vmap", ())
    cond_t = trace_sub_program(
        any_going, [*(aval_of(c) for c in test_consts), *carry_avals], debug
    )
    body_t = trace_sub_program(
        step, [*(aval_of(c) for c in test_consts + body_consts), *carry_avals], debug
    )
    return _bind_while(
        [*cond_t.consts, *test_consts],
        [*body_t.consts, *test_consts, *body_consts],
        carry,
        cond_olympuspr=cond_t.closed,
        body_olympuspr=body_t.closed,
        **_bound(max_steps),
    )


class WhileLoopReverseModeError(MissingRuleError, TypeError):
    """Reverse mode met a `while` loop: its trip count is known only at run time,
    so there is no fixed set of iterations to store and run backwards."""


def _while_transpose(cts, *args, **params):
    raise WhileLoopReverseModeError(
        "reverse-mode differentiation (grad, vjp, jacrev) of lax.while_loop needs a "
        "bound on its trip count, which is known only at run time: pass "
        "max_steps=N (a Python int) to lax.while_loop (or lax.fori_loop with traced "
        "bounds, which is a while_loop too) and reverse mode differentiates at most "
        "N steps. Or use lax.scan, lax.fori_loop with Python int bounds (it becomes "
        "a scan), or forward mode (jvp, jacfwd)."
    )


jvp_rules[while_p] = _while_jvp
transpose_rules[while_p] = _while_transpose
partial_eval_rules[while_p] = _while_partial_eval
batch_rules[while_p] = _while_batch


# ---- optimizer rules: dead code and forwarding at the boundary -----------------------
def _while_dce(pruner: Pruner, eqn, used: list[bool]):
    """A carry goes when neither the result, the test nor a live part of the
    body reads it; then the constants only it needed."""
    p, structure = eqn.params, while_structure
    test, body = p["cond_olympuspr"], p["body_olympuspr"]
    test_found = pruner.dce(test.olympuspr, [True])
    test_consts, test_carry = structure.split_body_inputs(
        p, test_found[2], "cond_olympuspr"
    )
    carry, body_found = live_carry(
        pruner,
        body.olympuspr,
        used,
        [],
        lambda u: structure.split_body_inputs(p, u, "body_olympuspr")[1],
        test_carry,
    )
    body_consts = structure.split_body_inputs(p, body_found[2], "body_olympuspr")[0]
    new_test, _ = pruner.pruned(test, [True], test_consts + carry, test_found)
    new_body, _ = pruner.pruned(body, carry, body_consts + carry, body_found)
    if new_test is test and new_body is body and all(carry):
        return eqn
    keep = (test_consts, body_consts, carry)
    bodies = {"cond_olympuspr": new_test, "body_olympuspr": new_body}
    return pruned_loop(eqn, structure, keep, carry, **bodies)


dce_rules[while_p] = _while_dce
forwarding_rules[while_p] = carry_forwards("body_olympuspr")
