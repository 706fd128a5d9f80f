"""olympus.numpy functions under jit: an eager call is one dispatch instead of
one per lax operation (as JAX's jnp functions), and a traced call inlines the
same program."""

from __future__ import annotations

import inspect

from olympus.api import jit
from olympus.backends.xla.array import Array
from olympus.tracer import core

_COMPILED: dict = {}


def jit_entry_points(namespace: dict, static_options: dict) -> None:
    """Replaces each function named in `static_options` in `namespace` (a
    module's globals) by its jit, with the listed argument names static."""
    for name, static in static_options.items():
        namespace[name] = jit(namespace[name], static_argnames=static)


def compiled(fn):
    """`fn` under jit, its keyword-only arguments static (one jit per `fn`)."""
    jitted = _COMPILED.get(fn)
    if jitted is None:
        options = tuple(
            name
            for name, p in inspect.signature(fn).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        )
        jitted = _COMPILED[fn] = jit(fn, static_argnames=options)
    return jitted


def eager_arrays(x1, x2) -> bool:
    """Whether a call on `x1` and `x2` is eager on two Arrays, where a function
    that would run several primitives or much Python is better `compiled`
    (one dispatch). Not with olympus_debug_nans on, which reports per primitive."""
    return (
        type(x1) is Array
        and type(x2) is Array
        and core._state.trace is core.eval_trace
        and not core._debug_nans[0]
    )
