"""Explaining jit recompilations (`olympus_explain_cache_misses`).

A jitted function compiles once per signature: (argument tree structure,
argument avals, static arguments, x64 mode). When a call misses a function that
already has compiled signatures, the closest previous signature (fewest
differences) is compared with the new one and each difference is named: tree
structure, shape, dtype or weak type of an argument leaf, static argument
value, x64 mode. The message goes to the logger "olympus" at WARNING level
with the user's file:line of the call, e.g.

    jit(step) recompiles for a call at train.py:12 (main): x: shape (3,) -> (4,)
"""

from __future__ import annotations

import logging

from olympus.tracer.core import user_source_info

logger = logging.getLogger("olympus")


def aval_changes(path: str, old, new) -> list[str]:
    """What differs between two avals of the argument leaf `path`."""
    changes = []
    if old.shape != new.shape:
        changes.append(f"{path}: shape {old.shape} -> {new.shape}")
    if old.dtype != new.dtype:
        changes.append(f"{path}: dtype {old.dtype.name} -> {new.dtype.name}")
    if old.weak_type != new.weak_type:
        changes.append(
            f"{path}: weak type {old.weak_type} -> {new.weak_type} "
            f"(a Python scalar and an array of the same dtype differ)"
        )
    return changes


def static_changes(old: tuple, new: tuple, arg_names: list[str]) -> list[str]:
    """Static arguments whose value changed (or that appeared or vanished);
    positional ones are named by `arg_names` where it reaches."""
    old_values, new_values = dict(old), dict(new)
    changes = []
    for name in sorted(old_values.keys() | new_values.keys(), key=str):
        before, after = (
            old_values.get(name, "<absent>"),
            new_values.get(name, "<absent>"),
        )
        if before != after:
            label = name
            if isinstance(name, int):
                label = arg_names[name] if name < len(arg_names) else f"args[{name}]"
            changes.append(f"static {label}: {before!r:.60} -> {after!r:.60}")
    return changes


def key_changes(
    old: tuple, new: tuple, paths: list[str], arg_names: list[str]
) -> list[str]:
    """Every difference between two signature keys (tree, avals, statics, x64)."""
    (old_tree, old_avals, old_statics, old_x64) = old
    (new_tree, new_avals, new_statics, new_x64) = new
    changes = []
    if old_tree != new_tree:
        changes.append(f"tree structure of the arguments: {old_tree} -> {new_tree}")
    elif old_avals != new_avals:
        for path, a, b in zip(paths, old_avals, new_avals):
            changes += aval_changes(path, a, b)
    changes += static_changes(old_statics, new_statics, arg_names)
    if old_x64 != new_x64:
        changes.append(f"x64 mode: {old_x64} -> {new_x64}")
    return changes


def explain(
    fun_name: str, key: tuple, previous: list, paths: list[str], arg_names: list[str]
) -> str | None:
    """The message for a miss of `key` given the `previous` keys, or None
    when there are none (a first compile is not a recompile). `paths` name the
    argument leaves, `arg_names` the positional parameters."""
    if not previous:
        return None
    closest = min(
        (key_changes(old, key, paths, arg_names) for old in previous), key=len
    )
    where = user_source_info()
    at = f" for a call at {where}" if where is not None else ""
    reasons = "; ".join(closest) or "no difference found in the signature"
    return (
        f"jit({fun_name}) recompiles{at}: {reasons} "
        f"(closest of {len(previous)} compiled signature(s))"
    )


def log_cache_miss(
    fun_name: str, key: tuple, previous: list, paths: list[str], arg_names: list[str]
) -> None:
    message = explain(fun_name, key, previous, paths, arg_names)
    if message is not None:
        logger.warning(message)
