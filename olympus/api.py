"""The user-facing entry points for tracing and running: jit, make_olympuspr,
device_put, devices, block_until_ready, disable_jit."""

from __future__ import annotations

import functools
import inspect
import threading
import types
from contextlib import contextmanager
from typing import Any, Callable, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.cache import JIT_CACHE_SIZE, BoundedCache
from olympus.ir.config import config
from olympus.ir.core import ClosedOlympuspr, ShapedArray
from olympus.backends.xla import client
from olympus.backends.xla.array import Array
from olympus.backends.xla.dispatch import buffer_of, compile_olympuspr, to_device
from olympus.lax.pjit import pjit_p
from olympus.tracer import core
from olympus.tracer.core import Tracer, aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.pytree import LEAF, tree_flatten, tree_paths, tree_unflatten
from olympus.tracer.staging import DebugInfo, consts_as_invars, function_name, trace_to_olympuspr


# ---- tracing a Python function with pytree arguments -------------------------
def _positional_names(fun: Callable) -> list[str] | None:
    """Names of fun's positional parameters, None if it has no signature.

    A plain function reads them off its code object: inspect.signature costs
    about a fifth of tracing a small closure, and jit traces one per call site."""
    if type(fun) is types.FunctionType and not (
        "__wrapped__" in fun.__dict__ or "__signature__" in fun.__dict__
    ):
        code = fun.__code__
        return list(code.co_varnames[: code.co_argcount])
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _arg_names(fun: Callable, n_args: int) -> list[str]:
    positional = _positional_names(fun) or []
    return [positional[i] if i < len(positional) else f"args[{i}]" for i in range(n_args)]


def _arg_paths(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    paths: list[str] = []
    for name, arg in zip(_arg_names(fun, len(args)), args):
        paths += tree_paths(arg, name)
    for key in sorted(kwargs):
        paths += tree_paths(kwargs[key], key)
    return tuple(paths)


def _check_output_leaf(x, fun_name: str):
    if isinstance(x, (Tracer, Array, bool, int, float, complex)) or hasattr(x, "__array__"):
        return x
    raise OlympusTypeError(
        f"{fun_name} returned a {type(x).__name__} ({x!r:.40}); traced functions "
        f"must return arrays, scalars or pytrees of them"
    )


def trace_pytree_function(
    fun: Callable, args: tuple, kwargs: dict, transform: str
) -> tuple[ClosedOlympuspr, Any, Any]:
    """Traces `fun(*args, **kwargs)` on abstract values of its leaves.

    Returns (closed olympuspr over the flat leaves, input treedef, output treedef).
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    avals = [aval_of(x) for x in leaves]
    name = function_name(fun)
    out_tree_box = []

    def flat_fun(*tracers):
        a, k = tree_unflatten(in_tree, tracers)
        out = fun(*a, **k)
        out_leaves, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        return [_check_output_leaf(x, name) for x in out_leaves]

    debug = DebugInfo(transform, name, _arg_paths(fun, args, kwargs))
    olympuspr, consts, _ = trace_to_olympuspr(flat_fun, avals, debug)
    return ClosedOlympuspr(olympuspr, consts), in_tree, out_tree_box[0]


def make_olympuspr(fun: Callable, static_argnums: int | Sequence[int] = (), return_shape: bool = False):
    """Returns a function that traces `fun` and gives its ClosedOlympuspr.

    >>> print(make_olympuspr(lambda x: x * 2.0)(1.0))
    { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
    """
    static = _normalize_argnums(static_argnums)

    @functools.wraps(fun)
    def traced(*args, **kwargs):
        dyn_fun, dyn_args = _bind_static(fun, args, static)
        closed, _, out_tree = trace_pytree_function(dyn_fun, dyn_args, kwargs, "make_olympuspr")
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
            return closed, tree_unflatten(out_tree, shapes)
        return closed

    return traced


class ShapeDtypeStruct:
    """Shape and dtype of an array without its data."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtypes.canonicalize_dtype(dtype)
        self.weak_type = weak_type

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, ShapeDtypeStruct)
            and (self.shape, self.dtype) == (other.shape, other.dtype)
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))


