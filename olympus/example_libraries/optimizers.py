"""Optimizers as triples of pure functions, with JAX's example_libraries API.

An optimizer is `(init_fun, update_fun, get_params)`: `init_fun(params)` makes
an optimizer state, `update_fun(step, grads, state)` returns the next state and
`get_params(state)` reads the parameters back. Parameters and gradients are
any pytree; the state is a pytree too (an `OptimizerState`), so a whole
training step can be jitted.

    >>> from olympus.example_libraries import optimizers
    >>> init_fun, update_fun, get_params = optimizers.sgd(0.1)
    >>> state = init_fun({"w": jnp.ones(2)})
    >>> state = update_fun(0, {"w": jnp.array([1.0, -1.0])}, state)
    >>> get_params(state)["w"]
    Array([0.9, 1.1], dtype=float32)

Each optimizer below is written for one array (its `init`, `update` and
`get_params` see a single leaf); the `optimizer` decorator lifts it to pytrees.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import olympus.numpy as jnp
from olympus.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

Step = int
Schedule = Callable[[Step], float]


class OptimizerState(NamedTuple):
    """Per-leaf states, flattened, with the tree structures to rebuild them.

    `packed_state` holds one flat tuple of arrays per parameter leaf;
    `tree_def` is the parameters' structure and `subtree_defs` each leaf
    state's structure. The structures are static (pytree aux data), so the
    state crosses `jit` as its arrays only.
    """

    packed_state: Any
    tree_def: Any
    subtree_defs: Any


register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux),
)


class Optimizer(NamedTuple):
    """What an `@optimizer` function returns; unpacks as a triple."""

    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker: Callable) -> Callable[..., Optimizer]:
    """Lifts an optimizer written for one array to one over pytrees.

    `opt_maker(*args)` returns `(init, update, get_params)` on a single array
    and its state (any pytree of arrays); the decorated function returns an
    `Optimizer` whose functions take and return pytrees of parameters and
    gradients, applying the single-array rules leaf by leaf.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states = [tree_flatten(init(x0)) for x0 in x0_flat]
            packed = tuple(tuple(leaves) for leaves, _ in states)
            subtrees = tuple(subtree for _, subtree in states)
            return OptimizerState(packed, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update_fun: the gradient tree's structure "
                    f"{tree2} differs from the parameters' structure {tree} "
                    "that init_fun was given"
                )
            states = map(tree_unflatten, subtrees, packed)
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            flat = [tree_flatten(s) for s in new_states]
            new_packed = tuple(tuple(leaves) for leaves, _ in flat)
            return OptimizerState(new_packed, tree, tuple(t for _, t in flat))

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            states = map(tree_unflatten, subtrees, packed)
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ---- the optimizers (each on one array) ------------------------------------------
@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g.

    `step_size` is a number or a schedule (a function of the step number).
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return init, update, get_params


def _with_zero_statistics(count: int):
    """The init of an optimizer whose state is x and `count` statistics of
    x's shape (moments, velocities), all starting at zero."""
    return lambda x0: (x0, *(jnp.zeros_like(x0) for _ in range(count)))


def _params_of(state):
    """The get_params of an optimizer whose state is (x, *statistics)."""
    return state[0]


_params_of.__name__ = _params_of.__qualname__ = "get_params"


def _heavy_ball(step_size, mass: float, nesterov: bool):
    """momentum's and nesterov's (init, update, get_params): the velocity
    v <- mass * v + g; the step along v, or along mass * v + g (Nesterov)."""
    step_size = make_schedule(step_size)

    init = _with_zero_statistics(1)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        direction = mass * velocity + g if nesterov else velocity
        return x - step_size(i) * direction, velocity

    return init, update, _params_of


@optimizer
def momentum(step_size, mass: float):
    """Heavy-ball momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    return _heavy_ball(step_size, mass, nesterov=False)


@optimizer
def nesterov(step_size, mass: float):
    """Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    return _heavy_ball(step_size, mass, nesterov=True)


def _inverse_sqrt_or_zero(a):
    """1 / sqrt(a) where a > 0, else 0 (a parameter never seen moving stays)."""
    positive = a > 0
    return jnp.where(positive, 1.0 / jnp.sqrt(jnp.where(positive, a, 1.0)), 0.0)


