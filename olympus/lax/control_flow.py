"""Structured control flow: the `cond`, `while` and `scan` primitives.

Python `if` and `for` run while tracing and leave no trace of themselves; to
keep a value-dependent choice or a loop in the program, the user calls
`cond` / `switch`, `while_loop` / `fori_loop` or `scan` / `map`. Each traces its
function arguments into sub-olympusprs (held as ClosedOlympuspr params, with
their constants turned into leading operands) and binds one equation:

    cond[branches=(...) linear=(...)]          index, *operands
    while[cond_olympuspr body_olympuspr ...]   *cond_consts, *body_consts, *carry
    scan[olympuspr length reverse ...]         *consts, *carry, *xs

Each primitive's shape rule, lowering (`stablehlo.case`, `stablehlo.while`)
and transformation rules sit beside its definition.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ClosedOlympuspr, Olympuspr, ShapedArray, Var
from olympus.backends.xla.lowering import i64_array, lower_closed_inline, tensor_type
from olympus.lax import ops
from olympus.lax.base import define_primitive
from olympus.tracer.core import Tracer, aval_of, user_source_info
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.pytree import PyTreeDef, tree_flatten, tree_paths, tree_unflatten
from olympus.tracer.staging import DebugInfo, consts_as_invars, function_name, trace_to_olympuspr


class BranchTypeError(OlympusTypeError):
    """The branches of a cond/switch return different types or structures."""


class CarryTypeError(OlympusTypeError):
    """A loop body returns a carry of another type than it was given."""


class ScanLengthError(OlympusTypeError):
    """The arrays scanned over disagree on their leading axis (the length)."""


# ---- tracing function arguments into sub-olympusprs ---------------------------
class Traced:
    """A function traced on flat abstract arguments: program, constants, output tree.

    `closed` has the constants as leading invars (and no consts of its own), so
    the constants become operands of the equation that holds it.
    """

    __slots__ = ("closed", "consts", "out_tree")

    def __init__(self, closed: ClosedOlympuspr, consts: list, out_tree):
        self.closed = closed
        self.consts = consts
        self.out_tree = out_tree

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.closed.out_avals


def _check_leaf(x, what: str):
    if isinstance(x, (Tracer, bool, int, float, complex)) or hasattr(x, "__array__"):
        return x
    raise OlympusTypeError(
        f"{what} returned a {type(x).__name__} ({x!r:.40}); it must return arrays, "
        f"scalars or pytrees of them"
    )


def trace_function(fun: Callable, in_tree, in_avals: Sequence[ShapedArray], what: str) -> Traced:
    """Traces `fun(*unflatten(in_tree, args))` on abstract flat arguments.

    `in_tree` is the treedef of the tuple of `fun`'s positional arguments.
    """
    out_trees = []

    def flat_fun(*args):
        out = fun(*tree_unflatten(in_tree, args))
        leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return [_check_leaf(x, what) for x in leaves]

    debug = DebugInfo(what, function_name(fun), tuple(f"#{i}" for i in range(len(in_avals))))
    olympuspr, consts, _ = trace_to_olympuspr(flat_fun, in_avals, debug)
    closed = ClosedOlympuspr(consts_as_invars(olympuspr), [])
    return Traced(closed, consts, out_trees[0])


def _where(source_info) -> str:
    return f"\n  at {source_info}" if source_info is not None else ""


def _leaf_paths(treedef, prefix: str) -> list[str]:
    return tree_paths(tree_unflatten(treedef, [0] * treedef.num_leaves), prefix)


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _same_types(xs: Sequence[ShapedArray], ys: Sequence[ShapedArray]) -> bool:
    return len(xs) == len(ys) and all(_same_type(a, b) for a, b in zip(xs, ys))


def _join_weak(avals_list) -> list[ShapedArray]:
    """Weak only where every alternative is weak (a strong one fixes the dtype)."""
    return [
        group[0].update(weak_type=all(a.weak_type for a in group)) for group in zip(*avals_list)
    ]


# ---- cond ----------------------------------------------------------------------
def _cond_abstract_eval(index: ShapedArray, *operands: ShapedArray, branches, linear):
    if index.shape != () or index.dtype != dtypes.int32:
        raise OlympusTypeError(f"cond: the branch index must be an i32[] scalar, got {index.str_short()}")
    if len(linear) != len(operands):
        raise OlympusTypeError(f"cond: linear has {len(linear)} entries for {len(operands)} operands")
    for i, branch in enumerate(branches):
        want = branch.in_avals
        if len(want) != len(operands) or not _same_types(operands, want):
            got = ", ".join(a.str_short() for a in operands)
            raise OlympusTypeError(
                f"cond: branch {i} takes ({', '.join(a.str_short() for a in want)}), "
                f"given ({got})"
            )
        if not _same_types(branch.out_avals, branches[0].out_avals):
            raise OlympusTypeError(f"cond: branch {i} returns other types than branch 0")
    return _join_weak([b.out_avals for b in branches])


def _cond_lower(ctx, index, *operands, branches, linear):
    def branch_region(branch):
        return ctx.emitter.region([], lambda em: lower_closed_inline(em, branch, operands))

    regions = [branch_region(b) for b in branches]
    return ctx.emitter.op("stablehlo.case", [index], ctx.avals_out, regions=regions)


cond_p = define_primitive("cond", _cond_abstract_eval, _cond_lower, multiple_results=True)


def _common_consts(traced: Sequence[Traced]) -> tuple[list, list[ClosedOlympuspr]]:
    """One constant list for all branches: each branch takes all of them.

    A branch ignores the constants of the others (fresh, unused invars), so
    every branch has the same signature `(*consts, *operands)`.
    """
    consts, slots = [], {}
    for t in traced:
        for c in t.consts:
            if id(c) not in slots:
                slots[id(c)] = len(consts)
                consts.append(c)
    branches = []
    for t in traced:
        olympuspr = t.closed.olympuspr
        own = dict(zip((slots[id(c)] for c in t.consts), olympuspr.invars))
        const_vars = [own.get(i) or Var(aval_of(c)) for i, c in enumerate(consts)]
        operand_vars = olympuspr.invars[len(t.consts):]
        program = Olympuspr([], const_vars + operand_vars, olympuspr.eqns, olympuspr.outvars,
                            olympuspr.debug_info)
        branches.append(ClosedOlympuspr(program, []))
    return consts, branches


def _check_branch_outputs(traced: Sequence[Traced], source_info) -> None:
    first = traced[0]
    for i, t in enumerate(traced[1:], start=1):
        if t.out_tree != first.out_tree:
            raise BranchTypeError(
                f"cond/switch: branch {i} returns {t.out_tree}, branch 0 returns "
                f"{first.out_tree}; every branch must return the same structure"
                f"{_where(source_info)}"
            )
        paths = _leaf_paths(first.out_tree, "output")
        for path, a, b in zip(paths, first.out_avals, t.out_avals):
            if not _same_type(a, b):
                raise BranchTypeError(
                    f"cond/switch: branch 0 returns {a.str_short()} at {path} but branch "
                    f"{i} returns {b.str_short()}; branches must agree in shape and dtype"
                    f"{_where(source_info)}"
                )


def _bind_cond(index, branch_funs: Sequence[Callable], operands: tuple, source_info):
    leaves, in_tree = tree_flatten(operands)
    avals = [aval_of(x) for x in leaves]
    traced = [trace_function(f, in_tree, avals, "cond branch") for f in branch_funs]
    _check_branch_outputs(traced, source_info)
    consts, branches = _common_consts(traced)
    args = [*consts, *leaves]
    outs = cond_p.bind(index, *args, branches=tuple(branches), linear=(False,) * len(args))
    return tree_unflatten(traced[0].out_tree, outs)


def _branch_index_from_pred(pred, source_info):
    aval = aval_of(pred)
    if aval.shape != ():
        raise OlympusTypeError(
            f"cond: the predicate must be a scalar, got {aval.str_short()}{_where(source_info)}"
        )
    if aval.dtype != dtypes.bool_:
        if not dtypes.is_integer(aval.dtype) and not dtypes.is_inexact(aval.dtype):
            raise OlympusTypeError(
                f"cond: the predicate must be boolean or a number, got {aval.str_short()}"
                f"{_where(source_info)}"
            )
        pred = ops.ne(pred, np.zeros((), aval.dtype)[()])
    return ops.convert_element_type(pred, dtypes.int32)


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, decided at run time.

    Both branches are traced and must return the same types; the program keeps
    one `cond` equation whose branches are (false_fun, true_fun).

    >>> lax.cond(x > 0, lambda x: x * 2.0, lambda x: -x, x)
    """
    source_info = user_source_info()
    index = _branch_index_from_pred(pred, source_info)
    return _bind_cond(index, (false_fun, true_fun), operands, source_info)


