"""Derivatives the user controls: stop_gradient, custom_jvp, custom_vjp and
checkpoint (remat).

Each wraps the user's function as a sub-program held by one equation, so
jit and make_olympuspr see it, and registers rules for the transforms:

* `custom_jvp_call`: evaluating it runs the function; its jvp rule runs the
  user's jvp function instead of differentiating the body.
* `custom_vjp_call`: its jvp rule runs the user's `fwd` for the outputs and
  residuals and emits a `custom_lin` equation, linear in the tangents, whose
  transpose rule is the user's `bwd`. Forward mode is therefore unavailable
  (as in JAX); use custom_jvp for that.
* `checkpoint`: under linearize, the residuals the backward pass needs are
  recomputed from the checkpoint's inputs, except those the `policy` lets
  the forward pass save.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Sequence

import numpy as np

from olympus.backends.xla.lowering import lower_closed_inline, lowering_rules
from olympus import config
from olympus.ir import dtypes
from olympus.ir.analysis import backward_slice
from olympus.ir.core import ClosedOlympuspr, Olympuspr, Primitive, Var
from olympus.ir.structure import call_structure, declare, structure_of
from olympus.ir.core import all_primitives
from olympus.lax.base import define_primitive
from olympus.lax.elementwise import convert_element_type_p
from olympus.lax.pjit import _pjit_impl, pjit_p
from olympus.tracer import core
from olympus.tracer.core import aval_of, set_current_trace
from olympus.tracer.evaluation import bind_eqns, eval_program, read_atom
from olympus.tracer.functions import argnums_partial, dynamic_argnums, flatten_fun
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import (
    DebugInfo,
    SubProgram,
    function_name,
    trace_sub_program,
)
from olympus.lax.reductions import reduce_sum_p
from olympus.transforms.batching import (
    batch_rules,
    batch_to_front,
    def_elementwise,
    vmap,
)
from olympus.transforms.ad_util import Zero, instantiate, is_zero, zeros_like_aval
from olympus.transforms.jvp import JVPTrace, defjvp_zero, jvp_rules
from olympus.transforms.linearize import (
    PartialTrace,
    call_primitives,
    is_undefined,
    partial_eval_rules,
    transpose_rules,
)
from olympus.transforms.programs import (
    cached_batch_program,
    cached_jvp_program,
    cached_program,
    cached_transpose_program,
    partial_eval_program,
)


class CustomDerivativeError(TypeError):
    """A custom_jvp / custom_vjp rule returned something of the wrong shape."""


# ---- stop_gradient ------------------------------------------------------------
stop_gradient_p = define_primitive("stop_gradient", lambda x: x, lambda ctx, x: x)
defjvp_zero(stop_gradient_p)
def_elementwise(stop_gradient_p)


def stop_gradient(x):
    """`x` itself, with a zero derivative.

    For values that should be treated as constants by grad (targets,
    moving averages). Works on pytrees; integer leaves pass unchanged.

    Args:
      x: a pytree of arrays.

    Returns:
      x, whose derivative is zero.

    Raises:
      OlympusTypeError: a leaf of x is not an array or a number.

    Example:
      >>> print(olympus.grad(lambda x: x * lax.stop_gradient(x))(3.0))
      3.0
    """
    if core.current_trace() is core.eval_trace:
        return x
    leaves, tree = tree_flatten(x)
    return tree_unflatten(
        tree,
        [
            stop_gradient_p.bind(v) if dtypes.is_inexact(aval_of(v).dtype) else v
            for v in leaves
        ],
    )


# ---- tracing a user function into a sub-program -------------------------------------
def _positional(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    if not kwargs:
        return args
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


def _trace_sub_program(
    fun: Callable, leaves: list, in_tree, transform: str, name: str
) -> SubProgram:
    """`fun` of pytrees traced on the types of `leaves`, with its output tree."""
    flat_fun, store = flatten_fun(fun, in_tree)
    traced = trace_sub_program(
        flat_fun, [aval_of(x) for x in leaves], DebugInfo(transform, name, ())
    )
    return traced._replace(out_tree=store["tree"])


def _call_primitive(name: str) -> Primitive:
    """A primitive that runs its `call` sub-program (eagerly, or inlined when lowered)."""
    prim = Primitive(name, multiple_results=True)
    all_primitives[name] = prim
    prim.def_abstract_eval(lambda *avals, call, **params: call.out_avals)
    prim.def_impl(
        lambda *args, call, **params: eval_program(
            call.olympuspr, call.consts, list(args)
        )
    )
    lowering_rules[prim] = lambda ctx, *args, call, **params: lower_closed_inline(
        ctx.emitter, call, args
    )
    return prim


def _batched_call(call, axis_size, vals, dims, num_consts, name):
    """The batched body (every output batched at 0), its operands, num_consts
    and the batch dims (0 or None) of the user-visible arguments."""
    in_batched = [d is not None for d in dims]
    force_out = [True] * len(call.out_avals)
    batched, _ = cached_batch_program(call, axis_size, in_batched, force_out, name)
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    arg_dims = [None if d is None else 0 for d in dims[num_consts:]]
    return (
        batched.closed,
        [*batched.consts, *vals],
        len(batched.consts) + num_consts,
        arg_dims,
    )


def _match_tangent(t, primal):
    """A user tangent with its primal's dtype (Python scalars come in weak)."""
    want, got = aval_of(primal), aval_of(t)
    if got.shape != want.shape:
        raise CustomDerivativeError(
            f"a custom derivative rule returned a tangent {got.str_short()} for an output "
            f"{want.str_short()}; tangents need the output's shape and dtype"
        )
    if got.dtype != want.dtype:
        return convert_element_type_p.bind(
            t, new_dtype=want.dtype, weak_type=want.weak_type
        )
    return t


class SymbolicZero:
    """A zero tangent or cotangent, as rules defined with `symbolic_zeros=True`
    see and may return it (JAX's `jax.custom_derivatives.SymbolicZero`)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval.str_short()})"


class CustomVJPPrimal:
    """An argument of a `symbolic_zeros=True` fwd: its value, and whether it
    is differentiated (a tangent that is not a symbolic zero). A pytree leaf,
    as JAX's."""

    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _from_symbolic(t, primal):
    """A rule's tangent as olympus's: SymbolicZero -> Zero, dtypes matched."""
    if isinstance(t, SymbolicZero) or is_zero(t):
        return Zero(aval_of(primal))
    return _match_tangent(t, primal)


def _is_symbolic_zero(x) -> bool:
    return isinstance(x, SymbolicZero)


def _to_symbolic(t):
    return SymbolicZero(t.aval) if is_zero(t) else t


def _check_closure_tangents(kind: str, name: str, const_tangents) -> None:
    """The user's rule cannot see values the function closes over, so their
    derivatives would be silently lost: refuse instead."""
    for t in const_tangents:
        if not is_zero(t):
            raise CustomDerivativeError(
                f"the {kind} function {name} closes over a value being differentiated "
                f"({aval_of(t).str_short()}); its rule cannot account for it. Pass that "
                f"value as an argument of {name} instead (olympus.closure_convert "
                f"hoists closed-over values into arguments)"
            )


