"""HLO module text, as XLA's dump writes it, read into computations of instructions (stdlib only).

Read a line at a time, each line cut at `LINE_LIMIT` characters (a constant
can fill megabytes of one line; what is read of an instruction is its name,
shape, opcode, operands and metadata, all near the start) and at most
`INSTRUCTION_LIMIT` instructions kept, so a 100 MB dump is read in bounded
time and memory; a module cut short says so (`Module.cut`).

Two forms of source metadata are read, as releases write them: inline
(``metadata={op_name="..." source_file="train.py" source_line=37}``, up to at
least jax 0.6.0) and by reference (``stack_frame_id=N``, resolved through the
``FileNames`` / ``FileLocations`` / ``StackFrames`` tables newer releases
append to the module text, e.g. jax 0.12).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

LINE_LIMIT = 64 * 1024
INSTRUCTION_LIMIT = 2_000_000

_HEADER = re.compile(r"^HloModule\s+([^\s,]+)")
_PARTITIONS = re.compile(r"num_partitions=(\d+)")
# Where the header names no partitions (jax 0.4.13 to at least 0.4.18 write none), the module's own device
# facts say them: a sharding's device list (``devices=[4,1,1]0,1,2,3`` or ``devices=[4,1,1]<=[4]``) and a
# collective's replica groups (``{{0,1,2,3}}`` or ``[1,4]<=[4]``).
_DEVICE_LIST = re.compile(r"devices=\[[\d,]+\]((?:\d+,)*\d+|<=\[[\d,]+\])")
_GROUPS = re.compile(r"replica_groups=(\{\{[\d,{}]*\}\}|\[[\d,]+\]<=\[[\d,]+\])")
_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")
_COMPUTATION = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*(\(.*)?\{\s*$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_SOURCE_FILE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"')
_SOURCE_LINE = re.compile(r"source_line=(\d+)")
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_TARGET = re.compile(r'custom_call_target="([^"]*)"')
_DIMENSIONS = re.compile(r"(?<![\w_])dimensions=\{([\d,]*)\}")
_CALLS = re.compile(r"(?:calls|to_apply|body|condition|branch_computations)=\{?%?([\w.\-]+)")
_ARRAY = re.compile(r"\b([a-z]+\d*)\[([\d,]*)\]")
_TABLE_ROW = re.compile(r'^(\d+)\s+(?:"((?:[^"\\]|\\.)*)"|\{(.*)\})\s*$')
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")

# Bytes per element of HLO's element types (pred is stored as a byte).
ELEMENT_BYTES = {"pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "s16": 2, "u16": 2,
                 "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8,
                 "c128": 16}


@dataclass(frozen=True)
class Array:
    """One array of an instruction's shape: its element type and dimensions."""

    dtype: str
    dims: tuple[int, ...]

    @property
    def bytes(self) -> int:
        count = 1
        for dim in self.dims:
            count *= dim
        return count * ELEMENT_BYTES.get(self.dtype, 4)


@dataclass
class Instruction:
    name: str
    opcode: str
    shape: str
    """Its shape as the text writes it; `arrays` reads it when asked (most instructions are never asked)."""
    operands: tuple[str, ...]
    op_name: str = ""
    source: tuple[str, int] | None = None
    """(file, line) of the program that made it, inline or through the stack frame tables."""
    frame_id: int | None = None
    target: str = ""
    """A custom call's target (``lapack_sgetrf_ffi``)."""
    dimensions: tuple[int, ...] = ()
    called: tuple[str, ...] = ()
    """Computations it calls (a fusion's, a while loop's body, a reduction's)."""
    parameter: int | None = None
    """Its number, for a parameter."""

    @cached_property
    def arrays(self) -> tuple[Array, ...]:
        """The arrays of its shape, in order (a tuple shape gives several)."""
        return tuple(Array(dtype, tuple(map(int, dims.split(","))) if dims else ())
                     for dtype, dims in _ARRAY.findall(self.shape))

    @property
    def bytes(self) -> int:
        return sum(array.bytes for array in self.arrays)


