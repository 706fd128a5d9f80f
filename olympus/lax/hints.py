"""`olympus.hint(x, **hints)`: annotations on a value for the compiler.

A hint is an identity primitive whose params are the annotations:

    c:f32[3] = hint[device="gpu" unroll=4] b

jvp gives the tangent the same hint, transpose the cotangent, vmap the batched
value; the optimizer keeps it while its output is used, and its rewrite
rows match through it (a hint without `precision` is an identity to them). Known keys have real effects and checked values (`hint_keys`):
`precision` sets the XLA precision of the matmuls reading the value (where
their own `precision=` is None). Other keys are kept and printed for backends
that understand them, as Myia's hint system for device-specific instructions.
Values are str, int, float, bool, None or tuples of them, so the printed
program parses back.
"""

from __future__ import annotations

from typing import Callable

from olympus.backends.xla.lowering import value_hint_primitives
from olympus.ir.printer import quoted_string_params
from olympus.lax.base import define_primitive
from olympus.lax.reductions import canonical_precision
from olympus.tracer import core
from olympus.tracer.core import user_source_info
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.transforms.ad_util import is_zero
from olympus.transforms.batching import batch_rules
from olympus.transforms.jvp import jvp_rules
from olympus.transforms.linearize import transpose_rules


class HintTypeError(TypeError):
    """A hint value of a type a printed program cannot hold."""


class HintValueError(ValueError):
    """A value a known hint key does not accept (e.g. `precision="fast"`)."""


def _where() -> str:
    where = user_source_info()
    return f" at {where}" if where is not None else ""


def _check_precision(value) -> str:
    """`precision=`: one operand's precision, as lax.Precision names it."""
    try:
        if isinstance(value, (tuple, list)) or value is None:
            raise ValueError(value)
        return canonical_precision(value, "olympus.hint(precision=...)")[0]
    except ValueError:
        raise HintValueError(
            f"olympus.hint: unknown value precision={value!r}{_where()}; use "
            f"lax.Precision.DEFAULT/HIGH/HIGHEST or one of 'default', 'high', "
            f"'highest', 'bfloat16', 'tensorfloat32', 'float32'"
        ) from None


# Known keys -> the check that canonicalizes their value (or raises HintValueError).
hint_keys: dict[str, Callable] = {"precision": _check_precision}

_VALUE_TYPES = (str, int, float, bool, type(None))


def _printable(value) -> bool:
    if isinstance(value, tuple):
        return all(_printable(v) for v in value)
    return isinstance(value, _VALUE_TYPES)


def canonical_hints(hints: dict) -> dict:
    """The hints as the equation's params: known keys checked, values typed."""
    params = {}
    for key, value in hints.items():
        check = hint_keys.get(key)
        if check is not None:
            value = check(value)
        if not _printable(value):
            raise HintTypeError(
                f"olympus.hint: {key}={value!r} has type {type(value).__name__}"
                f"{_where()}; hint values are str, int, float, bool, None or tuples of them"
            )
        params[key] = value
    return params


hint_p = define_primitive("hint", lambda x, **hints: x, lambda ctx, x, **hints: x)
quoted_string_params.add(hint_p)
value_hint_primitives.add(hint_p)


def _hint_jvp(primals, tangents, **hints):
    """The tangent carries the primal's hint (its matmuls want the same precision)."""
    (t,) = tangents
    return hint_p.bind(primals[0], **hints), t if is_zero(t) else hint_p.bind(
        t, **hints
    )


jvp_rules[hint_p] = _hint_jvp
transpose_rules[hint_p] = lambda ct, x, **hints: [
    ct if is_zero(ct) else hint_p.bind(ct, **hints)
]
batch_rules[hint_p] = lambda axis_size, vals, dims, **hints: (
    hint_p.bind(vals[0], **hints),
    dims[0],
)


def hint(x, **hints):
    """`x` annotated with `hints`, kept through transformations.

    Hints travel through jvp, grad, vmap, checkpoint and the optimizer and
    are printed as `hint[key=value ...]`. `precision=` ("highest",
    lax.Precision.HIGH, ...) sets the precision of the matmuls (dot, einsum,
    @) that read the value under jit; other keys are kept for backends that
    understand them. Outside a trace it returns `x` itself.

    Args:
      x: a pytree of arrays.
      **hints: hashable keyword annotations.

    Returns:
      x, unchanged in value.

    Raises:
      HintTypeError: a hint's value is not a str, int, float, bool, None or
        a tuple of them.

    Example:
      >>> f = lambda x: olympus.hint(x, device="gpu", unroll=4) * 2.0
      >>> print(olympus.make_olympuspr(f)(jnp.ones(3)))
      { lambda ; a:f32[3]. let
          b:f32[3] = hint[device="gpu" unroll=4] a
          c:f32[3] = mul b 2.0:f32[]
        in (c,) }
    """
    params = canonical_hints(hints)
    if core.current_trace() is core.eval_trace:
        return x
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [hint_p.bind(v, **params) for v in leaves])
