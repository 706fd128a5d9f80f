"""The last signature gaps against JAX 0.10.2 (issue 27), closed: each
parameter is checked through the oracle (`jax_oracle.agree`), JAX's behaviour
being the spec, including where JAX refuses a value."""

from __future__ import annotations

import numpy as np
import pytest

from jax_oracle import agree

F32 = np.float32
I8 = np.array([100, -100], np.int8)
M = np.arange(6, dtype=F32).reshape(2, 3)


# ---- keyword names: JAX's parameter names, so keyword calls work -------------------
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.switch(
            1, [lambda v: v + 1.0, lambda v: v * 2.0], operand=F32(3)
        ),
        lambda ox: ox.jit(
            lambda i: ox.lax.switch(i, [lambda v: v + 1.0, lambda v: -v], operand=M)
        )(0),
        lambda ox: ox.lax.switch(
            0, [lambda v: v], F32(1), operand=F32(2)
        ),  # both: raises
        lambda ox: ox.jnp.broadcast_to(array=M[0], shape=(2, 3)),
        lambda ox: ox.jnp.empty_like(prototype=M).shape,
        lambda ox: ox.jnp.array(object=[1, 2], dtype=np.int8),
        lambda ox: ox.jnp.array(M, order="K"),
        lambda ox: ox.jnp.array(M, order=None),
        lambda ox: ox.jnp.array(M, order="F"),
        lambda ox: ox.jnp.asarray(a=[1.0, 2.0]),
        lambda ox: ox.jnp.asarray(M, None, "K"),
        lambda ox: ox.jnp.asarray(M, order="C"),
    ],
)
def test_jax_keyword_names(program):
    agree(program)


def test_an_order_other_than_k_is_a_named_not_implemented_error():
    import olympus.numpy as jnp
    from olympus.numpy.core import ArrayOrderError

    assert issubclass(ArrayOrderError, NotImplementedError)
    with pytest.raises(ArrayOrderError, match="order='F'"):
        jnp.array([1.0], order="F")
    with pytest.raises(ArrayOrderError, match="jnp.asarray"):
        jnp.asarray([1.0], order="A")


def test_reshard_takes_xs_by_keyword():
    def program(ox):
        with ox.set_mesh(ox.make_mesh((1,), ("x",))):
            out = ox.reshard(xs={"a": ox.jnp.arange(2.0)}, out_shardings=ox.P("x"))
        return out["a"], tuple(out["a"].sharding.spec)

    agree(program)


# ---- lax: mul(out_dtype=), dot(dimension_numbers=), conv_transpose ------------------
@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.lax.mul(I8, I8, out_dtype=np.int32),  # no int8 overflow
        lambda ox: ox.lax.mul(I8, I8),
        lambda ox: ox.lax.mul(2.0, 3.0, out_dtype=np.float16),  # weak stays weak
        lambda ox: ox.lax.mul(F32(1.5), F32(3), out_dtype=np.int32),  # cast first
        lambda ox: ox.lax.mul(np.ones(2, F32), 3.0, out_dtype=ox.jnp.bfloat16),
        lambda ox: ox.jit(lambda a: ox.lax.mul(a, a, out_dtype=np.int32))(I8),
        lambda ox: ox.vmap(lambda a: ox.lax.mul(a, a, out_dtype=np.int16))(I8),
        lambda ox: ox.grad(
            lambda v: ox.lax.mul(v, v, out_dtype=np.float16).astype(F32)
        )(F32(3)),
        lambda ox: ox.lax.dot(M, M, dimension_numbers=(((1,), (1,)), ((0,), (0,)))),
        lambda ox: ox.lax.dot(M, M, dimension_numbers=(((0,), (0,)), ((), ()))),
        lambda ox: ox.lax.dot(M, M.T),
        lambda ox: ox.lax.dot(M[None], M.T),  # rank 3 needs dimension_numbers
        lambda ox: ox.jit(
            lambda a: ox.lax.dot(a, a, dimension_numbers=(((1,), (1,)), ((), ())))
        )(M),
    ],
)
def test_lax_parameters(program):
    agree(program)


