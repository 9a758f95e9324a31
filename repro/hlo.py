"""Read compiled (post-partitioning) HLO text: collectives and linalg custom calls.

Pure text, no jax import, so captured HLO from any release can be read and
tested anywhere. What we look for is the bug's fingerprint: a collective
(all-gather, or in old releases an all-reduce of a zero-padded buffer) feeding
an LU custom call whose matrix operand holds the *global* batch, so every
device factorises every matrix.

HLO text differs between releases and the reader copes with all of them:

* newer releases print operands as bare names, `custom-call(%wrapped_copy)`,
  older ones inline the shape, `custom-call(f32[1024,32,32]{1,2,0} %p)`; a
  name → shape table over the whole module resolves either;
* old LAPACK custom calls take scalar `s32[]` operands (batch, m, n) before
  the matrix, so the matrix is the first operand of rank two or more;
* when no operand shape can be found, the result (tuple) shape stands in,
  since LU returns its factors in the operand's shape.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

# The collectives XLA's SPMD partitioner inserts. Async forms come as a
# `-start`/`-done` pair; counting only `-start` counts each op once.
COLLECTIVE_OPS: Tuple[str, ...] = (
    "all-gather",
    "all-reduce",
    "all-to-all",
    "collective-permute",
    "reduce-scatter",
    "ragged-all-to-all",
    "collective-broadcast",
)
# Always reported, even at zero, so results from all releases line up.
REPORTED_COLLECTIVES: Tuple[str, ...] = COLLECTIVE_OPS[:5]

# Substrings of custom_call_target naming the LAPACK / cuSOLVER / hipSOLVER
# routine, e.g. lapack_sgetrf, lapack_sgetrf_ffi, cusolver_getrf_ffi,
# cublas_getrf_batched, hipsolver_getrf, or the TPU compiler's own
# (libtpu: LuRealDecompositionBlock, LuDecompositionBlock up to jax 0.10.2,
# Cholesky, InvertDiagBlocksLowerTriangular). First match wins; matched lowercased.
LINALG_ROUTINES: Tuple[Tuple[str, str], ...] = (
    ("getrf", "lu"),
    ("lurealdecomposition", "lu"),
    ("ludecomposition", "lu"),
    ("cholesky", "cholesky"),
    ("invertdiagblocks", "triangular_solve"),
    ("geqrf", "qr"),
    ("geqp3", "qr"),
    ("orgqr", "householder_product"),
    ("ungqr", "householder_product"),
    ("potrf", "cholesky"),
    ("syevd", "eigh"),
    ("heevd", "eigh"),
    ("syevj", "eigh"),
    ("heevj", "eigh"),
    ("geev", "eig"),
    ("gesdd", "svd"),
    ("gesvd", "svd"),
    ("gees", "schur"),
    ("gehrd", "hessenberg"),
    ("sytrd", "tridiagonal"),
    ("hetrd", "tridiagonal"),
    ("trsm", "triangular_solve"),
)

_INSTRUCTION_START = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*(?P<opcode>[a-z][\w\-]*)\(")
_COMPUTATION_HEADER = re.compile(r"^\s*(?:ENTRY\s+)?%?(?P<name>[\w.\-]+)\s*(?:\(.*\))?\s*->.*\{\s*$")
_ARRAY_SHAPE = re.compile(r"(?P<dtype>[a-z]+\d*)\[(?P<dims>[^\]]*)\]")
_TARGET = re.compile(r'custom_call_target="(?P<target>[^"]*)"')
_CALLED = re.compile(
    r"\b(?:calls|to_apply|body|condition|true_computation|false_computation)=%?(?P<name>[\w.\-]+)"
)
_BRANCHES = re.compile(r"\bbranch_computations=\{(?P<names>[^}]*)\}")


@dataclass(frozen=True)
class Instruction:
    """One HLO instruction, as much of it as the reader needs."""

    name: str
    computation: str
    shape: str
    opcode: str
    operand_names: Tuple[str, ...]
    operand_shapes: Tuple[Optional[str], ...]  # inline shape, or None when only the name is printed
    attributes: str  # everything after the operand list


@dataclass(frozen=True)
class LinalgCall:
    """A LAPACK / cuSOLVER custom call and the matrices it works on."""

    target: str
    kind: str  # "lu", "qr", ... from LINALG_ROUTINES
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
    module = _Module(list(parse_instructions(hlo_text)))
    return HloEvidence(
        collectives=count_collectives(module.instructions),
        linalg_calls=[module.linalg_call(instruction) for instruction in module.instructions
                      if _linalg_kind(instruction) is not None],
        program=program_digest(hlo_text),
    )


# Where each instruction came from in the Python source: newer releases print a table of it at the top and
# number its frames in the order they were met, which an executable read back from the persistent
# compilation cache (repro/compile_cache.py) meets in another order. No part of the program.
_SOURCE_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_METADATA = re.compile(r", metadata=\{[^{}]*\}")


def program_text(hlo_text: str) -> str:
    """The module as a program: its instructions and computations, without the source metadata."""
    kept: List[str] = []
    skipping = False
    for line in hlo_text.splitlines():
        if line.strip() in _SOURCE_TABLES:
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
        base = _collective_base(instruction.opcode)
        if base is not None:
            counts[base] = counts.get(base, 0) + 1
    return counts


def parse_shape(shape: str) -> List[Tuple[int, ...]]:
    """The dimensions of each array in a shape string, tuple elements in order.

    `(f32[4,32,32]{1,2,0}, s32[4]{0})` → [(4, 32, 32), (4,)]; dynamic bounds
    (`<=8`) count as their bound. Token shapes give [].
    """
    arrays = []
    for match in _ARRAY_SHAPE.finditer(shape):
        dims_text = match.group("dims").replace("<=", "").strip()
        dims = tuple(int(dim) for dim in dims_text.split(",") if dim.strip()) if dims_text else ()
        arrays.append(dims)
    return arrays


def batch_of(dims: Sequence[int]) -> int:
    """The batch of a stack of matrices: product of all dims but the last two."""
    batch = 1
    for dim in dims[:-2]:
        batch *= dim
    return batch


def parse_instructions(hlo_text: str) -> Iterator[Instruction]:
    """Every instruction in the module, tagged with its computation's name."""
    computation = ""
    for line in hlo_text.splitlines():
        # `%name (params) -> shape {` opens a computation; instructions,
        # `name = shape opcode(...)`, never end in a brace.
        header = _COMPUTATION_HEADER.match(line)
        if header is not None:
            computation = header.group("name")
            continue
        instruction = _parse_instruction(line, computation)
        if instruction is not None:
            yield instruction


