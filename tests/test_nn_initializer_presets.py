"""The glorot/xavier, lecun and he/kaiming initializers (one variance_scaling
preset each, issue 30) draw JAX's numbers for the same key, axes and dtype."""

import numpy as np
import pytest

from jax_oracle import agree

PRESETS = """glorot_uniform glorot_normal xavier_uniform xavier_normal lecun_uniform
    lecun_normal he_uniform he_normal kaiming_uniform kaiming_normal""".split()


@pytest.mark.parametrize("name", PRESETS)
def test_preset_draws_jax_numbers(name):
    def program(ox, seed):
        make = getattr(ox.nn.initializers, name)
        init = make(in_axis=0, out_axis=1, batch_axis=())
        return init(ox.random.key(seed), (5, 4, 2), ox.jnp.float32)

    agree(program, 3, rtol=1e-6)


def test_preset_names_and_defaults():
    from olympus.nn import initializers

    assert initializers.he_normal.__name__ == "he_normal"
    assert initializers.kaiming_normal is initializers.he_normal
    w = initializers.lecun_normal()(np.array([0, 1], np.uint32), (300, 200))
    assert w.shape == (300, 200) and abs(float(w.std()) - (1 / 300) ** 0.5) < 3e-3
