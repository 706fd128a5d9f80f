"""`checkpoint` (`remat`): rematerialisation, its policies and memory budget.

A checkpoint holds the user's function as a sub-program. Under linearize its
partial evaluation splits it into a forward part (`role="call"`), a
recomputation of the residuals the policy does not save (`role="remat"`,
behind an optimization barrier) and a linear part (`role="lin"`), whose
transpose is `role="transpose"`; the optimizer's fuse pass reads the role,
not the name. Which values are recomputed is the slicer's business
(`olympus/transforms/remat.py`); `checkpoint_policies` and
`checkpoint_name` choose what is saved.
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from olympus import config
from olympus.backends.xla.lowering import lower_closed_inline, lowering_rules
from olympus.backends.xla.array import to_device
from olympus.ir import dtypes
from olympus.ir.analysis import backward_slice
from olympus.ir.core import ClosedOlympuspr, Olympuspr, Primitive, Var, all_primitives
from olympus.ir.structure import call_structure, declare
from olympus.lax.base import define_primitive
from olympus.lax.custom_derivatives import (
    optimization_barrier_p,
    trace_user_function,
    with_named_argnums,
)
from olympus.lax.pjit import _pjit_impl
from olympus.tracer import core, refs
from olympus.tracer.core import aval_of, set_current_trace
from olympus.tracer.functions import argnums_partial, dynamic_argnums
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import (
    function_name,
)
from olympus.transforms.ad_util import Zero, instantiate, is_differentiable, is_zero
from olympus.transforms.batching import (
    batch_rules,
    batch_to_front,
)
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import (
    backward_pass,
    declare_call_primitive,
    linearize_flat,
    partial_eval_rules,
    transpose_rules,
)
from olympus.transforms.programs import (
    cached_batch_program,
    cached_program,
    cached_sparse_jvp_program,
    partial_eval_program,
    sparse_tangents,
    transpose_call,
)
from olympus.transforms.remat import (
    reading_saved_tags,
    recompute_program,
    recompute_slice,
    saveable_residuals,
    with_saved_intermediates,
)

# ---- checkpoint / remat -------------------------------------------------------------
checkpoint_p = Primitive("checkpoint", multiple_results=True, traits=("never_merged",))
declare(checkpoint_p, call_structure("olympuspr"))
all_primitives["checkpoint"] = checkpoint_p
checkpoint_p.def_abstract_eval(lambda *avals, olympuspr, **params: olympuspr.out_avals)
checkpoint_p.def_impl(
    lambda *args, olympuspr, policy, name, role="call": _pjit_impl(
        *args, olympuspr=olympuspr, name=name
    )
)
lowering_rules[checkpoint_p] = lambda ctx, *args, olympuspr, **params: (
    lower_closed_inline(ctx.emitter, olympuspr, args)
)


# The parts a checkpoint becomes under reverse mode, by `role`, and the name
# each part takes from the name of the checkpoint it came from ("call": the
# user's function, or a forward or jvp of one).
PART_NAMES = {
    "call": "{}",
    "remat": "remat({})",  # recomputes the residuals the policy does not save
    "lin": "lin({})",  # the linear part, reading the residuals
    "transpose": "transpose(lin({}))",  # the linear part, transposed
    "remat_transpose": "remat(transpose(lin({})))",  # its recomputation inside
}


def part_name(role: str, base: str) -> str:
    """The name of the `role` part of the checkpoint named `base`."""
    return PART_NAMES[role].format(base)


def checkpoint_base(params: dict) -> str:
    """The name of the checkpoint a part came from (`part_name`'s inverse): the
    optimizer pairs a checkpoint's parts by it."""
    head, tail = PART_NAMES[params.get("role", "call")].split("{}")
    name = params["name"]
    return name[len(head) : len(name) - len(tail)]


def _checkpoint_jvp(primals, tangents, *, olympuspr, policy, name, role="call"):
    nonzero = [not is_zero(t) for t in tangents]
    jvp, has_tangent = cached_sparse_jvp_program(olympuspr, nonzero, f"jvp({name})")
    outs = checkpoint_p.bind(
        *jvp.consts,
        *primals,
        *[t for t in tangents if not is_zero(t)],
        olympuspr=jvp.closed,
        policy=policy,
        name=name,
        role=role,
    )
    n = len(olympuspr.out_avals)
    return outs[:n], sparse_tangents(outs[n:], has_tangent, olympuspr.out_avals)


class _MemoryBudget:
    """`checkpoint_policies.memory_budget(nbytes)`: not a per-value rule but a
    choice over all the values of one checkpoint call (`_within_budget`).
    Asked about a single value, as other policies are, it saves nothing."""

    def __init__(self, nbytes: int):
        if isinstance(nbytes, bool) or int(nbytes) != nbytes or nbytes < 0:
            raise ValueError(
                f"memory_budget: nbytes must be a non-negative int, got {nbytes!r}"
            )
        self.nbytes = int(nbytes)
        self.__name__ = f"memory_budget({self.nbytes})"  # how the IR prints the param

    def __call__(self, prim, *avals, **params) -> bool:
        return False

    def __repr__(self) -> str:
        return self.__name__


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _eqn_cost(eqn) -> int:
    """Rough work of recomputing an equation: multiply-adds for dot_general,
    nothing for cheap arithmetic and data movement, else (transcendentals,
    reductions, ...) a few operations per output element."""
    out = sum(int(np.prod(v.aval.shape, dtype=np.int64)) for v in eqn.outvars)
    name = eqn.primitive.name
    if name == "dot_general":
        (lhs_contract, _), _ = eqn.params["dimension_numbers"]
        lhs_shape = eqn.invars[0].aval.shape
        return out * max(
            1, int(np.prod([lhs_shape[d] for d in lhs_contract], dtype=np.int64))
        )
    for param in ("olympuspr", "call"):
        sub = eqn.params.get(param)
        if isinstance(sub, ClosedOlympuspr):
            return sum(_eqn_cost(e) for e in sub.olympuspr.eqns)
    # cheap steps (data movement, arithmetic on values at hand) spare no work
    return 0 if "cheap" in eqn.primitive.traits else 8 * max(out, 1)


def _within_budget(known: ClosedOlympuspr, num_res: int, nbytes: int) -> tuple:
    """Which residuals and intermediate values one call of the checkpoint saves,
    at most `nbytes` of them (its arguments are kept anyway: the recomputation
    starts from them): greedily the value whose saving removes the most
    recomputation per byte, until nothing more fits. Returns `known` widened
    with the saved intermediates, num_res and saveable (as
    `with_saved_intermediates`)."""
    program = known.olympuspr
    producers = {v: eqn for eqn in program.eqns for v in eqn.outvars}
    res_vars = program.outvars[len(program.outvars) - num_res :]
    needed = [v for v in res_vars if isinstance(v, Var) and v in producers]
    eqns, _ = backward_slice(program.eqns, needed)
    candidates = [v for eqn in eqns for v in eqn.outvars]
    if len(candidates) > 256:  # keep the greedy search cheap: residuals and dots only
        candidates = [
            v
            for v in candidates
            if v in set(needed) or producers[v].primitive.name == "dot_general"
        ]

    def recompute_cost(saved: set) -> int:
        wanted = [v for v in needed if v not in saved]
        return sum(
            _eqn_cost(e) for e in recompute_slice(program.eqns, wanted, saved)[0]
        )

    saved: set = set()
    used, cost = 0, recompute_cost(saved)
    while cost:
        best = None
        for v in candidates:
            size = _nbytes(v.aval)
            if v in saved or used + size > nbytes:
                continue
            gain = cost - recompute_cost(saved | {v})
            if gain > 0 and (best is None or gain / max(size, 1) > best[0]):
                best = (gain / max(size, 1), v, size, cost - gain)
        if best is None:
            break
        _, v, size, cost = best
        saved.add(v)
        used += size
    saveable = [
        not (isinstance(v, Var) and v in producers) or v in saved for v in res_vars
    ]
    extra = [v for v in candidates if v in saved and v not in set(res_vars)]
    if not extra:
        return known, num_res, saveable
    wider = Olympuspr(
        program.constvars, program.invars, program.eqns, program.outvars + extra
    )
    return (
        ClosedOlympuspr(wider, known.consts),
        num_res + len(extra),
        saveable + [True] * len(extra),
    )


def _policy_key(policy):
    """The policy as part of a cache key: what it saves depends on more than
    the flags of the residuals (an unhashable policy object by identity)."""
    try:
        hash(policy)
    except TypeError:
        return ("id", id(policy))
    return policy


def _forwarded_inputs(
    known: ClosedOlympuspr, num_res: int, inputs: list, residuals
) -> list:
    """The residuals, with those that are inputs of `known` taken from `inputs`:
    the forward call's outputs are copies (eagerly, a second buffer each)."""
    position = {v: i for i, v in enumerate(known.olympuspr.invars)}
    res_vars = known.olympuspr.outvars[len(known.olympuspr.outvars) - num_res :]
    first = {}  # a value saved twice (a tag and what it tags) is one residual
    for v, r in zip(res_vars, residuals):
        first.setdefault(v, inputs[position[v]] if v in position else r)
    return [first[v] for v in res_vars]


def _with_policy(known: ClosedOlympuspr, num_res: int, policy) -> tuple:
    """The forward program as `policy` has it: readers of tagged values read the
    saved tag, and (for a budget, or values saved on the way to unsaved
    residuals) widened to return the saved intermediates. Returns (program,
    num_res, saveable), each step cached on the program."""
    if policy is not None:
        known = cached_program(
            known,
            ("tags", _policy_key(policy)),
            lambda: reading_saved_tags(known, policy),
        )
    saveable = saveable_residuals(known, num_res, policy)
    if isinstance(policy, _MemoryBudget):
        return cached_program(
            known,
            ("budget", policy.nbytes),
            lambda: _within_budget(known, num_res, policy.nbytes),
        )
    if not all(saveable) and policy is not None:
        return cached_program(
            known,
            ("save", tuple(saveable), _policy_key(policy)),
            lambda: with_saved_intermediates(known, num_res, saveable, policy),
        )
    return known, num_res, saveable


def _recomputed(known, num_res, saveable, inputs, residuals, **params) -> list:
    """The residuals, those the policy does not save recomputed in the backward
    pass (staged on the tangent trace) from the checkpoint's `inputs` and the
    saved ones."""
    if all(saveable):
        return residuals
    recompute, saved_used = cached_program(
        known,
        ("recompute", tuple(saveable)),
        lambda: recompute_program(known, num_res, saveable),
    )
    # The barrier keeps XLA from merging the recomputation with the forward pass.
    inputs = optimization_barrier_p.bind(*inputs, *[residuals[i] for i in saved_used])
    again = iter(checkpoint_p.bind(*inputs, olympuspr=recompute, **params))
    return [r if s else next(again) for r, s in zip(residuals, saveable)]


def _checkpoint_partial_eval(
    trace, args, unknown, *, olympuspr, policy, name, role="call"
):
    """Forward: the known part on the parent. Backward: the residuals the
    policy does not save are recomputed by rerunning the known part, staged
    into the linear program (so it runs when the backward pass does)."""
    known, known_consts, staged, out_unknown, num_staged_res = partial_eval_program(
        olympuspr, unknown, name
    )
    known, num_res, saveable = _with_policy(known, num_staged_res, policy)
    inputs = [*known_consts, *(a for a, u in zip(args, unknown) if not u)]
    with set_current_trace(trace.parent):
        forward = checkpoint_p.bind(
            *inputs, olympuspr=known, policy=policy, name=name, role=role
        )
    n_known = len(forward) - num_res
    residuals = _forwarded_inputs(known, num_res, inputs, forward[n_known:])
    with set_current_trace(trace.tangent_trace):
        residuals = _recomputed(
            known,
            num_res,
            saveable,
            inputs,
            residuals,
            policy=policy,
            name=part_name("remat", name),
            role="remat_transpose" if role == "transpose" else "remat",
        )
        # the saved intermediates past num_staged_res only fed the recomputation
        staged_outs = iter(
            checkpoint_p.bind(
                *residuals[:num_staged_res],
                *(a for a, u in zip(args, unknown) if u),
                olympuspr=staged,
                policy=policy,
                name=part_name("lin", name),
                role="lin",
            )
        )
    known_outs = iter(forward[:n_known])
    return [next(staged_outs) if u else next(known_outs) for u in out_unknown]


def _checkpoint_transpose(cts, *args, olympuspr, policy, name, role="call"):
    return transpose_call(
        checkpoint_p,
        cts,
        args,
        olympuspr,
        f"transpose({name})",
        policy=policy,
        role="transpose" if role == "lin" else "call",
    )


def _checkpoint_batch(axis_size, vals, dims, *, olympuspr, policy, name, role="call"):
    in_batched = [d is not None for d in dims]
    force_out = [False] * len(olympuspr.out_avals)
    batched, out_batched = cached_batch_program(
        olympuspr, axis_size, in_batched, force_out, name
    )
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    outs = checkpoint_p.bind(
        *batched.consts,
        *vals,
        olympuspr=batched.closed,
        policy=policy,
        name=name,
        role=role,
    )
    return outs, [0 if b else None for b in out_batched]


jvp_rules[checkpoint_p] = _checkpoint_jvp
partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval
transpose_rules[checkpoint_p] = _checkpoint_transpose
batch_rules[checkpoint_p] = _checkpoint_batch
declare_call_primitive(checkpoint_p)


class checkpoint_policies:
    """Which intermediate values a checkpoint's forward pass may save:
    `policy(primitive, *avals, **params) -> bool`."""

    @staticmethod
    def everything_saveable(prim, *avals, **params) -> bool:
        return True

    @staticmethod
    def nothing_saveable(prim, *avals, **params) -> bool:
        return False

    @staticmethod
    def dots_saveable(prim, *avals, **params) -> bool:
        return prim.name == "dot_general"

    @staticmethod
    def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
        return prim.name == "dot_general" and not params["dimension_numbers"][1][0]

    @staticmethod
    def save_only_these_names(*names: str) -> Callable:
        """Saves the values tagged with `checkpoint_name(x, name)` for these names."""
        return lambda prim, *avals, **params: prim is name_p and params["name"] in names

    @staticmethod
    def save_any_names_but_these(*names: str) -> Callable:
        """Saves every tagged value except those with these names."""
        return lambda prim, *avals, **params: (
            prim is name_p and params["name"] not in names
        )

    @staticmethod
    def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
        """Saves what either policy saves (e.g. the dots and the tagged values)."""
        for p in (policy_1, policy_2):
            if isinstance(p, _MemoryBudget) or not callable(p):
                why = "memory_budget chooses over a whole call, not per value"
                raise TypeError(
                    "checkpoint_policies.save_from_both_policies takes two per-value "
                    f"policies (such as dots_saveable), got {p!r}"
                    + (f": {why}" if isinstance(p, _MemoryBudget) else "")
                )
        return lambda prim, *avals, **params: bool(
            policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
        )

    @staticmethod
    def memory_budget(nbytes: int) -> Callable:
        """Saves at most `nbytes` per call of the checkpointed function (in a
        scan, per iteration), beyond its arguments: the values whose saving
        spares the most recomputation per byte (e.g. matmul results) first;
        the backward pass recomputes the rest."""
        return _MemoryBudget(nbytes)


# ---- checkpoint_name: tags a value for checkpoint policies ---------------------------
name_p = define_primitive(
    "name", lambda x, *, name: x, lambda ctx, x, *, name: x, traits=("cheap",)
)
transpose_rules[name_p] = lambda ct, x, *, name: [ct]
batch_rules[name_p] = lambda axis_size, vals, dims, *, name: (
    name_p.bind(*vals, name=name),
    dims[0],
)


def _name_jvp(primals, tangents, *, name):
    """The tag stays on the primal value; the tangent passes through."""
    return name_p.bind(primals[0], name=name), tangents[0]


jvp_rules[name_p] = _name_jvp


def checkpoint_name(x, name: str):
    """`x` (a pytree), tagged `name` so checkpoint policies such as
    `checkpoint_policies.save_only_these_names(name)` can choose to save it."""
    if core.current_trace() is core.eval_trace:
        return x
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [name_p.bind(v, name=str(name)) for v in leaves])


