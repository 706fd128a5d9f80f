"""Vectorising map (`vmap`): runs a per-example function on a whole batch.

A `BatchTrace` interprets each primitive on values that carry an extra batch
axis. Its tracers hold the batched value `val` and `batch_dim`, the axis of
`val` that is the batch (None: the value is the same for every example).
Each primitive's batching rule, registered beside the primitive in
olympus/lax, receives `(axis_size, vals, dims, **params)` with the parent
trace current and returns `(out, out_dim)` (lists for multiple results); it
binds ordinary primitives on the parent, so vmap composes with jit, grad and
itself without a global stack.

Glossary: `bdim` is a batch dimension (int or `not_mapped`), `axis_size` the
number of examples.

`olympus.lax` also registers the two array operations this module needs to
move and create batch axes but may not import (`register_batch_ops`).
"""

from __future__ import annotations
from olympus.tracer.tracebacks import api_boundary

import contextvars
import functools
import threading
import weakref
from typing import Any, Callable

import numpy as np

from olympus.ir.core import Olympuspr, Primitive, all_primitives, subolympusprs
from olympus.tracer import core, refs
from olympus.tracer.core import (
    Trace,
    Tracer,
    aval_of,
    set_current_trace,
    user_source_info,
)
from olympus.tracer.errors import OlympusTypeError
from olympus.tracer import axes as axes_env
from olympus.tracer.pytree import PyTreeDef, _child_keys, tree_flatten, tree_unflatten
from olympus.tracer.staging import abstract_eval, function_name

not_mapped = None

BatchRule = Callable[..., tuple]
batch_rules: dict[Primitive, BatchRule] = {}
# Collectives over a vmap's own `axis_name` (olympus/lax/parallel/primitives.py fills it):
# rule(axis_name, axis_size, vals, dims, **params) -> (out, out_dim), used when
# the equation's `axis_name` / `axes` param names this vmap's axis.
axis_batch_rules: dict[Primitive, Callable] = {}


class BatchingError(NotImplementedError):
    """A primitive has no batching rule (the coverage test keeps this empty)."""


class BatchTracer(Tracer):
    """A per-example value; `val` holds every example along `batch_dim`."""

    __slots__ = ("val", "batch_dim", "aval")

    def __init__(self, trace: BatchTrace, val, batch_dim: int | None):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        aval = aval_of(val)
        if batch_dim is not_mapped:
            self.aval = aval
        else:
            shape = aval.shape[:batch_dim] + aval.shape[batch_dim + 1 :]
            self.aval = aval.update(shape=shape)


class BatchTrace(Trace):
    """Interprets primitives on batched values, binding on `parent`."""

    def __init__(
        self,
        parent: Trace,
        axis_size: int,
        name: str = "vmap",
        axis_name: str | None = None,
    ):
        self.parent = parent
        self.axis_size = axis_size
        self.name = name
        self.axis_name = axis_name
        self.alive = True
        self.layout = None  # the mapped inputs' batch layout (register_batch_layout)
        self.split_outputs: dict[int, Any] = {}  # unbatched, typed with the batch's

    def describe(self) -> str:
        return f"{self.name} (axis size {self.axis_size})"

    def unpack(self, x) -> tuple[Any, int | None]:
        """(val, batch_dim) of any value: foreign values are unbatched constants."""
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and (
            not x._trace.alive or not x._trace.is_ancestor_of(self)
        ):
            raise core.escaped_tracer_error(x)
        return x, not_mapped

    def pack(self, val, bdim):
        return val if bdim is not_mapped else BatchTracer(self, val, bdim)

    def process_primitive(self, primitive, args, params):
        vals, dims = zip(*map(self.unpack, args)) if args else ((), ())
        named = self.axis_name is not None
        if named and _names_axis(primitive, params, self.axis_name):
            with set_current_trace(self.parent):
                out, out_dim = axis_batch_rules[primitive](
                    self.axis_name, self.axis_size, list(vals), list(dims), **params
                )
            return self.pack(out, out_dim)
        with set_current_trace(self.parent):
            # A call or loop whose body uses this vmap's axis (a collective,
            # axis_index) varies over the batch even when no operand does.
            if all(d is not_mapped for d in dims) and not (
                named and _body_names_axis(params, self.axis_name)
            ):
                return primitive.bind(*vals, **params)
            self.check_per_example(primitive, args, params)
            with _rule_axis(self.axis_name):
                out, out_dim = batch_rule(primitive)(
                    self.axis_size, list(vals), list(dims), **params
                )
        if primitive.multiple_results:
            self._note_split(out, out_dim)
            return [self.pack(v, d) for v, d in zip(out, out_dim)]
        return self.pack(out, out_dim)

    def _note_split(self, outs, dims) -> None:
        """A call or loop with a batched result types its unbatched ones on the
        batch's mesh too (JAX's), so vmap's exit splits them like the batch."""
        if self.layout is not None and any(d is not not_mapped for d in dims):
            self.split_outputs.update(
                (id(v), v) for v, d in zip(outs, dims) if d is not_mapped
            )

    def check_per_example(self, primitive, args, params) -> None:
        """Shape errors name the per-example types the user wrote the code for,
        not the batched ones a rule would meet."""
        avals = [aval_of(x) for x in args]
        try:
            primitive.abstract_eval(*avals, **params)
        except (TypeError, ValueError):
            try:
                abstract_eval(primitive, avals, params, user_source_info())
            except OlympusTypeError as err:
                raise OlympusTypeError(
                    f"{err}\n  (per-example types, inside {self.describe()})"
                ) from None
            raise


