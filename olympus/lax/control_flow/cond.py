"""`cond` / `switch`: the `cond` primitive, a run-time choice among branches.

The branch index is an i32 scalar (a boolean predicate becomes 0 or 1, a
switch index is clamped into range); `branches` holds one ClosedOlympuspr per
branch, all taking the same operands (every branch's constants, then the
user's operands) and returning the same types. It lowers to `stablehlo.case`.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from olympus.tracer.tracebacks import api_boundary
from olympus.ir import dtypes
from olympus.ir.analysis import known_outputs, residual_vars
from olympus.ir.core import Literal, ShapedArray, Var
from olympus.backends.xla.lowering import TOKEN_TYPE, lower_closed_inline, tensor_type
from olympus.ir.effects import has_ordered_effect
from olympus.ir.pruning import Pruner, dce_rules, forwarding_rules, select
from olympus.ir.structure import Structure
from olympus.lax import ops
from olympus.lax.custom_derivatives import stop_gradient_p
from olympus.lax.control_flow.subprograms import (
    BranchTypeError,
    common_consts,
    differentiable_mask,
    define_control_flow,
    leaf_paths,
    merge,
    python_mode,
    run_batched,
    split_batch_avals,
    same_type,
    same_types,
    select_mask,
    stage_all,
    tangents_out,
    to_front,
    trace_function,
    where_text,
)
from olympus.tracer.core import aval_of, set_current_trace, user_source_info
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer import refs
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import SubProgram
from olympus.transforms.batching import (
    batch_rules,
    batch_to_front,
    broadcast_batch,
    not_mapped,
)
from olympus.transforms.ad_util import instantiate
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import (
    is_undefined,
    partial_eval_rules,
    transpose_rules,
)
from olympus.transforms.programs import (
    batch_program,
    jvp_program,
    known_program,
    split_nested,
    transpose_program,
    unknown_program,
)


# ---- the primitive -------------------------------------------------------------------
def _cond_abstract_eval(index: ShapedArray, *operands: ShapedArray, branches, linear):
    if index.shape != () or index.dtype != dtypes.int32:
        raise OlympusTypeError(
            f"cond: the branch index must be an i32[] scalar, got {index.str_short()}"
        )
    if len(linear) != len(operands):
        raise OlympusTypeError(
            f"cond: linear has {len(linear)} entries for {len(operands)} operands"
        )
    for i, branch in enumerate(branches):
        want = branch.in_avals
        if len(want) != len(operands) or not same_types(operands, want):
            got = ", ".join(a.str_short() for a in operands)
            raise OlympusTypeError(
                f"cond: branch {i} takes ({', '.join(a.str_short() for a in want)}), "
                f"given ({got})"
            )
        if not same_types(branch.out_avals, branches[0].out_avals):
            raise OlympusTypeError(
                f"cond: branch {i} returns other types than branch 0"
            )
    # typed as branch 0 returns (JAX's), weak types too
    return list(branches[0].out_avals)


def _cond_lower(ctx, index, *operands, branches, linear):
    if any(map(has_ordered_effect, branches)):
        return _cond_lower_ordered(ctx, index, operands, branches)

    def branch_region(branch):
        return ctx.emitter.region(
            [], lambda em: lower_closed_inline(em, branch, operands)
        )

    regions = [branch_region(b) for b in branches]
    return ctx.emitter.op("stablehlo.case", [index], ctx.avals_out, regions=regions)


def _cond_lower_ordered(ctx, index, operands, branches):
    """A `case` whose branches continue the ordering token and return it first."""
    outer = ctx.emitter

    def build(branch):
        def block(em):
            em.token = outer.token
            outs = lower_closed_inline(em, branch, operands)
            return [em.token, *outs]

        return outer.region([], block)

    regions = [build(b) for b in branches]
    types = [TOKEN_TYPE, *map(tensor_type, ctx.avals_out)]
    outer.token, *outs = outer.op_typed(
        "stablehlo.case", [index], types, regions=regions
    )
    return outs


cond_structure = Structure(
    "switch",
    ("index", "operands"),
    (1, None),
    bodies=(("branches", ("operands",)),),
    per_operand=(("linear", ("operands",)),),
)
cond_p = define_control_flow("cond", _cond_abstract_eval, _cond_lower, cond_structure)


# ---- cond and switch -----------------------------------------------------------------
def _check_branch_outputs(traced: Sequence[SubProgram], names, source_info) -> None:
    """Every branch must return what the first returns (`names` as the user knows them)."""
    first, what = traced[0], "cond" if names[0] == "false_fun" else "switch"
    for name, t in zip(names[1:], traced[1:]):
        if t.out_tree != first.out_tree:
            raise BranchTypeError(
                f"{what}: {name} returns {t.out_tree}, {names[0]} returns "
                f"{first.out_tree}; every branch must return the same structure"
                f"{where_text(source_info)}"
            )
        paths = leaf_paths(first.out_tree, "output")
        for path, a, b in zip(paths, first.out_avals, t.out_avals):
            if not same_type(a, b):
                raise BranchTypeError(
                    f"{what}: {names[0]} returns {a.str_short()} at {path} but {name} "
                    f"returns {b.str_short()}; branches must agree in shape and dtype"
                    f"{where_text(source_info)}"
                )


@refs.threaded_cond  # the refs the branches use are operands and outputs
def _bind_cond(
    index, branch_funs: Sequence[Callable], names, operands: tuple, source_info
):
    leaves, in_tree = tree_flatten(operands)
    avals = [aval_of(x) for x in leaves]
    traced = [trace_function(f, in_tree, avals, "cond branch") for f in branch_funs]
    _check_branch_outputs(traced, names, source_info)
    consts, branches = common_consts(traced)
    args = [*consts, *leaves]
    outs = cond_p.bind(
        index, *args, branches=tuple(branches), linear=(False,) * len(args)
    )
    return tree_unflatten(traced[0].out_tree, outs)


def _branch_index_from_pred(pred, source_info):
    aval = aval_of(pred)
    if aval.shape != ():
        raise OlympusTypeError(
            f"cond: the predicate must be a scalar, got {aval.str_short()}{where_text(source_info)}"
        )
    if aval.dtype != dtypes.bool_:
        if not dtypes.is_integer(aval.dtype) and not dtypes.is_inexact(aval.dtype):
            raise OlympusTypeError(
                f"cond: the predicate must be boolean or a number, got {aval.str_short()}"
                f"{where_text(source_info)}"
            )
        pred = ops.ne(pred, np.zeros((), aval.dtype)[()])
    return ops.convert_element_type(pred, dtypes.int32)


_NO_OPERAND = object()


class CondOperandError(TypeError):
    """cond or switch given both positional operands and JAX's old `operand=`
    keyword."""


@api_boundary
def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_NO_OPERAND):
    """Runs `true_fun(*operands)` if `pred` else `false_fun(*operands)`, at run time.

    Unlike a Python `if`, the choice is made by the compiled program, so
    `pred` may be a traced value. Both branches are traced and must return
    the same types; the program holds one `cond` equation whose branches are
    (false_fun, true_fun). JAX's older forms `cond(pred, true_fun,
    false_fun, operand=x)` and `cond(pred, true_operand, true_fun,
    false_operand, false_fun)` are taken too.

    Args:
      pred: a scalar boolean (or a number, compared with 0).
      true_fun: the function run when pred is true.
      false_fun: the function run when pred is false.
      *operands: the arguments passed to the chosen branch (pytrees).
      operand: JAX's older single operand, by keyword.

    Returns:
      The chosen branch's result.

    Raises:
      BranchTypeError: the branches return different structures, shapes or
        dtypes.
      TypeError: pred is not a scalar.

    Example:
      >>> x = jnp.float32(3.0)
      >>> lax.cond(x > 0, lambda x: x * 2.0, lambda x: -x, x)
      Array(6., dtype=float32)
    """
    if (
        not callable(true_fun)
        and callable(false_fun)
        and len(operands) == 2
        and callable(operands[1])
    ):
        x_true, f_true, (x_false, f_false) = true_fun, false_fun, operands
        return cond(
            pred, lambda xs: f_true(xs[0]), lambda xs: f_false(xs[1]), (x_true, x_false)
        )
    if operand is not _NO_OPERAND:
        if operands:
            raise CondOperandError(
                "cond: got positional operands and operand=; pass the operands "
                "positionally only, as cond(pred, true_fun, false_fun, *operands)"
            )
        operands = (operand,)
    if python_mode(pred, operands):
        return (true_fun if bool(pred) else false_fun)(*operands)
    source_info = user_source_info()
    index = _branch_index_from_pred(pred, source_info)
    names = ("false_fun", "true_fun")
    return _bind_cond(index, (false_fun, true_fun), names, operands, source_info)


@api_boundary
def switch(index, branches: Sequence[Callable], *operands, operand=_NO_OPERAND):
    """Runs `branches[index](*operands)`, the branch chosen at run time.

    A multi-way cond: `index` may be traced; it is clamped into
    range(len(branches)), so an out-of-range index runs the first or last
    branch. All branches are traced and must return the same types.

    Args:
      index: a scalar integer.
      branches: a sequence of functions taking `*operands`.
      *operands: the arguments passed to the chosen branch.
      operand: the one argument, by keyword (JAX's older form), instead of
        `*operands`.

    Returns:
      The chosen branch's result.

    Raises:
      BranchTypeError: branches return different structures, shapes or dtypes.
      CondOperandError: operands were given both ways (a TypeError).
      ValueError: `branches` is empty.

    Example:
      >>> lax.switch(1, [lambda x: x + 1.0, lambda x: x - 2.0], jnp.float32(5.0))
      Array(3., dtype=float32)
    """
    source_info = user_source_info()
    if operand is not _NO_OPERAND:
        if operands:
            raise CondOperandError(
                f"switch: operands were given positionally ({len(operands)}) and "
                f"as operand=; pass them one way{where_text(source_info)}"
            )
        operands = (operand,)
    branches = list(branches)
    if not branches:
        raise ValueError("switch: needs at least one branch")
    aval = aval_of(index)
    if aval.shape != () or not dtypes.is_integer(aval.dtype):
        raise OlympusTypeError(
            f"switch: the index must be an integer scalar, got {aval.str_short()}"
            f"{where_text(source_info)}"
        )
    if python_mode(index, operands):
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)
    index = ops.convert_element_type(index, dtypes.int32)
    if len(branches) == 1:
        return branches[0](*operands)
    index = ops.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    names = [f"branches[{i}]" for i in range(len(branches))]
    return _bind_cond(index, branches, names, operands, source_info)


# ---- transformation rules ------------------------------------------------------------
def _index_and_operands(values) -> tuple:
    """(the index's value, the operands' values) of a per-operand list."""
    (index,), operands = cond_structure.split({}, values)
    return index, operands


def _cond_jvp(primals, tangents, *, branches, linear):
    index, operands = _index_and_operands(primals)
    op_tangents = _index_and_operands(tangents)[1]
    nonzero = differentiable_mask(operands, op_tangents)
    n_out = len(branches[0].out_avals)
    jvps = [jvp_program(b, nonzero, "jvp", [True] * n_out) for b in branches]
    out_nz = jvps[0][1]
    consts, programs = common_consts([t for t, _ in jvps])
    op_tangents = [instantiate(t) for t in select_mask(nonzero, op_tangents)]
    args = [*consts, *operands, *op_tangents]
    outs = cond_p.bind(
        index, *args, branches=tuple(programs), linear=(False,) * len(args)
    )
    primal_out = outs[:n_out]
    return primal_out, tangents_out(primal_out, out_nz, outs[n_out:])


def _cond_partial_eval(trace, args, unknown, *, branches, linear):
    index_unknown, unknown_operands = _index_and_operands(unknown)
    if index_unknown:
        return stage_all(trace, cond_p, args, dict(branches=branches, linear=linear))
    index, operands = _index_and_operands(args)
    known_in = [not u for u in unknown_operands]
    splits = [split_nested(b, known_in) for b in branches]
    branches = tuple(b for b, _ in splits)
    deferred = [d for _, d in splits]
    known_out = [
        all(ks)
        for ks in zip(
            *(
                known_outputs(b.olympuspr, known_in, d)
                for b, d in zip(branches, deferred)
            )
        )
    ]
    own = [
        residual_vars(b.olympuspr, known_in, known_out, d)
        for b, d in zip(branches, deferred)
    ]
    # Every branch returns every branch's residuals (zeros for the others').
    slots = [
        [r if i == j else r.aval for j, rs in enumerate(own) for r in rs]
        for i in range(len(branches))
    ]
    known = [
        known_program(b, known_in, known_out, s, d)
        for b, s, d in zip(branches, slots, deferred)
    ]
    consts, known_branches = common_consts(known)
    known_args = [*consts, *select_mask(known_in, operands)]
    with set_current_trace(trace.parent):
        outs = cond_p.bind(
            index,
            *known_args,
            branches=tuple(known_branches),
            linear=(False,) * len(known_args),
        )
    n_known = sum(known_out)
    known_outs, residuals = outs[:n_known], outs[n_known:]
    unknown_branches = []
    for b, s, d in zip(branches, slots, deferred):
        res_invars = [r if isinstance(r, Var) else Var(r) for r in s]
        unknown_branches.append(unknown_program(b, known_in, known_out, res_invars, d))
    unknown_operands = select_mask(unknown_operands, operands)
    staged_args = [*residuals, *unknown_operands]
    linear = (False,) * len(residuals) + (True,) * len(unknown_operands)  # tangents
    with set_current_trace(trace.tangent_trace):
        unknown_outs = cond_p.bind(
            index, *staged_args, branches=tuple(unknown_branches), linear=linear
        )
    return merge(known_out, known_outs, unknown_outs)


def _cond_transpose(cts, index, *operands, branches, linear):
    residual_mask = [not is_undefined(x) for x in operands]
    residuals = select_mask(residual_mask, operands)
    cts = [instantiate(ct) for ct in cts]
    res_avals = [aval_of(r) for r in residuals]
    ct_avals = [aval_of(ct) for ct in cts]
    undefined = [not r for r in residual_mask]
    transposed = [
        transpose_program(
            b, undefined, [True] * len(cts), "transpose", res_avals + ct_avals
        )
        for b in branches
    ]
    consts, programs = common_consts(transposed)
    args = [*consts, *residuals, *cts]
    linear = (False,) * (len(consts) + len(residuals)) + (True,) * len(cts)
    outs = iter(cond_p.bind(index, *args, branches=tuple(programs), linear=linear))
    return [None] + [None if r else next(outs) for r in residual_mask]


def _cond_batch(axis_size, vals, dims, *, branches, linear):
    index, operands = _index_and_operands(vals)
    index_dim, dims = _index_and_operands(dims)
    operands = to_front(operands, dims, axis_size)
    in_batched = [d is not not_mapped for d in dims]
    n_out = len(branches[0].out_avals)
    if index_dim is not_mapped:
        avals = [aval_of(x) for x in operands]
        batched = [
            batch_program(
                b,
                axis_size,
                in_batched,
                [True] * n_out,
                "vmap",
                split_batch_avals(b, axis_size, in_batched, avals),
            )[0]
            for b in branches
        ]
        consts, programs = common_consts(batched)
        args = [*consts, *operands]
        outs = cond_p.bind(
            index, *args, branches=tuple(programs), linear=(False,) * len(args)
        )
        return outs, [0] * n_out
    # A predicate per example: every branch runs on the whole batch, select_n picks.
    index = batch_to_front(index, axis_size, index_dim)
    # Every float operand gets the batch axis, so each example's can be masked.
    operands = [
        broadcast_batch(x, axis_size, 0)
        if not b and dtypes.is_inexact(aval_of(x).dtype)
        else x
        for x, b in zip(operands, in_batched)
    ]
    in_batched = [
        b or dtypes.is_inexact(aval_of(x).dtype) for x, b in zip(operands, in_batched)
    ]
    per_branch = [
        run_batched(b, axis_size, in_batched, _taken_only(index, i, operands), n_out)
        for i, b in enumerate(branches)
    ]
    results = []
    for cases in zip(*per_branch):
        which = ops.broadcast_in_dim(index, aval_of(cases[0]).shape, (0,))
        results.append(ops.select_n(which, *cases))
    return results, [0] * n_out


def _taken_only(index, i: int, operands) -> list:
    """Branch i's operands, differentiable only in the examples that take it
    (stop_gradient elsewhere, as JAX): an untaken branch's NaN derivative, as
    sqrt's at -1, then never meets a zero cotangent to make NaN * 0."""
    taken = ops.eq(index, np.asarray(i, aval_of(index).dtype)[()])
    selected = []
    for x in operands:
        aval = aval_of(x)
        if not dtypes.is_inexact(aval.dtype):
            selected.append(x)
            continue
        which = ops.broadcast_in_dim(taken, aval.shape, (0,))
        selected.append(ops.select(which, x, stop_gradient_p.bind(x)))
    return selected


jvp_rules[cond_p] = _cond_jvp
partial_eval_rules[cond_p] = _cond_partial_eval
transpose_rules[cond_p] = _cond_transpose
batch_rules[cond_p] = _cond_batch


# ---- optimizer rules: dead code and forwarding at the boundary -----------------------
def _literal_key(x: Literal):
    return (x.aval, np.asarray(x.val, x.aval.dtype).tobytes())


def _cond_dce(pruner: Pruner, eqn, used: list[bool]):
    """Each branch computes only the used outputs; an operand goes when no
    branch reads it."""
    branches = eqn.params["branches"]
    found = [pruner.dce(b.olympuspr, used) for b in branches]
    keep = [any(flags) for flags in zip(*(f[2] for f in found))]
    new_branches = tuple(
        pruner.pruned(b, used, keep, f)[0] for b, f in zip(branches, found)
    )
    if all(a is b for a, b in zip(new_branches, branches)) and all(used):
        return eqn
    params = {
        **eqn.params,
        "branches": new_branches,
        "linear": tuple(select(keep, eqn.params["linear"])),
    }
    (index,), operands = cond_structure.split(eqn.params, eqn.invars)
    return eqn._replace(
        params=params,
        invars=[index, *select(keep, operands)],
        outvars=select(used, eqn.outvars),
    )


def _cond_forwards(eqn) -> list:
    """An output every branch takes from the same operand, or the same literal."""
    programs = [b.olympuspr for b in eqn.params["branches"]]
    positions = [{v: i for i, v in enumerate(p.invars)} for p in programs]
    _, operands = cond_structure.split(eqn.params, eqn.invars)
    found = []
    for k, out in enumerate(eqn.outvars):
        inners = [p.outvars[k] for p in programs]
        if all(isinstance(x, Literal) for x in inners):
            if len({_literal_key(x) for x in inners}) == 1:
                found.append((out, inners[0]))
            continue
        where = {
            pos.get(x) if isinstance(x, Var) else None
            for x, pos in zip(inners, positions)
        }
        if len(where) == 1 and None not in where:
            found.append((out, operands[where.pop()]))
    return found


dce_rules[cond_p] = _cond_dce
forwarding_rules[cond_p] = _cond_forwards
