"""LAPACK kernels that ship in jaxlib, called as typed-FFI custom calls.

The kernels (getrf, syevd, geqrf, orgqr, gesdd, ...) take batches of
column-major matrices: the custom call states that layout for every operand
and result of the batch's rank, and the default (row-major) layout for the
rest (pivots, eigenvalues, `info`). Targets are registered with XLA once, on
the first lowering that needs one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import ShapedArray

_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
_registered = False


class LapackTypeError(TypeError):
    """A LAPACK kernel was asked for a dtype it has no version of."""


def ensure_registered() -> None:
    """Registers jaxlib's CPU LAPACK targets with XLA (idempotent)."""
    global _registered
    if _registered:
        return
    from jaxlib import lapack, xla_client

    lapack._lapack.initialize()
    for name, capsule, api_version in lapack.registrations()["cpu"]:
        xla_client.register_custom_call_target(
            name, capsule, platform="cpu", api_version=api_version
        )
    _registered = True


def target_name(base: str, dtype, complex_base: str | None = None) -> str:
    """`lapack_sgetrf_ffi` for base "getrf" and float32; complex types may use
    another base (syevd -> heevd, orgqr -> ungqr)."""
    name = np.dtype(dtype).name
    if name not in _PREFIX:
        raise LapackTypeError(
            f"LAPACK {base} needs float32, float64, complex64 or complex128 matrices, "
            f"got {dtypes.short_name(dtype)}; convert with .astype(jnp.float32)"
        )
    if dtypes.is_complex(dtype) and complex_base is not None:
        base = complex_base
    return f"lapack_{_PREFIX[name]}{base}_ffi"


def _layout(aval: ShapedArray, matrix_rank: int) -> str:
    """Column-major for the batched matrices, row-major for everything else."""
    r = len(aval.shape)
    if r == matrix_rank and r >= 2:
        order = (r - 2, r - 1) + tuple(range(r - 3, -1, -1))
    else:
        order = tuple(range(r - 1, -1, -1))
    body = ", ".join(str(d) for d in order)
    return f"dense<[{body}]> : tensor<{r}xindex>" if r else "dense<> : tensor<0xindex>"


def custom_call(
    emitter,
    target: str,
    operands: Sequence[str],
    avals_in: Sequence[ShapedArray],
    avals_out: Sequence[ShapedArray],
    config: dict[str, int] | None = None,
    aliases: dict[int, int] | None = None,
) -> list[str]:
    """Emits one LAPACK custom call; `config` holds ui8 attributes (LAPACK's
    character flags such as uplo = ord('L')); `aliases` maps output -> operand
    index for kernels that overwrite their input."""
    ensure_registered()
    matrix_rank = max(len(a.shape) for a in avals_in)
    config_text = ", ".join(f"{k} = {int(v)} : ui8" for k, v in (config or {}).items())
    alias_text = ", ".join(
        f"#stablehlo.output_operand_alias<output_tuple_indices = [{o if len(avals_out) > 1 else ''}], "
        f"operand_index = {i}, operand_tuple_indices = []>"
        for o, i in (aliases or {}).items()
    )
    attrs = (
        f'api_version = 4 : i32, backend_config = {{{config_text}}}, call_target_name = "{target}", '
        f"operand_layouts = [{', '.join(_layout(a, matrix_rank) for a in avals_in)}], "
        f"output_operand_aliases = [{alias_text}], "
        f"result_layouts = [{', '.join(_layout(a, matrix_rank) for a in avals_out)}]"
    )
    return emitter.op("stablehlo.custom_call", list(operands), list(avals_out), attrs)
