"""Reference rules of gather and the scatter family, window by window.

StableHLO semantics with the index vector in the last axis of `indices`:
gather clamps each window start so the window fits; scatter drops windows
that do not fit; scatter (plain) lets a later update win.
"""

from __future__ import annotations

import numpy as np

from olympus.backends.reference.table import rule


def _window_start(index_vector, index_map, shape, sizes) -> list[int]:
    start = [0] * len(shape)
    for k, d in enumerate(index_map):
        start[d] = int(index_vector[k])
    return start


@rule("gather")
def _gather(operand, indices, *, dimension_numbers, slice_sizes):
    dn = dimension_numbers
    window_shape = [
        s for d, s in enumerate(slice_sizes) if d not in dn.collapsed_slice_dims
    ]
    batch_shape = indices.shape[:-1]
    rank = len(window_shape) + len(batch_shape)
    out_shape, windows, batch = [], iter(window_shape), iter(batch_shape)
    for d in range(rank):
        out_shape.append(next(windows) if d in dn.offset_dims else next(batch))
    out = np.zeros(out_shape, operand.dtype)
    for b in np.ndindex(*batch_shape):
        start = _window_start(
            indices[b], dn.start_index_map, operand.shape, slice_sizes
        )
        start = [
            min(max(s, 0), n - k) for s, n, k in zip(start, operand.shape, slice_sizes)
        ]
        window = operand[tuple(slice(s, s + k) for s, k in zip(start, slice_sizes))]
        window = window.reshape(window_shape)
        where, b_it = [], iter(b)
        for d in range(rank):
            where.append(slice(None) if d in dn.offset_dims else next(b_it))
        out[tuple(where)] = window
    return out


_COMBINE = {
    "scatter": lambda old, new: new,
    "scatter_add": np.add,
    "scatter_mul": np.multiply,
    "scatter_min": np.minimum,
    "scatter_max": np.maximum,
}


def _scatter(name: str):
    combine = _COMBINE[name]

    def scatter(operand, indices, updates, *, dimension_numbers):
        dn = dimension_numbers
        out = operand.copy()
        batch_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        window_sizes = iter(updates.shape[d] for d in dn.update_window_dims)
        sizes = [
            1 if d in dn.inserted_window_dims else next(window_sizes)
            for d in range(operand.ndim)
        ]
        for b in np.ndindex(*indices.shape[:-1]):
            start = _window_start(
                indices[b], dn.scatter_dims_to_operand_dims, operand.shape, sizes
            )
            if any(s < 0 or s + k > n for s, k, n in zip(start, sizes, operand.shape)):
                continue  # a window that does not fit is dropped
            where, b_it = [slice(None)] * updates.ndim, iter(b)
            for d in batch_axes:
                where[d] = next(b_it)
            update = updates[tuple(where)].reshape(sizes)
            region = tuple(slice(s, s + k) for s, k in zip(start, sizes))
            out[region] = combine(out[region], update)
        return out

    return scatter


for _name in _COMBINE:
    rule(_name)(_scatter(_name))
