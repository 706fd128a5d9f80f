"""Random programs for the JAX oracle: edge dtypes, edge values, edge indices.

`generate_edge(seed)` draws a program as program_generator does, with no
olympus-only arguments (JAX must run it too) and, per seed, a float dtype
(float32, float16, bfloat16, or float64 with x64 on), an int dtype (int32,
int8, uint8, or int64 with x64), sometimes an empty axis, a traced scalar int
for indexing, and statements that index at negative and out-of-bounds
positions (static and traced: JAX clamps gathers, drops scattered updates,
fills `take`). Its arguments mix ordinary values with NaN, +-inf, -0.0,
subnormals and large magnitudes (and the int extremes). A share of programs
(PYTHON_FLOAT_RATE) has scalar float inputs that the oracle check also passes
as Python floats (weakly typed in JAX), differentiated with grad and
value_and_grad: `program.python_floats` names them and their values.

    >>> program = generate_edge(7)
    >>> program.float_dtype, program.x64, program.source()
    >>> program.function_in(jax_oracle.JAX)(*program.arguments())
"""

from __future__ import annotations

import dataclasses
import zlib

import ml_dtypes
import numpy as np
from program_generator import (
    HOST_FUNCTIONS,
    Block,
    Generator,
    Program,
    Stmt,
    Value,
    dead_code_eliminated,
)

FLOAT_DTYPES = ["float32", "float32", "float16", "bfloat16", "float64", "float64"]
INT_DTYPES = ["int32", "int32", "int8", "uint8"]


# Python floats for scalar inputs: zeros of both signs, tiny, large, negative, ordinary.
PYTHON_FLOATS = [0.0, -0.0, 1e-30, 1e30, -1e4, -2.5, 0.5, 1.0]
PYTHON_FLOAT_RATE = 0.3  # the share of programs given Python float inputs


def _np_dtype(name: str):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _finfo(name: str):
    return ml_dtypes.finfo(ml_dtypes.bfloat16) if name == "bfloat16" else np.finfo(name)


def float_edges(name: str) -> list[float]:
    info = _finfo(name)
    big = float(info.max)
    return [np.nan, np.inf, -np.inf, -0.0, 0.0, float(info.smallest_subnormal),
            big / 4, -(big**0.5), 1.0]  # fmt: skip


def int_edges(name: str) -> list[int]:
    info = np.iinfo(name)
    return [int(info.min), int(info.max), -1, 0, 100, -100, 7]


