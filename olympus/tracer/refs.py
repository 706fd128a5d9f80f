"""Mutable array references (`olympus.new_ref`, JAX's `jax.Ref`), made pure
while tracing.

olympus's IR has no reference type: a `Ref` is a Python box holding its
current value, an Array eagerly or a tracer while a trace runs. Reading
gives the value, writing replaces it, so a traced function that uses refs
records only ordinary (pure) equations. Where a program is staged (jit, a
loop body, a cond branch), the refs it uses are threaded through it as
state: their values go in as extra inputs (loop carries, operands) and come
out as extra outputs, which are written back into the Ref objects after
the call. This is JAX's "discharge" of refs, done at trace time.

Each Ref has an *owner*: the trace whose values the box may hold (the one
current where it was made, or the staged program it is threaded through).
A jit, checkpoint, loop body or branch that reads a ref it does not own,
and any staged function that writes one, raises `RefDiscovered` (internal):
the jit, checkpoint, scan, while_loop or cond around it catches it, adds
the ref to the refs it threads, and traces again. eval_shape and
make_olympuspr bind the refs their function writes for the trace and
forget the writes, as JAX's do; a custom_vjp threads the refs its function
writes. custom_jvp bodies read an outer ref as a constant, as do transforms
(vmap, jvp), which refuse to write a batched or differentiated value into
it, as JAX does; a checkpoint under vmap refuses any write to an outer ref.
A program derived from a jitted call (its jvp, linearization, transpose,
batched form) in which a custom rule read a ref as a constant is not cached,
nor is a shard_map body that read one (`constant_reads`): the next call
derives or traces it again, with the value then.

Rules run after a jit has traced (a custom_vjp's fwd and bwd when the call
is differentiated) may write a ref the derived program cannot thread: the
jitted function then runs inline under the transform (fwd), or the pjit's
transpose runs inline (bwd), `inline_on_discovery`. Under vjp/grad a
checkpoint using refs reruns in the backward pass (olympus/lax/checkpoint.py
passes `threaded_call` that route).

The operations (`get`, `swap`, `addupdate`, with their checks) need
olympus.numpy, which sits above this layer; `olympus.ref` installs them in
`operations`. The hooks in jit, scan, while_loop and cond cost nothing
until the first Ref is made (`made`).
"""

from __future__ import annotations

import copy
import functools
import threading
import weakref

from olympus.ir.core import ShapedArray
from olympus.tracer import core
from olympus.tracer.errors import ShardingTreeError
from olympus.tracer.core import Tracer
from olympus.tracer.pytree import tree_flatten, tree_leaves, tree_unflatten
from olympus.tracer.staging import StagingTrace

made = [False]  # set when the first Ref is made; until then no hook does anything
# how many reads have put a ref's value into a staged program as a constant (a
# custom rule run while jit's call is differentiated, a shard_map body): the
# caches of programs.py and shard_map keep no program built across such a
# read, which the next write would make stale
constant_reads = [0]

# get / swap / addupdate, installed by olympus.ref (they need olympus.numpy)
operations: dict = {}
# tracer type -> the value a tracer of it stands for in its parent trace, or
# None (a jvp tracer whose tangent is a symbolic zero: its primal); installed
# by olympus.ref
plain_values: dict = {}
# the trace types that map a function over a batch (vmap's), installed by
# olympus.ref: a checkpoint under one refuses to write an outer ref
mapping_traces: list = []


class RefError(ValueError):
    """Base of the errors of mutable array references."""


class RefScopeError(RefError):
    """A Ref made outside a staged function that cannot thread it (a
    custom_jvp under jit) was written inside it: jit, checkpoint, custom_vjp,
    scan, fori_loop, while_loop, cond and switch thread the refs their
    functions close over (eval_shape and make_olympuspr forget writes)."""


class RefDiscovered(RefScopeError):
    """A staged trace met a ref it does not own: the jit or control-flow
    primitive around it threads the ref and traces again (never seen by a
    user unless nothing around the trace can thread refs)."""

    def __init__(self, ref: Ref, trace):
        self.ref = ref
        super().__init__(
            f"a Ref {ref.aval_str()} made outside {trace.describe()} is used "
            f"inside it. olympus threads refs through jit, checkpoint, scan, "
            f"fori_loop, while_loop, cond, switch and a custom_vjp's function "
            f"only; pass the value in and out of this function instead "
            f"(ref[...] before, ref[...] = after)."
        )


