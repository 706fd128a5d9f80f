"""Several processes, one computation: `olympus.distributed.initialize(...)`
before the first computation joins this process to the others through
jaxlib's distributed runtime (process 0 serves the coordinator); then
`olympus.devices()` lists every process's devices, a mesh may span them, and
XLA's collectives cross processes over TCP (gloo). Each process holds the
pieces of an array that live on its own devices (`addressable_shards`).

    olympus.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=0)
"""

from olympus.backends.xla.client import (  # noqa: F401
    CoordinatorUnreachableError,
    DistributedError,
    PeerLostError,
    distributed_initialized as is_initialized,
    initialize_distributed as initialize,
    shutdown_distributed as shutdown,
)

__all__ = [
    "CoordinatorUnreachableError",
    "DistributedError",
    "PeerLostError",
    "initialize",
    "is_initialized",
    "shutdown",
]
