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