def _as_arrays(out):
    """`out` with its Python and NumPy leaves as Arrays (Python numbers weak),
    as the outputs of a checkpointed function are in JAX."""
    leaves, tree = tree_flatten(out)
    return tree_unflatten(tree, [_as_array(v) for v in leaves])


def _as_array(v):
    if isinstance(v, (bool, int, float, complex, np.ndarray, np.generic)):
        return to_device(v, aval_of(v))  # a Python number's aval is weak
    return v


_NOT_GIVEN = object()  # `concrete`'s default: passing it at all is refused


class ConcreteRemovedError(NotImplementedError):
    """checkpoint(concrete=...): an option JAX removed in 0.10."""


def checkpoint(
    fun: Callable,
    *,
    prevent_cse: bool = True,
    policy: Callable | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    concrete=_NOT_GIVEN,
) -> Callable:
    """Returns `fun` with its intermediate values recomputed in the backward pass.

    Rematerialization trades compute for memory: instead of storing every
    intermediate of the forward pass for grad, only the inputs (and what
    `policy` chooses to save) are kept, and the rest is recomputed when the
    gradient needs it. Values are unchanged.

    Args:
      fun: the function whose internals are recomputed.
      prevent_cse: if True, keep XLA from merging the recomputation with the
        forward pass (which would undo the saving).
      policy: a function from an equation's primitive and types to whether
        its output is saved; see olympus.checkpoint_policies (e.g.
        `checkpoint_policies.dots_saveable`). None saves nothing.
      static_argnums: positional arguments that are Python values, traced
        for (like jit's), not arrays.
      static_argnames: the same, by keyword.
      concrete: removed (as in JAX 0.10, which refuses it too); pass
        static_argnums for the arguments the body needs concrete.

    Returns:
      A function with `fun`'s signature and outputs.

    Raises:
      ConcreteRemovedError: `concrete` was passed (a NotImplementedError).
      ConcretizationTypeError: the body needs a concrete value from a
        non-static argument.

    Example:
      >>> loss = olympus.checkpoint(lambda w, x: jnp.sum(jnp.tanh(x @ w)))
      >>> w, x = jnp.zeros(2), jnp.ones((3, 2))
      >>> olympus.grad(loss)(w, x)  # tanh(x @ w) is recomputed in the backward pass
      Array([3., 3.], dtype=float32)
    """
    if concrete is not _NOT_GIVEN:
        raise ConcreteRemovedError(
            "checkpoint/remat: the `concrete` option was removed (as in JAX "
            "0.10); mark the arguments the body needs concrete with "
            "static_argnums=... instead"
        )
    static = with_named_argnums(fun, static_argnums, static_argnames)
    static_names = (
        (static_argnames,)
        if isinstance(static_argnames, str)
        else tuple(static_argnames)
    )
    name = function_name(fun)

    traced: dict = {}  # like jit: one body per argument signature (if it holds no tracers)

    @functools.wraps(fun, updated=())
    def remat_fun(*args, **kwargs):
        if core.current_trace() is core.eval_trace:  # JAX's eager remat gives Arrays
            return _as_arrays(fun(*args, **kwargs))
        # the refs `fun` uses go in and come out as values (olympus/tracer/refs.py)
        route = None if policy is checkpoint_policies.everything_saveable else _rerun
        return refs.threaded_call(
            staged, fun, args, kwargs, f"checkpoint of {name}", route
        )

    def staged(fun, args, kwargs):
        kwargs = dict(kwargs)
        static_kw = {k: kwargs.pop(k) for k in static_names if k in kwargs}
        fun_kw = functools.partial(fun, **static_kw) if static_kw else fun
        statics = [args[i] for i in static if i < len(args)] + sorted(static_kw.items())
        positions = tuple(i for i in static if i < len(args))
        dyn_fun, dyn = argnums_partial(
            fun_kw, dynamic_argnums(len(args), positions), args
        )
        leaves, in_tree = tree_flatten((dyn, kwargs))
        key = (
            in_tree,
            tuple(aval_of(x) for x in leaves),
            tuple(statics),
            dtypes.x64_enabled(),
            config.read("olympus_default_matmul_precision"),
        )
        entry = traced.get(key) if _hashable(key) else None
        if entry is None:
            entry = trace_user_function(
                lambda d, k: dyn_fun(*d, **k), leaves, in_tree, "checkpoint", name
            )
            if _hashable(key) and not any(isinstance(c, core.Tracer) for c in entry[1]):
                traced[key] = entry
        body, consts, out_tree = entry
        outs = checkpoint_p.bind(
            *consts, *leaves, olympuspr=body, policy=policy, name=name, role="call"
        )
        return tree_unflatten(out_tree, outs)

    return remat_fun


