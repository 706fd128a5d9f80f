"""olympus.extend and olympus.interpreters: a primitive defined only through
JAX's faces (`extend.core.Primitive`, `ad.primitive_jvps`,
`ad.primitive_transposes`, `batching.primitive_batchers`,
`mlir.register_lowering`) works eagerly and under jit, grad and vmap, as the
same definition does under JAX."""

import functools

import numpy as np
import pytest

from jax_oracle import agree

import olympus
import olympus.numpy as jnp
from olympus.extend import core, linear_util, source_info_util
from olympus.interpreters import ad, batching, mlir, partial_eval


@functools.cache
def _faces(name: str):
    if name == "jax":
        import jax
        import jax.extend.core
        from jax.interpreters import ad as jad, batching as jbatching, mlir as jmlir

        return jax.extend.core.Primitive, jax.core.ShapedArray, jad, jbatching, jmlir
    return core.Primitive, core.ShapedArray, ad, batching, mlir


@functools.cache
def primitives(name: str):
    """`cube` (jvp + batching) and `scale2` (linear: jvp + transpose), defined
    the JAX way with the faces of `name` ("jax" or "olympus")."""
    Primitive, ShapedArray, ad_, batching_, mlir_ = _faces(name)

    cube_p = Primitive("cube")
    cube_impl = lambda x: x * x * x  # noqa: E731
    cube_p.def_impl(cube_impl)
    cube_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir_.register_lowering(cube_p, mlir_.lower_fun(cube_impl, multiple_results=False))

    def cube_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return cube_p.bind(x), 3 * x * x * ad_.instantiate_zeros(t)

    ad_.primitive_jvps[cube_p] = cube_jvp
    batching_.primitive_batchers[cube_p] = lambda args, dims: (
        cube_p.bind(*args),
        dims[0],
    )

    scale2_p = Primitive("scale2")
    scale2_impl = lambda x: 2 * x  # noqa: E731
    scale2_p.def_impl(scale2_impl)
    scale2_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    mlir_.register_lowering(
        scale2_p, mlir_.lower_fun(scale2_impl, multiple_results=False)
    )
    ad_.primitive_jvps[scale2_p] = lambda p, t: (
        scale2_p.bind(*p),
        scale2_p.bind(ad_.instantiate_zeros(t[0])),
    )
    ad_.primitive_transposes[scale2_p] = lambda ct, x: [scale2_p.bind(ct)]
    batching_.primitive_batchers[scale2_p] = lambda args, dims: (
        scale2_p.bind(*args),
        dims[0],
    )
    return cube_p, scale2_p


def _program(transform):
    def program(ox, x):
        cube_p, scale2_p = primitives(ox.name)
        f = lambda x: scale2_p.bind(cube_p.bind(x))  # noqa: E731
        return transform(ox, f)(x)

    return program


X = np.array([0.5, -1.0, 2.0], np.float32)


@pytest.mark.parametrize(
    "transform",
    [
        lambda ox, f: f,
        lambda ox, f: ox.jit(f),
        lambda ox, f: ox.grad(lambda x: f(x).sum()),
        lambda ox, f: ox.jit(ox.grad(lambda x: f(x).sum())),
        lambda ox, f: ox.vmap(f),
        lambda ox, f: ox.vmap(ox.grad(lambda x: f(x))),
        lambda ox, f: ox.jit(ox.vmap(ox.vmap(f), in_axes=1)),
    ],
    ids=["eager", "jit", "grad", "jit-grad", "vmap", "vmap-grad", "jit-vmap-vmap"],
)
def test_primitive_defined_through_the_faces_agrees_with_jax(transform):
    x = X.reshape(3, 1) if "in_axes" in str(transform) else X
    agree(_program(transform), x if x.ndim == 1 else np.tile(x, (1, 2)))


def test_primitive_values_eager_jit_vmap_agree():
    cube_p, scale2_p = primitives("olympus")
    f = lambda x: scale2_p.bind(cube_p.bind(x))  # noqa: E731
    expected = 2 * X**3
    np.testing.assert_allclose(f(jnp.asarray(X)), expected, rtol=1e-6)
    np.testing.assert_allclose(olympus.jit(f)(X), expected, rtol=1e-6)
    np.testing.assert_allclose(olympus.vmap(f)(X), expected, rtol=1e-6)
    np.testing.assert_allclose(
        olympus.grad(lambda x: f(x).sum())(X), 6 * X**2, rtol=1e-6
    )


def test_primitive_batchers_reads_back_jax_signature():
    cube_p, _ = primitives("olympus")
    rule = batching.primitive_batchers[cube_p]
    out, dim = rule([jnp.asarray(X)], [0])
    assert dim == 0
    np.testing.assert_allclose(out, X**3, rtol=1e-6)
    # a built-in rule (olympus signature) is offered with JAX's
    from olympus.lax.elementwise import sin_p

    out, dim = batching.primitive_batchers[sin_p]([jnp.asarray(X)], [0])
    np.testing.assert_allclose(out, np.sin(X), rtol=1e-6)
    assert cube_p in batching.primitive_batchers


