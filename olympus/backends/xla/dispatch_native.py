"""jaxlib's C++ jit dispatcher, for jitted calls fed NumPy arrays.

A NumPy argument is copied to the device on every call. jaxlib's Python entry
for that copy (`batched_device_put`) costs about 3 us per array, more than
JAX's whole per-argument cost, because JAX's C++ dispatcher (`_jax.pjit`)
makes the copy itself. So a jitted function called with NumPy arguments hands
its flat arguments (NumPy arrays and device buffers) to one such dispatcher,
which finds the executable by the arguments' signature in C++, copies, runs
it and builds the outputs (benchmarks/README.md has the figures). Its first
call of a signature asks `jit`'s own cache (`lookup`) for the Compiled.

What keeps the behaviour that of the Python route:

- the dispatcher *aliases* a 64-byte-aligned NumPy array instead of copying
  it (the device buffer reads the host memory while the program runs), so a
  caller writing to its array right after the call would change the result:
  callers hand over private copies;
- it narrows 64-bit NumPy arrays by JAX's x64 state, not olympus's: callers
  send no 64-bit NumPy arrays;
- it reads process-wide states (disable_jit, x64, a post-call hook) that JAX
  installs when it is imported; without JAX, `install_states` sets neutral
  ones;
- outputs come back as olympus Arrays in the function's own output tree:
  the dispatcher unflattens them through a node type of this module
  (`_Outputs`), whose rebuild wraps them (one output: the caller wraps it);
- programs over several devices, with ordered effects or with pure
  callbacks are not taken (`lookup` is not asked again: the caller goes
  back to the Python route).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from olympus.backends.xla import client
from olympus.backends.xla.array import Array
from olympus.ir.core import ShapedArray
from olympus.tracer.pytree import tree_unflatten


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
    other than the program's parameter, or without an olympus aval): the
    caller takes the Python route."""


class NotCompiled(Exception):
    """A signature `jit` has not compiled yet: the caller takes the Python
    route (which compiles it) and drops this dispatcher, which would fall
    back to Python for that signature from now on."""


def _not_native(x, sharding, layout):
    raise NotNative(type(x).__name__)


_states_installed = False


def install_states(err: ValueError) -> None:
    """Neutral disable_jit / x64 / post-hook states for the dispatcher, which
    refused to run (`err`) because nothing (JAX) has set them; re-raises
    `err` if it is another error."""
    global _states_installed
    if _states_installed or "state is not set" not in str(err):
        raise err
    from jaxlib import _jax

    state = _jax.config.Config
    _jax.jax_jit.set_disable_jit_state(state("olympus_native_disable_jit", False))
    _jax.jax_jit.set_enable_x64_state(state("olympus_native_enable_x64", False))
    _jax.jax_jit.set_post_hook_state(state("olympus_native_post_hook", None))
    _states_installed = True


class _Outputs:
    """The output node of the dispatcher's output tree: its aux data is
    (olympus output tree, output avals, single output)."""

    __slots__ = ("buffers", "aux")

    def __init__(self, buffers, aux):
        self.buffers, self.aux = buffers, aux


def _wrap(aux, buffers):
    """The outputs as the jitted function returns them (olympus Arrays)."""
    out_tree, out_avals, single = aux
    if single:
        return Array(buffers[0], out_avals[0])
    return tree_unflatten(out_tree, [Array(b, a) for b, a in zip(buffers, out_avals)])


_registry = None  # the dispatcher's pytree registry, with _Outputs


def _get_registry():
    global _registry
    if _registry is None:
        from jaxlib import _jax

        registry = _jax.pytree.PyTreeRegistry()
        registry.register_node(_Outputs, lambda o: (o.buffers, o.aux), _wrap)
        _registry = registry
    return _registry


def builtin_flatten() -> Callable:
    """jaxlib's C++ pytree flatten, which takes apart tuples, lists, dicts
    (keys sorted), None and namedtuples as olympus's tree_flatten does and
    leaves everything else whole: jit's fast path for container and keyword
    arguments keys its cache on its treedef (hashed and compared in C++)."""
    return _get_registry().flatten


NOT_TAKEN = object()  # what a dispatcher returns for a call it does not run
JaxlibArray = None  # jaxlib's array type, once a dispatcher is made (lazy import)


def host_dispatcher(lookup: Callable, refuse: Callable):
    """A C++ dispatcher for one jitted function: call it with the flat
    arguments (NumPy arrays of 32 bits or fewer, already of their parameters'
    dtypes and private copies; device buffers on the default device); it
    returns the function's outputs (a jaxlib array where that is the one
    output, for the caller to wrap), or NOT_TAKEN, or raises NotCompiled or
    NotNative (then the caller takes the Python route). `lookup(avals)` gives
    the Compiled for a signature or None (not compiled yet); `refuse()` is
    called when a Compiled is one the dispatcher must not run."""
    global JaxlibArray
    from jaxlib import _jax

    JaxlibArray = _jax.ArrayImpl
    registry = _get_registry()
    sharding = client._sharding

    def cache_miss(*args):
        avals = tuple(
            ShapedArray(x.shape, x.dtype) if type(x) is np.ndarray else x.aval
            for x in args
        )
        for aval in avals:
            if type(aval) is not ShapedArray:  # a buffer jaxlib made (DLPack)
                raise NotNative("a buffer without an olympus aval")
        entry = lookup(avals)
        if entry is None:
            raise NotCompiled
        exe = entry.executable
        if entry.sharded or exe.waits:
            refuse()
            return NOT_TAKEN, None, False
        n_in, n_out = len(entry.const_bufs) + len(args), len(exe.out_avals)
        aux = (entry.out_tree, tuple(exe.out_avals), entry.single_out)
        # One output comes back as the jaxlib array (the caller wraps it,
        # cheaper than a call back into Python); several as the output tree.
        outputs = 0 if entry.single_out else _Outputs([0] * n_out, aux)
        fastpath = _FastpathData(
            xla_executable=exe.loaded,
            out_pytree_def=registry.flatten(outputs)[1],
            in_shardings=[sharding] * n_in,
            out_shardings=[sharding] * n_out,
            out_avals=list(exe.out_avals),
            out_committed=[True] * n_out,
            kept_var_bitvec=[True] * n_in,
            in_device_local_layouts=[None] * n_in,
            const_args=list(entry.const_bufs),
        )
        buffers = [
            client.host_to_device(x, aval) if type(x) is np.ndarray else x
            for x, aval in zip(args, avals)
        ]
        outs = exe.fast.outputs(entry.const_bufs + buffers)
        return (outs[0] if entry.single_out else _wrap(aux, outs)), fastpath, False

    def not_jitted(*args):
        """What the dispatcher runs while JAX's disable_jit is on."""
        return NOT_TAKEN

    return _jax.pjit(
        "olympus_jit",
        not_jitted,
        cache_miss,
        (),
        (),
        NOT_TAKEN,
        registry,
        _not_native,
        _jax.PjitFunctionCache(64),
    )
