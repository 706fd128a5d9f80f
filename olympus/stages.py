"""The stages of compiling a function: trace, lower, compile, each inspectable.

    >>> f, x = jnp.sin, jnp.zeros(3)
    >>> traced = olympus.jit(f).trace(x)  # Traced: the olympuspr
    >>> lowered = traced.lower()  # Lowered: the StableHLO module
    >>> compiled = lowered.compile()  # Compiled: an XLA executable
    >>> compiled(x)  # runs it; no tracing, no cache lookup
    Array([0., 0., 0.], dtype=float32)

This is the one route to an executable. `jit` (olympus.api) splits each call
once into a `Call`, whose `key` is the call's signature; on a miss it runs
these stages and keeps the `Compiled` under that key. Static arguments are
fixed at `trace` time; `Compiled` takes the others, and deletes the donated
ones after running.

For `jit(f, tiered=True)`, `BackgroundCompile` runs `lower()` and
`compile()` of a traced program on a thread while the caller interprets it.

Each stage keeps the one before it, so a user (or the `inspect` command) can
look at every representation of one program. Arguments may be arrays or
`olympus.ShapeDtypeStruct`s: only shapes and dtypes matter until the call.

With `olympus_explain_cache_misses` on, a call that misses a function with
compiled signatures logs what changed since the closest one (fewest
differences: tree structure, shape, dtype or weak type of an argument leaf,
static argument value, x64 mode) to the logger "olympus" at WARNING level,
with the user's file:line of the call, e.g.

    jit(step) recompiles for a call at train.py:12 (main): x: shape (3,) -> (4,)
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import inspect
import logging
import queue
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from olympus.backends.xla import array as array_module
from olympus.backends.xla.array import Array, default_sharding, put
from olympus.backends.xla.dispatch import Executable, buffer_of, check_array_sizes
from olympus.backends.xla.lowering import build_module, float0_consts_inlined
from olympus.backends.xla.sharding import (
    NamedSharding,
    PartitionSpec,
    arguments_mesh,
    explicit_aval,
    flat_shardings,
)
from olympus.backends.xla.spmd import ShardedExecutable, SpmdLayout, plan_layout
from olympus.ir import dtypes
from olympus import config
from olympus.ir.core import ClosedOlympuspr, ShapedArray, Var, subolympusprs
from olympus.optimizer import ALGEBRAIC_PASSES, optimize
from olympus.prng import structs_of_keys
from olympus.tracer.core import aval_of, user_source_info
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.functions import (
    ShapeDtypeStruct,
    arg_names,
    argnums_partial,
    dynamic_argnums,
    positional_names,
    trace_pytree_function,
)
from olympus.tracer.pytree import LEAF, tree_flatten, tree_paths, tree_unflatten
from olympus.tracer.refs import Ref

logger = logging.getLogger("olympus")


# ---- a call, split once ---------------------------------------------------------
class Call:
    """One call of a staged function, split once: its dynamic arguments (all
    but the static ones), their `leaves`, and `key`, the call's signature
    (tree of the dynamic arguments, their avals, the static arguments'
    values, x64 mode, and the shardings of arguments placed on other devices
    than the default one, or None). One signature, one compiled program."""

    __slots__ = (
        "args",
        "dyn_argnums",
        "dyn_args",
        "dyn_kwargs",
        "fun",
        "key",
        "kwargs",
        "leaves",
        "static_kwargs",
    )

    def __init__(
        self,
        fun,
        args,
        kwargs,
        dyn_argnums,
        dyn_args,
        static_kwargs,
        dyn_kwargs,
        leaves,
        key,
    ):
        self.fun, self.args, self.kwargs = fun, args, kwargs
        self.dyn_argnums, self.dyn_args = dyn_argnums, dyn_args
        self.static_kwargs, self.dyn_kwargs = static_kwargs, dyn_kwargs
        self.leaves, self.key = leaves, key

    def dyn_fun(self) -> Callable:
        """`fun` of the dynamic arguments, the static ones fixed (made only
        when tracing: a cache hit needs just the key)."""
        return argnums_partial(
            self.fun, self.dyn_argnums, self.args, self.static_kwargs
        )[0]


@functools.lru_cache(maxsize=256)
def argument_positions(n_args: int, static_argnums: tuple) -> tuple[tuple, tuple]:
    """The dynamic and the static positions of a call with `n_args` arguments."""
    dyn = dynamic_argnums(n_args, static_argnums)
    return dyn, tuple(i for i in range(n_args) if i not in dyn)


def split_call(
    fun: Callable,
    name: str,
    args: tuple,
    kwargs: dict,
    static_argnums=(),
    static_argnames=(),
) -> Call:
    """Splits `fun(*args, **kwargs)` into its static and dynamic arguments
    (static_argnums/static_argnames completed as jit does) and its signature."""
    if not static_argnums and not static_argnames:
        dyn_argnums, dyn_args, static_kw, dyn_kwargs = (
            range(len(args)),
            args,
            {},
            kwargs,
        )
        statics = ()
    else:
        dyn_argnums, static_pos = argument_positions(len(args), tuple(static_argnums))
        static_kw, dyn_kwargs = {}, kwargs
        if kwargs:
            static_kw = {k: v for k, v in kwargs.items() if k in static_argnames}
            dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
        dyn_args = tuple([args[i] for i in dyn_argnums])
        # (position or name, value, type): as JAX's, 2 and 2.0 are different
        # static arguments (x * 2 keeps an int x's dtype, x * 2.0 does not)
        statics = tuple([(i, args[i], type(args[i])) for i in static_pos])
        statics += tuple([(k, v, type(v)) for k, v in sorted(static_kw.items())])
        try:
            hash(statics)
        except TypeError as err:
            raise ValueError(
                f"jit of {name}: static arguments must be hashable: {err}"
            ) from None
    leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
    try:
        avals = tuple([x.aval if type(x) is Array else aval_of(x) for x in leaves])
    except OlympusTypeError:
        raise _not_an_array_error(fun, name, dyn_argnums, dyn_args, dyn_kwargs)
    placed = None
    if array_module.layouts_in_use:  # skip the scan while every Array is plain
        placed = [
            x._sharding
            if type(x) is Array
            else x.sharding
            if type(x) is LaidOutStruct
            else None
            for x in leaves
        ]
        placed = None if placed.count(None) == len(placed) else tuple(placed)
    key = (in_tree, avals, statics, dtypes.x64_enabled(), compile_settings(), placed)
    return Call(
        fun, args, kwargs, dyn_argnums, dyn_args, static_kw, dyn_kwargs, leaves, key
    )


class LaidOutStruct(ShapeDtypeStruct):
    """A ShapeDtypeStruct argument of jit's `trace`/`lower` or eval_shape
    naming a NamedSharding: traced laid out so, as JAX traces it (on Explicit
    axes its type holds the layout; a lowered program takes it so)."""

    __slots__ = ()

    @property
    def aval(self) -> ShapedArray:
        return explicit_aval(super().aval, self.sharding)


def laid_out_structs(tree):
    """`tree` with each ShapeDtypeStruct that names a NamedSharding a
    LaidOutStruct (placed, as `split_call` sees it)."""
    leaves, shape = tree_flatten(tree)
    if not any(_names_layout(x) for x in leaves):
        return tree
    laid = [
        LaidOutStruct(x.shape, x.dtype, x.weak_type, sharding=x.sharding)
        if _names_layout(x)
        else x
        for x in leaves
    ]
    array_module.layouts_in_use = True  # split_call then reads their layouts
    return tree_unflatten(shape, laid)


def _names_layout(x) -> bool:
    return type(x) is ShapeDtypeStruct and isinstance(x.sharding, NamedSharding)


def _not_an_array_error(fun, name, dyn_argnums, dyn_args, dyn_kwargs):
    """The argument (by name and path) that is no array, and how to make it static."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    named = [
        (i, params[i] if i < len(params) else f"args[{i}]", a)
        for i, a in zip(dyn_argnums, dyn_args)
    ]
    named += [(None, k, v) for k, v in dyn_kwargs.items()]
    for position, arg_name, value in named:
        leaves, _ = tree_flatten(value)
        for path, leaf in zip(tree_paths(value, arg_name), leaves):
            try:
                aval_of(leaf)
            except OlympusTypeError:
                if isinstance(leaf, Ref):
                    return _ref_argument_error(name, arg_name)
                fix = f"static_argnames=({arg_name!r},)"
                if position is not None:
                    fix = f"static_argnums=({position},) or {fix}"
                where = "" if path == arg_name else f" (at {path})"
                return OlympusTypeError(
                    f"jit of {name}: argument {arg_name}{where} is a "
                    f"{type(leaf).__name__} ({leaf!r:.60}), not an array; jit traces "
                    f"its arguments as arrays. An argument that is not one (a "
                    f"string, a function, a config object) must be static: "
                    f"jit({name}, {fix}); it is then part of the cache key"
                )
    return OlympusTypeError(f"jit of {name}: an argument is not an array")


