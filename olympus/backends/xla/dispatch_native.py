"""jaxlib's C++ jit dispatcher, for jitted calls fed NumPy arrays.

A NumPy argument is copied to the device on every call. jaxlib's Python entry
for that copy (`batched_device_put`) costs about 3 us per array, more than
JAX's whole per-argument cost, because JAX's C++ dispatcher (`_jax.pjit`)
makes the copy itself. So a jit cache hit with NumPy arguments hands its flat
arguments (NumPy arrays and device buffers) to one such dispatcher per
compiled signature, which copies, runs the executable and returns the output
buffers; olympus wraps them as Arrays (benchmarks/README.md has the figures).

Two things keep the behaviour that of the Python route:

- the dispatcher *aliases* a 64-byte-aligned NumPy array instead of copying
  it (the device buffer reads the host memory while the program runs), so a
  caller writing to its array right after the call would change the result:
  each NumPy argument is handed over as a private copy;
- it reads process-wide states (disable_jit, x64, a post-call hook) that JAX
  installs when it is imported; without JAX, `install_states` sets neutral
  ones. 64-bit NumPy arguments never come here (x64 is JAX's state, not
  olympus's), nor programs with ordered effects or several devices.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from olympus.backends.xla import client


class _FastpathData(NamedTuple):
    """What the C++ dispatcher keeps per argument signature (the fields of
    JAX's `MeshExecutableFastpathData`, read by name)."""

    xla_executable: object
    out_pytree_def: object
    in_shardings: list
    out_shardings: list
    out_avals: list
    out_committed: list
    kept_var_bitvec: list
    in_device_local_layouts: list
    const_args: list


class NotNative(Exception):
    """An argument the dispatcher cannot take as it is (a buffer laid out
    other than the program's parameter): the caller takes the Python route."""


def _not_native(x, sharding, layout):
    raise NotNative(type(x).__name__)


_states_installed = False


def install_states() -> None:
    """Neutral disable_jit / x64 / post-hook states for the dispatcher, set
    when nothing (JAX) has set them: it refuses to run without them."""
    global _states_installed
    from jaxlib import _jax

    state = _jax.config.Config
    _jax.jax_jit.set_disable_jit_state(state("olympus_native_disable_jit", False))
    _jax.jax_jit.set_enable_x64_state(state("olympus_native_enable_x64", False))
    _jax.jax_jit.set_post_hook_state(state("olympus_native_post_hook", None))
    _states_installed = True


def native_caller(executable, const_bufs: list, in_avals: list):
    """A function of the program's arguments (NumPy arrays of `in_avals`'
    exact dtypes, or device buffers on the default device) returning the
    executable's output buffer (one output) or buffers (a tuple), through
    jaxlib's C++ dispatcher; None for a program it must not run (ordered
    effects)."""
    if executable.ordered:
        return None
    from jaxlib import _jax

    loaded, handlers = executable.loaded, executable._handlers
    n_in, n_out = len(const_bufs) + len(in_avals), len(executable.out_avals)
    registry = _jax.pytree.default_registry()
    sharding = client._sharding
    fastpath = _FastpathData(
        xla_executable=loaded,
        out_pytree_def=registry.flatten(0 if n_out == 1 else (0,) * n_out)[1],
        in_shardings=[sharding] * n_in,
        out_shardings=[sharding] * n_out,
        out_avals=list(executable.out_avals),
        out_committed=[True] * n_out,
        kept_var_bitvec=[True] * n_in,
        in_device_local_layouts=[None] * n_in,
        const_args=list(const_bufs),
    )

    def run(*args):
        """The dispatcher's first call of a signature (and its route while
        JAX's disable_jit is on): copies, runs, returns the output buffers."""
        buffers = [
            client.host_to_device(x, aval) if type(x) is np.ndarray else x
            for x, aval in zip(args, in_avals)
        ]
        outs = loaded.execute_sharded(const_bufs + buffers).consume_with_handlers(
            handlers
        )
        return outs[0] if n_out == 1 else tuple(outs)

    def cache_miss(*args):
        return run(*args), fastpath, False

    return _jax.pjit(
        "olympus_jit",
        run,
        cache_miss,
        (),
        (),
        executable,
        registry,
        _not_native,
        _jax.PjitFunctionCache(8),
    )
