"""lax's primitives under JAX's names (`lax.add_p`, `lax.exp_p`, ...) and a few
functions JAX's lax has beside them (`broadcast_shapes`, `pswapaxes`).

Libraries written for JAX bind primitives directly (`lax.add_p.bind(x, y)`)
or key tables by them; each name here is olympus's own primitive object, so
`bind` works eagerly and under jit, grad and vmap. A primitive's parameters are
olympus's (see `make_olympuspr`), which match JAX's for the elementwise ones.
JAX's primitives that olympus does not have are listed in docs/differences.md.
"""

from __future__ import annotations

import sys

from olympus.ir.core import Primitive, all_primitives
from olympus.lax.parallel import all_to_all

# The names of jax.lax's `*_p` attributes whose primitive olympus defines.
JAX_PRIMITIVE_NAMES = (
    "abs",
    "acos",
    "acosh",
    "add",
    "all_gather",
    "all_to_all",
    "and",
    "argmax",
    "argmin",
    "asin",
    "asinh",
    "atan2",
    "atan",
    "atanh",
    "axis_index",
    "bessel_i0e",
    "bessel_i1e",
    "bitcast_convert_type",
    "broadcast_in_dim",
    "cbrt",
    "ceil",
    "clamp",
    "clz",
    "complex",
    "concatenate",
    "cond",
    "conv_general_dilated",
    "convert_element_type",
    "cos",
    "cosh",
    "digamma",
    "div",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "eq",
    "erf_inv",
    "erf",
    "erfc",
    "exp",
    "expm1",
    "fft",
    "floor",
    "gather",
    "ge",
    "gt",
    "igamma_grad_a",
    "igamma",
    "igammac",
    "imag",
    "integer_pow",
    "iota",
    "is_finite",
    "le",
    "lgamma",
    "log1p",
    "log",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "not",
    "optimization_barrier",
    "or",
    "pad",
    "pmax",
    "pmin",
    "polygamma",
    "population_count",
    "pow",
    "ppermute",
    "psum",
    "real",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_precision",
    "reduce_prod",
    "reduce_sum",
    "reduce_window_max",
    "reduce_window_sum",
    "reduce_xor",
    "regularized_incomplete_beta",
    "rem",
    "reshape",
    "rev",
    "round",
    "rsqrt",
    "scan",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter",
    "select_n",
    "sharding_constraint",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "slice",
    "sort",
    "sqrt",
    "squeeze",
    "stop_gradient",
    "sub",
    "tan",
    "tanh",
    "transpose",
    "while",
    "xor",
    "zeta",
)


class ExpandedPrimitive(Primitive):
    """A JAX primitive olympus computes as a composition of its own.

    `bind(*args, **params)` (JAX's parameters) evaluates the composition under
    whatever trace is current, so eager calls, jit, grad and vmap behave as
    lax's function of the same name. Traced programs show the composition's
    equations, never this primitive: olympus's own functions do not bind it,
    and a table keyed by it (distrax's inverses) simply never matches."""

    __slots__ = ("expand",)

    def __init__(self, name: str, expand, multiple_results: bool = False):
        super().__init__(name, multiple_results)
        self.expand = expand

    def bind(self, *args, **params):
        return self.expand(*args, **params)


def _lax():
    """The lax package, loaded by the time a primitive is bound (not imported
    here: lax's __init__ imports this module)."""
    return sys.modules["olympus.lax"]


def _cumulative(name: str):
    return lambda x, *, axis, reverse: getattr(_lax(), name)(x, axis, reverse)


# name -> (how JAX's bind(*args, **params) is computed, multiple_results)
EXPANDED_PRIMITIVES = {
    "conj": (lambda x, *, input_dtype=None: _lax().conj(x), False),
    "square": (lambda x: _lax().square(x), False),
    "exp2": (lambda x, *, accuracy=None: _lax().exp2(x, accuracy=accuracy), False),
    "nextafter": (lambda x1, x2: _lax().nextafter(x1, x2), False),
    "cumsum": (_cumulative("cumsum"), False),
    "cumprod": (_cumulative("cumprod"), False),
    "cummax": (_cumulative("cummax"), False),
    "cummin": (_cumulative("cummin"), False),
    "cumlogsumexp": (_cumulative("cumlogsumexp"), False),
    "top_k": (lambda x, *, k, axis=-1: list(_lax().top_k(x, k, axis=axis)), True),
    "split": (lambda x, *, sizes, axis: list(_lax().split(x, sizes, axis)), True),
}


_EXPANDED = {
    f"{name}_p": ExpandedPrimitive(name, expand, multiple)
    for name, (expand, multiple) in EXPANDED_PRIMITIVES.items()
}


def jax_named_primitives() -> dict[str, Primitive]:
    """{"add_p": add primitive, ...} for each of JAX_PRIMITIVE_NAMES, and the
    ExpandedPrimitive of each name in EXPANDED_PRIMITIVES (one object each)."""
    named = {f"{name}_p": all_primitives[name] for name in JAX_PRIMITIVE_NAMES}
    return named | _EXPANDED


class AxisIndexGroupsError(NotImplementedError):
    """A collective given axis_index_groups, which olympus does not take."""


class BroadcastShapesError(ValueError):
    """Shapes that NumPy's broadcasting cannot join (lax.broadcast_shapes)."""


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives `shapes` together.

    >>> lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    if not shapes:
        raise BroadcastShapesError("broadcast_shapes: give at least one shape")
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(int(d) for d in s) for s in shapes]
    result = []
    for dims in zip(*padded):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise BroadcastShapesError(
                f"Incompatible shapes for broadcasting: shapes={list(shapes)}; "
                "each axis must have one size or 1"
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def pswapaxes(x, axis_name: str, axis: int, *, axis_index_groups=None):
    """Swaps the named axis `axis_name` with positional `axis` of `x` (an
    all_to_all splitting and joining the same axis), inside shard_map."""
    if axis_index_groups is not None:
        raise AxisIndexGroupsError(
            "pswapaxes(axis_index_groups=...): olympus's collectives run over "
            "whole mesh axes; split the mesh into the groups instead"
        )
    return all_to_all(x, axis_name, axis, axis)
