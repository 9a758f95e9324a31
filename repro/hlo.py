"""The scaling bug's evidence in a compiled (post-partitioning) module: its collectives and linalg custom calls.

Read through `repro.hlo_text` (the one HLO reader, stdlib only), so captured
HLO from any release can be read and tested anywhere. What we look for is the
bug's fingerprint: a collective (all-gather, or in old releases an all-reduce
of a zero-padded buffer) feeding an LU custom call whose matrix operand holds
the *global* batch, so every device factorises every matrix.

Where the text differs between releases:

* an operand's shape is printed inline in older releases, resolved by name
  in newer ones (`LinalgCall.shape_source` says which);
* old LAPACK custom calls take scalar `s32[]` operands (batch, m, n) before
  the matrix, so the matrix is the first operand of rank two or more;
* when no operand shape can be found, the result (tuple) shape stands in,
  since LU returns its factors in the operand's shape.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from repro.hlo_text import (COLLECTIVES, SOURCE_TABLES, Computation, Instruction, Module, arrays_of,
                            collective_kind, linalg_kind, read_text)

# Always reported, even at zero, so results from all releases line up.
REPORTED_COLLECTIVES: Tuple[str, ...] = COLLECTIVES[:5]


@dataclass(frozen=True)
class LinalgCall:
    """A LAPACK / cuSOLVER / TPU custom call and the matrices it works on."""

    target: str
    kind: str  # "lu", "qr", ... from repro.hlo_text.LINALG_TARGETS
    operand_shape: Optional[Tuple[int, ...]]
    batch: Optional[int]  # product of all dims but the last two
    shape_source: str  # "operand", "resolved operand" or "result": how we found the shape
    fed_by: Tuple[str, ...] = ()  # collectives upstream of the matrix operand, nearest first


@dataclass
class HloEvidence:
    """What one compiled module shows: its collectives and linalg calls."""

    collectives: Dict[str, int] = field(default_factory=dict)
    linalg_calls: List[LinalgCall] = field(default_factory=list)
    program: str = ""
    """A digest of the module without its source metadata (`program_digest`): equal digests, the same program."""

    @property
    def all_gathers(self) -> int:
        return self.collectives.get("all-gather", 0)

    @property
    def collective_count(self) -> int:
        return sum(self.collectives.values())

    @property
    def lu_calls(self) -> List[LinalgCall]:
        return [call for call in self.linalg_calls if call.kind == "lu"]

    @property
    def lu_batch(self) -> Optional[int]:
        """The largest batch any LU call factorises on one device, or None."""
        batches = [call.batch for call in self.lu_calls if call.batch is not None]
        return max(batches) if batches else None

    @property
    def lu_fed_by_collective(self) -> bool:
        return any(call.fed_by for call in self.lu_calls)


def read_evidence(hlo_text: str) -> HloEvidence:
    """Collectives and linalg custom calls of one compiled HLO module."""
    module = _DataFlow(read_text(hlo_text))
    instructions = [instruction for _, instruction in module.module.instructions()]
    return HloEvidence(
        collectives=count_collectives(instructions),
        linalg_calls=[module.linalg_call(instruction) for instruction in instructions
                      if instruction.opcode == "custom-call" and linalg_kind(instruction.target)],
        program=program_digest(hlo_text),
    )


# Source metadata is no part of the program: newer releases number its stack frames in the order they were met,
# which an executable read back from the persistent compilation cache (repro/compile_cache.py) meets in another.
_METADATA = re.compile(r", metadata=\{[^{}]*\}")


def program_text(hlo_text: str) -> str:
    """The module as a program: its instructions and computations, without the source metadata."""
    kept: List[str] = []
    skipping = False
    for line in hlo_text.splitlines():
        if line.strip() in SOURCE_TABLES:
            skipping = True
        elif skipping and not line.strip():
            skipping = False
        elif not skipping:
            kept.append(_METADATA.sub("", line))
    return "\n".join(kept)


def program_digest(hlo_text: str) -> str:
    """A short hash of `program_text`: two compiles of one program, cached or not, have the same."""
    return hashlib.sha256(program_text(hlo_text).encode()).hexdigest()[:16]


def count_collectives(instructions: Sequence[Instruction]) -> Dict[str, int]:
    """How many of each collective op, async pairs counted once."""
    counts = {name: 0 for name in REPORTED_COLLECTIVES}
    for instruction in instructions:
        kind = collective_kind(instruction.opcode)
        if kind:
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def parse_shape(shape: str) -> List[Tuple[int, ...]]:
    """The dimensions of each array in a shape string, tuple elements in order.

    `(f32[4,32,32]{1,2,0}, s32[4]{0})` → [(4, 32, 32), (4,)]; dynamic bounds
    (`<=8`) count as their bound.
    """
    return [array.dims for array in arrays_of(shape)]


def batch_of(dims: Sequence[int]) -> int:
    """The batch of a stack of matrices: product of all dims but the last two."""
    batch = 1
    for dim in dims[:-2]:
        batch *= dim
    return batch


class _DataFlow:
    """A module's instructions indexed for shape and data-flow lookups across its computations."""

    def __init__(self, module: Module) -> None:
        self.module = module
        # Instruction names are unique across a module, so one table serves operands printed without a shape,
        # whichever computation they are in.
        self.by_name: Dict[str, Tuple[Computation, Instruction]] = {}
        # Who calls each computation, so data flow can leave a called computation through its parameters
        # (fusions, calls, while bodies).
        self.callers: Dict[str, List[Instruction]] = {}
        for computation, instruction in module.instructions():
            self.by_name.setdefault(instruction.name, (computation, instruction))
            for called in instruction.called:
                self.callers.setdefault(called, []).append(instruction)

    def linalg_call(self, instruction: Instruction) -> LinalgCall:
        dims, source, operand_name = self._matrix_operand(instruction)
        return LinalgCall(
            target=instruction.target,
            kind=linalg_kind(instruction.target),
            operand_shape=dims,
            batch=batch_of(dims) if dims is not None else None,
            shape_source=source,
            fed_by=self.collectives_upstream(operand_name) if operand_name else (),
        )

    def _matrix_operand(self, instruction: Instruction) -> Tuple[Optional[Tuple[int, ...]], str, Optional[str]]:
        """The first operand of rank >= 2 (skipping old scalar m/n/batch operands)."""
        inline = instruction.operand_shapes or ("",) * len(instruction.operands)
        for name, inline_shape in zip(instruction.operands, inline):
            if inline_shape:
                shape, source = inline_shape, "operand"
            elif name in self.by_name:
                shape, source = self.by_name[name][1].shape, "resolved operand"
            else:
                continue
            arrays = parse_shape(shape)
            if len(arrays) == 1 and len(arrays[0]) >= 2:
                return arrays[0], source, name
        # Fallback: the factors come back in the operand's shape.
        for dims in parse_shape(instruction.shape):
            if len(dims) >= 2:
                return dims, "result", None
        return None, "unknown", None

    def collectives_upstream(self, start_name: str) -> Tuple[str, ...]:
        """Collective ops anywhere upstream of an instruction, nearest first."""
        found: List[str] = []
        seen = set()
        frontier = [start_name]
        while frontier:
            name = frontier.pop(0)
            if name in seen or name not in self.by_name:
                continue
            seen.add(name)
            computation, instruction = self.by_name[name]
            kind = collective_kind(instruction.opcode)
            if kind:
                found.append(kind)
            frontier.extend(instruction.operands)
            frontier.extend(self._caller_operands(computation, instruction))
        return tuple(found)

    def _caller_operands(self, computation: Computation, instruction: Instruction) -> List[str]:
        """For parameter(i) of a called computation, operand i of each caller."""
        index = instruction.parameter
        if index is None:
            return []
        return [caller.operands[index] for caller in self.callers.get(computation.name, [])
                if index < len(caller.operands)]
