"""The user-facing differentiation API: jvp, linearize, vjp, grad,
value_and_grad, jacfwd, jacrev, hessian.

All of them take and return pytrees; they compose with each other, with
`jit` (both ways round) and with closures over arrays or over tracers of
enclosing transformations. The transformations themselves live in
`olympus.transforms`; this layer sits above `lax`, whose ops assemble Jacobians.
"""

from __future__ import annotations
from olympus.tracer.tracebacks import api_boundary

import functools
from typing import Any, Callable, Sequence

import numpy as np

from olympus import lax
from olympus.lax.elementwise import convert_element_type_p
from olympus.ir import dtypes
from olympus.tracer.core import Tracer, aval_of
from olympus.tracer.evaluation import eval_program
from olympus.tracer.functions import argnums_partial, flatten_fun
from olympus.backends.xla.array import to_device
from olympus.tracer.pytree import LEAF, tree_flatten, tree_map, tree_unflatten
from olympus.prng import KEY_WORDS, PRNGKeyArray
from olympus.tracer import user_trees
from olympus.tracer.staging import function_name, trace_to_olympuspr
from olympus.transforms.batching import BatchTracer, vmap
from olympus.lax.custom_derivatives import custom_vjp
from olympus.tracer.pytree import register_pytree_node
from olympus.transforms.ad_util import (
    Zero,
    instantiate,
    is_differentiable,
    is_zero,
    tangent_aval,
)
from olympus.transforms.jvp import JVPTracer, jvp_flat
from olympus.transforms.linearize import backward_pass, linearize_flat


class GradTypeError(TypeError):
    """A function or argument that cannot be differentiated the way asked."""


# ---- outputs with aux ---------------------------------------------------------------
def _flatten_fun_aux(fun: Callable, in_tree, has_aux: bool):
    """flatten_fun of `fun`, or with has_aux of its output without the aux,
    which then lands in `box["aux"]` beside the output tree `box["tree"]`."""
    if not has_aux:
        return flatten_fun(fun, in_tree)

    def without_aux(*args):
        out = fun(*args)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise GradTypeError(
                f"{function_name(fun)} was differentiated with has_aux=True, so it "
                f"must return a pair (output, aux); it returned {type(out).__name__}"
            )
        out, box["aux"] = out
        return out

    flat_fun, box = flatten_fun(without_aux, in_tree)
    return flat_fun, box


def _strip_tangents(tree):
    """Aux outputs: the primal values of tracers of a finished jvp trace."""

    def strip(x):
        while isinstance(x, JVPTracer) and not x._trace.alive:
            x = x.primal
        return x

    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [strip(x) for x in leaves])


def _zero_cotangent(x):
    """What the cotangent of a non-differentiable input is: float0 zeros."""
    return np.zeros(aval_of(x).shape, dtypes.float0)


def _key_tangents(primals: tuple, tangents: tuple) -> tuple:
    """`tangents` (or cotangents) with a typed key's float0 one (JAX's form, of
    the key's shape) as a key over float0 words, the form olympus differentiates."""

    def words(p, t):
        if isinstance(p, PRNGKeyArray) and not isinstance(t, PRNGKeyArray):
            if np.shape(t) == p.shape and getattr(t, "dtype", None) == dtypes.float0:
                return PRNGKeyArray(np.zeros((*p.shape, KEY_WORDS), dtypes.float0))
        return t

    if not any(isinstance(p, PRNGKeyArray) for p in user_trees.tree_leaves(primals)):
        return tangents
    try:
        return user_trees.tree_map(words, primals, tangents)
    except ValueError:  # structures differ: jvp says so
        return tangents


def _key_cotangents(tree):
    """`tree` with float0 zeros of each typed key's shape where vjp, which
    differentiates a key's words, made a key of float0 words (JAX's form)."""
    return tree_map(
        lambda x: (
            np.zeros(x.shape, dtypes.float0) if isinstance(x, PRNGKeyArray) else x
        ),
        tree,
        is_leaf=lambda x: isinstance(x, PRNGKeyArray),
    )


