"""The user-facing entry points for tracing and running: jit, make_olympuspr,
device_put, block_until_ready, disable_jit."""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from olympus import caches, config
from olympus.caches import JIT_CACHE_SIZE, BoundedCache
from olympus.ir.core import ClosedOlympuspr, ShapedArray
from olympus.backends.interpreted import interpret, not_interpretable, prefault_like
from olympus.backends.stepping import has_nan, raise_first_nan
from olympus.backends.xla import client
from olympus.backends.xla.array import Array, put, to_device
from olympus.backends.xla.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    flat_shardings,
)
from olympus.backends.xla import dispatch_native
from olympus.backends.xla.dispatch import check_array_sizes
from olympus.backends.xla.dispatch_native import (
    NOT_TAKEN,
    NotCompiled,
    NotNative,
    host_dispatcher,
    install_states,
)
from olympus.lax.pjit import pjit_p
from olympus.lax import ops as lax_ops
from olympus.lax.parallel import shard_map
from olympus.lax.sharding import with_sharding_constraint
from olympus.stages import (
    BackgroundCompile,
    Call,
    Compiled,
    Traced,
    argument_positions,
    explain_miss,
    optimized,
    split_call,
    trace_call,
    weak_callback,
)
from olympus.tracer import axes as axes_env
from olympus.tracer import core
from olympus.tracer.core import Tracer, aval_of, user_source_info
from olympus.tracer.functions import (
    ShapeDtypeStruct,
    argnums_partial,
    dynamic_argnums,
    positional_names,
    trace_pytree_function,
)
from olympus.tracer.pytree import tree_flatten, tree_map, tree_unflatten
from olympus.tracer.staging import consts_as_invars, function_name
from olympus.tracer.tracebacks import api_boundary, filter_exception

logger = logging.getLogger("olympus")


def make_olympuspr(
    fun: Callable,
    static_argnums: int | Sequence[int] = (),
    return_shape: bool = False,
    optimize: bool = False,
):
    """Returns a function that traces `fun` and gives its intermediate program.

    For inspecting what a function computes: the ClosedOlympuspr printed is
    what jit compiles (before the optimizer, unless `optimize=True`).

    Args:
      fun: the function to trace.
      static_argnums: positional arguments treated as Python constants (not
        traced), as jit's.
      return_shape: if True, also return the outputs' ShapeDtypeStructs.
      optimize: if True, give the program after the optimizer's passes.

    Returns:
      A function taking `fun`'s arguments and returning the ClosedOlympuspr,
      or `(closed_olympuspr, shapes)` with return_shape.

    Raises:
      ConcretizationTypeError: `fun` uses a traced value where Python needs a
        concrete one (mark the argument static).

    Example:
      >>> print(olympus.make_olympuspr(lambda x: x * 2.0)(1.0))
      { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
      >>> print(olympus.make_olympuspr(lambda x: (x * 1.0) * (x * 1.0), optimize=True)(1.0))
      { lambda ; a:f32[]. let
          b:f32[] = mul a a
        in (b,) }
    """
    static = _normalize_argnums(static_argnums)

    @functools.wraps(fun)
    @api_boundary
    def traced(*args, **kwargs):
        dyn_fun, dyn_args = argnums_partial(
            fun, dynamic_argnums(len(args), static), args
        )
        closed, _, out_tree = trace_pytree_function(
            dyn_fun, dyn_args, kwargs, "make_olympuspr"
        )
        if optimize:
            closed = optimized(closed)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
            return closed, tree_unflatten(out_tree, shapes)
        return closed

    return traced


