"""Lowering olympusprs to StableHLO, written as MLIR text.

We emit the generic operation form (`%3 = "stablehlo.add"(%1, %2) : (...) -> ...`),
which the XLA compiler parses directly: no MLIR Python objects are built, so
lowering is fast and its output is readable. Each primitive's lowering rule
lives beside the primitive (olympus/lax) and is registered in `lowering_rules`:

    rule(ctx: RuleContext, *operands: str, **params) -> str | list[str]

where operands and results are SSA value names and `ctx` knows the avals.

Ordered effects (olympus/ir/effects.py: host callbacks such as `debug.print`)
are chained by an ordering token, a `!stablehlo.token` value held in
`Emitter.token`: each effectful operation takes the current token and returns
the next. `build_module` starts the chain and returns its end as the last
result of `main`; control-flow lowerings whose sub-programs have effects carry
the token through their regions (a `case` returns it, a `while` carries it in
its state). Programs without effects have no token and lower as if none existed.
"""

from __future__ import annotations

import contextvars
import itertools
from typing import Callable, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ClosedOlympuspr, Literal, Olympuspr, ShapedArray, Var
from olympus.ir.effects import has_ordered_effect
from olympus.tracer.core import eval_trace, set_current_trace
from olympus.tracer.staging import DebugInfo, trace_to_olympuspr

lowering_rules: dict = {}

# Identity primitives whose params annotate their output value (olympus.hint):
# a rule reads them for its operands in `RuleContext.operand_hints`.
value_hint_primitives: set = set()

TOKEN_TYPE = "!stablehlo.token"


class LoweringError(TypeError):
    """A primitive has no lowering, or its lowering rejected its operands."""


_ELEMENT_TYPES = {
    dtypes.bool_: "i1",
    dtypes.int8: "i8",
    dtypes.int16: "i16",
    dtypes.int32: "i32",
    dtypes.int64: "i64",
    dtypes.uint8: "ui8",
    dtypes.uint16: "ui16",
    dtypes.uint32: "ui32",
    dtypes.uint64: "ui64",
    dtypes.float16: "f16",
    dtypes.bfloat16: "bf16",
    dtypes.float32: "f32",
    dtypes.float64: "f64",
    dtypes.complex64: "complex<f32>",
    dtypes.complex128: "complex<f64>",
    dtypes.float8_e4m3fn: "f8E4M3FN",
    dtypes.float8_e5m2: "f8E5M2",
    dtypes.float8_e4m3b11fnuz: "f8E4M3B11FNUZ",
    dtypes.float8_e4m3fnuz: "f8E4M3FNUZ",
    dtypes.float8_e5m2fnuz: "f8E5M2FNUZ",
    dtypes.float8_e3m4: "f8E3M4",
    dtypes.float8_e4m3: "f8E4M3",
    dtypes.float8_e8m0fnu: "f8E8M0FNU",
}


def element_type(dtype) -> str:
    return _ELEMENT_TYPES[np.dtype(dtype)]


def tensor_type(aval: ShapedArray) -> str:
    dims = "".join(f"{d}x" for d in aval.shape)
    return f"tensor<{dims}{element_type(aval.dtype)}>"


def i64_array(values: Sequence[int]) -> str:
    """A DenseI64ArrayAttr: `array<i64: 0, 1>`."""
    values = list(values)
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def dense_attr(value: np.ndarray, aval: ShapedArray) -> str:
    """`dense<...> : tensor<...>` holding `value` exactly (floats as raw bits)."""
    value = np.asarray(value, dtype=aval.dtype)
    if value.size == 0:
        return f"dense<> : {tensor_type(aval)}"
    if aval.dtype == dtypes.bool_:
        if value.size and value.all() == value.any():
            body = "true" if value.flat[0] else "false"
        else:
            body = np.array2string(value, separator=", ", threshold=np.inf)
            body = body.replace("True", "true").replace("False", "false")
        return f"dense<{body}> : {tensor_type(aval)}"
    raw = np.ascontiguousarray(value.reshape(-1)).view(np.uint8).reshape(value.size, -1)
    if (raw == raw[0]).all():
        raw = raw[:1]  # a splat: one element stands for all
    return f'dense<"0x{raw.tobytes().hex().upper()}"> : {tensor_type(aval)}'