class RefEscapeError(RefError):
    """A Ref made inside a traced function was used after that trace ended."""


class RefWriteError(RefError):
    """A transform (vmap, jvp/grad) wrote a batched or differentiated value
    into a Ref made outside it, which cannot hold one; or a checkpoint under
    vmap wrote one at all (its outputs are all batched there, as JAX's)."""


class RefReturnError(RefError):
    """A jitted function or a loop body returned a Ref (JAX: refs cannot be
    returned)."""


class RefAliasError(RefError):
    """The same Ref was passed twice to one jitted call."""


class _OfAval:
    """shape, dtype, ndim, size and weak_type: those of the ShapedArray
    `_aval` (a Ref's value's, or an AbstractRef's inner type)."""

    __slots__ = ()

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)

    def aval_str(self) -> str:
        return f"Ref{{{self._aval.str_short()}}}"


class Ref(_OfAval):
    """A mutable array reference: `ref[...]` reads it, `ref[idx] = v` writes.

    Made by `olympus.new_ref(x)`. Its shape, dtype and weak type are fixed at
    creation; writes must match them (no broadcasting or casting, as in
    JAX). Refs may be read and written eagerly, inside jit (passed as
    arguments or closed over: the writes are visible after the call), in
    scan/fori_loop/while_loop bodies and cond branches, under vmap (as a
    mapped argument) and grad (made inside the function).

    Example:
      >>> r = olympus.new_ref(jnp.zeros(3))
      >>> r[1] = 5.0
      >>> r[...] += 1.0
      >>> r
      Ref([1., 6., 1.], dtype=float32)
    """

    __slots__ = ("_value", "_owner", "_aval", "_writes", "__weakref__")

    def __init__(self, value, aval: ShapedArray, owner):
        self._value = value
        self._aval = aval
        self._owner = owner
        self._writes = 0  # how many writes it has had (a write of its own value too)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx):
        return operations["get"](self, idx)

    def __setitem__(self, idx, value) -> None:
        operations["swap"](self, idx, value)

    def __repr__(self) -> str:
        value = self._value
        if isinstance(value, Tracer):
            return f"{self.aval_str()} holding {value!r}"
        return repr(value).replace("Array(", "Ref(", 1)

    __str__ = __repr__


class AbstractRef(_OfAval):
    """The type of a Ref (`olympus.typeof(ref)`): the ShapedArray of its
    value inside (`inner_aval`). No value is an AbstractRef."""

    def __init__(self, inner_aval: ShapedArray):
        self._aval = inner_aval

    inner_aval = property(lambda self: self._aval)

    def str_short(self) -> str:
        return self.aval_str()

    __repr__ = __str__ = str_short

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractRef) and other.inner_aval == self.inner_aval

    def __hash__(self) -> int:
        return hash(("Ref", self.inner_aval))


def make_ref(value) -> Ref:
    """A new Ref owned by the current trace, holding `value` (an array)."""
    made[0] = True
    return Ref(value, core.aval_of(value), core.current_trace())


# ---- reading and writing a ref's value, checked against its owner ------------
# Staged traces that thread refs (a loop body, a branch, a jit's pure function)
_threading: weakref.WeakSet = weakref.WeakSet()


def _threads_refs(trace) -> bool:
    """Whether `trace` must thread an outer ref it reads: it does (a loop body,
    a branch) or its program is cached by function (jit), where a value read
    as a constant would be stale on the next call."""
    if not isinstance(trace, StagingTrace):
        return False
    info = trace.debug_info
    return trace in _threading or (
        info is not None and info.transform in ("jit", "checkpoint")
    )


def _between(ref: Ref, trace):
    """The traces from `trace` up to (not including) the ref's owner;
    RefEscapeError where the owner is not among its ancestors."""
    owner = ref._owner
    if not owner.alive or not owner.is_ancestor_of(trace):
        raise RefEscapeError(
            f"a Ref {ref.aval_str()} made inside {owner.describe()} was used "
            f"after that trace ended (or outside it). Refs made inside a "
            f"traced function stay inside it: return ref[...] instead."
        )
    while trace is not owner:
        yield trace
        trace = trace.parent