def _normalize_argnums(argnums) -> tuple:
    if argnums is None:
        return ()
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _bind_static(fun: Callable, args: tuple, static: tuple):
    if not static:
        return fun, args
    n = len(args)
    positions = sorted({i % n if i < 0 else i for i in static if -n <= i < n})
    fixed = {i: args[i] for i in positions}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in fixed)

    def dyn_fun(*dyn, **kwargs):
        it = iter(dyn)
        full = [fixed[i] if i in fixed else next(it) for i in range(n)]
        return fun(*full, **kwargs)

    dyn_fun.__qualname__ = function_name(fun)
    return dyn_fun, dyn_args


# ---- jit ---------------------------------------------------------------------
class _Compiled:
    """One cache entry of a jitted function: executable, constants, output tree."""

    __slots__ = ("exe", "const_bufs", "out_tree", "single_out")

    def __init__(self, exe, consts, out_tree):
        self.exe = exe
        self.const_bufs = [buffer_of(c) for c in consts]
        self.out_tree = out_tree
        self.single_out = out_tree is LEAF and len(exe.out_avals) == 1

    def run(self, leaves) -> Any:
        try:
            return self.run_buffers([x._buf if type(x) is Array else buffer_of(x) for x in leaves])
        except TypeError:  # a deleted Array's buffer is None: buffer_of says so
            return self.run_buffers([buffer_of(x) for x in leaves])

    def run_buffers(self, buffers: list) -> Any:
        if self.const_bufs:
            buffers = self.const_bufs + buffers
        if self.single_out:
            return self.exe.call_one(buffers)
        return tree_unflatten(self.out_tree, self.exe.call(buffers))


# Bumped on every config change (x64 changes avals, disable_jit bypasses
# compiled code): a JitFunction's fast cache is valid only in its epoch.
_config_epoch = 0


def _next_config_epoch(name, value) -> None:
    global _config_epoch
    _config_epoch += 1
    _ndarray_avals.clear()


config.on_change(_next_config_epoch)
_ndarray_avals: dict = {}  # (shape, dtype) -> aval of a NumPy argument
_MISS = object()
_FAST_ARG_TYPES = (Array, np.ndarray)  # exact types whose calls can take the fast path


def _ndarray_aval(x) -> ShapedArray:
    aval = _ndarray_avals.get((x.shape, x.dtype))
    if aval is None:
        aval = _ndarray_avals[(x.shape, x.dtype)] = aval_of(x)
    return aval


def _host_buffer(x: np.ndarray, aval: ShapedArray):
    return client.host_to_device(x if x.dtype == aval.dtype else x.astype(aval.dtype), aval)