# ---- forward mode ---------------------------------------------------------------
@api_boundary
def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """Evaluates `fun` and its directional derivative along `tangents`.

    Forward mode: the Jacobian-vector product is computed alongside the
    primal values in a single pass, without storing intermediates.

    Args:
      fun: the function to differentiate.
      primals: a tuple or list of the positional arguments to evaluate at.
      tangents: a tuple or list of the same length: one tangent per primal,
        with its shape and dtype.
      has_aux: if True, `fun` returns `(output, aux)` and jvp returns
        `(output, tangent_out, aux)`.

    Returns:
      `(fun(*primals), tangent_out)`, where tangent_out has the output's
      structure.

    Raises:
      GradTypeError: a tangent's shape or dtype does not match its primal,
        or has_aux without a pair.
      TypeError: primals or tangents is not a tuple or list, or their
        structures differ.

    Example:
      >>> y, t = olympus.jvp(jnp.sin, (0.0,), (1.0,))
      >>> print(y, t)
      0.0 1.0
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(
        tangents, (tuple, list)
    ):
        raise GradTypeError(
            "jvp takes primals and tangents as tuples: jvp(f, (x,), (t,))"
        )
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(_key_tangents(tuple(primals), tuple(tangents)))
    if p_tree != t_tree:
        raise GradTypeError(
            f"jvp: primals {p_tree} and tangents {t_tree} differ in structure"
        )
    given = [_check_tangent(p, t) for p, t in zip(p_leaves, t_leaves)]
    t_leaves = [_typed_like_primal(p, t) for p, t in zip(p_leaves, given)]
    flat_fun, box = _flatten_fun_aux(fun, p_tree, has_aux)
    outs, tangent_outs, _ = jvp_flat(flat_fun, p_leaves, t_leaves)
    # an input returned as it is comes back with its tangent as given (as in JAX)
    passed = {(id(p), id(t)): g for p, t, g in zip(p_leaves, t_leaves, given)}
    tangent_outs = [
        passed[(id(p), id(t))] if (id(p), id(t)) in passed else instantiate(t)
        for p, t in zip(outs, tangent_outs)
    ]
    tangent_tree = tree_unflatten(box["tree"], tangent_outs)
    if not all(is_differentiable(aval_of(o)) for o in outs):
        tangent_tree = _key_cotangents(tangent_tree)  # a key's: float0 of its shape
    result = (tree_unflatten(box["tree"], outs), tangent_tree)
    return result + (_strip_tangents(box["aux"]),) if has_aux else result


def _typed_like_primal(primal, tangent):
    """A tangent of a weakly typed primal is weak too (JAX types a tangent by
    its primal), so `jvp(lambda x: x * 2.0, (3.0,), (jnp.float32(1),))`
    gives a weak tangent, as JAX's."""
    if isinstance(tangent, Zero) or not aval_of(primal).weak_type:
        return tangent
    t = aval_of(tangent)
    if t.weak_type or t.dtype != aval_of(primal).dtype:
        return tangent
    return convert_element_type_p.bind(tangent, new_dtype=t.dtype, weak_type=True)


def _check_tangent(primal, tangent):
    p, t = aval_of(primal), aval_of(tangent)
    if not is_differentiable(p):
        return Zero(p)
    if p.shape != t.shape or (p.dtype != t.dtype and not t.weak_type):
        raise GradTypeError(
            f"jvp: tangent {t.str_short()} does not match its primal {p.str_short()}; "
            f"tangents need the primal's shape and dtype"
        )
    return tangent


@api_boundary
def linearize(fun: Callable, *primals, has_aux: bool = False):
    """Evaluates `fun` once and returns its linearization at `primals`.

    Useful when many Jacobian-vector products are needed at one point: the
    primal computation runs once and `f_jvp` evaluates only the linear map.

    Args:
      fun: the function to linearize.
      *primals: the point, one value per positional argument.
      has_aux: if True, `fun` returns `(output, aux)` and linearize returns
        `(output, f_jvp, aux)`.

    Returns:
      `(fun(*primals), f_jvp)`; `f_jvp(*tangents)` gives the tangent of the
      output for tangents shaped as the primals.

    Raises:
      GradTypeError: tangents passed to `f_jvp` do not match the primals, or
        has_aux without a pair.

    Example:
      >>> y, f_jvp = olympus.linearize(jnp.sin, 0.0)
      >>> print(f_jvp(2.0))
      2.0
    """
    leaves, in_tree = tree_flatten(primals)
    mask = [is_differentiable(aval_of(x)) for x in leaves]
    flat_fun, box = _flatten_fun_aux(fun, in_tree, has_aux)
    outs, linear = linearize_flat(flat_fun, leaves, mask, function_name(fun))

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise GradTypeError(
                f"linearize: tangents {t_tree} do not match primals {in_tree}"
            )
        used = [t for t, m in zip(t_leaves, mask) if m]
        out = eval_program(linear.olympuspr, linear.consts, used)
        return tree_unflatten(box["tree"], out)

    out = tree_unflatten(box["tree"], outs)
    return (out, f_jvp, _strip_tangents(box["aux"])) if has_aux else (out, f_jvp)


