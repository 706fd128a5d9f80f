"""The C extension `_fastpath` (olympus's Array fields and a jitted call's
cache hit, written in C because those two paths run on every call: see the
top of _fastpath.c), or its pure-Python equivalents where it was not built
or `OLYMPUS_PURE_PYTHON=1` asks for them (tests/test_fastpath.py runs the
suite's dispatch tests both ways).

- `ArrayBase`: olympus.Array's fields; `Array(buf, aval)` makes one. The C
  type also gives the Array NumPy's buffer protocol.
- `JitBase`: the base of JitFunction. The C type's call runs a cache hit on
  positional Arrays and static values and hands every other call to
  `JitFunction._call_python`; without it, `_call_python` is `__call__`.
- `configure_array(Array)` / `configure_jit(JitFunction, ...)`: what the C
  type needs to know of the Python classes (nothing without it).
"""

from __future__ import annotations

import os

NATIVE = False
if os.environ.get("OLYMPUS_PURE_PYTHON") != "1":
    try:
        from olympus.backends.xla._fastpath import (  # noqa: F401
            ArrayBase,
            JitBase,
            configure_array,
            configure_jit,
        )

        NATIVE = True
    except ImportError:  # not built (no C compiler at install time)
        pass

if not NATIVE:

    class ArrayBase:
        """olympus.Array's fields (see olympus/backends/xla/array.py)."""

        __slots__ = ("aval", "_buf", "_npy", "_global", "_sharding", "__weakref__")

        def __init__(self, buf, aval):
            self._buf = buf
            self.aval = aval
            self._npy = None
            self._global = None
            self._sharding = None

    class JitBase:
        """JitFunction's base: its `__call__` is `_call_python`."""

        __slots__ = ()

    def configure_array(array_type) -> None:
        pass

    def configure_jit(
        jit_type, jit_globals, trace_state, eval_trace, ndarray, staging_like, probes
    ) -> None:
        pass


def staging_like(x):
    """A private array of x's shape and dtype whose data starts on a 64-byte
    boundary: the C call path copies small NumPy arguments into two of these
    per argument position (see private_copy in _fastpath.c), which jaxlib then
    reads in place rather than copying them again."""
    import numpy as np

    raw = np.empty(x.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + x.nbytes].view(x.dtype).reshape(x.shape)