def _ref_argument_error(name: str, arg_name: str) -> OlympusTypeError:
    """jit(f).trace/lower with a Ref: only a call of jit(f) threads refs."""
    return OlympusTypeError(
        f"jit of {name}: argument {arg_name} is a Ref; olympus threads refs "
        f"through a call of the jitted function only, not through its "
        f".trace/.lower stages. Call jit({name})(...) with the Ref, or see "
        f"its program with make_olympuspr({name})(...)"
    )


# The options that change what a traced program compiles to: part of every
# jit signature key, so changing one recompiles instead of reusing.
COMPILE_OPTIONS = (
    "olympus_optimize",
    "olympus_optimize_stable",
    "olympus_default_matmul_precision",
)


def compile_settings() -> tuple:
    return tuple([config.read(name) for name in COMPILE_OPTIONS])


def optimized(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """The program that is lowered for `closed`: after olympus.optimizer's
    passes when olympus_optimize is on (the stable rewrites only with
    olympus_optimize_stable), else `closed` itself."""
    if not config.read("olympus_optimize"):
        return closed
    stable = config.read("olympus_optimize_stable")
    return optimize(closed, None if stable else ALGEBRAIC_PASSES)


def trace_call(
    call: Call,
    name: str,
    donate_argnums: tuple = (),
    in_shardings=None,
    out_shardings=None,
) -> Traced:
    """The first stage of one call: its dynamic arguments traced into a program.

    `in_shardings` (a pytree prefix of the dynamic positional arguments) and
    `out_shardings` (of the outputs) are jit's; an argument without one keeps
    the layout it has when it is an Array placed on other devices."""
    with arguments_mesh(call.key[-1]):  # typeof inside: the arguments' mesh
        closed, in_tree, out_tree = trace_pytree_function(
            call.dyn_fun(), call.dyn_args, call.dyn_kwargs, "jit"
        )
    asked = flat_shardings(in_shardings, tuple(call.dyn_args), "jit in_shardings")
    asked += [None] * (len(call.leaves) - len(asked))  # keyword arguments
    placed = call.key[-1] or [None] * len(call.leaves)
    shardings_in = [a if a is not None else p for a, p in zip(asked, placed)]
    outs = tree_unflatten(out_tree, [0] * len(closed.out_avals))
    shardings_out = flat_shardings(out_shardings, outs, "jit out_shardings")
    return Traced(
        closed,
        in_tree,
        out_tree,
        name,
        _donated_leaves(call, donate_argnums),
        shardings_in,
        shardings_out,
    )


def _donated_leaves(call: Call, donate_argnums: tuple) -> tuple[int, ...]:
    """Indices among the call's leaves of the donated arguments' leaves."""
    if not donate_argnums:
        return ()
    n = len(call.args)
    donated = {i % n if i < 0 else i for i in donate_argnums}
    start, leaves = 0, []
    for pos, arg in zip(call.dyn_argnums, call.dyn_args):
        size = len(tree_flatten(arg)[0])
        if pos in donated:
            leaves += range(start, start + size)
        start += size
    # a donated parameter passed by keyword is donated too, as in JAX
    names = positional_names(call.fun) or []
    donated_names = {names[i] for i in donated if i < len(names)}
    for name in sorted(call.dyn_kwargs):  # the order the kwargs dict flattens in
        size = len(tree_flatten(call.dyn_kwargs[name])[0])
        if name in donated_names:
            leaves += range(start, start + size)
        start += size
    return tuple(leaves)


# ---- the stages -----------------------------------------------------------------
def _shape_structs(avals, tree, mesh=None):
    """The structs of `avals` in `tree`; a key array's is of its key dtype (JAX's).
    Where the arguments lie on `mesh` (one with Explicit axes), each struct's
    `sharding=` is its type's layout on it, as JAX's out_info (unsplit:
    every dimension None)."""
    structs = []
    for a in avals:
        sharding = None
        if mesh is not None:
            spec = tuple(a.sharding.spec) if a.sharding is not None else ()
            spec = (*spec[: a.ndim], *(None,) * (a.ndim - len(spec)))
            sharding = NamedSharding(mesh, PartitionSpec(*spec))
        structs.append(
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type, sharding=sharding)
        )
    return structs_of_keys(tree_unflatten(tree, structs))


