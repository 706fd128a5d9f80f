"""`JitFunction`, what `jit(f)` returns: a cache of `Compiled` stages, one
per call signature, and the fast paths a cache hit takes (positional Arrays
and static values run their executable's `FastEntry`; keywords and
containers are keyed on jaxlib's C++ flatten; NumPy arguments go through
jaxlib's C++ dispatcher, olympus/backends/xla/dispatch_native.py). The
per-call cost of these paths is measured in benchmarks/dispatch.py."""

from __future__ import annotations

import functools
import logging
import operator
import threading
import weakref
from typing import Any, Callable

import numpy as np

from olympus import caches, config
from olympus.caches import JIT_CACHE_SIZE, BoundedCache
from olympus.ir.core import ClosedOlympuspr, ShapedArray
from olympus.backends.interpreted import interpret, not_interpretable, prefault_like
from olympus.backends.stepping import has_nan, raise_first_nan
from olympus.backends.xla import client
from olympus.backends.xla.array import Array
from olympus.backends.xla.fastpath import NATIVE, JitBase, configure_jit, staging_like
from olympus.backends.xla.sharding import (
    NamedSharding,
    on_mesh_change,
    onto_mesh_in_scope,
    placement_mesh,
)
from olympus.backends.xla import dispatch_native
from olympus.backends.xla.dispatch import buffer_of, check_array_sizes
from olympus.backends.xla.dispatch_native import (
    NOT_TAKEN,
    builtin_flatten,
    NotCompiled,
    NotNative,
    host_dispatcher,
    install_states,
)
from olympus.prng import keys_from_structs
from olympus.lax.pjit import pjit_p
from olympus.lax.sharding import constrain
from olympus.stages import (
    BackgroundCompile,
    Call,
    Compiled,
    Traced,
    explain_miss,
    laid_out_structs,
    optimized,
    split_call,
    trace_call,
    weak_callback,
)
from olympus.tracer import axes as axes_env
from olympus.tracer import core, refs
from olympus.tracer.core import Tracer, aval_of, user_source_info
from olympus.tracer.functions import positional_names
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import consts_as_invars, function_name
from olympus.tracer.tracebacks import filter_exception

logger = logging.getLogger("olympus")


def normalize_argnums(argnums) -> tuple:
    if argnums is None:
        return ()
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


# Bumped on every config change (x64 changes avals, disable_jit bypasses
# compiled code): a JitFunction's fast cache is valid only in its epoch.
_config_epoch = 0


def _next_config_epoch(name, value) -> None:
    global _config_epoch
    _config_epoch += 1
    _ndarray_avals.clear()
    _host_dtypes.clear()
    _plain_host_dtypes.clear()


config.on_change(_next_config_epoch)


def _next_mesh_epoch() -> None:
    """Under `set_mesh` results go onto the mesh, which `_fast` hits (one
    device) do not do: a new epoch sends every call to `_call_slow`, which
    remembers no hits while a mesh is set."""
    global _config_epoch
    _config_epoch += 1


on_mesh_change(_next_mesh_epoch)
_ndarray_avals: dict = caches.register("ndarray avals", {})  # (shape, dtype) -> aval
_host_dtypes: dict = caches.register("ndarray dtypes", {})  # dtype -> _host_dtype
# the dtypes _host_dtype found True: a set test is the cheapest on every call
_plain_host_dtypes: set = caches.register("ndarray plain dtypes", set())
_ndarray = np.ndarray  # a global read, not np's attribute, on every call
_MISS = object()
_FAST_ARG_TYPES = (Array, np.ndarray)  # exact types whose calls can take the fast path
# containers jaxlib's builtin flatten takes apart (`_call_tree`'s arguments)
_TREE_TYPES = frozenset([tuple, list, dict, type(None)])
# Python scalars a `__call__` hit takes as dynamic arguments (by value: their
# buffers are made once, when the second call with that value is remembered)
_SCALAR_TYPES = frozenset([bool, int, float, complex])
_flatten = None  # dispatch_native.builtin_flatten(), once a call needs it


def _load_flatten():
    global _flatten
    _flatten = builtin_flatten()
    return _flatten


_state, _eval_trace = core._state, core.eval_trace  # read on every call
_JaxlibArray = None  # jaxlib's array type, once a C++ dispatcher is made


def _ndarray_aval(x) -> ShapedArray:
    aval = _ndarray_avals.get((x.shape, x.dtype))
    if aval is None:
        aval = _ndarray_avals[(x.shape, x.dtype)] = aval_of(x)
    return aval


