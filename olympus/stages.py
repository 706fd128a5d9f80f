"""Ahead-of-time stages of `jit`: trace, lower, compile, each inspectable.

    >>> f, x = jnp.sin, jnp.zeros(3)
    >>> traced = olympus.jit(f).trace(x)  # Traced: the olympuspr
    >>> lowered = traced.lower()  # Lowered: the StableHLO module
    >>> compiled = lowered.compile()  # Compiled: an XLA executable
    >>> compiled(x)  # runs it; no tracing, no cache lookup
    Array([0., 0., 0.], dtype=float32)

Each stage keeps the one before it, so a user (or the `inspect` command) can
look at every representation of one program. Arguments may be arrays or
`olympus.ShapeDtypeStruct`s: only shapes and dtypes matter until the call.
Static arguments are fixed at `trace` time; `Compiled` takes the others.
"""

from __future__ import annotations

from typing import Any

from olympus.ir.core import ClosedOlympuspr, ShapedArray
from olympus.tracer.core import aval_of
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer.pytree import tree_flatten, tree_unflatten


def _shape_structs(avals, tree):
    from olympus.api import ShapeDtypeStruct

    return tree_unflatten(tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in avals])


class Traced:
    """A jitted function traced for one argument signature."""

    def __init__(self, closed: ClosedOlympuspr, in_tree, out_tree, name: str):
        self.olympuspr = closed
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.name = name

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

    @property
    def out_info(self):
        """The outputs' shapes and dtypes, as a pytree of ShapeDtypeStruct."""
        return _shape_structs(self.olympuspr.out_avals, self.out_tree)

    def lower(self) -> Lowered:
        from olympus.backends.xla.lowering import build_module

        return Lowered(self, build_module(self.olympuspr.olympuspr, self.name))

    def _repr_html_(self) -> str:
        return self.olympuspr._repr_html_()

    def __repr__(self) -> str:
        return f"Traced({self.name})"


class Lowered:
    """A traced function lowered to a StableHLO module, ready to compile."""

    def __init__(self, traced: Traced, text: str):
        self.traced = traced
        self._text = text

    @property
    def olympuspr(self) -> ClosedOlympuspr:
        return self.traced.olympuspr

    @property
    def out_info(self):
        return self.traced.out_info

    def as_text(self, generic: bool = False) -> str:
        """The StableHLO module that XLA compiles, in MLIR's readable form
        (`generic=True`: the generic form olympus emits, op names quoted)."""
        if generic:
            return self._text
        from olympus.backends.xla.compiler import pretty_stablehlo

        return pretty_stablehlo(self._text)

    def compile(self) -> Compiled:
        from olympus.backends.xla.dispatch import Executable

        closed = self.traced.olympuspr
        return Compiled(self.traced, Executable(self._text, closed.out_avals))

    def _repr_html_(self) -> str:
        from html import escape

        return f'<pre class="stablehlo">{escape(self.as_text())}</pre>'

    def __repr__(self) -> str:
        return f"Lowered({self.traced.name})"


class Compiled:
    """An XLA executable for one argument signature; call it like the function
    (without the static arguments, which were fixed when tracing)."""

    def __init__(self, traced: Traced, executable):
        from olympus.backends.xla.dispatch import buffer_of

        self.traced = traced
        self.executable = executable
        self._const_bufs = [buffer_of(c) for c in traced.olympuspr.consts]

    @property
    def out_info(self):
        return self.traced.out_info

    def __call__(self, *args, **kwargs) -> Any:
        from olympus.backends.xla.dispatch import buffer_of

        leaves, in_tree = tree_flatten((args, kwargs))
        self._check_arguments(leaves, in_tree)
        outs = self.executable.call(self._const_bufs + [buffer_of(x) for x in leaves])
        return tree_unflatten(self.traced.out_tree, outs)

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


def trace_jit(jit_function, args: tuple, kwargs: dict) -> Traced:
    """Traces a JitFunction's function as `jit` would for these arguments."""
    from olympus.api import trace_pytree_function

    _, static_pos, dyn_args, dyn_kwargs = jit_function._split_static(args, kwargs)
    fun = jit_function._dyn_fun(args, kwargs, static_pos)
    closed, in_tree, out_tree = trace_pytree_function(fun, dyn_args, dyn_kwargs, "jit")
    return Traced(closed, in_tree, out_tree, jit_function.name)
