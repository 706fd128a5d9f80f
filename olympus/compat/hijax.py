"""`jax.experimental.hijax`, `jax.Ref` and `jax.new_ref` under olympus.compat:
the names flax.nnx defines its classes with at import.

olympus has no mutable array references and no "high-level" (hijax) types in
its IR. flax.nnx subclasses `HiPrimitive` and `MutableHiType` and registers
them at import, but uses them (and `jax.new_ref`) only when a Variable is made
with `hijax=True` or `ref=True` (both off by default, in `flax.config`). So
the classes and registries here exist and record what is registered; making
a reference or binding a hijax primitive raises MutableArrayError naming what
olympus lacks. The names olympus has (`Zero`, `instantiate_zeros`,
`is_undefined_primal`, `ShapedArray`) are olympus's own.
"""

from __future__ import annotations

from olympus.ir.core import ShapedArray
from olympus.transforms.ad_util import Zero, instantiate as instantiate_zeros
from olympus.transforms.linearize import is_undefined as is_undefined_primal


class MutableArrayError(NotImplementedError):
    """A mutable array reference (jax.Ref) or a hijax type was used: olympus's
    IR has neither."""


def _refuse(what: str) -> MutableArrayError:
    return MutableArrayError(
        f"{what}: olympus has no mutable array references (jax.Ref) or hijax "
        f"types in its IR. In flax.nnx keep Variables plain (the default: "
        f"flax.config flax_array_ref and flax_hijax_variable off, no "
        f"Variable(..., ref=True) or hijax=True)."
    )


class Ref:
    """JAX's mutable array reference type; olympus makes none (new_ref raises),
    so `isinstance(x, Ref)` is False for every olympus value."""

    def __new__(cls, *args, **kwargs):
        raise _refuse("jax.Ref(...)")


class AbstractRef:
    """The type of a reference's abstract value (jax._src.state.types)."""

    def __new__(cls, *args, **kwargs):
        raise _refuse("AbstractRef(...)")


def new_ref(init_val, *, memory_space=None, kind=None):
    """JAX's `jax.new_ref`: refused, olympus has no mutable references."""
    raise _refuse("jax.new_ref")


AbstractValue = ShapedArray  # every olympus aval is a ShapedArray


class HiPrimitive:
    """Base of a library's hijax primitive: it may be defined and named (flax
    makes its instances at import); binding one is refused."""

    multiple_results = False
    call_primitive = False

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args, **params):
        raise _refuse(f"hijax primitive {self.name}")

    def __repr__(self) -> str:
        return self.name


VJPHiPrimitive = HiPrimitive


class HiType:
    """Base of a library's hijax type (a class body only under olympus)."""


class MutableHiType(HiType):
    """Base of a mutable hijax type (flax's AbstractVariable)."""


class AvalQDD:
    """JAX's aval with its quasi-dynamic data: only a hijax value has one."""

    def __new__(cls, *args, **kwargs):
        raise _refuse("AvalQDD(...)")


class AvalMutableQDD(AvalQDD):
    """The mutable form of AvalQDD (refused likewise)."""


class aval_method:
    """A method of a value made available on its hijax type (a wrapper that
    calls the function: class bodies use it as a decorator)."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, instance, owner=None):
        return self.fun.__get__(instance, owner)


class aval_property(property):
    """A property of a value made available on its hijax type."""


# hijax value type -> function giving its type; effect classes control flow
# may carry. Recorded, so a library can read back what it registered.
hitype_registry: dict[type, object] = {}


def register_hitype(value_type: type, to_type) -> None:
    """Records `to_type` as how `value_type`'s values are typed (never
    consulted: olympus makes no hijax values)."""
    hitype_registry[value_type] = to_type


class _EffectTypeSet:
    """The effect classes allowed inside control flow (JAX's set with add_type)."""

    def __init__(self):
        self.types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        self.types.add(effect_type)

    def contains(self, effect) -> bool:
        return type(effect) in self.types


control_flow_allowed_effects = _EffectTypeSet()

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "HiPrimitive",
    "HiType",
    "MutableArrayError",
    "MutableHiType",
    "Ref",
    "ShapedArray",
    "VJPHiPrimitive",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "instantiate_zeros",
    "is_undefined_primal",
    "new_ref",
    "register_hitype",
]