@dataclasses.dataclass
class EdgeProgram(Program):
    float_dtype: str = "float32"
    int_dtype: str = "int32"
    x64: bool = False
    edge_rate: float = 0.2  # the share of argument elements that are edge values
    # Scalar float inputs passed as Python floats to grad / value_and_grad
    # (checks.check_jax_oracle): input name -> value.
    python_floats: dict = dataclasses.field(default_factory=dict)

    def function(self):
        import olympus
        import olympus.numpy as jnp
        from olympus import lax

        return self._build({"olympus": olympus, "jnp": jnp, "lax": lax})

    def function_in(self, ns):
        """The program over a jax_oracle namespace (OLYMPUS or JAX)."""
        return self._build({"olympus": ns, "jnp": ns.jnp, "lax": ns.lax})

    def _build(self, names: dict):
        namespace = {**names, "np": np}
        exec(HOST_FUNCTIONS, namespace)  # noqa: S102
        exec(compile(self.source(), f"<edge program {self.seed}>", "exec"), namespace)  # noqa: S102
        return namespace["program"]

    def arguments(self, salt: int = 0, dtype=None) -> list:
        return [self.edge_value(v, salt) for v in self.inputs]

    def python_arguments(self) -> list:
        """arguments(), with the inputs named in python_floats as Python floats."""
        return [
            self.python_floats.get(v.name, a)
            for v, a in zip(self.inputs, self.arguments())
        ]

    def python_float_argnums(self) -> tuple:
        """The positions grad takes with python_arguments(): every float input."""
        return tuple(self.float_inputs())

    def edge_value(self, v: Value, salt: int = 0) -> np.ndarray:
        """The argument bound to `v`: a function of (seed, name, salt) only."""
        rng = np.random.default_rng([self.seed, zlib.crc32(v.name.encode()), salt])
        if v.kind == "b":
            return rng.random(v.shape) < 0.5
        if v.kind == "i":
            values = rng.integers(-4, 5, size=v.shape)
            edges = int_edges(self.int_dtype)
            dtype = self.int_dtype
        else:
            values = rng.normal(size=v.shape) * rng.choice([1.0, 10.0], size=v.shape)
            edges = float_edges(self.float_dtype)
            dtype = self.float_dtype
        mask = rng.random(v.shape) < self.edge_rate
        exact = np.int64 if v.kind == "i" else np.float64  # int64's extremes exactly
        picked = np.asarray(edges, dtype=exact)[rng.integers(len(edges), size=v.shape)]
        mixed = np.where(mask, picked, values)
        if v.kind == "i":  # wrapped into the int type (uint8's -1 is 255)
            return np.asarray(mixed).astype(np.int64).astype(dtype)
        return np.asarray(mixed).astype(_np_dtype(dtype))

    def reproducer(self, failing_check: str = "") -> str:
        """A script (run from the repository root) that runs the program under
        olympus and JAX and prints how they differ."""
        args = ", ".join(_literal(a) for a in self.arguments())
        header = (
            f"# fails: {failing_check} (tests/fuzz/checks.py)\n"
            if failing_check
            else ""
        )
        return (
            f"{header}import sys\n\nimport ml_dtypes\nimport numpy as np\n"
            "from numpy import inf, nan\n\nsys.path[:0] = ['tests', 'tests/fuzz']\n"
            "from jax_oracle import JAX, OLYMPUS, differences, run_both, x64\n\n"
            f"HOST = {HOST_FUNCTIONS!r}\nSOURCE = '''\\\n{self.source()}'''\n\n\n"
            "def build(ns):\n"
            "    scope = {'olympus': ns, 'jnp': ns.jnp, 'lax': ns.lax, 'np': np}\n"
            "    exec(HOST, scope)\n    exec(SOURCE, scope)\n"
            "    return scope['program']\n\n\n"
            f"args = [{args}]\nwith x64({self.x64}):\n"
            "    ours, theirs = run_both(\n"
            "        lambda ns, *a: build(ns)(*map(ns.jnp.asarray, a)), *args\n    )\n"
            "    print(ours, theirs, differences(ours, theirs), sep='\\n')\n"
            + self._python_float_reproducer()
        )

    def _python_float_reproducer(self) -> str:
        """The grad / value_and_grad part of the oracle check, with Python floats."""
        if not self.python_floats:
            return ""
        args = ", ".join(
            repr(a) if isinstance(a, float) else _literal(a)
            for a in self.python_arguments()
        )
        return (
            f"\n# with Python floats ({self.python_floats})\n"
            f"args = [{args}]\nargnums = {self.python_float_argnums()}\n\n\n"
            "def loss(ns):\n    f = build(ns)\n"
            "    return lambda *x: sum(ns.jnp.sum(o) for o in f(*x))\n\n\n"
            f"with x64({self.x64}):\n"
            "    ours, theirs = run_both(\n"
            "        lambda ns, *a: (\n"
            "            ns.grad(loss(ns), argnums)(*a),\n"
            "            ns.jit(ns.value_and_grad(loss(ns), argnums))(*a),\n"
            "        ),\n        *args,\n    )\n"
            "    print(ours, theirs, differences(ours, theirs), sep='\\n')\n"
        )


def _literal(a: np.ndarray) -> str:
    dtype = "ml_dtypes.bfloat16" if a.dtype == ml_dtypes.bfloat16 else f"np.{a.dtype}"
    values = (
        a.astype(np.float64).tolist()
        if a.dtype.kind == "V" or "bfloat16" in str(a.dtype)
        else a.tolist()
    )
    return f"np.array({values!r}, {dtype})"


# Generator's olympus-only spellings, and JAX's name of the same function.
JAX_NAMES = {"jnp.cummax(": "lax.cummax("}


