"""jnp's universal functions as objects (JAX's `jnp.ufunc`): `jnp.add` and
the other binary ufuncs JAX makes objects carry NumPy's `nin`/`nout`/
`identity` and the methods `reduce`, `accumulate`, `at`, `reduceat` and
`outer`; `frompyfunc` makes one of any scalar function.

The objects wrap the plain functions of ufuncs.py, which olympus's own code
and Array's operators keep calling directly (no object call in their path).
Methods use olympus's reductions, scans and scatters where one fits and a
loop over the axis otherwise, as JAX's do.
"""

from __future__ import annotations

import inspect
import types
from typing import Any, Callable

import numpy as np

from olympus.numpy.core import check_arraylike
from olympus.numpy.ufunc_docs import with_out_where
from olympus.numpy import (
    core,
    creation,
    functional,
    indexing,
    joining,
    reductions,
    shaping,
)

# The numpy functions the ufunc methods are built on, under their jnp names
# (this module sits below the olympus.numpy package, so it cannot import it).
_BUILT_ON = (
    shaping.concatenate,
    creation.full,
    shaping.moveaxis,
    shaping.ravel,
    creation.zeros,
    core.asarray,
    core.broadcast_to,
    functional.vectorize,
    indexing.take,
    joining.append,
    reductions.where,
)
jnp = types.SimpleNamespace(**{fn.__name__: fn for fn in _BUILT_ON})

__all__ = ["frompyfunc", "ufunc"]

_AT_INPLACE = (
    "olympus arrays are immutable, so jnp.ufunc.at cannot update in place as "
    "np.ufunc.at does; pass inplace=False and use the result, e.g. "
    "x = jnp.add.at(x, idx, v, inplace=False)"
)


class UfuncArgumentError(NotImplementedError):
    """A ufunc call given NumPy's `out=` or `where=`, a method given `out=`,
    or `at` without inplace=False: refused as JAX refuses them."""


