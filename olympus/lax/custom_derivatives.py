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

import dataclasses
import functools
import inspect
from typing import Any, Callable, Sequence


from olympus.backends.xla.lowering import lower_closed_inline, lowering_rules
from olympus.ir import dtypes
from olympus.ir.core import Primitive
from olympus.ir.pruning import dce_pass_through, dce_rules
from olympus.ir.structure import Structure, declare
from olympus.ir.core import all_primitives
from olympus.lax.base import define_primitive
from olympus.lax.elementwise import convert_element_type_p
from olympus.tracer import core, refs
from olympus.tracer.core import aval_of, set_current_trace
from olympus.tracer.evaluation import eval_program
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
from olympus.transforms.ad_util import Zero, instantiate, is_zero
from olympus.transforms.jvp import JVPTrace, defjvp_zero, jvp_rules
from olympus.transforms.linearize import (
    PartialTrace,
    transpose_rules,
)
from olympus.transforms.programs import (
    cached_batch_program,
)


class CustomDerivativeError(TypeError):
    """A custom_jvp / custom_vjp rule returned something of the wrong shape."""


# ---- stop_gradient ------------------------------------------------------------
stop_gradient_p = define_primitive(
    "stop_gradient", lambda x: x, lambda ctx, x: x, traits=("cheap",)
)
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
      OlympusTypeError: a leaf is not an array or a number (a string, say), as JAX.

    Example:
      >>> print(olympus.grad(lambda x: x * lax.stop_gradient(x))(3.0))
      3.0
    """
    leaves, tree = tree_flatten(x)
    avals = [aval_of(v) for v in leaves]  # refuses a non-array leaf, even eagerly
    if core.current_trace() is core.eval_trace:
        return x
    return tree_unflatten(
        tree,
        [
            stop_gradient_p.bind(v) if dtypes.is_inexact(aval.dtype) else v
            for v, aval in zip(leaves, avals)
        ],
    )


# ---- tracing a user function into a sub-program -------------------------------------
def _positional(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    if not kwargs:
        return args
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


def trace_user_function(
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
    declare(prim, _CUSTOM_CALL)
    return prim


# A custom_jvp_call's / custom_vjp_call's operands: the values its function
# closes over (never differentiated), then the user's arguments.
_CUSTOM_CALL = Structure(
    "call",
    ("consts", "args"),
    ("num_consts", None),
    bodies=(("call", ("consts", "args")),),
)


def _batched_call(call, axis_size, vals, dims, num_consts, name):
    """The batched body (every output batched at 0), its operands, num_consts
    and the batch dims (0 or None) of the user-visible arguments."""
    in_batched = [d is not None for d in dims]
    force_out = [True] * len(call.out_avals)
    batched, _ = cached_batch_program(call, axis_size, in_batched, force_out, name)
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    consts, args = _CUSTOM_CALL.split({"num_consts": num_consts}, vals)
    arg_dims = [
        None if d is None else 0
        for d in _CUSTOM_CALL.group({"num_consts": num_consts}, dims, "args")
    ]
    operands, counts = _CUSTOM_CALL.pack([*batched.consts, *consts], args)
    return batched.closed, operands, counts["num_consts"], arg_dims


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


@dataclasses.dataclass(eq=False, slots=True)
class CustomVJPPrimal:
    """An argument of a `symbolic_zeros=True` fwd: its value, and whether it
    is differentiated (a tangent that is not a symbolic zero). A pytree leaf,
    as JAX's (a dataclass not registered as a node)."""

    value: Any
    perturbed: bool


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
    counts = {"num_consts": num_consts}
    const_tangents, arg_tangents = _CUSTOM_CALL.split(counts, tangents)
    _check_closure_tangents("custom_jvp", name, const_tangents)
    args = _CUSTOM_CALL.group(counts, primals, "args")
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


def with_named_argnums(fun, argnums, argnames) -> tuple:
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