# ---- a vmap's axis name inside the sub-programs it batches ---------------------------
def _names_axis(primitive, params, name) -> bool:
    """Whether an equation is a collective over the axis `name`."""
    return primitive in axis_batch_rules and (
        params.get("axis_name") == name or name in params.get("axes", ())
    )


_body_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _program_names_axis(program: Olympuspr, name) -> bool:
    per_program = _body_cache.setdefault(program, {})
    found = per_program.get(name)
    if found is None:
        found = any(
            _names_axis(eqn.primitive, eqn.params, name)
            or _body_names_axis(eqn.params, name)
            for eqn in program.eqns
        )
        per_program[name] = found
    return found


def _body_names_axis(params, name) -> bool:
    """Whether a call's or loop's sub-programs use the axis `name` (a
    shard_map whose mesh has an axis of that name shadows it)."""
    mesh = params.get("mesh")
    if mesh is not None and name in getattr(mesh, "axis_names", ()):
        return False
    return any(_program_names_axis(p, name) for p in subolympusprs(params))


_rule_state = threading.local()


class _rule_axis:
    """While a BatchTrace's batching rule runs: the vmap's axis name, which
    `batch_program` gives the trace that batches a call's or loop's body
    (so `vmap(jit(f), axis_name="i")` batches the collectives over "i" in f).
    Every BatchTrace sets it around its rules, so it is always the axis of the
    vmap whose rule is running."""

    __slots__ = ("name", "saved")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.saved = getattr(_rule_state, "name", None)
        _rule_state.name = self.name

    def __exit__(self, *exc):
        _rule_state.name = self.saved


def rule_axis_name():
    """The axis name of the vmap whose batching rule is running (or None)."""
    return getattr(_rule_state, "name", None)


def shadowing(names) -> _rule_axis:
    """Inside a rule batching a body that binds `names` itself (a shard_map's
    mesh axes): a vmap axis of one of those names is not the body's."""
    name = rule_axis_name()
    return _rule_axis(None if name in tuple(names) else name)


def batch_rule(primitive: Primitive) -> BatchRule:
    rule = batch_rules.get(primitive)
    if rule is None:
        raise BatchingError(f"vmap: primitive {primitive.name} has no batching rule")
    return rule


# ---- moving and creating batch axes (run with the parent trace current) ------
_batch_ops: dict[str, Callable] = {}


def register_batch_ops(broadcast_in_dim: Callable, transpose: Callable) -> None:
    """`broadcast_in_dim(x, shape, broadcast_dimensions)` and `transpose(x,
    permutation)` as lax builds them (this module cannot import lax)."""
    _batch_ops["broadcast_in_dim"] = broadcast_in_dim
    _batch_ops["transpose"] = transpose


