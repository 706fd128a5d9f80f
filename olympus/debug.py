"""Printing and inspecting values from inside traced code.

    @olympus.jit
    def f(x):
        olympus.debug.print("x = {x}, sum = {}", x.sum(), x=x)
        return x * 2

`debug.print` works eagerly (prints at once), under `jit` (the compiled
program calls back into Python through XLA's host-callback custom call, in
program order; see backends/xla/host_callback.py), under `grad` (prints the
primal values) and under `vmap` (prints once per example).

`debug_callback` is an ordered effect (olympus/ir/effects.py): the lowering
threads an ordering token through every callback, including those inside
cond branches, loop bodies and nested jits, so compiled prints come out in
the order a Python run of the function would give.

`intermediates(f)(*args)` and `Stepper(f, *args)` run f's olympuspr
equation by equation (olympus/backends/stepping.py) and show every value by
the name `print(olympus.make_olympuspr(f)(*args))` gives it:

    s = olympus.debug.Stepper(f, x)
    s.continue_to(primitive="sin")   # or line=12, condition=..., or
    s.continue_to_nonfinite()        # the first NaN or Inf
    s.values["c"], s.step_into()     # into a cond branch, a loop iteration

`print`/`callback` bind `debug_callback`, a primitive with no outputs whose
`callback` parameter is the Python function to call with NumPy arrays. It is
kept out of `olympus.ir.core.all_primitives`: a program holding a Python function cannot
be written as text and parsed back.
"""

from __future__ import annotations

import pdb
import sys
from typing import Callable

import numpy as np

from olympus.backends.stepping import (  # noqa: F401  (the stepper's errors, public here)
    NotInProgramError,
    ProgramFinishedError,
    ProgramStepper,
    StepperError,
    UnknownVariableError,
    Values,
)
from olympus.backends.xla.host_callback import HostCallbackError  # noqa: F401  (re-exported)
from olympus.backends.xla.host_callback import emit_host_callback
from olympus.backends.xla.lowering import lowering_rules
from olympus.backends.xla.spmd import emit_inspect_sharding
from olympus.backends.xla.array import Array
from olympus.ir.core import Primitive
from olympus.tracer.core import Tracer
from olympus.ir.effects import ordered_effect_primitives
from olympus.tracer.functions import trace_pytree_function
from olympus.tracer.pytree import tree_flatten, tree_unflatten
from olympus.tracer.staging import function_name
from olympus.transforms.batching import batch_to_front, batch_rules
from olympus.transforms.jvp import jvp_rules
from olympus.sharding import visualize_array_sharding  # noqa: F401  (JAX's place for it)

__all__ = [
    "HostCallbackError",
    "NotInProgramError",
    "ProgramFinishedError",
    "Stepper",
    "StepperError",
    "UnknownVariableError",
    "Values",
    "breakpoint",
    "callback",
    "debug_callback_p",
    "inspect_array_sharding",
    "inspect_sharding_p",
    "intermediates",
    "print",
]

debug_callback_p = Primitive("debug_callback", multiple_results=True)


class HostFunction:
    """The `callback` param: hashable by identity, printed by its name."""

    __slots__ = ("function", "__name__")

    def __init__(self, function: Callable, name: str):
        self.function = function
        self.__name__ = name

    def __call__(self, *arrays) -> None:
        self.function(*map(_host_value, arrays))

    def __repr__(self) -> str:
        return self.__name__


def _abstract_eval(*avals, callback: HostFunction):
    return []


def _host_value(x):
    """NumPy arrays, with 0-d ones as NumPy scalars (so `{:.2f}` formats work)."""
    x = np.asarray(x)
    return x[()] if x.ndim == 0 else x


def _impl(*args, callback: HostFunction):
    callback(*args)
    return []


def _lower(ctx, *operands, callback: HostFunction):
    emit_host_callback(ctx.emitter, callback, operands)
    return []


def _jvp(primals, tangents, *, callback: HostFunction):
    """Differentiation sees the primal values; the call has no outputs."""
    debug_callback_p.bind(*primals, callback=callback)
    return [], []


def _batch(axis_size, vals, dims, *, callback: HostFunction):
    """One call per example, in order."""
    vals = [
        v if d is None else batch_to_front(v, axis_size, d) for v, d in zip(vals, dims)
    ]
    for i in range(axis_size):
        debug_callback_p.bind(
            *(v if d is None else v[i] for v, d in zip(vals, dims)), callback=callback
        )
    return [], []


debug_callback_p.def_abstract_eval(_abstract_eval)
debug_callback_p.def_impl(_impl)
lowering_rules[debug_callback_p] = _lower
jvp_rules[debug_callback_p] = _jvp
batch_rules[debug_callback_p] = _batch
ordered_effect_primitives.add(debug_callback_p)  # compiled calls keep program order