class JitFunction:
    """`jit(f)`: traces f once per argument signature, compiles it with XLA and
    caches the executable; inside another trace it appears as a `pjit` equation."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(), donate_argnums=()):
        self.fun = fun
        self.name = getattr(fun, "__name__", None) or function_name(fun)
        self.static_argnums, self.static_argnames = _static_args(fun, static_argnums, static_argnames)
        self.donate_argnums = _normalize_argnums(donate_argnums)
        # No static or donated arguments: calls may take the fast path.
        self._simple = not (self.static_argnums or self.static_argnames or self.donate_argnums)
        self._fast: dict = {}  # avals of positional Array/ndarray args -> _Compiled
        self._epoch = _config_epoch  # the config epoch _fast was filled in
        # (treedef, avals, statics) -> _Compiled; bounded (olympus/ir/cache.py)
        self._cache: dict = BoundedCache(JIT_CACHE_SIZE)
        # same key -> (closed, out_tree, pjit body), for use inside traces
        self._traced: dict = BoundedCache(JIT_CACHE_SIZE)
        self._lock = threading.Lock()
        # Held while tracing and compiling a new signature, so threads that
        # miss together compile it once (cache hits never take it).
        self._compile_lock = threading.RLock()
        functools.update_wrapper(self, fun, updated=())  # keep our own __dict__

    def __call__(self, *args, **kwargs):
        if (
            self._simple and not kwargs and self._epoch == _config_epoch
            and core._state.trace is core.eval_trace
        ):
            out = self._call_fast(args)
            if out is not _MISS:
                return out
        return self._call_slow(args, kwargs)

    def _call_fast(self, args) -> Any:
        """A cache hit for positional Array / NumPy arguments, in as little
        Python as possible (jit dispatch latency is measured); `_MISS` else."""
        avals, buffers, on_host = [], [], False
        for a in args:
            if type(a) is Array:
                avals.append(a.aval)
                buffers.append(a._buf)
            elif type(a) is np.ndarray:
                avals.append(_ndarray_aval(a))
                buffers.append(a)
                on_host = True
            else:
                return _MISS
        entry = self._fast.get(tuple(avals))
        if entry is None:
            return _MISS
        if on_host:  # copy NumPy arguments only once the call is known to hit
            buffers = [_host_buffer(b, aval) if type(b) is np.ndarray else b
                       for b, aval in zip(buffers, avals)]
        try:
            return entry.run_buffers(buffers)
        except TypeError:  # a deleted Array: the slow path raises the error
            return _MISS

    def _split_static(self, args, kwargs):
        n = len(args)
        static_pos = {i % n if i < 0 else i for i in self.static_argnums if -n <= i < n}
        statics = tuple((i, args[i]) for i in sorted(static_pos))
        statics += tuple((k, kwargs[k]) for k in sorted(kwargs) if k in self.static_argnames)
        try:
            hash(statics)
        except TypeError as err:
            raise ValueError(
                f"jit of {self.name}: static arguments must be hashable: {err}"
            ) from None
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return statics, static_pos, dyn_args, dyn_kwargs

    def _dyn_fun(self, args, kwargs, static_pos):
        if not static_pos and not self.static_argnames:
            return self.fun
        n = len(args)
        static_kw = {k: v for k, v in kwargs.items() if k in self.static_argnames}

        def dyn_fun(*dyn, **dyn_kwargs):
            it = iter(dyn)
            full = [args[i] if i in static_pos else next(it) for i in range(n)]
            return self.fun(*full, **dyn_kwargs, **static_kw)

        dyn_fun.__qualname__ = self.name
        return dyn_fun

    def _call_slow(self, args, kwargs):
        if config.read("olympus_disable_jit"):
            return self.fun(*args, **kwargs)
        if self._simple:
            statics, static_pos, dyn_args, dyn_kwargs = (), (), args, kwargs
        else:
            statics, static_pos, dyn_args, dyn_kwargs = self._split_static(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple([x.aval if type(x) is Array else aval_of(x) for x in leaves])
        key = (in_tree, avals, statics, dtypes.x64_enabled())
        if core._state.trace is not core.eval_trace:
            return self._bind_in_trace(key, args, kwargs, static_pos, dyn_args, dyn_kwargs, leaves)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compile(key, args, kwargs, static_pos, dyn_args, dyn_kwargs)
        debug_nans = config.read("olympus_debug_nans")
        if (self._simple and not kwargs and not debug_nans
                and all(type(a) in _FAST_ARG_TYPES for a in args)):
            self._remember_fast(avals, entry)
        result = entry.run(leaves)
        if debug_nans:
            self._find_nans(result, args, kwargs)
        self._donate(args)
        return result

    def _compile(self, key, args, kwargs, static_pos, dyn_args, dyn_kwargs) -> _Compiled:
        """Traces and compiles one signature, once even when threads miss together."""
        with self._compile_lock:
            entry = self._cache.get(key)
            if entry is None:
                self._explain_miss(self._cache, key, args, kwargs, static_pos)
                closed, _, out_tree = trace_pytree_function(
                    self._dyn_fun(args, kwargs, static_pos), dyn_args, dyn_kwargs, "jit"
                )
                donated = self._donated_parameters(closed, dyn_args, static_pos, len(args))
                exe = (compile_olympuspr(closed.olympuspr, self.name, donated) if donated
                       else compile_olympuspr(closed.olympuspr, self.name))
                entry = _Compiled(exe, closed.consts, out_tree)
                self._cache[key] = entry
        return entry

    def _explain_miss(self, cache: dict, key, args, kwargs, static_pos) -> None:
        """With olympus_explain_cache_misses: logs what changed since the
        closest compiled signature (olympus/cache_misses.py)."""
        if not config.read("olympus_explain_cache_misses") or not cache:
            return
        from olympus.cache_misses import log_cache_miss

        names = _arg_names(self.fun, len(args))
        paths = [p for i, a in enumerate(args) if i not in static_pos
                 for p in tree_paths(a, names[i])]
        for name in sorted(k for k in kwargs if k not in self.static_argnames):
            paths += tree_paths(kwargs[name], name)
        log_cache_miss(self.name, key, list(cache), paths, names)

    def _donated_parameters(self, closed, dyn_args, static_pos, n_args) -> tuple:
        """Program parameter indices (consts first) of the donated arguments' leaves."""
        if not self.donate_argnums:
            return ()
        donated_pos = {i % n_args if i < 0 else i for i in self.donate_argnums}
        dyn_positions = [i for i in range(n_args) if i not in static_pos]
        start, params = len(closed.olympuspr.constvars), []
        for pos, arg in zip(dyn_positions, dyn_args):
            n = len(tree_flatten(arg)[0])
            if pos in donated_pos:
                params += range(start, start + n)
            start += n
        return tuple(params)

    def _find_nans(self, result, args, kwargs) -> None:
        """With olympus_debug_nans: a NaN output re-runs `fun` op by op, where
        the first primitive producing a NaN raises FloatingPointError naming
        itself and the user's line (as JAX does)."""
        for leaf in tree_flatten(result)[0]:
            value = np.asarray(leaf)
            if value.dtype.kind in "fc" and np.isnan(value).any():
                with disable_jit():
                    self.fun(*args, **kwargs)
                raise FloatingPointError(
                    f"invalid value (NaN) in the output of jit({self.name}); op by op, no "
                    f"primitive produced it (olympus_debug_nans is on)")

    def _remember_fast(self, avals: tuple, entry: _Compiled) -> None:
        with self._lock:
            if self._epoch != _config_epoch or len(self._fast) >= JIT_CACHE_SIZE:
                self._fast.clear()  # a new epoch, or bounded like the slow cache
                self._epoch = _config_epoch
            self._fast[avals] = entry

    def _bind_in_trace(self, key, args, kwargs, static_pos, dyn_args, dyn_kwargs, leaves):
        traced = self._traced.get(key)
        if traced is None:
            self._explain_miss(self._traced, key, args, kwargs, static_pos)
            closed, _, out_tree = trace_pytree_function(
                self._dyn_fun(args, kwargs, static_pos), dyn_args, dyn_kwargs, "jit"
            )
            # One body object per signature, so transforms and the pjit
            # executable cache (keyed by the body) hit on later calls.
            body = ClosedOlympuspr(consts_as_invars(closed.olympuspr), [])
            traced = (closed, out_tree, body)
            if not any(isinstance(c, Tracer) for c in closed.consts):
                self._traced[key] = traced
        closed, out_tree, body = traced
        outs = pjit_p.bind(*closed.consts, *leaves, olympuspr=body, name=self.name)
        return tree_unflatten(out_tree, outs)

    def _donate(self, args) -> None:
        for i in self.donate_argnums:
            if i < len(args):
                for leaf in tree_flatten(args[i])[0]:
                    if isinstance(leaf, Array):
                        leaf.delete()

    def trace(self, *args, **kwargs):
        """Traces for these arguments (arrays or ShapeDtypeStructs): a `Traced`
        stage with `.olympuspr`, `.lower()` and then `.compile()` (olympus.stages)."""
        from olympus.stages import trace_jit

        return trace_jit(self, args, kwargs)

    def lower(self, *args, **kwargs):
        """`trace(*args, **kwargs).lower()`: the StableHLO stage."""
        return self.trace(*args, **kwargs).lower()

    def lower_text(self, *args, **kwargs) -> str:
        """The StableHLO text this function compiles to for these arguments."""
        from olympus.backends.xla.lowering import build_module

        statics, static_pos, dyn_args, dyn_kwargs = self._split_static(args, kwargs)
        closed, _, _ = trace_pytree_function(
            self._dyn_fun(args, kwargs, static_pos), dyn_args, dyn_kwargs, "jit"
        )
        return build_module(closed.olympuspr, self.name)

    def clear_cache(self) -> None:
        with self._lock:
            self._fast.clear()
        self._cache.clear()
        self._traced.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def _static_args(fun, static_argnums, static_argnames) -> tuple[tuple, tuple]:
    """Completes static_argnums from static_argnames and vice versa, as JAX does."""
    nums = set(_normalize_argnums(static_argnums))
    names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames or ())
    positional = _positional_names(fun)
    if positional is None:
        return tuple(sorted(nums)), tuple(sorted(names))
    for i, name in enumerate(positional):
        if name in names:
            nums.add(i)
        if i in nums or (i - len(positional)) in nums:
            names.add(name)
    return tuple(sorted(nums)), tuple(sorted(names))


