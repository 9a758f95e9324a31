"""A compiled program's fingerprints: per source line and op, is the work split across devices?

A *fingerprint* is one (source line, function, op, pass) of one compiled
module, read from the module after optimizations (partitioned: the shapes
each device holds) beside the same module before them (the global shapes):

* a linear-algebra op (a LAPACK / cuSOLVER custom call, HLO's
  ``triangular-solve`` or ``cholesky``, or what XLA expanded them into) is
  **split** when each device holds a share of its batch, **whole** when every
  device holds the global batch of a program whose inputs are sharded, and
  **gathered** when it is whole and a collective feeds it;
* a collective (all-gather, all-reduce, ...) is **expected** when it sums a
  replicated parameter's gradient or a scalar over the devices (data
  parallelism needs it), else **communication**, with its bytes.

Each instruction is placed on the program's lines by `kit.hlo.source_lines`; what an instruction is (a linalg op,
a collective) is `kit.hlo.instructions`; how the inputs lie over the devices, `kit.hlo.sharding`.
"""

from __future__ import annotations

from typing import Callable

from repro.hlo_text import Computation, Instruction, Module, delivered

from .dataflow import feeders
from .fingerprint import Fingerprint, FingerprintState
from .instructions import COLLECTIVES, LINALG_OPCODES, LINALG_PRIMITIVES, batch_of, collective, elements, is_linalg
from .instructions import primitive
from .op_names import combined_parts
from .sharding import inputs, linalg_state
from .source_lines import SourceLines


def fingerprints(after: Module, before: Module | None = None,
                 shown: Callable[[str], str] | None = None, number: int = 0,
                 read_line: Callable[[str, int], str | None] | None = None) -> list[Fingerprint]:
    """Every linalg op and collective of ``after`` (partitioned), with ``before`` giving the global shapes.

    ``shown``: a callable making a source file the name people read (a path
    relative to the program's folder); the default keeps the file's base name.
    ``number``: the module's number in the dump (modules of one name are told apart by it).
    ``read_line``: the text of a line of the program (the file as the module names it, by default).
    """
    show = shown or (lambda path: path.rsplit("/", 1)[-1])
    context = _Context(after, before, show, read_line)
    context.number = number
    context.lines.resolve_lines()
    found: dict[tuple[str, ...], Fingerprint] = {}
    for computation, instruction in after.instructions():
        if is_linalg(instruction) or context.expanded_on_batch(instruction):
            context.add_linalg(found, computation, instruction)
        elif collective(instruction):
            context.add_collective(found, computation, instruction)
    for fingerprint in found.values():
        context.judge(fingerprint)
    return sorted(found.values(), key=lambda f: (f.location or "~", f.pass_ != "forward", f.op))


def uncompiled(before: Module, shown: Callable[[str], str] | None = None) -> list[Fingerprint]:
    """Each linalg op of a module that was lowered but not compiled (only its text before optimizations): what
    it would do on the devices cannot be told, so its state says that, never split (issue 58: cuSOLVER's potrf,
    compiled without a GPU on jax 0.5.x, "cuSolver internal error")."""
    context = SourceLines(before, before, shown or (lambda path: path.rsplit("/", 1)[-1]))
    found: dict[tuple[str, ...], Fingerprint] = {}
    for computation, instruction in before.instructions():
        if not is_linalg(instruction):
            continue
        location, function, path, pass_ = context.where(instruction)
        if location is None and instruction.op_name:  # a line of the kit's own, dropped: placed as line-less ops are
            location = context.line_of(computation, instruction)
        op = primitive(instruction)
        fingerprint = found.setdefault((location or path, function, op, pass_), Fingerprint(
            before.name, location, function, op, pass_, FingerprintState.CANNOT_TELL, path))
        fingerprint.count += 1
        fingerprint.global_batch = max(fingerprint.global_batch or 0, batch_of(instruction))
    return sorted(found.values(), key=lambda f: (f.location or "~", f.pass_ != "forward", f.op))


