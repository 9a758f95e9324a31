"""Compiled HLO text, as XLA prints it, read into computations of instructions: the one HLO reader.

Standard library only: the scaling repro reads its compile with it inside
every release's environment (jax 0.4.13 to the newest, Python 3.9 on), and
the kit (`kit.hlo`) reads a program's dump with it in nox's process.

Read a line at a time, each line cut at `LINE_LIMIT` characters (a constant
can fill megabytes of one line; what is read of an instruction is its name,
shape, opcode, operands and attributes, all near the start) and at most
`INSTRUCTION_LIMIT` instructions kept, so a 100 MB dump is read in bounded
time and memory; a module cut short says so (`Module.cut`).

The text differs between releases, and the reader takes every form:

* operands as bare names (``custom-call(%wrapped_copy)``) or, in older
  releases, with their shape inline (``custom-call(f32[1024,32,32]{1,2,0} %p)``):
  `Instruction.operand_shapes` keeps the inline shapes;
* source metadata inline (``metadata={op_name="..." source_file="train.py"
  source_line=37}``, up to at least jax 0.6) or by reference
  (``stack_frame_id=N``, resolved through the ``FileNames`` /
  ``FileLocations`` / ``StackFrames`` tables newer releases print, e.g. 0.12);
* a tuple's element as its own operand (``fusion(%all-reduce.2#0)``, 0.12) or through a
  ``get-tuple-element``: the operand is the instruction, ``#0`` dropped;
* collectives XLA combined into one of a tuple (``(f32[8,8], f32[32]) all-reduce(%a, %b)``):
  `delivered` counts every array;
* the partitions in the header (``num_partitions=4``) or, where the header
  names none (jax 0.4.13 to at least 0.4.18), in the body's sharding device
  lists and collectives' replica groups;
* linear algebra as LAPACK, cuSOLVER / cuBLAS or hipSOLVER custom calls, or
  the TPU compiler's own (`LINALG_TARGETS`).
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

# The collectives XLA's SPMD partitioner inserts. Async forms come as a `-start`/`-done` pair: the `-start` is the op.
COLLECTIVES: tuple[str, ...] = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter",
                                "ragged-all-to-all", "collective-broadcast")

# A linear-algebra custom call's target → the op it computes, first match wins (case ignored). LAPACK
# (lapack_sgetrf, lapack_sgetrf_ffi), cuSOLVER / cuBLAS (cusolver_getrf_ffi, cublas_getrf_batched,
# __cublas$triangularSolve), hipSOLVER, and
# libtpu's: LuDecomposition before optimizations, LuDecompositionBlock after (LuRealDecompositionBlock from 0.12),
# the triangular solves as InvertDiagBlocks*, Qr / QrDecompositionBlock, Eigh / EighTpu, Svd.
LINALG_TARGETS: tuple[tuple[str, str], ...] = (
    ("pivots_to_permutation", "lu_pivots_to_permutation"),  # cuSOLVER's permutation of LU's pivots (GPUs)
    ("getrf", "lu"), ("LuRealDecomposition", "lu"), ("LuDecomposition", "lu"), ("getrs", "lu_solve"),
    ("cholesky", "cholesky"), ("potrf", "cholesky"),
    ("InvertDiagBlocks", "triangular_solve"), ("trsm", "triangular_solve"), ("triangularSolve", "triangular_solve"),
    ("geqrf", "qr"), ("geqp3", "qr"), ("QrDecomposition", "qr"), ("^Qr$", "qr"),
    ("orgqr", "householder_product"), ("ungqr", "householder_product"),
    ("ProductOfElementaryHouseholderReflectors", "householder_product"),
    ("syev", "eigh"), ("heev", "eigh"), ("^Eigh", "eigh"), ("geev", "eig"),
    ("gesdd", "svd"), ("gesvd", "svd"), ("^Svd", "svd"),
    ("gees", "schur"), ("gehrd", "hessenberg"), ("sytrd", "tridiagonal"), ("hetrd", "tridiagonal"),
    ("gtsv", "tridiagonal_solve"),
)
_LINALG = tuple((re.compile(pattern, re.IGNORECASE), kind) for pattern, kind in LINALG_TARGETS)

# Bytes per element of HLO's element types (pred is stored as a byte).
ELEMENT_BYTES = {"pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "s16": 2, "u16": 2,
                 "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8,
                 "c128": 16}

# Where each instruction came from in the Python source: printed as tables before the computations.
SOURCE_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")

_HEADER = re.compile(r"^HloModule\s+([^\s,]+)")
_PARTITIONS = re.compile(r"num_partitions=(\d+)")
# A sharding's device list (``devices=[4,1,1]0,1,2,3`` or ``devices=[4,1,1]<=[4]``) and a collective's replica
# groups (``{{0,1,2,3}}`` or ``[1,4]<=[4]``): the module's own device facts, where its header names no partitions.
_DEVICE_LIST = re.compile(r"devices=\[[\d,]+\]((?:\d+,)*\d+|<=\[[\d,]+\])")
_GROUPS = re.compile(r"replica_groups=(\{\{[\d,{}]*\}\}|\[[\d,]+\]<=\[[\d,]+\])")
_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")
_COMPUTATION = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*(\(.*)?\{\s*$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
# libtpu 0.0.2x writes an instruction's own HLO name (``reduce.113``) as the op name of a collective it made from
# it: no op of the program, so no name (t10: "expected, not flagged ... at reduce.156" where a line was promised).
_HLO_NAME = re.compile(r"^[a-z][a-z0-9_\-]*(?:\.\d+)+$")
_SOURCE_FILE = re.compile(r'source_file="((?:[^"\\]|\\.)*)"')
_SOURCE_LINE = re.compile(r"source_line=(\d+)")
_FRAME_ID = re.compile(r"stack_frame_id=(\d+)")
_CHAIN = re.compile(r'chain_id="([^"]*)"')
_CHANNEL = re.compile(r"channel_id=(\d+)")
_TARGET = re.compile(r'custom_call_target="([^"]*)"')
_DIMENSIONS = re.compile(r"(?<![\w_])dimensions=\{([\d,]*)\}")
_CALLS = re.compile(r"\b(?:calls|to_apply|body|condition|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{([^}]*)\}")
# An element type and its dimensions; a dynamic dimension (``<=8``) counts as its bound.
_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\]")
_INLINE_OPERAND = re.compile(r"([^%]*)%([\w.\-]+)(?:#\d+)?")
_TABLE_ROW = re.compile(r'^(\d+)\s+(?:"((?:[^"\\]|\\.)*)"|\{(.*)\})\s*$')


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
    operand_shapes: tuple[str, ...] = ()
    """Each operand's shape where the text prints it inline (older releases; "" for one it does not), else ()."""
    op_name: str = ""
    source: tuple[str, int] | None = None
    """(file, line) of the program that made it, inline or through the stack frame tables."""
    frame_id: int | None = None
    target: str = ""
    """A custom call's target (``lapack_sgetrf_ffi``)."""
    dimensions: tuple[int, ...] = ()
    called: tuple[str, ...] = ()
    """Computations it calls (a fusion's, a while loop's body and condition, a reduction's, a conditional's)."""
    parameter: int | None = None
    """Its number, for a parameter."""
    chain: str = ""
    """``channel_id/chain_id`` of a collective libtpu split into chained instructions (one logical all-gather as
    8, each printing the whole result): the chain moves its result once."""
    inside_kit: bool = False
    """Its metadata named the kit's export wrapper, a jit JAX applies inside itself (dropped): the program's line
    is not in this module, and no neighbour's line may stand in for it."""

    @cached_property
    def arrays(self) -> tuple[Array, ...]:
        """The arrays of its shape, in order (a tuple shape gives several)."""
        return arrays_of(self.shape)

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