def _explicit_mesh(shardings):
    """The mesh of the first NamedSharding in `shardings` with Explicit axes
    (where an argument lies: its layout is part of the program's types)."""
    for s in shardings:
        mesh = getattr(s, "mesh", None)
        if isinstance(s, NamedSharding) and mesh.abstract_mesh.explicit_axes:
            return mesh
    return None


class Traced:
    """A function traced for one argument signature; `donated` are the
    indices of the argument leaves whose buffers the program may reuse;
    `in_shardings` / `out_shardings` the layout asked for each argument and
    output leaf (None: free), which may spread the program over a mesh."""

    def __init__(
        self,
        closed: ClosedOlympuspr,
        in_tree,
        out_tree,
        name: str,
        donated=(),
        in_shardings=None,
        out_shardings=None,
    ):
        self.olympuspr = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.name = name
        self.donated = tuple(donated)
        self.in_shardings = in_shardings or [None] * len(closed.in_avals)
        self.out_shardings = out_shardings or [None] * len(closed.out_avals)
        # the Explicit mesh the arguments lie on (out_info's layouts), if any
        self.layout_mesh = _explicit_mesh(self.in_shardings)

    @classmethod
    def from_olympuspr(cls, closed: ClosedOlympuspr, name: str = "main") -> Traced:
        """The stage for a program made elsewhere (parsed, loaded, transformed):
        its compiled form takes the invars positionally and returns a list.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "f.olympuspr")
        >>> olympus.ir.save(olympus.make_olympuspr(jnp.sin)(jnp.float32(0.0)), path)
        >>> traced = olympus.stages.Traced.from_olympuspr(olympus.ir.load(path))
        >>> traced.lower().compile()(jnp.float32(np.pi / 2))
        [Array(1., dtype=float32)]
        """
        n_in, n_out = len(closed.olympuspr.invars), len(closed.olympuspr.outvars)
        _, in_tree = tree_flatten(((0,) * n_in, {}))
        _, out_tree = tree_flatten([0] * n_out)
        return cls(closed, in_tree, out_tree, name)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.olympuspr.in_avals

    def meshless_outputs(self) -> list[bool]:
        """Per output, whether JAX's type for it has no mesh when the
        arguments have none: passed from an argument through one-operand
        equations only (sin, transpose, reshape, convert keep their
        operand's type). An equation of several operands, of none, or
        holding a program types its result on the `set_mesh` mesh. Under set_mesh JAX lays the
        first kind out as XLA chooses (`P()`), the second as its type says
        (`P(None, ...)`)."""
        olympuspr = self.olympuspr.olympuspr
        meshless = set(olympuspr.invars)
        for eqn in olympuspr.eqns:
            (operand, *more) = eqn.invars or (None,)
            passes = not more and not any(True for _ in subolympusprs(eqn.params))
            if passes and isinstance(operand, Var) and operand in meshless:
                meshless.update(eqn.outvars)
        return [isinstance(v, Var) and v in meshless for v in olympuspr.outvars]

    @property
    def out_info(self):
        """The outputs' shapes and dtypes (and layouts on an Explicit mesh,
        which a traced program knows without its devices: an AbstractMesh,
        as JAX's), as a pytree of ShapeDtypeStruct."""
        mesh = self.layout_mesh
        mesh = None if mesh is None else mesh.abstract_mesh
        return _shape_structs(self.olympuspr.out_avals, self.out_tree, mesh)

    def lower(self, program: ClosedOlympuspr | None = None) -> Lowered:
        """The StableHLO stage of the optimized program (see `optimized`;
        `program`: that program, when the caller has made it already)."""
        if program is None:
            program = optimized(self.olympuspr)
        program = float0_consts_inlined(program)
        olympuspr = program.olympuspr
        n_consts = len(olympuspr.constvars)
        donated = tuple(n_consts + i for i in self.donated)  # program parameters
        layout = plan_layout(
            olympuspr, [None] * n_consts + list(self.in_shardings), self.out_shardings
        )
        text = build_module(olympuspr, self.name, donated, layout=layout)
        return Lowered(self, text, program, layout)

    def _repr_html_(self) -> str:
        return self.olympuspr._repr_html_()

    def __repr__(self) -> str:
        return f"Traced({self.name})"


