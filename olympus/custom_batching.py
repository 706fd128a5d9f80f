"""olympus.custom_batching: functions with their own vmap rule (JAX's
`jax.custom_batching`), for code that batches better by hand than vmap would
(a solver that handles a whole batch at once, a loop vmap would unroll).

>>> @olympus.custom_batching.custom_vmap
... def f(x):
...     return jnp.sin(x)
>>> @f.def_vmap
... def f_vmap(axis_size, in_batched, x):
...     return jnp.sin(x), in_batched[0]
>>> olympus.vmap(f)(jnp.zeros(2))
Array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from olympus import lax
from olympus.lax.custom_derivatives import (
    _CUSTOM_CALL,
    _call_primitive,
    trace_user_function,
)
from olympus.tracer import core
from olympus.tracer.pytree import tree_flatten, tree_structure, tree_unflatten
from olympus.transforms.ad_util import instantiate
from olympus.transforms.batching import batch_rules, batch_to_front, vmap
from olympus.transforms.jvp import jvp_flat, jvp_rules
from olympus.transforms.linearize import PartialTrace, transpose_rules
from olympus.transforms.programs import cached_jvp_program


class CustomVmapRuleError(AttributeError):
    """A custom_vmap function was called before `def_vmap` gave it a rule."""


class CustomVmapOutputError(TypeError):
    """A vmap rule's output or `out_batched` does not match the function's output."""


class CustomVmapClosureError(ValueError):
    """The function closes over a value batched by the vmap its rule serves."""


class CustomVmapReverseModeError(ValueError):
    """Reverse mode (grad, vjp, linearize) of a custom_vmap function: as JAX's,
    it has a forward-mode rule only."""


# Operands: the values `call` closes over, then the arguments; `rule(axis_size,
# in_batched, args) -> (outs, out_batched)` works on the flat arguments.
custom_vmap_call_p = _call_primitive("custom_vmap_call")


class custom_vmap:
    """`fun` with a vmap rule `rule(axis_size, in_batched, *args) -> (out,
    out_batched)`: args come with the batch axis first where `in_batched` (a
    pytree of bools like `args`) says so; `out_batched` says the same of `out`.

    As JAX's: traced, a call is one `custom_vmap_call` equation holding `fun`'s
    program and the rule, so vmap applies the rule wherever the call sits (in
    a jit, a loop body; of nested vmaps the innermost, the outer ones batching
    what the rule computes). Evaluated and lowered, `fun` runs. jvp
    differentiates the rule under vmap and `fun` outside it; reverse mode
    (grad) raises `CustomVmapReverseModeError`, as JAX refuses.
    """

    def __init__(self, fun: Callable):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        """Sets the vmap rule; returns it (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs) -> Any:
        if kwargs:  # as JAX: keyword arguments are bound to their positions
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            args, kwargs = bound.args, bound.kwargs
        if self.vmap_rule is None:  # as JAX: checked at every call
            raise CustomVmapRuleError(
                f"No batching rule defined for custom_vmap function "
                f"{self.__name__} using def_vmap; define one with "
                f"@{self.__name__}.def_vmap"
            )
        if core.current_trace() is core.eval_trace or kwargs:
            return self.fun(*args, **kwargs)
        leaves, in_tree = tree_flatten(args)
        call, consts, out_tree = trace_user_function(
            self.fun, leaves, in_tree, "custom_vmap", self.__name__
        )
        rule = _flat_rule(self.vmap_rule, in_tree, out_tree, self.__name__)
        outs = custom_vmap_call_p.bind(
            *consts,
            *leaves,
            call=call,
            rule=rule,
            num_consts=len(consts),
            name=self.__name__,
        )
        return tree_unflatten(out_tree, outs)


def _flat_rule(user_rule: Callable, in_tree, out_tree, name: str) -> Callable:
    """The user's rule on flat arguments, its output checked against `fun`'s."""

    def rule(axis_size: int, in_batched: list, args: list):
        out, out_batched = user_rule(
            axis_size,
            list(tree_unflatten(in_tree, in_batched)),
            *tree_unflatten(in_tree, args),
        )
        out_leaves, tree = tree_flatten(out)
        flags, flags_tree = tree_flatten(out_batched)
        if tree != out_tree or flags_tree != out_tree:
            raise CustomVmapOutputError(
                f"custom_vmap rule of {name} returned output {tree} and out_batched "
                f"{flags_tree}; both must have the structure of {name}'s output "
                f"{out_tree} (one bool per array)"
            )
        return out_leaves, [bool(b) for b in flags]

    rule.__name__ = getattr(user_rule, "__name__", "rule")
    rule.__qualname__ = rule.__name__
    return rule


