"""Tangent values shared by forward and reverse mode: symbolic zeros, adding
tangents, materialising zeros.

A tangent (or cotangent) may be a symbolic `Zero(aval)`, which is never
materialised: rules skip the work it would cause. Materialising a zero and
adding two tangents need array primitives, which live in olympus.lax above
this module, so lax fills the `ad_ops` table beside those primitives
(lax/shapes.py), as it fills the rule tables.
"""

from __future__ import annotations

from collections.abc import Callable

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray

# Filled by olympus.lax: "zeros" (aval -> array of zeros), "add" (x, y -> x + y).
ad_ops: dict[str, Callable] = {}


class AvalMarker:
    """A stand-in for a value of which only the type is known (a symbolic zero
    tangent, a transpose rule's linear operand); printed as `Kind(f32[3])`."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.aval.str_short()})"


class Zero(AvalMarker):
    """The tangent (or cotangent) that is known to be zero; never materialised."""

    __slots__ = ()


def is_zero(t) -> bool:
    return type(t) is Zero


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of inexact values share their aval; others have no tangent."""
    return aval


def is_differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


def zeros_like_aval(aval: ShapedArray):
    return ad_ops["zeros"](aval)


def instantiate(t):
    """A tangent as an array: symbolic zeros become real zeros."""
    return zeros_like_aval(t.aval) if is_zero(t) else t


def add_tangents(x, y):
    """Sums two tangents, keeping symbolic zeros symbolic."""
    if is_zero(x):
        return y
    if is_zero(y):
        return x
    return ad_ops["add"](x, y)