class _CustomDerivative:
    """What custom_jvp and custom_vjp share: the wrapped function, its
    non-differentiated arguments, and the calls that need no rule at all
    (eagerly, and primal work under linearize)."""

    symbolic_zeros = False
    _rule: str  # the attribute holding the user's rule (None until defined)
    _missing_rule: str  # the error when it is called before that

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ):
        self.fun = fun
        self.nondiff_argnums = with_named_argnums(
            fun, nondiff_argnums, nondiff_argnames
        )
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args, **kwargs):
        name = function_name(self.fun)
        if getattr(self, self._rule) is None:
            raise AttributeError(self._missing_rule.format(name))
        args = _positional(self.fun, args, kwargs)
        if core.current_trace() is core.eval_trace:
            return self.fun(*args)
        if _known_under_linearize(args):  # primal work: on the trace below
            with set_current_trace(core.current_trace().parent):
                return self(*args)
        return self._call_with_rule(name, args)

    def _nondiff(self, args: tuple) -> list:
        return [args[i] for i in self.nondiff_argnums]

    def _dynamic(self, args: tuple) -> tuple:
        """The positions of the differentiated arguments, their values' leaves
        and tree."""
        argnums = dynamic_argnums(len(args), self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(args[i] for i in argnums))
        return argnums, leaves, in_tree

    def _trace_body(self, name: str, args: tuple, argnums, leaves, in_tree) -> dict:
        """The trees and staged body of a call: under a JVPTrace none (JAX's
        order: the rule runs on the primal values and fun never runs), else fun
        traced to a sub-program. "out" is filled in by the rule when None."""
        if isinstance(core.current_trace(), JVPTrace):
            return {"call": None, "consts": [], "in": in_tree, "out": None}
        dyn_fun, _ = argnums_partial(self.fun, argnums, args)
        call, consts, out_tree = trace_user_function(
            dyn_fun, leaves, in_tree, type(self).__name__, name
        )
        return {"call": call, "consts": consts, "in": in_tree, "out": out_tree}

    def _on_primals(self, args: tuple, leaves: list, rule, trees: dict):
        """The output of a call under a JVPTrace, by `rule` on the primals."""
        outs = _rule_on_primals(core.current_trace(), self, args, leaves, rule)
        return outs if trees["out"] is None else tree_unflatten(trees["out"], outs)


