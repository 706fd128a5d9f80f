"""What the control-flow primitives share: sub-programs and the work on them.

The user's functions are traced into `SubProgram`s whose constants become
leading operands. The transformation rules of cond, while and scan build a
transformed version of each sub-program (olympus/transforms/programs.py)
and bind the same primitive on it, so a branch or loop stays one equation.
What is specific to control flow lives here: tracing the user's functions
with their names, branch and carry type checks, eager caching, sharing
constants among branches, and the fixpoints over loop carries.
"""

from __future__ import annotations

import inspect
import operator
from functools import partial
from typing import Callable, Sequence

import numpy as np

from olympus.ir.analysis import backward_slice, known_outputs
from olympus.caches import STRUCTURE_CACHE_SIZE, BoundedCache
from olympus import caches
from olympus import config
from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, ShapedArray, Var
from olympus.ir.pruning import select
from olympus.ir.structure import Structure, carry_fixpoint, declare
from olympus.backends.xla.dispatch import apply_primitive
from olympus.lax import ops
from olympus.lax.base import blocks, define_primitive
from olympus.tracer import core
from olympus.tracer.core import Tracer, aval_of, set_current_trace
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.evaluation import bind_eqns, eval_program, read_atom
from olympus.tracer.functions import check_output_leaf
from olympus.tracer.pytree import PyTreeDef, tree_flatten, tree_paths, tree_unflatten
from olympus.tracer.staging import (
    DebugInfo,
    SubProgram,
    function_name,
    trace_sub_program,
)
from olympus.transforms.batching import batch_to_front, not_mapped
from olympus.transforms.ad_util import Zero, is_differentiable, is_zero
from olympus.transforms.programs import batch_program, jvp_program, split_nested


class BranchTypeError(OlympusTypeError):
    """The branches of a cond/switch return different types or structures."""


class CarryTypeError(OlympusTypeError):
    """A loop body returns a carry of another type than it was given."""


class ScanLengthError(OlympusTypeError):
    """The arrays scanned over disagree on their leading axis (the length)."""


# ---- tracing the user's functions into sub-programs ----------------------------------
def trace_function(
    fun: Callable,
    in_tree,
    in_avals: Sequence[ShapedArray],
    what: str,
    name: str | None = None,
    arg_names: Sequence[str] | None = None,
    arg_paths: Sequence[str] | None = None,
) -> SubProgram:
    """Traces `fun(*unflatten(in_tree, args))` on abstract flat arguments.

    `in_tree` is the treedef of the tuple of `fun`'s positional arguments;
    `name` and `arg_names` (default: `fun`'s own), or the leaves' `arg_paths`,
    label concretization errors.
    """
    out_trees = []

    def flat_fun(*args):
        out = fun(*tree_unflatten(in_tree, args))
        leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return [check_output_leaf(x, what) for x in leaves]

    if arg_paths is None:
        names = arg_names or parameter_names(fun, len(in_tree.children))
        arg_paths = [
            p for n, c in zip(names, in_tree.children) for p in leaf_paths(c, n)
        ]
    debug = DebugInfo(what, name or function_name(fun), tuple(arg_paths))
    return trace_sub_program(flat_fun, in_avals, debug)._replace(out_tree=out_trees[0])


def parameter_names(fun: Callable, count: int) -> list[str]:
    """The names of `fun`'s first `count` positional parameters (`args[i]` if unknown)."""
    try:
        params = [
            p
            for p in inspect.signature(fun).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else f"args[{i}]" for i in range(count)]


def python_mode(*values) -> bool:
    """Under `disable_jit`, with concrete values, control flow runs as plain Python
    (only the taken branch, one Python call per iteration), so pdb can step in."""
    return (
        config.read("olympus_disable_jit")
        and core.current_trace() is core.eval_trace
        and not any(isinstance(x, Tracer) for x in tree_flatten(values)[0])
    )


def where_text(source_info) -> str:
    return f"\n  at {source_info}" if source_info is not None else ""


def leaf_paths(treedef, prefix: str) -> list[str]:
    return tree_paths(tree_unflatten(treedef, [0] * treedef.num_leaves), prefix)


def same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def same_types(xs: Sequence[ShapedArray], ys: Sequence[ShapedArray]) -> bool:
    return len(xs) == len(ys) and all(same_type(a, b) for a, b in zip(xs, ys))


# ---- eager execution: one compiled executable per program structure ------------------
def value_key(value):
    """A hashable stand-in for a param, equal for structurally equal sub-programs."""
    if isinstance(value, ClosedOlympuspr):
        if value.consts:
            return ("closed", id(value))  # constants differ by value: no sharing
        return ("closed", program_key(value.olympuspr))
    if isinstance(value, Olympuspr):
        return ("program", program_key(value))
    if isinstance(value, tuple):
        return tuple(value_key(v) for v in value)
    hash(value)
    return value


