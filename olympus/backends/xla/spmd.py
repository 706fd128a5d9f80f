"""Programs over several devices, split by XLA's SPMD partitioner.

olympus never partitions a program itself: it writes the sharding of each
argument and result (and of `with_sharding_constraint` values) as Shardy
(`sdy`) attributes over named meshes, compiles with `num_partitions` devices
and `use_spmd_partitioning`, and XLA inserts the collectives. Results whose
layout was not asked for take the one XLA's propagation chose.

A call returns once its program is launched, as on one device. One rule
keeps programs in flight from deadlocking (`_launch`): a program *with
collectives* waits for the previous one to finish unless it reads that one's
results (a chain of training steps, each started at once). XLA's CPU client runs each
device's part of a program as a task on one shared pool of
max(cores, devices) threads, and a part holding a collective keeps its thread
until every other part has arrived. Two such programs whose parts become
runnable together (two jits reading the same result, or back-to-back steps)
can take all the threads with parts of both, each waiting for a part that
has no thread left: the rendezvous never completes (JAX 0.10.2 hangs on the
same programs on a 2-core machine). A program reading the previous one's
results cannot: its part on a device waits for the previous part there,
which has passed every rendezvous of its program. Programs without
collectives, and the caller's Python, overlap freely.
"""

from __future__ import annotations

import threading

import numpy as np

from olympus import caches

from olympus.backends.xla import client, compiler, host_callback
from olympus.backends.xla.array import Array, placed_array, put
from olympus.backends.xla.lowering import (
    LoweringError,
    build_module,
    module_layout,
    returns_ordering_token,
    tensor_type,
)
from olympus.backends.xla.sharding import (
    AxisType,
    GSPMDSharding,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    as_named,
    spelled_for_rank,
    tiling_of_hlo,
    whole_tiling,
)
from olympus.ir.core import Eqn, Olympuspr, ShapedArray, Var, subolympusprs

_TOKEN_AVAL = ShapedArray((0,), np.bool_)  # how the runtime hands back a token result
_mesh_symbols: dict = {}  # Mesh -> its symbol in modules (`@mesh0`)


def mesh_symbol(mesh: Mesh) -> str:
    """The name modules give `mesh` (the same in every module; meshes that
    differ only in axis types, as a shard_map body's, share it)."""
    key = (mesh.axis_names, mesh.devices.shape, tuple(mesh.devices.flat))
    name = _mesh_symbols.get(key)
    if name is None:
        name = _mesh_symbols[key] = f"mesh{len(_mesh_symbols)}"
    return name


def sdy_sharding(sharding: NamedSharding, ndim: int) -> str:
    return sharding.sdy_text(ndim, mesh_symbol(sharding.mesh))


def program_shardings(olympuspr: Olympuspr):
    """Every NamedSharding an equation of the program (or a sub-program) holds
    (a shard_map's mesh counts as its replicated sharding)."""
    for eqn in olympuspr.eqns:
        for value in eqn.params.values():
            if isinstance(value, NamedSharding):
                yield value
            elif isinstance(value, Mesh):
                yield replicated(value)
        for sub in subolympusprs(eqn.params):
            yield from program_shardings(sub)


class MeshMismatchError(ValueError):
    """Shardings of one program over different sets of devices."""


class SpmdLayout:
    """What `build_module` writes for a program over `devices`: the partition
    count, the meshes, each argument's and result's Shardy sharding."""

    def __init__(
        self,
        devices: tuple,
        in_shardings,
        out_shardings,
        avals_in,
        avals_out,
        meshes,
        mesh,
    ):
        self.devices = devices
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.avals_in, self.avals_out = avals_in, avals_out
        self.meshes = meshes  # every mesh the module names; `mesh` is the program's
        self.mesh = mesh

    def module_attributes(self) -> str:
        return f"mhlo.num_partitions = {len(self.devices)} : i32, mhlo.num_replicas = 1 : i32"

    def declarations(self) -> str:
        position = {d: i for i, d in enumerate(self.devices)}
        lines, declared = [], set()
        for mesh in self.meshes:
            if mesh_symbol(mesh) in declared:  # the same axes and devices
                continue
            declared.add(mesh_symbol(mesh))
            axes = ", ".join(f'"{n}"={s}' for n, s in mesh.shape.items())
            ids = [position[d] for d in mesh.devices.flat]
            listed = (
                f", device_ids=[{', '.join(map(str, ids))}]"
                if ids != sorted(ids)
                else ""
            )
            lines.append(f"  sdy.mesh @{mesh_symbol(mesh)} = <[{axes}]{listed}>\n")
        # where host callbacks run (olympus/backends/xla/host_callback.py)
        lines.append("  sdy.mesh @maximal_mesh = <[], device_ids=[0]>\n")
        return "".join(lines)

    def arg_attribute(self, i: int) -> str:
        return f"sdy.sharding = {sdy_sharding(self.in_shardings[i], self.avals_in[i].ndim)}"

    def result_attribute(self, j: int) -> str:
        sharding = self.out_shardings[j]
        if sharding is None:
            return ""
        return f"sdy.sharding = {sdy_sharding(sharding, self.avals_out[j].ndim)}"