def _out_info_on_devices(traced: Traced):
    """`traced.out_info` with its layouts on the mesh's devices, as a lowered
    or compiled stage's (JAX's)."""
    avals = traced.olympuspr.out_avals
    return _shape_structs(avals, traced.out_tree, traced.layout_mesh)


class Lowered:
    """A traced function lowered to a StableHLO module, ready to compile."""

    def __init__(
        self,
        traced: Traced,
        text: str,
        program: ClosedOlympuspr,
        layout: SpmdLayout | None = None,
    ):
        self.traced = traced
        self._text = text
        self.program = program
        self._layout = layout  # None: the program runs on the default device
        # (a jit function's executables by signature, this one's key): where
        # `compile()` looks first and keeps what it compiles (JitFunction.lower)
        self.shared_executables: tuple | None = None

    @property
    def olympuspr(self) -> ClosedOlympuspr:
        """The program this module was lowered from: the traced one after the
        optimizer's passes (`traced.olympuspr` is the program as traced)."""
        return self.program

    @property
    def out_info(self):
        return _out_info_on_devices(self.traced)

    def as_text(
        self, dialect: str | None = None, *, debug_info: bool = False,
        generic: bool = False,
    ) -> str:  # fmt: skip
        """The StableHLO module that XLA compiles, in MLIR's readable form
        (`generic=True`: the generic form olympus emits, op names quoted;
        `debug_info=True`: with each op's location, as JAX's signature has it).
        `dialect` is JAX's argument: only "stablehlo" (the default) exists here."""
        if dialect not in (None, "stablehlo"):
            raise ValueError(
                f"Lowered.as_text: dialect {dialect!r} is not available; olympus "
                "lowers to 'stablehlo' only (Compiled.as_text() gives XLA's HLO)"
            )
        if generic:
            return self._text
        from olympus.backends.xla.compiler import pretty_stablehlo

        return pretty_stablehlo(self._text, debug_info=debug_info)

    def compiler_ir(self, dialect: str | None = None):
        """The lowered module as JAX's `Lowered.compiler_ir` gives it: an MLIR
        module for "stablehlo" (the default), an XlaComputation for "hlo"
        (`.as_hlo_text()`); other dialects raise ValueError."""
        from olympus.backends.xla.compiler import compiler_ir

        return compiler_ir(self._text, dialect)

    def compile(self) -> Compiled:
        """The executable; ArrayTooLargeError first if one of the program's
        arrays could not fit in this machine's memory."""
        shared = self.shared_executables
        if shared is not None and shared[0].get(shared[1]) is not None:
            return shared[0][shared[1]]
        closed = self.program
        check_array_sizes(closed.olympuspr, self.traced.name)
        with compile_feedback(self.traced.name, closed.in_avals):
            if self._layout is not None:
                executable = ShardedExecutable(self._text, self._layout)
            else:
                executable = Executable(self._text, closed.out_avals)
        compiled = Compiled(self.traced, executable, closed.consts)
        if shared is not None:
            compiled = shared[0].setdefault(shared[1], compiled)
        return compiled

    def _repr_html_(self) -> str:
        from html import escape

        return f'<pre class="stablehlo">{escape(self.as_text())}</pre>'

    def __repr__(self) -> str:
        return f"Lowered({self.traced.name})"


