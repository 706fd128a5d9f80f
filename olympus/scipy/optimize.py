"""olympus.scipy.optimize: `minimize` with BFGS (JAX's `jax.scipy.optimize`),
a quasi-Newton method for smooth problems that runs inside jit and vmap.

>>> res = olympus.scipy.optimize.minimize(
...     lambda x: jnp.sum((x - 3.0) ** 2), jnp.zeros(2), method="BFGS")
>>> res.x.round(4), bool(res.success)
(Array([3., 3.], dtype=float32), True)
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

import olympus.numpy as jnp
from olympus import lax
from olympus.autodiff import value_and_grad


class OptimizeResults(NamedTuple):
    """What `minimize` returns (JAX's fields): the solution `x`, `success`,
    `status` (0 converged, 1 iteration limit, 3 line search failed), the value
    `fun`, gradient `jac` and inverse-Hessian estimate `hess_inv` at `x`, and
    the counts of function and gradient evaluations and of iterations."""

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class MinimizeMethodError(ValueError):
    """A `method` olympus's minimize does not have (it has 'BFGS')."""


def minimize(
    fun: Callable,
    x0,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimizes `fun(x, *args)` over a 1-D `x` from `x0`.

    `options`: `maxiter` (default 200 * x0.size), `gtol` (the gradient norm
    that counts as converged, default 1e-5; `tol` sets it too), `norm` (of the
    gradient, default inf) and `line_search_maxiter` (default 10).
    """
    if not isinstance(args, tuple):
        raise TypeError(
            f"args argument to olympus.scipy.optimize.minimize must be a tuple, "
            f"got {args}"
        )
    if method.lower() != "bfgs":
        raise MinimizeMethodError(
            f"minimize: method {method!r} is not available; use method='BFGS'"
        )
    options = dict(options or {})
    if tol is not None:
        options.setdefault("gtol", tol)
    return _bfgs(lambda x: fun(x, *args), jnp.asarray(x0), **options)


class _State(NamedTuple):
    k: Any
    nfev: Any
    ngev: Any
    x: Any
    f: Any
    g: Any
    h: Any
    status: Any  # -1 running, 0 converged, 1 iteration limit, 3 line search failed


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    value_grad = value_and_grad(fun)
    maxiter = 200 * x0.size if maxiter is None else maxiter
    f0, g0 = value_grad(x0)
    eye = jnp.eye(x0.size, dtype=x0.dtype)
    start = jnp.where(jnp.linalg.norm(g0, ord=norm) < gtol, 0, -1)
    state = _State(0, 1, 1, x0, f0, g0, eye, start)

    def keep_going(s: _State):
        return (s.status == -1) & (s.k < maxiter)

    def step(s: _State) -> _State:
        p = -s.h @ s.g
        alpha, f_new, g_new, evals, ok = _backtracking(
            value_grad, s.x, s.f, s.g, p, line_search_maxiter
        )
        sk, yk = alpha * p, g_new - s.g
        curvature = jnp.dot(yk, sk)
        rho = jnp.where(curvature > 0, 1 / jnp.where(curvature > 0, curvature, 1), 0)
        left = eye - rho * jnp.outer(sk, yk)
        h = left @ s.h @ left.T + rho * jnp.outer(sk, sk)
        converged = jnp.linalg.norm(g_new, ord=norm) < gtol
        status = jnp.where(ok, jnp.where(converged, 0, -1), 3)
        x = jnp.where(ok, s.x + sk, s.x)
        return _State(
            s.k + 1,
            s.nfev + evals,
            s.ngev + evals,
            x,
            jnp.where(ok, f_new, s.f),
            jnp.where(ok, g_new, s.g),
            jnp.where(ok, h, s.h),
            status,
        )

    s = lax.while_loop(keep_going, step, state)
    status = jnp.where(s.status == -1, 1, s.status)
    return OptimizeResults(
        x=s.x,
        success=status == 0,
        status=status,
        fun=s.f,
        jac=s.g,
        hess_inv=s.h,
        nfev=s.nfev,
        njev=s.ngev,
        nit=s.k,
    )


def _backtracking(value_grad, x, f, g, p, max_steps: int):
    """The step length: 1, halved until Armijo's sufficient decrease holds
    (at most `max_steps` halvings); also the new value and gradient."""
    slope = jnp.dot(g, p)

    def not_done(c):
        alpha, f_new, _, i = c
        decrease = f_new <= f + 1e-4 * alpha * slope
        return (i < max_steps) & ~(decrease & jnp.isfinite(f_new))

    def halve(c):
        alpha, _, _, i = c
        alpha = alpha / 2
        f_new, g_new = value_grad(x + alpha * p)
        return alpha, f_new, g_new, i + 1

    one = jnp.ones((), x.dtype)
    f1, g1 = value_grad(x + p)
    alpha, f_new, g_new, i = lax.while_loop(not_done, halve, (one, f1, g1, 0))
    ok = (f_new <= f + 1e-4 * alpha * slope) & jnp.isfinite(f_new) & (slope < 0)
    return alpha, f_new, g_new, i + 1, ok


__all__ = ["OptimizeResults", "minimize"]