def arrays_of(shape: str) -> tuple[Array, ...]:
    """``(f32[4,32,32]{1,2,0}, s32[4]{0})`` → its arrays in order; ``f32[<=8,4]`` counts the bound, 8."""
    found = []
    for dtype, listed in _ARRAY.findall(shape):
        dims = [dim.strip() for dim in listed.replace("<=", "").split(",") if dim.strip()]
        if all(dim.isdigit() for dim in dims):  # an unbounded dynamic dimension (``?``) has no size to count
            found.append(Array(dtype, tuple(int(dim) for dim in dims)))
    return tuple(found)


def delivered(instruction: Instruction) -> tuple[Array, ...]:
    """The arrays a collective delivers to each device: every array of its result, one per operand where XLA
    combined several into one (``(f32[64,32], f32[64]) all-reduce(%a, %b)``, 0.12's gradient sums); of an async
    ``-start`` other than all-reduce's, whose shape is (operands, results, contexts), the results.
    """
    arrays = instruction.arrays
    count = len(instruction.operands)
    if instruction.opcode.endswith("-start") and instruction.opcode != "all-reduce-start" \
            and count and len(arrays) >= 2 * count:
        return arrays[count:2 * count]
    return arrays


def collective_kind(opcode: str) -> str:
    """The collective an opcode is (``all-gather`` for ``all-gather-start`` too); "" for a ``-done`` or any other."""
    kind = opcode[:-len("-start")] if opcode.endswith("-start") else opcode
    return kind if kind in COLLECTIVES else ""


