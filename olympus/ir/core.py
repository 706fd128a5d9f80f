"""The olympuspr language: abstract values, variables, equations, programs.

An `Olympuspr` is a typed, first-order program in A-normal form: every
equation applies one `Primitive` to atoms (`Var` or `Literal`) and binds new
`Var`s. A `ClosedOlympuspr` pairs it with values for its constvars.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from olympus.ir import dtypes


class ShapeProperties:
    """`ndim` and `size`, read off `shape`: what an abstract value and a
    ShapeDtypeStruct (olympus/tracer/functions.py) both answer."""

    __slots__ = ()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class ShapedArray(ShapeProperties):
    """The abstract value of an array: shape, dtype and weak_type.

    `weak_type` marks values that came from Python scalars; they give way to
    the dtype of whatever they are combined with (see `dtypes.promote`).
    `sharding` is None except for values laid out over a mesh with Explicit
    axes, where the layout is part of the type (an `AvalSharding`, printed
    `f32[8@x,4]`); without one an aval prints, compares and hashes as ever.
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "_hash")
    array_abstraction_level = 1

    def __init__(
        self, shape: Sequence[int], dtype, weak_type: bool = False, sharding=None
    ):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding
        if sharding is None:
            self._hash = hash((self.shape, self.dtype, self.weak_type))
        else:
            self._hash = hash((self.shape, self.dtype, self.weak_type, sharding))

    def update(
        self, shape=None, dtype=None, weak_type=None, sharding=None
    ) -> ShapedArray:
        """A copy with the given fields; a new shape drops the sharding (a
        sharding rule says the new one)."""
        if sharding is None and shape is None:
            sharding = self.sharding
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            sharding,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other) -> bool:
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and self.sharding == other.sharding
        )

    def __hash__(self) -> int:
        return self._hash

    def _dims(self) -> str:
        if self.sharding is None:
            return ",".join(map(str, self.shape))
        return ",".join(
            f"{d}@{axes}" if axes else str(d)
            for d, axes in zip(self.shape, self.sharding.dim_names(self.ndim))
        )

    def str_short(self) -> str:
        """`f32[3,4]`: the IR's spelling of this type (`f32[8@x,4]` where
        dimension 0 is split over mesh axis x)."""
        return f"{dtypes.short_name(self.dtype)}[{self._dims()}]"

    def __str__(self) -> str:
        """`float32[3,4]`, `~float32[]` when weak: JAX's `str` of a type
        (what `print(typeof(x))` shows); programs print `str_short`."""
        weak = "~" if self.weak_type else ""
        return f"{weak}{np.dtype(self.dtype).name}[{self._dims()}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({str(self).lstrip('~')}{weak})"


class AvalSharding(NamedTuple):
    """The layout part of an explicit-mode type (JAX's `typeof(x).sharding`):
    the mesh without its devices (an AbstractMesh; None in a program read
    back from text) and `spec`, one entry per dimension (None, an axis name
    or a tuple of names) as a PartitionSpec says it."""

    mesh: Any
    spec: tuple

    def __repr__(self) -> str:  # as JAX prints a type's sharding
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def dim_names(self, ndim: int) -> list[str]:
        """Per dimension, what follows `@` in the IR (`x`, `(x,y)`), or ''."""
        out = []
        for d in range(ndim):
            entry = self.spec[d] if d < len(self.spec) else None
            names = (
                () if entry is None else (entry,) if isinstance(entry, str) else entry
            )
            out.append(
                ""
                if not names
                else names[0]
                if len(names) == 1
                else f"({','.join(names)})"
            )
        return out


