"""olympus.numpy functions under jit: an eager call is one dispatch instead of
one per lax operation (as JAX's jnp functions), and a traced call inlines the
same program."""

from __future__ import annotations

import inspect

from olympus.api import jit

_COMPILED: dict = {}


def jit_entry_points(namespace: dict, static_options: dict) -> None:
    """Replaces each function named in `static_options` in `namespace` (a
    module's globals) by its jit, with the listed argument names static."""
    for name, static in static_options.items():
        namespace[name] = jit(namespace[name], static_argnames=static)


def compiled(fn):
    """`fn` under jit, its keyword-only arguments static (one jit per `fn`)."""
    if fn not in _COMPILED:
        options = tuple(
            name
            for name, p in inspect.signature(fn).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        )
        _COMPILED[fn] = jit(fn, static_argnames=options)
    return _COMPILED[fn]