def _host_dtype(x: np.ndarray):
    """How a NumPy argument is handed to the C++ dispatcher: True (a plain
    copy: already its aval's dtype), its aval's dtype (a converting copy), or
    None for 64 bits (which the dispatcher narrows by JAX's x64 state, not
    olympus's)."""
    dtype = _ndarray_aval(x).dtype
    if dtype.itemsize >= 8 or dtype.kind == "c":
        found = None
    else:
        found = True if dtype == x.dtype and x.dtype.isnative else dtype
    _host_dtypes[x.dtype] = found
    if found is True:
        _plain_host_dtypes.add(x.dtype)
    return found


def _host_buffer(x: np.ndarray, aval: ShapedArray):
    return client.host_to_device(
        x if x.dtype == aval.dtype else x.astype(aval.dtype), aval
    )


def _fast_entry(entry: Compiled, scalars=()) -> tuple | None:
    """What `JitFunction._fast` keeps for a signature: (Compiled, its
    executable's `FastEntry` with the constants and the buffers of the
    call's dynamic Python `scalars`, (leaf position, value) pairs), the
    FastEntry None where the call goes through `Compiled.run_buffers`
    (several outputs, ordered effects, pure callbacks); None where such a
    call has scalars (it stays on the slow path)."""
    exe = entry.executable
    if not entry.single_out or exe.waits:
        return None if scalars else (entry, None)
    fast = exe.fast
    if scalars:
        fast = fast.with_inserted([(i, buffer_of(v)) for i, v in scalars])
    return entry, fast.with_consts(entry.const_bufs)


_NO_HIT = (None, None)  # what `JitFunction._fast` gives for a miss


def _converted_host_arguments(args) -> list | None:
    """The flat arguments for the C++ dispatcher: private copies of the NumPy
    arrays in their avals' dtypes, live Arrays' buffers; None where one is of
    64 bits (the dispatcher would narrow it by JAX's x64 state, not
    olympus's) or a deleted or sharded Array."""
    flat = []
    for a in args:
        if type(a) is _ndarray:
            how = _host_dtypes.get(a.dtype, _MISS)
            if how is _MISS:
                how = _host_dtype(a)
            if how is None:
                return None
            # A copy either way: the dispatcher may alias the array.
            flat.append(a.copy() if how is True else a.astype(how))
        elif type(a) is Array and a._buf is not None:
            flat.append(a._buf)
        else:
            return None
    return flat


def _fast_key(args: tuple, dynamic) -> tuple | None:
    """(the `JitFunction._fast` key `__call__` builds for these positional
    arguments: the avals of the dynamic Arrays, the type and value of
    anything else; the dynamic Python scalars as (leaf position, value)),
    or None where a call like this one cannot be its hit (a static Array or
    NumPy array, a dynamic argument of another kind, a float zero, whose
    sign the key would not keep; a container, which `_call_tree` takes)."""
    key, scalars, leaf = [], [], 0
    for i, a in enumerate(args):
        is_array = type(a) in _FAST_ARG_TYPES
        is_dynamic = i in dynamic
        if type(a) in _TREE_TYPES or (is_array and not is_dynamic):
            return None
        if type(a) is Array:
            key.append(a.aval)
        elif is_array:
            key.append(_ndarray_aval(a))
        elif not is_dynamic:
            key += (type(a), a)
        elif type(a) in _SCALAR_TYPES and _keeps_sign(a):
            scalars.append((leaf, a))
            key += (type(a), a)
        else:
            return None
        leaf += is_dynamic
    return tuple(key), scalars


def _keeps_sign(x) -> bool:
    """Whether equal Python scalars of x's type are the same value: not for
    a float or complex zero (0.0 == -0.0, and 1/x tells them apart)."""
    if type(x) is float:
        return x != 0
    return type(x) is not complex or (x.real != 0 and x.imag != 0)


def _tree_key(args: tuple, kwargs: dict, call: Call) -> tuple | None:
    """The `JitFunction._fast` key `_call_tree` builds for this call (jaxlib's
    treedef of (args, kwargs), then per leaf its aval or static type and
    value), or None where a call like this one cannot be its hit: olympus's
    tree_flatten must order this structure's leaves as jaxlib's does (a
    namedtuple registered with its own flatten would not), and the Array
    leaves must be the call's dynamic leaves (no other leaf dynamic)."""
    try:
        leaves, treedef = (_flatten or _load_flatten())((args, kwargs))
    except (TypeError, ValueError):  # dict keys that do not sort
        return None
    if not _are_leaves([a for a in leaves if type(a) is Array], call):
        return None
    markers = list(range(len(leaves)))
    if tree_flatten(treedef.unflatten(markers))[0] != markers:
        return None
    key = [treedef]
    for a in leaves:
        key += (a.aval,) if type(a) is Array else (type(a), a)
    return tuple(key)


