"""`jax.extend.source_info_util` under olympus: the user's source line that
equations record (olympus's `SourceInfo`), and JAX's context managers for it."""

from __future__ import annotations

import contextlib

from olympus.ir.core import SourceInfo  # noqa: F401
from olympus.tracer.core import named_scope, user_source_info


def current() -> SourceInfo | None:
    """The user's line that an equation bound now would record."""
    return user_source_info()


def new_source_info() -> SourceInfo | None:
    """JAX's empty source info; olympus records the user's line instead."""
    return user_source_info()


@contextlib.contextmanager
def user_context(traceback=None, name_stack=None):
    """JAX's way to attribute equations to another traceback; olympus finds the
    user's line itself, so the equations keep theirs."""
    yield


# Paths libraries asked to leave out of source info (JAX's `register_exclusion`).
excluded_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Records `path` as a library's own (JAX's). olympus attributes an
    equation to the innermost frame outside olympus, which may be the
    library's: the path is recorded, equations keep that frame."""
    excluded_paths.append(path)


def extend_name_stack(name: str):
    """Names the equations bound inside, as `olympus.named_scope` does."""
    return named_scope(name)


__all__ = [
    "SourceInfo",
    "current",
    "extend_name_stack",
    "new_source_info",
    "register_exclusion",
    "user_context",
]