@contextlib.contextmanager
def compile_feedback(name: str, in_avals):
    """What a user sees of one XLA compile: with `olympus_log_compiles`, a
    WARNING on the 'olympus' logger once it is done (function, argument types,
    seconds); while a compile runs past `olympus_compile_progress_secs`, a line
    on stderr now and then (by default only when stderr is a terminal), so a
    slow compile is never mistaken for a hang."""
    signature = ", ".join(a.str_short() for a in in_avals)
    start = time.perf_counter()
    progress = _start_progress(name, signature, start)
    try:
        yield
    finally:
        seconds = time.perf_counter() - start
        if progress is not None:
            progress.set()
            if seconds >= config.read("olympus_compile_progress_secs"):
                sys.stderr.write(f"olympus: compiled jit({name}) in {seconds:.1f} s\n")
        if config.read("olympus_log_compiles"):
            logger.warning(
                "Compiled jit(%s) for (%s) in %.3f s", name, signature, seconds
            )


def _start_progress(name: str, signature: str, start: float):
    """A thread that writes the progress lines; an Event that stops it (None
    when progress lines are off)."""
    which = config.read("olympus_compile_progress")
    if which == "off" or (which == "auto" and not _stderr_is_terminal()):
        return None
    every = max(float(config.read("olympus_compile_progress_secs")), 0.01)
    done = threading.Event()

    def report():
        while not done.wait(every):
            sys.stderr.write(
                f"olympus: compiling jit({name}) for ({signature[:200]}): "
                f"{time.perf_counter() - start:.0f} s so far\n"
            )
            sys.stderr.flush()

    threading.Thread(
        target=report, name="olympus-compile-progress", daemon=True
    ).start()
    return done


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed by the program
        return False


