"""What every primitive definition in olympus/lax shares.

`define_primitive` makes a primitive that runs eagerly through XLA and
registers its shape rule and lowering; transformation rules are registered
beside each primitive into the tables the transforms own.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import Primitive, ShapedArray, all_primitives
from olympus.backends.xla.dispatch import apply_primitive
from olympus.backends.xla.lowering import lowering_rules
from olympus.tracer.errors import OlympusTypeError


def define_primitive(
    name: str,
    abstract_eval: Callable,
    lowering: Callable,
    multiple_results: bool = False,
    traits: tuple[str, ...] = (),
) -> Primitive:
    """A primitive with its shape rule, eager implementation, lowering and the
    traits passes may assume of it (the vocabulary: lax/traits.py)."""
    prim = Primitive(name, multiple_results, traits)
    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(partial(apply_primitive, prim))
    lowering_rules[prim] = lowering
    all_primitives[name] = prim
    return prim


# ---- shape-rule helpers: each raises OlympusTypeError with a plain message ----
def dtype_kind_check(
    name: str, aval: ShapedArray, accepted: Callable, kinds: str
) -> None:
    if not accepted(aval.dtype):
        raise OlympusTypeError(
            f"{name} requires {kinds} operands, got {dtypes.short_name(aval.dtype)}"
        )


def same_dtypes(name: str, avals) -> np.dtype:
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        kinds = ", ".join(a.str_short() for a in avals)
        raise OlympusTypeError(
            f"{name} requires operands of one dtype, got {kinds}; convert them "
            f"(e.g. with .astype) or use olympus.numpy, which promotes"
        )
    return first


def broadcast_shapes_scalar(name: str, avals) -> tuple:
    """Elementwise operands share one shape; rank-0 operands broadcast."""
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        kinds = ", ".join(a.str_short() for a in avals)
        raise OlympusTypeError(
            f"{name} requires operands of one shape (or scalars), got {kinds}; "
            f"broadcast them first (olympus.numpy broadcasts)"
        )
    return shapes.pop() if shapes else ()


def all_weak(avals) -> bool:
    return all(a.weak_type for a in avals)


def check_axes(name: str, axes, ndim: int) -> tuple:
    axes = tuple(int(a) for a in axes)
    for a in axes:
        if not 0 <= a < ndim:
            raise OlympusTypeError(f"{name}: axis {a} is out of range for rank {ndim}")
    if len(set(axes)) != len(axes):
        raise OlympusTypeError(f"{name}: repeated axis in {axes}")
    return axes


def is_number(dtype) -> bool:
    return dtype != dtypes.bool_


def is_int_or_bool(dtype) -> bool:
    return dtypes.is_integer(dtype) or dtype == dtypes.bool_


def blocks(*sizes) -> list[list[int]]:
    """Consecutive index ranges of the given sizes: blocks(2, 1) = [[0, 1], [2]]
    (an equation's operands split into its groups)."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out
