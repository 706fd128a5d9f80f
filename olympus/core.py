"""olympus.core: the IR's classes under JAX's module name."""

from olympus.ir.core import (  # noqa: F401
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    Primitive,
    ShapedArray,
    Var,
)
from olympus.ir.checker import check_olympuspr  # noqa: F401
from olympus.tracer.core import Tracer  # noqa: F401
