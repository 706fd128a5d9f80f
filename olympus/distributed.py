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
    initialize_distributed,
    shutdown_distributed,
)


def initialize(
    coordinator_address: str,
    num_processes: int,
    process_id: int,
    timeout_s: int = 60,
    heartbeat_timeout_s: float = 30,
) -> None:
    """Joins `num_processes` processes coordinated at `coordinator_address`
    (host:port; process 0 serves it); CoordinatorUnreachableError after
    `timeout_s` seconds without an answer. A process that dies or hangs for
    `heartbeat_timeout_s` is lost: work that needs it (a program over its
    devices, starting the backend) raises PeerLostError."""
    initialize_distributed(
        coordinator_address, num_processes, process_id, timeout_s, heartbeat_timeout_s
    )


def shutdown() -> None:
    """Leaves the distributed runtime (at the end of the program; also run at
    exit): waits for the other processes, unless one is lost."""
    shutdown_distributed()


__all__ = [
    "CoordinatorUnreachableError",
    "DistributedError",
    "PeerLostError",
    "initialize",
    "is_initialized",
    "shutdown",
]