def eval_shape(fun: Callable, *args, **kwargs):
    """Gives the shapes and dtypes `fun(*args, **kwargs)` would return.

    Found by tracing alone: nothing is computed and no array is allocated,
    so it is cheap for planning memory or building parameters.

    Args:
      fun: the function to trace.
      *args: positional arguments; leaves may be arrays, Python scalars,
        ShapeDtypeStructs, or any objects with `.shape` and `.dtype`.
      **kwargs: keyword arguments, likewise.

    Returns:
      A pytree of ShapeDtypeStruct with the output's structure.

    Raises:
      ConcretizationTypeError: `fun` needs a concrete value from an argument.

    Example:
      >>> olympus.eval_shape(lambda x, y: x @ y, olympus.ShapeDtypeStruct((3, 4), jnp.float32),
      ...                    olympus.ShapeDtypeStruct((4, 5), jnp.float32))
      ShapeDtypeStruct(shape=(3, 5), dtype=float32)
      >>> olympus.eval_shape(lambda x: {"twice": x * 2}, 1.0)
      {'twice': ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)}
    """
    leaves, tree = tree_flatten((args, kwargs))
    args, kwargs = tree_unflatten(tree, [_abstract_leaf(x) for x in leaves])
    given: dict = {}  # output position -> a ShapeDtypeStruct `fun` returned

    def traced(*args, **kwargs):
        # As JAX, `fun` may return ShapeDtypeStructs: they are their own shapes
        # (lineax's eval_shape(lambda: struct)); the rest is traced.
        out_leaves, given["tree"] = tree_flatten(fun(*args, **kwargs))
        given.update((i, x) for i, x in enumerate(out_leaves) if _is_struct(x))
        return [x for i, x in enumerate(out_leaves) if i not in given]

    closed, _, _ = trace_pytree_function(traced, args, kwargs, "eval_shape")
    traced_out = iter(closed.out_avals)
    out_tree = given.pop("tree")
    return tree_unflatten(
        out_tree,
        [
            given[i] if i in given else _struct_of(next(traced_out))
            for i in range(out_tree.num_leaves)
        ],
    )


def _is_struct(x) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def _struct_of(aval: ShapedArray) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(aval.shape, aval.dtype, aval.weak_type)


def _abstract_leaf(x):
    """`x` as tracing sees it: objects that are only a shape and a dtype
    (another library's ShapeDtypeStruct, say) become ours."""
    if hasattr(x, "aval") or not (hasattr(x, "shape") and hasattr(x, "dtype")):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return x
    return ShapeDtypeStruct(x.shape, x.dtype, bool(getattr(x, "weak_type", False)))


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """Returns `fun` whose equations carry the name scope `name`.

    Names show up in printed programs (`pretty(source_info=True)`) and in
    XLA's `op_name` metadata, so profiles show which part of a model an op
    came from. Values are unchanged.

    Args:
      fun: the function to name.
      name: the scope name; None uses `fun.__name__`.

    Returns:
      A function with `fun`'s signature and outputs.

    Raises:
      Nothing: when wrapping; calling the result raises what `fun` raises.

    Example:
      >>> scaled = olympus.named_call(lambda x: x * 2.0, name="scale")
      >>> closed = olympus.make_olympuspr(scaled)(1.0)
      >>> closed.olympuspr.eqns[0].source_info.scope
      'scale'
    """
    scope = name if name is not None else getattr(fun, "__name__", function_name(fun))

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with core.named_scope(scope):
            return fun(*args, **kwargs)

    return named


def typeof(x) -> ShapedArray:
    """The abstract value tracing gives `x`: its shape, dtype and weak type.

    Useful to see how olympus will type a value before calling a function.

    Args:
      x: an array, a tracer or a Python scalar.

    Returns:
      A ShapedArray.

    Raises:
      TypeError: `x` is not array-like.

    Example:
      >>> olympus.typeof(jnp.ones((2, 3)))
      ShapedArray(f32[2,3])
    """
    from olympus.prng import PRNGKeyArray

    if isinstance(x, PRNGKeyArray):
        return KeyArrayType(x.shape, x.dtype)
    return aval_of(x)


class KeyArrayType(NamedTuple):
    """`typeof` of a typed PRNG key array, `key<fry>[2]` as JAX prints it.
    olympus's key arrays are pytrees of their uint32 words, so their type is
    this description rather than an IR aval."""

    shape: tuple
    dtype: Any
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def str_short(self) -> str:
        return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"

    __str__ = str_short

    def __repr__(self) -> str:
        return f"ShapedArray({self.str_short()})"


def default_backend() -> str:
    """The name of the platform olympus runs on.

    Returns:
      "cpu", or the platform name of a loaded PjRt plugin (e.g. "gpu").

    Raises:
      Nothing: the backend is chosen when olympus starts.

    Example:
      >>> olympus.default_backend() in ("cpu", "gpu", "cuda", "tpu")
      True
    """
    return client.get_client().platform


def enable_x64(new_val: bool = True):
    """A context in which 64-bit dtypes are on.

    Inside the block, float64/int64 arrays are kept as such and Python
    scalars default to them; outside, they are narrowed to 32 bits. Sets the
    option `olympus_enable_x64` and restores it after.

    Args:
      new_val: True to enable 64-bit types in the block, False to disable.

    Returns:
      A context manager.

    Raises:
      Nothing: of its own; the option is restored even when the block raises.

    Example:
      >>> with olympus.enable_x64():
      ...     print(jnp.arange(2.0).dtype)
      float64
    """
    return config.override("olympus_enable_x64", bool(new_val))


