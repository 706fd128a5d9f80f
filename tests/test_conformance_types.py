"""Conformance with JAX 0.10.2 in types, tracing and API forms (issue 32).

Each test runs one program under olympus and JAX through the oracle
(`jax_oracle.agree`), which compares container types, dtypes, weak types and
values; JAX's behaviour is the spec.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from jax_oracle import JAX, OLYMPUS, agree, differences, run_both, x64

F32 = np.float32


# ---- weak types through the transformations ----------------------------------------
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.grad(lambda x: x * 2.0)(3.0),
        lambda ox: ox.grad(lambda x: x * ox.jnp.float32(2))(3.0),
        lambda ox: ox.grad(lambda x: x * 2.0)(ox.jnp.float32(3)),
        lambda ox: ox.value_and_grad(lambda x: x * 2.0)(3.0),
        lambda ox: ox.jacfwd(lambda x: x * 2.0)(3.0),
        lambda ox: ox.jacfwd(lambda x: x * ox.jnp.float32(2))(3.0),
        lambda ox: ox.jacrev(lambda x: x * 2.0)(3.0),
        lambda ox: ox.jacrev(lambda x: x * ox.jnp.float32(2))(3.0),
        lambda ox: ox.hessian(lambda x: x**3)(2.0),
        lambda ox: ox.jvp(lambda x: x * 2.0, (3.0,), (1.0,)),
        lambda ox: ox.jvp(lambda x: x * 2.0, (3.0,), (F32(1),)),
        lambda ox: ox.jvp(lambda x: x + 1.0, (3.0,), (ox.jnp.float32(1),)),
        lambda ox: ox.jvp(lambda x: x, (ox.jnp.asarray(3.0),), (F32(0),)),
        lambda ox: ox.jvp(lambda x: x * 2.0, (F32(3),), (1.0,)),
        lambda ox: ox.linearize(lambda x: x * 2.0, 3.0)[1](F32(1)),
        lambda ox: ox.vjp(lambda x: x * 2.0, 3.0)[1](1.0),
        lambda ox: ox.vjp(lambda x: x * ox.jnp.float32(2), 3.0)[1](F32(1)),
        lambda ox: ox.jit(ox.grad(lambda x: x * 2.0))(3.0),
        lambda ox: ox.grad(lambda x, y: x * y, argnums=(0, 1))(3.0, F32(2)),
        lambda ox: ox.grad(lambda x: ox.jnp.maximum(x, 1.0))(3.0),
        lambda ox: ox.grad(ox.jnp.sqrt)(3.0),
        lambda ox: ox.grad(ox.jnp.tanh)(0.5),
        lambda ox: ox.grad(lambda x: x**3)(2.0),
        lambda ox: ox.grad(lambda x: x**2.5)(3.0),
        lambda ox: ox.grad(lambda x: ox.jnp.clip(x, 0.0, 1.0))(0.5),
        lambda ox: ox.grad(ox.checkpoint(lambda x: ox.jnp.sin(x) * 2.0))(3.0),
        lambda ox: ox.vmap(ox.grad(lambda x: x * 2.0))(ox.jnp.asarray([1.0, 2.0])),
        lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0),
        lambda ox: ox.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0.0),
        lambda ox: ox.lax.scan(lambda c, x: (c + 1.0, c), 0.0, None, length=3),
    ],
)
def test_weak_types_of_transformed_python_scalars(program):
    agree(program)


def test_grad_of_abs_at_zero_is_one():
    agree(lambda ox: ox.grad(ox.jnp.abs)(0.0))
    agree(lambda ox: ox.grad(ox.nn.relu6)(6.0))
    agree(lambda ox: ox.grad(ox.nn.relu6)(3.0))
    agree(lambda ox: ox.grad(ox.jnp.abs)(F32(-0.0)))
    agree(lambda ox: ox.vmap(ox.grad(ox.jnp.abs))(np.array([-1, 0, 2], F32)))


# ---- containers ---------------------------------------------------------------------
X = np.array([3, 1, 4, 1, 5, 9], F32)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.top_k(X, 2),
        lambda ox: ox.jit(lambda x: ox.lax.top_k(x, 2))(X),
        lambda ox: ox.lax.approx_max_k(X, 2),
        lambda ox: ox.lax.approx_min_k(X, 2),
        lambda ox: ox.jnp.split(X, 2),
        lambda ox: ox.jnp.meshgrid(X[:2], X[:3]),
        lambda ox: ox.jnp.broadcast_arrays(X, 1.0),
        lambda ox: ox.lax.sort([X, X], num_keys=1),
        lambda ox: ox.jnp.ogrid[0:2, 0:3],
        lambda ox: ox.jnp.ogrid[0:2],
    ],
)
def test_container_types(program):
    agree(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, 1.0)
        ),
        lambda ox: ox.lax.while_loop(
            lambda c: c[0] < 3, lambda c: [c[0] + 1, c[1]], [0, np.ones(2)]
        ),
        lambda ox: ox.lax.while_loop(
            lambda c: c[0] < c[1], lambda c: (c[0] + 1, c[1]), (0, 3.0)
        ),
        lambda ox: ox.lax.fori_loop(0, 3, lambda i, c: (c[0] + 1, c[1]), (0, 1.0)),
        lambda ox: ox.lax.scan(lambda c, x: (c, x), (1.0, np.ones(2)), X),
        lambda ox: ox.jit(
            lambda: ox.lax.while_loop(
                lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, 1.0)
            )
        )(),
        lambda ox: ox.grad(
            lambda y: ox.lax.fori_loop(0, 3, lambda i, c: (c[0] + 1, c[1]), (0, y))[1]
        )(1.0),
    ],
)
def test_loop_carries_passed_through_are_the_initial_values(program):
    agree(program)


# ---- NumPy scalars are strongly typed -------------------------------------------------
@pytest.mark.parametrize("enabled", [False, True])
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.ones(3, F32) * np.float64(2),
        lambda ox: ox.jnp.ones(3, np.float16) * np.float64(2),
        lambda ox: ox.jnp.ones(3, np.float16) * np.float32(2),
        lambda ox: ox.jnp.ones(3, np.int8) * np.int64(2),
        lambda ox: ox.jnp.ones(3, np.int8) * np.int32(2),
        lambda ox: np.float64(2) * ox.jnp.ones(3, F32),
        lambda ox: ox.jnp.add(ox.jnp.ones(3, F32), np.float64(2)),
        lambda ox: ox.jnp.asarray(np.float64(2)),
        lambda ox: ox.jit(lambda x: x * np.float64(2))(ox.jnp.ones(3, F32)),
        lambda ox: ox.jnp.ones(3, F32) * 2.0,
    ],
)
def test_numpy_scalars_are_strong(program, enabled):
    with x64(enabled):
        agree(program)


# ---- named tuples: the same fields, in the same order, as JAX's -----------------------
def agree_named(program, *args):
    """`agree` for results that are named tuples, whose classes differ by
    system: the field names must match, then the fields as a plain tuple."""
    ours, theirs = run_both(program, *args)
    assert type(ours)._fields == type(theirs)._fields, (ours, theirs)
    found = differences(tuple(ours), tuple(theirs))
    assert not found, found


INTS = np.array([3, 1, 3, 2, 1, 1], np.int32)
M = np.array([[2.0, 1.0], [1.0, 3.0]], F32)


@pytest.mark.parametrize("enabled", [False, True])
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.unique_counts(INTS),
        lambda ox: ox.jnp.unique_inverse(INTS),
        lambda ox: ox.jnp.unique_all(INTS),
        lambda ox: ox.jnp.linalg.eigh(M),
        lambda ox: ox.jnp.linalg.svd(M),
        lambda ox: ox.jnp.linalg.qr(M),
        lambda ox: ox.jnp.linalg.slogdet(M),
    ],
)
def test_named_tuple_results(program, enabled):
    with x64(enabled):
        agree_named(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.unique(INTS, return_counts=True),
        lambda ox: ox.jnp.unique(
            INTS, return_index=True, return_inverse=True, return_counts=True
        ),
        lambda ox: ox.jnp.unique(INTS, return_counts=True, size=5),
        lambda ox: ox.jnp.unique_values(INTS),
        lambda ox: ox.jit(lambda x: ox.jnp.unique(x, return_counts=True, size=4))(INTS),
    ],
)
def test_unique_with_x64(program):
    with x64():
        agree(program)


# ---- Python sequences where JAX takes only arrays ------------------------------------
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.sum([1, 2, 3]),
        lambda ox: ox.jnp.max((1, 2)),
        lambda ox: ox.jnp.mean([1.0, 2.0]),
        lambda ox: ox.jnp.sin([1.0]),
        lambda ox: ox.jnp.add([1], 2),
        lambda ox: ox.jnp.add(1, (2,)),
        lambda ox: ox.jnp.where([True], 1, 2),
        lambda ox: ox.jnp.dot([1.0], [2.0]),
        lambda ox: ox.jnp.concatenate([[1.0], [2.0]]),
        lambda ox: ox.jnp.reshape([1.0, 2.0], (2,)),
        lambda ox: ox.jnp.cumsum([1, 2]),
        lambda ox: ox.jnp.einsum("i,i", [1.0], [2.0]),
        lambda ox: ox.jnp.unique([1, 2]),
        lambda ox: ox.jnp.compress([True], np.ones(1)),
        lambda ox: ox.jnp.linalg.det([[1.0]]),
        lambda ox: ox.jnp.linalg.norm([1.0, 2.0]),
        lambda ox: ox.jnp.fft.fft([1.0]),
        # what JAX does take: sequences of arrays, lists to build arrays from
        lambda ox: ox.jnp.array([1, 2]),
        lambda ox: ox.jnp.asarray((1.0, 2.0)),
        lambda ox: ox.jnp.concatenate([np.ones(1), np.zeros(1)]),
        lambda ox: ox.jnp.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
        lambda ox: ox.jit(lambda x: x)([1, 2]),
    ],
)
def test_sequences_refused_as_jax_refuses_them(program):
    agree(program)


def test_a_refused_sequence_names_the_function_and_the_fix():
    import olympus.numpy as jnp
    from olympus.numpy.core import ArrayLikeTypeError

    with pytest.raises(ArrayLikeTypeError, match=r"jnp\.mean .*jnp\.asarray"):
        jnp.mean([1.0, 2.0])
    with pytest.raises(TypeError, match=r"jnp\.sum .*list at position 0"):
        jnp.sum([1, 2])
    with pytest.raises(ArrayLikeTypeError, match=r"jnp\.linalg\.det "):
        jnp.linalg.det([[1.0]])


# ---- pinv and matrix_rank take array tolerances -----------------------------------------
STACK = np.random.default_rng(0).normal(size=(2, 3, 3)).astype(F32)
STACK[1, 2] = STACK[1, 0]


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.linalg.pinv(STACK, rtol=ox.jnp.array([0.1, 0.5])),
        lambda ox: ox.jnp.linalg.pinv(STACK, rtol=0.3),
        lambda ox: ox.jnp.linalg.pinv(STACK, rcond=0.3),
        lambda ox: ox.jnp.linalg.pinv(STACK, rcond=0.3, rtol=0.1),
        lambda ox: ox.jnp.linalg.pinv(STACK + STACK.transpose(0, 2, 1), hermitian=True),
        lambda ox: ox.jnp.linalg.matrix_rank(STACK, rtol=ox.jnp.array([0.1, 0.5])),
        lambda ox: ox.jnp.linalg.matrix_rank(STACK, tol=1.0),
        lambda ox: ox.jnp.linalg.matrix_rank(STACK),
        lambda ox: ox.jnp.linalg.matrix_rank(np.zeros(3, F32)),
        lambda ox: ox.jit(ox.jnp.linalg.matrix_rank)(STACK, F32(0.5)),
    ],
)
def test_linalg_array_tolerances(program):
    agree(program, rtol=1e-4, atol=1e-4)
    with x64():
        agree(program, rtol=1e-4, atol=1e-4)


def test_pinv_gradient_with_a_tolerance():
    agree(
        lambda ox: ox.grad(lambda a: ox.jnp.linalg.pinv(a, rtol=0.01).sum())(STACK[0]),
        rtol=1e-4,
        atol=1e-4,
    )


# ---- contractions take preferred_element_type and precision ------------------------------
I8 = np.arange(6, dtype=np.int8).reshape(2, 3)
F16 = np.ones((2, 3), np.float16)


@pytest.mark.parametrize("name", ["dot", "matmul", "inner", "vdot", "tensordot"])
@pytest.mark.parametrize(
    "a, preferred", [(I8, np.int32), (I8, None), (F16, np.float32)], ids=str
)
def test_contractions_take_preferred_element_type(name, a, preferred):
    def program(ox):
        fn = getattr(ox.jnp, name)
        b = a if name in ("inner", "vdot") else a.T
        extra = (1,) if name == "tensordot" else ()
        return fn(a, b, *extra, preferred_element_type=preferred, precision="highest")

    agree(program)


def test_scalar_dot_takes_preferred_element_type():
    agree(lambda ox: ox.jnp.dot(I8, np.int8(2), preferred_element_type=np.int32))
    agree(lambda ox: ox.jnp.inner(np.int8(3), I8, preferred_element_type=np.int32))


# ---- float0 cotangents of integer inputs --------------------------------------------------
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3),
        lambda ox: ox.grad(lambda n: 1.0 * n, allow_int=True)(3),
        lambda ox: ox.grad(lambda x, b: x * b, argnums=1, allow_int=True)(2.0, True),
        lambda ox: ox.vjp(lambda x, n: x * n, 2.0, 3)[1](1.0),
        lambda ox: ox.dtypes.float0,
    ],
)
def test_float0_cotangents(program):
    agree(program)


# ---- jit: donate_argnames, one cache per function --------------------------------------
def test_donate_argnames_donates_the_named_positional_arguments():
    import olympus
    import olympus.numpy as jnp

    f = olympus.jit(lambda x, y: x + y, donate_argnames="y")
    x, y = jnp.ones(2), jnp.ones(2)
    np.testing.assert_array_equal(f(x, y), [2.0, 2.0])
    assert not x.is_deleted() and y.is_deleted()
    x, y = jnp.ones(2), jnp.ones(2)  # by keyword, donated too (as JAX)
    np.testing.assert_array_equal(f(x, y=y), [2.0, 2.0])
    assert not x.is_deleted() and y.is_deleted()
    g = olympus.jit(lambda x, y: x + y, donate_argnums=0)
    x, y = jnp.ones(2), jnp.ones(2)
    np.testing.assert_array_equal(g(y=y, x=x), [2.0, 2.0])
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(ValueError, match="donate_argnames names 'z'"):
        olympus.jit(lambda x: x, donate_argnames="z")
    agree(lambda ox: ox.jit(lambda x: x + 1, donate_argnames="x")(ox.jnp.ones(2)))


SCALE = 1.0


def _scaled(x):
    return x * SCALE


def test_a_new_jit_of_the_same_function_reuses_its_cache():
    def program(ox):
        global SCALE
        try:
            SCALE = 1.0
            first = ox.jit(_scaled)(F32(2))
            SCALE = 5.0  # not re-read: the new wrapper finds the first trace
            again = ox.jit(_scaled)(F32(2))
            new_shape = ox.jit(_scaled)(np.ones(2, F32))  # a new trace reads it
            static = ox.jit(_scaled, static_argnums=0)(2.0)
        finally:
            SCALE = 1.0
        return first, again, new_shape, static

    agree(program)


# ---- custom_jvp / custom_vjp under grad: rules see the primal values --------------------
def _custom_jvp_program(ox):
    calls = []

    @ox.custom_jvp
    def f(x):
        calls.append("primal")
        return ox.jnp.sin(x) if x > 0 else x  # concrete under eager grad, as JAX

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append("rule")
        (x,), (t,) = primals, tangents
        return f(x), ox.jnp.cos(x) * t

    outs = [ox.grad(f)(1.0), ox.jvp(f, (1.0,), (1.0,)), ox.value_and_grad(f)(2.0)]
    return outs, calls


def _custom_jvp_counts(ox):
    calls = []

    @ox.custom_jvp
    def f(x):
        calls.append("primal")
        return ox.jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append("rule")
        (x,), (t,) = primals, tangents
        return ox.jnp.sin(x), ox.jnp.cos(x) * t

    outs = [
        f(1.0),
        ox.grad(f)(1.0),
        ox.jit(f)(1.0),
        ox.jit(ox.grad(f))(1.0),
        ox.vmap(f)(np.ones(2, F32)),
        ox.grad(lambda x, y: f(x) * y, argnums=1)(1.0, 2.0),  # no tangent into f
    ]
    return outs, calls


def _custom_vjp_program(ox):
    calls = []

    @ox.custom_vjp
    def f(x):
        calls.append("primal")
        return ox.jnp.sin(x) if x > 0 else ox.jnp.tanh(x)

    def fwd(x):
        calls.append("fwd")
        return (ox.jnp.sin(x) if x > 0 else ox.jnp.tanh(x)), x

    def bwd(x, g):
        calls.append("bwd")
        return (ox.jnp.cos(x) * g,)

    f.defvjp(fwd, bwd)
    return [f(1.0), ox.grad(f)(1.0), ox.value_and_grad(f)(-1.0)], calls


@pytest.mark.parametrize(
    "program", [_custom_jvp_program, _custom_jvp_counts, _custom_vjp_program]
)
def test_custom_rules_run_on_primal_values_once(program):
    agree(program)


# ---- a dict as a pytree node's aux data --------------------------------------------------
def _dict_aux_program(ox):
    class Box:
        def __init__(self, value, meta):
            self.value, self.meta = value, meta

    ox.tree_util.register_pytree_node(
        Box, lambda b: ((b.value,), dict(b.meta)), lambda aux, c: Box(c[0], aux)
    )
    boxes = [Box(F32(1), {"k": 1}), Box(F32(2), {"k": 1}), Box(F32(2), {"k": 2})]
    trees = [ox.tree_util.tree_structure(b) for b in boxes]
    traces = []

    @ox.jit
    def scaled(box):
        traces.append(1)
        return box.value * box.meta["k"]

    results = [scaled(b) for b in boxes]
    same = (
        trees[0] == trees[1],
        trees[0] == trees[2],
        hash(trees[0]) == hash(trees[1]),
    )
    rebuilt = ox.tree_util.tree_unflatten(trees[0], [5.0]).meta
    return same, results, len(traces), rebuilt


def test_dict_aux_data():
    agree(_dict_aux_program)


# ---- signatures: every keyword JAX accepts, olympus accepts --------------------------------
def _keyword_names(fn, jax_side: bool):
    """The parameter names a caller may pass by keyword (JAX's positional-only
    ones excluded); None where the signature is unknown or takes **kwargs."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {
        p.name
        for p in params
        if p.kind is not p.VAR_POSITIONAL
        and not p.name.startswith("_")
        and not (jax_side and p.kind is p.POSITIONAL_ONLY)
    }


