"""The exceptions olympus raises, one class per failure mode.

Each subclasses the built-in type a user would catch (TypeError, ...), and
each message says what happened, where in the user's code, and how to fix it.
"""

from __future__ import annotations


class OlympusTypeError(TypeError):
    """A primitive got operands of the wrong shape or dtype."""


class IncompatibleShapesError(OlympusTypeError, ValueError):
    """Shapes that do not broadcast together: a TypeError from an operation
    (`a + b`, as JAX's), a ValueError from `broadcast_shapes` (as JAX's)."""


class ConcretizationTypeError(TypeError):
    """Python needed a concrete value (`if`, `bool`, `int`, ...) of a traced one."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """`int()` / `__index__` of a traced value."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` / `if` of a traced value."""


class TracerArrayConversionError(TypeError):
    """`np.asarray` of a traced value."""


class UnexpectedTracerError(RuntimeError):
    """A tracer escaped the trace that made it and was used afterwards."""


class ArrayTooLargeError(MemoryError):
    """A program would allocate an array larger than the machine's memory
    (raised before compiling it, instead of XLA's allocation failure)."""


class ShardingTreeError(ValueError):
    """Shardings given as a pytree that is not a prefix of the values' pytree
    (here, below the backends, because jit's ref threading checks them too)."""