def program_key(olympuspr: Olympuspr) -> tuple:
    numbers: dict = {}

    def atom(x):
        if isinstance(x, Literal):
            value = np.asarray(x.val)
            return ("lit", value.dtype.str, value.tobytes(), x.aval.weak_type)
        return numbers.setdefault(x, len(numbers))

    def binder(v):  # weak types too: they decide the types of the eager results
        aval = v.aval  # and layouts: they are part of explicit-mode types
        return atom(v), aval.shape, aval.dtype.str, aval.weak_type, aval.sharding

    invars = tuple(binder(v) for v in olympuspr.constvars + olympuspr.invars)
    eqns = tuple(
        (
            e.primitive,
            tuple((k, value_key(v)) for k, v in sorted(e.params.items())),
            tuple(atom(x) for x in e.invars),
            tuple(binder(v) for v in e.outvars),
        )
        for e in olympuspr.eqns
    )
    return invars, eqns, tuple(atom(x) for x in olympuspr.outvars)


_canonical_params: dict = caches.register(
    "control flow", BoundedCache(STRUCTURE_CACHE_SIZE)
)


def eager_impl(primitive, *args, **params):
    """Eager cond/while/scan: each call traces fresh sub-programs, so params are
    swapped for the first structurally equal ones, whose executable is cached."""
    try:
        key = (primitive, tuple((k, value_key(v)) for k, v in sorted(params.items())))
        params = _canonical_params.setdefault(key, params)
    except TypeError:  # an unhashable param: compile this call on its own
        pass
    return apply_primitive(primitive, *args, **params)


def define_control_flow(name, abstract_eval, lowering, structure: Structure):
    """A control-flow primitive (cond, while, scan): several results, run
    eagerly through `eager_impl` (one executable per program structure), its
    operand groups declared as `structure`."""
    primitive = define_primitive(name, abstract_eval, lowering, multiple_results=True)
    primitive.def_impl(partial(eager_impl, primitive))
    declare(primitive, structure)
    return primitive


def pruned_loop(eqn, structure: Structure, keep, outs: list[bool], **bodies):
    """`eqn` (a while or a scan, whose operand groups `structure` names) with
    the operands `keep` marks (one mask per group), the outputs `outs` marks
    and its pruned `bodies`; the group counts follow."""
    groups = structure.split(eqn.params, eqn.invars)
    invars, counts = structure.pack(*(select(k, g) for k, g in zip(keep, groups)))
    params = {**eqn.params, **bodies, **counts}
    return eqn._replace(params=params, invars=invars, outvars=select(outs, eqn.outvars))


# ---- branches and loop carries -------------------------------------------------------
def common_consts(traced: Sequence[SubProgram]) -> tuple[list, list[ClosedOlympuspr]]:
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
        operand_vars = olympuspr.invars[len(t.consts) :]
        program = Olympuspr(
            [],
            const_vars + operand_vars,
            olympuspr.eqns,
            olympuspr.outvars,
            olympuspr.debug_info,
        )
        branches.append(ClosedOlympuspr(program, []))
    return consts, branches


def promote_weak_carry(
    init_leaves: list, out_avals: Sequence[ShapedArray], *, strengthen: bool = True
) -> tuple[list, bool]:
    """Gives weak-typed initial carries (Python scalars) the type the body returns.

    `fori_loop(0, n, f, 0.0)` starts from a weak f32 that the body turns into a
    strong f32; the carry then has the body's type from the start. With
    `strengthen=False` (scan's rule in JAX) a weak carry the body makes strong
    of the same dtype stays weak going in, so ys computed from it stay weak.
    """
    changed = False
    promoted = []
    for x, out in zip(init_leaves, out_avals):
        aval = aval_of(x)
        if (
            aval.weak_type
            and aval.shape == out.shape
            and (aval.dtype != out.dtype or (strengthen and not out.weak_type))
        ):
            x = convert_carry(x, out.dtype)
            changed = True
        promoted.append(x)
    return promoted, changed


def convert_carry(x, dtype):
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        return (
            np.asarray(x, dtype=dtype)[()] if np.ndim(x) == 0 else np.asarray(x, dtype)
        )
    return ops.convert_element_type(x, dtype)


