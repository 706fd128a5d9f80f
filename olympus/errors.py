"""olympus.errors: the exceptions users may want to catch."""

from olympus.ir.checker import OlympusprTypeError  # noqa: F401
from olympus.ir.dtypes import TypePromotionError  # noqa: F401
from olympus.backends.xla.lowering import LoweringError  # noqa: F401
from olympus.tracer.errors import (  # noqa: F401
    ConcretizationTypeError,
    OlympusTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