def _check_pair(result, message: str) -> None:
    """A rule's result must be a (primal, tangent) or (output, residuals) pair."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CustomDerivativeError(message)


class custom_jvp(_CustomDerivative):
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

    jvp: Callable | None = None
    _rule = "jvp"
    _missing_rule = "no JVP rule defined for custom_jvp function {}; use defjvp"

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

    def _call_with_rule(self, name: str, args: tuple):
        argnums, leaves, in_tree = self._dynamic(args)
        trees = self._trace_body(name, args, argnums, leaves, in_tree)
        flat_jvp = self._flat_jvp(name, self._nondiff(args), trees)
        if trees["call"] is None:
            rule = functools.partial(
                _custom_jvp_call_jvp, call=None, jvp=flat_jvp, num_consts=0, name=name
            )
            return self._on_primals(args, leaves, rule, trees)
        consts = trees["consts"]
        outs = custom_jvp_call_p.bind(
            *consts,
            *leaves,
            call=trees["call"],
            jvp=flat_jvp,
            num_consts=len(consts),
            name=name,
        )
        return tree_unflatten(trees["out"], outs)

    def _flat_jvp(self, name: str, nondiff: list, trees: dict):
        """The user's rule on leaves: checks its output's structure against
        fun's (and records it, when fun was not traced)."""

        def flat_jvp(primal_leaves, tangent_leaves):
            tangent_leaves = [_to_symbolic(t) for t in tangent_leaves]
            primals = tuple(tree_unflatten(trees["in"], primal_leaves))
            tangents = tuple(tree_unflatten(trees["in"], tangent_leaves))
            result = self.jvp(*nondiff, primals, tangents)
            _check_pair(
                result,
                f"the custom_jvp rule of {name} must return (primal_out, tangent_out)",
            )
            out_leaves, o_tree = tree_flatten(result[0])
            t_leaves, t_tree = tree_flatten(result[1], is_leaf=_is_symbolic_zero)
            trees["out"] = o_tree if trees["out"] is None else trees["out"]
            if o_tree != trees["out"] or t_tree != trees["out"]:
                raise CustomDerivativeError(
                    f"the custom_jvp rule of {name} returned primal {o_tree} and "
                    f"tangent {t_tree}, but {name} returns {trees['out']}"
                )
            return out_leaves, t_leaves

        flat_jvp.symbolic_zeros = self.symbolic_zeros
        return flat_jvp


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
    counts = {"num_consts": num_consts}
    const_tangents, arg_tangents = _CUSTOM_CALL.split(counts, tangents)
    _check_closure_tangents("custom_vjp", name, const_tangents)
    args = _CUSTOM_CALL.group(counts, primals, "args")
    if getattr(fwd, "symbolic_zeros", False):
        outs, res = fwd(args, [not is_zero(t) for t in arg_tangents])
    else:
        outs, res = fwd(args)
    arg_tangents = [instantiate(t) for t in arg_tangents]
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

    rules = {"fwd": batched_fwd, "bwd": batched_bwd, "name": name}
    outs = custom_vjp_call_p.bind(
        *operands, call=batched, num_consts=num_consts, **rules
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


class custom_vjp(_CustomDerivative):
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

    fwd: Callable | None = None
    bwd: Callable | None = None
    _rule = "fwd"
    _missing_rule = "no VJP defined for custom_vjp function {}; use defvjp"

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

    def _call_with_rule(self, name: str, args: tuple):
        # the refs its function writes go in and come out (olympus/tracer/refs.py)
        return refs.threaded_custom_vjp(self, type(self)._staged_call, name, args)

    def _staged_call(self, name: str, args: tuple):
        argnums, leaves, in_tree = self._dynamic(args)
        trees = self._trace_body(name, args, argnums, leaves, in_tree)
        dyn_fwd, dyn = argnums_partial(self.fwd, argnums, args)
        flat_fwd = self._flat_fwd(name, dyn_fwd, trees)
        flat_bwd = self._flat_bwd(name, self._nondiff(args), dyn, leaves, trees)
        rules = {"fwd": flat_fwd, "bwd": flat_bwd, "name": name}
        if trees["call"] is None:
            rule = functools.partial(
                _custom_vjp_call_jvp, call=None, num_consts=0, **rules
            )
            return self._on_primals(args, leaves, rule, trees)
        consts = trees["consts"]
        outs = custom_vjp_call_p.bind(
            *consts, *leaves, call=trees["call"], num_consts=len(consts), **rules
        )
        return tree_unflatten(trees["out"], outs)

    def _flat_fwd(self, name: str, dyn_fwd, trees: dict):
        """The user's fwd on leaves: checks its output's structure against
        fun's (recording it when fun was not traced) and records the residuals'
        tree for bwd."""

        def flat_fwd(arg_leaves, perturbed=None):
            if self.symbolic_zeros:
                flags = perturbed or [True] * len(arg_leaves)
                arg_leaves = [CustomVJPPrimal(x, p) for x, p in zip(arg_leaves, flags)]
            result = dyn_fwd(*tree_unflatten(trees["in"], arg_leaves))
            _check_pair(
                result, f"the custom_vjp fwd of {name} must return (output, residuals)"
            )
            out_leaves, o_tree = tree_flatten(result[0])
            trees["out"] = o_tree if trees["out"] is None else trees["out"]
            if o_tree != trees["out"]:
                raise CustomDerivativeError(
                    f"the custom_vjp fwd of {name} returned {o_tree}, but {name} "
                    f"returns {trees['out']}"
                )
            res_leaves, trees["res"] = tree_flatten(result[1])
            return out_leaves, res_leaves

        flat_fwd.symbolic_zeros = self.symbolic_zeros
        return flat_fwd

    def _flat_bwd(self, name: str, nondiff: list, dyn: tuple, leaves: list, trees):
        """The user's bwd on leaves: one cotangent leaf per argument leaf."""

        def flat_bwd(res_leaves, ct_leaves):
            ct_leaves = [_to_symbolic(ct) for ct in ct_leaves]
            res = tree_unflatten(trees["res"], res_leaves)
            cts = self.bwd(*nondiff, res, tree_unflatten(trees["out"], ct_leaves))
            return _flatten_bwd_output(name, cts, dyn, leaves)

        flat_bwd.symbolic_zeros = self.symbolic_zeros
        return flat_bwd


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
    traits=("cheap", "never_merged"),
)


def _barrier_jvp(primals, tangents):
    """Tangents pass through unchanged (the barrier only matters to XLA)."""
    return optimization_barrier_p.bind(*primals), list(tangents)


jvp_rules[optimization_barrier_p] = _barrier_jvp
transpose_rules[optimization_barrier_p] = lambda cts, *args: list(cts)
dce_rules[optimization_barrier_p] = dce_pass_through
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
