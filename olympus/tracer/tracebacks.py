"""Tracebacks that show the user's code, not olympus's.

An exception that leaves a public entry point (`jit(f)(x)`, `grad(f)(x)`,
`vmap(f)(x)`, `make_olympuspr(f)(x)`, ...) has the frames of olympus's own
files cut from its traceback there, so the user reads their call, their
function's lines and the message. (A bare `raise` of the exception whose
traceback was replaced adds no frame, so not even the entry point's shows.) `olympus_traceback_filtering` says when: 'auto' (the
default: filter, except while a debugger or tracer is attached, whose user
wants every frame), 'on' or 'off'. Each filtered exception gets a one-line note
saying how to see every frame. Chained exceptions (`__cause__`,
`__context__`) are filtered the same way.
"""

from __future__ import annotations

import functools
import os
import sys
import types

from olympus import config

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
NOTE = (
    "(olympus removed its internal frames from this traceback; "
    "set OLYMPUS_TRACEBACK_FILTERING=off to see them)"
)


def _filtering() -> bool:
    which = config.read("olympus_traceback_filtering")
    if which == "auto":
        return sys.gettrace() is None
    return which == "on"


def _internal(tb) -> bool:
    return tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def _without_internal_frames(tb):
    """The traceback with olympus's frames left out; None when nothing is left."""
    kept = []
    while tb is not None:
        if not _internal(tb):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def filter_exception(error: BaseException) -> BaseException:
    """`error` (and what it chains to) with olympus's frames cut from its
    traceback, and the note added once; unchanged when filtering is off."""
    if not _filtering():
        return error
    seen = set()
    current = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tb = current.__traceback__
        if tb is not None and any(_internal(t) for t in _walk(tb)):
            current.with_traceback(_without_internal_frames(tb))
            if not getattr(current, "_olympus_filtered", False):
                current._olympus_filtered = True
                current.add_note(NOTE)
        current = current.__cause__ or current.__context__
    return error


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def api_boundary(fun):
    """`fun` as a public entry point: an exception leaving it has olympus's
    frames cut from its traceback (this wrapper's frame too)."""

    @functools.wraps(fun)
    def entry_point(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as error:
            filter_exception(error)
            raise  # a bare raise adds no frame: none of olympus's is left

    return entry_point
