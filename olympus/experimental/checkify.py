"""olympus.experimental.checkify: run-time checks that survive jit and vmap
(JAX's `jax.experimental.checkify`).

`check(pred, msg, *args)` records a failure instead of raising inside a
`checkify`-ed function, which returns `(error, result)`; `error.get()` is the
first failure's message (None if none) and `error.throw()` raises it. With
`errors=` the transformation also checks for NaNs made by a primitive
(`nan_checks`), division by zero (`div_checks`) and out-of-bounds indices
(`index_checks`).

>>> from olympus.experimental.checkify import check, checkify
>>> def f(x):
...     check(x > 0, "x must be positive, got {}", x)
...     return jnp.log(x)
>>> err, y = olympus.jit(checkify(f))(-1.0)
>>> err.get()
'x must be positive, got -1.0 (`check` failed)'

The transformation replays `f`'s program equation by equation (nested jit
calls inlined), so the checks are values the program returns. Checks inside
cond branches and loop bodies are not functionalized (docs/differences.md).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from olympus import numpy as jnp
from olympus.backends.xla.array import Array
from olympus.backends.xla.lowering import lowering_rules
from olympus.ir import dtypes
from olympus.ir.core import Primitive
from olympus.ir.effects import ordered_effect_primitives
from olympus.tracer import core
from olympus.tracer.evaluation import read_atom
from olympus.tracer.functions import trace_pytree_function
from olympus.tracer.pytree import register_pytree_node, tree_flatten, tree_unflatten
from olympus.transforms.batching import batch_rules, batch_to_front
from olympus.transforms.jvp import jvp_rules


class JaxRuntimeError(ValueError):
    """A failed check, raised by `Error.throw()` or by `check` run eagerly
    (JAX's name, so code that catches checkify's errors works)."""


class CheckPredicateError(TypeError):
    """`check` given a predicate that is not a scalar bool (or olympus array)."""


class CheckNotFunctionalizedError(ValueError):
    """A `check` compiled without `checkify` around it (inside plain jit)."""


# The kinds of error, used in error sets as JAX's classes are.
class FailedCheckError:
    """A user `check` that failed."""


class NaNError:
    """A primitive that made a NaN from inputs without one."""


class DivisionByZeroError:
    """A division or remainder by zero."""


class OOBError:
    """An index outside the array (dynamic_slice, gather)."""


# What the check sets below hold: the error classes themselves (JAX's name).
ErrorCategory = type

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
div_checks = frozenset({DivisionByZeroError})
index_checks = frozenset({OOBError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


# ---- the check primitive ------------------------------------------------------
check_p = Primitive("check", multiple_results=True)


def _format_check(message: str, fmt_tree, values) -> str:
    args, kwargs = tree_unflatten(fmt_tree, [_host(v) for v in values])
    return f"{message.format(*args, **kwargs)} (`check` failed)"


def _host(x):
    x = np.asarray(x)
    return x[()] if x.ndim == 0 else x


def _check_impl(pred, *fmt_values, message: str, fmt_tree):
    if not np.all(np.asarray(pred)):
        raise JaxRuntimeError(_format_check(message, fmt_tree, fmt_values))
    return []


def _check_lower(ctx, *operands, message: str, fmt_tree):
    raise CheckNotFunctionalizedError(
        "Cannot abstractly evaluate a checkify.check which was not functionalized: "
        f"check({message!r}) was compiled without checkify; wrap the function "
        "in checkify(...) and call err.throw() on its result"
    )


def _check_jvp(primals, tangents, *, message: str, fmt_tree):
    check_p.bind(*primals, message=message, fmt_tree=fmt_tree)
    return [], []


def _check_batch(axis_size, vals, dims, *, message: str, fmt_tree):
    """One check per example, in order (eager vmap raises at the first)."""
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    for i in range(axis_size):
        example = [v if d is None else v[i] for v, d in zip(vals, dims)]
        check_p.bind(*example, message=message, fmt_tree=fmt_tree)
    return [], []


check_p.def_abstract_eval(lambda *avals, message, fmt_tree: [])
check_p.def_impl(_check_impl)
lowering_rules[check_p] = _check_lower
jvp_rules[check_p] = _check_jvp
batch_rules[check_p] = _check_batch
ordered_effect_primitives.add(check_p)  # kept in programs, in order


def check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """Fails with `msg.format(*fmt_args, **fmt_kwargs)` where `pred` is False:
    recorded by checkify, raised (JaxRuntimeError) when run eagerly."""
    if not isinstance(pred, bool) and not (
        isinstance(pred, (Array, core.Tracer)) and core.aval_of(pred).shape == ()
    ):
        raise CheckPredicateError(
            f"check takes a scalar pred as argument, got {pred}; pass a Python "
            "bool or a 0-d olympus array (reduce an array with jnp.all first)"
        )
    leaves, fmt_tree = tree_flatten((fmt_args, fmt_kwargs))
    check_p.bind(
        jnp.asarray(pred), *map(jnp.asarray, leaves), message=msg, fmt_tree=fmt_tree
    )


# ---- the error value --------------------------------------------------------------
class Error:
    """What a checkified function returns beside its result: one failure flag
    (and the values its message needs) per check site, in program order. A
    pytree, so it leaves jit and vmap (batched flags are per example)."""

    def __init__(self, failed: tuple, payloads: tuple, sites: tuple):
        self.failed, self.payloads, self.sites = failed, payloads, sites

    def get(self) -> str | None:
        """The first failure's message, None when every check passed."""
        failed = [np.asarray(f) for f in self.failed]
        if not failed:
            return None
        batch = failed[0].shape
        messages = []
        for index in np.ndindex(*batch):
            text = self._first_message(failed, index)
            if text is not None and not batch:
                return text
            if text is not None:
                messages.append(f"at mapped index {', '.join(map(str, index))}: {text}")
        return "\n".join(messages) or None

    def _first_message(self, failed: list, index: tuple) -> str | None:
        for i, flags in enumerate(failed):
            if flags[index]:
                payload = [np.asarray(p)[index] for p in self.payloads[i]]
                return _site_message(self.sites[i], payload)
        return None

    def throw(self) -> None:
        """Raises JaxRuntimeError with the first failure's message, if any."""
        message = self.get()
        if message is not None:
            raise JaxRuntimeError(message)

    def __repr__(self) -> str:
        return f"Error({self.get()!r})"


