"""Neural-network layers as pairs of pure functions, with JAX's stax API.

A layer is `(init_fun, apply_fun)`: `init_fun(rng, input_shape)` returns
`(output_shape, params)`, and `apply_fun(params, inputs, **kwargs)` the
outputs (`kwargs` may carry `rng` for random layers such as Dropout).
Combinators (`serial`, `parallel`) build a layer out of layers, so a model is
a layer too.

    >>> from olympus.example_libraries import stax
    >>> init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
    >>> out_shape, params = init_fun(olympus.random.PRNGKey(0), (-1, 3))
    >>> out_shape, apply_fun(params, jnp.ones((5, 3))).shape
    ((-1, 2), (5, 2))

Shapes may hold -1 for a size known only when the layer is applied (a batch).
Convolutions and pooling take NHWC inputs by default, as in JAX.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

import olympus.numpy as jnp
from olympus import lax, random
from olympus.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from olympus.nn.initializers import glorot_normal, normal, ones, zeros

# Default initializers, made once (as JAX's defaults, which are made at definition).
_DENSE_W_INIT = glorot_normal()
_DENSE_B_INIT = normal()
_CONV_BIAS_INIT = normal(1e-6)


# ---- dense and convolutional layers ----------------------------------------------
def Dense(out_dim: int, W_init=_DENSE_W_INIT, b_init=_DENSE_B_INIT):
    """A fully connected layer: inputs @ W + b over the last axis."""

    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W = W_init(k1, (input_shape[-1], out_dim))
        b = b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _conv_dimension_numbers(specs) -> lax.ConvDimensionNumbers:
    """Layout strings such as ('NHWC', 'HWIO', 'NHWC') as axis positions."""
    return lax.conv_dimension_numbers(None, None, specs)


def _window_pads(padding, sizes, windows, strides) -> tuple:
    """'SAME' / 'VALID' / explicit (lo, hi) pairs as explicit pairs."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    return tuple(lax.padtype_to_pads(sizes, windows, strides, padding))


def _window_out(size: int, window: int, stride: int, pad: tuple) -> int:
    """A windowed axis' output length; -1 (unknown) stays unknown."""
    if size < 0:
        return -1
    return (size + pad[0] + pad[1] - window) // stride + 1


def _conv_sizes(padding, sizes, windows, strides) -> list:
    pads = _window_pads(padding, sizes, windows, strides)
    return [_window_out(*a) for a in zip(sizes, windows, strides, pads)]


def _conv(padding, inputs, W, strides, dn):
    sizes = [inputs.shape[d] for d in dn.lhs_spec[2:]]
    windows = [W.shape[d] for d in dn.rhs_spec[2:]]
    pads = _window_pads(padding, sizes, windows, strides)
    return lax.conv_general_dilated(inputs, W, strides, pads, dimension_numbers=dn)


def _conv_transpose_sizes(padding, sizes, windows, strides) -> list:
    extra = padding.upper() == "VALID"
    return [
        -1 if n < 0 else n * s + (max(w - s, 0) if extra else 0)
        for n, w, s in zip(sizes, windows, strides)
    ]


def _conv_transpose(padding, inputs, W, strides, dn):
    if not isinstance(padding, str):
        raise TypeError("a transposed convolution's padding must be 'SAME' or 'VALID'")
    return lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dn)


def _general_conv(name: str, output_sizes, conv, doc: str):
    """GeneralConv or GeneralConvTranspose: one signature, one kernel and bias
    initialised alike; `output_sizes(padding, sizes, windows, strides)` gives
    the output's spatial sizes and `conv(padding, inputs, W, strides, dn)`
    computes it."""

    def layer(
        dimension_numbers,
        out_chan: int,
        filter_shape,
        strides=None,
        padding="VALID",
        W_init=None,
        b_init=_CONV_BIAS_INIT,
    ):
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        dn = _conv_dimension_numbers(dimension_numbers)
        strides = tuple(strides or (1,) * len(filter_shape))
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            kernel_shape = _kernel_shape(
                rhs_spec, out_chan, filter_shape, input_shape[lhs_spec.index("C")]
            )
            sizes = [input_shape[d] for d in dn.lhs_spec[2:]]
            windows = [kernel_shape[d] for d in dn.rhs_spec[2:]]
            spatial = output_sizes(padding, sizes, windows, strides)
            output_shape = _in_layout(
                out_spec, input_shape[dn.lhs_spec[0]], out_chan, spatial, rhs_spec
            )
            bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
            k1, k2 = random.split(rng)
            return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            return conv(padding, inputs, W, strides, dn) + b

        return init_fun, apply_fun

    layer.__name__ = layer.__qualname__ = name
    layer.__doc__ = doc
    return layer