def _parse_instruction(line: str, computation: str) -> Optional[Instruction]:
    start = _INSTRUCTION_START.match(line)
    if start is None:
        return None
    rest = line[start.end():]
    shape, rest = _take_shape(rest)
    opcode_match = _OPCODE.match(rest)
    if not shape or opcode_match is None:
        return None
    operands_text, attributes = _take_balanced(rest[opcode_match.end() - 1:])
    names: List[str] = []
    shapes: List[Optional[str]] = []
    for operand in _split_top_level(operands_text):
        tokens = operand.split()
        if not tokens:
            continue
        names.append(tokens[-1].lstrip("%"))
        shapes.append(" ".join(tokens[:-1]) or None)
    return Instruction(
        name=start.group("name"),
        computation=computation,
        shape=shape,
        opcode=opcode_match.group("opcode"),
        operand_names=tuple(names),
        operand_shapes=tuple(shapes),
        attributes=attributes,
    )


def _take_shape(text: str) -> Tuple[str, str]:
    """Split `shape opcode(...)...` into the shape and the rest."""
    if text.startswith("("):
        inner, rest = _take_balanced(text)
        return "(" + inner + ")", rest
    parts = text.split(None, 1)
    if len(parts) < 2:
        return "", ""
    return parts[0], " " + parts[1]