def debug_nans(new_val: bool = True):
    """A context in which a NaN produced by any operation raises.

    For finding where NaNs appear: inside the block (option
    `olympus_debug_nans`), each primitive's output is checked and the first
    NaN raises, naming the primitive and the user's line.

    Args:
      new_val: True to check for NaNs in the block, False to stop checking.

    Returns:
      A context manager.

    Raises:
      FloatingPointError: an operation inside the block produced a NaN.

    Example:
      >>> with olympus.debug_nans():
      ...     jnp.log(-1.0)
      Traceback (most recent call last):
      ...
      FloatingPointError: ...
    """
    return config.override("olympus_debug_nans", bool(new_val))


def _normalize_argnums(argnums) -> tuple:
    if argnums is None:
        return ()
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


# ---- jit ---------------------------------------------------------------------
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
_ndarray_avals: dict = caches.register("ndarray avals", {})  # (shape, dtype) -> aval
_host_dtypes: dict = caches.register("ndarray dtypes", {})  # dtype -> _host_dtype
# the dtypes _host_dtype found True: a set test is the cheapest on every call
_plain_host_dtypes: set = caches.register("ndarray plain dtypes", set())
_ndarray = np.ndarray  # a global read, not np's attribute, on every call
_MISS = object()
_FAST_ARG_TYPES = (Array, np.ndarray)  # exact types whose calls can take the fast path
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


def _fast_entry(entry: Compiled) -> tuple:
    """What `JitFunction._fast` keeps for a signature: (Compiled, execute,
    result handlers, output aval, constant buffers), execute None where the
    call goes through `Compiled.run_buffers` (several outputs, ordered
    effects, pure callbacks); the rest runs the executable in `__call__` itself."""
    exe = entry.executable
    if entry.single_out and not exe.waits:
        execute = exe.loaded.execute_sharded
        return entry, execute, exe._handlers, exe.out_avals[0], entry.const_bufs
    return entry, None, None, None, entry.const_bufs


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