class SourceInfo(NamedTuple):
    """Where in the user's code an equation was created."""

    file: str
    line: int
    function: str
    # `olympus.named_scope` path ("outer/inner"), relative to the program
    # holding the equation; the lowering prefixes the enclosing equations' scopes
    scope: str = ""

    # True on the equations a transpose made from this line (a backward pass)
    backward = False
    # On equations an optimizer rule made: what they replaced and which rule
    # fired (olympus.optimizer.rules.Rewrite; `str()` names the rule)
    rewrite = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line} ({self.function})"
        return f"{where} [{self.scope}]" if self.scope else where

    def as_backward(self) -> SourceInfo:
        """The same line (equal, printed the same), marked as in a backward pass."""
        if self.backward:
            return self
        if self.rewrite is not None:
            return RewrittenSourceInfo(*self, rewrite=self.rewrite, backward=True)
        return BackwardSourceInfo(*self)

    def with_rewrite(self, rewrite) -> SourceInfo:
        """The same line (equal, `str` the same), on an equation a rule made."""
        return RewrittenSourceInfo(*self, rewrite=rewrite, backward=self.backward)


class BackwardSourceInfo(SourceInfo):
    """The line of a forward equation, on the equations its transpose made:
    debuggers (NaN provenance) tell the backward pass from the forward one."""

    __slots__ = ()
    backward = True


class RewrittenSourceInfo(SourceInfo):
    """The line of an equation an optimizer rule made, with the rule's record:
    transforms that copy source_info keep it (no __slots__: a tuple subclass
    holds its extra fields in a __dict__)."""

    def __new__(cls, file, line, function, scope="", rewrite=None, backward=False):
        self = tuple.__new__(cls, (file, line, function, scope))
        self.rewrite = rewrite
        self.backward = backward
        return self

    def __getnewargs__(self):
        return (*self, self.rewrite, self.backward)

    def _replace(self, **fields) -> RewrittenSourceInfo:
        new = SourceInfo(*self)._replace(**fields)
        return RewrittenSourceInfo(*new, rewrite=self.rewrite, backward=self.backward)


class RewriteRecord:
    """An optimizer rewrite's provenance as text: the rule that fired (`str()`,
    e.g. `stable: log(1 + exp(x)) -> softplus`) and the equations it replaced,
    as printed. `parse` and `load` give this back for the optimizer's
    `rules.Rewrite`, whose live rule and equations a file does not carry."""

    __slots__ = ("text", "replaced")

    def __init__(self, text: str, replaced=()):
        self.text = text
        self.replaced = list(replaced)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Rewrite({self}; replaced {'; '.join(self.replaced)})"


_var_ids = itertools.count()


class Var:
    """A variable of an olympuspr; identity is the object, the name is printed."""

    __slots__ = ("aval", "_id", "suffix")

    def __init__(self, aval: ShapedArray, suffix: str = ""):
        self.aval = aval
        self._id = next(_var_ids)
        self.suffix = suffix

    def __repr__(self) -> str:
        return f"Var(id={self._id}, {self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in an equation: `3.0:f32[]`."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r}:{self.aval.str_short()})"

    def bind_value(self):
        """The value to bind when an interpreter replays this literal: a weak
        literal becomes a Python scalar again so it stays weakly typed (a NumPy
        scalar would turn `add b 1.0:f32[]` strong)."""
        if self.aval.weak_type and np.shape(self.val) == ():
            scalar = np.asarray(self.val).item()
            if dtypes.python_scalar_dtype(scalar) == self.aval.dtype:
                return scalar
        return self.val


Atom = Var | Literal


class Eqn(NamedTuple):
    """`outvars = primitive[params] invars`, with the user's source line."""

    primitive: "Primitive"
    params: dict
    invars: list
    outvars: list
    source_info: SourceInfo | None = None


# How programs show themselves, by kind: "text" (olympus.ir.printer), "html"
# (olympus.ir.html), "dot" and "svg" (olympus.ir.dot). Those modules import this
# one, so they fill the table when olympus.ir is imported instead of being
# imported here.
displays: dict[str, Callable] = {}


class _Displayed:
    """How programs show themselves: text, notebooks (HTML), IPython, Graphviz;
    shared by Olympuspr and ClosedOlympuspr."""

    __slots__ = ()

    def __str__(self) -> str:
        return displays["text"](self)

    def pretty(self, source_info: bool = False, weak_types: bool = False) -> str:
        """The printed form, optionally with source lines (`# file:line
        (function)`) and weak types (`f32[]{weak}`); `olympus.ir.parse` reads
        every variant back."""
        return displays["text"](self, source_info=source_info, weak_types=weak_types)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return displays["html"](self)

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(str(self))

    def to_dot(self) -> str:
        """Graphviz DOT text of this program (sub-programs as clusters)."""
        return displays["dot"](self)

    def to_svg(self) -> str:
        """An SVG picture of this program (needs Graphviz's `dot` program)."""
        return displays["svg"](self)