def signature_gaps() -> dict[str, set]:
    """{'numpy.sum': {...}}: the parameters of JAX's public functions (top
    level, jax.numpy, jax.lax) that olympus's function of the same name lacks."""
    import jax
    import jax.lax
    import jax.numpy

    import olympus
    import olympus.lax
    import olympus.numpy

    pairs = [
        ("olympus", olympus, jax),
        ("numpy", olympus.numpy, jax.numpy),
        ("lax", olympus.lax, jax.lax),
    ]
    gaps = {}
    for label, ours, theirs in pairs:
        for name in sorted(dir(theirs)):
            j, o = getattr(theirs, name), getattr(ours, name, None)
            if name.startswith("_") or not callable(o) or not callable(j):
                continue
            if inspect.isclass(j) or inspect.ismodule(j):
                continue
            ps_jax, ps_ours = _keyword_names(j, True), _keyword_names(o, False)
            if ps_jax is not None and ps_ours is not None and ps_jax - ps_ours:
                gaps[f"{label}.{name}"] = ps_jax - ps_ours
    return gaps


# The gaps that remain (also listed in docs/differences.md). Remove an entry
# when the parameter is added; a new gap fails the test below.
ALLOWED_GAPS: dict[str, set[str]] = {}


def test_signatures_take_what_jax_takes():
    new = {
        name: sorted(missing - ALLOWED_GAPS.get(name, set()))
        for name, missing in signature_gaps().items()
        if missing - ALLOWED_GAPS.get(name, set())
    }
    assert not new, f"parameters JAX takes that olympus lacks: {new}"


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.top_k(STACK, 2, axis=0),
        lambda ox: ox.lax.top_k(STACK, 1, axis=1),
        lambda ox: ox.jnp.sum(np.ones(3, np.int8), promote_integers=False),
        lambda ox: ox.jnp.prod(np.ones(3, np.uint8), promote_integers=False),
        lambda ox: ox.jnp.sum(np.ones(3, bool), promote_integers=False),
        lambda ox: ox.jnp.sum(np.ones(3, np.int8)),
        lambda ox: ox.jnp.vecdot(I8, I8, preferred_element_type=np.int32),
        lambda ox: ox.jnp.vecdot(F16, F16, precision="highest", axis=0),
    ],
)
def test_parameters_added_from_the_sweep(program):
    agree(program)


