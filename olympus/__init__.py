"""olympus: a tracing JIT compiler for numerical Python.

>>> import olympus, olympus.numpy as jnp
>>> f = olympus.jit(lambda x: jnp.sum(jnp.sin(x) * 3.0))
>>> print(olympus.make_olympuspr(f)(jnp.ones(8)))
{ lambda ; a:f32[8]. let
    b:f32[] = pjit[
      name=<lambda>
      olympuspr={ lambda ; c:f32[8]. let
          d:f32[8] = sin c
          e:f32[8] = mul d 3.0:f32[]
          f:f32[] = reduce_sum[axes=(0,)] e
        in (f,) }
    ] a
  in (b,) }
"""

from olympus import config  # noqa: F401  (the module: olympus.config.update(...))
from olympus import lax, numpy, tree, tree_util, errors, core  # noqa: F401
from olympus.api import (  # noqa: F401
    block_until_ready,
    clear_caches,
    debug_nans,
    default_backend,
    device_get,
    device_put,
    disable_jit,
    enable_x64,
    eval_shape,
    jit,
    make_olympuspr,
    named_call,
    pmap,
    typeof,
)
from olympus.backends.xla.array import (  # noqa: F401
    PublicArray as Array,
    make_array_from_single_device_arrays,
)
from olympus.backends.xla.client import (  # noqa: F401
    Device,
    device_count,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from olympus.backends.xla.sharding import make_mesh  # noqa: F401
from olympus.lax.parallel import shard_map  # noqa: F401
from olympus.tracer.functions import ShapeDtypeStruct  # noqa: F401
from olympus.tracer.core import ensure_compile_time_eval, named_scope  # noqa: F401
from olympus.transforms.batching import vmap  # noqa: F401
from olympus import debug, distributed, sharding, stages  # noqa: F401  (debug.print, AOT stages)
from olympus.sharding import NamedSharding, reshard, set_mesh  # noqa: F401
from olympus.sharding import (  # noqa: F401
    Shard,
    make_array_from_callback,
    make_array_from_process_local_data,
)
from olympus.sharding import PartitionSpec as P  # noqa: F401
from olympus.ir.dtypes import float0, numpy_dtype_promotion  # noqa: F401
from olympus.autodiff import (  # noqa: F401
    closure_convert,
    custom_gradient,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    value_and_grad,
    vjp,
)
from olympus.lax.reductions import default_matmul_precision  # noqa: F401
from olympus.lax.hints import hint  # noqa: F401
from olympus.lax.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from olympus.lax.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from olympus import ad_checkpoint  # noqa: F401

__version__ = "0.1.0"
__all__ = [
    "Array",
    "Device",
    "ShapeDtypeStruct",
    "block_until_ready",
    "clear_caches",
    "config",
    "custom_gradient",
    "debug_nans",
    "default_backend",
    "device_get",
    "device_count",
    "device_put",
    "devices",
    "disable_jit",
    "enable_x64",
    "ensure_compile_time_eval",
    "eval_shape",
    "local_device_count",
    "local_devices",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "Shard",
    "make_mesh",
    "NamedSharding",
    "P",
    "reshard",
    "set_mesh",
    "pmap",
    "process_count",
    "shard_map",
    "process_index",
    "jit",
    "make_olympuspr",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "closure_convert",
    "linear_transpose",
    "linearize",
    "value_and_grad",
    "vjp",
    "checkpoint",
    "checkpoint_policies",
    "custom_jvp",
    "custom_vjp",
    "default_matmul_precision",
    "hint",
    "named_call",
    "named_scope",
    "numpy_dtype_promotion",
    "pure_callback",
    "remat",
    "typeof",
    "vmap",
    "Ref",
    "empty_ref",
    "free_ref",
    "freeze",
    "new_ref",
    "ref",
]
from olympus import nn, random, scipy  # noqa: E402,F401  (built on lax, numpy and jit above)
from olympus.callback import pure_callback  # noqa: E402,F401
from olympus import experimental  # noqa: E402,F401  (io_callback)
from olympus import dtypes  # noqa: E402,F401  (public face of olympus.ir.dtypes)
from olympus import flatten_util, typing  # noqa: E402,F401  (JAX's names)
from olympus import custom_batching  # noqa: E402,F401  (custom_vmap)
from olympus import ref  # noqa: E402,F401  (mutable array references)
from olympus.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: E402,F401