def read(ref: Ref):
    """The value `ref` holds, as the current trace may use it: a staged
    function that caches or loops (jit, checkpoint, a loop body) threads the
    ref (RefDiscovered); another staged function (a custom_jvp's body, a
    program derived from a jitted call) or a transform reads the value as a
    constant, counted in `constant_reads`."""
    trace = core.current_trace()
    if trace is not ref._owner:
        staged = False
        for between in _between(ref, trace):
            if _threads_refs(between):
                raise RefDiscovered(ref, between)
            staged = staged or isinstance(between, StagingTrace)
        constant_reads[0] += staged
    return ref._value


def write(ref: Ref, value) -> None:
    """Stores `value` (already of the ref's type) in `ref`; a staged trace
    between the writer and the ref's owner must thread the ref first."""
    trace = core.current_trace()
    owner = ref._owner
    if trace is not owner:
        for between in _between(ref, trace):
            if isinstance(between, StagingTrace):
                raise RefDiscovered(ref, between)
        value = _plain(value, owner)
        if isinstance(value, Tracer) and not value._trace.is_ancestor_of(owner):
            raise RefWriteError(
                f"writing a value of {value._trace.describe()} into a Ref "
                f"{ref.aval_str()} made outside it: the Ref cannot hold a "
                f"batched or differentiated value. Move the Ref to be an "
                f"argument of the vmapped function, or make it inside the "
                f"differentiated function."
            )
    ref._value = value
    ref._writes += 1


def _plain(value, owner):
    """`value` without the traces above `owner` that add nothing to it."""
    while isinstance(value, Tracer) and not value._trace.is_ancestor_of(owner):
        plain = plain_values.get(type(value), lambda v: None)(value)
        if plain is None:
            break
        value = plain
    return value


class _Bound:
    """While inside: each ref holds a given value (a tracer of the staged
    program it is threaded through) and is owned by the current trace; the
    old values and owners come back on exit."""

    def __init__(self, refs, values):
        self.refs, self.values = refs, values

    def __enter__(self):
        trace = core.current_trace()
        _threading.add(trace)
        self.saved = [(r._value, r._owner) for r in self.refs]
        for ref, value in zip(self.refs, self.values):
            ref._value, ref._owner = value, trace
        return self

    def final_values(self) -> list:
        return [r._value for r in self.refs]

    def __exit__(self, *exc):
        for ref, (value, owner) in zip(self.refs, self.saved):
            ref._value, ref._owner = value, owner


def check_no_refs(out, what: str) -> None:
    """RefReturnError where `out` (a pytree) holds a Ref."""
    for leaf in tree_leaves(out):
        if isinstance(leaf, Ref):
            raise RefReturnError(
                f"{what} returned a mutable array reference of type "
                f"{leaf.aval_str()}, but mutable array references cannot be "
                f"returned. Return ref[...] (its value) instead."
            )


def _retrying(run):
    """`run(refs)` with the refs a staged function writes threaded through it:
    first with none (the function itself, as if refs did not exist), then,
    each time its trace meets a ref it must thread, with that one added.
    Returns (refs, result)."""
    refs: list = []
    while True:
        # read here, outside the try: a trace around this call threads these
        values = [read(r) for r in refs]
        try:
            return refs, run(refs, values)
        except RefDiscovered as found:
            if any(found.ref is r for r in refs):
                raise RefScopeError(str(found)) from None
            refs.append(found.ref)


def _threaded_run(run):
    """The result of `run(refs, values) -> (result, new values)` threading the
    refs its staged function uses (found by `_retrying`), written back after."""
    if not made[0]:
        return run([], [])[0]
    refs, (result, values) = _retrying(run)
    for ref, value in zip(refs, values):
        if value is not None:
            write(ref, value)
    return result


def _ref_paths(paths, refs):
    return paths and [*paths, *(f"ref{i}" for i in range(len(refs)))]