class JitFunction:
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
        # No static or donated arguments: calls may take the fast path.
        self._simple = not (
            self.static_argnums or self.static_argnames or self.donate_argnums
        )
        # avals of positional Array/ndarray args -> _fast_entry(Compiled)
        self._fast: dict = {}
        # jaxlib's C++ dispatcher for calls with NumPy arguments (made on the
        # first), or False where this function has a program it must not run
        self._host = None
        # The config epoch _fast was filled in; never current for a function
        # with static or donated arguments, which no call finds in _fast.
        self._epoch = _config_epoch if self._simple else -1
        # Static arguments, no donation, calls without keywords: (number of
        # args, static values, avals of the Array args) -> the same entries as
        # _fast, in `_static_epoch`; None for other functions.
        self._static_fast: dict | None = (
            {} if self.static_argnums and not self.donate_argnums else None
        )
        self._static_epoch = _config_epoch
        self._static_positions: dict = {}  # number of args -> (dynamic, static)
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

    def __call__(self, *args, **kwargs):
        # A cache hit for positional Array arguments, or for NumPy arrays
        # (with Arrays) through the C++ dispatcher, runs here, in as little
        # Python as possible (jit dispatch latency is measured); the rest goes
        # to `_call_host` / `_call_slow`. A function with static or donated
        # arguments never has a current `_epoch` (see __init__).
        try:
            if (
                kwargs
                or self._epoch != _config_epoch
                or _state.trace is not _eval_trace
            ):
                if self._static_fast is not None and not kwargs:
                    return self._call_static(args)
                return self._call_slow(args, kwargs)
            if not args or type(args[0]) is not _ndarray:  # NumPy: skip to host
                avals, buffers = [], []
                for a in args:
                    if type(a) is not Array:
                        break
                    avals.append(a.aval)
                    buffers.append(a._buf)
                else:
                    hit = self._fast.get(tuple(avals))
                    if hit is None:
                        return self._call_slow(args, kwargs)
                    entry, execute, handlers, aval, consts = hit
                    try:
                        if execute is None:  # run_buffers adds the constants
                            return entry.run_buffers(buffers)
                        if consts:
                            buffers = consts + buffers
                        (out,) = execute(buffers).consume_with_handlers(handlers)
                    except TypeError:  # a deleted Array: the slow path raises the error
                        return self._call_slow(args, kwargs)
                    return Array(out, aval)
            host = self._host
            if host:  # NumPy arrays of their avals' dtypes and live Arrays
                flat = []
                for a in args:
                    if type(a) is _ndarray and a.dtype in _plain_host_dtypes:
                        flat.append(a.copy())  # a copy: the dispatcher may alias it
                    elif type(a) is Array and a._buf is not None:
                        flat.append(a._buf)
                    else:
                        break
                else:
                    try:
                        out = host(*flat)
                    except Exception as err:
                        out = self._host_failed(err, args)
                        return self._call_slow(args, kwargs) if out is _MISS else out
                    if type(out) is _JaxlibArray:  # the one output
                        return Array(out, out.aval)
                    if out is not NOT_TAKEN:
                        return out
            out = self._call_host(args)
            return self._call_slow(args, kwargs) if out is _MISS else out
        except Exception as error:  # the user's frames only (tracer/tracebacks.py)
            filter_exception(error)
            raise

    def _call_static(self, args: tuple) -> Any:
        """A call of a function with static positional arguments: a hit
        (these static values, compared as the slow path's key compares them,
        and Arrays of these avals) runs the executable here; the rest goes
        to `_call_slow`, which remembers hits (the static argument case of
        benchmarks/dispatch.py)."""
        if self._static_epoch != _config_epoch or _state.trace is not _eval_trace:
            return self._call_slow(args, {})
        positions = self._static_positions.get(len(args))
        if positions is None:
            return self._call_slow(args, {})
        dynamic, static = positions
        avals, buffers = [], []
        for i in dynamic:
            a = args[i]
            if type(a) is not Array:
                return self._call_slow(args, {})
            avals.append(a.aval)
            buffers.append(a._buf)
        try:
            hit = self._static_fast.get(
                (len(args), tuple([args[i] for i in static]), tuple(avals))
            )
        except TypeError:  # an unhashable static value: the slow path says so
            hit = None
        if hit is None:
            return self._call_slow(args, {})
        entry, execute, handlers, aval, consts = hit
        try:
            if execute is None:
                return entry.run_buffers(buffers)
            if consts:
                buffers = consts + buffers
            (out,) = execute(buffers).consume_with_handlers(handlers)
        except TypeError:  # a deleted Array: the slow path raises the error
            return self._call_slow(args, {})
        return Array(out, aval)

    def _remember_static(self, args: tuple, entry: Compiled) -> None:
        n = len(args)
        positions = self._static_positions.get(n)
        if positions is None:
            positions = self._static_positions[n] = argument_positions(
                n, self.static_argnums
            )
        dynamic, static = positions
        key = (
            n,
            tuple([args[i] for i in static]),
            tuple([args[i].aval for i in dynamic]),
        )
        with self._lock:
            if (
                self._static_epoch != _config_epoch
                or len(self._static_fast) >= JIT_CACHE_SIZE
            ):
                self._static_fast.clear()
                self._static_epoch = _config_epoch
            self._static_fast[key] = _fast_entry(entry)

    def _compiled_for(self, avals: tuple) -> Compiled | None:
        """The Compiled `_fast` has for these argument avals (the C++
        dispatcher's lookup)."""
        hit = self._fast.get(avals)
        return None if hit is None else hit[0]

    def _call_host(self, args) -> Any:
        """A call with NumPy arguments: through jaxlib's C++ dispatcher, which
        copies them to the device for a fraction of `host_to_device`'s cost
        (olympus/backends/xla/dispatch_native.py), where it may run; `_MISS`
        where the slow path must take it. `__call__` makes the common calls
        itself; this one also makes the dispatcher and converts dtypes.
        A signature not compiled yet goes to the slow path before anything
        is copied (the dispatcher would only ask `_compiled_for` and give up:
        two 4 MiB arguments' copies were 2-6 ms of such a first call)."""
        global _JaxlibArray
        avals = []
        for a in args:
            if type(a) is np.ndarray:
                avals.append(_ndarray_aval(a))
            elif type(a) is Array:
                avals.append(a.aval)
            else:
                return _MISS
        if self._compiled_for(tuple(avals)) is None:
            return _MISS
        host = self._host
        if host is None:
            host = self._host = host_dispatcher(self._compiled_for, self._refuse_host)
            _JaxlibArray = dispatch_native.JaxlibArray
        if host is False:
            return self._call_host_python(args)
        flat = []
        for a in args:
            if type(a) is np.ndarray:
                how = _host_dtypes.get(a.dtype, _MISS)
                if how is _MISS:
                    how = _host_dtype(a)
                # A copy either way: the dispatcher may alias the array.
                if how is True:
                    flat.append(a.copy())
                elif how is None:  # 64 bits: the dispatcher would narrow it
                    return self._call_host_python(args)
                else:
                    flat.append(a.astype(how))
            elif type(a) is Array and a._buf is not None:
                flat.append(a._buf)
            else:  # a deleted or sharded Array, another type: the slow path
                return _MISS
        try:
            out = host(*flat)
        except Exception as err:
            return self._host_failed(err, args)
        if type(out) is _JaxlibArray:  # the one output
            return Array(out, out.aval)
        return self._call_host_python(args) if out is NOT_TAKEN else out

    def _host_failed(self, err: Exception, args) -> Any:
        """A C++ dispatcher call raised `err`: the call made another way (or
        `_MISS`), or `err` again where it is the program's own error."""
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
        """A hit with NumPy arguments, copied to the device here; `_MISS` else."""
        avals = tuple([a.aval if type(a) is Array else _ndarray_aval(a) for a in args])
        entry = self._compiled_for(avals)
        if entry is None:
            return _MISS
        buffers = [
            a._buf if type(a) is Array else _host_buffer(a, aval)
            for a, aval in zip(args, avals)
        ]
        try:
            return entry.run_buffers(buffers)
        except TypeError:  # a deleted Array: the slow path raises the error
            return _MISS

    def _call_slow(self, args, kwargs):
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
        if (
            self._simple
            and not kwargs
            and not debug_nans
            and not entry.sharded
            and all([type(a) in _FAST_ARG_TYPES for a in args])
        ):
            # Keyed by the aval objects `__call__` builds (NumPy arguments'
            # come from _ndarray_avals), so its lookups compare by identity.
            self._remember_fast(
                tuple([a.aval if type(a) is Array else _ndarray_aval(a) for a in args]),
                entry,
            )
        elif (
            self._static_fast is not None
            and not kwargs
            and not debug_nans
            and not entry.sharded
            and all([type(args[i]) is Array for i in call.dyn_argnums])
        ):
            self._remember_static(args, entry)
        result = entry.run(call.leaves)
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
        return tree_unflatten(pending.traced.out_tree, outs)

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

    def _remember_fast(self, avals: tuple, entry: Compiled) -> None:
        with self._lock:
            if self._epoch != _config_epoch or len(self._fast) >= JIT_CACHE_SIZE:
                self._fast.clear()  # a new epoch, or bounded like the slow cache
                self._host = None
                self._epoch = _config_epoch
            self._fast[avals] = _fast_entry(entry)

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
        stage with `.olympuspr`, `.lower()` and then `.compile()` (olympus.stages)."""
        call = split_call(
            self.fun, self.name, args, kwargs, self.static_argnums, self.static_argnames
        )
        return trace_call(
            call, self.name, self.donate_argnums, self.in_shardings, self.out_shardings
        )

    def lower(self, *args, **kwargs):
        """`trace(*args, **kwargs).lower()`: the StableHLO stage."""
        return self.trace(*args, **kwargs).lower()

    def lower_text(self, *args, **kwargs) -> str:
        """The StableHLO text this function compiles to for these arguments."""
        return self.lower(*args, **kwargs).as_text(generic=True)

    def clear_cache(self) -> None:
        with self._lock:
            self._fast.clear()
            self._host = None
            if self._static_fast is not None:
                self._static_fast.clear()
        self._cache.clear()
        self._traced.clear()
        with self._compile_lock:
            self._pending.clear()
            self._untiered.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def _constrained(values: list, shardings: list) -> list:
    """jit's in/out_shardings inside another trace: sharding constraints."""
    return [
        with_sharding_constraint(v, s) if isinstance(s, NamedSharding) else v
        for v, s in zip(values, shardings)
    ]