def _rerun(call, args: tuple, kwargs: dict):
    """A checkpoint using refs under reverse-mode differentiation (vjp, grad),
    unless its policy saves everything: as JAX's, it runs once forward and
    again in the backward pass, reading the refs as they are then, writing
    them again, and differentiating that rerun. NotImplemented elsewhere."""
    from olympus.lax.custom_derivatives import custom_vjp
    from olympus.transforms.jvp import JVPTrace

    trace = core.current_trace()
    rule_trace = getattr(trace, "rule_trace", None)
    if not isinstance(trace, JVPTrace) or not getattr(rule_trace, "reverse", False):
        return NotImplemented
    leaves, tree = tree_flatten((args, kwargs))
    where = [i for i, x in enumerate(leaves) if isinstance(x, core.Tracer)]
    dyn = [leaves[i] for i in where]
    static = [None if isinstance(x, core.Tracer) else x for x in leaves]

    def run(*dyn):
        full = list(static)
        for i, x in zip(where, dyn):
            full[i] = x
        a, k = tree_unflatten(tree, full)
        return call(a, k)

    rerun = custom_vjp(run)
    rerun.defvjp(lambda *dyn: (run(*dyn), dyn), lambda dyn, ct: _pullback(run, dyn, ct))
    return rerun(*dyn)


def _pullback(run: Callable, dyn: tuple, ct) -> tuple:
    """The cotangents of `run`'s arguments `dyn` for its output's `ct`: vjp
    from the transforms below lax (olympus.autodiff sits above it)."""
    box = {}

    def flat(*d):
        leaves, box["tree"] = tree_flatten(run(*d))
        return leaves

    mask = [is_differentiable(aval_of(x)) for x in dyn]
    outs, linear = linearize_flat(flat, list(dyn), mask, "checkpoint", reverse=True)
    ct_leaves = [
        c if is_differentiable(aval_of(o)) else Zero(aval_of(o))
        for o, c in zip(outs, tree_flatten(ct)[0])
    ]
    cts = iter(backward_pass(linear.olympuspr, linear.consts, ct_leaves))
    return tuple(
        instantiate(next(cts)) if m else np.zeros(aval_of(x).shape, dtypes.float0)
        for x, m in zip(dyn, mask)
    )


def _hashable(key) -> bool:
    try:
        hash(key)
        return True
    except TypeError:
        return False


remat = checkpoint
