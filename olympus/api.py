"""The user-facing entry points for tracing and running: jit, make_olympuspr,
device_put, block_until_ready, disable_jit."""

from __future__ import annotations

import functools
import logging
from contextlib import contextmanager
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from olympus import caches, config, prng
from olympus.ir.core import ShapedArray
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
from olympus.jit_function import JitFunction, normalize_argnums
from olympus.lax import ops as lax_ops
from olympus.lax.parallel import shard_map
from olympus.lax.sharding import constrain
from olympus.stages import (
    laid_out_structs,
    optimized,
)
from olympus.tracer import core, refs
from olympus.tracer.core import Tracer, aval_of
from olympus.tracer.functions import (
    ShapeDtypeStruct,
    argnums_partial,
    dynamic_argnums,
    trace_pytree_function,
)
from olympus.tracer.refs import AbstractRef, Ref
from olympus.tracer.pytree import tree_flatten, tree_map, tree_unflatten
from olympus.tracer.staging import function_name
from olympus.tracer.tracebacks import api_boundary

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
    static = normalize_argnums(static_argnums)

    @functools.wraps(fun)
    @api_boundary
    def traced(*args, **kwargs):
        dyn_fun, dyn_args = argnums_partial(
            fun, dynamic_argnums(len(args), static), args
        )
        # a Ref argument is its value; writes to refs are not kept (as JAX's)
        dyn_fun, dyn_args, kwargs = refs.unboxed_arguments(dyn_fun, dyn_args, kwargs)
        closed, _, out_tree = refs.discarding_writes(
            lambda f: trace_pytree_function(f, dyn_args, kwargs, "make_olympuspr"),
            dyn_fun,
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
    fun, args, kwargs = refs.unboxed_arguments(fun, args, kwargs)
    structs = laid_out_structs(prng.keys_from_structs((args, kwargs)))
    leaves, tree = tree_flatten(structs)
    args, kwargs = tree_unflatten(tree, [_abstract_leaf(x) for x in leaves])
    given: dict = {}  # output position -> a ShapeDtypeStruct `fun` returned

    def traced(*args, **kwargs):
        # As JAX, `fun` may return ShapeDtypeStructs: they are their own shapes
        # (lineax's eval_shape(lambda: struct)); the rest is traced.
        out_leaves, given["tree"] = tree_flatten(fun(*args, **kwargs))
        given.update((i, x) for i, x in enumerate(out_leaves) if _is_struct(x))
        return [x for i, x in enumerate(out_leaves) if i not in given]

    closed, _, _ = refs.discarding_writes(
        lambda f: trace_pytree_function(f, args, kwargs, "eval_shape"), traced
    )
    traced_out = iter(closed.out_avals)
    out_tree = given.pop("tree")
    out = tree_unflatten(
        out_tree,
        [
            given[i] if i in given else _struct_of(next(traced_out))
            for i in range(out_tree.num_leaves)
        ],
    )
    return prng.structs_of_keys(out)


def _is_struct(x) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def _struct_of(aval: ShapedArray) -> ShapeDtypeStruct:
    """A traced output's struct; a layout its type holds is its sharding (JAX's)."""
    held = aval.sharding
    sharding = None
    if held is not None and held.mesh is not None:
        sharding = NamedSharding(held.mesh, PartitionSpec(*held.spec))
    return ShapeDtypeStruct(aval.shape, aval.dtype, aval.weak_type, sharding=sharding)


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
      ShapedArray(float32[2,3])
    """
    from olympus.prng import PRNGKeyArray

    if isinstance(x, PRNGKeyArray):
        words = typeof(x.data).sharding  # the key axes' part of the words' layout
        if words is not None:  # a PartitionSpec, as JAX's
            words = words._replace(spec=type(words.spec)(*words.spec[: x.ndim]))
        return KeyArrayType(x.shape, x.dtype, sharding=words)
    if isinstance(x, Ref):  # its type: AbstractRef of its value's
        return AbstractRef(x._aval)
    from olympus.lax.sharding import unsplit_type

    return unsplit_type(x, aval_of(x))  # on Explicit axes: P(None, ...), as JAX


class KeyArrayType(NamedTuple):
    """`typeof` of a typed PRNG key array, `key<fry>[2]` as JAX prints it.
    olympus's key arrays are pytrees of their uint32 words, so their type is
    this description rather than an IR aval."""

    shape: tuple
    dtype: Any
    weak_type: bool = False
    sharding: Any = None  # as ShapedArray's: None unless laid out on Explicit axes

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def update(self, **fields) -> KeyArrayType:
        """A copy with the given fields (shape, dtype, weak_type, sharding)."""
        return self._replace(**{k: v for k, v in fields.items() if v is not None})

    def str_short(self) -> str:
        """`key<fry>[8@x]` where dimension 0 is split over mesh axis x, as JAX's."""
        names = self.sharding.dim_names(self.ndim) if self.sharding else ()
        dims = (f"{d}@{a}" if a else str(d) for d, a in zip(self.shape, names))
        return f"{self.dtype}[{','.join(dims if names else map(str, self.shape))}]"

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


# ---- jit ---------------------------------------------------------------------
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
    if fun is None:  # jit(**options) as a decorator: its options, every one
        options = {k: v for k, v in locals().items() if k != "fun"}
        return lambda f: jit(f, **options)
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
    fun: Callable,
    axis_name: str | None = None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums: int | Sequence[int] = (),
    devices=None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Sequence[int] = (),
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
      static_broadcasted_argnums: positional arguments passed to every
        device as they are (hashable Python values, compiled for, as jit's
        static_argnums); in_axes then counts them too, as JAX's.
      devices: the devices to use (default: the first ones).
      backend: the platform whose devices to use ('cpu', 'gpu', ...) when
        `devices` is None.
      axis_size: the mapped axis's size, checked against the arguments'.
      donate_argnums: positional arguments whose buffers the computation may
        reuse (as jit's; a static argument is never donated).

    Returns:
      A function returning `fun`'s outputs stacked along `out_axes`.

    Raises:
      PmapDeviceCountError: the mapped axis is larger than the number of
        devices (a ValueError).
      PmapAxesError: arguments disagree on the mapped axis's size, or it is
        not `axis_size` (a ValueError).

    Example:
      >>> olympus.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(jnp.ones((1, 3)))
      Array([[1., 1., 1.]], dtype=float32)
    """
    name = function_name(fun)
    axis = axis_name if axis_name is not None else f"pmap_{id(fun)}"
    compiled: dict = {}  # (size, in_axes, devices, statics) -> jitted shard_map
    static, donate = map(
        normalize_argnums, (static_broadcasted_argnums, donate_argnums)
    )

    def mapped(*args):
        statics, positions, args, axes = _split_statics(args, static, in_axes)
        spec, size = _mapped_axis(name, args, axes, in_axes, axis_size)
        available = _pmap_devices(name, size, devices, backend)
        donated = tuple(k for k, i in enumerate(positions) if i in donate)
        key = (size, spec, available[:size], statics, donated)
        if key not in compiled:
            body = _with_statics(fun, statics) if statics else fun
            compiled[key] = _pmapped(
                body, axis, spec, available[:size], out_axes, donated
            )
        return compiled[key](*args)

    mapped.__name__ = f"pmap({name})"
    return mapped


def _split_statics(args: tuple, static, in_axes):
    """pmap's call split into (static (position, value) pairs, the dynamic
    arguments' positions, those arguments, their in_axes): JAX's in_axes
    counts the static arguments too."""
    static_at = {i % len(args) for i in static if -len(args) <= i < len(args)}
    statics = tuple((i, args[i]) for i in sorted(static_at))
    positions = [i for i in range(len(args)) if i not in static_at]
    axes = in_axes
    if statics and isinstance(in_axes, (tuple, list)) and len(axes) == len(args):
        axes = tuple(in_axes[i] for i in positions)
    return statics, positions, tuple(args[i] for i in positions), axes


def _mapped_axis(name: str, args: tuple, axes, in_axes, axis_size):
    """(each argument's mapped axis, made non-negative, or None; the one size
    of the mapped axes), or PmapAxesError naming what disagrees."""
    spec = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,) * len(args)
    if len(spec) != len(args):
        raise PmapAxesError(
            f"pmap of {name}: in_axes {in_axes!r} has {len(spec)} entries "
            f"for {len(args)} arguments{_at_user_line()}"
        )
    mapped = [
        (i, leaf, ax)
        for i, (a, ax) in enumerate(zip(args, spec))
        if ax is not None
        for leaf in tree_flatten(a)[0]
    ]
    for i, leaf, ax in mapped:
        if not -np.ndim(leaf) <= ax < np.ndim(leaf):
            raise PmapAxesError(
                f"pmap of {name}: in_axes {ax} is out of range for args[{i}] "
                f"of shape {np.shape(leaf)}{_at_user_line()}"
            )
    spec = tuple(
        None if ax is None else ax % np.ndim(tree_flatten(a)[0][0])
        for a, ax in zip(args, spec)
    )
    sizes = {np.shape(leaf)[ax % np.ndim(leaf)] for _, leaf, ax in mapped}
    if len(sizes) != 1:
        raise PmapAxesError(
            f"pmap of {name}: the mapped axes have sizes {sorted(sizes)}; "
            f"pmap needs one size{_at_user_line()}"
        )
    (size,) = sizes
    if axis_size is not None and axis_size != size:
        raise PmapAxesError(
            f"pmap of {name}: axis_size={axis_size} but the mapped axes have "
            f"size {size}; pass axis_size={size} or leave it out{_at_user_line()}"
        )
    return spec, size


def _pmap_devices(name: str, size: int, devices, backend) -> tuple:
    """The devices pmap may use (`devices`, else the backend's local ones),
    or PmapDeviceCountError when the mapped axis needs more."""
    if devices is not None:
        available = tuple(devices)
    else:
        available = tuple(client.local_devices(backend=backend))
    if size > len(available):
        raise PmapDeviceCountError(
            f"pmap of {name}: the mapped axis has size {size} but there are only "
            f"{len(available)} devices (olympus_num_cpu_devices / "
            f"OLYMPUS_NUM_CPU_DEVICES){_at_user_line()}"
        )
    return available


def _with_statics(fun, statics: tuple):
    """`fun` of the dynamic arguments only: the (position, value) pairs in
    `statics` are put back in place."""

    def dynamic(*args):
        full = list(args)
        for i, value in statics:
            full.insert(i, value)
        return fun(*full)

    return dynamic


def _pmapped(
    fun, axis: str, spec: tuple, devices: tuple, out_axes: int, donated: tuple = ()
):
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
    return jit(run, donate_argnums=donated)


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
            return constrain(v, sharding)
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