class Compiled:
    """An XLA executable for one argument signature; call it like the function
    (without the static arguments, which were fixed when tracing).

    `jit` keeps one per signature and calls `run` / `run_buffers` directly
    (its cache key already vouches for the arguments' types). A program over
    several devices (`sharded`) takes Arrays, not buffers, and never runs
    through `run_buffers`."""

    __slots__ = (
        "const_bufs",
        "donated",
        "executable",
        "out_tree",
        "sharded",
        "single_out",
        "traced",
    )

    def __init__(self, traced: Traced, executable, consts: list):
        self.traced = traced
        self.executable = executable
        self.sharded = isinstance(executable, ShardedExecutable)
        if self.sharded:  # laid out once, as their parameters ask
            self.const_bufs = [
                put(c, s) for c, s in zip(consts, executable.in_shardings)
            ]
        else:
            self.const_bufs = [buffer_of(c) for c in consts]
        self.out_tree = traced.out_tree
        self.single_out = traced.out_tree is LEAF and len(executable.out_avals) == 1
        self.donated = traced.donated

    @property
    def out_info(self):
        return _out_info_on_devices(self.traced)

    @property
    def input_shardings(self):
        """Where the program takes each argument, as `(args, kwargs)` of
        Shardings (JAX's): the one device's, or each parameter's layout."""
        n = len(self.traced.olympuspr.in_avals)
        if self.sharded:
            shardings = list(self.executable.in_shardings)[-n:] if n else []
        else:
            shardings = [default_sharding()] * n
        return tree_unflatten(self.traced.in_tree, shardings)

    @property
    def output_shardings(self):
        """Where the program puts each output (JAX's): the one device, or the
        layout asked for or XLA's partitioner chose, in the outputs' tree."""
        n = len(self.traced.olympuspr.out_avals)
        if self.sharded:
            shardings = list(self.executable.out_shardings)
        else:
            shardings = [default_sharding()] * n
        return tree_unflatten(self.out_tree, shardings)

    def __call__(self, *args, **kwargs) -> Any:
        leaves, in_tree = tree_flatten((args, kwargs))
        self._check_arguments(leaves, in_tree)
        result = self.run(leaves)
        self.donate(leaves)
        return result

    def run(self, leaves: list) -> Any:
        """The outputs for these argument leaves (Arrays, NumPy arrays, scalars)."""
        if self.sharded:
            outs = self.executable.call(self.const_bufs + list(leaves))
            return tree_unflatten(self.out_tree, outs)
        try:
            return self.run_buffers(
                [x._buf if type(x) is Array else buffer_of(x) for x in leaves]
            )
        except TypeError:  # a deleted Array's buffer is None: buffer_of says so
            return self.run_buffers([buffer_of(x) for x in leaves])

    def run_buffers(self, buffers: list) -> Any:
        if self.const_bufs:
            buffers = self.const_bufs + buffers
        if self.single_out:
            return self.executable.call_one(buffers)
        return tree_unflatten(self.out_tree, self.executable.call(buffers))

    def donate(self, leaves: list) -> None:
        """Deletes the donated argument Arrays: their buffers now belong to the outputs."""
        for i in self.donated:
            if isinstance(leaves[i], Array):
                leaves[i].delete()

    def _check_arguments(self, leaves, in_tree) -> None:
        traced = self.traced
        if in_tree != traced.in_tree:
            raise OlympusTypeError(
                f"compiled {traced.name}: called with arguments structured as {in_tree}, "
                f"compiled for {traced.in_tree}"
            )
        for i, (x, want) in enumerate(zip(leaves, traced.in_avals)):
            got = aval_of(x)
            if got.shape != want.shape or got.dtype != want.dtype:
                raise OlympusTypeError(
                    f"compiled {traced.name}: argument {i} is {got.str_short()}, compiled "
                    f"for {want.str_short()}; trace and compile again for new types"
                )

    def as_text(self) -> str:
        """XLA's optimised HLO for this executable."""
        return self.executable.loaded.get_hlo_text()

    def cost_analysis(self) -> dict:
        """XLA's estimates: 'flops', 'bytes accessed', ... (keys as XLA names them)."""
        return dict(self.executable.loaded.cost_analysis())

    def memory_analysis(self):
        """XLA's buffer sizes: argument/output/temp/generated-code sizes in bytes."""
        return self.executable.loaded.get_compiled_memory_stats()

    def __repr__(self) -> str:
        return f"Compiled({self.traced.name})"


