"""`jax.extend.core.primitives` under olympus: JAX's primitive names bound to
olympus's primitives, for libraries that compare an equation's primitive with
one of them (distrax: `eqn.primitive is primitives.jit_p`).

Every lax `*_p` name olympus has (see olympus/lax/jax_names.py), JAX's names
of olympus's linear-algebra primitives, `jit_p` (olympus's `pjit`, whose
params are `olympuspr` and `name`, not JAX's `jaxpr`, ...) and `remat_p`
(olympus's `checkpoint`). `call_p` and `closed_call_p` (JAX's call
primitives, which olympus's programs never hold) expand when bound: the
function or closed program is evaluated in place.
"""

from __future__ import annotations

from olympus.ir.core import all_primitives
from olympus.lax.jax_names import ExpandedPrimitive, jax_named_primitives
from olympus.tracer.evaluation import eval_program

# JAX's name -> olympus's primitive name, where they differ or live outside lax.
_OTHER_NAMES = {
    "jit_p": "pjit",
    "remat_p": "checkpoint",
    "cholesky_p": "cholesky",
    "eig_p": "eig",
    "eigh_p": "eigh",
    "lu_p": "lu",
    "qr_p": "qr",
    "svd_p": "svd",
    "triangular_solve_p": "triangular_solve",
    "householder_product_p": "householder_product",
    "custom_jvp_call_p": "custom_jvp_call",
    "custom_vjp_call_p": "custom_vjp_call",
    "custom_lin_p": "custom_lin",
    "name_p": "name",
}

globals().update(jax_named_primitives())
globals().update({jax: all_primitives[name] for jax, name in _OTHER_NAMES.items()})


def _call(fun, *args, **params):
    """`call_p.bind(f, *args)`: `f` (a linear_util.WrappedFun) on `args`."""
    return fun.call_wrapped(*args)


def _closed_call(*args, call_jaxpr, **params):
    """`closed_call_p.bind(*args, call_jaxpr=closed)`: `closed` evaluated."""
    return eval_program(call_jaxpr.olympuspr, call_jaxpr.consts, list(args))


class CallPrimitive(ExpandedPrimitive):
    """JAX's call primitives (a function or program as an operand)."""

    __slots__ = ()
    call_primitive = True


call_p = CallPrimitive("call", _call, multiple_results=True)
closed_call_p = CallPrimitive("closed_call", _closed_call, multiple_results=True)
