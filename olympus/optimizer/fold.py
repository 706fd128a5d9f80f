"""Constant folding: an equation whose operands are all literals or small
consts is computed now, with the NumPy reference interpreter's rule, and its
result becomes a literal (a scalar) or a small const (at most MAX_ELEMENTS).

Only primitives whose result IEEE arithmetic fixes exactly are folded (add,
div, comparisons, selects, conversions, ...), so a folded program computes
bit for bit what XLA would have: transcendental functions (exp, sin), whose
last bit differs between libraries, stay, and so do the cases the target
defines (integer division by zero, float -> int out of range, the sign of
max(-0.0, 0.0), float8 overflow). The result keeps the equation's dtype and
weak_type.
"""

from __future__ import annotations

import math

import numpy as np

from olympus.lax.traits import names_with
from olympus.backends.reference import reference_rules
from olympus.ir import dtypes
from olympus.ir.core import Eqn, Literal
from olympus.ir.evaluation import Evaluator, apply_eqn
from olympus.optimizer.program import Walk, literal, rewrite_pass, takes

MAX_ELEMENTS = 16

EXACT = names_with("exact")


def _cast(value, aval) -> np.ndarray:
    """A folded result in the equation's dtype (its shape `fold_step` checks)."""
    return np.asarray(value).astype(aval.dtype, copy=False)


# The evaluation loop's rule table for folding: the reference rules of the
# primitives whose result IEEE arithmetic fixes exactly.
_folding = Evaluator(
    {name: reference_rules[name] for name in EXACT if name in reference_rules},
    coerce=_cast,
    name="constant-folding",
)


def _integer_division_defined(eqn: Eqn, vals) -> bool:
    """XLA leaves x / 0 and INT_MIN / -1 to the target; NumPy's answer may differ."""
    x, y = vals
    if not dtypes.is_integer(x.dtype):
        return True
    if np.any(y == 0):
        return False
    if dtypes.is_signed_int(x.dtype):
        return not np.any((x == np.iinfo(x.dtype).min) & (y == -1))
    return True


def _conversion_defined(eqn: Eqn, vals) -> bool:
    """A float -> integer conversion out of range (or of NaN) is target-defined."""
    (x,) = vals
    new = np.dtype(eqn.params["new_dtype"])
    if dtypes.is_inexact(x.dtype) and dtypes.is_integer(new):
        info = np.iinfo(new)
        wide = x.astype(np.float64)
        return bool(np.all(np.isfinite(wide) & (wide >= info.min) & (wide <= info.max)))
    return True


def _no_zeros(eqn: Eqn, vals) -> bool:
    """max(-0.0, 0.0) and sign(-0.0): the sign of a zero result is the target's."""
    return not any(np.any(v == 0) for v in vals if dtypes.is_inexact(v.dtype))


_GUARDS = {
    "max": _no_zeros,
    "min": _no_zeros,
    "sign": _no_zeros,
    "clamp": _no_zeros,
    "div": _integer_division_defined,
    "rem": _integer_division_defined,
    "convert_element_type": _conversion_defined,
}


def _plain_dtype(dtype) -> bool:
    """Not complex, not float8 (whose overflow rules differ between libraries)."""
    return not dtypes.is_complex(dtype) and dtype not in dtypes.float8_dtypes


def _value(walk: Walk, atom):
    if isinstance(atom, Literal):
        return np.asarray(atom.val, atom.aval.dtype)
    if atom in walk.const_values and math.prod(atom.aval.shape) <= MAX_ELEMENTS:
        return np.asarray(walk.const_values[atom]).astype(atom.aval.dtype, copy=False)
    return None


@takes(EXACT)
def fold_step(walk: Walk, eqn: Eqn) -> bool:
    if "exact" not in eqn.primitive.traits or eqn.primitive.multiple_results:
        return False
    vals = []
    for x in eqn.invars:
        if type(x) is not Literal and x not in walk.const_values:
            return False  # the common case, decided before any NumPy call
        vals.append(_value(walk, x))
    (out,) = eqn.outvars
    # math.prod, not ShapedArray.size (np.prod): the same count, without NumPy
    if math.prod(out.aval.shape) > MAX_ELEMENTS or not _plain_dtype(out.aval.dtype):
        return False
    if any(v is None or not _plain_dtype(v.dtype) for v in vals):
        return False
    guard = _GUARDS.get(eqn.primitive.name)
    if guard is not None and not guard(eqn, vals):
        return False
    (result,) = apply_eqn(_folding, eqn, vals)
    if result.shape != out.aval.shape:
        return False
    if out.aval.shape == ():
        walk.replace(out, literal(result, out.aval.dtype, out.aval.weak_type))
    else:
        walk.replace(out, walk.add_const(result, out.aval))
    return True


fold = rewrite_pass(fold_step)
