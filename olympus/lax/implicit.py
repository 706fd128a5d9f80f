"""Implicit differentiation: `custom_root` and `custom_linear_solve`.

Both run a user's solver forward and differentiate the *equation* it solves
instead of the solver's iterations: for a root x* of f(x, theta) = 0 the
cotangent of theta is -(df/dtheta)^T lambda with (df/dx)^T lambda = ct; for
x = A(theta)^-1 b it is lambda = A^-T ct for b and -(dA/dtheta)^T (lambda, x)
for theta. The functions' closed-over values (theta) are found by tracing
them and become explicit operands of a `custom_vjp` function, so their
cotangents are not lost.

Reverse mode (grad, vjp) only: forward mode (jvp, jacfwd) of these raises
custom_vjp's error.
"""

from __future__ import annotations

from collections.abc import Callable

from olympus.ir import dtypes
from olympus.lax.custom_derivatives import custom_vjp
from olympus.lax import ops
from olympus.tracer.core import aval_of
from olympus.tracer.evaluation import eval_program
from olympus.tracer.functions import flatten_fun
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import trace_to_olympuspr
from olympus.transforms.ad_util import instantiate
from olympus.transforms.linearize import backward_pass, linearize_flat


class ImplicitSolveError(TypeError):
    """custom_root / custom_linear_solve got functions whose outputs do not
    have the structure of their inputs, or a transpose it cannot form."""


def _traced(api: str, fun: Callable, example):
    """`fun` (of one pytree like `example`, returning one like it) as a
    program of that pytree's leaves and the values it closes over."""
    leaves, tree = tree_flatten(example)
    flat, store = flatten_fun(fun, tree_flatten((example,))[1])
    program, consts, _ = trace_to_olympuspr(flat, [aval_of(x) for x in leaves])
    if store["tree"] != tree:
        raise ImplicitSolveError(
            f"lax.{api}: the function returned {store['tree']}, but its argument "
            f"is {tree}; it must map a pytree to one of the same structure"
        )
    return program, list(consts), tree


def _staged(fun: Callable, *groups: list):
    """`fun(*groups)` (each group a list of arrays) traced once: the values it
    closes over (what the user's solvers capture) become explicit operands,
    which get no cotangent (a solver only inverts its function, as in JAX),
    and a later call sees them as residuals, not as expired tracers.
    Returns (evaluate(consts, *groups), consts)."""
    sizes = [len(g) for g in groups]
    flat_in = [x for g in groups for x in g]

    def regrouped(*args):
        out, start = [], 0
        for n in sizes:
            out.append(list(args[start : start + n]))
            start += n
        return fun(*out)

    flat, store = flatten_fun(regrouped, tree_flatten(tuple(flat_in))[1])
    program, consts, _ = trace_to_olympuspr(flat, [aval_of(x) for x in flat_in])
    out_tree = store["tree"]

    def evaluate(consts, *groups):
        args = [x for g in groups for x in g]
        return tree_unflatten(out_tree, eval_program(program, consts, args))

    return evaluate, list(consts)


def _differentiable(x) -> bool:
    return dtypes.is_inexact(aval_of(x).dtype)


def _pullback(fun: Callable, primals: list):
    """The transpose of `fun`'s derivative at `primals` (flat lists in and
    out), as a function of output cotangents; None for integer inputs."""
    mask = [_differentiable(p) for p in primals]
    _, linear = linearize_flat(fun, primals, mask)

    def pull(cts: list) -> list:
        out = iter(backward_pass(linear.olympuspr, linear.consts, cts))
        return [instantiate(next(out)) if m else None for m in mask]

    return pull


def _solution(api: str, out, has_aux: bool, tree):
    x, aux = out if has_aux else (out, None)
    leaves, x_tree = tree_flatten(x)
    if x_tree != tree:
        raise ImplicitSolveError(f"lax.{api}: the solver returned {x_tree}, not {tree}")
    return leaves, aux


def _on_trees(program, consts: list, tree):
    """The traced function (f or matvec) with its constants, as the user's
    solver calls it: a pytree of `tree`'s structure in and out."""
    return lambda x: tree_unflatten(
        tree, eval_program(program, consts, tree_flatten(x)[0])
    )


def _consts_cotangent(program, consts: list, x: list, lam: list) -> list:
    """-(d program / d consts)^T lam at x: by the implicit function theorem,
    the cotangent of the constants the traced f or matvec closes over."""
    pull = _pullback(lambda *c: eval_program(program, c, x), consts)
    return [None if c is None else ops.neg(c) for c in pull(lam)]


def _with_implicit_vjp(apply, fwd, bwd, operands: tuple, tree, has_aux: bool):
    """apply(run_consts, consts, leaves) differentiated by fwd and bwd; the
    solution unflattened to `tree` (with aux when has_aux)."""
    solved = custom_vjp(lambda rc, bc, cs, leaves: apply(rc, cs, leaves))
    solved.defvjp(fwd, bwd)
    x, aux = solved(*operands)
    x = tree_unflatten(tree, x)
    return (x, aux) if has_aux else x