class DonateArgnamesError(ValueError):
    """donate_argnames naming no positional parameter of the jitted function."""


def _donated_args(fun, donate_argnums, donate_argnames) -> tuple:
    """donate_argnums completed from donate_argnames (the positional
    parameters they name), as JAX does."""
    nums = set(_normalize_argnums(donate_argnums))
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
    nums = set(_normalize_argnums(static_argnums))
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


def jit(
    fun: Callable | None = None,
    *,
    in_shardings=None,
    out_shardings=None,
    static_argnums=(),
    static_argnames=(),
    donate_argnums=(),
    donate_argnames=(),
    keep_unused: bool = False,
    device=None,
    backend: str | None = None,
    inline: bool = False,
    compiler_options: dict | None = None,
    tiered: bool | None = None,
):
    """Returns a version of `fun` that is traced once and compiled with XLA.

    The first call for a new signature (argument shapes, dtypes, weak types,
    static values, and layouts of arguments placed over several devices)
    traces `fun` into a program and compiles it; later calls with the same
    signature reuse the executable. Inside, arguments are abstract tracers:
    Python control flow may not branch on their values (use lax.cond,
    lax.while_loop, or mark the argument static).

    `tiered=True` (None: the olympus_tiered_execution option, off by default)
    returns the first call of a new signature without waiting for XLA: the
    traced program is interpreted with NumPy while XLA compiles on a
    background thread, and later calls switch to the executable once it is
    ready. It helps where time to the first result matters; results agree
    with the compiled program to float tolerance. Programs with ordered
    effects (debug.print, callbacks), donated arguments or olympus_debug_nans
    on compile directly. The logger "olympus" says which tier ran.

    Args:
      fun: the function to compile; it takes and returns pytrees of arrays.
        Without it, jit returns a decorator taking these options.
      in_shardings: a Sharding, or a pytree prefix of the positional
        (non-static) arguments of Shardings: how inputs are laid out over a
        mesh. None leaves each argument's own layout.
      out_shardings: likewise for the outputs; None lets XLA choose.
      static_argnums: an int or ints: positional arguments passed as Python
        values, not traced. They must be hashable; each new value retraces
        and recompiles, and the body may use them in Python control flow.
      static_argnames: the same, for arguments named by keyword.
      donate_argnums: an int or ints: positional arguments whose buffers the
        executable may reuse for outputs. A donated Array must not be used
        after the call (it is deleted), saving memory for in-place updates.
      donate_argnames: the same, by keyword.
      keep_unused: taken for JAX's signature; changes no result.
      device: must be the default device (place arguments with device_put
        or in_shardings instead).
      backend: must be olympus's platform name, or None.
      inline: taken for JAX's signature; changes no result.
      compiler_options: must be empty or None.
      tiered: interpret the first calls while compiling (see above).

    Returns:
      A callable with `fun`'s signature returning `fun`'s outputs as Arrays.
      It also has `.lower(*args)` (then `.compile()`) and `.trace(*args)`
      for ahead-of-time use.

    Raises:
      ConcretizationTypeError: `fun` converts a traced argument to a Python
        value (TracerBoolConversionError for `if x:`,
        TracerIntegerConversionError for `int(x)`); mark it static.
      ValueError: a static argument is not hashable (pass a tuple, not a
        list or array), or an option names an argument `fun` does not have.
      UnexpectedTracerError: a tracer leaked out of the traced function
        (e.g. stored in a global) is used later.

    Example:
      >>> f = olympus.jit(lambda x: x * 2.0)
      >>> f(np.ones(3))
      Array([2., 2., 2.], dtype=float32)
      >>> power = olympus.jit(lambda x, n: x ** n, static_argnums=1)
      >>> power(jnp.arange(3.0), 2)  # n is a Python int; each n compiles once
      Array([0., 1., 4.], dtype=float32)
      >>> g = olympus.jit(lambda x: x * 2.0, tiered=True)
      >>> g(np.ones(3))  # interpreted: no compile waited for
      Array([2., 2., 2.], dtype=float32)
    """
    _check_jit_placement(device, backend, in_shardings, out_shardings, compiler_options)
    if fun is None:
        return lambda f: jit(
            f,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            keep_unused=keep_unused,
            device=device,
            backend=backend,
            inline=inline,
            compiler_options=compiler_options,
            tiered=tiered,
        )
    return JitFunction(
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        in_shardings,
        out_shardings,
        tiered,
        donate_argnames,
    )