@dataclass
class Computation:
    name: str
    entry: bool
    instructions: dict[str, Instruction] = field(default_factory=dict)
    root: str = ""


@dataclass
class Module:
    name: str
    partitions: int = 1
    computations: dict[str, Computation] = field(default_factory=dict)
    cut: str = ""
    """Why the module was read only in part ("" when read whole)."""

    @property
    def entry(self) -> Computation | None:
        return next((c for c in self.computations.values() if c.entry), None)

    def instructions(self) -> Iterator[tuple[Computation, Instruction]]:
        for computation in self.computations.values():
            for instruction in computation.instructions.values():
                yield computation, instruction


def read_module(path: Path) -> Module:
    """The module in one dump file; OSError when it cannot be read."""
    with open(path, encoding="utf-8", errors="replace") as text:
        return parse_module(_bounded_lines(text))


def parse_module(lines: Iterable[str]) -> Module:
    """A module from its text's lines (each already bounded; see `read_module`)."""
    module = Module(name="")
    tables: dict[str, dict[int, str]] = {name: {} for name in _TABLES}
    current: Computation | None = None
    table: dict[int, str] | None = None
    kept = 0
    device_facts = 0  # the most devices a line of the body names, where the header names no partitions
    for line in lines:
        stripped = line.strip()
        if current is None:
            header = _HEADER.match(stripped)
            if header and not module.name:
                module.name = header.group(1)
                partitions = _PARTITIONS.search(line)
                module.partitions = int(partitions.group(1)) if partitions else 0  # 0: the body says (below)
                continue
            if stripped in _TABLES:
                table = tables[stripped]
                continue
            row = _TABLE_ROW.match(stripped) if table is not None else None
            if row:
                assert table is not None
                table[int(row.group(1))] = row.group(2) if row.group(2) is not None else row.group(3)
                continue
            opened = _COMPUTATION.match(line) if " = " not in line else None
            if opened:
                table = None
                current = Computation(name=opened.group(2), entry=bool(opened.group(1)))
                module.computations[current.name] = current
            continue
        if stripped == "}" or stripped.startswith("} //"):  # older releases name the computation they close
            current = None
            continue
        if kept >= INSTRUCTION_LIMIT:
            module.cut = module.cut or f"only the first {INSTRUCTION_LIMIT} instructions were read"
            continue
        if not module.partitions or device_facts:
            device_facts = max(device_facts, _devices_named(line))
        instruction, root = parse_instruction(line)
        if instruction is not None:
            kept += 1
            current.instructions[instruction.name] = instruction
            if root:
                current.root = instruction.name
    _resolve_frames(module, tables)
    if not module.partitions:
        module.partitions = max(device_facts, 1)
    return module


def _devices_named(line: str) -> int:
    """The most devices a sharding or a collective's replica groups on this line spans (0: none named)."""
    found = 0
    if "devices=[" in line:
        for listed in _DEVICE_LIST.findall(line):
            found = max(found, _count(listed))
    if "replica_groups=" in line:
        for groups in _GROUPS.findall(line):
            found = max(found, _count(groups) if groups.startswith("[") else len(set(re.findall(r"\d+", groups))))
    return found


def _count(listed: str) -> int:
    """``0,1,2,3`` → 4; an iota ``<=[4]`` or ``[1,4]<=[4]`` → the product of what follows ``<=``."""
    if "<=" not in listed:
        return len(listed.split(","))
    count = 1
    for dim in re.findall(r"\d+", listed.split("<=", 1)[1]):
        count *= int(dim)
    return count