def program_mesh(olympuspr: Olympuspr, shardings) -> Mesh | None:
    """The mesh a program runs on: that of its first NamedSharding (given
    ones first, then its constraints); None when it names no mesh."""
    found = [s for s in shardings if isinstance(s, NamedSharding)]
    found += list(program_shardings(olympuspr))
    if not found:
        return None
    mesh = found[0].mesh
    for s in found[1:]:
        if set(s.mesh.devices.flat) != set(mesh.devices.flat):
            raise MeshMismatchError(
                f"jit: one program uses shardings over devices "
                f"{sorted(d.id for d in mesh.devices.flat)} and "
                f"{sorted(d.id for d in s.mesh.devices.flat)}; put all of them on one "
                f"mesh's devices"
            )
    return mesh


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())


def plan_layout(olympuspr: Olympuspr, in_shardings, out_shardings) -> SpmdLayout | None:
    """The layout of a program over several devices, or None for one device.

    `in_shardings` has one entry per parameter (constvars then invars):
    a Sharding asked for (by `jit(in_shardings=)` or an argument's own
    layout) or None (free: replicated); `out_shardings` one per result
    (None: XLA's propagation decides). A layout no PartitionSpec on the
    program's mesh can say becomes replicated (the argument is re-laid out)."""
    avals_in = [v.aval for v in olympuspr.constvars + olympuspr.invars]
    for api, shardings, avals in (
        ("jit in_shardings", in_shardings, avals_in),
        ("jit out_shardings", out_shardings, olympuspr.out_avals),
    ):
        for s, aval in zip(shardings, avals):
            if s is not None:
                s.shard_shape(aval.shape, api)  # ShardingShapeError: a misfit
    mesh = program_mesh(olympuspr, list(in_shardings) + list(out_shardings))
    if mesh is None or mesh.size == 1:
        return None
    named_in = [
        (s is not None and as_named(s, mesh, a.ndim)) or replicated(mesh)
        for s, a in zip(in_shardings, avals_in)
    ]
    named_out = [
        _typed_layout(a, mesh)
        if s is None
        else as_named(s, mesh, a.ndim) or replicated(mesh)
        for s, a in zip(out_shardings, olympuspr.out_avals)
    ]
    meshes = list(
        dict.fromkeys(
            [mesh]
            + [s.mesh for s in named_in]
            + [s.mesh for s in named_out if s is not None]
            + [s.mesh for s in program_shardings(olympuspr)]
        )
    )
    return SpmdLayout(
        tuple(mesh.devices.flat),
        named_in,
        named_out,
        avals_in,
        olympuspr.out_avals,
        meshes,
        mesh,
    )


def _typed_layout(aval, mesh: Mesh) -> NamedSharding | None:
    """An explicit-mode result's layout, from its type (None: XLA decides)."""
    typed = aval.sharding
    if typed is None or typed.mesh is None:
        return None
    if tuple(typed.mesh.axis_names) != mesh.axis_names:
        return None
    return NamedSharding(mesh, PartitionSpec(*typed.spec))