class JitPlacementError(ValueError):
    """jit's device=/backend=/compiler_options= ask for what olympus cannot do."""


def _check_jit_placement(device, backend, in_shardings, out_shardings, options):
    client._check_backend(backend)
    if device is not None and backend is not None:
        raise JitPlacementError(
            f"can't specify both a device and a backend for jit, got "
            f"device={device} and backend={backend!r}; pass one"
        )
    if device is not None:
        if in_shardings is not None or out_shardings is not None:
            raise JitPlacementError(
                "jit: pass device= or in_shardings/out_shardings, not both"
            )
        if device != client.devices()[0]:
            raise JitPlacementError(
                f"jit(device={device}): olympus compiles for the default device "
                f"{client.devices()[0]}; put the arguments on {device} with "
                "olympus.device_put or give in_shardings/out_shardings"
            )
    if options:
        raise JitPlacementError(
            f"jit(compiler_options={options!r}): olympus takes no XLA compiler "
            "options per function; set them with the XLA_FLAGS environment variable"
        )


# ---- pmap ----------------------------------------------------------------------------
class PmapDeviceCountError(ValueError):
    """pmap over an axis longer than there are devices."""


class PmapAxesError(ValueError):
    """pmap's `in_axes` do not fit its arguments (count, range, or sizes)."""