class ReduceAxesError(NotImplementedError):
    """reduce_axes= given to grad, vjp, ...: deprecated in JAX, not supported."""


def _check_reduce_axes(name: str, reduce_axes) -> None:
    if reduce_axes:
        raise ReduceAxesError(
            f"reduce_axes argument to {name} is deprecated (as in JAX); sum the "
            f"cotangents with lax.psum inside the function instead"
        )


# ---- reverse mode ---------------------------------------------------------------
@api_boundary
def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
    """Evaluates `fun` and returns a function that pulls cotangents back through it.

    The vector-Jacobian product is reverse mode's building block: the
    returned `pullback` maps a cotangent of the output to one cotangent per
    primal argument, reusing the values saved by the forward pass.

    Args:
      fun: the function to differentiate; takes and returns pytrees of arrays.
      *primals: the point to differentiate at, one per positional argument.
      has_aux: if True, `fun` returns `(output, aux)` and vjp returns
        `(output, pullback, aux)`.
      reduce_axes: taken for JAX's older signature; must be empty.

    Returns:
      `(fun(*primals), pullback)`; `pullback(ct)` takes a cotangent with the
      output's structure, shapes and dtypes and returns a tuple of cotangents,
      one per primal.

    Raises:
      GradTypeError: a primal is not an array of a differentiable dtype, a
        cotangent does not match the output, or has_aux without a pair.

    Example:
      >>> y, pullback = olympus.vjp(jnp.sin, 0.0)
      >>> print(pullback(1.0)[0])
      1.0
    """
    _check_reduce_axes("vjp", reduce_axes)
    leaves, in_tree = tree_flatten(primals)
    mask = [is_differentiable(aval_of(x)) for x in leaves]
    flat_fun, box = _flatten_fun_aux(fun, in_tree, has_aux)
    outs, linear = linearize_flat(
        flat_fun, leaves, mask, function_name(fun), reverse=True
    )
    out_tree = box["tree"]
    out_avals = [aval_of(x) for x in outs]

    def pullback(ct):
        if not all(is_differentiable(a) for a in out_avals):
            ct = _key_tangents(out, ct)  # a key's float0 cotangent, as JAX's
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise GradTypeError(
                f"vjp pullback: cotangent structure {ct_tree} does not match the "
                f"output structure {out_tree}"
            )
        ct_leaves = [_check_cotangent(a, c) for a, c in zip(out_avals, ct_leaves)]
        cts = iter(backward_pass(linear.olympuspr, linear.consts, ct_leaves))
        cts_in = [
            instantiate(next(cts)) if m else _zero_cotangent(x)
            for x, m in zip(leaves, mask)
        ]
        if all(mask):  # no integer leaf, so no typed key either
            return tree_unflatten(in_tree, cts_in)
        return _key_cotangents(tree_unflatten(in_tree, cts_in))

    out = tree_unflatten(out_tree, outs)
    return (out, pullback, _strip_tangents(box["aux"])) if has_aux else (out, pullback)


def _check_cotangent(aval, ct):
    ct_aval = aval_of(ct)
    if ct_aval.shape != aval.shape:
        raise GradTypeError(
            f"vjp pullback: cotangent {ct_aval.str_short()} does not match the output "
            f"{aval.str_short()}; pass one of the output's shape"
        )
    if not is_differentiable(aval):
        return Zero(aval)
    if ct_aval.dtype != aval.dtype:
        return np.asarray(ct, aval.dtype) if not isinstance(ct, Tracer) else ct
    return ct