def _custom_vmap_call_batch(axis_size, vals, dims, *, call, rule, num_consts, name):
    """The user's rule on the arguments, batch axes first; the function's
    closed-over values must not be batched (the rule cannot see them)."""
    counts = {"num_consts": num_consts}
    const_dims, arg_dims = _CUSTOM_CALL.split(counts, dims)
    if any(d is not None for d in const_dims):
        raise CustomVmapClosureError(
            f"the custom_vmap function {name} closes over a value batched by this "
            f"vmap, which its vmap rule cannot see; pass that value as an argument"
        )
    args = _CUSTOM_CALL.group(counts, vals, "args")
    args = [
        v if d is None else batch_to_front(v, axis_size, d)
        for v, d in zip(args, arg_dims)
    ]
    outs, out_batched = rule(axis_size, [d is not None for d in arg_dims], args)
    return list(outs), [0 if b else None for b in out_batched]


batch_rules[custom_vmap_call_p] = _custom_vmap_call_batch


def _custom_vmap_call_jvp(primals, tangents, *, call, rule, num_consts, name):
    """As JAX's: another custom_vmap_call, of the jvp of `fun` on (primals,
    tangents), whose rule is the jvp of the user's rule (forward mode only)."""
    if isinstance(core.current_trace(), PartialTrace):
        _refuse_reverse_mode(name=name)
    tangents = [instantiate(t) for t in tangents]
    jvp_call = cached_jvp_program(call, [True] * len(primals), name)
    outs = custom_vmap_call_p.bind(
        *jvp_call.consts,
        *primals,
        *tangents,
        call=jvp_call.closed,
        rule=_jvp_of_rule(rule, num_consts, name),
        num_consts=len(jvp_call.consts),
        name=name,
    )
    half = len(outs) // 2
    return outs[:half], outs[half:]


jvp_rules[custom_vmap_call_p] = _custom_vmap_call_jvp


def _refuse_reverse_mode(*args, name, **params):
    """grad reaches a custom_vmap call eagerly (its jvp under linearize) or
    through a jitted program (the call's transpose): both refuse, as JAX."""
    raise CustomVmapReverseModeError(
        f"reverse-mode differentiation (grad, vjp, linearize) of the custom_vmap "
        f"function {name} is not supported, as in JAX: it has no transpose. Use "
        f"forward mode (jvp, jacfwd), or apply grad to a function without custom_vmap"
    )


transpose_rules[custom_vmap_call_p] = _refuse_reverse_mode


def _jvp_of_rule(rule: Callable, num_consts: int, name: str) -> Callable:
    """The vmap rule of a jvp'd call: jvp of `rule` on the arguments whose primal
    and tangent are both batched, vmapped over those batched on one side only."""

    def jvp_rule(axis_size: int, in_batched: list, args: list):
        counts = {"num_consts": num_consts}
        half = len(args) // 2  # each half: the original call's consts, args
        const_pb, primal_b = _CUSTOM_CALL.split(counts, in_batched[:half])
        const_tb, tangent_b = _CUSTOM_CALL.split(counts, in_batched[half:])
        if any(const_pb) or any(const_tb):
            raise CustomVmapClosureError(
                f"the custom_vmap function {name} closes over a value batched by "
                f"this vmap, which its vmap rule cannot see; pass it as an argument"
            )
        ps = _CUSTOM_CALL.group(counts, args[:half], "args")
        ts = _CUSTOM_CALL.group(counts, args[half:], "args")
        both = [p and t for p, t in zip(primal_b, tangent_b)]
        found: dict = {}

        def rule_jvp(ps, ts):
            def on_primals(*xs):
                outs, found["batched"] = rule(axis_size, both, list(xs))
                return outs

            outs, touts, _ = jvp_flat(on_primals, list(ps), list(ts))
            return outs, [instantiate(t) for t in touts]

        extra_p = [0 if p and not b else None for p, b in zip(primal_b, both)]
        extra_t = [0 if t and not b else None for t, b in zip(tangent_b, both)]
        if all(d is None for d in extra_p + extra_t):
            outs, touts = rule_jvp(ps, ts)
            return [*outs, *touts], found["batched"] * 2
        # batched on one side only: vmapped over it, every output batched
        in_axes = (extra_p, extra_t)
        outs, touts = vmap(rule_jvp, in_axes=in_axes, axis_size=axis_size)(ps, ts)
        return [*outs, *touts], [True] * (len(outs) + len(touts))

    jvp_rule.__name__ = f"jvp_of_{getattr(rule, '__name__', 'rule')}"
    return jvp_rule


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` as a custom_vmap whose vmap rule is a loop over the batch
    (lax.map): for functions whose vectorized form is worse than a loop."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(args)
        flags = tree_flatten(in_batched)[0]
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(mapped_example):
            it = iter(mapped_example)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return f.fun(*tree_unflatten(tree, full))

        out = lax.map(one, mapped)
        return out, tree_unflatten(
            tree_structure(out), [True] * len(tree_flatten(out)[0])
        )

    return f


__all__ = ["custom_vmap", "sequential_vmap"]