# ---- custom_jvp -----------------------------------------------------------------
custom_jvp_call_p = _call_primitive("custom_jvp_call")


def _custom_jvp_call_jvp(primals, tangents, *, call, jvp, num_consts, name):
    """Runs the user's jvp rule (closed-over values must not be differentiated)."""
    _check_closure_tangents("custom_jvp", name, tangents[:num_consts])
    args = primals[num_consts:]
    arg_tangents = tangents[num_consts:]
    if not getattr(jvp, "symbolic_zeros", False):
        arg_tangents = [instantiate(t) for t in arg_tangents]
    outs, tangent_outs = jvp(args, arg_tangents)
    return outs, [_from_symbolic(t, o) for t, o in zip(tangent_outs, outs)]


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_batch(axis_size, vals, dims, *, call, jvp, num_consts, name):
    """Stays a custom_jvp_call (so grad of vmap still uses the user's rule),
    whose jvp runs the user's rule per example under vmap."""
    batched, operands, num_consts, arg_dims = _batched_call(
        call, axis_size, vals, dims, num_consts, name
    )

    def batched_jvp(primals, tangents):
        per_example = lambda p, t: jvp(list(p), list(t))  # noqa: E731
        return vmap(per_example, in_axes=(arg_dims, arg_dims))(
            list(primals), list(tangents)
        )

    outs = custom_jvp_call_p.bind(
        *operands, call=batched, jvp=batched_jvp, num_consts=num_consts, name=name
    )
    return outs, [0] * len(outs)


batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch


class ArgnamesError(ValueError):
    """An argument name (nondiff_argnames, static_argnames) the function lacks."""


def _with_named_argnums(fun, argnums, argnames) -> tuple:
    """argnums with the positions of the parameters named in argnames added
    (as JAX, for arguments that callers pass positionally)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    if not names:
        return nums
    params = list(inspect.signature(fun).parameters)
    for n in names:
        if n not in params:
            raise ArgnamesError(
                f"{getattr(fun, '__name__', fun)} has no parameter {n!r} "
                f"(its parameters: {params}); fix the argnames"
            )
    return tuple(sorted(set(nums) | {params.index(n) for n in names}))


class custom_jvp:
    """A function with a user-defined JVP (forward-mode derivative) rule.

    For functions whose automatic derivative is unstable or slow (log1p of
    exp, a solver's fixed point): the rule given with `defjvp` replaces
    differentiation of the body. grad works too, by transposing the rule,
    so the rule's tangent output must be linear in the tangents.

    Args:
      fun: the primal function.
      nondiff_argnums: positional arguments that are not differentiated
        (Python values or arrays passed to the rule first).
      nondiff_argnames: the same, by keyword.

    Returns:
      A callable object; decorate the rule with `@f.defjvp`, whose
      `rule(primals, tangents)` returns `(primal_out, tangent_out)`
      (`defjvps` takes one tangent function per argument instead).

    Raises:
      CustomDerivativeError: the rule returns outputs whose structure, shape
        or dtype differ from fun's.

    Example:
      >>> @olympus.custom_jvp
      ... def softplus(x):
      ...     return jnp.log1p(jnp.exp(x))
      >>> @softplus.defjvp
      ... def softplus_jvp(primals, tangents):
      ...     (x,), (t,) = primals, tangents
      ...     return softplus(x), t * lax.logistic(x)
      >>> print(olympus.grad(softplus)(0.0))
      0.5
    """

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ):
        self.fun = fun
        self.nondiff_argnums = _with_named_argnums(
            fun, nondiff_argnums, nondiff_argnames
        )
        self.jvp: Callable | None = None
        functools.update_wrapper(self, fun, updated=())

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """`jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`;
        with `symbolic_zeros=True` the tangents of arguments not differentiated
        arrive as `SymbolicZero` (otherwise as zeros)."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `jvp_i(t_i, ans, *primals)`, summed (None: no dependence)."""

        def jvp(primals, tangents):
            ans = self.fun(*primals)
            ans_leaves, tree = tree_flatten(ans)
            total = [Zero(aval_of(a)) for a in ans_leaves]
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                part = tree_flatten(rule(t, ans, *primals))[0]
                total = [p if is_zero(s) else s + p for s, p in zip(total, part)]
            return ans, tree_unflatten(tree, [instantiate(t) for t in total])

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = function_name(self.fun)
        if self.jvp is None:
            raise AttributeError(
                f"no JVP rule defined for custom_jvp function {name}; use defjvp"
            )
        args = _positional(self.fun, args, kwargs)
        if core.current_trace() is core.eval_trace:
            return self.fun(*args)
        if _known_under_linearize(args):  # primal work: on the trace below
            with set_current_trace(core.current_trace().parent):
                return self(*args)
        nondiff = [args[i] for i in self.nondiff_argnums]
        dyn_fun, dyn = argnums_partial(
            self.fun, dynamic_argnums(len(args), self.nondiff_argnums), args
        )
        leaves, in_tree = tree_flatten(dyn)
        trace = core.current_trace()
        direct = isinstance(trace, JVPTrace)
        if direct:  # JAX's order: the rule runs on the primal values, fun never
            call, consts, out_tree = None, [], None
        else:
            call, consts, out_tree = _trace_sub_program(
                dyn_fun, leaves, in_tree, "custom_jvp", name
            )

        def flat_jvp(primal_leaves, tangent_leaves):
            nonlocal out_tree
            tangent_leaves = [_to_symbolic(t) for t in tangent_leaves]
            primals = tuple(tree_unflatten(in_tree, primal_leaves))
            tangents = tuple(tree_unflatten(in_tree, tangent_leaves))
            result = self.jvp(*nondiff, primals, tangents)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise CustomDerivativeError(
                    f"the custom_jvp rule of {name} must return (primal_out, tangent_out)"
                )
            out_leaves, o_tree = tree_flatten(result[0])
            t_leaves, t_tree = tree_flatten(result[1], is_leaf=_is_symbolic_zero)
            out_tree = o_tree if out_tree is None else out_tree
            if o_tree != out_tree or t_tree != out_tree:
                raise CustomDerivativeError(
                    f"the custom_jvp rule of {name} returned primal {o_tree} and tangent "
                    f"{t_tree}, but {name} returns {out_tree}"
                )
            return out_leaves, t_leaves

        flat_jvp.symbolic_zeros = getattr(self, "symbolic_zeros", False)
        if direct:
            rule = functools.partial(
                _custom_jvp_call_jvp, call=None, jvp=flat_jvp, num_consts=0, name=name
            )
            outs = _rule_on_primals(trace, self, args, leaves, rule)
            return outs if out_tree is None else tree_unflatten(out_tree, outs)
        outs = custom_jvp_call_p.bind(
            *consts, *leaves, call=call, jvp=flat_jvp, num_consts=len(consts), name=name
        )
        return tree_unflatten(out_tree, outs)


# ---- custom_vjp -----------------------------------------------------------------
custom_vjp_call_p = _call_primitive("custom_vjp_call")
custom_lin_p = Primitive("custom_lin", multiple_results=True)
all_primitives["custom_lin"] = custom_lin_p
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **params: list(out_avals))