def custom_root(
    f: Callable, initial_guess, solve: Callable, tangent_solve: Callable, has_aux=False
):
    """A root of `f` found by `solve`, differentiated implicitly.

    `solve(f, initial_guess)`, a root x* of f, differentiated implicitly:
    gradients reach the values f closes over through f(x*) = 0, not through the
    solver's steps. `tangent_solve(g, y)` solves g(x) = y for a linear g (given
    the transposed Jacobian of f at x* in reverse mode; for a scalar x, `lambda
    g, y: y / g(1.0)`).

    Args:
      f: the function whose root is sought.
      initial_guess: the starting point (a pytree).
      solve: solve(f, initial_guess) -> a root.
      tangent_solve: tangent_solve(g, y) solves the linear g(x) = y.
      has_aux: whether solve returns (root, aux).

    Returns:
      The root, a pytree of initial_guess's structure (and aux when has_aux).

    Raises:
      TypeError: f, solve or tangent_solve is not callable.

    Example:
      >>> def sqrt(a):
      ...     f = lambda x: x**2 - a
      ...     newton = lambda f, x0: lax.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)
      ...     return lax.custom_root(f, 1.0, newton, lambda g, y: y / g(1.0))
      >>> print(olympus.grad(sqrt)(4.0))  # 1 / (2 sqrt(4))
      0.25
    """
    program, consts, tree = _traced("custom_root", f, initial_guess)
    guess = tree_flatten(initial_guess)[0]

    def run(cs, guess):
        out = solve(_on_trees(program, cs, tree), tree_unflatten(tree, guess))
        return _solution("custom_root", out, has_aux, tree)

    def back(cs, x, ct):  # lambda with (df/dx)^T lambda = ct
        pull_x = _pullback(lambda *xs: eval_program(program, cs, xs), x)
        g = lambda v: tree_unflatten(tree, pull_x(tree_flatten(v)[0]))  # noqa: E731
        return tree_flatten(tangent_solve(g, tree_unflatten(tree, ct)))[0]

    apply, run_consts = _staged(run, consts, guess)
    # the solution and its cotangent have the guess's types
    back_apply, back_consts = _staged(back, consts, guess, guess)

    def fwd(rc, bc, cs, guess):
        x, aux = apply(rc, cs, guess)
        return (x, aux), (bc, cs, x)

    def bwd(res, ct):
        bc, cs, x = res
        lam = back_apply(bc, cs, x, [instantiate(c) for c in ct[0]])
        return None, None, _consts_cotangent(program, cs, x, lam), None

    operands = (run_consts, back_consts, consts, guess)
    return _with_implicit_vjp(apply, fwd, bwd, operands, tree, has_aux)


def custom_linear_solve(
    matvec: Callable,
    b,
    solve: Callable,
    transpose_solve: Callable | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
):
    """Solves matvec(x) = b with `solve`, differentiated implicitly.

    `solve(matvec, b)`, the x with matvec(x) = b, differentiated implicitly: the
    cotangent of b is transpose_solve(vecmat, ct) (solve(matvec, ct) when
    `symmetric`), vecmat being matvec's transpose, and the values matvec closes
    over get -(d matvec)^T of it. Needs `transpose_solve` or `symmetric=True`
    for reverse mode.

    Args:
      matvec: the linear map x -> A x.
      b: the right-hand side (a pytree).
      solve: solve(matvec, b) -> x.
      transpose_solve: solve for the transposed map, for reverse mode; None when
        symmetric.
      symmetric: whether A is symmetric (solve serves as transpose_solve).
      has_aux: whether solve returns (x, aux).

    Returns:
      x, a pytree of b's structure (and aux when has_aux).

    Raises:
      TypeError: matvec or solve is not callable, or their outputs do not match
        b's structure.

    Example:
      >>> a = np.float32([[2.0, 1.0], [1.0, 3.0]])
      >>> solve = lambda mv, b: jnp.linalg.solve(a, b)
      >>> lax.custom_linear_solve(lambda x: a @ x, np.float32([3.0, 4.0]), solve, symmetric=True)
      Array([1., 1.], dtype=float32)
    """
    program, consts, tree = _traced("custom_linear_solve", matvec, b)
    b_leaves = tree_flatten(b)[0]

    def run(cs, b_leaves):
        matvec_cs = _on_trees(program, cs, tree)
        out = solve(matvec_cs, tree_unflatten(tree, b_leaves))
        return _solution("custom_linear_solve", out, has_aux, tree)

    def back(cs, ct):  # lambda = A^-T ct
        if symmetric:
            return run(cs, ct)[0]
        pull = _pullback(lambda *v: eval_program(program, cs, v), ct)
        vecmat = lambda v: tree_unflatten(tree, pull(tree_flatten(v)[0]))  # noqa: E731
        out = transpose_solve(vecmat, tree_unflatten(tree, ct))
        return _solution("custom_linear_solve", out, False, tree)[0]

    apply, run_consts = _staged(run, consts, b_leaves)
    differentiable = symmetric or transpose_solve is not None
    back_apply, back_consts = (
        _staged(back, consts, b_leaves) if differentiable else (None, [])
    )

    def fwd(rc, bc, cs, b_leaves):
        x, aux = apply(rc, cs, b_leaves)
        return (x, aux), (bc, cs, x)

    def bwd(res, ct):
        if not differentiable:
            raise ImplicitSolveError(
                "lax.custom_linear_solve: reverse-mode differentiation needs "
                "transpose_solve, or symmetric=True when matvec is symmetric"
            )
        bc, cs, x = res
        lam = back_apply(bc, cs, [instantiate(c) for c in ct[0]])
        return None, None, _consts_cotangent(program, cs, x, lam), lam

    operands = (run_consts, back_consts, consts, b_leaves)
    return _with_implicit_vjp(apply, fwd, bwd, operands, tree, has_aux)