class _Context:
    """What judging one module's instructions needs: where they stand, its inputs' shardings, the global batches."""

    def __init__(self, after: Module, before: Module | None, show: Callable[[str], str],
                 read_line: Callable[[str, int], str | None] | None = None) -> None:
        self.after = after
        self.number = 0
        self.lines = SourceLines(after, before, show, read_line)
        self.users = self.lines.users
        self.sharded, self.replicated_sizes, self.shares = inputs(after, before)
        self.global_batches = _global_batches(before, self.lines) if before else {}
        self.loops = {name for c in after.computations.values() for i in c.instructions.values()
                      if i.opcode in ("while", "conditional", "call") for name in i.called}
        self.principal: dict[tuple[str, ...], list[tuple[Computation, Instruction]]] = {}
        self.chains: dict[int, set[str]] = {}  # per collective fingerprint: the chains already counted
        # Collectives the partitioner inserted for a linalg op's operands, which carry that op's own name: what
        # feeds an op XLA expanded into loops, where no instruction of the op is left to walk up from.
        self.named_for: dict[tuple[str, ...], list[Instruction]] = {}
        # Whether the module computes a gradient that its op names mark (a ``transpose(...)`` anywhere in them).
        self.differentiated = any("transpose(" in i.op_name for _, i in after.instructions())

    def add_linalg(self, found: dict[tuple[str, ...], Fingerprint], computation: Computation,
                   instruction: Instruction) -> None:
        # The TPU compiler of some releases (libtpu 0.0.11, jax 0.5.3) drops a custom call's metadata.
        twin = None if instruction.op_name else self.lines.twin(computation, instruction)
        named = instruction if instruction.op_name else twin or self.lines.attributed(computation, instruction)
        location, function, path, pass_ = self.lines.where(named)
        if location is None and named.op_name:
            location = self.lines.line_of(computation, named)
        op = primitive(twin or instruction)
        fingerprint = found.setdefault(("linalg", location or path, function, op, pass_), Fingerprint(
            self.after.name, location, function, op, pass_, FingerprintState.REPLICATED, path))  # judged below
        batch = batch_of(instruction)
        if not is_linalg(instruction):  # expanded on the batch: a column per matrix, the batch its leading extent
            batch = next(a.dims[0] for a in instruction.arrays if len(a.dims) == 2)
        elif not (instruction.target or instruction.opcode in LINALG_OPCODES):
            # A piece of an expanded op holds the batch in its leading extent, other extents beside it: inv's solves
            # on 0.4.35's CPU, vmapped over the identity's columns, f32[512,12,1,12], read "6144 of 512" (t12).
            lead = next((a.dims[0] for a in instruction.arrays if len(a.dims) >= 2), None)
            if lead is not None and lead in self.sharded | self.shares:
                batch = min(batch, lead)
        if instruction.target or instruction.opcode in LINALG_OPCODES:
            # The op itself says what each device holds; what XLA expanded it into only where it was expanded.
            fingerprint.device_batch = max(fingerprint.device_batch or 0, batch) if fingerprint.count else batch
            fingerprint.count += 1
            if instruction.target and instruction.target not in fingerprint.targets:
                fingerprint.targets.append(instruction.target)
            self.principal.setdefault(_key(fingerprint), []).append((computation, instruction))
            fingerprint.in_loop = fingerprint.in_loop or computation.name in self.loops
        elif not fingerprint.count:
            fingerprint.device_batch = max(fingerprint.device_batch or 0, batch)

    def expanded_on_batch(self, instruction: Instruction) -> bool:
        """What XLA expanded a batched linalg op into, where it holds a matrix's column per batch element: the
        CPU backend of 0.4.35 left of ``solve_triangular``'s backward (rhs f32[512,8,1]) only a
        dynamic-update-slice f32[512,8], so the op was missing from the tables (the trial of issue 58). Rank 2
        counts only where its leading extent is the sharded batch (global or a device's share)."""
        return (primitive(instruction) in LINALG_PRIMITIVES - {"lu_pivots_to_permutation"}
                and not collective(instruction)
                and any(len(a.dims) == 2 and a.dims[0] in self.sharded | self.shares for a in instruction.arrays))

    def add_collective(self, found: dict[tuple[str, ...], Fingerprint], computation: Computation,
                       instruction: Instruction) -> None:
        expected = self.expected(instruction, computation)
        # A combined all-reduce is named for its first part (the loss sum, forward): where another part holds the
        # batch, that part's own op says the pass and the call (0.8.0's det backward was said to be "forward").
        named = (None if expected else self.batch_part(computation, instruction)) or self.lines.attributed(
            computation, instruction)
        location, function, path, pass_ = self.lines.where(named)
        if location is None and named.op_name:
            location = self.lines.line_of(computation, named)
        part = None if expected or named is not instruction else self.batch_part_name(instruction)
        if part is not None:  # no get-tuple-element to read (0.12 dumps write its users' operands as %all-reduce.3#1)
            location, function, path, pass_ = self.lines.where_named(part, location)
        kind = collective(instruction)
        pass_ = self.gradient_pass(instruction, path, pass_, expected)
        fingerprint = found.setdefault(("collective", location or path, function, kind, pass_), Fingerprint(
            self.after.name, location, function, kind, pass_, FingerprintState.EXPECTED, path))
        fingerprint.count += 1
        if not instruction.chain or instruction.chain not in self.chains.setdefault(id(fingerprint), set()):
            self.chains.setdefault(id(fingerprint), set()).add(instruction.chain)
            fingerprint.bytes_per_device += sum(a.bytes for a in delivered(instruction))
        fingerprint.dims = sorted(set(fingerprint.dims) | set(instruction.dimensions))
        fingerprint.in_loop = fingerprint.in_loop or computation.name in self.loops
        if not expected:
            fingerprint.state = FingerprintState.COMMUNICATION
        if primitive(named) in LINALG_PRIMITIVES:
            self.named_for.setdefault((location or path, function, primitive(named), pass_), []).append(instruction)

    def gradient_pass(self, instruction: Instruction, path: str, pass_: str, expected: bool) -> str:
        """``backward`` for the data-parallel sum of a replicated parameter's gradient where the op names say no
        pass: jax 0.4.35 to 0.5.3 mark the passes only inside a named jit, so w's gradient sum read
        ``jit(main)/dot_general`` (CPU) or ``jit(main)/transpose`` (the transpose primitive, GPU) and was said
        "forward", beside 0.12.0's ``transpose(jvp(vmap()))/dot_general`` "backward" for the same sum (t9). An
        expected sum that holds more than a scalar, in a module whose names do mark a backward pass elsewhere, is
        a parameter's gradient; a scalar's (the loss) keeps its name's pass."""
        if pass_ != "forward" or not expected or not self.differentiated or "(" in path:
            return pass_
        return "backward" if any(elements(array.dims) > 1 for array in delivered(instruction)) else pass_

    def batch_part_name(self, instruction: Instruction) -> str | None:
        """Of a combined collective whose name lists its parts (jax 0.12: ``jit(f)/(jvp()/reduce_sum:transpose(
        jvp(jit(det)))/scatter-add)``, one per element of its tuple, in order), the part holding the batch; None for
        one array, or none such. The trial's A2 on 0.12.0 said det's backward sum "forward", named for the loss."""
        parts, arrays = combined_parts(instruction.op_name), delivered(instruction)
        extents = self.sharded | self.shares
        if len(parts) < 2 or len(parts) != len(arrays) or not extents:
            return None
        return next((part for part, array in zip(parts, arrays) if any(extent in extents for extent in array.dims)),
                    None)

    def batch_part(self, computation: Computation, instruction: Instruction) -> Instruction | None:
        """Of a combined (tuple) collective, the get-tuple-element that takes a part holding the batch, where
        it names its source; None for one array, or none such."""
        extents = self.sharded | self.shares
        if len(instruction.arrays) < 2 or not extents:
            return None
        for name in self.users[computation.name].get(instruction.name, ()):
            user = computation.instructions.get(name)
            if (user is not None and user.opcode == "get-tuple-element" and user.source is not None
                    and any(extent in extents for array in user.arrays for extent in array.dims)):
                return user
        return None

    def expected(self, instruction: Instruction, computation: Computation) -> bool:
        """A sum over the devices of partial gradients of replicated parameters, or of a scalar: data parallelism.

        XLA may combine the gradient and loss sums into one all-reduce: a tuple ``(f32[], f32[], f32[3],
        f32[8,8])`` on the CPU (jax 0.8), one concatenated f32[65] on GPUs (0.5.3 to 0.7). Where the batch is what
        is sharded, any sum over the devices that holds no batch dimension is a sum over the batch, the
        data-parallel sum; one that holds the batch (f32[256,6,6] of a det's backward) combines whole batches,
        which is the communication to flag (the trial of issue 58 flagged the combined sums as unexpected)."""
        if collective(instruction) not in ("all-reduce", "reduce-scatter"):
            return False
        # A sum of scalars holds no batch whatever it is named for: libtpu 0.12's svd agrees on its QDWH and eigh
        # loops' stopping tests with u32[] all-reduces named ``.../eigh`` (t10: said "communication", 16 B,
        # where 0.7.0 named the same sums ``while`` and said expected).
        if all(elements(array.dims) == 1 for array in instruction.arrays):
            return True
        if primitive(instruction) in LINALG_PRIMITIVES:
            return False
        if all(self._replicated_size(array.dims) for array in instruction.arrays):
            return True
        if self.sharded:
            extents = self.sharded | self.shares
            return not any(extent in extents for array in instruction.arrays for extent in array.dims)
        # XLA's GPU compiler concatenates the gradients into one buffer, sums it once and slices it apart again
        # (f32[10432] for six parameters on 0.12): then each slice its users take is a parameter's.
        users = [computation.instructions.get(name) for name in self.users[computation.name].get(instruction.name, ())]
        return bool(users) and len(instruction.arrays) == 1 and all(
            user is not None and user.arrays and all(self._replicated_size(a.dims) for a in user.arrays)
            for user in users)

    def _replicated_size(self, dims: tuple[int, ...]) -> bool:
        size = elements(dims)
        return size == 1 or size in self.replicated_sizes

    def judge(self, fingerprint: Fingerprint) -> None:
        if fingerprint.op in COLLECTIVES:  # expected, or communication where `add_collective` found it so
            return
        key = _key(fingerprint)[1:]
        # A release that keeps an inner jit as a called computation names its ops there without the source
        # line or the function (jax 0.12's "vmap()/lu"): the op alone then finds its global batch.
        fingerprint.global_batch = self.global_batches.get(key) or self.global_batches.get(("", "", key[2], ""))
        feeding = [c for comp, i in self.principal.get(_key(fingerprint), []) for c in feeders(comp, i, self.after.computations)]
        # And each collective named for the op itself: 0.4.35's CPU backend expands a triangular solve into loops,
        # whose all-gathers (f32[64,6,6] -> f32[256,6,6]) the trial's A2 left out ("fed by an all-gather of
        # 36 KiB" of det's LU and its three solves, each fed by one of 36 KiB).
        feeding = list({c.name: c for c in feeding + self.named_for.get(key, [])}.values())
        fingerprint.fed_by = sorted({collective(c) for c in feeding})
        # What each collective delivers (an async -start's results, not its operands too: 0.5.x on GPUs said
        # 80 KiB for an all-gather of 64 KiB), each once.
        # A chain libtpu split one all-gather into (8 instructions, each printing the whole result) counts once:
        # the trial's slogdet was said to be fed by 1.1 MiB where its one all-gather moves 144 KiB.
        feeding = list({c.chain or c.name: c for c in feeding}.values())
        fingerprint.fed = {f"{self.number}/{c.name}": sum(a.bytes for a in delivered(c)) for c in feeding}
        fingerprint.bytes_per_device = sum(fingerprint.fed.values())
        fingerprint.state = linalg_state(fingerprint, self.after.partitions, self.sharded)


def _key(fingerprint: Fingerprint) -> tuple[str, ...]:
    return ("linalg", fingerprint.location or fingerprint.op_path, fingerprint.function, fingerprint.op,
            fingerprint.pass_)


def _global_batches(before: Module, lines: SourceLines) -> dict[tuple[str, ...], int]:
    """Per (line, function, op, pass), the largest batch the unpartitioned module gives the op."""
    batches: dict[tuple[str, ...], int] = {}
    for _, instruction in before.instructions():
        if is_linalg(instruction):
            location, function, path, pass_ = lines.where(instruction)
            key = (location or path, function, primitive(instruction), pass_)
            by_op = ("", "", key[2], "")
            for each in (key, by_op):
                batches[each] = max(batches.get(each, 0), batch_of(instruction))
    return batches