# ---- tracing for a look only: eval_shape, make_olympuspr ---------------------
def unboxed_arguments(fun, args: tuple, kwargs: dict) -> tuple:
    """(fun', args', kwargs'): each Ref among the arguments' leaves replaced by
    its value, and fun' boxing those values again (in Refs owned by its
    trace) before calling `fun`, so `fun` sees Refs and its trace a value."""
    leaves, tree = tree_flatten((args, kwargs))
    positions = [i for i, x in enumerate(leaves) if isinstance(x, Ref)]
    if not positions:
        return fun, args, kwargs
    for i in positions:
        leaves[i] = read(leaves[i])

    @functools.wraps(fun)
    def boxed(*args, **kwargs):
        inner, tree = tree_flatten((args, kwargs))
        for i in positions:
            inner[i] = make_ref(inner[i])
        a, k = tree_unflatten(tree, inner)
        return fun(*a, **k)

    a, k = tree_unflatten(tree, leaves)
    return boxed, a, k


def discarding_writes(trace_fun, fun):
    """`trace_fun(fun)` (a trace made only to look at: eval_shape,
    make_olympuspr) where `fun` may write the refs it closes over: inside the
    trace they hold its values; after it they hold what they held before, as
    JAX's eval_shape and make_jaxpr leave them."""
    if not made[0]:
        return trace_fun(fun)

    def run(refs, values):
        @functools.wraps(fun)
        def bound(*args, **kwargs):
            with _Bound(refs, values):
                return fun(*args, **kwargs)

        return trace_fun(bound)

    return _retrying(run)[1]


# ---- control flow: the refs a body writes become loop carries / operands -----
def threaded_scan(scan_with_names):
    """`scan_with_names` (lax/control_flow/scan.py) threading the refs its
    body writes through the carry."""

    @functools.wraps(scan_with_names)
    def scan(f, init, xs, length, reverse, unroll, what, carry_paths):
        def run(refs, values):
            if not refs:
                out = scan_with_names(
                    f, init, xs, length, reverse, unroll, what, carry_paths
                )
                return out, []

            @functools.wraps(f)
            def body(carry, x):
                c, values = carry
                with _Bound(refs, values) as bound:
                    new_c, y = f(c, x)
                    check_no_refs(new_c, f"the body of {what}")
                    return (new_c, bound.final_values()), y

            start = (init, values)
            paths = _ref_paths(carry_paths, refs)
            (carry, values), ys = scan_with_names(
                body, start, xs, length, reverse, unroll, what, paths
            )
            return (carry, ys), values

        return _threaded_run(run)

    return scan


def threaded_while(while_loop):
    """`_while_loop` (lax/control_flow/loops.py) threading the refs its
    body and test write through the carry."""

    @functools.wraps(while_loop)
    def loop(cond_fun, body_fun, init_val, what, carry_paths, max_steps=None):
        def run(refs, values):
            if not refs:
                val = while_loop(
                    cond_fun, body_fun, init_val, what, carry_paths, max_steps
                )
                return val, []

            @functools.wraps(cond_fun)
            def test(carry):
                val, values = carry
                with _Bound(refs, values):
                    return cond_fun(val)

            @functools.wraps(body_fun)
            def body(carry):
                val, values = carry
                with _Bound(refs, values) as bound:
                    return body_fun(val), bound.final_values()

            start = (init_val, values)
            paths = _ref_paths(carry_paths, refs)
            return while_loop(test, body, start, what, paths, max_steps)

        return _threaded_run(run)

    return loop


def threaded_cond(bind_cond):
    """`_bind_cond` (lax/control_flow/cond.py) threading the refs its
    branches write through the operands and outputs."""

    def branch(fun, refs):
        @functools.wraps(fun)
        def threaded(values, *ops):
            with _Bound(refs, values) as bound:
                out = fun(*ops)
                check_no_refs(out, "a cond branch")
                return out, bound.final_values()

        return threaded

    @functools.wraps(bind_cond)
    def cond(index, branch_funs, names, operands, source_info):
        def run(refs, values):
            if not refs:
                return bind_cond(index, branch_funs, names, operands, source_info), []
            funs = [branch(f, refs) for f in branch_funs]
            return bind_cond(index, funs, names, (values, *operands), source_info)

        return _threaded_run(run)

    return cond


