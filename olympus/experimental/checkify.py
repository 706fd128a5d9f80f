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
calls inlined), so the checks are values the program returns. A check inside
a cond/switch branch becomes an output of every branch (False where the branch
lacks it, so the taken branch's error is the one seen); one inside a scan or
while_loop body (or a while's cond function) becomes a loop carry holding the
first failing iteration's flag and payload, as JAX reports the first error.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from olympus import numpy as jnp
from olympus.lax import ops as lax_ops
from olympus.lax.control_flow import scan, switch, while_loop
from olympus.backends.xla.array import Array
from olympus.backends.xla.lowering import lowering_rules
from olympus.ir import dtypes
from olympus.ir.core import Primitive
from olympus.ir.effects import ordered_effect_primitives
from olympus.ir.structure import structure_of
from olympus.tracer import core
from olympus.tracer.evaluation import read_atom
from olympus.tracer.functions import trace_pytree_function
from olympus.tracer.staging import DebugInfo, trace_to_olympuspr
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
        for i in self._user_first(len(failed)):
            flags = failed[i]
            if flags[index]:
                payload = [np.asarray(p)[index] for p in self.payloads[i]]
                return _site_message(self.sites[i], payload)
        return None

    def throw(self) -> None:
        """Raises JaxRuntimeError with the first failure's message, if any
        (one example's when batched: JAX's choice, see `_batched_message`)."""
        failed = [np.asarray(f) for f in self.failed]
        batched = bool(failed) and failed[0].ndim > 0
        message = self._batched_message(failed) if batched else self.get()
        if message is not None:
            raise JaxRuntimeError(message)

    def _batched_message(self, failed: list) -> str | None:
        """As JAX reduces a batched error: per kind of error (class and payload
        types) the last example where it failed; then the kind whose failure
        comes first (user checks before automatic ones, else program order)."""
        batch = failed[0].shape
        chosen: dict = {}  # kind -> (example, -rank, site)
        for rank, i in enumerate(self._user_first(len(failed))):
            shapes = tuple(np.shape(p)[len(batch) :] for p in self.payloads[i])
            kind = (self.sites[i][0], shapes)
            for index in np.ndindex(*batch):
                if failed[i][index]:
                    chosen[kind] = max(chosen.get(kind, ()), (index, -rank, i))
        if not chosen:
            return None
        index, _, i = min(chosen.values(), key=lambda c: -c[1])
        payload = [np.asarray(p)[index] for p in self.payloads[i]]
        return _site_message(self.sites[i], payload)

    def _user_first(self, n: int) -> list:
        # JAX numbers a user check when `check` is traced, before checkify
        # numbers its automatic checks, and reports the lowest number failed
        return sorted(range(n), key=lambda i: self.sites[i][0] != "check")

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
    if prim.name in _control_flow_rules:
        with core.replaying(eqn.source_info):
            outs = _control_flow_rules[prim.name](eqn.params, invals, errors, found)
            if outs is None:  # no check inside: bound as it was
                outs = list(prim.bind(*invals, **eqn.params))
        return outs
    with core.replaying(eqn.source_info):
        outs = prim.bind(*invals, **eqn.params)
    outs = list(outs) if prim.multiple_results else [outs]
    _automatic_checks(prim, eqn.params, invals, outs, errors, found)
    return outs


# ---- checks inside control flow ------------------------------------------------------
# A rule returns the equation's outputs with the sub-programs' checks appended
# to `found`, or None when the sub-programs have no check site (then the
# equation is bound unchanged).
def _runner(closed, errors, prefix=()) -> Callable:
    """`run(args, found) -> outs`: replays a closed sub-program with checks."""
    return lambda args, found: _run(
        closed.olympuspr, closed.consts, [*prefix, *args], errors, found
    )


def _sites_of(run, avals: list) -> list:
    """(site, payload avals) per check site `run` records, learnt by tracing it
    once: a loop's initial carry and an untaken branch's zero payloads need
    the payloads' shapes before the real trace."""
    sites: list = []

    def probe(*args):
        found: list = []
        run(list(args), found)
        sites.append([(site, len(payload)) for _, payload, site in found])
        return [_strong(p) for _, payload, _ in found for p in payload]

    paths = tuple(f"args[{i}]" for i in range(len(avals)))
    debug = DebugInfo("checkify", "a checked sub-program", paths)
    olympuspr, _, _ = trace_to_olympuspr(probe, avals, debug)
    out_avals = iter(v.aval for v in olympuspr.outvars)
    return [(site, [next(out_avals) for _ in range(n)]) for site, n in sites[0]]


def _strong(x):
    """`x` strongly typed, so payloads carried or returned by branches agree."""
    return lax_ops.convert_element_type(x, core.aval_of(x).dtype)


def _empty(sites: list) -> tuple[list, list]:
    """No failure yet: False flags and zero payloads for `sites`."""
    flags = [jnp.asarray(False) for _ in sites]
    payloads = [[jnp.zeros(a.shape, a.dtype) for a in avals] for _, avals in sites]
    return flags, payloads


def _first_failure(flags, payloads, sites, start: int, local: list):
    """Sites `start...` updated with one step's failures (`local`). A site fails
    only where no site of its kind (JAX's error effect: class and payload
    types) failed in an earlier step, so each kind keeps its first failure in
    time, payload included, as JAX's loops report it."""
    keys = [_kind(site, avals) for site, avals in sites]
    earlier: dict = {}
    for flag, key in zip(flags, keys):
        earlier[key] = earlier[key] | flag if key in earlier else flag
    flags, payloads = list(flags), list(payloads)
    for i, (now, values, _) in enumerate(local, start):
        new = now & jnp.logical_not(earlier[keys[i]])
        payloads[i] = [
            jnp.where(new, _strong(v), p) for p, v in zip(payloads[i], values)
        ]
        flags[i] = flags[i] | new
    return flags, payloads


def _kind(site: tuple, avals: list) -> tuple:
    return (site[0], tuple((a.shape, np.dtype(a.dtype)) for a in avals))


def _record(sites: list, flags, payloads, found: list) -> None:
    for (site, _), flag, payload in zip(sites, flags, payloads):
        found.append((flag, list(payload), site))


def _avals(values) -> list:
    return [core.aval_of(v) for v in values]


def _cond_rule(params, invals, errors, found: list):
    index, *operands = invals
    runs = [_runner(b, errors) for b in params["branches"]]
    per_branch = [_sites_of(run, _avals(operands)) for run in runs]
    if not any(per_branch):
        return None

    def branch(k):
        def fun(*args):
            local: list = []
            outs = runs[k](list(args), local)
            flags, payloads = [], []
            for j, sites in enumerate(per_branch):
                if j == k:
                    flags += [flag for flag, _, _ in local]
                    payloads += [[_strong(p) for p in ps] for _, ps, _ in local]
                else:
                    empty_flags, empty_payloads = _empty(sites)
                    flags += empty_flags
                    payloads += empty_payloads
            return outs, flags, payloads

        return fun

    outs, flags, payloads = switch(
        index, [branch(k) for k in range(len(runs))], *operands
    )
    _record([s for sites in per_branch for s in sites], flags, payloads, found)
    return list(outs)


def _scan_rule(params, invals, errors, found: list):
    consts, carry, xs = structure_of("scan").split(params, invals)
    run = _runner(params["olympuspr"], errors, consts)
    x_avals = [a.update(shape=a.shape[1:]) for a in _avals(xs)]
    sites = _sites_of(run, _avals(carry) + x_avals)
    if not sites:
        return None

    def body(state, x):
        carry, flags, payloads = state
        local: list = []
        outs = run([*carry, *x], local)
        flags, payloads = _first_failure(flags, payloads, sites, 0, local)
        carry, ys = structure_of("scan").split_outputs(params, outs)
        return (carry, flags, payloads), ys

    (carry, flags, payloads), ys = scan(
        body,
        (list(carry), *_empty(sites)),
        list(xs),
        length=params["length"],
        reverse=params["reverse"],
        unroll=params["unroll"],
    )
    _record(sites, flags, payloads, found)
    return [*carry, *ys]


def _while_rule(params, invals, errors, found: list):
    """JAX's way: the cond function's checks run once before the loop and after
    each body step; its sites come first, then the body's."""
    cond_consts, body_consts, init = structure_of("while").split(params, invals)
    run_cond = _runner(params["cond_olympuspr"], errors, cond_consts)
    run_body = _runner(params["body_olympuspr"], errors, body_consts)
    cond_sites = _sites_of(run_cond, _avals(init))
    body_sites = _sites_of(run_body, _avals(init))
    if not cond_sites and not body_sites:
        return None
    sites = cond_sites + body_sites
    local: list = []
    run_cond(list(init), local)
    flags, payloads = _first_failure(*_empty(sites), sites, 0, local)

    def cond_fun(state):
        return run_cond(list(state[0]), [])[0]

    def body_fun(state):
        carry, flags, payloads = state
        body_local: list = []
        carry = run_body(list(carry), body_local)
        n = len(cond_sites)
        flags, payloads = _first_failure(flags, payloads, sites, n, body_local)
        cond_local: list = []
        run_cond(list(carry), cond_local)
        flags, payloads = _first_failure(flags, payloads, sites, 0, cond_local)
        return carry, flags, payloads

    state = (list(init), flags, payloads)
    carry, flags, payloads = while_loop(cond_fun, body_fun, state)
    _record(sites, flags, payloads, found)
    return list(carry)


_control_flow_rules = {"cond": _cond_rule, "scan": _scan_rule, "while": _while_rule}


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