class Emitter:
    """Collects the operations of one block; shares SSA numbering and types.
    `spmd`: the module is split over several devices (sharding constraints
    mean something; on one device they are dropped); `manual_mesh`: inside
    a shard_map body, the mesh whose axes collectives name."""

    def __init__(self, counter=None, types=None, indent: int = 4, spmd: bool = False):
        self.counter = counter if counter is not None else itertools.count()
        self.types: dict[str, str] = types if types is not None else {}
        self.lines: list[str] = []
        self.indent = indent
        self.spmd = spmd
        self.manual_mesh = None
        self.token: str | None = None  # the ordering token, where effects are threaded
        # `named_scope` path of the equation being lowered (sub-programs
        # prefix it to theirs) and the location its ops get ("" for none)
        self.scope = ""
        self.location = ""

    def fresh(self) -> str:
        return f"%{next(self.counter)}"

    def op(
        self,
        name: str,
        operands: Sequence[str],
        result_avals: Sequence[ShapedArray],
        attrs: str = "",
        regions: Sequence[str] = (),
    ) -> list[str]:
        """Emits `name` and returns its result values."""
        result_types = [tensor_type(a) for a in result_avals]
        return self.op_typed(name, operands, result_types, attrs, regions)

    def op_typed(self, name, operands, result_types, attrs="", regions=()) -> list[str]:
        in_types = ", ".join(self.types[x] for x in operands)
        if len(result_types) == 1:
            out_type = result_types[0]
        else:
            out_type = f"({', '.join(result_types)})"
        region_text = f" ({', '.join(regions)})" if regions else ""
        attr_text = f" {{{attrs}}}" if attrs else ""
        body = f'"{name}"({", ".join(operands)}){region_text}{attr_text} : ({in_types}) -> {out_type}'
        if self.location:
            body += f" loc({self.location})"
        if not result_types:
            self.lines.append(body)
            return []
        result = self.fresh()
        if len(result_types) == 1:
            self.lines.append(f"{result} = {body}")
            names = [result]
        else:
            self.lines.append(f"{result}:{len(result_types)} = {body}")
            names = [f"{result}#{i}" for i in range(len(result_types))]
        for n, t in zip(names, result_types):
            self.types[n] = t
        return names

    def constant(self, value, aval: ShapedArray) -> str:
        (out,) = self.op(
            "stablehlo.constant", [], [aval], f"value = {dense_attr(value, aval)}"
        )
        return out

    def region(
        self,
        arg_avals: Sequence[ShapedArray | str],
        build: Callable,
        terminator: str = "stablehlo.return",
    ) -> str:
        """A one-block region; `build(emitter, *args)` returns the values to yield.

        An argument type may be given as text (`TOKEN_TYPE`). The region starts
        with no ordering token: a rule whose region has effects sets one."""
        inner = Emitter(self.counter, self.types, self.indent + 4, self.spmd)
        inner.manual_mesh = self.manual_mesh
        inner.scope, inner.location = self.scope, self.location
        args = []
        for aval in arg_avals:
            arg = inner.fresh()
            inner.types[arg] = aval if isinstance(aval, str) else tensor_type(aval)
            args.append(arg)
        results = build(inner, *args)
        inner.op_typed(terminator, list(results), [])
        header = ", ".join(f"{a}: {inner.types[a]}" for a in args)
        pad = " " * inner.indent
        body = "".join(f"\n{pad}{line}" for line in inner.lines)
        return f"{{\n{' ' * (inner.indent - 2)}^bb0({header}):{body}\n{' ' * (self.indent)}}}"

    def text(self) -> str:
        pad = " " * self.indent
        return "".join(f"{pad}{line}\n" for line in self.lines)


def compare(
    emitter: Emitter,
    x: str,
    y: str,
    direction: str,
    dtype,
    shape: Sequence[int] = (),
    total_order: bool = False,
) -> str:
    """`x <direction> y` (EQ, NE, LT, LE, GT, GE) on operands of `dtype` and
    `shape`, a boolean result. Floats compare as IEEE (NaN is unordered), or
    with `total_order` in IEEE total order (NaNs sort last, as sort wants)."""
    if dtypes.is_inexact(dtype):
        kind = "TOTALORDER" if total_order else "FLOAT"
    else:
        kind = "SIGNED" if dtypes.is_signed_int(dtype) else "UNSIGNED"
    attrs = (
        f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
        f"compare_type = #stablehlo<comparison_type {kind}>"
    )
    result = ShapedArray(tuple(shape), dtypes.bool_)
    return emitter.op("stablehlo.compare", [x, y], [result], attrs)[0]