def test_register_lowering_keeps_an_mlir_builder_rule_as_a_refusal():
    p = core.Primitive("builder_rule")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, lambda ctx, x: [x])  # registering works (equinox does)
    assert p.bind(1.0) == 2.0  # eager calls run the impl
    with pytest.raises(mlir.LoweringRuleError, match="lower_fun"):
        olympus.jit(p.bind)(1.0)


def test_effectful_abstract_eval_refuses_effects():
    p = core.Primitive("effectful")
    p.def_effectful_abstract_eval(lambda x: (x, {"io"}))
    with pytest.raises(core.UnsupportedEffectError, match="effectful"):
        p.abstract_eval(core.ShapedArray((), np.float32))


def test_jaxpr_names_are_olympus_classes():
    closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * 2)(1.0)
    assert isinstance(closed, core.ClosedJaxpr)
    assert isinstance(closed.olympuspr, core.Jaxpr)
    assert any(isinstance(a, core.Literal) for e in closed.eqns for a in e.invars)
    np.testing.assert_allclose(core.jaxpr_as_fn(closed)(0.5)[0], 2 * np.sin(0.5), 1e-6)
    assert core.mapped_aval(4, 0, core.ShapedArray((4, 3), np.float32)).shape == (3,)
    assert core.unmapped_aval(4, 1, core.ShapedArray((3,), np.float32)).shape == (3, 4)
    assert core.valid_jaxtype(1.0) and not core.valid_jaxtype("a")


def test_linear_util_and_trace_to_jaxpr():
    wrapped = linear_util.wrap_init(lambda x, k: x * k, {"k": 3.0})
    assert wrapped.call_wrapped(2.0) == 6.0
    aval = core.ShapedArray((2,), np.float32)
    program, out_avals, consts = partial_eval.trace_to_jaxpr_dynamic(wrapped, [aval])
    assert out_avals == [aval] and consts == []
    assert [e.primitive.name for e in program.eqns] == ["mul"]


def test_source_info_is_the_users_line():
    assert "test_extend.py" in str(source_info_util.current())
    with source_info_util.user_context(None):
        pass


def test_closed_jaxpr_names_and_helpers_as_jax():
    closed = olympus.make_olympuspr(lambda x: olympus.jit(jnp.sin)(x) * 2)(1.0)
    assert closed.jaxpr is closed.olympuspr  # JAX's attribute name
    assert isinstance(closed.in_avals[0], core.AbstractValue)
    aval = core.ShapedArray((2,), np.float32, weak_type=True)
    assert core.raise_to_shaped(aval) is aval
    assert not core.raise_to_shaped(aval, weak_type=False).weak_type
    pjit_eqn = closed.eqns[0]
    assert [len(p.eqns) for p in core.jaxprs_in_params(pjit_eqn.params)] == [1]
    assert core.subjaxprs(closed.jaxpr) == core.jaxprs_in_params(pjit_eqn.params)


def test_opaque_trace_state_tells_traces_apart():
    outside = core.get_opaque_trace_state(convention="flax")
    assert outside == core.get_opaque_trace_state()
    inside = []
    olympus.jit(lambda x: inside.append(core.get_opaque_trace_state()) or x)(1.0)
    assert inside[0] != outside


def test_partial_val_known_inputs_evaluate():
    pvals = [partial_eval.PartialVal.known(2.0), partial_eval.PartialVal.known(3.0)]
    wrapped = linear_util.wrap_init(lambda a, b: (a * b, a + b))
    _, outs, consts = partial_eval.trace_to_jaxpr_nounits(wrapped, pvals)
    assert [o.const for o in outs] == [6.0, 5.0] and all(o.is_known() for o in outs)
    unknown = partial_eval.PartialVal.unknown(core.ShapedArray((), np.float32))
    with pytest.raises(partial_eval.UnknownInputsError, match="eval_shape"):
        partial_eval.trace_to_jaxpr_nounits(wrapped, [unknown, pvals[1]])


def test_register_exclusion_records_the_path():
    source_info_util.register_exclusion("/some/library")
    assert "/some/library" in source_info_util.excluded_paths


class _Subarray(np.ndarray):
    """An np.ndarray subclass a library registers as an array type."""


def test_xla_type_tables_record_types():
    from olympus.interpreters import xla

    xla.canonicalize_dtype_handlers[_Subarray] = xla.canonicalize_dtype_handlers[
        np.ndarray
    ]
    assert core.pytype_aval_mappings is xla.pytype_aval_mappings
    x = np.ones(3, np.float64).view(_Subarray)
    assert xla.canonicalize_dtype_handlers[_Subarray](x).dtype == np.float32
    np.testing.assert_allclose(olympus.jit(lambda v: v * 2)(x), 2 * np.ones(3))
    with pytest.raises(xla.ArrayTypeRegistrationError, match="must be a type"):
        xla.pytype_aval_mappings["Proxy"] = lambda v: None