def test_full_like_keeps_a_weak_type_as_jax():
    """lax.full_like of a weakly typed array is weak unless a dtype is given
    (so rules built on it, e.g. logaddexp's gradient, keep Python scalars weak)."""
    agree(lambda ox: ox.lax.full_like(ox.jnp.asarray(2.0), 0))
    agree(lambda ox: ox.lax.full_like(ox.jnp.asarray(2.0), 1, shape=(2,)))
    agree(lambda ox: ox.lax.full_like(ox.jnp.asarray(2.0), 0, dtype=ox.jnp.float32))
    agree(lambda ox: ox.grad(ox.jnp.logaddexp, argnums=(0, 1))(np.inf, np.inf))


def test_hypot_gradient_of_python_scalars_is_weak():
    for a, b in [(3.0, 4.0), (0.0, 0.0), (np.inf, 1.0)]:
        agree(lambda ox: ox.grad(ox.jnp.hypot, argnums=(0, 1))(a, b))
    agree(lambda ox: ox.jnp.hypot(ox.jnp.ones(3, ox.jnp.float16) * 3, 4.0))


def test_refusals_jax_shares_raise_named_not_implemented_errors():
    """grad(reduce_axes=...) and a DCT of a type other than 2 are refused by
    JAX 0.10.2 with NotImplementedError; olympus raises its named subclasses."""
    import jax.scipy.fft  # noqa: F401  (the oracle's namespace reaches it)

    import olympus.scipy.fft
    from olympus.autodiff import ReduceAxesError
    from olympus.scipy.fft import DctTypeError

    agree(lambda ox: ox.grad(lambda x: x * 2.0, reduce_axes=("i",))(1.0))
    agree(lambda ox: ox.scipy.fft.dct(ox.jnp.ones(4), type=1))
    with pytest.raises(ReduceAxesError, match="reduce_axes"):
        olympus.grad(lambda x: x * 2.0, reduce_axes=("i",))(1.0)
    with pytest.raises(DctTypeError):
        olympus.scipy.fft.dct(olympus.numpy.ones(4), type=1)


def test_var_method_under_every_transform():
    """`x.var()` is the jnp method on tracers too (a tracer field once shadowed it)."""
    program = lambda ox, x: (  # noqa: E731
        ox.jit(lambda v: v.var(ddof=1))(x),
        ox.grad(lambda v: v.var())(x),
        ox.vmap(lambda v: v.var())(x.reshape(2, 2)),
    )
    agree(program, np.arange(4.0, dtype=np.float32))


@pytest.mark.parametrize(
    "make",
    [
        lambda ox: ox.jnp.ones((2, 3)),
        lambda ox: 2.0,
        lambda ox: ox.jnp.int32(1),
        lambda ox: ox.jnp.ones(3, ox.jnp.bfloat16),
        lambda ox: ox.jnp.zeros((0, 4), bool),
    ],
)
def test_str_and_repr_of_a_type_are_jaxs(make):
    """print(typeof(x)) shows JAX's spelling (float32[2,3], ~ when weak);
    programs keep the IR's short one (f32[2,3])."""
    ours = OLYMPUS.typeof(make(OLYMPUS))
    theirs = JAX.typeof(make(JAX))
    assert (str(ours), repr(ours)) == (str(theirs), repr(theirs))