def _broadcast_in_dim(x, shape, broadcast_dimensions):
    return _batch_ops["broadcast_in_dim"](x, shape, broadcast_dimensions)


# How vmap lays out an output that does not vary over the batch where the
# mapped inputs' batch dimension is split over Explicit mesh axes (JAX's
# `explicit_mesh_axis`); lax/sharding.py fills it (it owns the layouts).
_batch_layout: dict[str, Callable] = {}
# The layout of the innermost vmap whose body is running (for the rules'
# forced outputs, broadcast_forced).
_layout_now: contextvars.ContextVar = contextvars.ContextVar(
    "batch_layout", default=None
)


def register_batch_layout(
    layout_of: Callable, split_like_batch: Callable, split_alike: Callable
) -> None:
    """`layout_of(leaves, axes)`: the mapped inputs' batch layout or None;
    `split_like_batch(out, val, axis, layout, made_by_rule)`: the broadcast
    `out` of the unbatched output `val`, laid out along `axis` as the batch;
    `split_alike(avals, layout)`: whether batched types (batch at 0) are."""
    _batch_layout["of"] = layout_of
    _batch_layout["split"] = split_like_batch
    _batch_layout["alike"] = split_alike


def broadcast_forced(x, axis_size: int, batched_avals: list):
    """An unbatched output a rule batches anyway (a cond's, whose other branch
    varies), broadcast at axis 0 and split as the enclosing vmap's batch is
    where the rule's batched inputs (`batched_avals`) are (JAX's)."""
    out = broadcast_batch(x, axis_size, 0)
    layout = _layout_now.get()
    if layout is None or not _batch_layout["alike"](batched_avals, layout):
        return out
    return _batch_layout["split"](out, x, 0, layout, True)


def broadcast_batch(x, axis_size: int, axis: int):
    """An unbatched `x` repeated `axis_size` times along new axis `axis`."""
    shape = list(aval_of(x).shape)
    shape.insert(axis, axis_size)
    dims = [d for d in range(len(shape)) if d != axis]
    return _broadcast_in_dim(x, shape, dims)


def move_batch_axis(x, axis_size: int, src: int | None, dst: int):
    """`x` with its batch axis at `dst`; an unbatched `x` is broadcast there."""
    if src is not_mapped:
        return broadcast_batch(x, axis_size, dst)
    if src == dst:
        return x
    perm = list(range(aval_of(x).ndim))
    perm.pop(src)
    perm.insert(dst, src)
    return _batch_ops["transpose"](x, perm)


def batch_to_front(x, axis_size: int, bdim: int | None):
    return move_batch_axis(x, axis_size, bdim, 0)


def shift_axes(axes, bdim: int) -> tuple:
    """Per-example axes as axes of the batched value with its batch at `bdim`."""
    return tuple(a + 1 if a >= bdim else a for a in axes)


# ---- rules shared by primitive families --------------------------------------
def elementwise_rule(
    primitive: Primitive, scalar_positions: Callable[[int], bool] = None
):
    """The batching rule of an elementwise primitive.

    Operands agree in shape except rank-0 ones in `scalar_positions` (all
    positions by default), which the primitive broadcasts itself. The batch
    axis of the result is the one the full-shaped batched operands share (so
    no transpose is needed), or 0 when they disagree; other operands are
    moved or broadcast to it.
    """
    scalar_ok = scalar_positions or (lambda i: True)

    def rule(axis_size, vals, dims, **params):
        avals = [aval_of(v) for v in vals]
        ranks = [a.ndim - (d is not not_mapped) for a, d in zip(avals, dims)]
        out_rank = max(ranks)
        shape = _per_example_shape(avals, dims, out_rank)
        full_dims = {
            d for d, r in zip(dims, ranks) if d is not not_mapped and r == out_rank
        }
        out_dim = full_dims.pop() if len(full_dims) == 1 else 0
        operands = [
            _at_full_shape(v, axis_size, d, r, shape, out_dim, scalar_ok(i))
            for i, (v, d, r) in enumerate(zip(vals, dims, ranks))
        ]
        return primitive.bind(*operands, **params), out_dim

    return rule