register_pytree_node(
    Error,
    lambda e: ((e.failed, e.payloads), e.sites),
    lambda sites, children: Error(
        tuple(children[0]), tuple(map(tuple, children[1])), sites
    ),
)


def _site_message(site: tuple, payload: list) -> str:
    kind = site[0]
    if kind == "check":
        return _format_check(site[1], site[2], payload)
    if kind == "nan":
        return f"nan generated by primitive: {site[1]}."
    if kind == "div":
        return "division by zero"
    shape, sizes, axes = site[1], site[2], site[3]
    starts = np.asarray(payload[0]).reshape(-1, len(axes))
    for row in starts:
        for start, axis in zip(row, axes):
            if not 0 <= start <= shape[axis] - sizes[axis]:
                return (
                    f"out-of-bounds indexing for array of shape {shape}: index "
                    f"{start} is out of bounds for axis {axis} with size {shape[axis]}. "
                )
    return f"out-of-bounds indexing for array of shape {shape}."


# ---- the transformation -----------------------------------------------------------
def checkify(f: Callable, errors: frozenset = user_checks) -> Callable:
    """`f` returning `(Error, f's result)`: its `check`s (and, per `errors`,
    automatic checks) recorded instead of raised. Works under jit and vmap."""

    @functools.wraps(f)
    def checked(*args, **kwargs):
        closed, _, out_tree = trace_pytree_function(f, args, kwargs, "checkify")
        leaves = tree_flatten((args, kwargs))[0]
        found: list = []
        outs = _run(closed.olympuspr, closed.consts, leaves, errors, found)
        failed = tuple(site[0] for site in found)
        payloads = tuple(tuple(site[1]) for site in found)
        error = Error(failed, payloads, tuple(site[2] for site in found))
        return error, tree_unflatten(out_tree, outs)

    return checked


def _run(olympuspr, consts, args, errors, found: list) -> list:
    env = dict(zip(olympuspr.constvars, consts))
    env.update(zip(olympuspr.invars, args))
    for eqn in olympuspr.eqns:
        invals = [read_atom(env, x) for x in eqn.invars]
        outs = _eval_eqn(eqn, invals, errors, found)
        env.update(zip(eqn.outvars, outs))
    return [read_atom(env, v) for v in olympuspr.outvars]


def _eval_eqn(eqn, invals: list, errors, found: list) -> list:
    prim = eqn.primitive
    if prim is check_p:
        if FailedCheckError in errors:
            pred, *values = invals
            site = ("check", eqn.params["message"], eqn.params["fmt_tree"])
            found.append((jnp.logical_not(jnp.all(pred)), values, site))
        return []
    if prim.name == "pjit":  # a nested jit: its checks are ours too
        inner = eqn.params["olympuspr"]
        return _run(inner.olympuspr, inner.consts, invals, errors, found)
    with core.replaying(eqn.source_info):
        outs = prim.bind(*invals, **eqn.params)
    outs = list(outs) if prim.multiple_results else [outs]
    _automatic_checks(prim, eqn.params, invals, outs, errors, found)
    return outs


def _automatic_checks(prim, params, invals, outs, errors, found: list) -> None:
    if DivisionByZeroError in errors and prim.name in ("div", "rem"):
        found.append((jnp.any(invals[1] == 0), [], ("div",)))
    if NaNError in errors and any(_is_inexact(x) for x in outs):
        made = _any_nan(outs) & jnp.logical_not(_any_nan(invals))
        found.append((made, [], ("nan", prim.name)))
    if OOBError in errors and prim.name == "dynamic_slice":
        operand, *starts = invals
        starts = jnp.stack([jnp.asarray(s, jnp.int32) for s in starts])
        _record_oob(
            operand,
            starts,
            params["slice_sizes"],
            tuple(range(len(operand.shape))),
            found,
        )
    if OOBError in errors and prim.name == "gather":
        operand, indices = invals
        dn = params["dimension_numbers"]
        _record_oob(
            operand, indices, params["slice_sizes"], tuple(dn.start_index_map), found
        )


def _record_oob(operand, starts, slice_sizes, axes: tuple, found: list) -> None:
    shape = tuple(operand.shape)
    limits = np.asarray([shape[a] - slice_sizes[a] for a in axes])
    starts = jnp.reshape(starts, (-1, len(axes)))
    bad = jnp.any((starts < 0) | (starts > limits))
    found.append((bad, [starts], ("oob", shape, tuple(slice_sizes), axes)))


def _is_inexact(x) -> bool:
    return dtypes.is_inexact(np.dtype(core.aval_of(x).dtype))


def _any_nan(values) -> Any:
    flags = [jnp.any(jnp.isnan(x)) for x in values if _is_inexact(x)]
    return functools.reduce(jnp.logical_or, flags, jnp.asarray(False))


__all__ = [
    "DivisionByZeroError",
    "Error",
    "FailedCheckError",
    "JaxRuntimeError",
    "NaNError",
    "OOBError",
    "all_checks",
    "automatic_checks",
    "check",
    "checkify",
    "div_checks",
    "float_checks",
    "index_checks",
    "nan_checks",
    "user_checks",
]