def complex_extremum(
    emitter: Emitter, x: str, y: str, aval: ShapedArray, direction: str
) -> str:
    """max (direction GT) or min (LT) of complex `x` and `y` of `aval`, which
    XLA lacks: lexicographic on (real, imag), as JAX's lowering."""
    part = ShapedArray(aval.shape, np.finfo(aval.dtype).dtype)
    xr, xi, yr, yi = (
        emitter.op(f"stablehlo.{kind}", [v], [part])[0]
        for v in (x, y)
        for kind in ("real", "imag")
    )
    args = (part.dtype, part.shape)
    same_real = compare(emitter, xr, yr, "EQ", *args)
    pick = emitter.op(
        "stablehlo.select",
        [same_real, compare(emitter, xi, yi, direction, *args)]
        + [compare(emitter, xr, yr, direction, *args)],
        [ShapedArray(aval.shape, dtypes.bool_)],
    )[0]
    return emitter.op("stablehlo.select", [pick, x, y], [aval])[0]


def emit_while(
    emitter: Emitter,
    init: Sequence[str],
    avals: Sequence[ShapedArray],
    cond_block: Callable,
    body_block: Callable,
    ordered: bool,
) -> list[str]:
    """A `stablehlo.while` over the state `init`: `cond_block(em, *state)` returns
    the predicate, `body_block(em, *state)` the next state.

    With `ordered` (a region has effects), the ordering token rides in front of
    the state: both regions continue it, the body returns it, and the loop's
    final token becomes the emitter's."""
    if not ordered:
        regions = [emitter.region(avals, cond_block), emitter.region(avals, body_block)]
        return emitter.op("stablehlo.while", list(init), avals, regions=regions)

    def threading(block: Callable, returns_token: bool) -> Callable:
        def build(em, token, *state):
            em.token = token
            outs = block(em, *state)
            return [em.token, *outs] if returns_token else outs

        return build

    types = [TOKEN_TYPE, *map(tensor_type, avals)]
    regions = [
        emitter.region(types, threading(cond_block, False)),
        emitter.region(types, threading(body_block, True)),
    ]
    emitter.token, *outs = emitter.op_typed(
        "stablehlo.while", [emitter.token, *init], types, regions=regions
    )
    return outs


class RuleContext:
    """What a lowering rule knows besides its operands."""

    __slots__ = ("emitter", "avals_in", "avals_out", "primitive", "operand_hints")

    def __init__(
        self, emitter: Emitter, avals_in, avals_out, primitive, operand_hints=None
    ):
        self.emitter = emitter
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.primitive = primitive
        # per operand, the params of the hint that produced it ({} for none)
        self.operand_hints = operand_hints or [{}] * len(avals_in)

    @property
    def aval_out(self) -> ShapedArray:
        return self.avals_out[0]

    def op(self, name, operands, attrs="", regions=(), result_avals=None) -> str:
        """Emits a one-result op whose result has this equation's output aval."""
        avals = result_avals if result_avals is not None else self.avals_out[:1]
        return self.emitter.op(name, operands, avals, attrs, regions)[0]


def lower_olympuspr_into(
    emitter: Emitter, olympuspr: Olympuspr, args: Sequence[str]
) -> list[str]:
    """Emits `olympuspr`'s equations; `args` name its constvars then invars."""
    env = dict(zip(olympuspr.constvars + olympuspr.invars, args))

    def read(atom) -> str:
        if isinstance(atom, Literal):
            return emitter.constant(atom.val, atom.aval)
        return env[atom]

    base = emitter.scope, emitter.location
    hinted: dict = {}  # var -> params of the hint that produced it
    for eqn in olympuspr.eqns:
        rule = lowering_rules.get(eqn.primitive)
        if rule is None:
            raise LoweringError(f"primitive {eqn.primitive} has no XLA lowering rule")
        hints = [hinted.get(x, {}) for x in eqn.invars] if hinted else None
        ctx = RuleContext(
            emitter,
            [x.aval for x in eqn.invars],
            [v.aval for v in eqn.outvars],
            eqn.primitive,
            hints,
        )
        if eqn.primitive in value_hint_primitives:
            hinted[eqn.outvars[0]] = {**hinted.get(eqn.invars[0], {}), **eqn.params}
        emitter.scope, emitter.location = _located(base[0], eqn)
        outs = rule(ctx, *map(read, eqn.invars), **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.outvars, outs))
    emitter.scope, emitter.location = base
    return [read(x) for x in olympuspr.outvars]