def jit(fun: Callable | None = None, *, static_argnums=(), static_argnames=(), donate_argnums=()):
    """Compiles `fun` with XLA; recompiles only for new shapes/dtypes/static args.

    >>> f = jit(lambda x: x * 2.0)
    >>> f(np.ones(3))
    Array([2., 2., 2.], dtype=float32)
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums,
                             static_argnames=static_argnames, donate_argnums=donate_argnums)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)


@contextmanager
def disable_jit(disable: bool = True):
    """Runs jitted functions op by op in Python (for debugging with pdb)."""
    previous = config.read("olympus_disable_jit")
    config.update("olympus_disable_jit", disable)
    try:
        yield
    finally:
        config.update("olympus_disable_jit", previous)


# ---- devices and transfers -----------------------------------------------------
def devices(backend: str | None = None) -> list:
    """The devices olympus runs on (the CPU here)."""
    return client.devices()


def device_put(x, device=None):
    """Moves a pytree of arrays to the device (a no-op for Arrays already there)."""
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [v if isinstance(v, (Array, Tracer)) else to_device(v) for v in leaves])


def device_get(x):
    """Copies a pytree of Arrays to NumPy arrays on the host."""
    import numpy as np

    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [np.asarray(v) if isinstance(v, Array) else v for v in leaves])


def block_until_ready(x):
    """Waits until every Array in the pytree `x` has been computed."""
    for leaf in tree_flatten(x)[0]:
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return x


def clear_caches() -> None:
    """Drops every compiled executable and cached program: the eager
    per-primitive cache, eager control-flow structures, pjit executables,
    transformed sub-programs, and each jitted function's signatures."""
    from olympus.backends.xla.dispatch import clear_eager_cache
    from olympus.lax import pjit
    from olympus.lax.control_flow import subprograms
    from olympus.transforms import programs
    import gc

    clear_eager_cache()
    subprograms._canonical_params.clear()
    pjit._executables.clear()
    programs._program_cache.clear()
    _ndarray_avals.clear()
    for obj in gc.get_objects():
        if isinstance(obj, JitFunction):
            obj.clear_cache()