def switch(index, branches: Sequence[Callable], *operands):
    """`branches[index](*operands)`, the index clamped into range, chosen at run time.

    >>> lax.switch(i, [lambda x: x + 1.0, lambda x: x - 2.0], x)
    """
    source_info = user_source_info()
    branches = list(branches)
    if not branches:
        raise ValueError("switch: needs at least one branch")
    aval = aval_of(index)
    if aval.shape != () or not dtypes.is_integer(aval.dtype):
        raise OlympusTypeError(
            f"switch: the index must be an integer scalar, got {aval.str_short()}"
            f"{_where(source_info)}"
        )
    index = ops.convert_element_type(index, dtypes.int32)
    if len(branches) == 1:
        return branches[0](*operands)
    index = ops.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _bind_cond(index, branches, operands, source_info)


# ---- loop carries --------------------------------------------------------------
def _promote_weak_carry(init_leaves: list, out_avals: Sequence[ShapedArray]) -> tuple[list, bool]:
    """Gives weak-typed initial carries (Python scalars) the type the body returns.

    `fori_loop(0, n, f, 0.0)` starts from a weak f32 that the body turns into a
    strong f32; the carry then has the body's type from the start.
    """
    changed = False
    promoted = []
    for x, out in zip(init_leaves, out_avals):
        aval = aval_of(x)
        if aval.weak_type and aval.shape == out.shape and (
            aval.dtype != out.dtype or not out.weak_type
        ):
            x = _convert_carry(x, out.dtype)
            changed = True
        promoted.append(x)
    return promoted, changed


