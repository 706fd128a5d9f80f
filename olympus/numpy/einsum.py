"""`jnp.einsum`: Einstein summation as a chain of dot_generals.

Each operand first loses its repeated letters (diagonals) and the letters no
one else needs (summed away); operands are then contracted left to right,
keeping as batch dimensions the letters still needed later or in the output.
"""

from __future__ import annotations

import string

from olympus import lax
from olympus.lax.sharding import accepts_out_sharding
from olympus.numpy.core import broadcast_to
from olympus.numpy.diagonals import diagonal
from olympus.numpy.shaping import transpose
from olympus.numpy.core import aval_of, promote_dtypes
from olympus.numpy.core import refuse_out


@accepts_out_sharding
def einsum(
    subscripts: str,
    *operands,
    out=None,
    optimize=None,
    precision=None,
    preferred_element_type=None,
):
    """Einstein summation: contractions written as a subscript string.

    Letters shared by operands and missing from the output are summed over;
    "..." stands for broadcast dimensions. The contraction order is chosen
    to keep intermediates small.

    Args:
      subscripts: e.g. "ij,jk->ik"; without "->" the output is the letters
        used once, sorted.
      *operands: the arrays, one per comma-separated term.
      out: unsupported (must be None); arrays are immutable, as in JAX.
      optimize: the contraction-path strategy (True, False, "greedy", ...).
      precision: None, a lax.Precision or its name, or a pair.
      preferred_element_type: the dtype to accumulate and return in.

    Returns:
      The result array.

    Raises:
      ValueError: the subscripts do not match the operands' ranks, or a
        letter's sizes differ.
      OutArgumentError: out is not None (a NotImplementedError, as JAX's).

    Example:
      >>> jnp.einsum("ij,j->i", jnp.ones((2, 3)), jnp.arange(3.0))
      Array([3., 3.], dtype=float32)
    """
    refuse_out("jnp.einsum", out)
    operands = promote_dtypes(*operands) if len(operands) > 1 else list(operands)
    inputs, output = _parse(
        subscripts.replace(" ", ""), [aval_of(x).ndim for x in operands]
    )
    if len(inputs) != len(operands):
        raise ValueError(
            f"einsum: {len(inputs)} subscripts for {len(operands)} operands"
        )
    sizes = _letter_sizes(inputs, operands)
    terms = [_simplify(x, letters, sizes) for x, letters in zip(operands, inputs)]
    terms = [
        _sum_private(x, letters, [t[1] for j, t in enumerate(terms) if j != i], output)
        for i, (x, letters) in enumerate(terms)
    ]
    result, letters = terms[0]
    for i, (x, other) in enumerate(terms[1:], start=1):
        later = "".join(t[1] for t in terms[i + 1 :]) + output
        result, letters = _contract(
            result, letters, x, other, later, precision, preferred_element_type
        )
    result, letters = _sum_private(result, letters, [], output)
    return (
        transpose(result, [letters.index(c) for c in output])
        if letters != output
        else result
    )


def _parse(subscripts: str, ndims: list) -> tuple[list, str]:
    lhs, arrow, output = subscripts.partition("->")
    inputs = lhs.split(",")
    free = [c for c in string.ascii_uppercase[::-1] if c not in subscripts]
    n_ellipsis = max(
        (nd - len(s.replace("...", "")) for s, nd in zip(inputs, ndims) if "..." in s),
        default=0,
    )
    ellipsis = "".join(free[:n_ellipsis])[::-1]
    expanded = []
    for spec, nd in zip(inputs, ndims):
        if "..." in spec:
            k = nd - len(spec.replace("...", ""))
            spec = spec.replace("...", ellipsis[n_ellipsis - k :])
        if len(spec) != nd:
            raise ValueError(
                f"einsum: subscripts {spec!r} do not match an operand of rank {nd}"
            )
        expanded.append(spec)
    if not arrow:
        counts = {c: lhs.count(c) for c in lhs if c.isalpha()}
        output = "..." + "".join(sorted(c for c, n in counts.items() if n == 1))
    output = output.replace("...", ellipsis)
    return expanded, output


def _letter_sizes(inputs, operands) -> dict:
    sizes: dict = {}
    for letters, x in zip(inputs, operands):
        for c, n in zip(letters, aval_of(x).shape):
            seen = sizes.get(c, 1)
            if seen not in (1, n) and n != 1:
                raise ValueError(
                    f"einsum: size of label {c!r} is {sizes[c]} in one operand and {n} in another"
                )
            sizes[c] = n if seen == 1 else seen  # a size-1 axis broadcasts (to 0 too)
    return sizes


def _simplify(x, letters: str, sizes: dict):
    """Takes diagonals for repeated letters and broadcasts size-1 axes."""
    while len(set(letters)) != len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        i, j = letters.index(c), letters.index(c, letters.index(c) + 1)
        x = diagonal(x, 0, i, j)
        letters = "".join(d for k, d in enumerate(letters) if k not in (i, j)) + c
    shape = tuple(sizes[c] for c in letters)
    return (broadcast_to(x, shape) if aval_of(x).shape != shape else x), letters


def _sum_private(x, letters: str, others: list, output: str):
    """Sums the axes whose letters appear nowhere else and not in the output."""
    needed = set("".join(others)) | set(output)
    axes = tuple(i for i, c in enumerate(letters) if c not in needed)
    if not axes:
        return x, letters
    return lax.reduce_sum(x, axes), "".join(
        c for i, c in enumerate(letters) if i not in axes
    )


def _contract(a, a_letters: str, b, b_letters: str, later: str, precision, preferred):
    shared = [c for c in a_letters if c in b_letters]
    batch = [c for c in shared if c in later]
    contract = [c for c in shared if c not in later]
    dims = (
        (
            [a_letters.index(c) for c in contract],
            [b_letters.index(c) for c in contract],
        ),
        ([a_letters.index(c) for c in batch], [b_letters.index(c) for c in batch]),
    )
    out = lax.dot_general(
        a, b, dims, precision=precision, preferred_element_type=preferred
    )
    a_free = [c for c in a_letters if c not in shared]
    b_free = [c for c in b_letters if c not in shared]
    return out, "".join(batch + a_free + b_free)