def _custom_lin_unavailable(*args, name, **params):
    raise TypeError(
        f"forward-mode differentiation (jvp, jacfwd) of the custom_vjp function {name} "
        f"is not supported: it only has a reverse-mode rule. Use grad/vjp/jacrev, or "
        f"define it with custom_jvp instead"
    )


custom_lin_p.def_impl(_custom_lin_unavailable)
lowering_rules[custom_lin_p] = lambda ctx, *args, **params: _custom_lin_unavailable(
    **params
)


def _custom_vjp_call_jvp(primals, tangents, *, call, fwd, bwd, num_consts, name):
    """fwd gives outputs and residuals; the tangent side is a `custom_lin`, which
    reverse mode transposes with bwd and forward mode cannot evaluate."""
    _check_closure_tangents("custom_vjp", name, tangents[:num_consts])
    args = primals[num_consts:]
    if getattr(fwd, "symbolic_zeros", False):
        outs, res = fwd(args, [not is_zero(t) for t in tangents[num_consts:]])
    else:
        outs, res = fwd(args)
    arg_tangents = [instantiate(t) for t in tangents[num_consts:]]
    tangent_outs = custom_lin_p.bind(
        *res,
        *arg_tangents,
        num_res=len(res),
        bwd=bwd,
        out_avals=tuple(aval_of(o) for o in outs),
        name=name,
    )
    return outs, tangent_outs


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, name):
    res = args[:num_res]
    if not getattr(bwd, "symbolic_zeros", False):
        cts = [instantiate(ct) for ct in cts]
    cts_in = bwd(list(res), list(cts))
    return [None] * num_res + [None if is_zero(ct) else ct for ct in cts_in]


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
transpose_rules[custom_lin_p] = _custom_lin_transpose


def _custom_vjp_call_batch(axis_size, vals, dims, *, call, fwd, bwd, num_consts, name):
    """Stays a custom_vjp_call whose fwd and bwd run the user's per example
    under vmap; cotangents of arguments shared by the batch are summed."""
    batched, operands, num_consts, arg_dims = _batched_call(
        call, axis_size, vals, dims, num_consts, name
    )

    def batched_fwd(args, *perturbed):
        per_example = lambda a: fwd(list(a), *perturbed)  # noqa: E731
        return vmap(per_example, in_axes=(arg_dims,))(list(args))

    batched_fwd.symbolic_zeros = getattr(fwd, "symbolic_zeros", False)

    def batched_bwd(res, cts):
        return _batched_cotangents(
            bwd, res, cts, arg_dims, vals[-len(arg_dims) :] if arg_dims else []
        )

    outs = custom_vjp_call_p.bind(
        *operands,
        call=batched,
        fwd=batched_fwd,
        bwd=batched_bwd,
        num_consts=num_consts,
        name=name,
    )
    return outs, [0] * len(outs)


def _batched_cotangents(bwd, res, cts, arg_dims, args) -> list:
    """bwd per example; symbolic zeros stay symbolic, shared arguments' sum."""
    zero = []

    def per_example(r, c):
        cts_in = bwd(list(r), list(c))
        zero[:] = [is_zero(ct) for ct in cts_in]
        return [instantiate(ct) for ct in cts_in]

    cts_in = vmap(per_example)(list(res), list(cts))
    return [
        Zero(aval_of(x))
        if z
        else ct
        if d is not None
        else reduce_sum_p.bind(ct, axes=(0,))
        for ct, z, d, x in zip(cts_in, zero, arg_dims, args)
    ]


def _custom_lin_batch(axis_size, vals, dims, *, num_res, bwd, out_avals, name):
    """All operands batched at 0; the transpose runs bwd per example."""
    vals = [batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)]

    def batched_bwd(res, cts):
        return _batched_cotangents(
            bwd, res, cts, [0] * (len(vals) - num_res), vals[num_res:]
        )

    out_avals = tuple(a.update(shape=(axis_size, *a.shape)) for a in out_avals)
    outs = custom_lin_p.bind(
        *vals, num_res=num_res, bwd=batched_bwd, out_avals=out_avals, name=name
    )
    return outs, [0] * len(outs)


batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch
batch_rules[custom_lin_p] = _custom_lin_batch


