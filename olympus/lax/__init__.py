"""olympus.lax: the primitives, each defined with all its rules in one place,
and a public function per primitive (see ops.py)."""

from olympus.lax import elementwise, pjit, reductions, shapes  # noqa: F401  (register primitives)
from olympus.lax.ops import *  # noqa: F401,F403
from olympus.lax.ops import (  # noqa: F401  names that shadow builtins
    abs, complex, max, min, pow, round, slice,
)
from olympus.lax.control_flow import (  # noqa: F401  structured control flow
    cond, fori_loop, map, scan, switch, while_loop,
)
from olympus.lax.custom_derivatives import optimization_barrier, stop_gradient  # noqa: F401
from olympus.lax.reductions import Precision, PrecisionError  # noqa: F401  (dot precision)
from olympus.lax.sharding import with_sharding_constraint  # noqa: F401
from olympus.lax.parallel import (  # noqa: F401  collectives (inside olympus.shard_map)
    all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter,
)
from olympus.lax.bits import (  # noqa: F401  bit-level primitives (olympus.random)
    bitcast_convert_type, shift_left, shift_right_arithmetic, shift_right_logical,
)
from olympus.lax import linalg  # noqa: E402,F401  (matrix primitives: cholesky, lu, eigh, ...)
from olympus.lax.slicing import (  # noqa: E402,F401  computed positions
    GatherDimensionNumbers, ScatterDimensionNumbers, gather, scatter, scatter_add, scatter_max,
    scatter_min, scatter_mul,
)
from olympus.lax.hints import HintTypeError, HintValueError, hint  # noqa: E402,F401
from olympus.lax.sorting import sort, top_k  # noqa: E402,F401  (sort primitive)
from olympus.lax.convolution import ConvDimensionNumbers, conv_general_dilated  # noqa: E402,F401
from olympus.lax.windowed import reduce_window_max, reduce_window_sum  # noqa: E402,F401

__all__ = [
    "ConvDimensionNumbers", "GatherDimensionNumbers", "HintTypeError", "HintValueError",
    "Precision", "PrecisionError", "ScatterDimensionNumbers", "abs", "add",
    "all_gather", "all_to_all", "argmax", "argmin", "atan2", "axis_index",
    "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "broadcast", "broadcast_in_dim", "broadcasted_iota", "ceil", "clamp", "complex",
    "concatenate", "cond", "conv_general_dilated", "convert_element_type", "cos", "div",
    "dot", "dot_general", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq", "erf", "exp",
    "expand_dims", "expm1", "floor", "fori_loop", "full", "gather", "ge", "gt", "imag",
    "integer_pow", "iota", "le", "log", "log1p", "logistic", "lt", "map", "max", "min",
    "mul", "ne", "neg", "optimization_barrier", "pad", "pmax", "pmean", "pmin", "pow",
    "ppermute", "psum", "psum_scatter", "real", "reduce_and", "reduce_max",
    "reduce_min", "reduce_or", "reduce_prod", "reduce_sum", "reduce_window_max",
    "reduce_window_sum", "rem", "reshape", "rev", "round", "rsqrt", "scan", "scatter",
    "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "select", "select_n",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sin",
    "slice", "sort", "sqrt", "squeeze", "stop_gradient", "sub", "switch", "tan", "tanh",
    "top_k", "transpose", "while_loop", "with_sharding_constraint"
]