def callback(function: Callable, *args, **kwargs) -> None:
    """Calls `function(*args, **kwargs)` with NumPy values, from traced code too.

    >>> x = jnp.ones((2, 3))
    >>> olympus.debug.callback(lambda x: print(x.shape), x)
    (2, 3)
    """
    leaves, tree = tree_flatten((args, kwargs))

    def call(*arrays):
        a, k = tree_unflatten(tree, list(arrays))
        function(*a, **k)

    name = getattr(function, "__name__", "callback")
    debug_callback_p.bind(*leaves, callback=HostFunction(call, name))


class _Scalar:
    """A 0-d value for `str.format`: `{}` shows it as NumPy does (`1.75`, not
    float64 digits of a float32); `{:.2f}` and attributes work as usual."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec) if spec else str(self.value)

    def __str__(self) -> str:
        return str(self.value)

    __repr__ = __str__

    def __getattr__(self, name):
        return getattr(self.value, name)


def print(fmt: str, *args, ordered: bool = True, **kwargs) -> None:  # noqa: A001
    """`print(fmt.format(*args, **kwargs))` with the values the program computes.

    Order: prints always come out in program order, also under `jit` and
    across `cond` branches, loop iterations (`fori_loop`, `while_loop`,
    `scan`) and nested jits; a jitted call returns only after its prints are
    written, so they come before whatever Python prints next (`ordered` is
    accepted for JAX compatibility and changes nothing).

    Under `grad` (and `vjp`, `linearize`), the forward pass prints the primal
    values once; the backward pass prints nothing. Under `jvp` the primal
    values are printed, not the tangents.

    Under `vmap`, each example is printed by its own call, in batch order
    (`vmap(f)(xs)` prints what `[f(x) for x in xs]` would). A `cond` whose
    predicate is batched runs both branches on the whole batch, so both
    branches' prints appear (the false branch's first); a `while_loop` whose
    predicate is batched runs its body for every example until the last is
    done, so examples that finished earlier print their final values again.

    >>> @olympus.jit
    ... def f(x):
    ...     olympus.debug.print("x = {x}", x=x)
    ...     return x * 2.0
    >>> f(jnp.arange(3.0))
    x = [0. 1. 2.]
    Array([0., 2., 4.], dtype=float32)
    """

    def show(*a, **k):
        sys.stdout.write(fmt.format(*a, **k) + "\n")

    leaves, tree = tree_flatten((args, kwargs))

    def call(*arrays):
        shown = [_Scalar(x) if isinstance(x, np.generic) else x for x in arrays]
        a, k = tree_unflatten(tree, shown)
        show(*a, **k)

    debug_callback_p.bind(*leaves, callback=HostFunction(call, "print"))


# ---- inspect_array_sharding ---------------------------------------------------------
inspect_sharding_p = Primitive("inspect_sharding", multiple_results=True)


class ShardingCallback:
    """The `callback` param of `inspect_sharding`: hashable by identity. It
    holds the functions handed to XLA's partitioner (`alive`), which must
    live until the program is compiled, as long as the program does."""

    __slots__ = ("function", "alive")

    def __init__(self, function: Callable):
        self.function = function
        self.alive: list = []

    def __repr__(self) -> str:
        return getattr(self.function, "__name__", "callback")


def _inspect_impl(value, *, callback: ShardingCallback):
    callback.function(value.sharding)  # eagerly: the Array's own layout, as JAX
    return []


def _inspect_lower(ctx, value, *, callback: ShardingCallback):
    emit_inspect_sharding(
        ctx.emitter, value, ctx.avals_in[0], callback.function, callback.alive
    )
    return []


def _inspect_jvp(primals, tangents, *, callback: ShardingCallback):
    inspect_sharding_p.bind(*primals, callback=callback)
    return [], []


def _inspect_batch(axis_size, vals, dims, *, callback: ShardingCallback):
    """The whole batch's layout, batch dimension included (as JAX)."""
    inspect_sharding_p.bind(*vals, callback=callback)
    return [], []


inspect_sharding_p.def_abstract_eval(lambda aval, *, callback: [])
inspect_sharding_p.def_impl(_inspect_impl)
lowering_rules[inspect_sharding_p] = _inspect_lower
jvp_rules[inspect_sharding_p] = _inspect_jvp
batch_rules[inspect_sharding_p] = _inspect_batch
ordered_effect_primitives.add(inspect_sharding_p)  # kept: never dead code