LHS = np.random.default_rng(0).normal(size=(1, 5, 5, 2)).astype(F32)
RHS = np.random.default_rng(1).normal(size=(3, 3, 2, 4)).astype(F32)


@pytest.mark.parametrize("padding", [((1, 1), (0, 2)), "SAME", "VALID"], ids=str)
@pytest.mark.parametrize("consistent", [False, True])
def test_conv_transpose_use_consistent_padding(padding, consistent):
    agree(
        lambda ox: ox.lax.conv_transpose(
            LHS, RHS, (2, 2), padding, use_consistent_padding=consistent
        ),
        rtol=1e-5,
        atol=1e-5,
    )
    agree(
        lambda ox: ox.lax.conv_transpose(
            LHS, RHS, (2, 1), padding, rhs_dilation=(2, 1),
            use_consistent_padding=consistent,
        ),
        rtol=1e-5,
        atol=1e-5,
    )  # fmt: skip


def test_checkpoint_concrete_is_refused_as_jax_refuses_it():
    from olympus.lax.checkpoint import ConcreteRemovedError

    agree(lambda ox: ox.checkpoint(lambda v: v * 2, concrete=False)(F32(1)))
    agree(lambda ox: ox.remat(lambda v: v * 2, concrete=True)(F32(1)))
    agree(lambda ox: ox.grad(ox.checkpoint(lambda v: v * 2))(F32(1)))
    import olympus

    with pytest.raises(ConcreteRemovedError, match="static_argnums"):
        olympus.checkpoint(lambda v: v, concrete=True)
    assert issubclass(ConcreteRemovedError, NotImplementedError)


def test_make_array_from_single_device_arrays_dtype():
    def program(ox, dtype):
        mesh = ox.make_mesh((1,), ("x",))
        s = ox.sharding.NamedSharding(mesh, ox.sharding.PartitionSpec("x"))
        pieces = [ox.jnp.ones(2, F32)]
        return ox.make_array_from_single_device_arrays((2,), s, pieces, dtype=dtype)

    for dtype in (None, F32, np.int32):
        agree(program, dtype)


# ---- pmap: static_broadcasted_argnums, axis_size, backend, donate_argnums ------------
X = np.arange(6.0, dtype=F32).reshape(1, 6)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.pmap(lambda x, n: x * n, static_broadcasted_argnums=1)(X, 3),
        lambda ox: ox.pmap(
            lambda n, x: x * n, static_broadcasted_argnums=0, in_axes=(None, 0)
        )(3, X),
        lambda ox: ox.pmap(lambda x: x * 2, axis_size=1, backend="cpu")(X),
        lambda ox: ox.pmap(lambda x: x * 2, axis_size=2)(X),  # raises in both
        lambda ox: ox.pmap(lambda x: x * 2, backend="gpu")(X),  # no such backend
    ],
)
def test_pmap_parameters(program):
    agree(program)


def test_pmap_donates_and_reuses_its_compilation_per_static_value():
    def program(ox):
        x = ox.jnp.asarray(X)
        y = ox.pmap(lambda v: v + 1, donate_argnums=0)(x)
        return y, x.is_deleted()

    agree(program)
    import olympus

    traces = []

    def scaled(x, n):
        traces.append(n)
        return x * n

    f = olympus.pmap(scaled, static_broadcasted_argnums=1)
    for n in (2, 2, 3):
        np.testing.assert_array_equal(f(X, n), X * n)
    assert traces == [2, 3]


# ---- NumPy's out=: None is taken, an array is refused (NotImplementedError) ---------
V = np.array([1.5, -2.25, np.nan, np.inf], F32)
IDX, CHOICES = np.array([0, 1, 0]), [np.array([1, 2, 3]), np.array([10, 20, 30])]