def check_carry(
    what: str, tree, out_tree, in_avals, out_avals, source_info, paths=None
) -> None:
    if out_tree != tree:
        raise CarryTypeError(
            f"{what}: the body returns a carry of structure {out_tree}, but the carry "
            f"is {tree}; the body must return the carry's structure{where_text(source_info)}"
        )
    for path, a, b in zip(paths or leaf_paths(tree, "carry"), in_avals, out_avals):
        if not same_type(a, b):
            raise CarryTypeError(
                f"{what}: carry leaf {path} enters the body as {a.str_short()} but "
                f"the body returns {b.str_short()}; {_carry_fix(a, b)}"
                f"{where_text(source_info)}"
            )


def _carry_fix(a: ShapedArray, b: ShapedArray) -> str:
    """What to do about a carry whose type changed in the body."""
    if a.shape != b.shape:
        return (
            "a loop carry keeps one shape in every iteration (it cannot grow or "
            "shrink): allocate its final size before the loop and fill it in "
            "with x.at[i].set(...) or lax.dynamic_update_slice, or return the "
            "per-iteration pieces as scan outputs"
        )
    return (
        "a loop carry keeps its dtype (and weak type) in every iteration: "
        f"convert the body's result with .astype({b.dtype.name} -> {a.dtype.name}), "
        "or give the initial value the dtype the body computes"
    )


def trace_loop_body(fun, tree, leaves, what, source_info, paths=None):
    """Traces a carry -> carry body, first promoting weak initial carries."""
    in_tree = args_tree(tree)
    traced = trace_function(
        fun, in_tree, [aval_of(x) for x in leaves], what, arg_paths=paths
    )
    leaves, changed = promote_weak_carry(leaves, traced.out_avals)
    if changed:
        traced = trace_function(
            fun, in_tree, [aval_of(x) for x in leaves], what, arg_paths=paths
        )
    check_carry(
        what,
        tree,
        traced.out_tree,
        [aval_of(x) for x in leaves],
        traced.out_avals,
        source_info,
        paths,
    )
    return traced, leaves


def forwarded_carries(closed: ClosedOlympuspr, n_carry: int, n_after: int = 0):
    """Whether each carry output is its carry input passed through unchanged
    (the program's invars end with the carries, then `n_after` others): JAX
    then returns the loop's initial value itself, a Python scalar included."""
    o = closed.olympuspr
    start = len(o.invars) - n_carry - n_after
    carries = o.invars[start : start + n_carry]
    return [out is inp for out, inp in zip(o.outvars[:n_carry], carries)]


def reads(closed: ClosedOlympuspr) -> set:
    """The variables a program's equations or outputs read."""
    o = closed.olympuspr
    read = {v for eqn in o.eqns for v in eqn.invars if isinstance(v, Var)}
    return read | {v for v in o.outvars if isinstance(v, Var)}


def args_tree(*trees) -> PyTreeDef:
    """The treedef of the argument tuple `(a, b, ...)` given each one's treedef."""
    return PyTreeDef(tuple, None, tuple(trees))


# ---- program surgery and list helpers of the transformation rules ----------------------
def reorder(closed: ClosedOlympuspr, in_order=None, out_order=None) -> ClosedOlympuspr:
    """The same program with its invars / outvars permuted."""
    o = closed.olympuspr
    invars = o.invars if in_order is None else [o.invars[i] for i in in_order]
    outvars = o.outvars if out_order is None else [o.outvars[i] for i in out_order]
    return ClosedOlympuspr(Olympuspr([], invars, o.eqns, outvars, o.debug_info), [])


def with_ignored_invars(closed: ClosedOlympuspr, avals) -> ClosedOlympuspr:
    """The same program taking extra trailing arguments it does not read."""
    o = closed.olympuspr
    extra = [Var(a) for a in avals]
    return ClosedOlympuspr(
        Olympuspr([], o.invars + extra, o.eqns, o.outvars, o.debug_info), []
    )


def select_mask(mask, xs) -> list:
    return [x for x, m in zip(xs, mask) if m]


def split_blocks(values, *sizes) -> list[list]:
    return [[values[i] for i in block] for block in blocks(*sizes)]


# ---- jvp -----------------------------------------------------------------------------
def differentiable_mask(values, tangents) -> list[bool]:
    return [
        not is_zero(t) and is_differentiable(aval_of(v))
        for v, t in zip(values, tangents)
    ]


def tangents_out(primals, nonzero, tangents) -> list:
    """Output tangents: the bound ones where `nonzero`, symbolic zeros elsewhere."""
    given = iter(tangents)
    return [next(given) if nz else Zero(aval_of(p)) for p, nz in zip(primals, nonzero)]


