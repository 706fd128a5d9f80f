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

from functools import partial
from typing import Callable, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ClosedOlympuspr, Olympuspr, ShapedArray, Var
from olympus.backends.xla.dispatch import apply_primitive
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


# ---- eager execution: one compiled executable per program structure -----------------
def _value_key(value):
    """A hashable stand-in for a param, equal for structurally equal sub-programs."""
    if isinstance(value, ClosedOlympuspr):
        if value.consts:
            return ("closed", id(value))  # constants differ by value: no sharing
        return ("closed", _program_key(value.olympuspr))
    if isinstance(value, Olympuspr):
        return ("program", _program_key(value))
    if isinstance(value, tuple):
        return tuple(_value_key(v) for v in value)
    hash(value)
    return value


def _program_key(olympuspr: Olympuspr) -> tuple:
    numbers: dict = {}

    def atom(x):
        if isinstance(x, Literal):
            return ("lit", np.asarray(x.val).dtype.str, np.asarray(x.val).tobytes())
        return numbers.setdefault(x, len(numbers))

    def binder(v):
        return atom(v), v.aval.shape, v.aval.dtype.str

    invars = tuple(binder(v) for v in olympuspr.constvars + olympuspr.invars)
    eqns = tuple(
        (e.primitive, tuple((k, _value_key(v)) for k, v in sorted(e.params.items())),
         tuple(atom(x) for x in e.invars), tuple(binder(v) for v in e.outvars))
        for e in olympuspr.eqns
    )
    return invars, eqns, tuple(atom(x) for x in olympuspr.outvars)


_canonical_params: dict = {}


def _eager_impl(primitive, *args, **params):
    """Eager cond/while/scan: each call traces fresh sub-programs, so params are
    swapped for the first structurally equal ones, whose executable is cached."""
    try:
        key = (primitive, tuple((k, _value_key(v)) for k, v in sorted(params.items())))
        params = _canonical_params.setdefault(key, params)
    except TypeError:  # an unhashable param: compile this call on its own
        pass
    return apply_primitive(primitive, *args, **params)


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
cond_p.def_impl(partial(_eager_impl, cond_p))


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


def _check_carry(what: str, tree, out_tree, in_avals, out_avals, source_info,
                 paths=None) -> None:
    if out_tree != tree:
        raise CarryTypeError(
            f"{what}: the body returns a carry of structure {out_tree}, but the carry "
            f"is {tree}; the body must return the carry's structure{_where(source_info)}"
        )
    for path, a, b in zip(paths or _leaf_paths(tree, "carry"), in_avals, out_avals):
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
while_p.def_impl(partial(_eager_impl, while_p))


def _trace_loop_body(fun, tree, leaves, what, source_info, paths=None):
    """Traces a carry -> carry body, first promoting weak initial carries."""
    in_tree = args_tree(tree)
    traced = trace_function(fun, in_tree, [aval_of(x) for x in leaves], what)
    leaves, changed = _promote_weak_carry(leaves, traced.out_avals)
    if changed:
        traced = trace_function(fun, in_tree, [aval_of(x) for x in leaves], what)
    _check_carry(what, tree, traced.out_tree, [aval_of(x) for x in leaves],
                 traced.out_avals, source_info, paths)
    return traced, leaves


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """Repeats `val = body_fun(val)` while `cond_fun(val)`; returns the last `val`.

    The carry `val` is a pytree whose types the body must preserve.

    >>> lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)
    """
    return _while_loop(cond_fun, body_fun, init_val, "while_loop", None)