# ---- checkpoint: the refs its function uses become inputs and outputs ---------
REF_VALUES = "_olympus_ref_values"  # the keyword the values travel in


def threaded_call(staged_call, fun, args: tuple, kwargs: dict, what: str, route=None):
    """`staged_call(fun, args, kwargs)` (which traces `fun` into a program and
    calls it: checkpoint) with the refs `fun` reads or writes threaded through
    it: their values go in under the keyword REF_VALUES, their new values come
    out after `fun`'s outputs and are written back. Where `fun` uses refs,
    `route(call, args, kwargs)` may call it otherwise (its result, or
    NotImplemented), through `call(args, kwargs)`, this threading."""

    def run(refs, values):
        if not refs:
            return staged_call(fun, args, kwargs), []
        if route is not None:
            call = lambda a, k: threaded_call(staged_call, fun, a, k, what)  # noqa: E731
            out = route(call, args, kwargs)
            if out is not NotImplemented:
                return out, [None] * len(refs)  # `call` wrote them
        mapped = [_mapping_trace(ref) for ref in refs]

        @functools.wraps(fun)
        def with_refs(*args, **kwargs):
            with _Bound(refs, kwargs.pop(REF_VALUES)) as bound:
                writes = [r._writes for r in refs]
                out = fun(*args, **kwargs)
                check_no_refs(out, what)
                for ref, n, trace in zip(refs, writes, mapped):
                    if trace is not None and ref._writes != n:
                        raise _mapped_write_error(ref, trace, what)
                return out, bound.final_values()

        # under a mapping trace the values travel as a tuple: a body traced
        # (and cached) outside it is not reused, so the check above runs
        values = tuple(values) if any(mapped) else values
        return staged_call(with_refs, args, {**kwargs, REF_VALUES: values})

    return _threaded_run(run)


def _mapping_trace(ref: Ref):
    """The first trace mapping over a batch (vmap's) between the current
    trace and the ref's owner, or None."""
    for trace in _between(ref, core.current_trace()):
        if isinstance(trace, tuple(mapping_traces)):
            return trace
    return None


def _mapped_write_error(ref: Ref, trace, what: str) -> RefWriteError:
    return RefWriteError(
        f"{what} under {trace.describe()} wrote into a Ref {ref.aval_str()} "
        f"made outside the vmap: a checkpoint's outputs are all batched under "
        f"vmap (as JAX's), so the Ref would receive a batched value it cannot "
        f"hold. Pass the Ref as a vmapped argument, or write it outside the "
        f"checkpoint."
    )


def threaded_custom_vjp(custom, staged_call, name: str, args: tuple):
    """A custom_vjp's staged call, `staged_call(custom, name, args)`, with the
    refs its function writes threaded through it: a copy of `custom` whose
    function and fwd take their values as one more argument and give their
    new values as more outputs, without a derivative (fwd runs on primals, so
    its writes are not differentiated in JAX either)."""
    if custom.symbolic_zeros:  # fwd's arguments are wrapped: not threaded
        return staged_call(custom, name, args)

    def run(refs, values):
        if not refs:
            return staged_call(custom, name, args), []
        threaded = copy.copy(custom)
        threaded.fun = _taking_values(custom.fun, refs, lambda out, v: (out, v))
        threaded.fwd = _taking_values(custom.fwd, refs, _with_values_out)
        threaded.bwd = functools.wraps(custom.bwd)(
            lambda *a: _with_no_values_ct(custom.bwd(*a[:-1], a[-1][0]))
        )
        out, values = staged_call(threaded, name, (*args, values))
        return out, operations["stop_gradient"](values)

    return _threaded_run(run)


def _taking_values(fun, refs: list, give):
    @functools.wraps(fun)
    def threaded(*args):
        *args, values = args
        with _Bound(refs, values) as bound:
            return give(fun(*args), bound.final_values())

    return threaded