def parse_instruction(line: str) -> tuple[Instruction | None, bool]:
    """One instruction line → the instruction and whether it is its computation's ROOT (None: not one)."""
    head = _INSTRUCTION.match(line)
    if not head:
        return None, False
    shape, rest = _split_shape(line[head.end():])
    opcode = _OPCODE.match(rest)
    if not opcode:
        return None, False
    operand_text, attributes = _split_operands(rest[opcode.end():])
    code = sys.intern(opcode.group(1))
    # Each attribute is looked for only where its key is on the line: most lines have few.
    op_name = _OP_NAME.search(attributes) if "op_name=" in attributes else None
    source_line = _SOURCE_LINE.search(attributes) if "source_line=" in attributes else None
    source_file = _SOURCE_FILE.search(attributes) if source_line else None
    frame = _FRAME_ID.search(attributes) if "stack_frame_id=" in attributes else None
    target = _TARGET.search(attributes) if code == "custom-call" else None
    dims = _DIMENSIONS.search(attributes) if "dimensions=" in attributes else None
    called = _CALLS.findall(attributes) if "=" in attributes and ("calls=" in attributes or "to_apply=" in attributes
                                                                  or "body=" in attributes
                                                                  or "branch_computations=" in attributes) else ()
    return Instruction(
        name=sys.intern(head.group(2)), opcode=code, shape=shape,
        operands=_operand_names(operand_text) if code not in ("constant", "parameter", "iota") else (),
        op_name=sys.intern(op_name.group(1)) if op_name else "",
        source=(sys.intern(source_file.group(1)), int(source_line.group(1))) if source_file and source_line else None,
        frame_id=int(frame.group(1)) if frame else None,
        target=target.group(1) if target else "",
        dimensions=tuple(int(d) for d in dims.group(1).split(",") if d) if dims else (),
        called=tuple(sys.intern(c) for c in called),
        parameter=int(operand_text) if code == "parameter" and operand_text.strip().isdigit() else None,
    ), bool(head.group(1))


def _bounded_lines(text: Iterable[str]) -> Iterator[str]:
    """Each line cut at LINE_LIMIT characters, the rest of an overlong line skipped unread into memory."""
    readline = getattr(text, "readline", None)
    if readline is None:
        for line in text:
            yield line[:LINE_LIMIT]
        return
    while True:
        line = readline(LINE_LIMIT)
        if not line:
            return
        if not line.endswith("\n"):
            while True:  # the rest of the line, a chunk at a time, dropped
                more = readline(LINE_LIMIT)
                if not more or more.endswith("\n"):
                    break
        yield line


def _split_shape(text: str) -> tuple[str, str]:
    """``(f32[2], s32[]) custom-call(...)`` → the shape and the rest; a tuple shape may hold spaces."""
    if not text.startswith("("):
        shape, _, rest = text.partition(" ")
        return shape, " " + rest
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[:index + 1], text[index + 1:]
    return text, ""


def _split_operands(text: str) -> tuple[str, str]:
    """What follows ``opcode(``: the operand list up to its closing parenthesis, and the attributes after."""
    close = text.find(")")
    if close >= 0 and "(" not in text[:close]:  # the usual case: no parenthesis inside the operand list
        return text[:close], text[close + 1:]
    depth = 1
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[:index], text[index + 1:]
    return text, ""


def _operand_names(text: str) -> tuple[str, ...]:
    """``%a, %b`` (or older ``f32[2]{0} %a, ...``) → ("a", "b"); each operand's last word is its name."""
    names = []
    for part in (re.sub(r"/\*.*?\*/", "", text) if "/*" in text else text).split(","):
        words = part.split()
        if words and not words[-1].endswith("}"):
            names.append(sys.intern(words[-1].lstrip("%")))
    return tuple(names)


def _resolve_frames(module: Module, tables: dict[str, dict[int, str]]) -> None:
    """``stack_frame_id=N`` → (file, line): the frame's own location (the innermost frame of the program)."""
    frames, locations, files = tables["StackFrames"], tables["FileLocations"], tables["FileNames"]
    if not frames:
        return
    for _, instruction in module.instructions():
        if instruction.source is not None or instruction.frame_id is None:
            continue
        frame = frames.get(instruction.frame_id, "")
        location = locations.get(_field(frame, "file_location_id"), "")
        file = files.get(_field(location, "file_name_id"))
        line = _field(location, "line")
        if file is not None and line:
            instruction.source = (sys.intern(file), line)


def _field(text: str, key: str) -> int:
    found = re.search(rf"\b{key}=(\d+)", text)
    return int(found.group(1)) if found else 0