def _kernel_shape(rhs_spec: str, out_chan: int, filter_shape, in_chan: int) -> tuple:
    """The kernel's shape in its layout: O and I sizes, spatial sizes in order."""
    spatial = iter(filter_shape)
    sizes = {"O": out_chan, "I": in_chan}
    return tuple(sizes[c] if c in sizes else next(spatial) for c in rhs_spec)


def _in_layout(spec: str, batch: int, chan: int, spatial, rhs_spec: str) -> tuple:
    """An output shape from its batch, channel and spatial sizes, laid out by `spec`."""
    spatial_letters = [c for c in rhs_spec if c not in "OI"]
    sizes = {"N": batch, "C": chan, **dict(zip(spatial_letters, spatial))}
    return tuple(sizes[c] for c in spec)


GeneralConv = _general_conv(
    "GeneralConv",
    _conv_sizes,
    _conv,
    "A convolution in any layout, given as strings ('NHWC', 'HWIO', 'NHWC').",
)
GeneralConvTranspose = _general_conv(
    "GeneralConvTranspose",
    _conv_transpose_sizes,
    _conv_transpose,
    """A transposed convolution (the gradient of a strided one): it upsamples by `strides`.

    Computed as a stride-1 convolution of the input dilated by `strides`, as
    JAX's `lax.conv_transpose` with `transpose_kernel=False` does; 'SAME' gives
    size * stride outputs, 'VALID' size * stride + max(window - stride, 0).
    """,
)


def _fixed_layout(name: str, general, layout: tuple, doc: str):
    """`general` (GeneralConv or GeneralConvTranspose) with its dimension
    numbers fixed to `layout`, as JAX's functools.partial of it; a function,
    so that it has its own name, docstring and signature (general's, less
    dimension_numbers)."""

    def layer(*args, **kwargs):
        return general(layout, *args, **kwargs)

    signature = inspect.signature(general)
    rest = list(signature.parameters.values())[1:]
    layer.__signature__ = signature.replace(parameters=rest)
    layer.__name__ = layer.__qualname__ = name
    layer.__doc__ = doc
    return layer


_NHWC, _NHC = ("NHWC", "HWIO", "NHWC"), ("NHC", "HIO", "NHC")
Conv = _fixed_layout(
    "Conv", GeneralConv, _NHWC, "A 2-d convolution on NHWC inputs with an HWIO kernel."
)
Conv1DTranspose = _fixed_layout(
    "Conv1DTranspose",
    GeneralConvTranspose,
    _NHC,
    "A 1-d transposed convolution on NHC inputs with an HIO kernel.",
)
ConvTranspose = _fixed_layout(
    "ConvTranspose",
    GeneralConvTranspose,
    _NHWC,
    "A 2-d transposed convolution on NHWC inputs with an HWIO kernel.",
)