class custom_vjp:
    """A function with a user-defined VJP (reverse-mode derivative) rule.

    For gradients that should differ from the automatic one (clipping,
    straight-through estimators) or that are cheaper to compute by hand:
    `defvjp(fwd, bwd)` gives the forward pass, which returns the output and
    residuals, and the backward pass, which maps residuals and the output
    cotangent to one cotangent per argument.

    Args:
      fun: the primal function.
      nondiff_argnums: positional arguments that are not differentiated
        (passed to bwd first).
      nondiff_argnames: the same, by keyword.

    Returns:
      A callable object; call `f.defvjp(fwd, bwd)` before differentiating.
      `fwd(*args)` returns `(output, residuals)`; `bwd(residuals, ct)`
      returns a tuple of cotangents, one per differentiated argument.

    Raises:
      CustomDerivativeError: bwd returns the wrong number, shapes or dtypes
        of cotangents, or fwd's output differs from fun's.
      TypeError: forward mode (jvp, jacfwd) is applied: a custom_vjp
        function has only a reverse rule (as in JAX).

    Example:
      >>> @olympus.custom_vjp
      ... def clip_gradient(x):
      ...     return x
      >>> clip_gradient.defvjp(lambda x: (x, None),
      ...                      lambda res, g: (jnp.clip(g, -1.0, 1.0),))
      >>> print(olympus.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
      1.0
    """

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ):
        self.fun = fun
        self.nondiff_argnums = _with_named_argnums(
            fun, nondiff_argnums, nondiff_argnames
        )
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        functools.update_wrapper(self, fun, updated=())

    def defvjp(
        self,
        fwd: Callable,
        bwd: Callable,
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """fwd(*args) -> (out, residuals); bwd(*nondiff_args, residuals, ct_out) ->
        a tuple with one cotangent (or None for zero) per differentiable argument.

        With `symbolic_zeros=True` (JAX's), fwd's arguments arrive as
        `CustomVJPPrimal(value, perturbed)`, bwd's zero cotangents as
        `SymbolicZero`, and bwd may return `SymbolicZero`. `optimize_remat` is
        accepted for JAX's signature; olympus's fwd is traced once either way."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args, **kwargs):
        name = function_name(self.fun)
        if self.fwd is None:
            raise AttributeError(
                f"no VJP defined for custom_vjp function {name}; use defvjp"
            )
        args = _positional(self.fun, args, kwargs)
        if core.current_trace() is core.eval_trace:
            return self.fun(*args)
        if _known_under_linearize(args):  # primal work: on the trace below
            with set_current_trace(core.current_trace().parent):
                return self(*args)
        nondiff = [args[i] for i in self.nondiff_argnums]
        dyn_argnums = dynamic_argnums(len(args), self.nondiff_argnums)
        dyn_fun, dyn = argnums_partial(self.fun, dyn_argnums, args)
        dyn_fwd, _ = argnums_partial(self.fwd, dyn_argnums, args)
        leaves, in_tree = tree_flatten(dyn)
        trace = core.current_trace()
        direct = isinstance(trace, JVPTrace)
        if direct:  # JAX's order: fwd runs on the primal values, fun never
            call, consts, out_tree = None, [], None
        else:
            call, consts, out_tree = _trace_sub_program(
                dyn_fun, leaves, in_tree, "custom_vjp", name
            )
        res_tree_box = {}

        symbolic = getattr(self, "symbolic_zeros", False)

        def flat_fwd(arg_leaves, perturbed=None):
            nonlocal out_tree
            if symbolic:
                flags = perturbed or [True] * len(arg_leaves)
                arg_leaves = [CustomVJPPrimal(x, p) for x, p in zip(arg_leaves, flags)]
            result = dyn_fwd(*tree_unflatten(in_tree, arg_leaves))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise CustomDerivativeError(
                    f"the custom_vjp fwd of {name} must return (output, residuals)"
                )
            out_leaves, o_tree = tree_flatten(result[0])
            out_tree = o_tree if out_tree is None else out_tree
            if o_tree != out_tree:
                raise CustomDerivativeError(
                    f"the custom_vjp fwd of {name} returned {o_tree}, but {name} "
                    f"returns {out_tree}"
                )
            res_leaves, res_tree_box["tree"] = tree_flatten(result[1])
            return out_leaves, res_leaves

        def flat_bwd(res_leaves, ct_leaves):
            ct_leaves = [_to_symbolic(ct) for ct in ct_leaves]
            res = tree_unflatten(res_tree_box["tree"], res_leaves)
            cts = self.bwd(*nondiff, res, tree_unflatten(out_tree, ct_leaves))
            return _flatten_bwd_output(name, cts, dyn, leaves)

        flat_fwd.symbolic_zeros = flat_bwd.symbolic_zeros = symbolic
        if direct:
            rule = functools.partial(
                _custom_vjp_call_jvp,
                call=None,
                fwd=flat_fwd,
                bwd=flat_bwd,
                num_consts=0,
                name=name,
            )
            outs = _rule_on_primals(trace, self, args, leaves, rule)
            return outs if out_tree is None else tree_unflatten(out_tree, outs)
        outs = custom_vjp_call_p.bind(
            *consts,
            *leaves,
            call=call,
            fwd=flat_fwd,
            bwd=flat_bwd,
            num_consts=len(consts),
            name=name,
        )
        return tree_unflatten(out_tree, outs)


def _known_under_linearize(args) -> bool:
    """Whether the current trace is linearize's and no argument is a tangent:
    the call is then primal work (a custom rule calling its own function on
    the primals), which runs on the trace below, concretely under eager grad."""
    trace = core.current_trace()
    if not isinstance(trace, PartialTrace):
        return False
    return not any(trace.is_unknown(x) for x in tree_flatten(args)[0])


def _closure_tangents(trace: JVPTrace, custom) -> list:
    """Tangents of the values of `trace` that the function's closure holds
    (what a staged call would see as its constants)."""
    cells = getattr(custom.fun, "__closure__", None) or ()
    found = []
    for cell in cells:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        for x in tree_flatten(contents)[0]:
            if isinstance(x, core.Tracer) and getattr(x, "_trace", None) is trace:
                found.append(trace.primal_tangent(x)[1])
    return found


def _rule_on_primals(trace: JVPTrace, custom, args: tuple, leaves: list, rule):
    """A custom_jvp/custom_vjp function called under a JVP trace (grad, jvp):
    as in JAX, its rule (or fwd) runs on the primal values themselves, so
    under eager grad it sees concrete values and Python may branch on them,
    and the primal function is not run (nor traced) for it. With no tangent
    in, the function runs on the primals one trace down. Returns the output
    leaves (or the whole output, in that case)."""
    _check_closure_tangents(
        type(custom).__name__,
        function_name(custom.fun),
        _closure_tangents(trace, custom),
    )
    pairs = [trace.primal_tangent(x) for x in leaves]
    if all(is_zero(t) for _, t in pairs):
        with set_current_trace(trace.rule_trace):
            plain = [trace.primal_tangent(x)[0] for x in tree_flatten(args)[0]]
            return custom(*tree_unflatten(tree_flatten(args)[1], plain))
    primals, tangents = [p for p, _ in pairs], [t for _, t in pairs]
    with set_current_trace(trace.rule_trace):
        outs, tangent_outs = rule(primals, tangents)
    return [trace._wrap(p, t) for p, t in zip(outs, tangent_outs)]


def _flatten_bwd_output(name: str, cts, dyn: tuple, leaves: list) -> list:
    if not isinstance(cts, (tuple, list)) or len(cts) != len(dyn):
        raise CustomDerivativeError(
            f"the custom_vjp bwd of {name} must return a tuple with one cotangent per "
            f"differentiable argument ({len(dyn)}), got {type(cts).__name__}"
            f"{'' if not isinstance(cts, (tuple, list)) else f' of length {len(cts)}'}"
        )
    flat = []
    for arg, ct in zip(dyn, cts):
        arg_leaves = tree_flatten(arg)[0]
        if ct is None:
            flat += [Zero(aval_of(x)) for x in arg_leaves]
            continue
        ct_leaves = tree_flatten(
            ct, is_leaf=lambda c: c is None or _is_symbolic_zero(c)
        )[0]
        if len(ct_leaves) != len(arg_leaves):
            raise CustomDerivativeError(
                f"the custom_vjp bwd of {name} returned a cotangent with "
                f"{len(ct_leaves)} leaves for an argument with {len(arg_leaves)}"
            )
        flat += [
            Zero(aval_of(x)) if c is None else _from_symbolic(c, x)
            for c, x in zip(ct_leaves, arg_leaves)
        ]
    return flat


# ---- optimization_barrier: values XLA may not merge with equal computations ---------
optimization_barrier_p = define_primitive(
    "optimization_barrier",
    lambda *avals: list(avals),
    lambda ctx, *args: ctx.emitter.op(
        "stablehlo.optimization_barrier", list(args), list(ctx.avals_in)
    ),
    multiple_results=True,
)


def _barrier_jvp(primals, tangents):
    """Tangents pass through unchanged (the barrier only matters to XLA)."""
    return optimization_barrier_p.bind(*primals), list(tangents)


jvp_rules[optimization_barrier_p] = _barrier_jvp
transpose_rules[optimization_barrier_p] = lambda cts, *args: list(cts)
batch_rules[optimization_barrier_p] = lambda axis_size, vals, dims: (
    optimization_barrier_p.bind(*vals),
    list(dims),
)


def optimization_barrier(values):
    """The same pytree of values, opaque to XLA's common-subexpression elimination.

    Args:
      values: a pytree of arrays.

    Returns:
      The same pytree of values.

    Raises:
      OlympusTypeError: a leaf is not an array or a number.

    Example:
      >>> lax.optimization_barrier((jnp.ones(2), 3.0))
      (Array([1., 1.], dtype=float32), Array(3., dtype=float32, weak_type=True))
    """
    leaves, tree = tree_flatten(values)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


# ---- checkpoint / remat -------------------------------------------------------------
checkpoint_p = Primitive("checkpoint", multiple_results=True)
declare(checkpoint_p, call_structure("olympuspr"))
all_primitives["checkpoint"] = checkpoint_p
checkpoint_p.def_abstract_eval(lambda *avals, olympuspr, **params: olympuspr.out_avals)
checkpoint_p.def_impl(
    lambda *args, olympuspr, policy, name: _pjit_impl(
        *args, olympuspr=olympuspr, name=name
    )
)
lowering_rules[checkpoint_p] = lambda ctx, *args, olympuspr, **params: (
    lower_closed_inline(ctx.emitter, olympuspr, args)
)


def _checkpoint_jvp(primals, tangents, *, olympuspr, policy, name):
    nonzero = [not is_zero(t) for t in tangents]
    jvp = cached_jvp_program(olympuspr, nonzero, f"jvp({name})")
    outs = checkpoint_p.bind(
        *jvp.consts,
        *primals,
        *[t for t in tangents if not is_zero(t)],
        olympuspr=jvp.closed,
        policy=policy,
        name=name,
    )
    n = len(olympuspr.out_avals)
    return outs[:n], outs[n:]


def _saveable(known: ClosedOlympuspr, num_res: int, policy) -> list[bool]:
    """Per residual: may the forward pass keep it (else the backward recomputes it)?"""
    producers = {v: eqn for eqn in known.olympuspr.eqns for v in eqn.outvars}
    res_vars = known.olympuspr.outvars[len(known.olympuspr.outvars) - num_res :]
    return [_policy_saves(producers, v, policy) for v in res_vars]


def _policy_saves(producers: dict, v, policy) -> bool:
    """Does `policy` save the value `v` of a program (`producers`: variable ->
    the equation making it)? Inputs and literals need no recomputing."""
    eqn = producers.get(v)
    if eqn is None:
        return True
    eqn = _named_inside_jit(eqn, v) or eqn
    return bool(policy) and bool(
        policy(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params)
    )


def _tags(eqn) -> list[tuple]:
    """(value, tagged) pairs of the enclosing program's variables that `eqn`
    makes equal: `tagged = checkpoint_name(value)`, also inside a jitted call
    that returns both (or takes the value as an argument)."""
    if eqn.primitive is name_p:
        x = eqn.invars[0]
        return [(x, eqn.outvars[0])] if isinstance(x, Var) else []
    if eqn.primitive is not pjit_p:
        return []
    body = eqn.params["olympuspr"].olympuspr
    outs = {v: o for v, o in zip(body.outvars, eqn.outvars) if isinstance(v, Var)}
    ins = {v: o for v, o in zip(body.invars, eqn.invars) if isinstance(o, Var)}
    return [
        (ins.get(s, outs.get(s)), outs[t])
        for inner in body.eqns
        for s, t in _tags(inner)
        if t in outs and (s in ins or s in outs)
    ]


def _reading_saved_tags(known: ClosedOlympuspr, policy) -> ClosedOlympuspr:
    """`known` with every reader of a tagged value, or of the value under the
    tag, reading the one of them that `policy` saves (else the tag).

    `checkpoint_name(v, "e")` is v, but jvp rules read v itself (exp's tangent
    reads exp's output): without this the residual is v, which the policy
    does not save, and the backward pass recomputes v although the tag, the
    same value, is saved. A saved tag's equation moves up to just after v is
    made, so that every reader of v comes after it. Jitted calls' bodies
    are rewritten the same way (their tags are saved too)."""
    program = known.olympuspr
    eqns = [_call_reading_saved_tags(eqn, policy) for eqn in program.eqns]
    if any(a is not b for a, b in zip(eqns, program.eqns)):
        program = Olympuspr(
            program.constvars, program.invars, eqns, program.outvars, program.debug_info
        )
        known = ClosedOlympuspr(program, known.consts)
    producers = {v: e for e in program.eqns for v in e.outvars}
    root, members, made_by = {}, {}, {}
    for eqn in program.eqns:
        for s, t in _tags(eqn):
            r = root[t] = root.get(s, s)
            members.setdefault(r, [r]).append(t)
            made_by[t] = eqn
    alias, hoisted, after, skip = {}, {}, {}, set()
    for r, group in members.items():
        # The saved one, else the first tag: then budget and saved-intermediate
        # searches see one value, not two copies of it.
        rep = next((m for m in group if _policy_saves(producers, m, policy)), group[1])
        renamed = {m: rep for m in group if m is not rep}
        if rep is r:  # r is made first: its tags are read as r from the start
            alias.update(renamed)
            continue
        eqn = made_by[rep]
        if eqn.primitive is name_p:  # `rep = name r`, right after r is made
            skip.add(id(eqn))
            eqn = eqn._replace(invars=[r])
            hoisted.setdefault(id(producers.get(r)), []).append(eqn)
        after.setdefault(id(eqn), []).append(renamed)
    if not alias and not after:
        return known

    def read(x):
        return alias.get(x, x) if isinstance(x, Var) else x

    eqns = []

    def emit(eqn):
        eqns.append(eqn._replace(invars=[read(x) for x in eqn.invars]))
        for renamed in after.pop(id(eqn), ()):
            alias.update(renamed)
        for tag in hoisted.pop(id(eqn), ()):
            emit(tag)

    for tag in hoisted.pop(id(None), ()):  # tags of inputs
        emit(tag)
    for eqn in program.eqns:
        if id(eqn) not in skip:
            emit(eqn)
    wider = Olympuspr(
        program.constvars,
        program.invars,
        eqns,
        [read(x) for x in program.outvars],
        program.debug_info,
    )
    return ClosedOlympuspr(wider, known.consts)


def _call_reading_saved_tags(eqn, policy):
    """`eqn`, a jitted call with its body rewritten by `_reading_saved_tags`."""
    if eqn.primitive is not pjit_p:
        return eqn
    body = eqn.params["olympuspr"]
    new = _reading_saved_tags(body, policy)
    return eqn if new is body else eqn._replace(params={**eqn.params, "olympuspr": new})


def _named_inside_jit(eqn, var):
    """The `checkpoint_name` equation that made `var` inside a jitted call
    (through nested ones), or None: a name policy sees a jitted function's tags."""
    while eqn.primitive is pjit_p:
        body = eqn.params["olympuspr"].olympuspr
        var = body.outvars[eqn.outvars.index(var)]
        eqn = next((e for e in body.eqns if var in e.outvars), None)
        if eqn is None:
            return None
    return eqn if eqn.primitive is name_p else None


def _recompute_program(known: ClosedOlympuspr, num_res: int, saveable: list[bool]):
    """The part of the known program that recomputes the residuals that are not
    saved, starting from its inputs and the saved residuals (dead code removed).

    Returns (program, positions of the saved residuals it takes as inputs)."""
    program = known.olympuspr
    res_vars = program.outvars[len(program.outvars) - num_res :]
    saved = {v: i for i, (v, keep) in enumerate(zip(res_vars, saveable)) if keep}
    unsaved = [v for v, keep in zip(res_vars, saveable) if not keep]
    kept, live = _recompute_slice(program.eqns, unsaved, saved)
    remade = {v for eqn in kept for v in eqn.outvars}
    # Saved residuals the recomputation reads, latest producer first.
    saved_inputs = [
        v
        for eqn in reversed(program.eqns)
        for v in eqn.outvars
        if v in saved and v in live and v not in remade
    ]
    saved_inputs = list(dict.fromkeys(saved_inputs))
    recompute = _with_fresh_vars(list(program.invars) + saved_inputs, kept, unsaved)
    return ClosedOlympuspr(recompute, []), [saved[v] for v in saved_inputs]


def _recompute_slice(eqns, wanted, saved) -> tuple[list, set]:
    """The equations that recompute `wanted` from the inputs and the `saved`
    values, in program order, and the variables they (and `wanted`) read. An
    equation is not rerun when the outputs read from it are saved (a jitted
    call returning a saved tag and the value under it)."""
    live, kept = set(wanted), []
    for eqn in reversed(eqns):
        read = [v for v in eqn.outvars if v in live]
        if not read or all(v in saved for v in read):
            continue
        if eqn.primitive is pjit_p and any(v in saved for v in eqn.outvars):
            eqn = _sliced_call(eqn, [v for v in read if v not in saved], saved)
        elif eqn.primitive.name == "cond" and any(v in saved for v in eqn.outvars):
            eqn = _sliced_cond(eqn, [v for v in read if v not in saved], saved)
        elif eqn.primitive.name == "scan" and any(
            v in saved
            for v in structure_of(eqn).split_outputs(eqn.params, eqn.outvars)[1]
        ):
            eqn = _sliced_scan(eqn, [v for v in read if v not in saved], saved)
        kept.append(eqn)
        live.update(x for x in eqn.invars if isinstance(x, Var))
    return kept[::-1], live


def _sliced_call(eqn, wanted: list, saved) -> object:
    """The jitted call `eqn` recomputing only its `wanted` outputs, from its
    inputs and its outputs that are `saved` (a tag inside it that the policy
    saves, returned by `_saving_intermediates`): rerun whole, it would
    recompute the saved value too."""
    body = eqn.params["olympuspr"]
    program = body.olympuspr
    inner = dict(zip(eqn.outvars, program.outvars))
    inner_saved = {inner[v] for v in eqn.outvars if v in saved}
    inner_wanted = [inner[v] for v in wanted]
    kept, live = _recompute_slice(
        program.eqns, [v for v in inner_wanted if isinstance(v, Var)], inner_saved
    )
    remade = {v for e in kept for v in e.outvars}
    args = [(x, v) for x, v in zip(eqn.invars, program.invars) if v in live]
    taken = {v for _, v in args} | set(program.constvars)
    saved_args = {}
    for v in eqn.outvars:
        w = inner[v]
        if v in saved and w in live and w not in remade and w not in taken:
            saved_args.setdefault(w, v)
    sliced = _with_fresh_vars(
        [v for _, v in args] + list(saved_args),
        kept,
        inner_wanted,
        constvars=program.constvars,
    )
    return eqn._replace(
        invars=[x for x, _ in args] + list(saved_args.values()),
        outvars=list(wanted),
        params={**eqn.params, "olympuspr": ClosedOlympuspr(sliced, body.consts)},
    )


def _with_fresh_vars(invars, eqns, outvars, constvars=()) -> Olympuspr:
    """The program over new Var objects: the recomputation is a program of its
    own, and sharing variables with the forward program would print both with
    the same names (so the printed text would not parse back to itself)."""
    fresh: dict = {}

    def bind(v: Var) -> Var:
        fresh[v] = Var(v.aval, v.suffix)
        return fresh[v]

    def read(x):
        return fresh.get(x, x) if isinstance(x, Var) else x

    new_constvars = [bind(v) for v in constvars]
    new_invars = [bind(v) for v in invars]
    new_eqns = [
        eqn._replace(
            invars=[read(x) for x in eqn.invars], outvars=[bind(v) for v in eqn.outvars]
        )
        for eqn in eqns
    ]
    return Olympuspr(new_constvars, new_invars, new_eqns, [read(v) for v in outvars])


def _with_saved_intermediates(
    known: ClosedOlympuspr, num_res: int, saveable: list[bool], policy
) -> tuple:
    """`known` also returning the values that `policy` saves (e.g. dots) on the
    way to the residuals it does not save, so the backward pass recomputes from
    them rather than from the inputs. Returns (program, num_res, saveable)."""
    program = known.olympuspr
    res_vars = program.outvars[len(program.outvars) - num_res :]
    wanted = [v for v, keep in zip(res_vars, saveable) if not keep]
    eqns, saved, _ = _saving_intermediates(program.eqns, wanted, policy)
    outputs = set(program.outvars)
    extra = [v for v in dict.fromkeys(saved) if v not in outputs]
    if not extra:
        return known, num_res, saveable
    wider = _returning_too(program, eqns, extra)
    return (
        ClosedOlympuspr(wider, known.consts),
        num_res + len(extra),
        saveable + [True] * len(extra),
    )


def _saving_intermediates(eqns, wanted, policy) -> tuple[list, list, set]:
    """The values that `policy` saves on the way to `wanted` (none of which it
    saves) and the variables read on that way. A jitted call on the way
    also returns the values inside it that the policy saves (as JAX's
    policies see inside pjit bodies), so `eqns` comes back with such calls
    widened. Returns (eqns, saved values, live variables)."""
    producers = {v: eqn for eqn in eqns for v in eqn.outvars}
    live, saved, out = {v for v in wanted if isinstance(v, Var)}, [], []
    for eqn in reversed(eqns):
        read = [v for v in eqn.outvars if v in live]
        kept = [v for v in read if not _policy_saves(producers, v, policy)]
        saved += [v for v in read if v not in kept]
        if kept and eqn.primitive is pjit_p:
            eqn, inner_saved, inputs = _exposing_saved(eqn, kept, policy)
            saved += inner_saved
            live.update(inputs)
        elif kept and eqn.primitive.name == "cond":
            eqn, inner_saved, inputs = _exposing_saved_in_branches(eqn, kept, policy)
            saved += inner_saved
            live.update(inputs)
        elif kept and eqn.primitive.name == "scan":
            eqn, inner_saved, inputs = _exposing_saved_in_scan(eqn, kept, policy)
            saved += inner_saved
            live.update(inputs)
        elif kept:
            live.update(x for x in eqn.invars if isinstance(x, Var))
        out.append(eqn)
    return out[::-1], saved, live


def _returning_too(program, eqns: list, extra: list) -> Olympuspr:
    """`program` with `eqns` in place of its own, also returning `extra` (the
    saved values a policy keeps for the backward)."""
    return Olympuspr(
        program.constvars,
        program.invars,
        eqns,
        program.outvars + extra,
        program.debug_info,
    )


def _operands_read(eqn, program, live: set) -> list:
    """The variables among `eqn`'s operands whose parameters in its body
    `program` are `live` (read on the way to what is kept)."""
    return [
        x
        for x, v in zip(eqn.invars, program.invars)
        if v in live and isinstance(x, Var)
    ]


def _exposing_saved(eqn, wanted: list, policy) -> tuple:
    """The jitted call `eqn` also returning the values inside it that `policy`
    saves on the way to its `wanted` outputs. Returns (the call, the saved
    values as its outputs, its inputs read on the way)."""
    body = eqn.params["olympuspr"]
    program = body.olympuspr
    inner = dict(zip(eqn.outvars, program.outvars))
    eqns, saved, live = _saving_intermediates(
        program.eqns, [inner[v] for v in wanted], policy
    )
    inputs = _operands_read(eqn, program, live)
    outer = {w: v for v, w in inner.items() if isinstance(w, Var)}
    extra = [w for w in dict.fromkeys(saved) if w not in outer]
    if not extra and all(a is b for a, b in zip(eqns, program.eqns)):
        return eqn, [outer[w] for w in saved], inputs
    new_outs = [Var(w.aval) for w in extra]
    outer.update(zip(extra, new_outs))
    wider = _returning_too(program, eqns, extra)
    call = eqn._replace(
        outvars=list(eqn.outvars) + new_outs,
        params={**eqn.params, "olympuspr": ClosedOlympuspr(wider, body.consts)},
    )
    return call, [outer[w] for w in dict.fromkeys(saved)], inputs


def _exposing_saved_in_branches(eqn, wanted: list, policy) -> tuple:
    """The cond `eqn` also returning the values inside its branches that
    `policy` saves on the way to its `wanted` outputs: each branch fills its
    own slots and zeros the other branches' (as cond's partial evaluation
    joins residuals). Returns (the cond, the saved values as its outputs, its
    operands read on the way)."""
    branches = eqn.params["branches"]
    positions = [eqn.outvars.index(v) for v in wanted]
    found = [
        _saving_intermediates(
            b.olympuspr.eqns, [b.olympuspr.outvars[i] for i in positions], policy
        )
        for b in branches
    ]
    (index,), operands = structure_of(eqn).split(eqn.params, eqn.invars)
    read = [
        any(b.olympuspr.invars[j] in live for b, (_, _, live) in zip(branches, found))
        for j in range(len(operands))
    ]
    inputs = [index] + [x for x, r in zip(operands, read) if r]
    inputs = [x for x in inputs if isinstance(x, Var)]
    slots = [v for _, saved, _ in found for v in dict.fromkeys(saved)]
    if not slots or any(b.consts or b.olympuspr.constvars for b in branches):
        return eqn, [], inputs
    wider = []
    for b, (eqns, saved, _) in zip(branches, found):
        program, own = b.olympuspr, set(saved)

        def fun(*args, program=program, eqns=eqns, own=own):
            env = dict(zip(program.invars, args))
            bind_eqns(eqns, env)
            return [read_atom(env, v) for v in program.outvars] + [
                read_atom(env, v) if v in own else zeros_like_aval(v.aval)
                for v in slots
            ]

        traced = trace_sub_program(fun, b.in_avals, DebugInfo("checkpoint", "cond", ()))
        if traced.consts:
            return eqn, [], inputs
        wider.append(traced.closed)
    new_outs = [Var(v.aval) for v in slots]
    cond = eqn._replace(
        outvars=list(eqn.outvars) + new_outs,
        params={**eqn.params, "branches": tuple(wider)},
    )
    return cond, new_outs, inputs


def _sliced_cond(eqn, wanted: list, saved) -> object:
    """The cond `eqn` recomputing only its `wanted` outputs, each branch from
    the operands and the cond's `saved` outputs (taken as operands too)."""
    kept_at = [i for i, v in enumerate(eqn.outvars) if v in saved]
    wanted_at = [eqn.outvars.index(v) for v in wanted]
    branches = [
        ClosedOlympuspr(_sliced_body(b.olympuspr, wanted_at, kept_at), b.consts)
        for b in eqn.params["branches"]
    ]
    return eqn._replace(
        invars=list(eqn.invars) + [eqn.outvars[i] for i in kept_at],
        outvars=list(wanted),
        params={
            **eqn.params,
            "branches": tuple(branches),
            "linear": tuple(eqn.params["linear"]) + (False,) * len(kept_at),
        },
    )


def _exposing_saved_in_scan(eqn, wanted: list, policy) -> tuple:
    """The scan `eqn` also returning, stacked as extra outputs, the values
    inside its body that `policy` saves on the way to its `wanted` outputs
    and its carries (the recomputation reruns the carries' chain). Returns
    (the scan, the saved values as its outputs, its operands read)."""
    body, structure = eqn.params["olympuspr"], structure_of(eqn)
    program = body.olympuspr
    carry_at = structure.split_outputs(eqn.params, range(len(eqn.outvars)))[0]
    positions = carry_at + [eqn.outvars.index(v) for v in wanted]
    eqns, saved, live = _saving_intermediates(
        program.eqns, [program.outvars[i] for i in positions], policy
    )
    inputs = _operands_read(eqn, program, live)
    extra = list(dict.fromkeys(saved))
    if not extra:
        return eqn, [], inputs
    wider = _returning_too(program, eqns, extra)
    length = eqn.params["length"]
    new_outs = [Var(v.aval.update(shape=(length, *v.aval.shape))) for v in extra]
    scan = eqn._replace(
        outvars=list(eqn.outvars) + new_outs,
        params={**eqn.params, "olympuspr": ClosedOlympuspr(wider, body.consts)},
    )
    return scan, new_outs, inputs


def _sliced_body(program, wanted_at: list, kept_at: list) -> Olympuspr:
    """A cond branch's or scan body's `program` computing only its outputs at
    `wanted_at`, taking those at `kept_at` (saved by the forward) as extra
    inputs after its own."""
    outs = program.outvars
    eqns, _ = _recompute_slice(
        program.eqns,
        [outs[i] for i in wanted_at if isinstance(outs[i], Var)],
        {outs[i] for i in kept_at},
    )
    taken = [
        outs[i] if isinstance(outs[i], Var) else Var(outs[i].aval) for i in kept_at
    ]
    return _with_fresh_vars(
        list(program.invars) + taken,
        eqns,
        [outs[i] for i in wanted_at],
        constvars=program.constvars,
    )


def _sliced_scan(eqn, wanted: list, saved) -> object:
    """The scan `eqn` recomputing its carries and its `wanted` outputs, each
    iteration from its operands and its row of the scan's `saved` stacked
    outputs (taken as extra scanned operands)."""
    body, structure = eqn.params["olympuspr"], structure_of(eqn)
    carry_at, ys_at = structure.split_outputs(eqn.params, range(len(eqn.outvars)))
    kept_at = [i for i in ys_at if eqn.outvars[i] in saved]
    wanted_ys_at = [i for i in map(eqn.outvars.index, wanted) if i in ys_at]
    sliced = _sliced_body(body.olympuspr, carry_at + wanted_ys_at, kept_at)
    carries = [eqn.outvars[i] for i in carry_at]
    return eqn._replace(
        invars=list(eqn.invars) + [eqn.outvars[i] for i in kept_at],
        outvars=[v if v in wanted else Var(v.aval) for v in carries]
        + [eqn.outvars[i] for i in wanted_ys_at],
        params={
            **eqn.params,
            "olympuspr": ClosedOlympuspr(sliced, body.consts),
            "linear": tuple(eqn.params["linear"]) + (False,) * len(kept_at),
        },
    )


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


# Cheap to recompute (data movement, arithmetic on values already at hand): saving
# their results spares no real work, so a memory budget is not spent on them.
_CHEAP = frozenset(
    {
        "add",
        "sub",
        "mul",
        "neg",
        "max",
        "min",
        "abs",
        "sign",
        "select_n",
        "convert_element_type",
        "broadcast_in_dim",
        "reshape",
        "squeeze",
        "expand_dims",
        "transpose",
        "slice",
        "concatenate",
        "copy",
        "optimization_barrier",
        "name",
        "stop_gradient",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
    }
)


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
    return 0 if name in _CHEAP else 8 * max(out, 1)


def _within_budget(known: ClosedOlympuspr, num_res: int, nbytes: int) -> tuple:
    """Which residuals and intermediate values one call of the checkpoint saves,
    at most `nbytes` of them (its arguments are kept anyway: the recomputation
    starts from them): greedily the value whose saving removes the most
    recomputation per byte, until nothing more fits. Returns `known` widened
    with the saved intermediates, num_res and saveable (as
    `_with_saved_intermediates`)."""
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
            _eqn_cost(e) for e in _recompute_slice(program.eqns, wanted, saved)[0]
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


def _checkpoint_partial_eval(trace, args, unknown, *, olympuspr, policy, name):
    """Forward: the known part on the parent. Backward: the residuals the
    policy does not save are recomputed by rerunning the known part, staged
    into the linear program (so it runs when the backward pass does)."""
    known, known_consts, staged, out_unknown, num_res = partial_eval_program(
        olympuspr, unknown, name
    )
    known_args = [a for a, u in zip(args, unknown) if not u]
    if policy is not None:
        known = cached_program(
            known,
            ("tags", _policy_key(policy)),
            lambda: _reading_saved_tags(known, policy),
        )
    num_staged_res, saveable = num_res, _saveable(known, num_res, policy)
    if isinstance(policy, _MemoryBudget):
        known, num_res, saveable = cached_program(
            known,
            ("budget", policy.nbytes),
            lambda: _within_budget(known, num_res, policy.nbytes),
        )
    elif not all(saveable) and policy is not None:
        known, num_res, saveable = cached_program(
            known,
            ("save", tuple(saveable), _policy_key(policy)),
            lambda: _with_saved_intermediates(known, num_res, saveable, policy),
        )
    with set_current_trace(trace.parent):
        forward = checkpoint_p.bind(
            *known_consts, *known_args, olympuspr=known, policy=policy, name=name
        )
    n_known = len(forward) - num_res
    residuals = _forwarded_inputs(
        known, num_res, [*known_consts, *known_args], forward[n_known:]
    )
    if not all(saveable):
        recompute, saved_used = cached_program(
            known,
            ("recompute", tuple(saveable)),
            lambda: _recompute_program(known, num_res, saveable),
        )
        with set_current_trace(trace.tangent_trace):
            # The barrier keeps XLA from merging the recomputation with the forward pass.
            inputs = optimization_barrier_p.bind(
                *known_consts, *known_args, *[residuals[i] for i in saved_used]
            )
            again = iter(
                checkpoint_p.bind(
                    *inputs, olympuspr=recompute, policy=policy, name=f"remat({name})"
                )
            )
        residuals = [r if s else next(again) for r, s in zip(residuals, saveable)]
    residuals = residuals[
        :num_staged_res
    ]  # the saved intermediates only fed the recompute
    unknown_args = [a for a, u in zip(args, unknown) if u]
    with set_current_trace(trace.tangent_trace):
        staged_outs = iter(
            checkpoint_p.bind(
                *residuals,
                *unknown_args,
                olympuspr=staged,
                policy=policy,
                name=f"lin({name})",
            )
        )
    known_outs = iter(forward[:n_known])
    return [next(staged_outs) if u else next(known_outs) for u in out_unknown]


def _checkpoint_transpose(cts, *args, olympuspr, policy, name):
    undefined = [is_undefined(a) for a in args]
    ct_nonzero = [not is_zero(ct) for ct in cts]
    transposed = cached_transpose_program(
        olympuspr, undefined, ct_nonzero, f"transpose({name})"
    )
    defined = [a for a in args if not is_undefined(a)]
    outs = iter(
        checkpoint_p.bind(
            *transposed.consts,
            *defined,
            *[ct for ct in cts if not is_zero(ct)],
            olympuspr=transposed.closed,
            policy=policy,
            name=f"transpose({name})",
        )
    )
    return [next(outs) if u else None for u in undefined]


def _checkpoint_batch(axis_size, vals, dims, *, olympuspr, policy, name):
    in_batched = [d is not None for d in dims]
    force_out = [False] * len(olympuspr.out_avals)
    batched, out_batched = cached_batch_program(
        olympuspr, axis_size, in_batched, force_out, name
    )
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    outs = checkpoint_p.bind(
        *batched.consts, *vals, olympuspr=batched.closed, policy=policy, name=name
    )
    return outs, [0 if b else None for b in out_batched]


jvp_rules[checkpoint_p] = _checkpoint_jvp
partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval
call_primitives.add(checkpoint_p)
transpose_rules[checkpoint_p] = _checkpoint_transpose
batch_rules[checkpoint_p] = _checkpoint_batch


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
name_p = define_primitive("name", lambda x, *, name: x, lambda ctx, x, *, name: x)
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


def checkpoint(
    fun: Callable,
    *,
    prevent_cse: bool = True,
    policy: Callable | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
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

    Returns:
      A function with `fun`'s signature and outputs.

    Raises:
      ConcretizationTypeError: the body needs a concrete value from a
        non-static argument.

    Example:
      >>> loss = olympus.checkpoint(lambda w, x: jnp.sum(jnp.tanh(x @ w)))
      >>> w, x = jnp.zeros(2), jnp.ones((3, 2))
      >>> olympus.grad(loss)(w, x)  # tanh(x @ w) is recomputed in the backward pass
      Array([3., 3.], dtype=float32)
    """
    static = _with_named_argnums(fun, static_argnums, static_argnames)
    static_names = (
        (static_argnames,)
        if isinstance(static_argnames, str)
        else tuple(static_argnames)
    )
    name = function_name(fun)

    traced: dict = {}  # like jit: one body per argument signature (if it holds no tracers)

    @functools.wraps(fun, updated=())
    def remat_fun(*args, **kwargs):
        if core.current_trace() is core.eval_trace:
            return fun(*args, **kwargs)
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
            entry = _trace_sub_program(
                lambda d, k: dyn_fun(*d, **k), leaves, in_tree, "checkpoint", name
            )
            if _hashable(key) and not any(isinstance(c, core.Tracer) for c in entry[1]):
                traced[key] = entry
        body, consts, out_tree = entry
        outs = checkpoint_p.bind(
            *consts, *leaves, olympuspr=body, policy=policy, name=name
        )
        return tree_unflatten(out_tree, outs)

    return remat_fun


def _hashable(key) -> bool:
    try:
        hash(key)
        return True
    except TypeError:
        return False


remat = checkpoint