def _at_user_line() -> str:
    where = core.user_source_info()
    return f" (at {where})" if where is not None else ""


def pmap(
    fun: Callable, axis_name: str | None = None, *, in_axes=0, out_axes=0, devices=None
):
    """Returns `fun` run in parallel, one device per index of the mapped axis.

    It is `shard_map` over a one-axis mesh named `axis_name`, compiled, so
    collectives inside (`lax.psum(x, axis_name)`) reduce across devices.
    Prefer jit with shardings or shard_map in new code.

    Args:
      fun: the function run per device.
      axis_name: the name of the mapped axis, for collectives.
      in_axes: an int or None for all positional arguments, or one per
        argument: the axis mapped over devices.
      out_axes: where the mapped axis goes in the outputs.
      devices: the devices to use (default: the first ones).

    Returns:
      A function returning `fun`'s outputs stacked along `out_axes`.

    Raises:
      ValueError: the mapped axis is larger than the number of devices, or
        arguments disagree on its size.

    Example:
      >>> olympus.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.ones((1, 3)))
      Array([[1., 1., 1.]], dtype=float32)
    """
    name = function_name(fun)
    axis = axis_name if axis_name is not None else f"pmap_{id(fun)}"
    compiled: dict = {}  # (size, in_axes, devices) -> jitted shard_map

    def mapped(*args):
        spec = (
            tuple(in_axes)
            if isinstance(in_axes, (tuple, list))
            else (in_axes,) * len(args)
        )
        if len(spec) != len(args):
            raise PmapAxesError(
                f"pmap of {name}: in_axes {in_axes!r} has {len(spec)} entries "
                f"for {len(args)} arguments{_at_user_line()}"
            )
        for i, (a, ax) in enumerate(zip(args, spec)):
            for leaf in tree_flatten(a)[0] if ax is not None else ():
                if not -np.ndim(leaf) <= ax < np.ndim(leaf):
                    raise PmapAxesError(
                        f"pmap of {name}: in_axes {ax} is out of range for args[{i}] "
                        f"of shape {np.shape(leaf)}{_at_user_line()}"
                    )
        spec = tuple(
            None if ax is None else ax % np.ndim(tree_flatten(a)[0][0])
            for a, ax in zip(args, spec)
        )
        sizes = {
            np.shape(leaf)[ax]
            for a, ax in zip(args, spec)
            if ax is not None
            for leaf in tree_flatten(a)[0]
        }
        if len(sizes) != 1:
            raise PmapAxesError(
                f"pmap of {name}: the mapped axes have sizes {sorted(sizes)}; "
                f"pmap needs one size{_at_user_line()}"
            )
        (size,) = sizes
        available = (
            tuple(devices) if devices is not None else tuple(client.local_devices())
        )
        if size > len(available):
            raise PmapDeviceCountError(
                f"pmap of {name}: the mapped axis has size {size} but there are only "
                f"{len(available)} devices (olympus_num_cpu_devices / "
                f"OLYMPUS_NUM_CPU_DEVICES){_at_user_line()}"
            )
        key = (size, spec, available[:size])
        if key not in compiled:
            compiled[key] = _pmapped(fun, axis, spec, available[:size], out_axes)
        return compiled[key](*args)

    mapped.__name__ = f"pmap({name})"
    return mapped


def _pmapped(fun, axis: str, spec: tuple, devices: tuple, out_axes: int):
    """The jitted shard_map one pmap call signature runs."""
    mesh = Mesh(np.asarray(devices, dtype=object).reshape(len(devices)), (axis,))

    def per_device(*local):
        local = [
            tree_map(lambda v: lax_ops.squeeze(v, (0,)), a) if ax is not None else a
            for a, ax in zip(local, spec)
        ]
        return tree_map(lambda v: lax_ops.expand_dims(v, (0,)), fun(*local))

    specs = tuple(
        PartitionSpec(axis) if ax is not None else PartitionSpec() for ax in spec
    )
    body = shard_map(per_device, mesh, specs, PartitionSpec(axis))

    def run(*args):
        front = [
            a if ax is None else tree_map(lambda v: _move_axis(v, ax, 0), a)
            for a, ax in zip(args, spec)
        ]
        return tree_map(lambda v: _move_axis(v, 0, out_axes), body(*front))

    run.__name__ = f"pmap({function_name(fun)})"
    return jit(run)


def _move_axis(x, source: int, destination: int):
    ndim = np.ndim(x)
    source, destination = source % ndim, destination % ndim
    if source == destination:
        return x
    order = [d for d in range(ndim) if d != source]
    order.insert(destination, source)
    return lax_ops.transpose(x, tuple(order))