class ufunc:
    """A universal function: elementwise over broadcast arrays, with methods.

    olympus's form of NumPy's ufunc, as JAX's `jnp.ufunc`: calling it applies
    the function elementwise; `reduce`, `accumulate`, `at`, `reduceat` and
    `outer` apply it along an axis, cumulatively, at indices, between
    indices, or to all pairs. Build one with `jnp.frompyfunc`.

    Args:
      func: the scalar (elementwise) function, of `nin` arguments.
      nin: the number of inputs.
      nout: the number of outputs.
      name: the name shown (default: func's).
      nargs: NumPy's nargs (default: nin).
      identity: the value `reduce` starts from (None: it has none).
      call, reduce, accumulate, at, reduceat: faster implementations of
        the call and methods (None: the generic loops).

    Raises:
      UfuncArgumentError: a call with out= or where= not None (a
        NotImplementedError, as JAX's).

    Example:
      >>> x = jnp.array([1, 2, 3, 4])
      >>> jnp.add.reduce(x), jnp.add.accumulate(x)
      (Array(10, dtype=int32), Array([ 1,  3,  6, 10], dtype=int32))
      >>> jnp.multiply.outer(jnp.array([1, 2]), jnp.array([1, 10]))
      Array([[ 1, 10], [ 2, 20]], dtype=int32)
      >>> jnp.add.at(x, jnp.array([0, 0]), 5, inplace=False)
      Array([11,  2,  3,  4], dtype=int32)
      >>> jnp.add.reduceat(x, jnp.array([0, 2]))
      Array([3, 7], dtype=int32)
    """

    def __init__(
        self,
        func: Callable,
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity: Any = None,
        call: Callable | None = None,
        reduce: Callable | None = None,
        accumulate: Callable | None = None,
        at: Callable | None = None,
        reduceat: Callable | None = None,
    ):
        self.__name__ = name or func.__name__
        self.__doc__ = func.__doc__ and with_out_where(func.__doc__)
        self._func, self.identity = func, identity
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs or nin)
        self._call = call or func
        self._fast = {"reduce": reduce, "accumulate": accumulate, "at": at}
        self._fast["reduceat"] = reduceat
        names = ("x",) if self.nin == 1 else tuple(f"x{i + 1}" for i in range(nin))
        only = inspect.Parameter.POSITIONAL_ONLY
        keyword = inspect.Parameter.KEYWORD_ONLY
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, only) for n in names]
            + [inspect.Parameter(n, keyword, default=None) for n in ("out", "where")]
        )

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        # `_call` checks its operands (jnp's functions do; frompyfunc's wraps
        # one in a check), so an eager call costs one Python frame more.
        if out is not None or where is not None:
            keyword = "out" if out is not None else "where"
            raise UfuncArgumentError(
                f"jnp.{self.__name__}: the {keyword}= argument is not "
                f"supported (as in JAX; arrays are immutable); use "
                f"jnp.where(mask, jnp.{self.__name__}(...), other) instead"
            )
        return self._call(*args)

    def _binary_only(self, method: str, out=None) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(
                f"jnp.{self.__name__}.{method} needs a binary ufunc with one "
                f"output; {self.__name__} has nin={self.nin}, nout={self.nout}"
            )
        if out is not None:
            raise UfuncArgumentError(
                f"jnp.{self.__name__}.{method}: the out= argument is not supported "
                f"(as in JAX); use the returned array"
            )

    def _result_dtype(self, *arrays):
        from olympus.api import eval_shape
        from olympus.tracer.functions import ShapeDtypeStruct

        ones = [ShapeDtypeStruct((), a.dtype) for a in arrays]
        return eval_shape(self._func, *ones).dtype

    def reduce(
        self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None
    ):
        """`a` folded with this binary ufunc along `axis` (add.reduce is sum).

        Args:
          a: an array.
          axis: an int, or None for all axes.
          dtype: the dtype to fold in (None: the ufunc's result dtype).
          out: unsupported (must be None).
          keepdims: whether to keep the reduced axis, with size 1.
          initial: the starting value (None: the identity, or the first slice).
          where: a boolean mask of the elements folded in.

        Returns:
          The reduced array.

        Raises:
          ValueError: the ufunc is not binary, where has no identity or
            initial to start from, or a has no elements and no identity.
          UfuncArgumentError: out is not None.

        Example:
          >>> jnp.bitwise_or.reduce(jnp.array([[1, 2], [4, 4]]), axis=1)
          Array([3, 4], dtype=int32)
        """

        check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce", out)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(
                    f"jnp.{self.__name__}.reduce: {self.__name__!r} has no identity, "
                    f"so a where= mask needs initial= too"
                )
            if jnp.asarray(where).dtype != np.bool_:
                raise ValueError(
                    f"jnp.{self.__name__}.reduce: where must have dtype bool, got "
                    f"{jnp.asarray(where).dtype}"
                )
        fast = self._fast["reduce"]
        params = dict(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
        if fast is not None:
            return fast(a, where=where, **params)
        return self._reduce_by_loop(jnp.asarray(a), where=where, **params)

    def _reduce_by_loop(self, a, axis, dtype, keepdims, initial, where):
        from olympus import lax

        if isinstance(axis, tuple):
            raise NotImplementedError(
                f"jnp.{self.__name__}.reduce over a tuple of axes (as in JAX)"
            )
        dtype = dtype or self._result_dtype(a, a)
        initial = self.identity if initial is None else initial
        if where is not None:
            where = jnp.broadcast_to(where, a.shape)
        if axis is None:
            final = (1,) * a.ndim if keepdims else ()
            a, where = a.ravel(), None if where is None else where.ravel()
            axis = 0
        else:
            axis = axis % a.ndim
            final = a.shape[:axis] + (1,) * keepdims + a.shape[axis + 1 :]
            a = jnp.moveaxis(a, axis, 0)
            where = None if where is None else jnp.moveaxis(where, axis, 0)
        if a.shape[0] == 0:
            if initial is None:
                raise ValueError(
                    f"jnp.{self.__name__}.reduce: a zero-size array has nothing to "
                    f"reduce and {self.__name__} has no identity; pass initial="
                )
            return jnp.full(final, initial, dtype)

        def body(i, acc):
            folded = self(acc, a[i].astype(dtype))
            return folded if where is None else jnp.where(where[i], folded, acc)

        start, first = (1, a[0]) if initial is None else (0, initial)
        first = jnp.broadcast_to(jnp.asarray(first).astype(dtype), a.shape[1:])
        return lax.fori_loop(start, a.shape[0], body, first).reshape(final)

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running fold of `a` with this binary ufunc along `axis`.

        Args:
          a: an array.
          axis: the axis to run along.
          dtype: the dtype to fold in (None: the ufunc's result dtype).
          out: unsupported (must be None).

        Returns:
          An array of a's shape (add.accumulate is cumsum).

        Raises:
          ValueError: the ufunc is not binary, or axis is None.
          UfuncArgumentError: out is not None.

        Example:
          >>> jnp.maximum.accumulate(jnp.array([1, 3, 2, 5]))
          Array([1, 3, 3, 5], dtype=int32)
        """
        from olympus import lax

        self._binary_only("accumulate", out)
        check_arraylike(f"{self.__name__}.accumulate", a)
        if self._fast["accumulate"] is not None:
            return self._fast["accumulate"](a, axis=axis, dtype=dtype)
        a = jnp.asarray(a)
        if axis is None or isinstance(axis, tuple):
            raise ValueError(f"jnp.{self.__name__}.accumulate takes one integer axis")
        dtype = dtype or self._result_dtype(a, a)
        if a.size == 0:
            return jnp.zeros(a.shape, dtype)
        a = jnp.moveaxis(a, axis % a.ndim, 0).astype(dtype)

        def step(acc, x):
            acc = self(acc, x)
            return acc, acc

        _, rest = lax.scan(step, a[0], a[1:])
        return jnp.moveaxis(jnp.concatenate([a[:1], rest]), 0, axis % a.ndim)

    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """`a` with this ufunc applied at `indices` (with `b`), repeats included.

        Args:
          a: the array.
          indices: an index, slice, or tuple of them (as x[indices]).
          b: the second operand of a binary ufunc.
          inplace: must be False: olympus returns the updated copy.

        Returns:
          A new array of a's shape and dtype.

        Raises:
          UfuncArgumentError: inplace is not False (a NotImplementedError, as
            JAX's).

        Example:
          >>> jnp.multiply.at(jnp.ones(3), jnp.array([1, 1]), 3.0, inplace=False)
          Array([1., 9., 1.], dtype=float32)
        """
        if inplace:
            raise UfuncArgumentError(_AT_INPLACE)
        args = () if b is None else (b,)
        if self._fast["at"] is not None:
            return self._fast["at"](a, indices, *args)
        return self._at_by_loop(a, indices, *args)

    def _at_by_loop(self, a, indices, *args):
        from olympus import lax

        check_arraylike(f"{self.__name__}.at", a, *args)
        a = jnp.asarray(a)
        dtype = self._result_dtype(a, *(jnp.asarray(x) for x in args))
        a = a.astype(dtype)
        args = tuple(jnp.asarray(x).astype(dtype) for x in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        arrays = [np.shape(i) for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*arrays) if arrays else ()
        if not shape:
            return a.at[indices].set(self(a[indices], *args))
        count = int(np.prod(shape))
        args = tuple(
            jnp.broadcast_to(x, (*shape, *x.shape[len(shape) :])).reshape(
                count, *x.shape[len(shape) :]
            )
            for x in args
        )
        indices = [
            i if isinstance(i, slice) else jnp.broadcast_to(i, shape).ravel()
            for i in indices
        ]

        def body(k, acc):
            at = tuple(i if isinstance(i, slice) else i[k] for i in indices)
            return acc.at[at].set(self(acc[at], *(x[k] for x in args)))

        return lax.fori_loop(0, count, body, a)

    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """Folds of `a` between consecutive `indices` along `axis`.

        Entry i folds a[indices[i]:indices[i + 1]] (to the end for the
        last); where indices[i] >= indices[i + 1] it is a[indices[i]].

        Args:
          a: an array of rank 1 or more.
          indices: a 1-D integer array.
          axis: the axis to fold along.
          dtype: the result dtype (None: a's).
          out: unsupported (must be None).

        Returns:
          An array with len(indices) entries along axis.

        Raises:
          ValueError: the ufunc is not binary, a is 0-D, indices is not 1-D,
            or axis is not one int.
          UfuncArgumentError: out is not None.

        Example:
          >>> jnp.add.reduceat(jnp.arange(6), jnp.array([0, 4, 5]))
          Array([6, 4, 5], dtype=int32)
        """
        from olympus import lax

        self._binary_only("reduceat", out)
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a, indices = jnp.asarray(a), jnp.asarray(indices)
        if a.ndim == 0 or indices.ndim != 1:
            raise ValueError(
                f"jnp.{self.__name__}.reduceat needs a of rank >= 1 and 1-D "
                f"indices, got a.shape={a.shape}, indices.shape={indices.shape}"
            )
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"jnp.{self.__name__}.reduceat takes one integer axis")
        axis = axis % a.ndim
        a = a.astype(dtype or a.dtype)
        picked = jnp.take(a, indices, axis=axis)
        shape = [1] * a.ndim
        shape[axis] = indices.shape[0]
        bounds = jnp.append(indices, a.shape[axis])
        start, end = bounds[:-1].reshape(shape), bounds[1:].reshape(shape)

        def body(i, acc):
            row = jnp.take(a, jnp.asarray(i)[None], axis=axis)
            return jnp.where((i > start) & (i < end), self(acc, row), acc)

        return lax.fori_loop(0, a.shape[axis], body, picked)

    def outer(self, A, B, /):
        """This binary ufunc of every pair of elements of `A` and `B`.

        Args:
          A: an array.
          B: an array.

        Returns:
          An array of shape A.shape + B.shape.

        Raises:
          ValueError: the ufunc is not binary.

        Example:
          >>> jnp.subtract.outer(jnp.array([10, 20]), jnp.array([1, 2, 3]))
          Array([[ 9,  8,  7], [19, 18, 17]], dtype=int32)
        """
        from olympus.transforms.batching import vmap

        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        a, b = jnp.ravel(A), jnp.ravel(B)
        pairs = vmap(vmap(self, (None, 0)), (0, None))(a, b)
        return pairs.reshape(*np.shape(A), *np.shape(B))


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None):
    """A ufunc made of a scalar function of `nin` arguments.

    Calls broadcast the arguments and map `func` over their elements
    (jnp.vectorize); the ufunc methods (`reduce`, `accumulate`, `at`,
    `reduceat`, `outer`) work for a binary `func` with one output.

    Args:
      func: a function of `nin` scalars returning `nout` values, written
        with olympus operations.
      nin: the number of inputs.
      nout: the number of outputs.
      identity: the value `reduce` starts from (None: none).

    Returns:
      A jnp.ufunc.

    Raises:
      TypeError: nin or nout is not an integer.

    Example:
      >>> hyp = jnp.frompyfunc(lambda a, b: jnp.sqrt(a * a + b * b), 2, 1)
      >>> hyp(jnp.array([3.0, 5.0]), 4.0)
      Array([5.      , 6.4031243], dtype=float32)
      >>> hyp.reduce(jnp.array([3.0, 4.0, 12.0]))
      Array(13., dtype=float32)
    """

    name, elementwise = func.__name__, jnp.vectorize(func)

    def call(*args):
        check_arraylike(name, *args)
        return elementwise(*args)

    return ufunc(func, nin, nout, identity=identity, call=call, name=name)


def jax_ufuncs() -> dict:
    """{name: ufunc} for the functions JAX makes ufunc objects (its binary
    ones and negative), over ufuncs.py's functions, with the reductions,
    scans and scatters that serve their methods."""
    from olympus.numpy import float_math, reductions, ufuncs

    def add_at(a, indices, b):
        return _bool_as_int(a, b, lambda x, y: x.at[indices].add(y))

    def multiply_at(a, indices, b):
        return _bool_as_int(a, b, lambda x, y: x.at[indices].multiply(y))

    def extremum(fn):
        def reduce(a, axis, dtype, keepdims, initial, where):
            a = a if dtype is None else _asarray(a).astype(dtype)
            return fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)

        return reduce

    sum_, prod = reductions.sum, reductions.prod
    table = {
        "add": (ufuncs.add, 0, sum_, reductions.cumsum, add_at),
        "multiply": (ufuncs.multiply, 1, prod, reductions.cumprod, multiply_at),
        "subtract": (ufuncs.subtract, None, None, None, None),
        "maximum": (ufuncs.maximum, None, extremum(reductions.max), None, None),
        "minimum": (ufuncs.minimum, None, extremum(reductions.min), None, None),
        "bitwise_and": (ufuncs.bitwise_and, -1, None, None, None),
        "bitwise_or": (ufuncs.bitwise_or, 0, None, None, None),
        "bitwise_xor": (ufuncs.bitwise_xor, 0, None, None, None),
        "logical_and": (ufuncs.logical_and, True, None, None, None),
        "logical_or": (ufuncs.logical_or, False, None, None, None),
        "logical_xor": (ufuncs.logical_xor, False, None, None, None),
        "logaddexp": (float_math.logaddexp, -np.inf, None, None, None),
        "logaddexp2": (float_math.logaddexp2, -np.inf, None, None, None),
    }
    made = {
        name: ufunc(
            fn,
            2,
            1,
            name=name,
            identity=identity,
            reduce=reduce,
            accumulate=accumulate,
            at=at,
        )  # fmt: skip
        for name, (fn, identity, reduce, accumulate, at) in table.items()
    }
    return {**made, "negative": ufunc(ufuncs.negative, 1, 1, name="negative")}


def _asarray(a):

    return jnp.asarray(a)


def _bool_as_int(a, b, update):
    """A scatter-add or -multiply of booleans, run on int32 (as JAX's)."""

    a = jnp.asarray(a)
    if a.dtype != np.bool_:
        return update(a, b)
    b = jnp.asarray(b).astype(bool).astype(np.int32)
    return update(a.astype(np.int32), b).astype(bool)