def _are_leaves(arrays: list, call: Call) -> bool:
    """Whether these Arrays are the call's dynamic leaves, in order."""
    return len(arrays) == len(call.leaves) and all(
        map(operator.is_, arrays, call.leaves)
    )


_PLAIN = object()  # the first item of a `_plain_key`


def _plain_key(args: tuple, kwargs: dict) -> tuple | None:
    """(the `JitFunction._fast` key `_call_tree` builds for a call whose
    positional arguments are Arrays, plain values and tuples or lists of
    them (`_add_positional`) and whose keywords are plain values: each
    Array's aval, each container's type and length, the type and value of
    anything else, then each keyword's name, type and value, in the call's
    order; the Arrays' buffers), or None for any other call, which is keyed
    on jaxlib's flatten (`_tree_key`). It skips the flatten and the treedef's
    hash: 0.3 us less a hit (benchmarks/README.md)."""
    key, buffers = [_PLAIN], []
    if not _add_positional(args, key, buffers, 3):
        return None
    for name, v in kwargs.items():
        kind = type(v)
        if kind is Array or kind is _ndarray or kind in _TREE_TYPES:
            return None
        if isinstance(v, tuple):
            return None
        key += (name, kind, v)
    return tuple(key), buffers


def _add_positional(values, key: list, buffers: list, depth: int) -> bool:
    """Adds these positional values' `_plain_key` items and buffers; False
    for a NumPy array, a dict, None, a namedtuple or containers nested
    deeper than `depth` (jaxlib's flatten keys those calls)."""
    for a in values:
        kind = type(a)
        if kind is Array:
            key.append(a.aval)
            buffers.append(a._buf)
        elif kind is tuple or kind is list:
            key += (kind, len(a))
            if not depth or not _add_positional(a, key, buffers, depth - 1):
                return False
        elif kind is _ndarray or kind in _TREE_TYPES or isinstance(a, tuple):
            return False
        else:
            key += (kind, a)
    return True


def _plain_key_for(args: tuple, kwargs: dict, call: Call) -> tuple | None:
    """`_remember_fast`'s (`_plain_key`, no scalars) for a call whose
    keywords are all static and whose Arrays are all its dynamic leaves
    (none of them a Python scalar); else None."""
    found = _plain_key(args, kwargs) if not call.dyn_kwargs else None
    if found is None:
        return None
    leaves, buffers = call.leaves, found[1]
    if len(leaves) != len(buffers) or not all(
        type(x) is Array and x._buf is b for x, b in zip(leaves, buffers)
    ):
        return None
    return found[0], ()


# function -> {jit options -> (Compiled cache, Traced cache)}
_jit_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _shared_caches(fun: Callable, options) -> tuple[dict, dict]:
    """The signature caches of `jit(fun, **options)`, one pair for every
    wrapper of the same function and options (a fresh pair where `fun`
    cannot be weakly referenced or the options cannot be hashed)."""
    try:
        per_options = _jit_caches.setdefault(fun, {})
        pair = per_options.get(options) if options is not None else None
    except TypeError:  # not weakly referenceable, or unhashable options
        per_options, pair = None, None
    if pair is None:
        pair = (BoundedCache(JIT_CACHE_SIZE), BoundedCache(JIT_CACHE_SIZE))
        if per_options is not None and options is not None:
            per_options[options] = pair
    return pair