@pytest.mark.parametrize("out", [None, np.zeros(4, F32)], ids=["None", "array"])
@pytest.mark.parametrize(
    "program",
    [
        lambda ox, o: ox.jnp.around(V, 1, o),
        lambda ox, o: ox.jnp.round(V, out=o),
        lambda ox, o: ox.jnp.choose(IDX, CHOICES, o, mode="clip"),
        lambda ox, o: ox.jnp.compress(np.array([True, False, True]), IDX, out=o),
        lambda ox, o: ox.jnp.einsum("i,i", V[:2], V[:2], out=o),
        lambda ox, o: ox.jnp.isneginf(V, o),
        lambda ox, o: ox.jnp.isposinf(V, out=o),
        lambda ox, o: ox.jnp.modf(V, o),
        lambda ox, o: ox.jnp.nanargmax(V, 0, o, True),
        lambda ox, o: ox.jnp.nanargmin(V, None, o),
        lambda ox, o: ox.jnp.nancumprod(V, 0, None, o),
        lambda ox, o: ox.jnp.nancumsum(V, out=o),
        lambda ox, o: ox.jnp.ptp(V[:2], 0, o, True),
    ],
)
def test_out_is_taken_as_none_only(program, out):
    agree(program, out)


def test_out_refusal_is_named():
    import olympus.numpy as jnp
    from olympus.numpy.core import OutArgumentError

    assert issubclass(OutArgumentError, NotImplementedError)
    with pytest.raises(OutArgumentError, match="jnp.ptp: the out= argument"):
        jnp.ptp(V, out=V)
    with pytest.raises(OutArgumentError, match="jnp.sum"):
        jnp.sum(V, out=V)


# ---- jnp.ufunc objects: JAX's binary ufuncs (and negative) with their methods --------
UFUNCS = """add multiply subtract maximum minimum bitwise_and bitwise_or bitwise_xor
    logical_and logical_or logical_xor logaddexp logaddexp2""".split()
INTS = np.array([[3, 1, 4], [1, 5, 9]], np.int32)
FLOATS = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], F32)


def _operand(name):
    return FLOATS if name.startswith("logaddexp") else INTS


# Every method of one ufunc per kind of implementation (a reduction, a loop, a
# scatter); the rest get their attributes, call, reduce and accumulate.
FULL = ["add", "subtract", "maximum", "bitwise_xor", "logical_or", "logaddexp2"]


@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_objects_and_their_methods(name):
    x = _operand(name)

    def program(ox):
        f = getattr(ox.jnp, name)
        common = (
            (type(f).__name__, f.nin, f.nout, f.nargs, f.identity, f.__name__),
            f(x, x[0], out=None, where=None),
            f.reduce(x),
            f.accumulate(x, axis=1),
        )
        if name not in FULL:
            return common
        return common + (
            f.reduce(x, axis=1, keepdims=True),
            f.reduce(x, axis=None),
            f.outer(x[0], x[1, :2]),
            f.at(x, (np.array([0, 0]), np.array([1, 1])), x[1, :2], inplace=False),
            f.reduceat(x, np.array([0, 2]), axis=1),
            ox.jit(lambda v: (f(v, v), f.reduce(v), f.accumulate(v)))(x),
        )

    agree(program, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jnp.add(INTS, 1, out=INTS),
        lambda ox: ox.jnp.add(INTS, 1, where=INTS > 1),
        lambda ox: ox.jnp.negative(INTS, out=None),
        lambda ox: ox.jnp.negative(INTS, where=INTS > 1),
        lambda ox: (ox.jnp.negative.nin, ox.jnp.negative.identity),
        lambda ox: ox.jnp.negative.reduce(INTS),  # unary: raises
        lambda ox: ox.jnp.add.at(INTS, 0, 1),  # inplace: raises
        lambda ox: ox.jnp.add.reduce(INTS, out=INTS),
        lambda ox: ox.jnp.add.reduce(INTS, where=INTS > 1),
        lambda ox: ox.jnp.maximum.reduce(INTS, where=INTS > 1),  # no identity
        lambda ox: ox.jnp.maximum.reduce(INTS, where=INTS > 1, initial=0),
        lambda ox: ox.jnp.multiply.reduce(INTS, axis=1, initial=2),
        lambda ox: ox.jnp.add.reduce(INTS, dtype=F32),
        lambda ox: ox.jnp.add.reduce(np.ones((0, 2), F32)),
        lambda ox: ox.jnp.subtract.reduce(np.ones((0, 2), F32)),  # no identity
        lambda ox: ox.jnp.add.accumulate(np.array([True, True, False])),
        lambda ox: ox.jnp.add.at(np.array([True, False]), 1, True, inplace=False),
        lambda ox: ox.jnp.add([1], 2),  # a list: refused as JAX refuses it
        lambda ox: ox.vmap(ox.jnp.add.reduce)(INTS),
        lambda ox: ox.grad(lambda v: ox.jnp.multiply.reduce(v))(FLOATS[0]),
        lambda ox: ox.grad(lambda v: ox.jnp.maximum.accumulate(v).sum())(FLOATS[0]),
    ],
)
def test_ufunc_edges(program):
    agree(program)