def linear_transpose(fun: Callable, *primals, reduce_axes=()):
    """Returns the transpose of a linear function.

    For linear `fun` (y = A x), the transpose maps a cotangent of y to
    A^T applied to it, without forming A. The primals only give shapes and
    dtypes; their values are not used.

    Args:
      fun: a function linear in its positional arguments.
      *primals: example arguments fixing the input shapes and dtypes.
      reduce_axes: taken for JAX's older signature; must be empty.

    Returns:
      A function from an output cotangent to a tuple of input cotangents.

    Raises:
      ValueError: `fun` is not linear in its arguments.
      TypeError: a cotangent's shape or dtype does not match the output.

    Example:
      >>> f_t = olympus.linear_transpose(lambda x: 2.0 * x, 1.0)
      >>> print(f_t(1.0)[0])
      2.0
    """
    _check_reduce_axes("linear_transpose", reduce_axes)
    leaves, in_tree = tree_flatten(primals)
    flat_fun, box = flatten_fun(fun, in_tree)
    olympuspr, consts, _ = trace_to_olympuspr(flat_fun, [aval_of(x) for x in leaves])
    out_avals = olympuspr.out_avals

    def transposed(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != box["tree"]:
            raise GradTypeError(
                f"linear_transpose: cotangent {ct_tree} does not match the output {box['tree']}"
            )
        ct_leaves = [_check_cotangent(a, c) for a, c in zip(out_avals, ct_leaves)]
        cts = backward_pass(olympuspr, consts, ct_leaves)
        return tree_unflatten(in_tree, [instantiate(c) for c in cts])

    return transposed


def closure_convert(fun: Callable, *example_args):
    """Hoists the traced values `fun` closes over into explicit arguments.

    custom_vjp and custom_jvp functions may not close over traced values;
    closure_convert turns those values into arguments, so derivatives can
    flow to them. As in JAX, only values that may carry a tangent are hoisted:
    concrete arrays, tracers of non-differentiable dtypes (integers, bools)
    and tracers whose tangent is known to be zero stay inside the converted
    function.

    Args:
      fun: the function to convert.
      *example_args: arguments fixing the shapes and dtypes it is traced at.

    Returns:
      `(converted, consts)`, with `converted(*args, *consts) == fun(*args)`.

    Raises:
      TypeError: fun is not callable, or tracing it with example_args fails.

    Example:
      >>> def scaled_sum(w):
      ...     f, consts = olympus.closure_convert(lambda x: jnp.sum(x * w), jnp.ones(3))
      ...     print(len(consts))  # w is traced by grad: hoisted
      ...     return f(jnp.ones(3), *consts)
      >>> olympus.grad(scaled_sum)(jnp.arange(3.0))
      1
      Array([1., 1., 1.], dtype=float32)
    """
    leaves, in_tree = tree_flatten(example_args)
    flat_fun, box = flatten_fun(fun, in_tree)
    olympuspr, consts, _ = trace_to_olympuspr(flat_fun, [aval_of(x) for x in leaves])
    hoist = [_maybe_perturbed(c) for c in consts]
    kept = [c for c, h in zip(consts, hoist) if not h]
    hoisted_consts = [c for c, h in zip(consts, hoist) if h]
    n_args = len(example_args)

    def converted(*args_and_consts):
        args, hoisted = args_and_consts[:n_args], args_and_consts[n_args:]
        arg_leaves, tree = tree_flatten(args)
        if tree != in_tree or len(hoisted) != len(hoisted_consts):
            raise GradTypeError(
                f"closure_convert of {function_name(fun)}: call it with arguments like "
                f"{in_tree} followed by the {len(hoisted_consts)} hoisted constants"
            )
        hoisted, kept_iter = iter(hoisted), iter(kept)
        all_consts = [next(hoisted) if h else next(kept_iter) for h in hoist]
        outs = eval_program(olympuspr, all_consts, arg_leaves)
        return tree_unflatten(box["tree"], outs)

    return converted, hoisted_consts


def _maybe_perturbed(x) -> bool:
    """Whether `x` may carry a nonzero tangent (JAX's heuristic): concrete
    values cannot; a JVP tracer with a symbolic zero tangent can only through
    its primal; a staged value can if its dtype is differentiable (a later
    transformation may differentiate it); a batched value through its examples.
    """
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, JVPTracer):
        return not is_zero(x.tangent) or _maybe_perturbed(x.primal)
    if isinstance(x, BatchTracer):
        return _maybe_perturbed(x.val)
    return is_differentiable(x.aval)


class _GradientRule:
    """custom_gradient's residuals: the user's rule traced as a program of the
    output cotangents (with its trees: aux data) and the values it closes
    over, typically the forward pass's (the leaves)."""

    def __init__(self, olympuspr, consts, ct_tree, out_tree):
        self.olympuspr, self.consts = olympuspr, consts
        self.ct_tree, self.out_tree = ct_tree, out_tree


register_pytree_node(
    _GradientRule,
    lambda r: (r.consts, (r.olympuspr, r.ct_tree, r.out_tree)),
    lambda aux, consts: _GradientRule(aux[0], list(consts), aux[1], aux[2]),
)