def loop_jvp_program(body, const_nz, carry_nz, xs_nz, n_ys):
    """jvp of a loop body `(consts, carry, xs) -> (carry, ys)`, widening the set of
    carries with nonzero tangents until the body preserves it."""

    def run(carry_nz):
        traced, out_nz = jvp_program(
            body, [*const_nz, *carry_nz, *xs_nz], "jvp", [*carry_nz, *([False] * n_ys)]
        )
        return (traced, out_nz), out_nz[: len(carry_nz)]

    (traced, out_nz), carry_nz = carry_fixpoint(run, carry_nz)
    return traced, out_nz, carry_nz


# ---- partial evaluation: known (primal) work now, unknown (tangent) work staged ------
def merge(known_mask, known_vals, unknown_vals) -> list:
    known_it, unknown_it = iter(known_vals), iter(unknown_vals)
    return [next(known_it) if k else next(unknown_it) for k in known_mask]


def stage_all(trace, primitive, args, params):
    with set_current_trace(trace.tangent_trace):
        return primitive.bind(*args, **params)


def split_loop_body(
    body: ClosedOlympuspr, known_consts, known_carry, known_xs, n_carry
):
    """The body with its nested sub-program calls split (`split_nested`), and its
    known carries: a fixpoint, since the split decides which carries stay known
    and the known carries decide the split. Returns (body, deferred,
    known_carry, out_known), `deferred` as `split_nested` gives it.

    Each step re-splits for the carries still known: a split made while a
    carry was known may compute it inside a known call together with other
    known outputs (e.g. a checkpoint's primal output beside its tangent
    residuals), so on that stale split a carry turning unknown would wrongly
    take those outputs with it."""

    def run(known_carry):
        known_in = [*known_consts, *known_carry, *known_xs]
        split, deferred = split_nested(body, known_in)
        out_known = known_outputs(split.olympuspr, known_in, deferred)
        return (split, deferred, out_known), out_known[:n_carry]

    (split, deferred, out_known), known_carry = carry_fixpoint(
        run, known_carry, operator.and_
    )
    return split, deferred, known_carry, out_known


def invariant_values(olympuspr: Olympuspr, const_env: dict, wanted: list) -> list:
    """Computes `wanted` invariant variables now, binding only the equations they need."""
    env = dict(const_env)
    bind_eqns(backward_slice(olympuspr.eqns, wanted)[0], env)
    return [read_atom(env, v) for v in wanted]


# ---- batching ------------------------------------------------------------------------
def to_front(vals, dims, axis_size):
    return [
        v if d is not_mapped else batch_to_front(v, axis_size, d)
        for v, d in zip(vals, dims)
    ]


def split_batch_avals(closed, axis_size, in_batched, avals) -> list | None:
    """The batched body's input types where an operand's type holds a sharding
    (a batch split between devices in explicit mode keeps its layout in the
    body, as JAX's); None otherwise (typed from the per-example program).
    `avals` are the operands' types, batched ones with the batch at 0; one
    batched only by a widened carry (its operand unbatched) gets the plain
    batched type."""
    if all(getattr(a, "sharding", None) is None for a in avals):
        return None
    typed = []
    for inner, b, a in zip(closed.in_avals, in_batched, avals):
        if not b:
            typed.append(inner)
        elif a.shape == (axis_size, *inner.shape):
            typed.append(inner.update(shape=a.shape, sharding=a.sharding))
        else:
            typed.append(inner.update(shape=(axis_size, *inner.shape)))
    return typed


def run_batched(closed, axis_size, in_batched, args, n_out) -> list:
    """Runs a sub-program on batched arguments now; every output batched at 0."""
    traced, _ = batch_program(
        closed,
        axis_size,
        in_batched,
        [True] * n_out,
        "vmap",
        split_batch_avals(closed, axis_size, in_batched, [aval_of(a) for a in args]),
    )
    return eval_program(traced.closed.olympuspr, [], [*traced.consts, *args])


def batched_carry_fixpoint(
    body, axis_size, const_batched, carry_batched, xs_batched, n_ys, avals=()
):
    """Batches a loop body, widening the batched carries until the body
    preserves them. `avals` (where given) are the body's operands' types, the
    batched ones with the batch at 0, so a split batch keeps its layout."""

    def run(carry_batched):
        in_batched = [*const_batched, *carry_batched, *xs_batched]
        traced, out_batched = batch_program(
            body,
            axis_size,
            in_batched,
            [*carry_batched, *([False] * n_ys)],
            "vmap",
            avals and split_batch_avals(body, axis_size, in_batched, avals),
        )
        return (traced, out_batched), out_batched[: len(carry_batched)]

    (traced, out_batched), carry_batched = carry_fixpoint(run, carry_batched)
    return traced, out_batched, carry_batched
