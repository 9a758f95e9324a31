"""What one HLO instruction is to the fingerprints: a linear-algebra op (its kind, its primitive, the batch it
holds) or a collective."""

from __future__ import annotations

import re
from typing import Iterable

from repro.hlo_text import COLLECTIVES as _COLLECTIVES
from repro.hlo_text import Instruction, collective_kind, linalg_kind

from .op_names import first_combined

LINALG_PRIMITIVES = frozenset({"lu", "cholesky", "triangular_solve", "qr", "householder_product", "eigh", "eig",
                               "svd", "schur", "hessenberg", "tridiagonal", "tridiagonal_solve", "geqrf", "geqp3",
                               "lu_pivots_to_permutation"})
LINALG_OPCODES = frozenset({"triangular-solve", "cholesky"})
_XLA_NAME = re.compile(r"^[a-z][\w-]*\.\d+$")
"""An instruction's own name (``custom-call.2``), which some compilers append to the op path."""
COLLECTIVES = frozenset(_COLLECTIVES)


def is_linalg(instruction: Instruction) -> bool:
    if instruction.opcode == "custom-call":
        return bool(linalg_kind(instruction.target))
    if instruction.opcode in LINALG_OPCODES:
        return True
    # What XLA expanded a linalg op into (a CPU triangular solve on older releases): named by its op path.
    return (primitive(instruction) in LINALG_PRIMITIVES and any(len(a.dims) >= 3 for a in instruction.arrays)
            and not collective(instruction))


def family(instruction: Instruction) -> str:
    """What a linalg op computes, whatever the compiler calls it: a custom call's kind (``lu`` for both
    LuDecomposition and LuDecompositionBlock), or the HLO op's (``cholesky``, ``triangular_solve``)."""
    if instruction.opcode == "custom-call":
        return linalg_kind(instruction.target)
    return instruction.opcode.replace("-", "_") if instruction.opcode in LINALG_OPCODES else ""


def primitive(instruction: Instruction) -> str:
    parts = first_combined(instruction.op_name).rsplit("/", 2)
    last = parts[-1]
    if last in LINALG_PRIMITIVES or not (instruction.target or instruction.opcode in LINALG_OPCODES):
        return last
    if len(parts) > 1 and parts[-2] in LINALG_PRIMITIVES and _XLA_NAME.match(last):
        # libtpu 0.0.42 (jax 0.10.2) names geqrf's call "jvp(jit(qr))/geqrf/custom-call.2": the primitive is the
        # part before XLA's own instruction name; read from the target, it was a second op, "qr", with no batch.
        return parts[-2]
    # No op name says it (the TPU compiler's custom calls of some releases, or their own name): what it computes.
    return family(instruction) or instruction.target


def collective(instruction: Instruction) -> str:
    """The collective's kind (``all-gather`` for ``all-gather-start`` too), "" for anything else."""
    return collective_kind(instruction.opcode)


def batch_of(instruction: Instruction) -> int:
    """The batch of matrices an instruction holds: its first array of rank 3 or more, all but the last two dims."""
    if linalg_kind(instruction.target) == "lu_pivots_to_permutation" and instruction.arrays:
        return elements(instruction.arrays[0].dims[:-1])  # one permutation (a vector) per matrix
    for array in instruction.arrays:
        if len(array.dims) >= 3:
            return elements(array.dims[:-2])
    return 1 if instruction.arrays else 0


def elements(dims: Iterable[int]) -> int:
    count = 1
    for dim in dims:
        count *= dim
    return count