def linalg_kind(target: str) -> str:
    """The linear-algebra op a custom call's target computes (``lu`` for ``cusolver_getrf_ffi``); "" for none."""
    return next((kind for pattern, kind in _LINALG if pattern.search(target)), "") if target else ""


def read_module(path: Path) -> Module:
    """The module in one dump file; OSError when it cannot be read."""
    with open(path, encoding="utf-8", errors="replace") as text:
        return parse_module(_bounded_lines(text))


def read_text(text: str) -> Module:
    """The module in a compiled program's text (``compiled.as_text()``), read as a dump file is."""
    return parse_module(line[:LINE_LIMIT] for line in text.splitlines())


def parse_module(lines: Iterable[str]) -> Module:
    """A module from its text's lines (each already bounded; see `read_module`)."""
    module = Module(name="")
    tables: dict[str, dict[int, str]] = {name: {} for name in SOURCE_TABLES}
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
            if stripped in tables:
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
    drop_kit_sources(module)
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
    if not shape or not opcode:
        return None, False
    operand_text, attributes = _split_operands(rest[opcode.end():])
    code = sys.intern(opcode.group(1))
    names, shapes = _operands(operand_text) if code not in ("constant", "parameter", "iota") else ((), ())
    # Each attribute is looked for only where its key is on the line: most lines have few.
    op_name = _OP_NAME.search(attributes) if "op_name=" in attributes else None
    source_line = _SOURCE_LINE.search(attributes) if "source_line=" in attributes else None
    source_file = _SOURCE_FILE.search(attributes) if source_line else None
    frame = _FRAME_ID.search(attributes) if "stack_frame_id=" in attributes else None
    target = _TARGET.search(attributes) if code == "custom-call" else None
    chain = _CHAIN.search(attributes) if "chain_id=" in attributes else None
    channel = _CHANNEL.search(attributes) if chain else None
    dims = _DIMENSIONS.search(attributes) if "dimensions=" in attributes else None
    return Instruction(
        name=sys.intern(head.group(2)), opcode=code, shape=shape, operands=names, operand_shapes=shapes,
        op_name=sys.intern(op_name.group(1)) if op_name and not _HLO_NAME.match(op_name.group(1)) else "",
        source=(sys.intern(source_file.group(1)), int(source_line.group(1))) if source_file and source_line else None,
        frame_id=int(frame.group(1)) if frame else None,
        target=target.group(1) if target else "",
        chain=f"{channel.group(1) if channel else ''}/{chain.group(1)}" if chain else "",
        dimensions=tuple(int(d) for d in dims.group(1).split(",") if d) if dims else (),
        called=_called(attributes) if ("calls=" in attributes or "to_apply=" in attributes or "body=" in attributes
                                       or "_computation" in attributes) else (),  # a while's condition= has a body=
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


def _operands(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``%a, %b`` → (("a", "b"), ()); older ``f32[2,2]{1,0} %a, ...`` → the names and each one's inline shape."""
    if "/*" in text:
        text = re.sub(r"/\*.*?\*/", "", text)
    if "[" not in text and "(" not in text:  # names alone, as newer releases print them
        # ``%all-reduce.6#1``: element 1 of a tuple-valued instruction (0.12; older releases name a
        # get-tuple-element): the instruction is the operand, so data flow and users reach it.
        return tuple(sys.intern(name.strip().lstrip("%").partition("#")[0]) for name in text.split(",")
                     if name.strip()), ()
    if "%" in text:  # each operand a shape, then its %name
        found = _INLINE_OPERAND.findall(text)
        inline = tuple(shape.strip(", ") for shape, _ in found)
        return tuple(sys.intern(name) for _, name in found), inline if any(inline) else ()
    names: list[str] = []
    shapes: list[str] = []
    for part in _top_level(text):
        words = part.split()
        if words and not words[-1].endswith("}"):
            names.append(sys.intern(words[-1]))
            shapes.append(" ".join(words[:-1]))
    return tuple(names), tuple(shapes) if any(shapes) else ()


def _top_level(text: str) -> list[str]:
    """Split at the commas outside any bracket: an inline shape's dimensions and layout hold commas too."""
    parts: list[str] = []
    depth = start = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _called(attributes: str) -> tuple[str, ...]:
    names = _CALLS.findall(attributes)
    for branches in _BRANCHES.findall(attributes):
        names += [name.strip().lstrip("%") for name in branches.split(",")]
    return tuple(sys.intern(name) for name in names if name)


# Frames that are not the program's: installed packages (jax's own, a library's), the interpreter's, and the kit's
# own files that run inside the program: its compile of an export (its jit of the exported call: the SPMD
# partitioner's Sharding calls are made there), its export wrapper of jax.jit (``return self._jitted(...)``: the
# frame JAX named a jit of its own by, issue 58's "target_export.py:117"), and its sitecustomize files.
_KIT_FILE = (r"[/\\]repro[/\\](target_compile\.py|target_export\.py|target_devices\.py"
             r"|(target|explain)_site[/\\]sitecustomize\.py)$")
_KIT_COMPILE = re.compile(_KIT_FILE)
_NOT_THE_PROGRAM = re.compile(rf"(^<frozen |[/\\](site|dist)-packages[/\\]|{_KIT_FILE})")


def _resolve_frames(module: Module, tables: dict[str, dict[int, str]]) -> None:
    """``stack_frame_id=N`` → (file, line): the innermost frame of the program's own code, walking out from the
    op's own frame past installed packages and the kit's compile; the innermost frame where every one is such."""
    frames, locations, files = tables["StackFrames"], tables["FileLocations"], tables["FileNames"]
    if not frames:
        return
    for _, instruction in module.instructions():
        if instruction.source is not None or instruction.frame_id is None:
            continue
        chain = _frame_chain(frames, instruction.frame_id)
        sources = [found for found in (_frame_source(frames, locations, files, frame) for frame in chain) if found]
        mine = next((found for found in sources if not _NOT_THE_PROGRAM.search(found[0])), None)
        instruction.source = mine or (sources[0] if sources else None)


def _frame_chain(frames: dict[int, str], frame: int) -> list[int]:
    """A frame and its callers, innermost first. XLA prints ``parent_frame_id`` one past the parent's id (1: none):
    in 0.12's tables every frame's parent so read is an earlier frame of the caller's function."""
    chain: list[int] = []
    while frame in frames and frame not in chain and len(chain) < 256:
        chain.append(frame)
        frame = _field(frames[frame], "parent_frame_id") - 1
    return chain


def _frame_source(frames: dict[int, str], locations: dict[int, str], files: dict[int, str],
                  frame: int) -> tuple[str, int] | None:
    location = locations.get(_field(frames.get(frame, ""), "file_location_id"), "")
    file = files.get(_field(location, "file_name_id"))
    line = _field(location, "line")
    return (sys.intern(file), line) if file is not None and line else None


def drop_kit_sources(module: Module) -> None:
    """Inline metadata naming one of the kit's own files (``repro/target_compile.py``, ``repro/target_export.py``)
    is not the program's line: dropped, so the op is placed as a line-less one is (by its op path's line, its
    neighbours', its users'), else said to be on no known line."""
    for _, instruction in module.instructions():
        if instruction.source is not None and _KIT_COMPILE.search(instruction.source[0]):
            instruction.inside_kit = not instruction.source[0].endswith("target_compile.py")
            instruction.source = None


def _field(text: str, key: str) -> int:
    found = re.search(rf"\b{key}=(\d+)", text)
    return int(found.group(1)) if found else 0