def def_elementwise(*primitives: Primitive, scalar_positions=None) -> None:
    """Registers `elementwise_rule` for each of `primitives`."""
    for primitive in primitives:
        batch_rules[primitive] = elementwise_rule(primitive, scalar_positions)


def _per_example_shape(avals, dims, out_rank) -> tuple:
    for a, d in zip(avals, dims):
        if a.ndim - (d is not not_mapped) == out_rank:
            shape = list(a.shape)
            if d is not not_mapped:
                shape.pop(d)
            return tuple(shape)
    return ()


def _at_full_shape(x, axis_size, bdim, rank, shape, out_dim, scalar_ok):
    """An operand of the batched elementwise op: the per-example `shape`
    with the batch at `out_dim`, or an unbatched rank-0 value where allowed."""
    if bdim is not_mapped and rank == 0 and scalar_ok:
        return x
    if rank == len(shape):
        return move_batch_axis(x, axis_size, bdim, out_dim)
    target = list(shape)
    target.insert(out_dim, axis_size)
    if bdim is not_mapped:  # an unbatched scalar where the primitive needs an array
        return _broadcast_in_dim(x, target, ())
    return _broadcast_in_dim(x, target, (out_dim,))  # a batched scalar


def unbatched_rule(primitive: Primitive) -> BatchRule:
    """For primitives without array operands (iota): never batched."""

    def rule(axis_size, vals, dims, **params):
        return primitive.bind(*vals, **params), not_mapped

    return rule


