"""olympus.experimental.sparse: JAX's BCOO sparse array, unbatched.

A `BCOO` holds `data` (nse values, each of the trailing dense shape) and
`indices` (nse rows of sparse coordinates) for an array of `shape`; a
coordinate equal to the shape marks padding, which `todense` drops. It is a
pytree (its buffers are the leaves), so it crosses jit, grad and vmap.
olympus covers what libraries use (numpyro builds one from a scipy matrix and
multiplies it with a dense array): `fromdense`, `from_scipy_sparse`,
`todense`, `@` with a dense array either side, `.T`. Batched layouts
(`n_batch > 0`) are refused with SparseLayoutError.

>>> from olympus.experimental.sparse import BCOO
>>> m = BCOO.fromdense(jnp.array([[1.0, 0.0], [0.0, 2.0]]))
>>> m.indices.tolist(), (m @ jnp.ones(2)).tolist()
([[0, 0], [1, 1]], [1.0, 2.0])
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from olympus import numpy as jnp
from olympus.tracer.errors import ConcretizationTypeError
from olympus.tree_util import register_pytree_node_class


class SparseLayoutError(NotImplementedError):
    """A BCOO layout olympus does not build (batch dimensions)."""


class SparseShapeError(ValueError):
    """BCOO buffers that do not fit the shape, or a product of mismatched shapes."""


class SparseNseError(ConcretizationTypeError):
    """`BCOO.fromdense` of a traced array without a static `nse=`."""


@register_pytree_node_class
class BCOO:
    """A sparse array in coordinate form: `data[i]` sits at `indices[i]`."""

    __array_priority__ = 100  # `dense @ bcoo` reaches BCOO.__rmatmul__

    def __init__(
        self,
        args: tuple,
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ):
        self.data, self.indices = (jnp.asarray(a) for a in args)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        _validate(self.data, self.indices, self.shape)

    nse = property(lambda self: self.indices.shape[-2])
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))
    n_batch = property(lambda self: self.indices.ndim - 2)
    n_sparse = property(lambda self: self.indices.shape[-1])
    n_dense = property(lambda self: self.data.ndim - 1)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        dense = f", n_dense={self.n_dense}" if self.n_dense else ""
        return f"BCOO({self.dtype}{list(self.shape)}, nse={self.nse}{dense})"

    # ---- pytree ----------------------------------------------------------------
    def tree_flatten(self):
        aux = {
            "shape": self.shape,
            "indices_sorted": self.indices_sorted,
            "unique_indices": self.unique_indices,
        }
        return (self.data, self.indices), aux

    @classmethod
    def tree_unflatten(cls, aux, children):
        out = object.__new__(cls)  # leaves may be placeholders (tree_util, vmap)
        out.data, out.indices = children
        out.__dict__.update(aux)
        return out

    # ---- conversions -----------------------------------------------------------
    @classmethod
    def fromdense(
        cls, mat, *, nse: int | None = None, index_dtype=np.int32, n_dense=0, n_batch=0
    ) -> BCOO:
        """The nonzeros of `mat` in row-major order, padded to `nse` entries
        (needed when `mat` is traced: the count must be static)."""
        _check_layout("fromdense", n_batch, n_dense)
        mat = jnp.asarray(mat)
        mask = mat != 0
        if nse is None:
            try:
                nse = int(jnp.sum(mask))
            except ConcretizationTypeError as err:
                raise SparseNseError(
                    f"BCOO.fromdense of a traced {mat.dtype}{list(mat.shape)}: the "
                    "number of stored entries must be static; pass nse=<int>"
                ) from err
        coords = jnp.nonzero(mask, size=nse, fill_value=mat.shape)
        indices = jnp.stack(coords, axis=-1).astype(index_dtype)
        data = jnp.where(coords[0] < mat.shape[0], mat[coords], 0) if mat.ndim else mat
        data = data.astype(mat.dtype)
        return cls(
            (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True
        )

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0) -> BCOO:
        """A scipy.sparse matrix's entries, in its COO order."""
        _check_layout("from_scipy_sparse", n_batch, n_dense)
        mat = mat.tocoo()
        indices = np.column_stack((mat.row, mat.col)).astype(index_dtype or np.int32)
        return cls((jnp.asarray(mat.data), indices), shape=mat.shape)

    def todense(self):
        """The dense array: entries at the same coordinates add, padding drops."""
        out = jnp.zeros(self.shape, self.dtype)
        return out.at[self._coords()].add(self.data, mode="drop")

    @property
    def T(self) -> BCOO:
        """The transpose (2-d): coordinates swapped."""
        _check_matrix(self, "T")
        return BCOO((self.data, self.indices[:, ::-1]), shape=self.shape[::-1])

    def _coords(self) -> tuple:
        return tuple(self.indices[:, k] for k in range(self.n_sparse))

    # ---- products with dense arrays ---------------------------------------------
    def __matmul__(self, other):
        """`self @ other` with jnp.matmul's shapes: gathers `other`'s rows at
        the column coordinates, scales by `data`, adds into the result rows."""
        _check_matrix(self, "@")
        other = jnp.asarray(other)
        m, n = self.shape
        _check_contraction(
            self.shape, other.shape, other.shape[0 if other.ndim == 1 else -2]
        )
        rows, cols = self._coords()
        dtype = jnp.result_type(self.data, other)
        if other.ndim == 1:
            terms = other[cols] * self.data
            return jnp.zeros(m, dtype).at[rows].add(terms, mode="drop")
        terms = other[..., cols, :] * self.data[:, None]
        out = jnp.zeros(other.shape[:-2] + (m, other.shape[-1]), dtype)
        return out.at[..., rows, :].add(terms, mode="drop")

    def __rmatmul__(self, other):
        """`other @ self`: `other`'s columns at the row coordinates, scaled,
        added into the result columns."""
        _check_matrix(self, "@")
        other = jnp.asarray(other)
        m, n = self.shape
        _check_contraction(other.shape, self.shape, other.shape[-1])
        rows, cols = self._coords()
        dtype = jnp.result_type(self.data, other)
        terms = other[..., rows] * self.data
        out = jnp.zeros(other.shape[:-1] + (n,), dtype)
        return out.at[..., cols].add(terms, mode="drop")