def _located(outer_scope: str, eqn) -> tuple[str, str]:
    """The equation's full scope path and its ops' MLIR location: a name
    location `"outer/inner/sin"("f.py":12:0)`, which XLA keeps as the ops'
    `op_name` metadata; a backward-pass equation's is `transpose(outer/inner)/mul`.
    No scope, no location: the module text is unchanged."""
    info = eqn.source_info
    scope = "/".join(s for s in (outer_scope, info.scope if info else "") if s)
    if not scope:
        return "", ""
    path = f"transpose({scope})" if info is not None and info.backward else scope
    name = _mlir_string(f"{path}/{eqn.primitive.name}")
    if info is None:
        return scope, name
    return scope, f"{name}({_mlir_string(info.file)}:{info.line}:0)"


def _mlir_string(text: str) -> str:
    """`text` as an MLIR string literal (quotes, backslashes and control
    characters as `\\XX` hex escapes)."""
    return (
        '"'
        + "".join(f"\\{ord(c):02X}" if c in '"\\' or ord(c) < 32 else c for c in text)
        + '"'
    )


def lower_closed_inline(
    emitter: Emitter, closed: ClosedOlympuspr, args: Sequence[str]
) -> list[str]:
    """Inlines a sub-program (pjit, branches, loop bodies); consts become constants."""
    const_values = [
        emitter.constant(np.asarray(c), v.aval)
        for c, v in zip(closed.consts, closed.olympuspr.constvars)
    ]
    return lower_olympuspr_into(emitter, closed.olympuspr, const_values + list(args))


def lower_fun(fun: Callable, multiple_results: bool = False) -> Callable:
    """A lowering rule that traces `fun(*operands, **params)`, written with
    other primitives, and inlines its program: a primitive can carry its own
    derivative rules while reusing other primitives' lowerings."""

    def rule(ctx: RuleContext, *operands: str, **params) -> str | list[str]:
        def flat(*args):
            out = fun(*args, **params)
            return list(out) if multiple_results else [out]

        with set_current_trace(eval_trace):
            olympuspr, consts, _ = trace_to_olympuspr(
                flat, ctx.avals_in, DebugInfo("lowering", fun.__name__, ())
            )
        closed = ClosedOlympuspr(olympuspr, consts)
        outs = lower_closed_inline(ctx.emitter, closed, list(operands))
        return outs if multiple_results else outs[0]

    return rule


def _output_aliases(olympuspr: Olympuspr, donated) -> dict[int, int]:
    """argument index -> output index, pairing each donated argument with the
    first free output of the same shape and dtype."""
    arg_avals = [v.aval for v in olympuspr.constvars + olympuspr.invars]
    free = list(range(len(olympuspr.outvars)))
    aliases = {}
    for i in donated:
        want = arg_avals[i]
        match = next(
            (
                o
                for o in free
                if olympuspr.outvars[o].aval.shape == want.shape
                and olympuspr.outvars[o].aval.dtype == want.dtype
            ),
            None,
        )
        if match is not None:
            aliases[i] = match
            free.remove(match)
    return aliases


def build_module(
    olympuspr: Olympuspr, name: str = "main", donated: Sequence[int] = (), layout=None
) -> str:
    """A StableHLO module whose `main` takes constvars then invars as arguments.

    Each `donated` argument (an index among constvars + invars) is aliased to
    the first not-yet-aliased output of its exact type, so XLA writes that
    output into the donated buffer instead of allocating a new one.
    A `layout` (olympus/backends/xla/spmd.py) spreads the program over
    several devices: it gives the module's attributes, its declarations
    (meshes) and each argument's and result's sharding attribute."""
    olympuspr = _without_float0_outputs(olympuspr)
    emitter = Emitter(spmd=layout is not None)
    building = _module_layout.set(layout)
    try:
        return _module_text(olympuspr, name, donated, layout, emitter)
    finally:
        _module_layout.reset(building)