@contextmanager
def disable_jit(disable: bool = True):
    """A context in which jitted functions run op by op in Python.

    For debugging: inside, values are concrete, so `print`, pdb and Python
    control flow see real numbers. Results are the same, only slower.

    Args:
      disable: True to disable jit inside the block; False to re-enable it
        inside an outer disable_jit.

    Returns:
      A context manager.

    Raises:
      Nothing: of its own; errors inside the block are the functions'.

    Example:
      >>> with olympus.disable_jit():
      ...     print(olympus.jit(lambda x: float(x) + 1.0)(1.0))
      2.0
    """
    with config.override("olympus_disable_jit", disable):
        yield


# ---- transfers ---------------------------------------------------------------------
def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Places a pytree of arrays on a device, or lays it out over several.

    Use it to put host data on the accelerator once rather than on every
    call, or to shard arrays over a mesh. Inside jit, a NamedSharding becomes
    `lax.with_sharding_constraint`.

    Args:
      x: a pytree of arrays (NumPy arrays, Python scalars, Arrays).
      device: None (the default device), a Device, a Sharding, or a pytree
        prefix of `x` of Shardings (a None leaf leaves that array as it is).
      src: taken for JAX's signature; changes no value.
      donate: taken for JAX's signature; olympus copies or returns an Array
        already in place.
      may_alias: taken for JAX's signature; changes no value.

    Returns:
      The pytree with each leaf an Array placed as asked.

    Raises:
      ValueError: a sharding does not divide an array's shape, or `device`
        does not match the structure of `x`.

    Example:
      >>> olympus.device_put(np.arange(3))
      Array([0, 1, 2], dtype=int32)
      >>> mesh = olympus.make_mesh((1,), ("x",))
      >>> s = olympus.sharding.NamedSharding(mesh, olympus.sharding.PartitionSpec("x"))
      >>> olympus.device_put(np.ones(2), s).sharding == s
      True
    """
    leaves, tree = tree_flatten(x)
    if device is None:
        return tree_unflatten(tree, [_put_leaf(v, None) for v in leaves])
    if not isinstance(device, Sharding) and hasattr(device, "platform"):
        device = SingleDeviceSharding(device)
    shardings = flat_shardings(device, x, "device_put")
    return tree_unflatten(tree, [_put_leaf(v, s) for v, s in zip(leaves, shardings)])


def _put_leaf(v, sharding):
    if isinstance(v, Tracer):
        if isinstance(sharding, NamedSharding):
            return with_sharding_constraint(v, sharding)
        return v
    if sharding is None:
        return v if isinstance(v, Array) else to_device(v)
    return put(v, sharding)


def device_get(x):
    """Copies a pytree of Arrays to NumPy arrays on the host.

    Waits for the values; leaves that are not Arrays are returned unchanged.

    Args:
      x: a pytree of Arrays (and other leaves).

    Returns:
      The same pytree with each Array replaced by a numpy.ndarray.

    Raises:
      Nothing: of its own; errors of the computations that produced the leaves
        surface here.

    Example:
      >>> olympus.device_get({"a": jnp.arange(2)})
      {'a': array([0, 1], dtype=int32)}
    """
    import numpy as np

    leaves, tree = tree_flatten(x)
    return tree_unflatten(
        tree, [np.asarray(v) if isinstance(v, Array) else v for v in leaves]
    )


def block_until_ready(x):
    """Waits until every Array in the pytree `x` has been computed.

    Olympus dispatches asynchronously; call this before timing code so the
    clock stops when the work is done, not when it is queued.

    Args:
      x: a pytree whose Array leaves are waited on (other leaves ignored).

    Returns:
      `x` itself, once ready.

    Raises:
      Nothing: of its own; errors of the computations that produced the leaves
        surface here.

    Example:
      >>> olympus.block_until_ready(jnp.ones(2) * 3)
      Array([3., 3.], dtype=float32)
    """
    for leaf in tree_flatten(x)[0]:
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


def clear_caches() -> None:
    """Drops every compiled executable and cached program.

    For freeing memory or measuring compile time: the eager per-primitive
    cache, eager control-flow structures, pjit executables, transformed
    sub-programs and each jitted function's signatures (every cache
    registered in olympus.caches) are emptied; the next calls retrace and
    recompile.

    Returns:
      None.

    Raises:
      Nothing: it only empties caches.

    Example:
      >>> f = olympus.jit(lambda x: x + 1)
      >>> print(f(1.0))
      2.0
      >>> olympus.clear_caches()  # f retraces and recompiles on its next call
    """
    caches.clear_all()