class ShardedExecutable:
    """A module from `build_module(..., layout=layout)` compiled for the
    layout's devices: call it with Arrays (or host values), each is laid out
    as its parameter asks, results come back as Arrays over the devices."""

    __slots__ = (
        "loaded",
        "in_shardings",
        "out_avals",
        "out_shardings",
        "text",
        "_handlers",
        "devices",
        "ordered",
        "processes",
        "waits",
        "collective",
    )

    def __init__(self, text: str, layout: SpmdLayout):
        self.devices = layout.devices
        self.processes = len({d.process_index for d in self.devices})
        self.text = text
        self.in_shardings = layout.in_shardings
        self.out_avals = layout.avals_out
        self.loaded = self._compile()
        self.out_shardings = self._result_shardings(layout.mesh, layout.out_shardings)
        self._handlers = [
            client.result_handler(aval, self.devices, s._tiling(aval.ndim).hlo_text())
            for aval, s in zip(self.out_avals, self.out_shardings)
        ]
        self.ordered = returns_ordering_token(
            text
        )  # host callbacks: a token comes last
        # as one device's Executable: wait only where a host callback's error
        # must be raised by the call, or effects come before what follows; a
        # call over several processes waits too (a lost peer raises there)
        self.waits = (
            self.ordered
            or host_callback.uses_host_callbacks(text)
            or self.processes > 1
        )
        self.collective = has_collectives(self.loaded)
        if self.ordered:
            self._handlers.append(
                client.result_handler(_TOKEN_AVAL, self.devices, "{replicated}")
            )

    def _compile(self):
        options = client.xc.CompileOptions()
        count = len(self.devices)
        options.num_replicas, options.num_partitions = 1, count
        # partition i runs on the i-th device of the layout (ids, not positions)
        options.device_assignment = client.xc.DeviceAssignment.create(
            np.array([[d.id for d in self.devices]])
        )
        build = options.executable_build_options
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
        build.allow_spmd_sharding_propagation_to_output = [True]
        try:
            return compiler.compile_and_load(
                client.get_client(),
                self.text,
                client.xc.DeviceList(self.devices),
                options,
            )
        except (
            Exception
        ) as err:  # XLA's own errors come as RuntimeError / XlaRuntimeError
            raise LoweringError(
                f"XLA could not compile the program for {count} devices: {err}\n"
                f"--- StableHLO ---\n{self.text}"
            ) from None

    def _result_shardings(self, mesh: Mesh, asked) -> list[Sharding]:
        """Asked-for layouts, else XLA's choice (as a NamedSharding when one
        on the program's mesh says the same)."""
        chosen = self.loaded.get_output_shardings()
        out = []
        for aval, want, proto in zip(self.out_avals, asked, chosen):
            if want is not None:
                out.append(want)
                continue
            hlo = client.xc.HloSharding.from_proto(proto)
            found = GSPMDSharding(
                self.devices, tiling_of_hlo(hlo, aval.ndim, len(self.devices))
            )
            named = as_named(found, mesh, aval.ndim)
            out.append(found if named is None else spelled_for_rank(named, aval.ndim))
        return out

    def call(self, args: list) -> list[Array]:
        buffers = [
            x._live_global()
            if type(x) is Array and x._sharding is s
            else put(x, s)._live_global()
            for x, s in zip(args, self.in_shardings)
        ]
        if self.processes > 1:  # a dead process would keep the collectives waiting
            return client.wait_for_peers(
                f"a program over {len(self.devices)} devices of {self.processes} "
                f"processes",
                lambda: self._run(buffers),
            )
        return self._run(buffers)

    def _run(self, buffers: list) -> list[Array]:
        with host_callback.callback_errors():
            results, done = _launch(self, buffers)
            outs = [
                placed_array(buf, aval, s)
                for buf, aval, s in zip(results, self.out_avals, self.out_shardings)
            ]
            if self.waits:
                host_callback.wait_for(done, outs)
        return outs


_COLLECTIVE_OPS = (
    "all-reduce",
    "all-gather",
    "all-to-all",
    "collective-permute",
    "reduce-scatter",
    "collective-broadcast",
)


def has_collectives(loaded) -> bool:
    """Whether the partitioned program rendezvous between devices (looked up
    once per executable, in the HLO XLA's partitioner produced)."""
    try:
        modules = loaded.hlo_modules()
    except Exception:  # no HLO to read: assume the worst
        return True
    text = "".join(m.to_string() for m in modules)
    return any(f" {op}(" in text or f" {op}-start(" in text for op in _COLLECTIVE_OPS)


_launch_lock = threading.Lock()
# The last program with collectives launched: (its devices, its token, its
# result buffers), or None.
_in_flight: list = [None]