_module_layout = contextvars.ContextVar("module_layout", default=None)


def module_layout():
    """The layout (olympus/backends/xla/spmd.py) of the module `build_module`
    is writing: None on one device. Rules that ask XLA's partitioner about
    a value (debug.inspect_array_sharding) read its devices and mesh."""
    return _module_layout.get()


def _module_text(olympuspr: Olympuspr, name: str, donated, layout, emitter) -> str:
    params = []
    for var in olympuspr.constvars + olympuspr.invars:
        arg = emitter.fresh()
        emitter.types[arg] = tensor_type(var.aval)
        params.append(arg)
    ordered = has_ordered_effect(olympuspr)
    if ordered:
        (emitter.token,) = emitter.op_typed("stablehlo.after_all", [], [TOKEN_TYPE])
    outs = lower_olympuspr_into(emitter, olympuspr, params)
    if ordered:
        # Returned, the token keeps the effects alive (XLA rejects some programs
        # whose last side-effecting result is unused) and the runtime can wait on it.
        outs = [*outs, emitter.token]
    emitter.op_typed("func.return", outs, [])
    aliases = _output_aliases(olympuspr, donated)
    in_sig = ", ".join(
        f"{a}: {emitter.types[a]}"
        + _attributes(
            f"tf.aliasing_output = {aliases[i]} : i32" if i in aliases else "",
            layout.arg_attribute(i) if layout is not None else "",
        )
        for i, a in enumerate(params)
    )
    out_sig = ", ".join(
        [
            tensor_type(v.aval)
            + _attributes(layout.result_attribute(j) if layout is not None else "")
            for j, v in enumerate(olympuspr.outvars)
        ]
        + [TOKEN_TYPE] * ordered
    )
    module_name = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "main"
    attributes = (
        f" attributes {{{layout.module_attributes()}}}" if layout is not None else ""
    )
    declarations = layout.declarations() if layout is not None else ""
    return (
        f"module @{module_name}{attributes} {{\n{declarations}"
        f"  func.func public @main({in_sig}) -> ({out_sig}) {{\n"
        f"{emitter.text()}"
        f"  }}\n}}\n"
    )


def float0_consts_inlined(closed: ClosedOlympuspr) -> ClosedOlympuspr:
    """`closed` with its float0 constants (grad's zeros for integer inputs,
    which have no bytes) written inline as literals: XLA has no float0 type,
    so they cannot be arguments; the outputs they are become host zeros."""
    program = closed.olympuspr
    inline = {
        v: Literal(c, v.aval)
        for v, c in zip(program.constvars, closed.consts)
        if v.aval.dtype == dtypes.float0
    }
    if not inline:
        return closed
    kept = [(v, c) for v, c in zip(program.constvars, closed.consts) if v not in inline]
    swap = lambda atoms: [inline.get(a, a) if isinstance(a, Var) else a for a in atoms]  # noqa: E731
    program = Olympuspr(
        [v for v, _ in kept], program.invars,
        [eqn._replace(invars=swap(eqn.invars)) for eqn in program.eqns],
        swap(program.outvars), program.debug_info,
    )  # fmt: skip
    return ClosedOlympuspr(program, [c for _, c in kept])


def _without_float0_outputs(olympuspr: Olympuspr) -> Olympuspr:
    """The program without its float0 outputs (grad's zeros for integer
    inputs): XLA has no float0 type, so the executable makes them on the host
    (`Executable` in dispatch.py), as JAX does."""
    outvars = [v for v in olympuspr.outvars if v.aval.dtype != dtypes.float0]
    if len(outvars) == len(olympuspr.outvars):
        return olympuspr
    return Olympuspr(
        olympuspr.constvars, olympuspr.invars, olympuspr.eqns, outvars,
        olympuspr.debug_info,
    )  # fmt: skip


def _attributes(*entries: str) -> str:
    entries = [e for e in entries if e]
    return f" {{{', '.join(entries)}}}" if entries else ""


def returns_ordering_token(module_text: str) -> bool:
    """Whether `main` of a module from `build_module` ends its results with the
    ordering token (it does exactly when the program has ordered effects)."""
    start = module_text.find("func.func public @main")
    header = module_text[start : module_text.find("\n", start)]
    return header.endswith(f"{TOKEN_TYPE}) {{")