def custom_gradient(fun: Callable) -> Callable:
    """Returns `fun` with a gradient rule it computes itself.

    `fun(*args)` returns `(value, rule)`; grad and vjp of the result call
    `rule(ct)` instead of differentiating `fun`. The rule may close over the
    forward pass's values (a convenient form of custom_vjp).

    Args:
      fun: a function returning `(value, rule)`, where `rule(ct)` gives one
        cotangent per positional argument (a tuple; a single one may be bare).

    Returns:
      A function with `fun`'s arguments that returns `value`.

    Raises:
      CustomDerivativeError: `fun` does not return a pair, or `rule` returns
        the wrong number, shapes or dtypes of cotangents.

    Example:
      >>> @olympus.custom_gradient
      ... def clip_gradient(x):
      ...     return x, lambda g: (jnp.clip(g, -1.0, 1.0),)
      >>> print(olympus.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
      1.0
    """
    name = function_name(fun)

    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        value, rule = fun(*args)
        out_leaves, out_tree = tree_flatten(value)
        flat_rule, box = flatten_fun(rule, tree_flatten((value,))[1])
        cts = [tangent_aval(aval_of(x)) for x in out_leaves]
        olympuspr, consts, _ = trace_to_olympuspr(flat_rule, cts)
        return value, _GradientRule(olympuspr, list(consts), box["tree"], out_tree)

    def bwd(rule: _GradientRule, ct):
        ct_leaves, tree = tree_flatten(ct)
        if tree != rule.out_tree:
            raise GradTypeError(
                f"custom_gradient of {name}: the cotangent is a {tree}, "
                f"but the function returned a {rule.out_tree}"
            )
        outs = eval_program(rule.olympuspr, rule.consts, ct_leaves)
        cts = tree_unflatten(rule.ct_tree, outs)
        return cts if isinstance(cts, tuple) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return functools.wraps(fun)(wrapped)


def _argnums_tuple(argnums) -> tuple:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _check_grad_inputs(
    fun_name: str, args: tuple, argnums: tuple, allow_int: bool
) -> None:
    for i in argnums:
        if not -len(args) <= i < len(args):
            raise GradTypeError(
                f"grad of {fun_name}: argnums {argnums} names argument {i}, but it was "
                f"called with {len(args)} positional arguments"
            )
        for leaf in tree_flatten(args[i])[0]:
            aval = aval_of(leaf)
            if not is_differentiable(aval) and not allow_int:
                raise GradTypeError(
                    f"grad of {fun_name} requires real- or complex-valued inputs, but "
                    f"argument {i} has an input of type {aval.str_short()}. Convert it "
                    f"with x.astype(jnp.float32), differentiate with respect to other "
                    f"arguments (argnums), or pass allow_int=True"
                )


def _check_scalar_output(
    fun_name: str, out_tree, outs, holomorphic: bool = False
) -> None:
    if out_tree is not LEAF:
        raise GradTypeError(
            f"grad of {fun_name} requires a scalar output, but it returned a pytree "
            f"{out_tree}. Return one scalar (e.g. a sum of losses), use has_aux=True "
            f"to return extra values, or use olympus.vjp / jacrev for several outputs"
        )
    aval = aval_of(outs)
    if aval.shape != ():
        raise GradTypeError(
            f"grad of {fun_name} requires a scalar output, but it returned "
            f"{aval.str_short()}. Reduce it (e.g. jnp.sum), or use olympus.vjp / "
            f"jacrev for non-scalar outputs"
        )
    if not dtypes.is_inexact(aval.dtype):
        raise GradTypeError(
            f"grad of {fun_name} requires a real-valued (floating-point) output, but "
            f"it returned {aval.str_short()}"
        )
    if dtypes.is_complex(aval.dtype) != holomorphic:
        raise GradTypeError(
            f"grad of {fun_name} returned {aval.str_short()}: with holomorphic=True the "
            f"output must be complex, otherwise real. Pass holomorphic=True for the "
            f"complex derivative of a holomorphic function, or return a real value "
            f"(e.g. jnp.abs(z) ** 2)"
            if holomorphic
            else f"grad of {fun_name} requires a real-valued output, but it returned "
            f"{aval.str_short()}. For holomorphic differentiation pass holomorphic=True"
        )