@optimizer
def adagrad(step_size, momentum: float = 0.9):
    """Adagrad with momentum: steps scaled by the root of the summed squared gradients.

    s <- s + g**2; m <- (1 - momentum) * g / sqrt(s) + momentum * m;
    x <- x - step_size(i) * m (Duchi, Hazan and Singer, 2011).
    """
    step_size = make_schedule(step_size)

    init = _with_zero_statistics(2)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt_or_zero(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _params_of


@optimizer
def rmsprop(step_size, gamma: float = 0.9, eps: float = 1e-8):
    """RMSProp: r <- gamma * r + (1 - gamma) * g**2; x <- x - step_size(i) * g / sqrt(r + eps)."""
    step_size = make_schedule(step_size)

    init = _with_zero_statistics(1)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _params_of


@optimizer
def rmsprop_momentum(
    step_size, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
):
    """RMSProp with momentum: m <- momentum * m + step_size(i) * g / sqrt(r + eps); x <- x - m."""
    step_size = make_schedule(step_size)

    init = _with_zero_statistics(2)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _params_of


def _power(base: float, i, like):
    """base ** (i + 1) in `like`'s dtype; `i` may be a traced step number."""
    return jnp.asarray(base, like.dtype) ** (jnp.asarray(i) + 1)


@optimizer
def adam(step_size, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """Adam (Kingma and Ba, 2014): bias-corrected first and second moment estimates.

    m <- b1 * m + (1 - b1) * g; v <- b2 * v + (1 - b2) * g**2;
    x <- x - step_size(i) * m_hat / (sqrt(v_hat) + eps) with
    m_hat = m / (1 - b1**(i+1)), v_hat = v / (1 - b2**(i+1)).
    """
    step_size = make_schedule(step_size)

    init = _with_zero_statistics(2)

    def update(i, g, state):
        x, m, v = state
        m = (1.0 - b1) * g + b1 * m
        v = (1.0 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1.0 - _power(b1, i, m))
        v_hat = v / (1.0 - _power(b2, i, v))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _params_of


@optimizer
def adamax(step_size, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """AdaMax, Adam's infinity-norm variant: u <- max(b2 * u, |g|).

    x <- x - step_size(i) / (1 - b1**(i+1)) * m / (u + eps).
    """
    step_size = make_schedule(step_size)

    init = _with_zero_statistics(2)

    def update(i, g, state):
        x, m, u = state
        m = (1.0 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1.0 - _power(b1, i, m))) * m / (u + eps)
        return x, m, u

    return init, update, _params_of


@optimizer
def sm3(step_size, momentum: float = 0.9):
    """SM3 (Anil et al., 2019): Adagrad with one accumulator per axis, not per entry.

    Memory is the sum of the axis lengths instead of their product: entry
    (i, j, ...) sees the minimum of its axes' accumulators plus g**2, and each
    axis accumulator keeps the maximum over the other axes.
    """
    step_size = make_schedule(step_size)

    def init(x0):
        axes = jnp.shape(jnp.atleast_1d(x0))
        accumulators = [jnp.zeros(n, jnp.result_type(x0)) for n in axes]
        return x0, jnp.zeros_like(x0), accumulators

    def update(i, g, state):
        x, m, accumulators = state
        shape = jnp.shape(x)
        x, m, g = (jnp.atleast_1d(a) for a in (x, m, g))
        per_entry = [
            _along_axis(a, axis, x.ndim) for axis, a in enumerate(accumulators)
        ]
        accum = functools.reduce(jnp.minimum, per_entry) + jnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt_or_zero(accum)) + momentum * m
        x = x - step_size(i) * m
        others = [
            tuple(d for d in range(x.ndim) if d != axis) for axis in range(x.ndim)
        ]
        accumulators = [jnp.max(accum, axis=axes) for axes in others]
        return jnp.reshape(x, shape), jnp.reshape(m, shape), accumulators

    return init, update, _params_of


def _along_axis(v, axis: int, ndim: int):
    """A 1-d array shaped to broadcast along `axis` of an ndim-d array."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return jnp.reshape(v, shape)


# ---- learning-rate schedules -----------------------------------------------------
def constant(step_size) -> Schedule:
    """The same step size at every step."""

    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""

    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size, decay_steps, decay_rate, staircase: bool = False
) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps); with staircase, i / decay_steps is floored."""

    def schedule(i):
        t = jnp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * t)

    return schedule


def polynomial_decay(
    step_size, decay_steps, final_step_size, power: float = 1.0
) -> Schedule:
    """From step_size to final_step_size over decay_steps along (1 - i / decay_steps) ** power."""

    def schedule(i):
        i = jnp.minimum(i, decay_steps)
        frac = 1 - i / decay_steps
        return (step_size - final_step_size) * frac**power + final_step_size

    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """values[k] while i <= boundaries[k] (the first k that holds), values[-1] after the last.

    There must be one more value than boundaries.
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(
            "piecewise_constant: boundaries and values must be 1-d sequences"
        )
    if values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError(
            f"piecewise_constant: {values.shape[0]} values for {boundaries.shape[0]} "
            "boundaries; there must be one more value than boundaries"
        )

    def schedule(i):
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule as given, or a number as a constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(
        "a step size must be a scalar or a function of the step number, got "
        f"{type(scalar_or_schedule).__name__} of shape {jnp.shape(scalar_or_schedule)}"
    )


# ---- utilities -------------------------------------------------------------------
def l2_norm(tree):
    """The L2 norm of all the leaves of a pytree together, as one vector."""
    leaves = tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scales the gradients down so that their joint L2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)

    def scale(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))

    return tree_map(scale, grad_tree)


class JoinPoint:
    """Marks where a parameter leaf's optimizer state hangs in an unpacked state.

    A class, not a pytree node, so tree functions treat it as one leaf.
    """

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        return iter((self.subtree,))

    def __repr__(self) -> str:
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state: OptimizerState):
    """The state as a pytree of plain containers, for saving (pickle, npz).

    The parameters' tree with a `JoinPoint` at each leaf, holding that leaf's
    state rebuilt as its own pytree; `pack_optimizer_state` inverts it.
    """
    packed, tree, subtrees = opt_state
    states = map(tree_unflatten, subtrees, packed)
    return tree_unflatten(tree, [JoinPoint(s) for s in states])


def pack_optimizer_state(marked_pytree) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    joins, tree = tree_flatten(
        marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint)
    )
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint")
    flat = [tree_flatten(j.subtree) for j in joins]
    packed = tuple(tuple(leaves) for leaves, _ in flat)
    return OptimizerState(packed, tree, tuple(t for _, t in flat))


__all__ = [
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]
