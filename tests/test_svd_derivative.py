"""The SVD's forward derivative agrees with JAX's for tall, wide, square,
complex and batched matrices, eagerly, under jit and under vmap (singular
vectors compared through sign-invariant products)."""

import numpy as np
import pytest

from jax_oracle import agree, x64

RNG = np.random.default_rng(7)


def _matrix(shape, complex_=False):
    a = RNG.standard_normal(shape)
    if complex_:
        a = a + 1j * RNG.standard_normal(shape)
    return a


def _svd_tangents(ox, a, t):
    """jvp of the singular values and of sign-invariant products of the
    singular vectors."""

    def f(a):
        u, s, vh = ox.jnp.linalg.svd(a, full_matrices=False)
        return s, u * ox.jnp.conj(u[..., :1, :]), vh * ox.jnp.conj(vh[..., :, :1])

    return ox.jvp(f, (a,), (t,))


@pytest.mark.parametrize(
    "shape, complex_",
    [((4, 3), False), ((3, 4), False), ((3, 3), False), ((4, 3), True), ((3, 4), True)],
)
def test_svd_jvp_agrees_with_jax(shape, complex_):
    a, t = _matrix(shape, complex_), _matrix(shape, complex_)
    with x64():
        agree(_svd_tangents, a, t, rtol=1e-8, atol=1e-10)


def test_svd_jvp_under_jit_agrees_with_jax():
    a, t = _matrix((3, 4), True), _matrix((3, 4), True)
    with x64():
        agree(
            lambda ox, a, t: ox.jit(lambda a, t: _svd_tangents(ox, a, t))(a, t),
            a,
            t,
            rtol=1e-8,
            atol=1e-10,
        )


def test_svd_jvp_under_vmap_agrees_with_jax():
    a, t = _matrix((2, 4, 3)), _matrix((2, 4, 3))
    with x64():
        agree(
            lambda ox, a, t: ox.vmap(lambda a, t: _svd_tangents(ox, a, t))(a, t),
            a,
            t,
            rtol=1e-8,
            atol=1e-10,
        )


def test_svd_jvp_of_a_zero_tangent_is_zero():
    a = _matrix((4, 3))
    with x64():
        agree(
            lambda ox, a: ox.jvp(
                lambda a: ox.jnp.linalg.svd(a)[1], (a,), (ox.jnp.zeros_like(a),)
            ),
            a,
        )