def _check_holomorphic_inputs(fun_name: str, args: tuple, argnums: tuple) -> None:
    for i in argnums:
        for leaf in tree_flatten(args[i])[0]:
            aval = aval_of(leaf)
            if not dtypes.is_complex(aval.dtype):
                raise GradTypeError(
                    f"grad of {fun_name} with holomorphic=True requires complex inputs, "
                    f"but argument {i} has an input of type {aval.str_short()}; convert "
                    f"it with x.astype(jnp.complex64)"
                )


def _seed(out_aval):
    """grad's output cotangent: a one of the output's dtype, weak where the
    output is (as JAX's), so a Python scalar's gradient stays weakly typed."""
    one = np.ones((), out_aval.dtype)
    return to_device(one, out_aval) if out_aval.weak_type else one


def _seed_on_device(g):
    if type(g) is np.ndarray and g.dtype != dtypes.float0:
        return to_device(g)
    return g


def value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes=(),
):
    """Returns a function that computes `fun`'s value and its gradient together.

    Like `grad`, but the forward pass's result is returned as well, so a
    training step needs only one evaluation of the loss.

    Args:
      fun: the function to differentiate; its output must be a real scalar
        (or `(scalar, aux)` with has_aux).
      argnums: an int or a sequence of ints: which positional arguments to
        differentiate with respect to.
      has_aux: if True, `fun` returns `(output, aux)` and the value returned
        is `(output, aux)`.
      holomorphic: if True, `fun` is holomorphic (complex inputs and output).
      allow_int: if True, integer arguments get float0 gradients.
      reduce_axes: taken for JAX's older signature; must be empty.

    Returns:
      A function returning `(value, gradient)`, or `((value, aux), gradient)`
      with has_aux.

    Raises:
      GradTypeError: as `grad` (non-scalar or non-real output, integer
        argument, has_aux without a pair).

    Example:
      >>> value, g = olympus.value_and_grad(lambda x: x ** 2)(3.0)
      >>> print(value, g)
      9.0 6.0
    """
    _check_reduce_axes("value_and_grad", reduce_axes)
    nums = _argnums_tuple(argnums)
    name = function_name(fun)

    @functools.wraps(fun, updated=())
    @api_boundary
    def value_and_grad_fun(*args, **kwargs):
        _check_grad_inputs(name, args, nums, allow_int)
        if holomorphic:
            _check_holomorphic_inputs(name, args, nums)
        dyn_fun, dyn = argnums_partial(fun, nums, args, kwargs)
        result = vjp(dyn_fun, *dyn, has_aux=has_aux)
        out, pullback = result[0], result[1]
        _check_scalar_output(name, tree_flatten(out)[1], out, holomorphic)
        grads = pullback(_seed(aval_of(out)))
        # where the output is an input (`grad(lambda x: x)`), the seed itself
        # (float0 zeros of integer inputs stay NumPy arrays, as JAX returns them)
        grads = tree_map(_seed_on_device, grads)
        grads = grads[0] if isinstance(argnums, int) else grads
        return ((out, result[2]), grads) if has_aux else (out, grads)

    return value_and_grad_fun


def grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes=(),
):
    """Returns a function that computes the gradient of scalar-valued `fun`.

    Reverse-mode differentiation: the returned function runs `fun` forward,
    then pulls a cotangent of 1.0 back to the arguments chosen by `argnums`.
    It composes with jit, vmap and itself (grad of grad is the second
    derivative), and takes and returns pytrees.

    Args:
      fun: the function to differentiate. Its output must be a real scalar
        (shape ()); with `has_aux=True` it returns a pair (scalar, aux).
      argnums: an int or a sequence of ints: the positional argument(s) to
        differentiate with respect to. A sequence gives a tuple of gradients.
      has_aux: if True, `fun` returns `(output, aux)`; aux is passed through
        undifferentiated and the returned function gives `(gradient, aux)`.
      holomorphic: if True, `fun` is a holomorphic complex function and the
        gradient is its complex derivative.
      allow_int: if True, integer arguments are allowed; their gradients are
        float0 zeros.
      reduce_axes: taken for JAX's older signature; must be empty.

    Returns:
      A function with `fun`'s signature returning the gradient: a pytree of
      the differentiated argument's structure, shape and dtype (a tuple of
      them for a sequence `argnums`), or `(gradient, aux)` with has_aux.

    Raises:
      GradTypeError: the output is not a scalar, is not real, an argument is
        an integer without `allow_int`, or has_aux is set and `fun` does not
        return a pair.

    Example:
      >>> print(olympus.grad(lambda x: jnp.sin(x) * 2.0)(0.0))
      2.0
      >>> dx, dy = olympus.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
      >>> print(dx, dy)
      3.0 2.0
      >>> g, aux = olympus.grad(lambda x: (x**2, x + 1), has_aux=True)(3.0)
      >>> print(g, aux)
      6.0 4.0
    """
    _check_reduce_axes("grad", reduce_axes)
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun, updated=())
    @api_boundary
    def grad_fun(*args, **kwargs):
        (value, grads) = value_and_grad_fun(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return grad_fun


# ---- Jacobians ------------------------------------------------------------------
def _standard_basis(leaves: list) -> list[np.ndarray]:
    """One basis vector per element of all leaves together, as a stack per leaf:
    leaf j gets shape (N,) + leaf.shape, with N the total number of elements."""
    avals = [aval_of(x) for x in leaves]
    total = sum(a.size for a in avals)
    eye, start, basis = np.eye(total), 0, []
    for a in avals:
        basis.append(
            eye[:, start : start + a.size].reshape((total,) + a.shape).astype(a.dtype)
        )
        start += a.size
    return basis


def _blocks(
    stacked: list, row_avals: list, col_avals: list, stack_is_row: bool,
    like_row: bool,
) -> list[list]:  # fmt: skip
    """Splits leaves of shape (N,) + s (N: the basis) into out.shape + in.shape blocks."""
    blocks = [[None] * len(col_avals) for _ in row_avals]
    basis_avals = row_avals if stack_is_row else col_avals
    offsets = np.cumsum([0] + [a.size for a in basis_avals])
    for k, leaf in enumerate(stacked):
        for b, aval in enumerate(basis_avals):
            seg = _rows(leaf, int(offsets[b]), int(offsets[b + 1]))
            if stack_is_row:  # seg: (row.size,) + col.shape
                i, j = b, k
            else:  # seg: (col.size,) + row.shape
                i, j = k, b
                seg = _first_axis_last(seg)
            block = lax.reshape(seg, row_avals[i].shape + col_avals[j].shape)
            blocks[i][j] = _typed_like(
                block, row_avals[i] if like_row else col_avals[j]
            )
    return blocks


def _typed_like(x, example):
    """`x` with the dtype and weak type of `example` (the output's for jacfwd,
    the input's for jacrev), as JAX casts Jacobian blocks."""
    aval = aval_of(x)
    if (aval.dtype, aval.weak_type) == (example.dtype, example.weak_type):
        return x
    if dtypes.is_complex(aval.dtype) and not dtypes.is_complex(example.dtype):
        x = lax.real(x)
    return convert_element_type_p.bind(
        x, new_dtype=example.dtype, weak_type=example.weak_type
    )


def _rows(x, start: int, stop: int):
    """x[start:stop] along the first axis."""
    shape = aval_of(x).shape
    if (start, stop) == (0, shape[0]):
        return x
    ndim = len(shape)
    return lax.slice(x, (start,) + (0,) * (ndim - 1), (stop,) + shape[1:], (1,) * ndim)


def _first_axis_last(x):
    ndim = aval_of(x).ndim
    return x if ndim < 2 else lax.transpose(x, tuple(range(1, ndim)) + (0,))


def _assemble(out_tree, in_tree, blocks: list[list]) -> Any:
    """J[i][j] blocks (output leaf i, input leaf j) as the out tree of in trees."""
    return tree_unflatten(out_tree, [tree_unflatten(in_tree, row) for row in blocks])


def _jacobian_setup(fun, argnums, args, kwargs, holomorphic=False, allow_int=False):
    nums = _argnums_tuple(argnums)
    _check_grad_inputs(function_name(fun), args, nums, allow_int)
    if holomorphic:
        _check_holomorphic_inputs(function_name(fun), args, nums)
    f, dyn = argnums_partial(fun, nums, args, kwargs)
    if isinstance(argnums, int):
        return f, dyn[0], (lambda x: f(x))
    return f, dyn, (lambda x: f(*x))


def jacfwd(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
):
    """Returns a function computing the Jacobian of `fun` by forward mode.

    A jvp is vmapped over a basis of the inputs: efficient when there are
    fewer inputs than outputs ("tall" Jacobians).

    Args:
      fun: the function to differentiate.
      argnums: an int or a sequence of ints: which positional arguments.
      has_aux: if True, `fun` returns `(output, aux)` and the result is
        `(jacobian, aux)`.
      holomorphic: if True, `fun` is holomorphic.

    Returns:
      A function giving the Jacobian: for each output leaf and input leaf a
      block of shape `out.shape + in.shape` (the output tree of input trees).

    Raises:
      GradTypeError: an input is not of an inexact dtype (complex needs
        holomorphic=True), or has_aux without a pair.

    Example:
      >>> olympus.jacfwd(jnp.sin)(jnp.zeros(2))
      Array([[1., 0.], [0., 1.]], dtype=float32)
    """

    @api_boundary
    def jac_fun(*args, **kwargs):
        _, dyn, f_of_tree = _jacobian_setup(fun, argnums, args, kwargs, holomorphic)
        in_leaves, in_tree = tree_flatten(dyn)

        def push(*tangent_leaves):
            res = jvp(
                f_of_tree,
                (dyn,),
                (tree_unflatten(in_tree, tangent_leaves),),
                has_aux=has_aux,
            )
            primal_avals[:] = [aval_of(y) for y in tree_flatten(res[0])[0]]
            return res[1]

        primal_avals: list = []
        stacked = vmap(push)(*_standard_basis(in_leaves))
        out_leaves, out_tree = tree_flatten(stacked)
        row_avals = [
            p.update(shape=aval_of(o).shape[1:])
            for o, p in zip(out_leaves, primal_avals)
        ]
        col_avals = [aval_of(x) for x in in_leaves]
        jac = _assemble(
            out_tree, in_tree, _blocks(out_leaves, row_avals, col_avals, False, True)
        )
        return (jac, _strip_tangents(f_of_tree(dyn)[1])) if has_aux else jac

    return jac_fun


def jacrev(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
):
    """Returns a function computing the Jacobian of `fun` by reverse mode.

    The pullback is vmapped over a basis of the outputs: efficient when there
    are fewer outputs than inputs ("wide" Jacobians).

    Args:
      fun: the function to differentiate.
      argnums: an int or a sequence of ints: which positional arguments.
      has_aux: if True, `fun` returns `(output, aux)` and the result is
        `(jacobian, aux)`.
      holomorphic: if True, `fun` is holomorphic.
      allow_int: if True, integer inputs get float0 blocks.

    Returns:
      A function giving the Jacobian, each block of shape
      `out.shape + in.shape`.

    Raises:
      GradTypeError: an output or input has a non-differentiable dtype, or
        has_aux without a pair.

    Example:
      >>> olympus.jacrev(lambda x: x ** 2)(jnp.array([1.0, 2.0]))
      Array([[2., 0.], [0., 4.]], dtype=float32)
    """

    @api_boundary
    def jac_fun(*args, **kwargs):
        _, dyn, f_of_tree = _jacobian_setup(
            fun, argnums, args, kwargs, holomorphic, allow_int
        )
        res = vjp(f_of_tree, dyn, has_aux=has_aux)
        out, pullback = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        in_leaves, in_tree = tree_flatten(dyn)

        def pull(*ct_leaves):
            return pullback(tree_unflatten(out_tree, ct_leaves))[0]

        stacked = tree_flatten(vmap(pull)(*_standard_basis(out_leaves)))[0]
        row_avals = [aval_of(o) for o in out_leaves]
        col_avals = [aval_of(x) for x in in_leaves]
        jac = _assemble(
            out_tree, in_tree, _blocks(stacked, row_avals, col_avals, True, False)
        )
        return (jac, res[2]) if has_aux else jac

    return jac_fun


def hessian(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
):
    """Returns a function computing the Hessian of scalar-valued `fun`.

    It is `jacfwd(jacrev(fun))`: reverse mode for the gradient, forward mode
    over it, the usual efficient order.

    Args:
      fun: the function; its output must be a real scalar.
      argnums: an int or a sequence of ints: which positional arguments.
      has_aux: if True, `fun` returns `(output, aux)` and the result is
        `(hessian, aux)`.
      holomorphic: if True, `fun` is holomorphic.

    Returns:
      A function giving the matrix of second derivatives, of shape
      `in.shape + in.shape` per pair of input leaves.

    Raises:
      GradTypeError: the output is not a real scalar, or an input has a
        non-differentiable dtype.

    Example:
      >>> olympus.hessian(lambda x: jnp.sum(x ** 3))(jnp.array([1.0, 2.0]))
      Array([[ 6.,  0.], [ 0., 12.]], dtype=float32)
    """
    inner = jacrev(fun, argnums, has_aux, holomorphic)
    return jacfwd(inner, argnums, has_aux, holomorphic)


jacobian = jacrev  # JAX's alias