def _validate(data, indices, shape: tuple) -> None:
    if indices.ndim != 2:
        raise SparseLayoutError(
            f"BCOO with indices of shape {indices.shape}: olympus builds unbatched "
            "BCOO only (indices of shape (nse, n_sparse))"
        )
    nse, n_sparse = indices.shape
    if n_sparse > len(shape) or data.shape != (nse,) + shape[n_sparse:]:
        raise SparseShapeError(
            f"BCOO: data of shape {data.shape} and indices of shape {indices.shape} "
            f"do not describe an array of shape {shape}; data must have shape "
            f"{(nse,) + shape[n_sparse:]}"
        )


def _check_layout(name: str, n_batch: int, n_dense: int) -> None:
    if n_batch or n_dense:
        raise SparseLayoutError(
            f"BCOO.{name}(n_batch={n_batch}, n_dense={n_dense}): olympus builds "
            "BCOO with sparse dimensions only; leave n_batch and n_dense at 0"
        )


def _check_matrix(mat: BCOO, op: str) -> None:
    if mat.ndim != 2 or mat.n_sparse != 2:
        raise SparseLayoutError(
            f"BCOO {op} of a {mat!r}: olympus multiplies 2-d BCOO matrices with "
            "two sparse dimensions; use .todense() first"
        )


def _check_contraction(lhs: tuple, rhs: tuple, size: int) -> None:
    left = lhs[-1]
    if left != size or not rhs:
        raise SparseShapeError(
            f"BCOO matmul of shapes {lhs} and {rhs}: the contracted sizes "
            f"{left} and {size} differ"
        )


__all__ = [
    "BCOO",
    "SparseLayoutError",
    "SparseNseError",
    "SparseShapeError",
]