def BatchNorm(
    axis=(0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init=zeros,
    gamma_init=ones,
):
    """Normalises over `axis` with the batch's own statistics, then scales and shifts.

    Like JAX's stax.BatchNorm it keeps no running averages: apply_fun always
    uses the statistics of the inputs it is given.
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        kept = tuple(None if i in axes else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axes, epsilon=epsilon)
        if scale:
            z = z * gamma[kept]
        if center:
            z = z + beta[kept]
        return z

    return init_fun, apply_fun


# ---- elementwise layers ----------------------------------------------------------
def elementwise(fun, **fun_kwargs):
    """A parameter-free layer applying `fun(inputs, **fun_kwargs)`."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---- pooling ---------------------------------------------------------------------
def _pool_axes(window_shape, strides, spec):
    """Windows and strides over all axes: size 1 on the batch and channel axes."""
    if spec is None:
        non_spatial = (0, len(window_shape) + 1)  # NHWC
    else:
        non_spatial = (spec.index("N"), spec.index("C"))
    window, stride = list(window_shape), list(strides)
    for i in sorted(non_spatial):
        window.insert(i, 1)
        stride.insert(i, 1)
    return tuple(window), tuple(stride)


def _window_counts(shape, window, stride, pads) -> np.ndarray:
    """How many real (unpadded) entries each window holds, as a NumPy constant.

    The count is separable (a product over axes), so it is made from one short
    vector per axis at trace time, not by pooling an array of ones in XLA.
    """
    counts = np.ones((), np.int64)
    for n, w, s, (lo, hi) in zip(shape, window, stride, pads):
        starts = np.arange((n + lo + hi - w) // s + 1) * s - lo
        per_axis = np.minimum(starts + w, n) - np.maximum(starts, 0)
        counts = np.multiply.outer(
            counts, per_axis if w > 1 or lo or hi else per_axis[:1]
        )
    return counts


def _pooling_layer(reduce_window, rescale_by_window: bool):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        strides = tuple(strides or (1,) * len(window_shape))
        window, stride = _pool_axes(tuple(window_shape), strides, spec)

        def init_fun(rng, input_shape):
            pads = _window_pads(
                padding, [max(n, 1) for n in input_shape], window, stride
            )
            out = tuple(_window_out(*a) for a in zip(input_shape, window, stride, pads))
            return out, ()

        def apply_fun(params, inputs, **kwargs):
            pads = _window_pads(padding, inputs.shape, window, stride)
            out = reduce_window(inputs, window, stride, pads)
            if not rescale_by_window:
                return out
            counts = _window_counts(inputs.shape, window, stride, pads)
            return out / counts.astype(out.dtype)

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.reduce_window_max, False)
MaxPool.__doc__ = "Max pooling over NHWC inputs (or the layout `spec` names)."
SumPool = _pooling_layer(lax.reduce_window_sum, False)
SumPool.__doc__ = "Sum pooling over NHWC inputs (or the layout `spec` names)."
AvgPool = _pooling_layer(lax.reduce_window_sum, True)
AvgPool.__doc__ = "Average pooling over NHWC inputs; padded entries are not counted."


# ---- shape and wiring layers -----------------------------------------------------
def _flatten():
    def init_fun(rng, input_shape):
        rest = input_shape[1:]
        size = -1 if any(d < 0 for d in rest) else math.prod(rest)
        return (input_shape[0], size), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()  # a layer, not a constructor (JAX's stax.Flatten)


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return init_fun, apply_fun


Identity = _identity()  # a layer, not a constructor (JAX's stax.Identity)


def FanOut(num: int):
    """A layer whose output is `num` copies of its input (for `parallel`)."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()  # a layer: sums a list of inputs (JAX's stax.FanInSum)


def FanInConcat(axis: int = -1):
    """A layer concatenating a list of inputs along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        sizes = [shape[ax] for shape in input_shape]
        joined = -1 if any(n < 0 for n in sizes) else sum(sizes)
        first = tuple(input_shape[0])
        return first[:ax] + (joined,) + first[ax + 1 :], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train"):
    """Keeps each entry with probability `rate` and scales it by 1 / rate (in training).

    As in JAX's stax, `rate` is the probability of keeping an entry, and
    apply_fun needs `rng=` a key; in any mode but 'train' it is the identity.
    """

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout's apply_fun needs a PRNG key: call it as "
                "apply_fun(params, inputs, rng=key)"
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


# ---- combinators -----------------------------------------------------------------
def serial(*layers):
    """Layers one after another; `rng=` given to apply_fun is split among them."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = (
            random.split(rng, len(layers)) if rng is not None else [None] * len(layers)
        )
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Layers side by side: the i-th takes the i-th of a sequence of inputs.

    Often between `FanOut` and `FanInSum` / `FanInConcat`.
    """
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        results = [
            init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)
        ]
        return tuple(shape for shape, _ in results), tuple(p for _, p in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = (
            random.split(rng, len(layers)) if rng is not None else [None] * len(layers)
        )
        return [
            fun(p, x, rng=r, **kwargs)
            for fun, p, x, r in zip(apply_funs, params, inputs, rngs)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer chosen by the input's shape: `make_layer(input_shape)` returns the layer."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun


__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "parallel",
    "serial",
    "shape_dependent",
]