class BackgroundCompile:
    """Lowers and compiles `traced` (its optimized `program`, which the
    interpreter runs meanwhile) on olympus's background-compile thread once
    `start`ed, for tiered execution. `done` is set when it has finished, then
    `on_done(self)` runs on that thread; `result()` waits and gives the
    `Compiled`, or raises the exception the compile raised (kept, never lost:
    the same one `traced.lower().compile()` raises in the caller's thread).

    One daemon thread compiles the started programs one at a time, in order:
    a loop over many new shapes queues their compiles instead of starting as
    many concurrent compilers."""

    def __init__(self, traced: Traced, program: ClosedOlympuspr, on_done=None):
        self.traced, self.program = traced, program
        self.on_done = on_done
        self.origin = None  # the user's line of the call that started it
        self.done = threading.Event()
        self.compiled: Compiled | None = None
        self.error: BaseException | None = None
        self.seconds = 0.0
        self._queued = False

    def start(self) -> None:
        """Queues the compile (once; later calls do nothing)."""
        global _worker
        with _worker_lock:
            if self._queued:
                return
            self._queued = True
            if _worker is None:
                _worker = threading.Thread(
                    target=_compile_queued,
                    name="olympus background compile",
                    daemon=True,
                )
                _worker.start()
        _queue.put(self)

    def _compile(self) -> None:
        start = time.perf_counter()
        try:
            self.compiled = self.traced.lower(self.program).compile()
        except BaseException as err:  # raised by result() in the caller's thread
            self.error = err
        finally:
            self.seconds = time.perf_counter() - start
            self.done.set()
        if self.on_done is not None:
            try:
                self.on_done(self)
            except Exception:  # the compile thread must go on compiling
                logger.exception("olympus: a background compile's on_done failed")

    def result(self, timeout: float | None = None) -> Compiled:
        """The Compiled stage, once the thread is done (TimeoutError if not
        done within `timeout` seconds); the compile's exception if it failed."""
        if not self.done.wait(timeout):
            raise TimeoutError(f"compile of {self.traced.name} still running")
        if self.error is not None:
            raise self.error
        return self.compiled

    def __repr__(self) -> str:
        state = "failed" if self.error else "done" if self.done.is_set() else "running"
        return f"BackgroundCompile({self.traced.name}, {state})"


def weak_callback(method, *args) -> Callable:
    """An `on_done` that calls `method(*args, pending)` while the method's
    object lives: a queued compile does not keep a dropped jitted function
    (and its caches) alive; its result is then dropped too."""
    ref = weakref.WeakMethod(method)

    def on_done(pending: BackgroundCompile) -> None:
        bound = ref()
        if bound is not None:
            bound(*args, pending)

    return on_done


_queue: queue.SimpleQueue = queue.SimpleQueue()
_worker_lock = threading.Lock()
_worker: threading.Thread | None = None
_compiling: list = []  # the BackgroundCompile on the thread now, if any
_exiting = False


def _compile_queued() -> None:
    while True:
        job = _queue.get()
        with _worker_lock:
            if _exiting:
                continue  # the interpreter is shutting down: compile nothing more
            _compiling.append(job)
        try:
            job._compile()
        finally:
            with _worker_lock:
                _compiling.clear()


@atexit.register
def _wait_for_compiles() -> None:
    """At exit, waits for the compile running now (the queued ones are
    dropped): a daemon thread stopped inside XLA's compiler aborts the
    process."""
    global _exiting
    with _worker_lock:
        _exiting = True
        running = list(_compiling)
    for job in running:
        job.done.wait()