class EdgeGenerator(Generator):
    """Generator's statements (JAX-compatible) plus edge indexing."""

    jax_compatible = True

    def statement(self, scope: list, depth: int):
        if self.rng.random() < 0.2:
            stmt = self.edge_index(scope, depth)
            if stmt is not None:
                return stmt
        try:
            stmt = super().statement(scope, depth)
        except ValueError:  # a maker drew an index into an empty axis
            return None
        for olympus_name, jax_name in JAX_NAMES.items():
            if stmt is not None and olympus_name in stmt.expr:
                stmt.expr = stmt.expr.replace(olympus_name, jax_name)
        return stmt

    def edge_index(self, scope, depth):
        """Indexing at negative and out-of-bounds positions, static or traced."""
        x = self.pick(scope, pred=lambda v: len(v.shape) > 0)
        if x is None:
            return None
        n, s = x.name, x.shape
        over = s[0] + int(self.rng.integers(0, 3))
        options = [
            (f"{n}[-1]", s[1:]),
            (f"{n}[-2:{over + 3}]", (min(2, s[0]), *s[1:])),
            (f"{n}[::-1]", s),
            (f"jnp.asarray({n}).at[{over}].set(7.0)", s),
            (f"jnp.asarray({n}).at[{-over - 1}].add(2.0)", s),
            (f"jnp.asarray({n}).at[-1].multiply(-0.0)", s),
        ]
        k = self.pick(scope, "i", lambda v: v.shape == ())
        if k is not None:
            i = k.name
            options += [
                (f"jnp.asarray({n})[{i}]", s[1:]),
                (f"jnp.take({n}, {i}, axis=0)", s[1:]),
                (f"jnp.take({n}, {i}, axis=0, mode='clip')", s[1:]),
                (f"lax.dynamic_slice_in_dim({n}, {i}, 1, 0)", (1, *s[1:])),
                (
                    f"lax.dynamic_update_slice_in_dim({n}, jnp.ones_like({n}[:1]), {i}, 0)",
                    s,
                ),  # noqa: E501
                (f"jnp.asarray({n}).at[{i}].set(-0.0)", s),
                (f"jnp.asarray({n}).at[{i} - {over}].add(1.0)", s),
            ]
        expr, shape = self.choice(options)
        uses = [n] + ([k.name] if k is not None and k.name in expr else [])
        return Stmt([self.new(shape)], expr, uses)


def generate_edge(seed: int) -> EdgeProgram:
    """A random program and its edge configuration, from the seed."""
    config = np.random.default_rng([seed, 99])
    float_dtype = str(config.choice(FLOAT_DTYPES))
    x64 = float_dtype == "float64"
    int_dtype = (
        "int64" if x64 and config.random() < 0.5 else str(config.choice(INT_DTYPES))
    )
    edge_rate = float(config.choice([0.0, 0.1, 0.25, 0.5]))
    # Its own stream, so that the programs of seeds without Python floats stay
    # as they were; with them, the first float input (and others, sometimes)
    # is a scalar, whatever shape the generator drew.
    python = np.random.default_rng([seed, 101])
    with_python = bool(python.random() < PYTHON_FLOAT_RATE)
    gen = EdgeGenerator(seed)
    shape = lambda: gen.shape() if config.random() > 0.15 else (0, *gen.shape(1))  # noqa: E731
    inputs = [Value(f"a{i}", shape(), "f") for i in range(int(gen.rng.integers(1, 4)))]
    if with_python:
        inputs = [
            Value(v.name, (), "f") if i == 0 or python.random() < 0.3 else v
            for i, v in enumerate(inputs)
        ]
    if gen.rng.random() < 0.3:
        inputs.append(Value(f"a{len(inputs)}", gen.shape(2), "i"))
    if config.random() < 0.6:  # a traced index
        inputs.append(Value(f"a{len(inputs)}", (), "i"))
    scope = list(inputs)
    stmts = gen.block(scope, int(gen.rng.integers(2, 8)), 0)
    floats = [v for v in scope[len(inputs) :] if v.kind == "f"] or [inputs[0]]
    outputs = floats[-1:] if gen.rng.random() < 0.6 else floats[-2:]
    result = "(" + ", ".join(v.name for v in outputs) + ",)"
    body = Block(stmts, result, [v.name for v in outputs])
    program = EdgeProgram(
        inputs, body, outputs, seed, float_dtype, int_dtype, x64, edge_rate
    )
    program = dead_code_eliminated(program)
    if with_python:
        program.python_floats = {
            v.name: float(python.choice(PYTHON_FLOATS))
            if python.random() < 0.7
            else round(float(python.normal() * 3.0), 3)
            for v in program.inputs
            if v.kind == "f" and v.shape == ()
        }
    return program
