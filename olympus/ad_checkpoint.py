"""`olympus.ad_checkpoint`: rematerialisation, as JAX's `jax.ad_checkpoint`, and
what reverse mode saves for the backward pass (`print_saved_residuals`)."""

import sys
from typing import Any, Callable

from olympus.ir.core import Var
from olympus.tracer.core import aval_of
from olympus.tracer.functions import arg_names, flatten_fun
from olympus.tracer.pytree import tree_flatten, tree_paths
from olympus.tracer.staging import function_name, trace_to_olympuspr
from olympus.transforms.ad_util import is_differentiable
from olympus.transforms.linearize import linearize_flat

from olympus.lax.checkpoint import (  # noqa: F401
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    remat,
)


def saved_residuals(f: Callable, *args, **kwargs) -> list[tuple[Any, str]]:
    """(aval, where it comes from) for each value reverse mode keeps from the
    forward pass of `f(*args, **kwargs)` for the backward pass (JAX's
    `jax.ad_checkpoint.saved_residuals`), to see what a checkpoint policy saves."""
    leaves, in_tree = tree_flatten((args, kwargs))
    mask = [is_differentiable(aval_of(x)) for x in leaves]
    flat_fun, _ = flatten_fun(lambda a, k: f(*a, **k), in_tree)
    name = function_name(f)

    def residuals_of(*xs):
        _, linear = linearize_flat(flat_fun, list(xs), mask, name)
        return list(linear.consts)

    program, _, _ = trace_to_olympuspr(residuals_of, [aval_of(x) for x in leaves])
    sources = _argument_names(f, args, kwargs)
    producers = {v: e for e in program.eqns for v in e.outvars}
    found = []
    for v in program.outvars:
        aval = v.aval if isinstance(v, Var) else aval_of(v.val)
        found.append((aval, _describe(v, program, sources, producers)))
    return found


def _argument_names(f, args, kwargs) -> list[str]:
    names = arg_names(f, len(args))
    paths = []
    for n, a in zip(names, args):
        paths += tree_paths(a, n)
    for k, v in kwargs.items():
        paths += tree_paths(v, k)
    return paths


def _describe(v, program, sources, producers) -> str:
    if not isinstance(v, Var):
        return "a constant"
    if v in program.invars:
        return f"from the argument {sources[program.invars.index(v)]}"
    eqn = producers.get(v)
    if eqn is None:
        return "a constant"
    where = f" from {eqn.source_info}" if eqn.source_info is not None else ""
    return f"output of {eqn.primitive.name}{where}"


def print_saved_residuals(f: Callable, *args, **kwargs) -> None:
    """Prints saved_residuals(f, *args, **kwargs), one residual a line:
    `f32[3] output of sin from script.py:4 (f)`."""
    for aval, source in saved_residuals(f, *args, **kwargs):
        sys.stdout.write(f"{aval.str_short()} {source}\n")
