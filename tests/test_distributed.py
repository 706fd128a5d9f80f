"""Several processes (issue #13, part 5): two processes on 127.0.0.1, two CPU
devices each, one mesh over all four; a data-parallel gradient step equals
the single-process one; a process whose peer dies gets PeerLostError. Bounded
timeouts throughout."""

import os
import socket
import subprocess
import sys

import pytest

import olympus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_WORKER = r"""
import sys
import numpy as np
import olympus, olympus.numpy as jnp
from olympus.sharding import NamedSharding, PartitionSpec as P

process_id, port = int(sys.argv[1]), sys.argv[2]
olympus.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process_id,
                               timeout_s=60)
assert olympus.distributed.is_initialized()
assert (olympus.process_index(), olympus.process_count()) == (process_id, 2)
assert (olympus.device_count(), olympus.local_device_count()) == (4, 2)
assert all(d.process_index == process_id for d in olympus.local_devices())

rng = np.random.default_rng(0)  # the same data in both processes
w = rng.standard_normal((4, 3)).astype(np.float32)
x = rng.standard_normal((16, 4)).astype(np.float32)
y = rng.standard_normal((16, 3)).astype(np.float32)

def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

mesh = olympus.make_mesh((4,), ("data",))
replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
step = olympus.jit(olympus.value_and_grad(loss), in_shardings=(replicated, batch, batch),
                   out_shardings=(replicated, replicated))
value, grad = step(w, x, y)
xs = olympus.device_put(x, batch)
assert len(xs.addressable_shards) == 2 and not xs.is_fully_addressable
try:
    np.asarray(xs)
except ValueError as err:
    assert type(err).__name__ == "NotAddressableError", err
want_value, want_grad = olympus.value_and_grad(loss)(w, x, y)  # this process alone
np.testing.assert_allclose(float(value), float(want_value), rtol=1e-5)
np.testing.assert_allclose(np.asarray(grad), np.asarray(want_grad), rtol=1e-4, atol=1e-6)
print("ok", process_id, flush=True)
olympus.distributed.shutdown()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_data_parallel_step():
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="2", PYTHONPATH=ROOT)
    port = str(_free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(i), port],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for i in range(2)
    ]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=240))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for i, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"ok {i}" in out, (
            f"process {i}:\n{out}\n{err[-3000:]}"
        )


def test_unreachable_coordinator_is_a_named_error():
    code = (
        "import olympus\n"
        f"olympus.distributed.initialize('127.0.0.1:{_free_port()}', 2, 1, timeout_s=2)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert done.returncode != 0
    assert "CoordinatorUnreachableError" in done.stderr
    assert "no coordinator answered" in done.stderr, done.stderr[-2000:]


def test_initialize_after_the_backend_started():
    olympus.devices()
    with pytest.raises(olympus.distributed.DistributedError, match="before the first"):
        olympus.distributed.initialize("127.0.0.1:1", 2, 0)


_PEER_DIES = r"""
import os, sys, time
import numpy as np
import olympus, olympus.numpy as jnp
from olympus.sharding import NamedSharding, PartitionSpec as P

process_id, port, when = int(sys.argv[1]), sys.argv[2], sys.argv[3]
olympus.distributed.initialize(f"127.0.0.1:{port}", num_processes=2,
                               process_id=process_id, timeout_s=30,
                               heartbeat_timeout_s=2)
if process_id == 1 and when == "after initialize":
    os._exit(3)  # abruptly: no shutdown, no goodbye
try:
    mesh = olympus.make_mesh((4,), ("data",))  # starts the backend with both
    total = olympus.jit(jnp.sum, in_shardings=NamedSharding(mesh, P("data")),
                        out_shardings=NamedSharding(mesh, P()))
    x = np.arange(8.0, dtype=np.float32)
    assert float(total(x)) == 28.0
    if process_id == 1:
        os._exit(3)  # after a first step together
    started = time.monotonic()
    float(total(x))  # waits in a collective for the dead process
except olympus.distributed.PeerLostError as err:
    assert isinstance(err, olympus.distributed.DistributedError)
    print("lost:", err, flush=True)
    raise
print("no error", flush=True)
"""


@pytest.mark.parametrize("when", ["after initialize", "after a step"])
def test_dead_peer_is_a_named_error(when):
    """Process 1 exits abruptly; process 0, waiting on it (to start the
    backend, or in a collective), gets PeerLostError within about
    heartbeat_timeout_s (2 s here) and exits; the whole test under 60 s."""
    env = dict(os.environ, OLYMPUS_NUM_CPU_DEVICES="2", PYTHONPATH=ROOT)
    port = str(_free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PEER_DIES, str(i), port, when],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for i in range(2)
    ]
    try:
        out, err = procs[0].communicate(timeout=50)
        procs[1].communicate(timeout=5)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert procs[1].returncode == 3
    assert procs[0].returncode == 1, f"{out}\n{err[-3000:]}"
    assert "PeerLostError" in err
    assert "lost: " in out, f"{out}\n{err[-3000:]}"
    assert "process 1 of 2 sent no heartbeat" in out
    what = "starting the backend" if when == "after initialize" else "a program over 4"
    assert what in out, out
