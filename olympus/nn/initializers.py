"""Parameter initialisers, as in JAX: each factory returns
`init(key, shape, dtype=float32) -> array`.

    w = initializers.glorot_normal()(random.key(0), (784, 256))

The variance-scaling family draws with variance scale / fan, where the fans
count the input and output axes times the receptive field (the other axes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

import olympus.numpy as jnp
from olympus import lax, random
from olympus.ir import dtypes

# The standard deviation of a unit normal truncated to [-2, 2]: dividing by it
# gives a truncated normal of the requested variance.
_TRUNCATED_STDDEV = 0.87962566103423978


class Initializer(Protocol):
    """What every factory here returns (JAX's type for annotating one)."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = ...) -> Any: ...


def _dtype(dtype):
    return dtypes.canonicalize_dtype(dtype)


def zeros(key, shape: Sequence[int], dtype=jnp.float32):
    return jnp.zeros(tuple(shape), _dtype(dtype))


def ones(key, shape: Sequence[int], dtype=jnp.float32):
    return jnp.ones(tuple(shape), _dtype(dtype))


def constant(value, dtype=jnp.float32):
    def init(key, shape, dtype=dtype):
        return jnp.full(tuple(shape), value, _dtype(dtype))

    return init


def uniform(scale: float = 1e-2, dtype=jnp.float32):
    """Uniform on [0, scale)."""

    def init(key, shape, dtype=dtype):
        return random.uniform(key, tuple(shape), _dtype(dtype), 0.0, scale)

    return init


def normal(stddev: float = 1e-2, dtype=jnp.float32):
    def init(key, shape, dtype=dtype):
        return lax.mul(
            random.normal(key, tuple(shape), _dtype(dtype)),
            np.array(stddev, _dtype(dtype))[()],
        )

    return init


def truncated_normal(
    stddev: float = 1e-2, dtype=jnp.float32, lower: float = -2.0, upper: float = 2.0
):
    """stddev times a unit normal truncated to [lower, upper]."""

    def init(key, shape, dtype=dtype):
        z = random.truncated_normal(key, lower, upper, tuple(shape), _dtype(dtype))
        return lax.mul(z, np.array(stddev, _dtype(dtype))[()])

    return init


def _fans(shape: tuple, in_axis, out_axis, batch_axis) -> tuple[float, float]:
    if len(shape) < 2:
        raise ValueError(
            f"variance_scaling needs a shape of rank >= 2 to find fans, got {shape}"
        )
    in_axes = {
        a % len(shape) for a in ((in_axis,) if isinstance(in_axis, int) else in_axis)
    }
    out_axes = {
        a % len(shape) for a in ((out_axis,) if isinstance(out_axis, int) else out_axis)
    }
    batch_axes = {
        a % len(shape)
        for a in ((batch_axis,) if isinstance(batch_axis, int) else batch_axis)
    }
    receptive = math.prod(
        d for i, d in enumerate(shape) if i not in in_axes | out_axes | batch_axes
    )
    fan_in = math.prod(shape[i] for i in in_axes) * receptive
    fan_out = math.prod(shape[i] for i in out_axes) * receptive
    return fan_in, fan_out


def variance_scaling(
    scale: float,
    mode: str,
    distribution: str,
    in_axis=-2,
    out_axis=-1,
    batch_axis=(),
    dtype=jnp.float32,
):
    """Samples with variance scale / n, n the fan_in, fan_out or their mean;
    distribution "truncated_normal", "normal" or "uniform"."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(
            f"variance_scaling: mode must be fan_in, fan_out or fan_avg, got {mode!r}"
        )
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling: unknown distribution {distribution!r}")

    def init(key, shape, dtype=dtype):
        shape, dtype = tuple(shape), _dtype(dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[
            mode
        ]
        variance = scale / n
        if distribution == "truncated_normal":
            return truncated_normal(math.sqrt(variance) / _TRUNCATED_STDDEV)(
                key, shape, dtype
            )
        if distribution == "normal":
            return normal(math.sqrt(variance))(key, shape, dtype)
        limit = math.sqrt(3 * variance)
        return random.uniform(key, shape, dtype, -limit, limit)

    return init


def _variance_scaling_preset(name: str, scale: float, mode: str, distribution: str):
    """A named variance_scaling with scale, mode and distribution fixed: JAX's
    glorot (Xavier), lecun and he (Kaiming) initializer constructors."""

    def preset(in_axis=-2, out_axis=-1, batch_axis=(), dtype=jnp.float32):
        return variance_scaling(
            scale, mode, distribution, in_axis, out_axis, batch_axis, dtype
        )

    preset.__name__ = preset.__qualname__ = name
    preset.__doc__ = (
        f"variance_scaling({scale}, {mode!r}, {distribution!r}) over the given "
        "axes: an initializer `init(key, shape, dtype)`."
    )
    return preset


glorot_uniform = _variance_scaling_preset("glorot_uniform", 1.0, "fan_avg", "uniform")
glorot_normal = _variance_scaling_preset(
    "glorot_normal", 1.0, "fan_avg", "truncated_normal"
)
lecun_uniform = _variance_scaling_preset("lecun_uniform", 1.0, "fan_in", "uniform")
lecun_normal = _variance_scaling_preset(
    "lecun_normal", 1.0, "fan_in", "truncated_normal"
)
he_uniform = _variance_scaling_preset("he_uniform", 2.0, "fan_in", "uniform")
he_normal = _variance_scaling_preset("he_normal", 2.0, "fan_in", "truncated_normal")


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype=jnp.float32):
    """A (scaled) matrix with orthonormal rows or columns, from the QR of a
    Gaussian matrix with R's diagonal signs folded into Q (uniform over the
    orthogonal group)."""

    def init(key, shape, dtype=dtype):
        shape, dtype = tuple(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"orthogonal needs a shape of rank >= 2, got {shape}")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        matrix_shape = (n_rows, n_cols) if n_rows >= n_cols else (n_cols, n_rows)
        a = random.normal(key, matrix_shape, dtype)
        q, r = jnp.linalg.qr(a)
        q = q * jnp.sign(_diagonal(r))  # broadcasts over rows
        if n_rows < n_cols:
            q = jnp.transpose(q)
        q = jnp.reshape(
            q,
            (
                *[d for i, d in enumerate(shape) if i != column_axis % len(shape)],
                n_cols,
            ),
        )
        q = jnp.moveaxis(q, -1, column_axis)
        return lax.mul(q, np.array(scale, dtype)[()])

    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype=jnp.float32):
    """A convolution kernel (spatial dims first, then in and out channels) that
    is zero except at the spatial centre, which holds an `orthogonal` matrix:
    the initial convolution preserves norms (Xiao et al., 2018)."""

    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(
                f"delta_orthogonal needs a kernel of rank 3, 4 or 5 (1-3 spatial "
                f"dims, then in and out channels), got shape {shape}"
            )
        if shape[-1] < shape[-2]:
            raise ValueError(
                f"delta_orthogonal needs in channels <= out channels, got "
                f"{shape[-2]} > {shape[-1]}"
            )
        centre = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        middle = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, _dtype(dtype)).at[middle].set(centre)

    return init


def _diagonal(r):
    from olympus.lax import linalg as lax_linalg

    return lax_linalg.diagonal(r)