def _convert_carry(x, dtype):
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        return np.asarray(x, dtype=dtype)[()] if np.ndim(x) == 0 else np.asarray(x, dtype)
    return ops.convert_element_type(x, dtype)


def _check_carry(what: str, tree, out_tree, in_avals, out_avals, source_info) -> None:
    if out_tree != tree:
        raise CarryTypeError(
            f"{what}: the body returns a carry of structure {out_tree}, but the carry "
            f"is {tree}; the body must return the carry's structure{_where(source_info)}"
        )
    for path, a, b in zip(_leaf_paths(tree, "carry"), in_avals, out_avals):
        if not _same_type(a, b):
            raise CarryTypeError(
                f"{what}: carry leaf {path} enters the body as {a.str_short()} but "
                f"the body returns {b.str_short()}; a loop carry must keep its shape "
                f"and dtype (convert it with .astype){_where(source_info)}"
            )


# ---- while -----------------------------------------------------------------------
def _while_abstract_eval(*args, cond_olympuspr, body_olympuspr, cond_nconsts, body_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    cond_in = args[:cond_nconsts] + carry
    body_in = args[cond_nconsts:]
    for name, program, given in (("cond", cond_olympuspr, cond_in), ("body", body_olympuspr, body_in)):
        if len(program.in_avals) != len(given) or not _same_types(program.in_avals, given):
            raise OlympusTypeError(f"while: {name}_olympuspr does not take the given operands")
    pred = cond_olympuspr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise OlympusTypeError("while: cond_olympuspr must return one bool[] scalar")
    out = body_olympuspr.out_avals
    if len(out) != len(carry) or not _same_types(out, carry):
        raise OlympusTypeError("while: body_olympuspr must return the carry's types")
    return _join_weak([carry, out])


def _while_lower(ctx, *args, cond_olympuspr, body_olympuspr, cond_nconsts, body_nconsts):
    nconsts = cond_nconsts + body_nconsts

    def cond_block(em, *state):
        cond_args = state[:cond_nconsts] + state[nconsts:]
        return lower_closed_inline(em, cond_olympuspr, cond_args)

    def body_block(em, *state):
        return [*state[:nconsts], *lower_closed_inline(em, body_olympuspr, state[cond_nconsts:])]

    avals = ctx.avals_in
    regions = [ctx.emitter.region(avals, cond_block), ctx.emitter.region(avals, body_block)]
    outs = ctx.emitter.op("stablehlo.while", list(args), avals, regions=regions)
    return outs[nconsts:]


while_p = define_primitive("while", _while_abstract_eval, _while_lower, multiple_results=True)


def _trace_loop_body(fun, tree, leaves, what, source_info):
    """Traces a carry -> carry body, first promoting weak initial carries."""
    in_tree = args_tree(tree)
    traced = trace_function(fun, in_tree, [aval_of(x) for x in leaves], what)
    leaves, changed = _promote_weak_carry(leaves, traced.out_avals)
    if changed:
        traced = trace_function(fun, in_tree, [aval_of(x) for x in leaves], what)
    _check_carry(what, tree, traced.out_tree, [aval_of(x) for x in leaves],
                 traced.out_avals, source_info)
    return traced, leaves


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """Repeats `val = body_fun(val)` while `cond_fun(val)`; returns the last `val`.

    The carry `val` is a pytree whose types the body must preserve.

    >>> lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)
    """
    source_info = user_source_info()
    leaves, tree = tree_flatten(init_val)
    body, leaves = _trace_loop_body(body_fun, tree, leaves, "while_loop body",
                                    source_info)
    test = trace_function(cond_fun, args_tree(tree), [aval_of(x) for x in leaves], "while_loop cond")
    pred = test.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        got = ", ".join(a.str_short() for a in pred) or "nothing"
        raise OlympusTypeError(
            f"while_loop: cond_fun must return a bool[] scalar, got {got}{_where(source_info)}"
        )
    outs = while_p.bind(
        *test.consts, *body.consts, *leaves,
        cond_olympuspr=test.closed, body_olympuspr=body.closed,
        cond_nconsts=len(test.consts), body_nconsts=len(body.consts),
    )
    return tree_unflatten(tree, outs)


def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def fori_loop(lower, upper, body_fun: Callable, init_val):
    """`val = body_fun(i, val)` for i in range(lower, upper); returns the last `val`.

    With Python-int bounds the trip count is static and the loop is a `scan`
    (reverse-differentiable); with traced bounds it is a `while`.
    """
    if _is_static_int(lower) and _is_static_int(upper):
        index = np.int32(lower)

        def step(carry, _):
            i, val = carry
            return (i + np.int32(1), body_fun(i, val)), None

        (_, result), _ = scan(step, (index, init_val), None, length=max(int(upper) - int(lower), 0))
        return result
    lower, upper = _loop_bounds(lower, upper)

    def keep_going(carry):
        return ops.lt(carry[0], carry[1])

    def step(carry):
        i, stop, val = carry
        return i + 1, stop, body_fun(i, val)

    return while_loop(keep_going, step, (lower, upper, init_val))[2]


def _loop_bounds(lower, upper):
    """Both bounds in one integer dtype; converted only when their dtypes differ."""
    avals = [aval_of(b) for b in (lower, upper)]
    for a in avals:
        if a.shape != () or not dtypes.is_integer(a.dtype):
            raise OlympusTypeError(f"fori_loop: bounds must be integer scalars, got {a.str_short()}")
    if avals[0].dtype == avals[1].dtype:
        return [lower, upper]
    dtype = np.promote_types(avals[0].dtype, avals[1].dtype)
    return [_convert_carry(b, dtype) for b in (lower, upper)]


# ---- scan ------------------------------------------------------------------------
def _scan_abstract_eval(*args, olympuspr, num_consts, num_carry, length, reverse, linear, unroll):
    if len(linear) != len(args):
        raise OlympusTypeError(f"scan: linear has {len(linear)} entries for {len(args)} operands")
    xs = args[num_consts + num_carry:]
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            raise OlympusTypeError(f"scan: scanned operand {x.str_short()} has no leading axis of {length}")
    given = list(args[:num_consts + num_carry]) + [x.update(shape=x.shape[1:]) for x in xs]
    if len(given) != len(olympuspr.in_avals) or not _same_types(olympuspr.in_avals, given):
        raise OlympusTypeError("scan: the body does not take the given operands")
    carry = args[num_consts:num_consts + num_carry]
    out = olympuspr.out_avals
    if not _same_types(out[:num_carry], carry):
        raise OlympusTypeError("scan: the body must return the carry's types")
    ys = [y.update(shape=(length, *y.shape)) for y in out[num_carry:]]
    return _join_weak([carry, out[:num_carry]]) + ys


_I32 = ShapedArray((), dtypes.int32)


def _i32(em, value: int) -> str:
    return em.constant(np.int32(value), _I32)


def _slice_at(em, stacked: str, aval: ShapedArray, index: str) -> str:
    """`stacked[index]`: one element along the leading axis."""
    zeros = [_i32(em, 0) for _ in aval.shape[1:]]
    sizes = (1, *aval.shape[1:])
    (row,) = em.op("stablehlo.dynamic_slice", [stacked, index, *zeros], [aval.update(shape=sizes)],
                   f"slice_sizes = {i64_array(sizes)}")
    return em.op("stablehlo.reshape", [row], [aval.update(shape=aval.shape[1:])])[0]


def _update_at(em, stacked: str, aval: ShapedArray, value: str, index: str) -> str:
    """`stacked.at[index].set(value)` along the leading axis."""
    (row,) = em.op("stablehlo.reshape", [value], [aval.update(shape=(1, *aval.shape[1:]))])
    zeros = [_i32(em, 0) for _ in aval.shape[1:]]
    return em.op("stablehlo.dynamic_update_slice", [stacked, row, index, *zeros], [aval])[0]


def _compare_i32(em, x: str, y: str, direction: str) -> str:
    attrs = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type SIGNED>")
    return em.op("stablehlo.compare", [x, y], [ShapedArray((), dtypes.bool_)], attrs)[0]


def _scan_lower(ctx, *args, olympuspr, num_consts, num_carry, length, reverse, linear, unroll):
    """A while loop over an i32 counter; xs are sliced and ys updated in place."""
    em = ctx.emitter
    n_xs = len(args) - num_consts - num_carry
    ys_avals = ctx.avals_out[num_carry:]
    xs_avals = ctx.avals_in[num_consts + num_carry:]
    ys_init = [em.constant(np.zeros(a.shape, a.dtype), a) for a in ys_avals]
    state = [_i32(em, 0), *args, *ys_init]
    avals = [_I32, *ctx.avals_in, *ys_avals]

    def cond_block(inner, i, *rest):
        return [_compare_i32(inner, i, _i32(inner, length), "LT")]

    def body_block(inner, i, *rest):
        consts, carry = rest[:num_consts], rest[num_consts:num_consts + num_carry]
        xs, ys = rest[num_consts + num_carry:num_consts + num_carry + n_xs], rest[len(args):]
        at = i
        if reverse:
            at = inner.op("stablehlo.subtract", [_i32(inner, length - 1), i], [_I32])[0]
        x_rows = [_slice_at(inner, x, a, at) for x, a in zip(xs, xs_avals)]
        outs = lower_closed_inline(inner, olympuspr, [*consts, *carry, *x_rows])
        new_ys = [_update_at(inner, s, a, y, at) for s, a, y in zip(ys, ys_avals, outs[num_carry:])]
        (step,) = inner.op("stablehlo.add", [i, _i32(inner, 1)], [_I32])
        return [step, *consts, *outs[:num_carry], *xs, *new_ys]

    regions = [em.region(avals, cond_block), em.region(avals, body_block)]
    outs = em.op("stablehlo.while", state, avals, regions=regions)
    return outs[1 + num_consts:1 + num_consts + num_carry] + outs[1 + len(args):]


scan_p = define_primitive("scan", _scan_abstract_eval, _scan_lower, multiple_results=True)


def _scan_length(xs_leaves, xs_tree, length, source_info) -> int:
    """The common leading axis of all xs (and `length`, if given)."""
    paths = _leaf_paths(xs_tree, "xs")
    avals = [aval_of(x) for x in xs_leaves]
    for path, aval in zip(paths, avals):
        if aval.ndim == 0:
            raise ScanLengthError(
                f"scan: xs leaf {path} is a scalar {aval.str_short()}; scanned arrays need "
                f"a leading axis to scan over{_where(source_info)}"
            )
    if length is None:
        if not avals:
            raise ValueError(f"scan: with no xs to scan over, pass length={_where(source_info)}")
        length, first, first_path = avals[0].shape[0], avals[0], paths[0]
    else:
        length, first, first_path = int(length), None, "length"
    for path, aval in zip(paths, avals):
        if aval.shape[0] != length:
            first_text = first.str_short() if first is not None else str(length)
            raise ScanLengthError(
                f"scan: xs leaves have different leading axes: {first_path} is "
                f"{first_text} but {path} is {aval.str_short()}; all scanned arrays "
                f"must have the same length{_where(source_info)}"
            )
    return length


def _split_scan_output(out):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise OlympusTypeError(
            f"scan: the body must return a pair (carry, y), got {type(out).__name__}"
        )
    return out


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int = 1):
    """Loops `carry, y = f(carry, x)` over the leading axis of `xs`; stacks the ys.

    Returns `(final_carry, stacked_ys)`; `reverse=True` walks xs from the end
    (and stores each y at its x's position). `unroll` is accepted for JAX
    compatibility and recorded; the loop is always one XLA while.

    >>> lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
    """
    source_info = user_source_info()
    init_leaves, carry_tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, xs_tree, length, source_info)
    x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in xs_leaves]
    in_tree = args_tree(carry_tree, xs_tree)
    carry_out_tree = []

    def body(carry, x):
        new_carry, y = _split_scan_output(f(carry, x))
        return new_carry, y

    def trace(leaves):
        traced = trace_function(body, in_tree, [*(aval_of(x) for x in leaves), *x_avals], "scan body")
        carry_tree_out = traced.out_tree.children[0]
        carry_out_tree[:] = [carry_tree_out]
        return traced

    traced = trace(init_leaves)
    n_carry = len(init_leaves)
    init_leaves, changed = _promote_weak_carry(init_leaves, traced.out_avals[:n_carry])
    if changed:
        traced = trace(init_leaves)
    _check_carry("scan", carry_tree, carry_out_tree[0], [aval_of(x) for x in init_leaves],
                 traced.out_avals[:n_carry], source_info)
    args = [*traced.consts, *init_leaves, *xs_leaves]
    outs = scan_p.bind(
        *args, olympuspr=traced.closed, num_consts=len(traced.consts), num_carry=n_carry,
        length=length, reverse=bool(reverse), linear=(False,) * len(args), unroll=int(unroll),
    )
    ys_tree = traced.out_tree.children[1]
    return tree_unflatten(carry_tree, outs[:n_carry]), tree_unflatten(ys_tree, outs[n_carry:])


def args_tree(*trees) -> PyTreeDef:
    """The treedef of the argument tuple `(a, b, ...)` given each one's treedef."""
    return PyTreeDef(tuple, None, tuple(trees))


def map(f: Callable, xs):  # noqa: A001
    """`[f(x) for x in xs]` stacked, as one `scan` (the loop stays in the program)."""
    _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
    return ys