class JitFunction(JitBase):
    """`jit(f)`: a cache of `Compiled` stages (olympus.stages), one per call
    signature; a miss traces, lowers and compiles f for the new signature.
    Inside another trace it appears as a `pjit` equation.

    Tiered (`tiered=True`, or None and olympus_tiered_execution on): a miss
    traces, then interprets the optimized program with NumPy
    (olympus/backends/interpreted.py) while a `BackgroundCompile` compiles it;
    calls of that signature interpret until the executable is ready, then
    run it (and take the fast path). A failed background compile raises its
    error on the next call of that signature, which compiles synchronously
    from then on."""

    def __init__(
        self,
        fun: Callable,
        static_argnums=(),
        static_argnames=(),
        donate_argnums=(),
        in_shardings=None,
        out_shardings=None,
        tiered: bool | None = None,
        donate_argnames=(),
    ):
        self.fun = fun
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.tiered = tiered
        self.name = getattr(fun, "__name__", None) or function_name(fun)
        self.static_argnums, self.static_argnames = _static_args(
            fun, static_argnums, static_argnames
        )
        self.donate_argnums = _donated_args(fun, donate_argnums, donate_argnames)
        # `__call__`'s key of a call (see there) -> _fast_entry(Compiled)
        self._fast: dict = {}
        # jaxlib's C++ dispatcher for calls with NumPy arguments (made on the
        # first), or False where this function has a program it must not run
        self._host = None
        # The config epoch _fast was filled in; never current for a function
        # with donated arguments, which no call finds in _fast.
        self._epoch = -1 if self.donate_argnums else _config_epoch
        self._scalar_keys: dict = {}  # see `_seen_before`
        # call signature (Call.key) -> Compiled; bounded (olympus/caches.py);
        # same key -> (Traced, pjit body), for use inside traces. Shared by
        # every jit of the same function and options, as JAX's cache is keyed
        # on the function: a new `jit(f)` does not retrace (nor re-read the
        # globals `f` reads).
        self._cache, self._traced = _shared_caches(fun, self._options_key())
        # tiered: key -> BackgroundCompile running; keys that compile synchronously
        self._pending: dict = {}
        self._untiered: dict = BoundedCache(JIT_CACHE_SIZE)
        self._lock = threading.Lock()
        # Held while tracing and compiling a new signature, so threads that
        # miss together compile it once (cache hits never take it).
        self._compile_lock = threading.RLock()
        caches.register_owner(self)  # olympus.clear_caches() calls clear_cache()
        functools.update_wrapper(self, fun, updated=())  # keep our own __dict__

    def _options_key(self):
        shardings = (self.in_shardings, self.out_shardings)
        if any(isinstance(x, (list, dict)) for x in shardings):
            return None  # unhashable options: this wrapper keeps its own caches
        return (
            self.static_argnums,
            self.static_argnames,
            self.donate_argnums,
            shardings,
            self.tiered,
        )

    def _call_python(self, *args, **kwargs):
        # A call of the function (`__call__` where fastpath's C type is not
        # built; else that type's call runs a hit on Arrays and static values
        # as below and hands every other call here).
        # A cache hit for positional arguments (Arrays, static values) runs
        # here in as little Python as possible (jit dispatch latency is
        # measured in benchmarks/dispatch.py); NumPy arguments go to
        # `_call_host`, keywords and containers to `_call_tree`. The key is the
        # argument list with each Array replaced by its aval and any other
        # value by its type and itself (how JAX compares static arguments).
        # A function with donated arguments never has a current `_epoch`.
        try:
            if (
                kwargs
                or self._epoch != _config_epoch
                or _state.trace is not _eval_trace
            ):
                return self._call_tree(args, kwargs)
            key, buffers = [], []
            for a in args:
                if type(a) is Array:
                    key.append(a.aval)
                    buffers.append(a._buf)
                elif type(a) is _ndarray:
                    return self._call_host(args)
                elif type(a) in _TREE_TYPES:
                    return self._call_tree(args, kwargs)
                else:  # a static argument, or a miss where it is not one
                    key.append(type(a))
                    key.append(a)
            try:  # a hash or a run may raise TypeError: the slow path says why
                entry, fast = self._fast.get(tuple(key), _NO_HIT)
                if fast is not None:  # FastEntry.run spelled out: 0.08 us less
                    (out,) = fast.execute(buffers).consume_with_handlers(fast.handlers)
                    return Array(out, fast.out_aval)
                if entry is not None:  # run_buffers adds the constants
                    return entry.run_buffers(buffers)
            except TypeError:  # an unhashable static value; a deleted Array
                pass
            return self._call_slow(args, kwargs)
        except Exception as error:  # the user's frames only (tracer/tracebacks.py)
            filter_exception(error)
            raise

    if not NATIVE:
        __call__ = _call_python

    def _call_tree(self, args: tuple, kwargs: dict) -> Any:
        """A call with keywords or containers (tuples, lists, dicts, None)
        among its arguments: a hit runs here, its `_fast` key made from the
        arguments where its keywords are plain values (`_plain_key`), else
        from jaxlib's C++ flatten of (args, kwargs) (see `_tree_key`); the
        rest (no current epoch, inside a trace, NumPy leaves) goes to
        `_call_slow`."""
        if self._epoch != _config_epoch or _state.trace is not _eval_trace:
            return self._call_slow(args, kwargs)
        # `_remember_fast` keeps a `_plain_key` for every such call it can
        # (where it cannot, `_tree_key` cannot either)
        found = _plain_key(args, kwargs)
        if found is not None:
            key, buffers = found
        else:
            try:
                leaves, treedef = (_flatten or _load_flatten())((args, kwargs))
            except (TypeError, ValueError):  # dict keys that do not sort
                leaves = None  # the slow path raises JAX's error
            if leaves is None:
                return self._call_slow(args, kwargs)
            key, buffers = [treedef], []
            for a in leaves:
                if type(a) is Array:
                    key.append(a.aval)
                    buffers.append(a._buf)
                else:
                    key += (type(a), a)
            key = tuple(key)
        try:  # unhashable leaves (NumPy arrays), deleted Arrays: as in __call__
            entry, fast = self._fast.get(key, _NO_HIT)
            if fast is not None:
                return fast.run(buffers)
            if entry is not None:
                return entry.run_buffers(buffers)
        except TypeError:
            pass
        return self._call_slow(args, kwargs)

    def _compiled_for(self, avals: tuple) -> Compiled | None:
        """The Compiled `_fast` has for these argument avals (the C++
        dispatcher's lookup)."""
        hit = self._fast.get(avals)
        return None if hit is None else hit[0]

    def _call_host(self, args) -> Any:
        """A call with NumPy arguments (`__call__` sends every such call
        here): through jaxlib's C++ dispatcher, which copies them to the
        device for a fraction of `host_to_device`'s cost
        (olympus/backends/xla/dispatch_native.py), where it may run. NumPy
        arrays already of their avals' dtypes and live Arrays are handed over
        here; `_host_arguments` makes the dispatcher and converts the rest."""
        host, flat = self._host, None
        if host:
            flat = []
            for a in args:
                if type(a) is _ndarray and a.dtype in _plain_host_dtypes:
                    flat.append(a.copy())  # a copy: the dispatcher may alias it
                elif type(a) is Array and a._buf is not None:
                    flat.append(a._buf)
                else:
                    flat = None
                    break
        if flat is None:
            host, flat = self._host_arguments(args)
            if host is None:  # the call was made another way: `flat` is its result
                return flat
        try:
            out = host(*flat)
        except Exception as err:
            return self._host_failed(err, args)
        if type(out) is _JaxlibArray:  # the one output
            return Array(out, out.aval)
        return self._call_host_python(args) if out is NOT_TAKEN else out

    def _host_arguments(self, args) -> tuple:
        """(the C++ dispatcher, made on the first call, and the flat arguments
        to hand it, dtypes converted), or (None, the call's result) where it
        must be made another way. A signature not compiled yet goes to the
        slow path before anything is copied (the dispatcher would only ask
        `_compiled_for` and give up: two 4 MiB arguments' copies were 2-6 ms
        of such a first call)."""
        global _JaxlibArray
        avals = []
        for a in args:
            if type(a) is _ndarray:
                avals.append(_ndarray_aval(a))
            elif type(a) is Array:
                avals.append(a.aval)
            else:
                return None, self._call_slow(args, {})
        if self._compiled_for(tuple(avals)) is None:
            return None, self._call_slow(args, {})
        host = self._host
        if host is None:
            host = self._host = host_dispatcher(self._compiled_for, self._refuse_host)
            _JaxlibArray = dispatch_native.JaxlibArray
        flat = _converted_host_arguments(args) if host else None
        if flat is None:  # a 64-bit or a deleted argument; a refused program
            return None, self._call_host_python(args)
        return host, flat

    def _host_failed(self, err: Exception, args) -> Any:
        """A C++ dispatcher call raised `err`: the call made another way, or
        `err` again where it is the program's own error."""
        if isinstance(err, NotCompiled):  # a new dispatcher, as this one now
            self._host = None  # falls back to Python for that signature
            return self._call_host_python(args)
        if isinstance(err, NotNative):  # a buffer laid out unlike the parameter
            return self._call_host_python(args)
        if isinstance(err, ValueError):
            install_states(err)  # re-raises err unless JAX's states are missing
            return self._call_host(args)
        raise err

    def _refuse_host(self) -> None:
        """This function has a program the C++ dispatcher must not run."""
        self._host = False

    def _call_host_python(self, args) -> Any:
        """A call with NumPy arguments copied to the device here: a hit runs
        its Compiled, the rest (and a deleted Array) goes to the slow path."""
        avals = tuple([a.aval if type(a) is Array else _ndarray_aval(a) for a in args])
        entry = self._compiled_for(avals)
        if entry is not None:
            buffers = [
                a._buf if type(a) is Array else _host_buffer(a, aval)
                for a, aval in zip(args, avals)
            ]
            try:
                return entry.run_buffers(buffers)
            except TypeError:  # a deleted Array: the slow path raises the error
                pass
        return self._call_slow(args, {})

    def _call_slow(self, args, kwargs):
        if refs.made[0] and refs.intercepts(self):  # Refs among args or closed over
            return refs.call_jit(self, args, kwargs)
        if config.read("olympus_disable_jit"):
            return self.fun(*args, **kwargs)
        call = split_call(
            self.fun, self.name, args, kwargs, self.static_argnums, self.static_argnames
        )
        if _state.trace is not _eval_trace:
            return self._bind_in_trace(call)
        entry = self._cache.get(call.key)
        if entry is None and call.key[-1] is None and self._tiers_on():
            # (key[-1]: arguments laid out on other devices, which the
            # interpreter's one-device results would not keep)
            result = self._call_tiered(call)
            if result is not _MISS:
                return result
            entry = self._cache.get(call.key)
        if entry is None:
            entry = self._compile(call)
        debug_nans = config.read("olympus_debug_nans")
        if not (debug_nans or entry.sharded or self.donate_argnums):
            self._remember_fast(args, kwargs, call, entry)
        result = _placed(entry.run(call.leaves), entry.traced)
        if debug_nans:
            self._find_nans(result, entry, call)
        if entry.donated:
            entry.donate(call.leaves)
        return result

    def _compile(self, call: Call) -> Compiled:
        """Traces, lowers and compiles one signature, once even when threads
        miss together."""
        with self._compile_lock:
            entry = self._cache.get(call.key)
            if entry is None:
                explain_miss(self.name, call, [*self._cache, *self._pending])
                entry = (
                    trace_call(
                        call,
                        self.name,
                        self.donate_argnums,
                        self.in_shardings,
                        self.out_shardings,
                    )
                    .lower()
                    .compile()
                )
                self._cache[call.key] = entry
        return entry

    def _tiers_on(self) -> bool:
        """Whether a miss may interpret: tiered, no donation (the interpreter
        cannot reuse buffers), no shardings (it runs on one device), no NaN
        checking (it checks compiled results)."""
        tiered = self.tiered
        if tiered is None:
            tiered = config.read("olympus_tiered_execution")
        return (
            tiered
            and not self.donate_argnums
            and self.in_shardings is None
            and self.out_shardings is None
            and not config.read("olympus_debug_nans")
        )

    def _call_tiered(self, call: Call) -> Any:
        """A miss of a tiered jit: the interpreted result while the signature
        compiles in the background; `_MISS` once the Compiled is in the cache
        (ready now, or compiled synchronously: a program the interpreter must
        not run, or whose background compile failed before)."""
        with self._compile_lock:
            if call.key in self._cache:
                return _MISS
            pending = self._pending.get(call.key)
            if pending is None:
                if call.key in self._untiered:
                    return _MISS
                pending = self._start_tiers(call)
                if pending is None:
                    return _MISS
            elif pending.done.is_set():
                if pending.error is not None:
                    del self._pending[call.key]
                    self._untiered[call.key] = True
                    logger.info(
                        "jit(%s): the background compile failed; raising its "
                        "error (later calls compile synchronously)",
                        self.name,
                    )
                    pending.error.add_note(
                        f"(raised by the background compile of jit({self.name}), "
                        f"tiered execution, started by the call at {pending.origin})"
                    )
                    raise pending.error
                self._install(call.key, pending)
                return _MISS
        try:
            outs = interpret(pending.program, call.leaves)
        except Exception as err:  # the interpreter's limits: wait for the compiler
            logger.info(
                "jit(%s): the interpreter failed (%s: %s); waiting for the "
                "background compile",
                self.name,
                type(err).__name__,
                err,
            )
            pending.start()
            pending.done.wait()
            return self._call_tiered(call)
        # Started after the first interpretation: on a machine with few cores
        # the compiler's threads slow the first result (benchmarks/README.md).
        pending.start()
        logger.debug(
            "jit(%s): ran interpreted (NumPy); XLA compiles in the background",
            self.name,
        )
        return _placed(tree_unflatten(pending.traced.out_tree, outs), pending.traced)

    def _start_tiers(self, call: Call) -> BackgroundCompile | None:
        """Traces a new signature and starts its background compile; None when
        the interpreter must not run it (then it is compiled and cached now)."""
        explain_miss(self.name, call, [*self._cache, *self._pending])
        prefault_like(call.leaves)
        traced = trace_call(call, self.name)
        program = optimized(traced.olympuspr)
        check_array_sizes(program.olympuspr, self.name)  # before NumPy allocates them
        reason = not_interpretable(program)
        if reason is not None:
            logger.info(
                "jit(%s): not interpreted: %s; compiling now", self.name, reason
            )
            self._untiered[call.key] = True
            self._cache[call.key] = traced.lower(program).compile()
            return None
        logger.info(
            "jit(%s): new signature: interpreting while XLA compiles in the background",
            self.name,
        )
        pending = BackgroundCompile(
            traced, program, weak_callback(self._compiled, call.key)
        )
        pending.origin = user_source_info()  # named if its compile fails
        self._pending[call.key] = pending
        return pending

    def _compiled(self, key, pending: BackgroundCompile) -> None:
        """On the compile thread: a finished compile goes into the cache at
        once (a failed one waits in `_pending` for a call to raise it)."""
        if pending.error is None:
            with self._compile_lock:
                self._install(key, pending)

    def _install(self, key, pending: BackgroundCompile) -> None:
        if self._pending.get(key) is not pending:
            return  # installed already, or the caches were cleared
        logger.info(
            "jit(%s): compiled in the background in %.3f s; running the "
            "compiled executable from now on",
            self.name,
            pending.seconds,
        )
        del self._pending[key]
        self._cache[key] = pending.compiled

    def _find_nans(self, result, entry: Compiled, call: Call) -> None:
        """With olympus_debug_nans: a NaN output runs the traced program again,
        equation by equation (olympus/backends/stepping.py); the FloatingPointError
        names the first equation that made a NaN, its operands, the user's line,
        the loop iteration and whether it is in a backward pass."""
        if any(has_nan(leaf) for leaf in tree_flatten(result)[0]):
            raise_first_nan(entry.traced.olympuspr, call.leaves, f"jit({self.name})")

    def _remember_fast(self, args, kwargs, call: Call, entry: Compiled) -> None:
        """Makes later calls like this one (not donating, no NaN checks, one
        device) `__call__` or `_call_tree` hits, where they can be: not
        under `set_mesh`, whose results go onto the mesh."""
        if placement_mesh[0] is not None:
            return
        found = None if kwargs else _fast_key(args, call.dyn_argnums)
        found = found or _plain_key_for(args, kwargs, call)
        key, scalars = found or (_tree_key(args, kwargs, call), ())
        if key is None or (scalars and not self._seen_before(key)):
            return
        hit = _fast_entry(entry, scalars)
        if hit is None:
            return
        with self._lock:
            if self._epoch != _config_epoch or len(self._fast) >= JIT_CACHE_SIZE:
                self._fast.clear()  # a new epoch, or bounded like the slow cache
                self._host = None
                self._epoch = _config_epoch
            self._fast[key] = hit

    def _seen_before(self, key: tuple) -> bool:
        """Whether a call with this key (holding Python scalars' values) came
        before: only a value seen twice gets its buffers made and a `_fast`
        entry, so that a loop passing a new value on every call does not pay
        for entries it never hits."""
        seen = self._scalar_keys  # no lock: a lost mark only delays an entry
        if seen.pop(key, None) is not None:
            return True
        if len(seen) >= JIT_CACHE_SIZE:
            seen.clear()
        seen[key] = True
        return False

    def _bind_in_trace(self, call: Call):
        # Named axes bound by an enclosing vmap/shard_map (olympus/tracer/axes.py)
        # are part of what the body traces to.
        key = (call.key, axes_env.signature())
        entry = self._traced.get(key)
        if entry is None:
            explain_miss(self.name, call, [k for k, _ in self._traced])
            traced = trace_call(
                call,
                self.name,
                in_shardings=self.in_shardings,
                out_shardings=self.out_shardings,
            )
            closed = traced.olympuspr
            # One body object per signature, so transforms and the pjit
            # executable cache (keyed by the body) hit on later calls.
            entry = (traced, ClosedOlympuspr(consts_as_invars(closed.olympuspr), []))
            if not any(isinstance(c, Tracer) for c in closed.consts):
                self._traced[key] = entry
        traced, body = entry
        leaves = _constrained(call.leaves, traced.in_shardings)
        outs = pjit_p.bind(
            *traced.olympuspr.consts, *leaves, olympuspr=body, name=self.name
        )
        return tree_unflatten(traced.out_tree, _constrained(outs, traced.out_shardings))

    def trace(self, *args, **kwargs) -> Traced:
        """Traces for these arguments (arrays or ShapeDtypeStructs): a `Traced`
        stage with `.olympuspr`, `.lower()` and then `.compile()` (olympus.stages).
        A ShapeDtypeStruct of a key dtype stands for a key array, and one
        with a NamedSharding for an array laid out so, as in JAX."""
        return self._trace_staged(args, kwargs)[0]

    def _trace_staged(self, args, kwargs) -> tuple[Traced, Call]:
        args, kwargs = laid_out_structs(keys_from_structs((args, kwargs)))
        call = split_call(
            self.fun, self.name, args, kwargs, self.static_argnums, self.static_argnames
        )
        traced = trace_call(
            call, self.name, self.donate_argnums, self.in_shardings, self.out_shardings
        )
        return traced, call

    def lower(self, *args, **kwargs):
        """`trace(*args, **kwargs).lower()`: the StableHLO stage. Its
        `compile()` shares this function's executables with its calls, as
        JAX's compile cache: a compile after a call of the same signature
        (or a call after a compile) compiles nothing again."""
        traced, call = self._trace_staged(args, kwargs)
        lowered = traced.lower()
        lowered.shared_executables = (self._cache, call.key)
        return lowered

    def lower_text(self, *args, **kwargs) -> str:
        """The StableHLO text this function compiles to for these arguments."""
        return self.lower(*args, **kwargs).as_text(generic=True)

    def clear_cache(self) -> None:
        with self._lock:
            self._fast.clear()
            self._scalar_keys.clear()
            self._host = None
        self._cache.clear()
        self._traced.clear()
        with self._compile_lock:
            self._pending.clear()
            self._untiered.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


