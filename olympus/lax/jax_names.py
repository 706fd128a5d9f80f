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

import numpy as np

from olympus.ir.core import Primitive, all_primitives
from olympus.lax.parallel.axis_names import AxisIndexGroupsError  # noqa: F401
from olympus.lax.parallel.collectives import all_to_all  # noqa: F401

# The names of jax.lax's `*_p` attributes whose primitive olympus defines.
JAX_PRIMITIVE_NAMES = tuple(
    """
    abs acos acosh add all_gather all_to_all and argmax argmin asin asinh atan2
    atan atanh axis_index bessel_i0e bessel_i1e bitcast_convert_type
    broadcast_in_dim cbrt ceil clamp clz complex concatenate cond
    conv_general_dilated convert_element_type cos cosh digamma div dot_general
    dynamic_slice dynamic_update_slice eq erf_inv erf erfc exp expm1 fft floor
    gather ge gt igamma_grad_a igamma igammac imag integer_pow iota is_finite le
    lgamma log1p log logistic lt max min mul ne neg not optimization_barrier or
    pad pmax pmin polygamma population_count pow ppermute psum real reduce_and
    reduce_max reduce_min reduce_or reduce_precision reduce_prod reduce_sum
    reduce_window_max reduce_window_sum reduce_xor regularized_incomplete_beta
    rem reshape rev round rsqrt scan scatter_add scatter_max scatter_min
    scatter_mul scatter select_n sharding_constraint shift_left
    shift_right_arithmetic shift_right_logical sign sin sinh slice sort sqrt
    squeeze stop_gradient sub tan tanh top_k transpose while xor zeta
    """.split()
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


def _numpy():
    return sys.modules["olympus.numpy"]


class MulhiTypeError(TypeError):
    """lax.mulhi given operands that are not integers of one dtype."""


def mulhi(x, y, /):
    """The upper half of the double-width product of two integers, elementwise.

    The upper N bits of the 2N-bit product of N-bit integers, elementwise (JAX's
    `lax.mulhi`, for multiply-shift hashing and division by constants). Computed
    from half-width limbs, so no wider integer type is needed (32-bit operands
    work without x64). Signed operands take the unsigned product's high half
    less the two-complement corrections. Args: x, y: integer arrays of one dtype
    (a rank-0 one broadcasts). Returns: An array of that dtype: `(x * y) >> N`
    computed exactly. Raises: MulhiTypeError: the operands are not integers of
    one dtype.

    Args:
      x: an array of an integer dtype.
      y: an array of x's shape and dtype.

    Returns:
      An array of x's shape and dtype.

    Raises:
      MulhiTypeError: the operands are not integers of one dtype (a TypeError).

    Example:
      >>> lax.mulhi(np.uint8([200, 3]), np.uint8([100, 5]))
      Array([78,  0], dtype=uint8)
    """
    jnp = _numpy()
    x, y = jnp.asarray(x), jnp.asarray(y)
    if x.dtype != y.dtype or not np.issubdtype(x.dtype, np.integer):
        raise MulhiTypeError(
            f"lax.mulhi: operands must be integers of one dtype, got {x.dtype} and "
            f"{y.dtype}; convert them with lax.convert_element_type first"
        )
    x, y = jnp.broadcast_arrays(x, y)
    bits = x.dtype.itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    a = _lax().bitcast_convert_type(x, unsigned)
    b = _lax().bitcast_convert_type(y, unsigned)
    high = _unsigned_mulhi(a, b, bits // 2)
    if np.issubdtype(x.dtype, np.signedinteger):
        zero = np.zeros((), unsigned)
        high = high - jnp.where(x < 0, b, zero) - jnp.where(y < 0, a, zero)
    return _lax().bitcast_convert_type(high, x.dtype)


def _unsigned_mulhi(a, b, half: int):
    """The high half of a*b for unsigned a, b: schoolbook multiplication of
    half-width limbs, each partial product fitting in the full width."""
    mask = np.array(2**half - 1, a.dtype)
    shift = np.array(half, a.dtype)

    def high(v):
        return _lax().shift_right_logical(v, _lax().full_like(v, shift))

    a_lo, a_hi, b_lo, b_hi = a & mask, high(a), b & mask, high(b)
    lo_lo, hi_lo, lo_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi
    cross = high(lo_lo) + (hi_lo & mask) + lo_hi
    return a_hi * b_hi + high(hi_lo) + high(cross)


def _total_order_key(x):
    """`x` as integers whose order is XLA's total order of floats
    (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN); other dtypes as they are."""
    x = _numpy().asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        return x
    signed = np.dtype(f"int{x.dtype.itemsize * 8}")
    key = _lax().bitcast_convert_type(x, signed)
    flip = np.array(np.iinfo(signed).max, signed)
    return _numpy().where(key < 0, key ^ flip, key)


class TotalOrderTypeError(TypeError):
    """eq_to / le_to / lt_to given complex operands (XLA has no total order
    of complex numbers; JAX's fail when compiled)."""


def _total_order(name: str, compare):
    """eq_to / le_to / lt_to: `compare` on the total-order keys (the
    comparisons lax.sort's comparator makes)."""

    def expand(x, y):
        jnp = _numpy()
        x, y = jnp.asarray(x), jnp.asarray(y)
        if np.issubdtype(x.dtype, np.complexfloating):
            raise TotalOrderTypeError(
                f"lax.{name}_p: no total order of {x.dtype}; compare the real and "
                "imaginary parts (x.real, x.imag) instead"
            )
        return compare(_total_order_key(x), _total_order_key(y))

    return expand


def _highest(dtype) -> np.ndarray:
    """The identity of min: +inf, the largest integer, or True."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array(True)
    if np.issubdtype(dtype, np.integer):
        return np.array(np.iinfo(dtype).max, dtype)
    return np.array(np.inf).astype(dtype)


def _reduce_window_min(
    operand,
    *,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    operand = _numpy().asarray(operand)
    return _lax().reduce_window(
        operand,
        _highest(operand.dtype),
        _lax().min,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _operand_tree(args) -> tuple:
    """(operands, init values) of a reduction bound as `*operands, *inits`:
    single arrays when there is one operand (lax calls the computation on
    scalars then), tuples otherwise."""
    n = len(args) // 2
    if n == 1:
        return args[0], args[1]
    return tuple(args[:n]), tuple(args[n:])


def _reduce_window(*args, jaxpr, consts, **window):
    """JAX's general reduce_window_p: operands then init values; the
    reduction is `jaxpr` (2n scalars -> n), evaluated as lax's computation."""
    from olympus.tracer.evaluation import eval_program

    def computation(x, y):
        flat = [x, y] if len(args) == 2 else [*x, *y]
        outs = eval_program(jaxpr, consts, flat)
        return outs[0] if len(args) == 2 else tuple(outs)

    operands, inits = _operand_tree(args)
    out = _lax().reduce_window(operands, inits, computation, **window)
    return [out] if len(args) == 2 else list(out)


def _reduce(*args, computation, jaxpr=None, dimensions, out_sharding=None):
    """JAX's reduce_p: operands then init values, reduced by `computation`."""
    operands, inits = _operand_tree(args)
    out = _lax().reduce(operands, inits, computation, dimensions)
    return [out] if len(args) == 2 else list(out)


def _approx_top_k(
    operand,
    *,
    k,
    reduction_dimension,
    recall_target,
    is_max_k,
    reduction_input_size_override,
    aggregate_to_topk,
):
    top = _lax().approx_max_k if is_max_k else _lax().approx_min_k
    return list(
        top(
            operand,
            k,
            reduction_dimension,
            recall_target,
            reduction_input_size_override,
            aggregate_to_topk,
        )
    )


def _scatter_sub(
    operand,
    indices,
    updates,
    *,
    dimension_numbers,
    indices_are_sorted,
    unique_indices,
    mode,
    update_jaxpr=None,
    update_consts=(),
):
    return _lax().scatter_sub(
        operand,
        indices,
        updates,
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )


def _device_put(*xs, devices, srcs, copy_semantics=None):
    put = sys.modules["olympus"].device_put
    return [put(x, device) for x, device in zip(xs, devices)]


def stack(operands, axis: int = 0):
    """Joins arrays of one shape along a new axis `axis` (JAX's `lax.stack`).

    Args:
      operands: a sequence of arrays of one shape and dtype.
      axis: where the new axis goes (negative counts from the end).

    Returns:
      An array with one more axis, of length `len(operands)`.

    Raises:
      ValueError: no operands, or operands of different shapes.

    Example:
      >>> lax.stack([np.float32([1, 2]), np.float32([3, 4])], axis=1)
      Array([[1., 3.],
             [2., 4.]], dtype=float32)
    """
    if not len(operands):
        raise ValueError("lax.stack: give at least one array")
    ndim = np.ndim(operands[0]) + 1
    axis = axis + ndim if axis < 0 else axis
    expanded = [_lax().expand_dims(x, (axis,)) for x in operands]
    return _lax().concatenate(expanded, axis)


def unstack(x, axis: int = 0) -> tuple:
    """`x` split along `axis` into a tuple of arrays one axis smaller.

    Splits `x` along `axis` into a tuple of arrays one axis smaller (JAX's
    `lax.unstack`).

    Args:
      x: an array.
      axis: the axis to split (negative counts from the end).

    Returns:
      A tuple of `x.shape[axis]` arrays.

    Raises:
      ValueError: axis is out of range for x.

    Example:
      >>> lax.unstack(np.float32([[1, 2], [3, 4]]), axis=1)
      (Array([1., 3.], dtype=float32), Array([2., 4.], dtype=float32))
    """
    ndim = np.ndim(x)
    if not -ndim <= axis < ndim:
        raise ValueError(f"lax.unstack: axis {axis} is out of range for rank {ndim}")
    axis = axis % ndim
    return tuple(
        _lax().index_in_dim(x, i, axis, keepdims=False)
        for i in range(np.shape(x)[axis])
    )


def stage(x, /):
    """`x` as an array of the current trace; the identity on values.

    `x` as an array of the current trace (the identity on values; JAX's
    `lax.stage`): a Python scalar or ndarray becomes an array, weak type kept.

    Args:
      x: an array, NumPy array or Python number.

    Returns:
      x as an Array of the current trace.

    Raises:
      OlympusTypeError: x is not an array or a number (a string, say).

    Example:
      >>> lax.stage(1.0)
      Array(1., dtype=float32, weak_type=True)
    """
    return _numpy().asarray(x)


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
    "split": (lambda x, *, sizes, axis: list(_lax().split(x, sizes, axis)), True),
    "copy": (lambda x: _numpy().array(x, copy=True), False),
    "stage": (stage, False),
    "mulhi": (mulhi, False),
    "tile": (lambda x, *, reps: _lax().tile(x, reps), False),
    "stack": (lambda *xs, axis: stack(xs, axis), False),
    "unstack": (lambda x, *, axis: list(unstack(x, axis)), True),
    "eq_to": (_total_order("eq_to", lambda a, b: a == b), False),
    "le_to": (_total_order("le_to", lambda a, b: a <= b), False),
    "lt_to": (_total_order("lt_to", lambda a, b: a < b), False),
    "scatter_sub": (_scatter_sub, False),
    "reduce_window_min": (_reduce_window_min, False),
    "reduce_window": (_reduce_window, True),
    "reduce": (_reduce, True),
    "approx_top_k": (_approx_top_k, True),
    "device_put": (_device_put, True),
}


_EXPANDED = {
    f"{name}_p": ExpandedPrimitive(name, expand, multiple)
    for name, (expand, multiple) in EXPANDED_PRIMITIVES.items()
}


def jax_named_primitives() -> dict[str, Primitive]:
    """{"add_p": add primitive, ...} for each of JAX_PRIMITIVE_NAMES, and the
    ExpandedPrimitive of each name in EXPANDED_PRIMITIVES (one object each)."""
    named = {f"{name}_p": all_primitives[name] for name in JAX_PRIMITIVE_NAMES}
    return _EXPANDED | named  # olympus's own primitive wins where both exist


class BroadcastShapesError(ValueError):
    """Shapes that NumPy's broadcasting cannot join (lax.broadcast_shapes)."""


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives `shapes` together.

    Args:
      *shapes: tuples of ints.

    Returns:
      The broadcast shape, a tuple of ints.

    Raises:
      BroadcastShapesError: the shapes do not broadcast (a ValueError).

    Example:
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
    """Swaps the named axis `axis_name` with positional `axis` of `x`.

    Swaps the named axis `axis_name` with positional `axis` of `x` (an
    all_to_all splitting and joining the same axis), inside shard_map.

    Args:
      x: an array.
      axis_name: the mapped axis' name.
      axis: the positional axis to swap with it.
      axis_index_groups: as all_to_all's.

    Returns:
      An array of x's shape and dtype.

    Raises:
      UnboundAxisNameError: axis_name is not bound by an enclosing shard_map,
        pmap or vmap (a NameError).

    Example:
      >>> f = lambda v: lax.pswapaxes(v, 'i', 0)
      >>> olympus.vmap(f, axis_name='i')(jnp.arange(4.0).reshape(2, 2))
      Array([[0., 2.],
             [1., 3.]], dtype=float32)
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