def _take_balanced(text: str) -> Tuple[str, str]:
    """`(a, (b), c) rest` → ("a, (b), c", " rest"); text must start with '('."""
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[1:index], text[index + 1:]
    return text[1:], ""


def _split_top_level(text: str) -> List[str]:
    parts: List[str] = []
    depth = 0
    current: List[str] = []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _collective_base(opcode: str) -> Optional[str]:
    if opcode.endswith("-done"):
        return None
    base = opcode[: -len("-start")] if opcode.endswith("-start") else opcode
    return base if base in COLLECTIVE_OPS else None


def _custom_call_target(instruction: Instruction) -> Optional[str]:
    if instruction.opcode != "custom-call":
        return None
    match = _TARGET.search(instruction.attributes)
    return match.group("target") if match else None


def _linalg_kind(instruction: Instruction) -> Optional[str]:
    target = _custom_call_target(instruction)
    if target is None:
        return None
    lowered = target.lower()
    for routine, kind in LINALG_ROUTINES:
        if routine in lowered:
            return kind
    return None


class _Module:
    """The instructions of one module, indexed for shape and data-flow lookups."""

    def __init__(self, instructions: List[Instruction]) -> None:
        self.instructions = instructions
        # Instruction names are unique across a module, so one table serves
        # operands printed without a shape, whichever computation they are in.
        self.by_name: Dict[str, Instruction] = {}
        for instruction in instructions:
            self.by_name.setdefault(instruction.name, instruction)
        # Who calls each computation, so data flow can leave a called
        # computation through its parameters (fusions, calls, while bodies).
        self.callers: Dict[str, List[Instruction]] = {}
        for instruction in instructions:
            for called in _called_computations(instruction.attributes):
                self.callers.setdefault(called, []).append(instruction)

    def linalg_call(self, instruction: Instruction) -> LinalgCall:
        dims, source, operand_name = self._matrix_operand(instruction)
        return LinalgCall(
            target=_custom_call_target(instruction) or "",
            kind=_linalg_kind(instruction) or "",
            operand_shape=dims,
            batch=batch_of(dims) if dims is not None else None,
            shape_source=source,
            fed_by=self.collectives_upstream(operand_name) if operand_name else (),
        )

    def _matrix_operand(
        self, instruction: Instruction
    ) -> Tuple[Optional[Tuple[int, ...]], str, Optional[str]]:
        """The first operand of rank >= 2 (skipping old scalar m/n/batch operands)."""
        for name, inline_shape in zip(instruction.operand_names, instruction.operand_shapes):
            if inline_shape is not None:
                shape, source = inline_shape, "operand"
            elif name in self.by_name:
                shape, source = self.by_name[name].shape, "resolved operand"
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
            instruction = self.by_name[name]
            base = _collective_base(instruction.opcode)
            if base is not None:
                found.append(base)
            frontier.extend(instruction.operand_names)
            frontier.extend(self._caller_operands(instruction))
        return tuple(found)

    def _caller_operands(self, instruction: Instruction) -> List[str]:
        """For parameter(i) of a called computation, operand i of each caller."""
        index = _parameter_index(instruction)
        if instruction.opcode != "parameter" or index is None:
            return []
        operands = []
        for caller in self.callers.get(instruction.computation, []):
            if index < len(caller.operand_names):
                operands.append(caller.operand_names[index])
        return operands


def _parameter_index(instruction: Instruction) -> Optional[int]:
    # The parser keeps the operand list of `parameter(3)` as one "operand" named "3".
    if len(instruction.operand_names) == 1 and instruction.operand_names[0].isdigit():
        return int(instruction.operand_names[0])
    return None


def _called_computations(attributes: str) -> List[str]:
    names = [match.group("name") for match in _CALLED.finditer(attributes)]
    for branches in _BRANCHES.finditer(attributes):
        names.extend(part.strip().lstrip("%") for part in branches.group("names").split(","))
    return [name for name in names if name]
