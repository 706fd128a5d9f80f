"""Random well-typed olympus programs, as Python source, from a seed.

A `Program` is straight-line code over typed values (`Value`: name, shape,
kind 'f' float / 'i' int32 / 'b' bool): each `Stmt` binds one or more new
values from earlier ones with an olympus.numpy / lax expression, possibly a
nested cond / scan / fori_loop / while_loop (maybe with max_steps) / lax.map
(maybe with batch_size) / jit / vmap / checkpoint whose
bodies are programs of their own. Programs are source text on purpose: the
program that fails is the reproducer, printed as olympus code, and the
shrinker edits statements rather than IR.

    >>> program = generate(seed=3)
    >>> print(program.source())          # def program(a0, a1): ...
    >>> fun = program.function(); args = program.arguments()
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

MAX_DEPTH = 2

# A pure callback (NumPy's tanh) with a derivative, so that every check
# (vmap, jvp, grad, tiered, optimizer) meets olympus.pure_callback; programs
# call it as `host_tanh(x)`, and their reproducers define it.
HOST_FUNCTIONS = """\
@olympus.custom_jvp
def host_tanh(x):
    return olympus.pure_callback(
        np.tanh, olympus.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="expand_dims"
    )


@host_tanh.defjvp
def _host_tanh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return host_tanh(x), (1.0 - jnp.tanh(x) ** 2) * t
"""


@dataclasses.dataclass(frozen=True)
class Value:
    name: str
    shape: tuple
    kind: str  # 'f' float, 'i' int32, 'b' bool


@dataclasses.dataclass
class Stmt:
    """`targets = expr`, after `defs` (the nested functions expr calls)."""

    targets: list
    expr: str
    uses: list
    defs: list = dataclasses.field(default_factory=list)  # (name, params, Block)
    loops_while: bool = False  # holds a while_loop (not reverse-differentiable)

    def lines(self) -> list[str]:
        out = []
        for name, params, block in self.defs:
            out.append(f"def {name}({', '.join(params)}):")
            out += ["    " + line for line in block.lines()]
        lhs = (
            self.targets[0].name
            if len(self.targets) == 1
            else ", ".join(t.name for t in self.targets)
        )
        out.append(f"{lhs} = {self.expr}")
        return out

    def all_uses(self) -> set:
        names = set(self.uses)
        for _, params, block in self.defs:
            names |= block.free_names() - set(params)
        return names

    def has_while(self) -> bool:
        return self.loops_while or any(b.has_while() for _, _, b in self.defs)


@dataclasses.dataclass
class Block:
    """Statements then `return <result>` (result: a Python expression of names)."""

    stmts: list
    result: str
    result_uses: list

    def lines(self) -> list[str]:
        out = [line for s in self.stmts for line in s.lines()]
        return out + [f"return {self.result}"]

    def free_names(self) -> set:
        bound, free = set(), set()
        for s in self.stmts:
            free |= s.all_uses() - bound
            bound |= {t.name for t in s.targets}
        return free | (set(self.result_uses) - bound)

    def has_while(self) -> bool:
        return any(s.has_while() for s in self.stmts)


@dataclasses.dataclass
class Program:
    inputs: list  # Values
    body: Block
    outputs: list  # Values
    seed: int

    def source(self) -> str:
        head = f"def program({', '.join(v.name for v in self.inputs)}):"
        return "\n".join([head] + ["    " + line for line in self.body.lines()]) + "\n"

    def function(self):
        import olympus
        import olympus.numpy as jnp
        from olympus import lax

        namespace = {"olympus": olympus, "jnp": jnp, "lax": lax, "np": np}
        exec(HOST_FUNCTIONS, namespace)  # noqa: S102
        exec(compile(self.source(), f"<fuzz program {self.seed}>", "exec"), namespace)  # noqa: S102 (the program is source on purpose)
        return namespace["program"]

    def arguments(self, salt: int = 0, dtype=np.float32) -> list:
        return [input_value(self.seed, v, salt, dtype) for v in self.inputs]

    def float_inputs(self) -> list[int]:
        return [i for i, v in enumerate(self.inputs) if v.kind == "f"]

    def reverse_differentiable(self) -> bool:
        return not self.body.has_while()

    def reproducer(self, failing_check: str = "") -> str:
        """The program and its arguments as a script that runs it."""
        args = ", ".join(_array_literal(a) for a in self.arguments())
        header = (
            f"# fails: {failing_check} (tests/fuzz/checks.py)\n"
            if failing_check
            else ""
        )
        return (
            header + "import numpy as np\nimport olympus\nimport olympus.numpy as jnp\n"
            "from olympus import lax\n\n"
            + (HOST_FUNCTIONS + "\n\n" if "host_tanh(" in self.source() else "")
            + self.source()
            + f"\nargs = [{args}]\nprint(olympus.jit(program)(*args))\n"
        )


def _array_literal(a: np.ndarray) -> str:
    return f"np.array({a.tolist()!r}, np.{a.dtype})"


def input_value(seed: int, v: Value, salt: int = 0, dtype=np.float32) -> np.ndarray:
    """The argument bound to input `v`: a function of (seed, name, salt) only."""
    rng = np.random.default_rng([seed, zlib.crc32(v.name.encode()), salt])
    if v.kind == "f":
        return rng.normal(size=v.shape).astype(dtype)
    if v.kind == "i":
        return rng.integers(-4, 5, size=v.shape).astype(np.int32)
    return rng.random(v.shape) < 0.5


# ---- the generator ------------------------------------------------------------------
class Generator:
    jax_compatible = False  # True: no olympus-only arguments (max_steps, memory_budget)

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def shape(self, max_rank: int = 2) -> tuple:
        rank = int(self.rng.integers(0, max_rank + 1))
        return tuple(int(self.rng.integers(1, 4)) for _ in range(rank))

    # -- statements --------------------------------------------------------------
    def block(self, scope: list, n: int, depth: int, want: Value | None = None) -> list:
        """n statements over `scope` (extended in place); with `want`, the last
        statement produces a value of want's shape and kind."""
        stmts = []
        for _ in range(n):
            stmt = self.statement(scope, depth)
            if stmt is not None:
                stmts.append(stmt)
                scope.extend(stmt.targets)
        return stmts

    def statement(self, scope: list, depth: int):
        makers = [
            self.unary,
            self.unary,
            self.binary,
            self.binary,
            self.reduction,
            self.reshape,
            self.index,
            self.compare_select,
            self.dot,
            self.integer,
            self.concat,
            self.cumulative,
            self.shaped,
            self.int_gather,
        ]
        if depth < MAX_DEPTH:
            makers += [
                self.cond,
                self.scan,
                self.fori,
                self.while_loop,
                self.jit_call,
                self.vmap_call,
                self.checkpoint_call,
                self.grad_call,
                self.jvp_call,
                self.map_call,
            ]
        for _ in range(4):
            stmt = self.choice(makers)(scope, depth)
            if stmt is not None:
                return stmt
        return None

    def pick(self, scope, kind="f", pred=lambda v: True):
        """A value of `kind`, most often one of the latest (so most statements
        feed the outputs instead of being dead code)."""
        options = [v for v in scope if v.kind == kind and pred(v)]
        if len(options) > 3 and self.rng.random() < 0.7:
            options = options[-3:]
        return self.choice(options) if options else None

    def new(self, shape, kind="f") -> Value:
        return Value(self.fresh(), tuple(shape), kind)

    def unary(self, scope, depth):
        x = self.pick(scope)
        if x is None:
            return None
        n = x.name
        expr = self.choice(
            [
                f"jnp.sin({n})",
                f"jnp.cos({n})",
                f"jnp.tanh({n})",
                f"-{n}",
                f"{n} * {n}",
                f"jnp.abs({n})",
                f"olympus.nn.sigmoid({n})",
                f"jnp.sqrt(jnp.abs({n}) + 1.0)",
                f"jnp.log1p({n} * {n})",
                f"jnp.exp(jnp.sin({n}))",
                f"{n} / (1.0 + {n} * {n})",
                f"{n} * 0.5 + 1.5",
                f"lax.integer_pow(jnp.tanh({n}), 3)",
                f"jnp.sin({n}) ** 2",
                f"jnp.arctan2({n}, 1.5)",
                f"jnp.where({n} > 0.0, {n}, 0.1 * {n})",
                f"olympus.scipy.special.gammaln(jnp.abs({n}) + 0.5)",
                f"olympus.scipy.special.digamma(jnp.abs({n}) + 0.5)",
                f"lax.erfc({n})",
                f"olympus.scipy.special.erfinv(jnp.tanh({n}) * 0.9)",
                f"olympus.scipy.special.xlogy({n}, {n} * {n} + 1.0)",
                f"olympus.scipy.stats.norm.logcdf({n} * 4.0)",
                f"olympus.scipy.stats.t.logpdf({n}, 3.0)",
                f"host_tanh({n})",
                f"olympus.scipy.special.gammainc(2.5, jnp.abs({n}))",
                f"olympus.scipy.special.betainc(2.0, 3.0, olympus.nn.sigmoid({n}))",
                f"olympus.scipy.special.i0e({n})",
                f"olympus.scipy.stats.gamma.logcdf(jnp.abs({n}) + 0.1, 1.5)",
            ]
        )
        return Stmt([self.new(x.shape)], expr, [n])

    def binary(self, scope, depth):
        x = self.pick(scope)
        if x is None:
            return None
        y = self.pick(scope, pred=lambda v: _broadcasts(v.shape, x.shape))
        if y is None:
            return None
        a, b = x.name, y.name
        expr = self.choice(
            [
                f"{a} + {b}",
                f"{a} - {b}",
                f"{a} * {b}",
                f"jnp.maximum({a}, {b})",
                f"jnp.minimum({a}, {b})",
                f"{a} / (1.0 + {b} * {b})",
                f"jnp.arctan2({a}, {b} * {b} + 1.0)",
            ]
        )
        return Stmt([self.new(np.broadcast_shapes(x.shape, y.shape))], expr, [a, b])

    def reduction(self, scope, depth):
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        axis = int(self.rng.integers(len(x.shape)))
        keep = bool(self.rng.random() < 0.3)
        op = self.choice(
            ["jnp.sum", "jnp.max", "jnp.min", "jnp.mean", "olympus.nn.logsumexp"]
        )
        shape = list(x.shape)
        if keep:
            shape[axis] = 1
        else:
            shape.pop(axis)
        if self.rng.random() < 0.2:
            return Stmt([self.new(())], f"{op}({x.name})", [x.name])
        return Stmt(
            [self.new(shape)], f"{op}({x.name}, axis={axis}, keepdims={keep})", [x.name]
        )

    def reshape(self, scope, depth):
        x = self.pick(scope)
        if x is None:
            return None
        n, s = x.name, x.shape
        options = [
            (f"{n}[None]", (1, *s)),
            (f"jnp.expand_dims({n}, -1)", (*s, 1)),
            (f"jnp.broadcast_to({n}, (2, *{n}.shape))", (2, *s)),
            (f"{n}.reshape(-1)", (int(np.prod(s)),)),
        ]
        if len(s) >= 2:
            perm = tuple(int(p) for p in self.rng.permutation(len(s)))
            options += [
                (f"{n}.T", s[::-1]),
                (f"jnp.transpose({n}, {perm})", tuple(s[p] for p in perm)),
            ]
        if len(s) >= 1:
            options.append((f"jnp.flip({n}, 0)", s))
        if 1 in s:
            options.append(
                (
                    f"jnp.squeeze({n}, {s.index(1)})",
                    s[: s.index(1)] + s[s.index(1) + 1 :],
                )
            )
        expr, shape = self.choice(options)
        if len(shape) > 4:
            return None
        return Stmt([self.new(shape)], expr, [n])

    def index(self, scope, depth):
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        n, s = x.name, x.shape
        i = int(self.rng.integers(s[0]))
        lo, hi = sorted(int(k) for k in self.rng.integers(0, s[0] + 1, size=2))
        hi = max(hi, lo + 1) if lo < s[0] else s[0]
        lo = min(lo, hi - 1)
        options = [
            (f"{n}[{i}]", s[1:]),
            (f"{n}[{lo}:{hi}]", (hi - lo, *s[1:])),
            (f"{n}[::2]", ((s[0] + 1) // 2, *s[1:])),
            (f"{n}[..., {int(self.rng.integers(s[-1]))}]", s[:-1]),
            (f"jnp.asarray({n}).at[{i}].set(jnp.tanh({n}[{i}]) * 2.0)", s),
        ]
        k = self.pick([v for v in scope if v.kind == "i" and v.shape == ()], kind="i")
        if k is not None:
            options.append((f"jnp.asarray({n})[{k.name}]", s[1:]))
            options.append(
                (f"lax.dynamic_slice_in_dim({n}, {k.name}, 1, 0)", (1, *s[1:]))
            )
            expr, shape = self.choice(options)
            return Stmt(
                [self.new(shape)], expr, [n] + ([k.name] if k.name in expr else [])
            )
        expr, shape = self.choice(options)
        return Stmt([self.new(shape)], expr, [n])

    def compare_select(self, scope, depth):
        x = self.pick(scope)
        if x is None:
            return None
        y = self.pick(scope, pred=lambda v: _broadcasts(v.shape, x.shape))
        shape = np.broadcast_shapes(x.shape, y.shape)
        op = self.choice([">", "<", ">="])
        mask = self.new(shape, "b")
        out = self.new(shape)
        cond = Stmt([mask], f"{x.name} {op} {y.name}", [x.name, y.name])
        pick = Stmt(
            [out],
            f"jnp.where({mask.name}, {x.name}, {y.name} * 0.5)",
            [mask.name, x.name, y.name],
        )
        return _Pair(cond, pick)

    def dot(self, scope, depth):
        x = self.pick(scope, pred=lambda v: len(v.shape) in (1, 2))
        if x is None:
            return None
        y = self.pick(
            scope, pred=lambda v: len(v.shape) in (1, 2) and v.shape[0] == x.shape[-1]
        )
        if y is None:
            return None
        shape = x.shape[:-1] + y.shape[1:]
        return Stmt([self.new(shape)], f"jnp.dot({x.name}, {y.name})", [x.name, y.name])

    def integer(self, scope, depth):
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        ints = [v for v in scope if v.kind == "i"]
        if ints and self.rng.random() < 0.6:
            a = self.choice(ints)
            b = self.pick(scope, "i", lambda v: _broadcasts(v.shape, a.shape))
            expr = self.choice(
                [
                    f"{a.name} + {b.name}",
                    f"{a.name} * {b.name}",
                    f"{a.name} // 3",
                    f"{a.name} % 3",
                    f"jnp.maximum({a.name}, {b.name})",
                    f"{a.name} & 6",
                    f"lax.shift_right_arithmetic({a.name}, 1)",
                    f"lax.population_count({a.name})",
                ]
            )
            shape = np.broadcast_shapes(a.shape, b.shape)
            if self.rng.random() < 0.5:  # back to floats
                return Stmt(
                    [self.new(shape)],
                    f"({expr}).astype(float) * 0.25",
                    [a.name, b.name],
                )
            return Stmt([self.new(shape, "i")], expr, [a.name, b.name])
        if x is None:
            return None
        if self.rng.random() < 0.5:
            return Stmt(
                [self.new((), "i")],
                f"jnp.argmax({x.name}.reshape(-1)) % {x.shape[0]}",
                [x.name],
            )
        return Stmt(
            [self.new(x.shape, "i")],
            f"jnp.floor({x.name} * 2.0).astype(jnp.int32)",
            [x.name],
        )

    def concat(self, scope, depth):
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        y = self.pick(
            scope, pred=lambda v: v.shape[1:] == x.shape[1:] and len(v.shape) > 0
        )
        shape = (x.shape[0] + y.shape[0], *x.shape[1:])
        return Stmt(
            [self.new(shape)],
            f"jnp.concatenate([{x.name}, {y.name}], axis=0)",
            [x.name, y.name],
        )

    def cumulative(self, scope, depth):
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        axis = int(self.rng.integers(len(x.shape)))
        n = x.name
        expr = self.choice(
            [
                f"jnp.cumsum({n}, axis={axis})",
                f"jnp.cummax({n}, axis={axis})",
                f"lax.cumsum({n}, axis={axis}, reverse=True)",
                f"lax.cumlogsumexp({n}, axis={axis})",
                f"lax.associative_scan(jnp.maximum, {n}, axis={axis}, reverse=True)",
                f"lax.associative_scan(lambda a, b: a + b, {n}, axis={axis})",
            ]
        )
        return Stmt([self.new(x.shape)], expr, [n])

    def shaped(self, scope, depth):
        """Shape-keeping and shape-changing library ops: sort, clip, roll, pad,
        tile, stack, softmax, variance, products, einsum, norms."""
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        n, s = x.name, x.shape
        axis = int(self.rng.integers(len(s)))
        kept = s[:axis] + s[axis + 1 :]
        options = [
            (f"jnp.sort({n}, axis={axis})", s),
            (f"jnp.clip({n}, -0.7, 0.9)", s),
            (f"jnp.roll({n}, {int(self.rng.integers(-2, 3))}, axis={axis})", s),
            (f"olympus.nn.softmax({n}, axis={axis})", s),
            (f"olympus.nn.relu({n})", s),
            (f"jnp.cumprod(jnp.tanh({n}), axis={axis})", s),
            (f"jnp.var({n}, axis={axis})", kept),
            (f"jnp.prod(jnp.cos({n}), axis={axis})", kept),
            (f"jnp.pad({n}, 1)", tuple(d + 2 for d in s)),
            (f"jnp.tile({n}, 2)", (*s[:-1], 2 * s[-1])),
            (
                f"jnp.stack([{n}, jnp.sin({n})], axis={axis})",
                s[:axis] + (2,) + s[axis:],
            ),
            (f"jnp.linalg.norm({n} + 2.0, axis={axis})", kept),
        ]
        if len(s) == 2:
            options += [
                (f"jnp.einsum('ij,ij->j', {n}, jnp.sin({n}))", s[1:]),
                (f"jnp.einsum('ij->ji', {n})", s[::-1]),
            ]
        expr, shape = self.choice(options)
        if len(shape) > 4:
            return None
        return Stmt([self.new(shape)], expr, [n])

    def int_gather(self, scope, depth):
        """Gathers and scatter-adds at traced int arrays (duplicates included),
        the indices wrapped into bounds with %."""
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        k = self.pick(scope, "i")
        if x is None or k is None or len(k.shape) + len(x.shape) > 4:
            return None
        n, idx = x.name, f"{k.name} % {x.shape[0]}"
        gathered = (*k.shape, *x.shape[1:])
        expr, shape = self.choice(
            [
                (f"jnp.take({n}, {idx}, axis=0)", gathered),
                (f"jnp.asarray({n})[{idx}]", gathered),
                (
                    f"jnp.asarray({n}).at[{idx}].add(jnp.take({n}, {idx}, axis=0) * 0.5)",
                    x.shape,
                ),
                (
                    f"jnp.asarray({n}).at[{idx}].max(jnp.take({n}, {idx}, axis=0) * 0.5)",
                    x.shape,
                ),
            ]
        )
        return Stmt([self.new(shape)], expr, [n, k.name])

    # -- nested programs --------------------------------------------------------------
    def body(self, params: list, scope: list, depth: int, results: list) -> Block:
        """A nested function body: statements over its params (and, sometimes,
        values it closes over), returning values shaped like `results`."""
        closure = [v for v in scope if self.rng.random() < 0.3]
        inner = list(params) + closure
        stmts = self.block(inner, int(self.rng.integers(1, 4)), depth + 1)
        names = [
            self.pick(inner, r.kind, lambda v, r=r: v.shape == r.shape) for r in results
        ]
        names = [n.name if n is not None else p.name for n, p in zip(names, results)]
        result = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
        return Block(stmts, result, names)

    def _params(self, values) -> list[Value]:
        return [Value(self.fresh("p"), v.shape, v.kind) for v in values]

    def cond(self, scope, depth):
        x = self.pick(scope)
        p = self.pick(scope)
        if x is None:
            return None
        params = self._params([x])
        names = [self.fresh("t"), self.fresh("f")]
        defs = [
            (name, [q.name for q in params], self.body(params, scope, depth, params))
            for name in names
        ]
        expr = f"lax.cond(jnp.sum({p.name}) > 0.0, {names[0]}, {names[1]}, {x.name})"
        return Stmt([self.new(x.shape)], expr, [p.name, x.name], defs)

    def loop_init(self, x: Value) -> str:
        """A loop's initial carry: `x`, or a constant of its shape (no tangent),
        so the carry's tangent starts zero and turns nonzero inside the loop
        (the carry fixpoint of partial evaluation). Not stop_gradient: finite
        differences would see through it."""
        r = self.rng.random()
        if r < 0.15:
            return f"jnp.zeros_like({x.name})"
        if r < 0.3:
            return f"jnp.full_like({x.name}, 0.5)"
        return x.name

    def loop_body_wrap(self, name: str) -> str:
        """The body itself, or the body checkpointed (as `lax.scan(checkpoint(f), ...)`)."""
        return f"olympus.checkpoint({name})" if self.rng.random() < 0.3 else name

    def scan(self, scope, depth):
        xs = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        c = self.pick(scope, pred=lambda v: v.shape == xs.shape[1:]) if xs else None
        if c is None:
            return None
        params = self._params([c, Value("", xs.shape[1:], "f")])
        name = self.fresh("s")
        no_ys = bool(self.rng.random() < 0.25)  # the body returns (carry, None)
        results = [params[0]] if no_ys else [params[0], params[0]]
        block = self.body(params, scope, depth, results)
        if no_ys:
            block = Block(block.stmts, f"({block.result}, None)", block.result_uses)
        reverse = bool(self.rng.random() < 0.3)
        init, body = self.loop_init(c), self.loop_body_wrap(name)
        expr = f"lax.scan({body}, {init}, {xs.name}, reverse={reverse})"
        outs = [self.new(c.shape)]
        if no_ys:
            expr += "[0]"
        else:
            outs.append(self.new((xs.shape[0], *c.shape)))
        return Stmt(
            outs, expr, [c.name, xs.name], [(name, [q.name for q in params], block)]
        )

    def fori(self, scope, depth):
        x = self.pick(scope)
        if x is None:
            return None
        params = self._params([x])
        name, i = self.fresh("l"), self.fresh("i")
        block = self.body(params, scope, depth, params)
        block = Block(block.stmts, f"{block.result} * 0.5", block.result_uses)
        n = int(self.rng.integers(0, 4))
        init, body = self.loop_init(x), self.loop_body_wrap(name)
        return Stmt(
            [self.new(x.shape)],
            f"lax.fori_loop(0, {n}, {body}, {init})",
            [x.name],
            [(name, [i] + [q.name for q in params], block)],
        )

    def while_loop(self, scope, depth):
        x = self.pick(scope)
        if x is None:
            return None
        params = self._params([x])
        name, cname, k = self.fresh("w"), self.fresh("c"), self.fresh("k")
        inner = self.body(params, scope, depth, params)
        block = Block(
            [Stmt([Value(params[0].name, x.shape, "f")], f"{k}[1]", [k])] + inner.stmts,
            f"({k}[0] + 1, jnp.tanh({inner.result}))",
            [k] + inner.result_uses,
        )
        test = Block(
            [],
            f"({k}[0] < {int(self.rng.integers(0, 4))}) & (jnp.sum({k}[1]) < 100.0)",
            [k],
        )
        out = self.new(x.shape)
        counter = Value(self.fresh(), (), "i")
        # With max_steps the loop is reverse-differentiable (a masked scan);
        # JAX has no max_steps, so programs for the JAX oracle go without.
        bounded = self.rng.random() < 0.5 and not self.jax_compatible
        bound = f", max_steps={int(self.rng.integers(0, 6))}" if bounded else ""
        expr = f"lax.while_loop({cname}, {name}, (0, {x.name}){bound})"
        return Stmt(
            [counter, out],
            expr,
            [x.name],
            [(cname, [k], test), (name, [k], block)],
            loops_while=not bounded,
        )

    def map_call(self, scope, depth):
        """lax.map over the leading axis, sometimes in vmapped chunks (batch_size)."""
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        params = [Value(self.fresh("p"), x.shape[1:], "f")]
        name = self.fresh("g")
        block = self.body(params, scope, depth, params)
        k = int(self.rng.integers(0, 4))
        batch = f", batch_size={k}" if k else ""
        return Stmt(
            [self.new(x.shape)],
            f"lax.map({name}, {x.name}{batch})",
            [x.name],
            [(name, [params[0].name], block)],
        )

    def _call(self, scope, depth, wrap: str):
        x = self.pick(scope)
        if x is None:
            return None
        params = self._params([x])
        name = self.fresh("g")
        block = self.body(params, scope, depth, params)
        return Stmt(
            [self.new(x.shape)],
            f"{wrap}({name})({x.name})",
            [x.name],
            [(name, [params[0].name], block)],
        )

    def jit_call(self, scope, depth):
        return self._call(scope, depth, "olympus.jit")

    def checkpoint_call(self, scope, depth):
        """checkpoint of a function of one to three arguments (in a loop body,
        most often the carry and the per-iteration slice)."""
        x = self.pick(scope)
        if x is None:
            return None
        args = [x]
        for _ in range(int(self.rng.integers(0, 3))):
            y = self.pick(scope)
            if y not in args:
                args.append(y)
        params = self._params(args)
        name = self.fresh("g")
        block = self.body(params, scope, depth, params[:1])
        policy = self.choice(
            [
                "",
                "",
                ", policy=olympus.checkpoint_policies.dots_saveable",
                f", policy=olympus.checkpoint_policies.memory_budget({int(self.rng.integers(0, 64))})",
            ]
        )
        if self.jax_compatible and "memory_budget" in policy:  # olympus's own
            policy = ""
        call = f"olympus.checkpoint({name}{policy})({', '.join(a.name for a in args)})"
        return Stmt(
            [self.new(x.shape)],
            call,
            [a.name for a in args],
            [(name, [q.name for q in params], block)],
        )

    def vmap_call(self, scope, depth):
        """vmap over any axis of x, the mapped axis put back at any position."""
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        in_axis = int(self.rng.integers(len(x.shape)))
        out_axis = int(self.rng.integers(len(x.shape)))
        example = x.shape[:in_axis] + x.shape[in_axis + 1 :]
        params = [Value(self.fresh("p"), example, "f")]
        name = self.fresh("g")
        block = self.body(params, scope, depth, params)
        out = example[:out_axis] + (x.shape[in_axis],) + example[out_axis:]
        call = f"olympus.vmap({name}, in_axes={in_axis}, out_axes={out_axis})({x.name})"
        return Stmt([self.new(out)], call, [x.name], [(name, [params[0].name], block)])

    def grad_call(self, scope, depth):
        """grad of a nested body inside the program (so the checks take second
        derivatives); bodies with a while_loop have no reverse mode."""
        x = self.pick(scope)
        if x is None:
            return None
        params = self._params([x])
        name = self.fresh("g")
        block = self.body(params, scope, depth, params)
        if block.has_while():
            return None
        expr = f"olympus.grad(lambda q: jnp.sum(jnp.sin({name}(q))))({x.name})"
        return Stmt(
            [self.new(x.shape)], expr, [x.name], [(name, [params[0].name], block)]
        )

    def jvp_call(self, scope, depth):
        """The tangent output of jvp of a nested body, along x itself."""
        x = self.pick(scope)
        if x is None:
            return None
        params = self._params([x])
        name = self.fresh("g")
        block = self.body(params, scope, depth, params)
        expr = f"olympus.jvp({name}, ({x.name},), (jnp.cos({x.name}),))[1]"
        return Stmt(
            [self.new(x.shape)], expr, [x.name], [(name, [params[0].name], block)]
        )


class _Pair(Stmt):
    """Two statements generated together (a mask and the select that uses it)."""

    def __init__(self, first: Stmt, second: Stmt):
        self.parts = [first, second]
        super().__init__(first.targets + second.targets, "", [])

    def lines(self):
        return [line for p in self.parts for line in p.lines()]

    def all_uses(self):
        return self.parts[0].all_uses() | (
            self.parts[1].all_uses() - {t.name for t in self.parts[0].targets}
        )

    def has_while(self):
        return False


def _broadcasts(a: tuple, b: tuple) -> bool:
    """a broadcasts to b (right-aligned, 1s stretch, no new result dims beyond b)."""
    if len(a) > len(b):
        return False
    return all(x in (1, y) for x, y in zip(a[::-1], b[::-1]))


def generate(seed: int, n_stmts: int | None = None) -> Program:
    """A random program: 1-3 float inputs (maybe an int one), 3-10 statements,
    1-2 float outputs."""
    gen = Generator(seed)
    inputs = [
        Value(f"a{i}", gen.shape(), "f") for i in range(int(gen.rng.integers(1, 4)))
    ]
    if gen.rng.random() < 0.3:
        inputs.append(Value(f"a{len(inputs)}", gen.shape(2), "i"))
    scope = list(inputs)
    n = n_stmts if n_stmts is not None else int(gen.rng.integers(3, 11))
    stmts = gen.block(scope, n, 0)
    floats = [v for v in scope[len(inputs) :] if v.kind == "f"] or [inputs[0]]
    outputs = floats[-1:] if gen.rng.random() < 0.6 else floats[-2:]
    result = "(" + ", ".join(v.name for v in outputs) + ",)"
    program = Program(
        inputs, Block(stmts, result, [v.name for v in outputs]), outputs, seed
    )
    return dead_code_eliminated(program)


# ---- editing programs (dead code, shrinking) ----------------------------------------
def blocks(block):
    """Every block of a program, the outer one first, in a fixed order."""
    yield block
    for stmt in block.stmts:
        for _, _, inner in stmt.defs:
            yield from blocks(inner)


def _used_names(stmts, result_uses) -> set:
    used = set(result_uses)
    for s in stmts:
        used |= s.all_uses()
    return used


def dead_code_eliminated(program):
    """Drops statements (in every block) whose values nothing uses, then unused inputs."""
    for block in blocks(program.body):
        changed = True
        while changed:
            changed = False
            for i in range(len(block.stmts) - 1, -1, -1):
                later = _used_names(block.stmts[i + 1 :], block.result_uses)
                if not any(t.name in later for t in block.stmts[i].targets):
                    del block.stmts[i]
                    changed = True
    used = _used_names(program.body.stmts, program.body.result_uses)
    program.inputs = [v for v in program.inputs if v.name in used] or program.inputs[:1]
    return program