# ---- explaining cache misses ------------------------------------------------------
def explain_miss(name: str, call: Call, previous) -> None:
    """With olympus_explain_cache_misses: logs what changed between `call` and
    the closest of the `previous` signatures (none: a first compile, no log)."""
    if not config.read("olympus_explain_cache_misses") or not previous:
        return
    names = arg_names(call.fun, len(call.args))
    paths = [p for i in call.dyn_argnums for p in tree_paths(call.args[i], names[i])]
    for key in sorted(call.dyn_kwargs):
        paths += tree_paths(call.dyn_kwargs[key], key)
    logger.warning(miss_message(name, call.key, list(previous), paths, names))


def aval_changes(path: str, old, new) -> list[str]:
    """What differs between two avals of the argument leaf `path`."""
    changes = []
    if old.shape != new.shape:
        changes.append(f"{path}: shape {old.shape} -> {new.shape}")
    if old.dtype != new.dtype:
        changes.append(f"{path}: dtype {old.dtype.name} -> {new.dtype.name}")
    if old.weak_type != new.weak_type:
        changes.append(
            f"{path}: weak type {old.weak_type} -> {new.weak_type} "
            f"(a Python scalar and an array of the same dtype differ)"
        )
    return changes


def static_changes(old: tuple, new: tuple, arg_names: list[str]) -> list[str]:
    """Static arguments whose value changed (or that appeared or vanished);
    positional ones are named by `arg_names` where it reaches."""
    old_values = {name: (v, t) for name, v, t in old}
    new_values = {name: (v, t) for name, v, t in new}
    changes = []
    absent = ("<absent>", None)
    for name in sorted(old_values.keys() | new_values.keys(), key=str):
        (before, old_type), (after, new_type) = (
            old_values.get(name, absent),
            new_values.get(name, absent),
        )
        if before != after or old_type is not new_type:
            label = name
            if isinstance(name, int):
                label = arg_names[name] if name < len(arg_names) else f"args[{name}]"
            shown = f"{before!r:.60} -> {after!r:.60}"
            if before == after:  # the type alone changed: 2 -> 2.0
                shown = (
                    f"{before!r:.50} ({old_type.__name__}) -> "
                    f"{after!r:.50} ({new_type.__name__})"
                )
            changes.append(f"static {label}: {shown}")
    return changes


def key_changes(
    old: tuple, new: tuple, paths: list[str], arg_names: list[str]
) -> list[str]:
    """Every difference between two signature keys (tree, avals, statics,
    x64, compile settings, layouts of placed arguments)."""
    (old_tree, old_avals, old_statics, old_x64, old_settings, old_placed) = old
    (new_tree, new_avals, new_statics, new_x64, new_settings, new_placed) = new
    changes = []
    if old_tree != new_tree:
        changes.append(f"tree structure of the arguments: {old_tree} -> {new_tree}")
    elif old_avals != new_avals:
        for path, a, b in zip(paths, old_avals, new_avals):
            changes += aval_changes(path, a, b)
    changes += static_changes(old_statics, new_statics, arg_names)
    if old_x64 != new_x64:
        changes.append(f"x64 mode: {old_x64} -> {new_x64}")
    for name, before, after in zip(COMPILE_OPTIONS, old_settings, new_settings):
        if before != after:
            changes.append(f"{name}: {before} -> {after}")
    if old_placed != new_placed and old_tree == new_tree:
        old_placed = old_placed or [None] * len(new_avals)
        new_placed = new_placed or [None] * len(new_avals)
        for path, a, b in zip(paths, old_placed, new_placed):
            if a != b:
                changes.append(
                    f"{path}: sharding {a or 'default device'} -> "
                    f"{b or 'default device'}"
                )
    return changes


def miss_message(
    fun_name: str, key: tuple, previous: list, paths: list[str], arg_names: list[str]
) -> str:
    """Why `key` missed the (non-empty) `previous` keys. `paths` name the
    argument leaves, `arg_names` the positional parameters."""
    closest = min(
        (key_changes(old, key, paths, arg_names) for old in previous), key=len
    )
    where = user_source_info()
    at = f" for a call at {where}" if where is not None else ""
    reasons = "; ".join(closest) or "no difference found in the signature"
    return (
        f"jit({fun_name}) recompiles{at}: {reasons} "
        f"(closest of {len(previous)} compiled signature(s))"
    )
