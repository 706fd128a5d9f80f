"""`jax.experimental.hijax` under olympus.compat: the names flax.nnx defines
its classes with at import.

olympus has no "high-level" (hijax) types in its IR. flax.nnx subclasses
`HiPrimitive` and `MutableHiType` and registers them at import, but uses them
only when a Variable is made with `hijax=True` (off by default, in
`flax.config`). So the classes and registries here exist and record what is
registered; binding a hijax primitive raises MutableArrayError naming what
olympus lacks. Mutable array references themselves are olympus's own
(`olympus.new_ref`, `olympus.Ref`: olympus/ref.py), re-exported here. The
names olympus has (`Zero`, `instantiate_zeros`,
`is_undefined_primal`, `ShapedArray`) are olympus's own.
"""

from __future__ import annotations

from olympus.ir.core import ShapedArray
from olympus.ref import AbstractRef, Ref, new_ref
from olympus.transforms.ad_util import Zero, instantiate as instantiate_zeros
from olympus.transforms.linearize import is_undefined as is_undefined_primal


class MutableArrayError(NotImplementedError):
    """A hijax type or primitive was used: olympus's IR has none."""


def _refuse(what: str) -> MutableArrayError:
    return MutableArrayError(
        f"{what}: olympus has no hijax types in its IR. In flax.nnx keep "
        f"Variables plain or ref-backed (flax.config flax_hijax_variable off, "
        f"no Variable(..., hijax=True))."
    )


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