def test_frompyfunc():
    def program(ox):
        hyp = ox.jnp.frompyfunc(lambda a, b: ox.jnp.sqrt(a * a + b * b), 2, 1)
        x = np.array([3.0, 4.0, 12.0], F32)
        add = ox.jnp.frompyfunc(lambda a, b: a + b, nin=2, nout=1, identity=0)
        return (
            type(hyp).__name__,
            hyp(x, 4.0),
            hyp.reduce(x),
            hyp.accumulate(x),
            hyp.outer(x[:2], x),
            add.reduce(INTS, axis=1),
            add.at(INTS[0], np.array([0, 0]), 5, inplace=False),
        )

    agree(program, rtol=1e-6, atol=1e-6)


def test_ufunc_refusals_are_named():
    import olympus.numpy as jnp
    from olympus.numpy.ufunc_objects import UfuncArgumentError

    assert issubclass(UfuncArgumentError, NotImplementedError)
    with pytest.raises(UfuncArgumentError, match="where="):
        jnp.add(1, 2, where=True)
    with pytest.raises(UfuncArgumentError, match="inplace=False"):
        jnp.add.at(jnp.zeros(2), 0, 1.0)
    assert repr(jnp.add) == "<jnp.ufunc 'add'>" and isinstance(jnp.add, jnp.ufunc)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.jit(ox.jnp.add)(FLOATS, 1.0),
        lambda ox: ox.vmap(ox.jnp.multiply)(FLOATS, FLOATS),
        lambda ox: ox.grad(lambda v: ox.jnp.logaddexp(v, 1.0))(2.0),
        lambda ox: ox.jit(ox.jnp.negative)(FLOATS),
        lambda ox: ox.jit(ox.jnp.add.reduce, static_argnames="axis")(FLOATS, axis=1),
        lambda ox: ox.tree_util.tree_map(ox.jnp.add, [FLOATS], [FLOATS]),
        lambda ox: ox.jnp.add.outer(2.0, FLOATS),
    ],
)
def test_ufunc_objects_under_transformations(program):
    agree(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda ox: ox.checkpoint(lambda v: v * 2)(1.0),  # a weak Array, not a float
        lambda ox: ox.checkpoint(lambda v: (v + 1, np.ones(2)))(1.0),
        lambda ox: ox.remat(lambda v: {"a": v + 1})(F32(2)),
        lambda ox: ox.checkpoint(lambda v, n: v * n, static_argnums=1)(2.0, 3),
    ],
)
def test_eager_checkpoint_returns_arrays(program):
    agree(program)