_probe = np.zeros((2, 3), np.float32)
configure_jit(
    JitFunction,
    globals(),
    _state,
    _eval_trace,
    np.ndarray,
    staging_like,
    (_probe, _probe.T),
)


def _placed(result, traced: Traced):
    """A jit result where JAX puts it: under `set_mesh` a one-device one goes
    onto the mesh, unsplit (`P(None, ...)` where its type names the mesh,
    else `P()`: `Traced.meshless_outputs`); one laid out over devices, or
    any without a mesh, stays as it is."""
    if placement_mesh[0] is None:
        return result
    leaves, tree = tree_flatten(result)
    meshless = traced.meshless_outputs()
    if len(meshless) != len(leaves):  # (a key leaf holds its words): all typed
        meshless = [False] * len(leaves)
    placed = [onto_mesh_in_scope(v, not m) for v, m in zip(leaves, meshless)]
    return tree_unflatten(tree, placed)


def _constrained(values: list, shardings: list) -> list:
    """jit's in/out_shardings inside another trace: sharding constraints."""
    return [
        constrain(v, s) if isinstance(s, NamedSharding) else v
        for v, s in zip(values, shardings)
    ]


class DonateArgnamesError(ValueError):
    """donate_argnames naming no positional parameter of the jitted function."""


def _donated_args(fun, donate_argnums, donate_argnames) -> tuple:
    """donate_argnums completed from donate_argnames (the positional
    parameters they name), as JAX does."""
    nums = set(normalize_argnums(donate_argnums))
    names = (donate_argnames,) if isinstance(donate_argnames, str) else donate_argnames
    if not names:
        return tuple(sorted(nums))
    positional = positional_names(fun) or ()
    for name in names:
        if name not in positional:
            raise DonateArgnamesError(
                f"jit of {function_name(fun)}: donate_argnames names {name!r}, which "
                f"is not one of its positional parameters {tuple(positional)}; pass "
                f"donate_argnums= or a parameter's name"
            )
        nums.add(positional.index(name))
    return tuple(sorted(nums))


def _static_args(fun, static_argnums, static_argnames) -> tuple[tuple, tuple]:
    """Completes static_argnums from static_argnames and vice versa, as JAX does."""
    nums = set(normalize_argnums(static_argnums))
    names = (
        {static_argnames}
        if isinstance(static_argnames, str)
        else set(static_argnames or ())
    )
    positional = positional_names(fun)
    if positional is None:
        return tuple(sorted(nums)), tuple(sorted(names))
    for i, name in enumerate(positional):
        if name in names:
            nums.add(i)
        if i in nums or (i - len(positional)) in nums:
            names.add(name)
    return tuple(sorted(nums)), tuple(sorted(names))