class Olympuspr(_Displayed):
    """A typed program: `{ lambda constvars ; invars. let eqns in (outvars) }`."""

    __slots__ = ("constvars", "invars", "eqns", "outvars", "debug_info", "__weakref__")

    def __init__(self, constvars, invars, eqns, outvars, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)
        self.debug_info = debug_info

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]


class ClosedOlympuspr(_Displayed):
    """An olympuspr with values for its constvars: what `make_olympuspr` returns."""

    __slots__ = ("olympuspr", "consts", "__weakref__")

    def __init__(self, olympuspr: Olympuspr, consts: Sequence[Any]):
        if len(consts) != len(olympuspr.constvars):
            raise ValueError(
                f"{len(olympuspr.constvars)} constvars but {len(consts)} consts"
            )
        self.olympuspr = olympuspr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.olympuspr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.olympuspr.out_avals

    @property
    def eqns(self) -> list[Eqn]:
        return self.olympuspr.eqns

    @property
    def jaxpr(self) -> Olympuspr:
        """JAX's name for `olympuspr`: this class is `olympus.extend.core.ClosedJaxpr`."""
        return self.olympuspr

    @property
    def literals(self) -> list:
        """JAX's name for `consts` (distrax reads it)."""
        return self.consts


class Primitive:
    """An operation of the IR. Arrays are positional, static params keywords.

    `abstract_eval(*avals, **params) -> aval | list[aval]` is its shape rule;
    the transforms and backends keep their own rule tables keyed by primitive.
    `traits` are what passes may assume of it ("commutative", "reduction",
    ...), declared where it is defined; olympus/lax/traits.py says what each
    one means.
    """

    __slots__ = ("name", "multiple_results", "abstract_eval", "impl", "traits")
    # JAX's flag, read by libraries that walk programs (distrax): olympus has
    # no call primitives (a jit inside a program is `pjit`, a closed program).
    call_primitive = False

    def __init__(self, name: str, multiple_results: bool = False, traits=()):
        self.name = name
        self.multiple_results = multiple_results
        self.traits: frozenset[str] = frozenset(traits)
        self.abstract_eval: Callable | None = None
        self.impl: Callable | None = None

    def def_abstract_eval(self, rule: Callable) -> Callable:
        self.abstract_eval = rule
        return rule

    def def_impl(self, impl: Callable) -> Callable:
        self.impl = impl
        return impl

    def bind(self, *args, **params):
        return _binder(self, args, params)

    def __repr__(self) -> str:
        return self.name


# Every primitive a program's text may name, by name (the parser looks names up
# here); olympus.lax registers each primitive it defines. debug_callback stays
# out: a program holding a Python function cannot be written as text.
all_primitives: dict[str, Primitive] = {}

# Parameter types (NamedTuples such as lax's GatherDimensionNumbers) that print
# as `Name(field=value, ...)`, by name: the parser rebuilds them as `cls(**fields)`.
param_types: dict[str, type] = {}


def register_param_type(cls: type) -> type:
    """Lets programs holding `cls` parameters parse back (a class decorator)."""
    param_types[cls.__name__] = cls
    return cls


def _no_binder(prim, args, params):
    raise RuntimeError("olympus.tracer has not installed a binder")


_binder: Callable = _no_binder


def set_binder(binder: Callable) -> None:
    """The tracer installs how `Primitive.bind` dispatches (ir knows no traces)."""
    global _binder
    _binder = binder


def subolympusprs(params: dict):
    """The sub-programs held by a higher-order equation's params."""
    for value in params.values():
        values = value if isinstance(value, (tuple, list)) else (value,)
        for v in values:
            if isinstance(v, ClosedOlympuspr):
                yield v.olympuspr
            elif isinstance(v, Olympuspr):
                yield v