def inspect_array_sharding(value, *, callback: Callable) -> None:
    """Calls `callback(sharding)` with the layout of each array in `value`.

    As soon as the layout is known: eagerly at once, with the Array's own
    `sharding`; inside `jit` when the function is compiled (its first call
    for these arguments, or `.lower(...).compile()`), with the layout XLA's
    partitioner chose for that value, as a NamedSharding on the program's
    mesh (Auto axes; a program on one device gets a replicated
    GSPMDSharding). A compiled, cached function calls nothing again.

    Args:
      value: an array, or a pytree of arrays.
      callback: a function of one Sharding; its result is ignored.

    Returns:
      None.

    Raises:
      AttributeError: eagerly, a leaf that is not an olympus Array (as JAX).

    Example:
      >>> x = jnp.arange(4.0)
      >>> olympus.debug.inspect_array_sharding(x, callback=print)
      SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """
    wrapped = ShardingCallback(callback)
    for leaf in tree_flatten(value)[0]:
        inspect_sharding_p.bind(leaf, callback=wrapped)


# ---- the step debugger --------------------------------------------------------------
class Stepper(ProgramStepper):
    """Runs `fun(*args, **kwargs)`'s olympuspr one equation at a time, eagerly.

    `step()` runs the current equation (a `cond`, loop or jitted call whole),
    `step_into()` enters its branch, iterations or callee, `continue_to(
    primitive=, line=, condition=)` runs until an equation matches,
    `continue_to_nonfinite()` until one makes a NaN or Inf, `finish()` runs
    the rest and returns `fun`'s result. `current` is the equation about to
    run; `str(stepper)` (and in a notebook its HTML) shows it with its
    neighbours and the user's line. `values` has every value so far, keyed by
    printed name (`q[2]`: iteration 2 of a loop body). Numbers are those of
    eager mode (each primitive's eager executable). Arguments are traced as
    arrays: bind static ones first (`functools.partial`).

    >>> s = olympus.debug.Stepper(lambda x: jnp.sin(x) * 2.0, jnp.ones(3))
    >>> s.step().values["b"]
    Array([0.84147096, 0.84147096, 0.84147096], dtype=float32)
    >>> s.finish()
    Array([1.6829419, 1.6829419, 1.6829419], dtype=float32)
    """

    def __init__(self, fun: Callable, *args, **kwargs):
        closed, _, self.out_tree = trace_pytree_function(fun, args, kwargs, "debug")
        leaves, _ = tree_flatten((args, kwargs))
        super().__init__(closed, leaves, function_name(fun))

    def finish(self):
        """Runs the rest (sub-programs whole) and returns `fun`'s result."""
        return tree_unflatten(self.out_tree, super().finish())

    def run_all(self):
        """Runs the rest, into every sub-program; returns `fun`'s result."""
        return tree_unflatten(self.out_tree, super().run_all())


def intermediates(fun: Callable) -> Callable[..., Values]:
    """`intermediates(f)(*args)`: every value f's olympuspr computes, keyed by
    the names `print(olympus.make_olympuspr(f)(*args))` shows, in the order
    they were computed (inside a loop body, `name[i]` for iteration i; see
    olympus/backends/stepping.py). Each equation runs eagerly, so the values
    equal eager mode's.

    >>> vals = olympus.debug.intermediates(lambda x: jnp.sin(x) * 2.0)(jnp.ones(2))
    >>> vals["b"]
    Array([0.84147096, 0.84147096], dtype=float32)
    """

    def run(*args, **kwargs) -> Values:
        stepper = Stepper(fun, *args, **kwargs)
        stepper.run_all()
        return stepper.values

    return run


def breakpoint(  # noqa: A001  (JAX's name)
    *,
    backend=None,
    filter_frames: bool = True,
    num_frames=None,
    ordered=False,
    **kwargs,
) -> None:
    """Stops in pdb with the caller's values, as JAX's `jax.debug.breakpoint`.

    Run eagerly, it is pdb's `set_trace` on the calling frame: every local is
    there, and `c` continues. Inside jit, grad or vmap the caller's locals are
    tracers; the breakpoint then becomes a host callback that, each time the
    compiled program passes it, opens pdb on a namespace of the caller's array
    locals (their values at that point; `p x`, `c` to go on). Non-array locals
    are left out there, and under vmap the callback sees one example at a time.
    """
    caller = sys._getframe(1)
    if not any(isinstance(v, Tracer) for v in caller.f_locals.values()):
        pdb.Pdb().set_trace(caller)
        return
    names = [k for k, v in caller.f_locals.items() if _is_array_like(v)]
    values = [caller.f_locals[k] for k in names]
    where = f"{caller.f_code.co_filename}:{caller.f_lineno}"

    def stop(*arrays):
        namespace = dict(zip(names, arrays))
        sys.stdout.write(f"olympus.debug.breakpoint at {where}\n")
        pdb.Pdb().run("pass", globals=namespace, locals=namespace)

    callback(stop, *values)


def _is_array_like(value) -> bool:
    return isinstance(value, (Tracer, Array, np.ndarray, np.generic))