# ---- the user-facing vmap ------------------------------------------------------
def vmap(
    fun: Callable,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: str | None = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
    sum_match: bool = False,
) -> Callable:
    """Returns a version of `fun` mapped over an axis of its arguments.

    It behaves like a Python loop over the batch that stacks the results,
    but `fun` is traced once and every operation runs batched, so it is as
    fast as hand-vectorized code. It composes with jit, grad and itself.

    Args:
      fun: the function to map; it takes and returns pytrees of arrays.
      in_axes: an int, None, or a pytree prefix of the positional arguments
        with ints/None at its leaves: the axis of each argument to map over
        (None: not mapped, the same value for every example). Negative axes
        count from the end. Keyword arguments are mapped over axis 0.
      out_axes: an int, None, or a pytree prefix of the outputs: where the
        batch axis goes in each output (None: an output that does not depend
        on the batch).
      axis_name: a name for the mapped axis, so collectives inside
        (`lax.psum(x, axis_name)`) reduce over the batch.
      axis_size: the batch size, needed when no argument is mapped.
      spmd_axis_name: taken for JAX's signature; XLA's partitioner lays out
        the batch axis (docs/differences.md).
      sum_match: if True, an output batched while its out_axes is None is
        summed over the batch.

    Returns:
      The batched function, returning `fun`'s outputs with a batch axis at
      `out_axes`.

    Raises:
      ValueError: mapped arguments disagree on the batch size, an axis is
        out of range, `in_axes` does not match the arguments' structure, no
        argument is mapped and `axis_size` is not given, or an output with
        out_axes None depends on the batch.

    Example:
      >>> olympus.vmap(lambda x, y: x @ y, in_axes=(0, None))(np.ones((5, 3)), np.ones(3)).shape
      (5,)
      >>> olympus.vmap(lambda row: row.sum())(jnp.arange(6.0).reshape(2, 3))
      Array([ 3., 12.], dtype=float32)
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")
    name = function_name(fun)

    # updated=(): copying __dict__ would copy a JitFunction's caches onto us.
    @functools.wraps(fun, updated=())
    @api_boundary
    def batched(*args, **kwargs):
        leaves, in_tree = tree_flatten((args, kwargs))
        leaves, ref_args = refs.split_refs(leaves)  # a Ref is mapped as its value
        axes = _leaf_axes(in_axes, args, kwargs, name)
        paths = _leaf_paths(in_tree)
        axes = [
            _canonical_in_axis(x, a, p, name) for x, a, p in zip(leaves, axes, paths)
        ]
        size = _batch_size(leaves, axes, paths, axis_size, name)
        trace = BatchTrace(core.current_trace(), size, f"vmap of {name}", axis_name)
        if _batch_layout:
            trace.layout = _batch_layout["of"](leaves, axes)
        tracers = [trace.pack(x, a) for x, a in zip(leaves, axes)]
        boxes = refs.rebox(tracers, ref_args, trace)
        named = {} if axis_name is None else {axis_name: size}
        layout_token = _layout_now.set(trace.layout)
        try:
            with set_current_trace(trace), axes_env.bound(named):
                a, k = tree_unflatten(in_tree, tracers)
                out = fun(*a, **k)
            out_leaves, out_tree = tree_flatten(out)
            unpacked = [trace.unpack(x) for x in out_leaves]
            written = [
                (ref, axes[i], trace.unpack(box._value)) for i, ref, box in boxes
            ]
        finally:
            trace.alive = False
            _layout_now.reset(layout_token)
        out_axes_flat = _out_leaf_axes(out_axes, out, out_tree, name)
        out_paths = _leaf_paths(out_tree, "out")
        results = [
            _split_like_batch(
                trace, v, d, ax, _place_output(v, d, ax, size, p, name, sum_match)
            )
            for (v, d), ax, p in zip(unpacked, out_axes_flat, out_paths)
        ]
        for ref, axis, (value, bdim) in written:
            refs.write(ref, _place_output(value, bdim, axis, size, "a Ref", name))
        return tree_unflatten(out_tree, results)

    return batched


def _check_axis_spec(spec, what: str) -> None:
    leaves, _ = tree_flatten(spec, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if leaf is not None and (isinstance(leaf, bool) or not isinstance(leaf, int)):
            raise ValueError(
                f"vmap {what} must be an int, None, or a pytree of ints and None; "
                f"got {leaf!r} in {what}={spec!r}"
            )


def _leaf_axes(in_axes, args: tuple, kwargs: dict, name: str) -> list:
    """One axis per leaf of (args, kwargs); kwargs are mapped over axis 0."""
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(
            f"vmap of {name}: in_axes {in_axes!r} has {len(in_axes)} entries but "
            f"{name} was called with {len(args)} positional arguments"
        )
    axes: list = []
    spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    for i, (ax, arg) in enumerate(zip(spec, args)):
        axes += _broadcast_prefix(ax, arg, f"args[{i}]", "in_axes", name)
    axes += [0] * len(tree_flatten(kwargs)[0])
    return axes


def _out_leaf_axes(out_axes, out, out_tree: PyTreeDef, name: str) -> list:
    return _broadcast_prefix(out_axes, out, "out", "out_axes", name)


def _broadcast_prefix(spec, tree, path: str, what: str, name: str) -> list:
    """The axis for each leaf of `tree`, where `spec` is a pytree prefix of it."""
    spec_leaves, spec_def = tree_flatten(spec, is_leaf=lambda x: x is None)
    _, tree_def = tree_flatten(tree)
    out: list = []
    _match_prefix(spec_def, tree_def, iter(spec_leaves), path, out, what, name)
    return out


def _match_prefix(spec_def, tree_def, spec_leaves, path, out, what, name) -> None:
    if spec_def.node_type is None:
        _spread_axis(next(spec_leaves), tree_def, out)
        return
    same = (
        spec_def.node_type == tree_def.node_type
        and spec_def.aux == tree_def.aux
        and len(spec_def.children) == len(tree_def.children)
    )
    if not same:
        raise ValueError(
            f"vmap of {name}: {what} does not match the structure at {path}: "
            f"the {what} entry there has structure {spec_def} but the value has "
            f"structure {tree_def}; {what} must be a pytree prefix of the value "
            f"(use a single int or None to cover a whole subtree)"
        )
    for key, s, t in zip(_child_keys(tree_def), spec_def.children, tree_def.children):
        _match_prefix(s, t, spec_leaves, path + key, out, what, name)


def _spread_axis(axis, tree_def: PyTreeDef, out: list) -> None:
    """`axis` for every leaf under `tree_def`. A negative axis counts from the
    end of the value's own dims, so under a node whose leaves carry hidden
    trailing dims (a typed PRNG key's uint32 words: `hidden_trailing_dims`)
    it moves past them rather than mapping the hidden axis."""
    if axis is None or axis >= 0 or tree_def.node_type is None:
        out.extend([axis] * tree_def.num_leaves)
        return
    hidden = getattr(tree_def.node_type, "hidden_trailing_dims", 0)
    for child in tree_def.children:
        _spread_axis(axis - hidden, child, out)


def _leaf_paths(treedef: PyTreeDef, root: str | None = None) -> list[str]:
    """Readable paths: `args[0]['w']` for inputs, `out[1]` for outputs."""
    paths: list[str] = []

    def walk(d: PyTreeDef, prefix: str):
        if d.node_type is None:
            paths.append(prefix)
            return
        for key, child in zip(_child_keys(d), d.children):
            walk(child, prefix + key)

    if root is not None:
        walk(treedef, root)
        return paths
    args_def, kwargs_def = treedef.children
    walk(args_def, "args")
    for key, child in zip(kwargs_def.aux, kwargs_def.children):
        walk(child, key)
    return paths


def _canonical_in_axis(x, axis, path: str, name: str):
    if axis is None:
        return not_mapped
    ndim = aval_of(x).ndim
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"vmap of {name}: in_axes {axis} is out of range for {path} of shape "
            f"{aval_of(x).shape} (rank {ndim})"
        )
    return axis % ndim


def _batch_size(leaves, axes, paths, axis_size, name: str) -> int:
    sizes = {
        p: aval_of(x).shape[a] for x, a, p in zip(leaves, axes, paths) if a is not None
    }
    if axis_size is not None:
        sizes = {"axis_size": int(axis_size), **sizes}
    if not sizes:
        raise ValueError(
            f"vmap of {name}: no argument is mapped (all in_axes are None) and "
            f"axis_size was not given, so the batch size is unknown"
        )
    if len(set(sizes.values())) > 1:
        listed = ", ".join(
            f"{p} has size {s}"
            if p == "axis_size"
            else f"{p} has size {s} along axis {axes[paths.index(p)]}"
            for p, s in sizes.items()
        )
        raise ValueError(
            f"vmap of {name}: inconsistent sizes for the mapped axis: {listed}"
        )
    return next(iter(sizes.values()))


def _split_like_batch(trace: BatchTrace, val, bdim, out_axis, out):
    """`out` (the placed output `val`) split along its batch axis as the mapped
    inputs are, where `val` did not vary over the batch yet JAX types it on
    their mesh."""
    if trace.layout is None or bdim is not not_mapped or out_axis is None:
        return out
    axis = out_axis % aval_of(out).ndim
    made_by_rule = trace.split_outputs.get(id(val)) is val
    return _batch_layout["split"](out, val, axis, trace.layout, made_by_rule)


def _place_output(val, bdim, out_axis, axis_size, path, name, sum_match=False):
    """An output with its batch axis at `out_axis` (broadcast if unbatched)."""
    if out_axis is None:
        if bdim is not_mapped:
            return val
        if sum_match:
            return all_primitives["reduce_sum"].bind(val, axes=(bdim,))
        raise ValueError(
            f"vmap of {name}: out_axes is None for {path}, but that output "
            f"depends on the mapped inputs (it varies over the batch)"
        )
    ndim = aval_of(val).ndim + (bdim is not_mapped)
    if not -ndim <= out_axis < ndim:
        raise ValueError(
            f"vmap of {name}: out_axes {out_axis} is out of range for {path}, "
            f"whose batched shape has rank {ndim}"
        )
    out = move_batch_axis(val, axis_size, bdim, out_axis % ndim)
    if isinstance(out, (np.ndarray, np.generic)):  # an input returned unchanged
        out = _broadcast_in_dim(out, out.shape, tuple(range(out.ndim)))  # to an Array
    return out