def _with_values_out(result, values):
    """fwd's (out, residuals) as ((out, values), residuals); anything else as
    it is, for custom_vjp's own check of fwd's result."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return (result[0], values), result[1]
    return result


def _with_no_values_ct(cts):
    """bwd's cotangents, and none for the values (for custom_vjp's checks,
    anything but a tuple as it is)."""
    return (*cts, None) if isinstance(cts, (tuple, list)) else cts


# ---- a jitted call's derivatives: custom rules writing refs -------------------
def inline_on_discovery(staged, inline):
    """`staged()`, which traces and calls a program derived from a jitted
    call (its linearization or transpose); or, where that trace met a ref it
    cannot thread (a custom_vjp's fwd or bwd writing one, run only when the
    call is differentiated), `inline()`, the same derivation run on the
    current trace, where the write lands as it would without the jit (JAX's
    derived programs take the ref)."""
    if not made[0]:
        return staged()
    try:
        return staged()
    except RefDiscovered:
        return inline()


# ---- jit: ref arguments and refs the function closes over --------------------
_state = threading.local()  # .plain: ids of JitFunctions called without refs
# jitted function -> [the refs its function closes over,
#                     {number of dynamic positional arguments: its pure JitFunction}]
_jitted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_pure = weakref.WeakSet()  # the pure JitFunctions made here (no hook of their own)


def intercepts(jitfn) -> bool:
    """Whether `jitfn`'s slow path goes through `call_jit` (refs exist, and
    this is neither a pure function made here nor a call already inside)."""
    return jitfn not in _pure and id(jitfn) not in getattr(_state, "plain", ())


def call_jit(jitfn, args: tuple, kwargs: dict):
    """Calls `jitfn` (a JitFunction), threading the refs among its arguments
    and those its function closes over through the compiled program."""
    entry = _jitted.get(jitfn)
    if entry is None and not any(
        isinstance(x, Ref) for x in tree_leaves((args, kwargs))
    ):
        plain = _state.__dict__.setdefault("plain", set())
        plain.add(id(jitfn))
        try:
            return jitfn._call_slow(args, kwargs)
        except RefDiscovered as found:
            entry = _jitted[jitfn] = [[found.ref], {}]
        finally:
            plain.discard(id(jitfn))
    if entry is None:
        entry = _jitted[jitfn] = [[], {}]
    return _call_with_refs(jitfn, entry, args, kwargs)


def _call_with_refs(jitfn, entry, args, kwargs):
    leaves, tree = tree_flatten((args, kwargs))
    positions = tuple(i for i, x in enumerate(leaves) if isinstance(x, Ref))
    arg_refs = [leaves[i] for i in positions]
    _check_distinct(jitfn, arg_refs)
    closed, pures = entry
    n_dynamic = sum(1 for i in range(len(args)) if not _is_static(jitfn, i, len(args)))
    pure = pures.get(n_dynamic)
    if pure is None:
        pure = pures[n_dynamic] = _pure_jit(jitfn, closed, n_dynamic)
    while True:
        for i, ref in zip(positions, arg_refs):
            leaves[i] = read(ref)
        closed_values = [read(r) for r in closed]
        a, k = tree_unflatten(tree, leaves)
        try:
            out, arg_values, closed_values = pure(positions, closed_values, *a, **k)
            break
        except RefDiscovered as found:
            if not any(found.ref is r for r in [*closed, *arg_refs]):
                closed.append(found.ref)
            elif getattr(found, "in_body", False):
                raise RefScopeError(str(found)) from None
            else:  # met differentiating the call: a custom_vjp's fwd writes it
                return _inline(jitfn, args, kwargs)
    for ref, value in zip([*arg_refs, *closed], [*arg_values, *closed_values]):
        if value is not None:  # None: not written (a write since stays)
            write(ref, value)
    return out


def _inline(jitfn, args, kwargs):
    """`jitfn`'s function run on the current trace, not compiled: where its
    derivative (a custom_vjp's fwd under grad) writes a ref, the writes of
    the function and of its rules land in program order, as in JAX."""
    out = jitfn.fun(*args, **kwargs)
    check_no_refs(out, f"jit of {jitfn.name}")
    return out


def _is_static(jitfn, i: int, n: int) -> bool:
    return i in jitfn.static_argnums or i - n in jitfn.static_argnums


def _check_distinct(jitfn, refs) -> None:
    seen: set = set()
    for ref in refs:
        if id(ref) in seen:
            raise RefAliasError(
                f"only one reference to a mutable array may be passed as an "
                f"argument to a function, but jit of {jitfn.name} got the Ref "
                f"{ref.aval_str()} twice. Pass it once."
            )
        seen.add(id(ref))


def _pure_jit(jitfn, closed: list, n_dynamic: int):
    """A JitFunction of `(positions, closed_values, *args, **kwargs)`: the
    function with the ref arguments at leaf `positions` and the refs in
    `closed` given as values, returning (out, their new values). jit's
    shardings place the values as they would the refs (`n_dynamic`: how many
    positional arguments are not static, for a sharding given for all)."""
    fun = jitfn.fun

    def pure(positions, closed_values, *args, **kwargs):
        leaves, tree = tree_flatten((args, kwargs))
        inner = [make_ref(leaves[i]) for i in positions]
        for i, ref in zip(positions, inner):
            leaves[i] = ref
        a, k = tree_unflatten(tree, leaves)
        with _Bound(closed, closed_values):
            writes = [r._writes for r in [*inner, *closed]]
            try:
                out = fun(*a, **k)
            except RefDiscovered as found:
                found.in_body = True  # not met differentiating the call
                raise
            check_no_refs(out, f"jit of {jitfn.name}")
            values = [r._value for r in [*inner, *closed]]
            # a ref the function did not write gives None: written back, its
            # value would undo a write by a derivative rule run inline since
            values = [
                v if r._writes != n else None
                for r, n, v in zip([*inner, *closed], writes, values)
            ]
            return out, values[: len(inner)], values[len(inner) :]

    pure.__qualname__ = pure.__name__ = jitfn.name
    shift = lambda nums: tuple(n + 2 if n >= 0 else n for n in nums)  # noqa: E731
    made_fn = type(jitfn)(
        pure,
        static_argnums=(0, *shift(jitfn.static_argnums)),
        static_argnames=jitfn.static_argnames,
        donate_argnums=shift(jitfn.donate_argnums),
        in_shardings=_shifted_in_shardings(jitfn.in_shardings, n_dynamic),
        out_shardings=_shifted_out_shardings(jitfn.out_shardings),
        tiered=jitfn.tiered,
    )
    _pure.add(made_fn)
    return made_fn


def _shifted_in_shardings(in_shardings, n_dynamic: int):
    """jit's in_shardings for the pure function, whose closed-over refs'
    values come first (unplaced, like JAX's constants)."""
    if in_shardings is None:
        return None
    if type(in_shardings) not in (tuple, list):  # one for every argument
        in_shardings = (in_shardings,) * n_dynamic
    elif len(in_shardings) != n_dynamic:
        raise ShardingTreeError(
            f"jit in_shardings: the shardings {in_shardings!r} do not match the "
            f"{n_dynamic} positional arguments that are not static (a pytree "
            f"prefix is needed: one sharding per argument, or one for all)"
        )
    return (None, *in_shardings)


def _shifted_out_shardings(out_shardings):
    """jit's out_shardings for the pure function's (out, ref values)."""
    return None if out_shardings is None else (out_shardings, None, None)


# ---- vmap: a mapped Ref argument is a Ref of one example's slice -------------
def split_refs(leaves: list) -> tuple[list, list]:
    """(leaves with each Ref replaced by its value, [(position, Ref)])."""
    if not made[0]:
        return leaves, []
    found = [(i, x) for i, x in enumerate(leaves) if isinstance(x, Ref)]
    values = list(leaves)
    for i, ref in found:
        values[i] = read(ref)
    return values, found


def rebox(tracers: list, ref_args: list, trace) -> list:
    """Puts a Ref owned by `trace` where a mapped Ref argument's value was
    packed (an unmapped one stays the caller's Ref, which refuses batched
    writes); returns [(position, caller's Ref, inner Ref)] of the mapped."""
    boxes = []
    for i, ref in ref_args:
        value = tracers[i]
        if isinstance(value, Tracer) and value._trace is trace:
            tracers[i] = Ref(value, core.aval_of(value), trace)
            boxes.append((i, ref, tracers[i]))
        else:
            tracers[i] = ref
    return boxes