def _while_loop(cond_fun, body_fun, init_val, what: str, carry_paths):
    source_info = user_source_info()
    leaves, tree = tree_flatten(init_val)
    body, leaves = _trace_loop_body(body_fun, tree, leaves, what, source_info, carry_paths)
    test = trace_function(cond_fun, args_tree(tree), [aval_of(x) for x in leaves], f"{what} cond")
    pred = test.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        got = ", ".join(a.str_short() for a in pred) or "nothing"
        raise OlympusTypeError(
            f"{what}: cond_fun must return a bool[] scalar, got {got}{_where(source_info)}"
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

        paths = ["lower", *tree_paths(init_val, "init_val")]
        trip_count = max(int(upper) - int(lower), 0)
        (_, result), _ = _scan(step, (index, init_val), None, trip_count, False, 1, "fori_loop",
                               paths)
        return result
    lower, upper = _loop_bounds(lower, upper)

    def keep_going(carry):
        return ops.lt(carry[0], carry[1])

    def step(carry):
        i, stop, val = carry
        return i + 1, stop, body_fun(i, val)

    paths = ["lower", "upper", *tree_paths(init_val, "init_val")]
    return _while_loop(keep_going, step, (lower, upper, init_val), "fori_loop", paths)[2]


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
    if length == 0:  # no iteration: and no row to slice from the empty xs
        return list(args[num_consts:num_consts + num_carry]) + ys_init
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
scan_p.def_impl(partial(_eager_impl, scan_p))


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
    return _scan(f, init, xs, length, reverse, unroll, "scan", None)


def _scan(f, init, xs, length, reverse, unroll, what: str, carry_paths):
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
        traced = trace_function(body, in_tree, [*(aval_of(x) for x in leaves), *x_avals], f"{what} body")
        carry_tree_out = traced.out_tree.children[0]
        carry_out_tree[:] = [carry_tree_out]
        return traced

    traced = trace(init_leaves)
    n_carry = len(init_leaves)
    init_leaves, changed = _promote_weak_carry(init_leaves, traced.out_avals[:n_carry])
    if changed:
        traced = trace(init_leaves)
    _check_carry(what, carry_tree, carry_out_tree[0], [aval_of(x) for x in init_leaves],
                 traced.out_avals[:n_carry], source_info, carry_paths)
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


# =====================================================================================
# Transformation rules. Each works on the sub-programs: it traces a transformed
# version of each (jvp, partial evaluation, transposition, batching) and binds
# the same primitive on the result, so the loop or branch stays one equation.
# =====================================================================================
from olympus.ir.core import Literal  # noqa: E402
from olympus.tracer.core import set_current_trace  # noqa: E402
from olympus.transforms.batching import (  # noqa: E402
    batch_olympuspr_fun, batch_rules, batch_to_front, move_batch_axis, not_mapped,
)
from olympus.transforms.jvp import (  # noqa: E402
    Zero, instantiate, is_differentiable, is_zero, jvp_flat, jvp_rules,
)
from olympus.transforms.linearize import (  # noqa: E402
    backward_pass, is_undefined, partial_eval_rules, transpose_rules,
)


def _eval_closed(closed: ClosedOlympuspr, args) -> list:
    """Runs a sub-program by binding its equations on the current trace."""
    olympuspr = closed.olympuspr
    env = dict(zip(olympuspr.constvars, closed.consts))
    env.update(zip(olympuspr.invars, args))

    def read(x):
        return x.val if isinstance(x, Literal) else env[x]

    for eqn in olympuspr.eqns:
        outs = eqn.primitive.bind(*map_list(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    return [read(v) for v in olympuspr.outvars]


def _trace_flat(fun: Callable, in_avals, what: str) -> Traced:
    """Traces a flat function into a program with its constants as leading invars."""
    olympuspr, consts, _ = trace_to_olympuspr(fun, list(in_avals), DebugInfo(what, what, ()))
    return Traced(ClosedOlympuspr(consts_as_invars(olympuspr), []), consts, None)


def _reorder(closed: ClosedOlympuspr, in_order=None, out_order=None) -> ClosedOlympuspr:
    """The same program with its invars / outvars permuted."""
    o = closed.olympuspr
    invars = o.invars if in_order is None else [o.invars[i] for i in in_order]
    outvars = o.outvars if out_order is None else [o.outvars[i] for i in out_order]
    return ClosedOlympuspr(Olympuspr([], invars, o.eqns, outvars, o.debug_info), [])


def _with_ignored_invars(closed: ClosedOlympuspr, avals) -> ClosedOlympuspr:
    """The same program taking extra trailing arguments it does not read."""
    o = closed.olympuspr
    extra = [Var(a) for a in avals]
    return ClosedOlympuspr(Olympuspr([], o.invars + extra, o.eqns, o.outvars, o.debug_info), [])


def _select(mask, xs) -> list:
    return [x for x, m in zip(xs, mask) if m]


def _blocks(*sizes) -> list[list[int]]:
    """Consecutive index ranges of the given sizes: _blocks(2, 1) = [[0, 1], [2]]."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out


# ---- jvp ------------------------------------------------------------------------------
def _jvp_program(closed: ClosedOlympuspr, nonzeros, instantiate_out) -> tuple[Traced, list]:
    """The jvp of a sub-program: `(*primals, *nonzero tangents) -> (*outs, *out tangents)`.

    Output tangents are kept where nonzero or asked for by `instantiate_out`
    (and the output is differentiable); the returned mask says which.
    """
    in_avals = closed.in_avals
    out_nonzero: list = []

    def fun(*args):
        primals = list(args[:len(in_avals)])
        given = iter(args[len(in_avals):])
        tangents = [next(given) if nz else Zero(a) for a, nz in zip(in_avals, nonzeros)]
        outs, out_tangents, _ = jvp_flat(lambda *xs: _eval_closed(closed, xs), primals, tangents)
        out_nonzero[:] = [
            is_differentiable(aval_of(o)) and (inst or not is_zero(t))
            for o, t, inst in zip(outs, out_tangents, instantiate_out)
        ]
        return list(outs) + [instantiate(t) for t, k in zip(out_tangents, out_nonzero) if k]

    tangent_avals = _select(nonzeros, in_avals)
    return _trace_flat(fun, [*in_avals, *tangent_avals], "jvp"), out_nonzero


def _differentiable_mask(values, tangents) -> list[bool]:
    return [not is_zero(t) and is_differentiable(aval_of(v)) for v, t in zip(values, tangents)]


def _tangents_out(primals, nonzero, tangents) -> list:
    """Output tangents: the bound ones where `nonzero`, symbolic zeros elsewhere."""
    given = iter(tangents)
    return [next(given) if nz else Zero(aval_of(p)) for p, nz in zip(primals, nonzero)]


def _loop_jvp_program(body, const_nz, carry_nz, xs_nz, n_ys):
    """jvp of a loop body `(consts, carry, xs) -> (carry, ys)`, widening the set of
    carries with nonzero tangents until the body preserves it."""
    n_carry = len(carry_nz)
    while True:
        traced, out_nz = _jvp_program(
            body, [*const_nz, *carry_nz, *xs_nz], [*carry_nz, *([False] * n_ys)]
        )
        if out_nz[:n_carry] == carry_nz:
            return traced, out_nz, carry_nz
        carry_nz = [a or b for a, b in zip(carry_nz, out_nz[:n_carry])]


def _cond_jvp(primals, tangents, *, branches, linear):
    index, operands = primals[0], primals[1:]
    nonzero = _differentiable_mask(operands, tangents[1:])
    n_out = len(branches[0].out_avals)
    jvps = [_jvp_program(b, nonzero, [True] * n_out) for b in branches]
    out_nz = jvps[0][1]
    consts, programs = _common_consts([t for t, _ in jvps])
    op_tangents = [instantiate(t) for t in _select(nonzero, tangents[1:])]
    args = [*consts, *operands, *op_tangents]
    outs = cond_p.bind(index, *args, branches=tuple(programs), linear=(False,) * len(args))
    primal_out = outs[:n_out]
    return primal_out, _tangents_out(primal_out, out_nz, outs[n_out:])


def _while_jvp(primals, tangents, *, cond_olympuspr, body_olympuspr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts, carry = primals[:nc], primals[nc:nc + nb], primals[nc + nb:]
    bconst_nz = _differentiable_mask(bconsts, tangents[nc:nc + nb])
    carry_nz = _differentiable_mask(carry, tangents[nc + nb:])
    traced, _, carry_nz = _loop_jvp_program(body_olympuspr, bconst_nz, carry_nz, [], 0)
    k, n, ntb, ntc = len(traced.consts), len(carry), sum(bconst_nz), sum(carry_nz)
    b_k, b_consts, b_carry, b_tconsts, b_tcarry = _blocks(k, nb, n, ntb, ntc)
    body = _reorder(traced.closed, b_k + b_consts + b_tconsts + b_carry + b_tcarry)
    carry_t = [instantiate(t) for t in _select(carry_nz, tangents[nc + nb:])]
    test = _with_ignored_invars(cond_olympuspr, [aval_of(t) for t in carry_t])
    outs = while_p.bind(
        *cconsts, *traced.consts, *bconsts, *_select(bconst_nz, tangents[nc:nc + nb]),
        *carry, *carry_t,
        cond_olympuspr=test, body_olympuspr=body, cond_nconsts=nc, body_nconsts=k + nb + ntb,
    )
    return outs[:n], _tangents_out(outs[:n], carry_nz, outs[n:])


def _scan_jvp(primals, tangents, *, olympuspr, num_consts, num_carry, length, reverse, linear,
              unroll):
    nc, ncar = num_consts, num_carry
    nx = len(primals) - nc - ncar
    ny = len(olympuspr.out_avals) - ncar
    const_nz = _differentiable_mask(primals[:nc], tangents[:nc])
    carry_nz = _differentiable_mask(primals[nc:nc + ncar], tangents[nc:nc + ncar])
    xs_nz = _differentiable_mask(primals[nc + ncar:], tangents[nc + ncar:])
    traced, out_nz, carry_nz = _loop_jvp_program(olympuspr, const_nz, carry_nz, xs_nz, ny)
    ys_nz = out_nz[ncar:]
    k = len(traced.consts)
    b = _blocks(k, nc, ncar, nx, sum(const_nz), sum(carry_nz), sum(xs_nz))
    o = _blocks(ncar, ny, sum(carry_nz), sum(ys_nz))
    body = _reorder(traced.closed, b[0] + b[1] + b[4] + b[2] + b[5] + b[3] + b[6],
                    o[0] + o[2] + o[1] + o[3])
    consts_t = _select(const_nz, tangents[:nc])
    carry_t = [instantiate(t) for t in _select(carry_nz, tangents[nc:nc + ncar])]
    xs_t = _select(xs_nz, tangents[nc + ncar:])
    args = [*traced.consts, *primals[:nc], *consts_t, *primals[nc:nc + ncar], *carry_t,
            *primals[nc + ncar:], *xs_t]
    outs = scan_p.bind(
        *args, olympuspr=body, num_consts=k + nc + len(consts_t), num_carry=ncar + len(carry_t),
        length=length, reverse=reverse, linear=(False,) * len(args), unroll=unroll,
    )
    r = _blocks(ncar, len(carry_t), ny, sum(ys_nz))
    carry_out, ys = [outs[i] for i in r[0]], [outs[i] for i in r[2]]
    carry_tan = _tangents_out(carry_out, carry_nz, [outs[i] for i in r[1]])
    ys_tan = _tangents_out(ys, ys_nz, [outs[i] for i in r[3]])
    return carry_out + ys, carry_tan + ys_tan


jvp_rules[cond_p] = _cond_jvp
jvp_rules[while_p] = _while_jvp
jvp_rules[scan_p] = _scan_jvp


# ---- partial evaluation (linearize): known primal work vs staged tangent work ------
def _known_outputs(olympuspr: Olympuspr, known_in) -> list[bool]:
    """Which outputs can be computed from the known inputs alone."""
    known = {v for v, k in zip(olympuspr.invars, known_in) if k}
    for eqn in olympuspr.eqns:
        if all(isinstance(x, Literal) or x in known for x in eqn.invars):
            known.update(eqn.outvars)
    return [isinstance(v, Literal) or v in known for v in olympuspr.outvars]


def _residual_vars(olympuspr: Olympuspr, known_in, known_out) -> list[Var]:
    """Known values the unknown part of the program reads (in first-use order)."""
    known = {v for v, k in zip(olympuspr.invars, known_in) if k}
    residuals: dict = {}
    for eqn in olympuspr.eqns:
        if all(isinstance(x, Literal) or x in known for x in eqn.invars):
            known.update(eqn.outvars)
        else:
            residuals.update((x, None) for x in eqn.invars if isinstance(x, Var) and x in known)
    for v, k in zip(olympuspr.outvars, known_out):
        if not k and isinstance(v, Var) and v in known:
            residuals[v] = None
    return list(residuals)


def _known_program(closed: ClosedOlympuspr, known_in, known_out, residuals) -> Traced:
    """`(*known inputs) -> (*known outputs, *residuals)`: the equations that can run now.

    `residuals` holds, per output slot, a Var of this program or an aval (a slot
    owned by another branch, filled with zeros).
    """
    olympuspr = closed.olympuspr

    def fun(*args):
        env = dict(zip(_select(known_in, olympuspr.invars), args))

        def read(x):
            return x.val if isinstance(x, Literal) else env[x]

        for eqn in olympuspr.eqns:
            if all(isinstance(x, Literal) or x in env for x in eqn.invars):
                outs = eqn.primitive.bind(*map_list(read, eqn.invars), **eqn.params)
                env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
        outs = [read(v) for v in _select(known_out, olympuspr.outvars)]
        return outs + [read(r) if isinstance(r, Var) else ops.full(r.shape, 0, r.dtype)
                       for r in residuals]

    return _trace_flat(fun, _select(known_in, closed.in_avals), "partial eval")


def _unknown_program(closed: ClosedOlympuspr, known_in, known_out, residual_invars) -> ClosedOlympuspr:
    """`(*residuals, *unknown inputs) -> (*unknown outputs)`: the equations left to stage."""
    olympuspr = closed.olympuspr
    known = {v for v, k in zip(olympuspr.invars, known_in) if k}
    eqns = []
    for eqn in olympuspr.eqns:
        if all(isinstance(x, Literal) or x in known for x in eqn.invars):
            known.update(eqn.outvars)
        else:
            eqns.append(eqn)
    invars = residual_invars + [v for v, k in zip(olympuspr.invars, known_in) if not k]
    outvars = [v for v, k in zip(olympuspr.outvars, known_out) if not k]
    return ClosedOlympuspr(Olympuspr([], invars, eqns, outvars, olympuspr.debug_info), [])


def map_list(f, xs) -> list:
    return [f(x) for x in xs]


def _merge(known_mask, known_vals, unknown_vals) -> list:
    known_it, unknown_it = iter(known_vals), iter(unknown_vals)
    return [next(known_it) if k else next(unknown_it) for k in known_mask]


def _stage_all(trace, primitive, args, params):
    with set_current_trace(trace.tangent_trace):
        return primitive.bind(*args, **params)


def _cond_partial_eval(trace, args, unknown, *, branches, linear):
    if unknown[0]:
        return _stage_all(trace, cond_p, args, dict(branches=branches, linear=linear))
    index, operands = args[0], args[1:]
    known_in = [not u for u in unknown[1:]]
    known_out = [all(ks) for ks in zip(*(_known_outputs(b.olympuspr, known_in) for b in branches))]
    own = [_residual_vars(b.olympuspr, known_in, known_out) for b in branches]
    # Every branch returns every branch's residuals (zeros for the others').
    slots = [[r if i == j else r.aval for j, rs in enumerate(own) for r in rs]
             for i in range(len(branches))]
    known = [_known_program(b, known_in, known_out, s) for b, s in zip(branches, slots)]
    consts, known_branches = _common_consts(known)
    known_args = [*consts, *_select(known_in, operands)]
    with set_current_trace(trace.parent):
        outs = cond_p.bind(index, *known_args, branches=tuple(known_branches),
                           linear=(False,) * len(known_args))
    n_known = sum(known_out)
    known_outs, residuals = outs[:n_known], outs[n_known:]
    unknown_branches = []
    for b, s in zip(branches, slots):
        res_invars = [r if isinstance(r, Var) else Var(r) for r in s]
        unknown_branches.append(_unknown_program(b, known_in, known_out, res_invars))
    staged_args = [*residuals, *[x for x, u in zip(operands, unknown[1:]) if u]]
    with set_current_trace(trace.tangent_trace):
        unknown_outs = cond_p.bind(index, *staged_args, branches=tuple(unknown_branches),
                                   linear=(False,) * len(staged_args))
    return _merge(known_out, known_outs, unknown_outs)


def _loop_known_carry(body, known_consts, known_carry, known_xs, n_carry):
    """Carries computable without the unknown inputs (a fixpoint over iterations)."""
    while True:
        out = _known_outputs(body.olympuspr, [*known_consts, *known_carry, *known_xs])
        new = [a and b for a, b in zip(known_carry, out[:n_carry])]
        if new == known_carry:
            return known_carry, out
        known_carry = new


def _while_partial_eval(trace, args, unknown, *, cond_olympuspr, body_olympuspr, cond_nconsts,
                        body_nconsts):
    """The known carries run in a loop now; the whole loop is also staged (recomputing
    the known carries) for the unknown ones. Like JAX, a while loop can be
    linearized but not transposed: reverse mode needs `scan` (fori_loop with
    Python-int bounds)."""
    params = dict(cond_olympuspr=cond_olympuspr, body_olympuspr=body_olympuspr,
                  cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    nc, nb = cond_nconsts, body_nconsts
    known = [not u for u in unknown]
    known_carry, _ = _loop_known_carry(body_olympuspr, known[nc:nc + nb], known[nc + nb:], [],
                                       len(known) - nc - nb)
    cond_known = _known_outputs(cond_olympuspr.olympuspr, known[:nc] + known_carry)[0]
    if not cond_known or not all(known[:nc]) or not any(known_carry):
        return _stage_all(trace, while_p, args, params)
    body_in = known[nc:nc + nb] + known_carry
    known_body = _known_program(body_olympuspr, body_in, known_carry, [])
    known_test = _known_program(cond_olympuspr, known[:nc] + known_carry, [True], [])
    bconsts = _select(known[nc:nc + nb], args[nc:nc + nb])
    with set_current_trace(trace.parent):
        known_outs = while_p.bind(
            *known_test.consts, *args[:nc], *known_body.consts, *bconsts,
            *_select(known_carry, args[nc + nb:]),
            cond_olympuspr=known_test.closed, body_olympuspr=known_body.closed,
            cond_nconsts=len(known_test.consts) + nc,
            body_nconsts=len(known_body.consts) + len(bconsts),
        )
    staged = _stage_all(trace, while_p, args, params)
    return _merge(known_carry, known_outs, _select([not k for k in known_carry], staged))


def _scan_partial_eval(trace, args, unknown, *, olympuspr, num_consts, num_carry, length, reverse,
                       linear, unroll):
    """Known work runs as a scan now and saves, per iteration, the values the
    tangent work needs (residuals, stacked like ys); the staged scan reads them
    as xs. Residuals that are loop-invariant constants are passed as constants."""
    nc, ncar = num_consts, num_carry
    known = [not u for u in unknown]
    known_carry, out_known = _loop_known_carry(
        olympuspr, known[:nc], known[nc:nc + ncar], known[nc + ncar:], ncar)
    known_in = known[:nc] + known_carry + known[nc + ncar:]
    known_out = known_carry + out_known[ncar:]
    residuals = _residual_vars(olympuspr.olympuspr, known_in, known_out)
    const_slot = {v: i for i, v in enumerate(olympuspr.olympuspr.invars[:nc])}
    const_res = [r for r in residuals if r in const_slot]
    stacked_res = [r for r in residuals if r not in const_slot]
    known_body = _known_program(olympuspr, known_in, known_out, stacked_res)
    known_args = [*known_body.consts, *_select(known_in, args)]
    n_kconsts = len(known_body.consts) + sum(known[:nc])
    with set_current_trace(trace.parent):
        outs = scan_p.bind(
            *known_args, olympuspr=known_body.closed, num_consts=n_kconsts,
            num_carry=sum(known_carry), length=length, reverse=reverse,
            linear=(False,) * len(known_args), unroll=unroll,
        )
    n_known = sum(known_out)
    known_outs, stacked = outs[:n_known], outs[n_known:]
    # The staged body: (const residuals, unknown consts, unknown carry, stacked residuals, unknown xs).
    body = _unknown_program(olympuspr, known_in, known_out, const_res + stacked_res)
    n_cr, n_uc = len(const_res), nc - sum(known[:nc])
    n_ucar, n_sr = ncar - sum(known_carry), len(stacked_res)
    b = _blocks(n_cr, n_sr, n_uc, n_ucar, len(body.in_avals) - n_cr - n_sr - n_uc - n_ucar)
    body = _reorder(body, b[0] + b[2] + b[3] + b[1] + b[4])
    unknown_consts = [a for a, k in zip(args[:nc], known[:nc]) if not k]
    unknown_carry = [a for a, k in zip(args[nc:nc + ncar], known_carry) if not k]
    unknown_xs = [a for a, k in zip(args[nc + ncar:], known[nc + ncar:]) if not k]
    staged_args = [*(args[const_slot[r]] for r in const_res), *unknown_consts, *unknown_carry,
                   *stacked, *unknown_xs]
    with set_current_trace(trace.tangent_trace):
        unknown_outs = scan_p.bind(
            *staged_args, olympuspr=body, num_consts=n_cr + n_uc, num_carry=n_ucar,
            length=length, reverse=reverse, linear=(False,) * len(staged_args), unroll=unroll,
        )
    return _merge(known_out, known_outs, unknown_outs)


partial_eval_rules[cond_p] = _cond_partial_eval
partial_eval_rules[while_p] = _while_partial_eval
partial_eval_rules[scan_p] = _scan_partial_eval


# ---- transposition ---------------------------------------------------------------------
def _transposed_program(closed: ClosedOlympuspr, residual_mask, res_avals, ct_avals) -> Traced:
    """`(*residuals, *output cotangents) -> (*cotangents of the linear inputs)`."""
    n_res = len(res_avals)

    def fun(*args):
        res, cts = iter(args[:n_res]), list(args[n_res:])
        primals_in = [next(res) if r else None for r in residual_mask]
        cts_in = backward_pass(closed.olympuspr, [], cts, primals_in)
        return [instantiate(ct) for ct, r in zip(cts_in, residual_mask) if not r]

    return _trace_flat(fun, [*res_avals, *ct_avals], "transpose")


def _cond_transpose(cts, index, *operands, branches, linear):
    residual_mask = [not is_undefined(x) for x in operands]
    residuals = _select(residual_mask, operands)
    cts = [instantiate(ct) for ct in cts]
    res_avals = [aval_of(r) for r in residuals]
    ct_avals = [aval_of(ct) for ct in cts]
    transposed = [_transposed_program(b, residual_mask, res_avals, ct_avals) for b in branches]
    consts, programs = _common_consts(transposed)
    args = [*consts, *residuals, *cts]
    outs = iter(cond_p.bind(index, *args, branches=tuple(programs), linear=(False,) * len(args)))
    return [None] + [None if r else next(outs) for r in residual_mask]


def _scan_transpose(cts, *args, olympuspr, num_consts, num_carry, length, reverse, linear, unroll):
    """Runs the loop backwards: the carry holds the carry's cotangent and the sums of
    the constants' cotangents; each step reads a residual row and a ys cotangent."""
    nc, ncar = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc:nc + ncar], args[nc + ncar:]
    const_res = [not is_undefined(c) for c in consts]
    xs_res = [not is_undefined(x) for x in xs]
    residual_mask = const_res + [False] * ncar + xs_res
    body_avals = olympuspr.in_avals
    lin_const_avals = [a for a, r in zip(body_avals[:nc], const_res) if not r]
    carry_avals = body_avals[nc:nc + ncar]
    res_x_avals = [a for a, r in zip(body_avals[nc + ncar:], xs_res) if r]
    y_avals = olympuspr.out_avals[ncar:]
    res_c = _select(const_res, consts)

    def step(*a):
        rc, ctc, acc, rx, cty = _split(a, len(res_c), ncar, len(lin_const_avals), len(res_x_avals),
                                      len(y_avals))
        res = iter([*rc, *rx])
        primals_in = [next(res) if r else None for r in residual_mask]
        cts_in = backward_pass(olympuspr.olympuspr, [], [*ctc, *cty], primals_in)
        ct_consts = [instantiate(ct) for ct, r in zip(cts_in[:nc], const_res) if not r]
        ct_carry = [instantiate(ct) for ct in cts_in[nc:nc + ncar]]
        ct_xs = [instantiate(ct) for ct, r in zip(cts_in[nc + ncar:], xs_res) if not r]
        return [*ct_carry, *(ops.add(s, c) for s, c in zip(acc, ct_consts)), *ct_xs]

    in_avals = [*(aval_of(c) for c in res_c), *carry_avals, *lin_const_avals, *res_x_avals, *y_avals]
    traced = _trace_flat(step, in_avals, "transpose")
    ct_carry = [instantiate(ct) for ct in cts[:ncar]]
    ct_ys = [instantiate(ct) for ct in cts[ncar:]]
    zeros = [ops.full(a.shape, 0, a.dtype) for a in lin_const_avals]
    scan_args = [*traced.consts, *res_c, *ct_carry, *zeros, *_select(xs_res, xs), *ct_ys]
    outs = scan_p.bind(
        *scan_args, olympuspr=traced.closed, num_consts=len(traced.consts) + len(res_c),
        num_carry=ncar + len(zeros), length=length, reverse=not reverse,
        linear=(False,) * len(scan_args), unroll=unroll,
    )
    ct_init, ct_consts, ct_xs = outs[:ncar], iter(outs[ncar:ncar + len(zeros)]), iter(outs[ncar + len(zeros):])
    return ([None if r else next(ct_consts) for r in const_res]
            + [ct if is_undefined(x) else None for ct, x in zip(ct_init, init)]
            + [None if r else next(ct_xs) for r in xs_res])


def _split(values, *sizes) -> list[list]:
    return [[values[i] for i in block] for block in _blocks(*sizes)]


transpose_rules[cond_p] = _cond_transpose
transpose_rules[scan_p] = _scan_transpose


# ---- batching (vmap) -------------------------------------------------------------------
def _batch_program(closed: ClosedOlympuspr, axis_size: int, in_batched, force_out):
    """The per-example sub-program run on a batch (batch axis 0 where batched).

    Outputs in `force_out` are batched even when they do not vary over the
    batch; returns (Traced, which outputs are batched).
    """
    in_dims = [0 if b else not_mapped for b in in_batched]
    in_avals = [a.update(shape=(axis_size, *a.shape)) if b else a
                for a, b in zip(closed.in_avals, in_batched)]
    out_batched: list = []

    def fun(*args):
        dims: list = []
        outs = batch_olympuspr_fun(closed.olympuspr, closed.consts, axis_size, in_dims, dims)(*args)
        out_batched[:] = [d is not not_mapped or f for d, f in zip(dims, force_out)]
        return [move_batch_axis(v, axis_size, not_mapped, 0) if d is not_mapped and f else v
                for v, d, f in zip(outs, dims, force_out)]

    return _trace_flat(fun, in_avals, "vmap"), out_batched


def _to_front(vals, dims, axis_size):
    return [v if d is not_mapped else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)]


def _run_batched(closed, axis_size, in_batched, args, n_out) -> list:
    """Runs a sub-program on batched arguments now; every output batched at 0."""
    traced, _ = _batch_program(closed, axis_size, in_batched, [True] * n_out)
    return _eval_closed(traced.closed, [*traced.consts, *args])


def _cond_batch(axis_size, vals, dims, *, branches, linear):
    index, operands = vals[0], _to_front(vals[1:], dims[1:], axis_size)
    in_batched = [d is not not_mapped for d in dims[1:]]
    n_out = len(branches[0].out_avals)
    if dims[0] is not_mapped:
        batched = [_batch_program(b, axis_size, in_batched, [True] * n_out)[0] for b in branches]
        consts, programs = _common_consts(batched)
        args = [*consts, *operands]
        outs = cond_p.bind(index, *args, branches=tuple(programs), linear=(False,) * len(args))
        return outs, [0] * n_out
    # A predicate per example: every branch runs on the whole batch, select_n picks.
    index = batch_to_front(index, axis_size, dims[0])
    per_branch = [_run_batched(b, axis_size, in_batched, operands, n_out) for b in branches]
    results = []
    for cases in zip(*per_branch):
        which = ops.broadcast_in_dim(index, aval_of(cases[0]).shape, (0,))
        results.append(ops.select_n(which, *cases))
    return results, [0] * n_out


def _batched_carry_fixpoint(body, axis_size, const_batched, carry_batched, xs_batched, n_ys):
    """Batches a loop body, widening the batched carries until the body preserves them."""
    n_carry = len(carry_batched)
    while True:
        traced, out_batched = _batch_program(
            body, axis_size, [*const_batched, *carry_batched, *xs_batched],
            [*carry_batched, *([False] * n_ys)],
        )
        if out_batched[:n_carry] == carry_batched:
            return traced, out_batched, carry_batched
        carry_batched = [a or b for a, b in zip(carry_batched, out_batched[:n_carry])]


def _while_batch(axis_size, vals, dims, *, cond_olympuspr, body_olympuspr, cond_nconsts,
                 body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    vals = _to_front(vals, dims, axis_size)
    batched = [d is not not_mapped for d in dims]
    cconsts, bconsts, carry = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    body, _, carry_b = _batched_carry_fixpoint(
        body_olympuspr, axis_size, batched[nc:nc + nb], batched[nc + nb:], [], 0)
    test, pred_b = _batch_program(cond_olympuspr, axis_size, batched[:nc] + carry_b, [False])
    if pred_b[0] and not all(carry_b):  # finished examples keep their carry: all batched
        carry_b = [True] * len(carry)
        body, _ = _batch_program(body_olympuspr, axis_size, batched[nc:nc + nb] + carry_b, carry_b)
        test, _ = _batch_program(cond_olympuspr, axis_size, batched[:nc] + carry_b, [False])
    carry = [move_batch_axis(c, axis_size, not_mapped, 0) if b and d is not_mapped else c
             for c, b, d in zip(carry, carry_b, dims[nc + nb:])]
    if pred_b[0]:
        outs = _while_batched_predicate(test, body, cconsts, bconsts, carry)
    else:
        outs = while_p.bind(
            *test.consts, *cconsts, *body.consts, *bconsts, *carry,
            cond_olympuspr=test.closed, body_olympuspr=body.closed,
            cond_nconsts=len(test.consts) + nc, body_nconsts=len(body.consts) + nb,
        )
    return outs, [0 if b else not_mapped for b in carry_b]


def _while_batched_predicate(test: Traced, body: Traced, cconsts, bconsts, carry) -> list:
    """A loop whose predicate differs per example: it runs while any example goes
    on, and examples that have stopped keep their carry (a select per step)."""
    test_consts = [*test.consts, *cconsts]
    body_consts = [*body.consts, *bconsts]
    carry_avals = [aval_of(c) for c in carry]
    n_tc = len(test_consts)

    def any_going(*args):
        (pred,) = _eval_closed(test.closed, args)
        return [ops.reduce_or(pred, (0,))]

    def step(*args):
        tc, bc, old = args[:n_tc], args[n_tc:n_tc + len(body_consts)], args[n_tc + len(body_consts):]
        (pred,) = _eval_closed(test.closed, [*tc, *old])
        new = _eval_closed(body.closed, [*bc, *old])
        return [ops.select(ops.broadcast_in_dim(pred, aval_of(o).shape, (0,)), n, o)
                for n, o in zip(new, old)]

    cond_t = _trace_flat(any_going, [*(aval_of(c) for c in test_consts), *carry_avals], "vmap")
    body_t = _trace_flat(step, [*(aval_of(c) for c in test_consts + body_consts), *carry_avals],
                         "vmap")
    return while_p.bind(
        *cond_t.consts, *test_consts, *body_t.consts, *test_consts, *body_consts, *carry,
        cond_olympuspr=cond_t.closed, body_olympuspr=body_t.closed,
        cond_nconsts=len(cond_t.consts) + n_tc,
        body_nconsts=len(body_t.consts) + n_tc + len(body_consts),
    )


def _scan_batch(axis_size, vals, dims, *, olympuspr, num_consts, num_carry, length, reverse,
                linear, unroll):
    """Consts and carries get the batch at axis 0, xs and ys at axis 1 (axis 0 is the scan)."""
    nc, ncar = num_consts, num_carry
    batched = [d is not not_mapped for d in dims]
    ny = len(olympuspr.out_avals) - ncar
    body, out_b, carry_b = _batched_carry_fixpoint(
        olympuspr, axis_size, batched[:nc], batched[nc:nc + ncar], batched[nc + ncar:], ny)
    consts = _to_front(vals[:nc], dims[:nc], axis_size)
    carry = [move_batch_axis(v, axis_size, d, 0) if b else v
             for v, d, b in zip(vals[nc:nc + ncar], dims[nc:nc + ncar], carry_b)]
    xs = [v if d is not_mapped else move_batch_axis(v, axis_size, d, 1)
          for v, d in zip(vals[nc + ncar:], dims[nc + ncar:])]
    args = [*body.consts, *consts, *carry, *xs]
    outs = scan_p.bind(
        *args, olympuspr=body.closed, num_consts=len(body.consts) + nc, num_carry=ncar,
        length=length, reverse=reverse, linear=(False,) * len(args), unroll=unroll,
    )
    out_dims = [0 if b else not_mapped for b in carry_b]
    out_dims += [1 if b else not_mapped for b in out_b[ncar:]]
    return outs, out_dims


batch_rules[cond_p] = _cond_batch
batch_rules[while_p] = _while_batch
batch_rules[scan_p] = _scan_batch