def _launch(exe: ShardedExecutable, buffers: list) -> tuple[list, object]:
    """Starts `exe`: its result buffers and its token (whose wait ends with
    the program). A program with collectives starts at once when it reads a
    result of the last one launched (on each device its part then runs after
    that one's part, which has passed all of that program's rendezvous);
    otherwise it first waits for the last one to finish (the module
    docstring says why). Programs without collectives start at once."""
    if not exe.collective:
        return _execute(exe, buffers)
    with _launch_lock:
        last = _in_flight[0]
        if last is not None and not _follows(exe, buffers, last):
            try:
                last[1].block_until_ready()
            except Exception:  # its failure belongs to its own results
                pass
        outs, token = _execute(exe, buffers)
        _in_flight[0] = (exe.devices, token, outs)
    return outs, token


def _execute(exe: ShardedExecutable, buffers: list) -> tuple[list, object]:
    results = exe.loaded.execute_sharded(buffers, with_tokens=True)
    token = results.consume_token()
    return results.consume_with_handlers(exe._handlers), token


def _follows(exe: ShardedExecutable, buffers: list, last: tuple) -> bool:
    """Whether every device's part of `exe` waits for that device's part of
    the program `last`: same devices, and an argument is one of its results."""
    devices, _, outs = last
    if devices != exe.devices:
        return False
    return any(b is o for b in buffers for o in outs)


# ---- eager operations on arrays over several devices -------------------------------
# registered (for clear_caches) when first filled: a one-device process never is
_eager_sharded: dict = {}


def spans_devices(x) -> bool:
    """Whether `x` is an Array laid out over several devices."""
    return (
        type(x) is Array
        and x._global is not None
        and x._buf is None
        and x._sharding.num_devices > 1
    )


def apply_sharded(primitive, args: tuple, avals: tuple, out_avals: list, params):
    """Runs one primitive eagerly on operands some of which span several
    devices, as JAX does (None if no mesh describes their layouts): one SPMD program over their mesh, the operands kept
    where they are and the results laid out as XLA's propagation chooses
    (elementwise ops keep the layout, reductions drop reduced axes)."""
    shardings = tuple(x.sharding if spans_devices(x) else None for x in args)
    key = (primitive, avals, tuple(params.items()), shardings)
    exe = _eager_sharded.get(key)
    if exe is None:
        invars = [Var(a) for a in avals]
        outvars = [Var(a) for a in out_avals]
        program = Olympuspr(
            [], invars, [Eqn(primitive, params, invars, outvars)], outvars
        )
        layout = plan_layout(program, list(shardings), [None] * len(outvars))
        if layout is None:  # no mesh says the layouts (an XLA-chosen one)
            return None
        exe = ShardedExecutable(
            build_module(program, primitive.name, layout=layout), layout
        )
        if len(_eager_sharded) > 512:  # bounded: a new layout per call must not leak
            _eager_sharded.clear()
        caches.register("eager sharded executables", _eager_sharded)
        _eager_sharded[key] = exe
    outs = exe.call(list(args))
    return outs if primitive.multiple_results else outs[0]


def emit_inspect_sharding(emitter, value: str, aval, report, keep: list) -> None:
    """Lowers debug.inspect_array_sharding of `value`: `report(sharding)`
    with its layout. On one device it is known now (replicated, a
    GSPMDSharding as JAX says it); over several, XLA's partitioner calls
    back with the one it chose, as a NamedSharding on the program's mesh
    (Auto axes, as JAX's). The function handed to XLA goes into `keep`,
    which must live until the program is compiled."""
    layout, ndim = module_layout(), aval.ndim
    if layout is None or len(layout.devices) == 1:
        devices = layout.devices if layout is not None else [client.default_device()]
        report(GSPMDSharding(devices, whole_tiling(ndim)))
        return
    mesh = layout.mesh
    auto = Mesh(mesh.devices, mesh.axis_names, (AxisType.Auto,) * len(mesh.axis_names))

    def chosen(hlo) -> None:
        if hlo.is_manual():  # inside shard_map: each device's own piece, as JAX
            return report(NamedSharding(auto, PartitionSpec()))
        count = len(layout.devices)
        tiled = GSPMDSharding(layout.devices, tiling_of_hlo(hlo, ndim, count))
        report(as_named(tiled, auto, ndim) or tiled)

    from jaxlib import _jax  # (the partitioner's callback, as a config string)

    keep.append(chosen)
    key = "".join(f"\\{b:02X}" for b in _jax.encode_inspect_sharding_callback(chosen))
    emitter.op_typed(
        "stablehlo.custom_call",
        [value],
        [tensor_type(aval)],
        f'call_target_name = "InspectSharding", api_version = 1 : i32, '
        f'has_side_effect = true, backend_config = "{key}"',
    )
