"""olympus.errors: the exceptions users may want to catch."""

from olympus.ir.checker import OlympusprTypeError  # noqa: F401
from olympus.config import (  # noqa: F401
    ConfigEnvironmentError,
    ConfigValueError,
    UnknownConfigOptionError,
)
from olympus.ir.dtypes import TypePromotionError  # noqa: F401
from olympus.backends.xla.lowering import LoweringError  # noqa: F401
from olympus.tracer.errors import (  # noqa: F401
    ArrayTooLargeError,
    ConcretizationTypeError,
    IncompatibleShapesError,
    OlympusTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from olympus.transforms.jvp import MissingRuleError  # noqa: F401,E402  (no jvp/transpose rule)
from olympus.autodiff import GradTypeError  # noqa: F401,E402  (grad's input/output checks)
from olympus.lax.custom_derivatives import CustomDerivativeError  # noqa: F401,E402
from olympus.lax.parallel import ShardMapReplicationError  # noqa: F401,E402  (shard_map check_rep)
from olympus.lax.cumulative import ScanShapeError  # noqa: F401,E402  (cumsum, associative_scan)
from olympus.lax.convolution import ConvPaddingError  # noqa: F401,E402  (conv padding strings)
from olympus.callback import (  # noqa: F401,E402  (pure_callback)
    CallbackDifferentiationError,
    CallbackResultError,
    CallbackVmapError,
)
from olympus.backends.xla.host_callback import HostCallbackError  # noqa: F401,E402
from olympus.random import (  # noqa: F401,E402
    InvalidKeyError,
    RandomDtypeError,
    RandomParameterError,
)
