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

A collective the SPMD partitioner inserts may carry no source line (only a
parameter's name): it is attributed to the first of its users that has one.
The TPU compiler of some releases (libtpu 0.0.11, jax 0.5.3) drops a linalg
custom call's metadata: the call is then named by its twin before
optimizations (the same op, with its source line), chosen by where its
operands come from, else where its users go (`_Context.twin`).
"""

from __future__ import annotations

import enum
import re
from collections import deque
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Callable, Iterable

from repro.hlo_text import COLLECTIVES as _COLLECTIVES
from repro.hlo_text import Computation, Instruction, Module, collective_kind, delivered, linalg_kind

from ..json_types import JsonObject

LINALG_PRIMITIVES = frozenset({"lu", "cholesky", "triangular_solve", "qr", "householder_product", "eigh", "eig",
                               "svd", "schur", "hessenberg", "tridiagonal", "tridiagonal_solve", "geqrf", "geqp3",
                               "lu_pivots_to_permutation"})
LINALG_OPCODES = frozenset({"triangular-solve", "cholesky"})
COLLECTIVES = frozenset(_COLLECTIVES)


class FingerprintState(str, enum.Enum):
    """How one fingerprint's work is laid over the devices (the module's docstring says each).

    A `str` enum: a member is equal to (and hashes as) the word a record, a
    kept run or a catalogue entry holds, so what was written before this type
    existed compares equal, and ``json.dumps`` writes the word.
    """

    SPLIT = "split"
    WHOLE = "whole"
    GATHERED = "gathered"
    REPLICATED = "replicated"
    ONE_DEVICE = "one device"
    EXPECTED = "expected"
    COMMUNICATION = "communication"
    CANNOT_TELL = "cannot tell"
    """In a module that was not compiled (the target's compiler refused it): read before optimizations only."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return format(str.__str__(self), spec)


HOLDS_WHOLE = frozenset({FingerprintState.WHOLE, FingerprintState.GATHERED})
"""A linalg op that holds the whole batch on every device: what the explain check and a per-op bisect flag."""
FLAGGED = frozenset({*HOLDS_WHOLE, FingerprintState.COMMUNICATION})
EXPORTED_CALL = "call_exported"  # the op path's step into a module compiled from a jax.export
FEED_HOPS = 6  # how far up a linalg op's operands a collective still "feeds" it

_JIT_ANY = re.compile(r"^p?jit\(.*\)$")
_MAIN = frozenset({"jit(main)", "pjit(main)"})
_FUNCTION = re.compile(r"jit\(([A-Za-z_]\w*)\)")


@dataclass
class Fingerprint:
    """One (source line, function, op, pass) of one module, with its state and figures."""

    module: str
    location: str | None
    """``file:line`` of the program ("" where JAX's own code made it: then the op path names it)."""
    function: str
    """The JAX function the op belongs to (``slogdet``), from the op path."""
    op: str
    """The primitive (``lu``, ``triangular_solve``) or the collective (``all-gather``)."""
    pass_: str
    """``forward`` or ``backward`` (the op path is under ``transpose(...)``)."""
    state: FingerprintState
    op_path: str
    count: int = 0
    bytes_per_device: int = 0
    """A collective's result bytes on each device (every array of one XLA combined), summed over its instructions;
    for an op, what fed it."""
    global_batch: int | None = None
    device_batch: int | None = None
    fed_by: list[str] = field(default_factory=list)
    dims: list[int] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    in_loop: bool = False
    """Some of its instructions sit in a loop or another called computation: they may run more than once."""
    fed: dict[str, int] = field(default_factory=dict)
    """For an op, each collective that fed it (``3/all-gather-start``: module 3's instruction) and the bytes it
    delivered to each device: ops of one line fed by the same all-gather count it once."""

    def __post_init__(self) -> None:
        # The word a kept run, a record or a test hands in is read as its member here, once (ValueError for a
        # word that is none), so every reader may ask ``state is FingerprintState.SPLIT``.
        self.state = FingerprintState(self.state)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What the same op in another release's compile is matched by."""
        return (self.location or self.op_path, self.function, self.op, self.pass_)

    @property
    def flagged(self) -> bool:
        return self.state in FLAGGED

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Fingerprint:
        """`to_json`'s dict back (KeyError, TypeError or ValueError, for an unknown state, for one that is not)."""
        fields = {**data, "pass_": data["pass"]}
        del fields["pass"]
        return cls(**fields)  # type: ignore[arg-type]  # the JSON edge: a wrong field is the TypeError said above

    def to_json(self) -> JsonObject:
        return {"module": self.module, "location": self.location, "function": self.function, "op": self.op,
                "pass": self.pass_, "state": self.state, "op_path": self.op_path, "count": self.count,
                "bytes_per_device": self.bytes_per_device, "global_batch": self.global_batch,
                "device_batch": self.device_batch, "fed_by": self.fed_by, "dims": self.dims,
                "targets": self.targets, "in_loop": self.in_loop, **({"fed": dict(self.fed)} if self.fed else {})}


def fingerprints(after: Module, before: Module | None = None,
                 shown: Callable[[str], str] | None = None, number: int = 0) -> list[Fingerprint]:
    """Every linalg op and collective of ``after`` (partitioned), with ``before`` giving the global shapes.

    ``shown``: a callable making a source file the name people read (a path
    relative to the program's folder); the default keeps the file's base name.
    ``number``: the module's number in the dump (modules of one name are told apart by it).
    """
    show = shown or (lambda path: path.rsplit("/", 1)[-1])
    context = _Context(after, before, show)
    context.number = number
    context.resolve_lines()
    found: dict[tuple[str, ...], Fingerprint] = {}
    for computation, instruction in after.instructions():
        if _is_linalg(instruction) or context.expanded_on_batch(instruction):
            context.add_linalg(found, computation, instruction)
        elif _collective(instruction):
            context.add_collective(found, computation, instruction)
    for fingerprint in found.values():
        context.judge(fingerprint)
    return sorted(found.values(), key=lambda f: (f.location or "~", f.pass_ != "forward", f.op))


def uncompiled(before: Module, shown: Callable[[str], str] | None = None) -> list[Fingerprint]:
    """Each linalg op of a module that was lowered but not compiled (only its text before optimizations): what
    it would do on the devices cannot be told, so its state says that, never split (issue 58: cuSOLVER's potrf,
    compiled without a GPU on jax 0.5.x, "cuSolver internal error")."""
    context = _Context(before, before, shown or (lambda path: path.rsplit("/", 1)[-1]))
    found: dict[tuple[str, ...], Fingerprint] = {}
    for computation, instruction in before.instructions():
        if not _is_linalg(instruction):
            continue
        location, function, path, pass_ = context.where(instruction)
        if location is None and instruction.op_name:  # a line of the kit's own, dropped: placed as line-less ops are
            location = context.line_of(computation, instruction)
        op = _primitive(instruction)
        fingerprint = found.setdefault((location or path, function, op, pass_), Fingerprint(
            before.name, location, function, op, pass_, FingerprintState.CANNOT_TELL, path))
        fingerprint.count += 1
        fingerprint.global_batch = max(fingerprint.global_batch or 0, _batch(instruction))
    return sorted(found.values(), key=lambda f: (f.location or "~", f.pass_ != "forward", f.op))


class _Context:
    """What judging one module's instructions needs: its users, its inputs' shardings, the global batches."""

    def __init__(self, after: Module, before: Module | None, show: Callable[[str], str]) -> None:
        self.after, self.show = after, show
        self.number = 0
        self.prefix = {f"jit({after.name.removeprefix('jit_')})", "jit(main)", "pjit(main)"}
        self.users = {c.name: _users(c) for c in after.computations.values()}
        self.sharded, self.replicated_sizes, self.shares = _inputs(after, before)
        self.global_batches = _global_batches(before, self) if before else {}
        self.loops = {name for c in after.computations.values() for i in c.instructions.values()
                      if i.opcode in ("while", "conditional", "call") for name in i.called}
        self.principal: dict[tuple[str, ...], list[tuple[Computation, Instruction]]] = {}
        # Collectives the partitioner inserted for a linalg op's operands, which carry that op's own name: what
        # feeds an op XLA expanded into loops, where no instruction of the op is left to walk up from.
        self.named_for: dict[tuple[str, ...], list[Instruction]] = {}
        self.path_lines: dict[str, set[str]] = {}
        # The module before optimizations, by op path: its paths start at the program's own jit (jit(<lambda>)),
        # which the compiled module's paths are stripped of.
        self.before_lines: dict[str, set[str]] = {}
        for _, instruction in before.instructions() if before else ():
            if instruction.source is not None and instruction.op_name:
                line = f"{show(instruction.source[0])}:{instruction.source[1]}"
                path = self.op_path(instruction.op_name)
                for each in {path, path.partition("/")[2] if _JIT_ANY.match(path.partition("/")[0]) else path}:
                    self.before_lines.setdefault(each, set()).add(line)
        for _, instruction in after.instructions():
            if instruction.source is not None and instruction.op_name:
                line = f"{show(instruction.source[0])}:{instruction.source[1]}"
                _add_line(self.path_lines, self.op_path(instruction.op_name), line)
        self.twins: dict[str, list[Instruction]] = {}
        for _, instruction in before.instructions() if before else ():
            if instruction.source is not None and _is_linalg(instruction) and _family(instruction):
                self.twins.setdefault(_family(instruction), []).append(instruction)

    def where(self, instruction: Instruction) -> tuple[str | None, str, str, str]:
        location = f"{self.show(instruction.source[0])}:{instruction.source[1]}" if instruction.source else None
        path = self.op_path(instruction.op_name)
        function = next(iter(_FUNCTION.findall(path)), "") or path.rsplit("/", 1)[-1]
        return location, function, path, "backward" if "transpose(" in path else "forward"

    def op_path(self, op_name: str) -> str:
        parts = first_combined(op_name).split("/")
        while len(parts) > 1 and (parts[0] in self.prefix
                                  or parts[1] in (*_MAIN, EXPORTED_CALL) and _JIT_ANY.match(parts[0])):
            # The program's outer jit, whatever it is called (``jit(<lambda>)`` of a jitted lambda, as the issue-58
            # program's dict of losses has: its function was said as "main"), then JAX's own ``jit(main)``.
            parts = parts[1:]
        if len(parts) > 2 and parts[0] == EXPORTED_CALL:
            # Compiled for a target from an export (`repro.target_compile`): the program's own jit is one level down.
            parts = parts[2:] if parts[1].startswith(("jit(", "pjit(")) else parts[1:]
        return "/".join(parts)

    def add_linalg(self, found: dict[tuple[str, ...], Fingerprint], computation: Computation,
                   instruction: Instruction) -> None:
        # The TPU compiler of some releases (libtpu 0.0.11, jax 0.5.3) drops a custom call's metadata.
        twin = None if instruction.op_name else self.twin(computation, instruction)
        named = instruction if instruction.op_name else twin or self.attributed(computation, instruction)
        location, function, path, pass_ = self.where(named)
        if location is None and named.op_name:
            location = self.line_of(computation, named)
        op = _primitive(twin or instruction)
        fingerprint = found.setdefault(("linalg", location or path, function, op, pass_), Fingerprint(
            self.after.name, location, function, op, pass_, FingerprintState.REPLICATED, path))  # judged below
        batch = _batch(instruction)
        if not _is_linalg(instruction):  # expanded on the batch: a column per matrix, the batch its leading extent
            batch = next(a.dims[0] for a in instruction.arrays if len(a.dims) == 2)
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
        return (_primitive(instruction) in LINALG_PRIMITIVES - {"lu_pivots_to_permutation"}
                and not _collective(instruction)
                and any(len(a.dims) == 2 and a.dims[0] in self.sharded | self.shares for a in instruction.arrays))

    def add_collective(self, found: dict[tuple[str, ...], Fingerprint], computation: Computation,
                       instruction: Instruction) -> None:
        expected = self.expected(instruction, computation)
        # A combined all-reduce is named for its first part (the loss sum, forward): where another part holds the
        # batch, that part's own op says the pass and the call (0.8.0's det backward was said to be "forward").
        named = (None if expected else self.batch_part(computation, instruction)) or self.attributed(
            computation, instruction)
        location, function, path, pass_ = self.where(named)
        if location is None and named.op_name:
            location = self.line_of(computation, named)
        kind = _collective(instruction)
        fingerprint = found.setdefault(("collective", location or path, function, kind, pass_), Fingerprint(
            self.after.name, location, function, kind, pass_, FingerprintState.EXPECTED, path))
        fingerprint.count += 1
        fingerprint.bytes_per_device += sum(a.bytes for a in delivered(instruction))
        fingerprint.dims = sorted(set(fingerprint.dims) | set(instruction.dimensions))
        fingerprint.in_loop = fingerprint.in_loop or computation.name in self.loops
        if not expected:
            fingerprint.state = FingerprintState.COMMUNICATION
        if _primitive(named) in LINALG_PRIMITIVES:
            self.named_for.setdefault((location or path, function, _primitive(named), pass_), []).append(instruction)

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

    def attributed(self, computation: Computation, instruction: Instruction) -> Instruction:
        """The instruction whose source names a collective: its own, or its first user's (SPMD-inserted)."""
        if instruction.source is not None and "/" in instruction.op_name:
            return instruction
        queue, seen = list(self.users[computation.name].get(instruction.name, ())), set()
        while queue:
            user = computation.instructions.get(queue.pop(0))
            if user is None or user.name in seen:
                continue
            seen.add(user.name)
            if user.source is not None:
                return user
            queue += self.users[computation.name].get(user.name, ())
        return instruction

    def resolve_lines(self) -> None:
        """Each linalg op path whose instructions name no line, given the line one of them is found at
        (`line_of`): the rest, in fused computations with no neighbour that names one, take it too."""
        found: dict[str, set[str]] = {}
        for computation, instruction in self.after.instructions():
            if instruction.source is None and instruction.op_name and _is_linalg(instruction):
                path = self.op_path(instruction.op_name)
                if path not in self.path_lines:
                    line = self.line_of(computation, instruction)
                    if line is not None:
                        found.setdefault(path, set()).add(line)
        for path, lines in found.items():
            for line in lines:
                _add_line(self.path_lines, path, line)

    def line_of(self, computation: Computation, instruction: Instruction) -> str | None:
        """The source line of an op whose own metadata names none: the one line its op path (or the nearest path
        it is within) has in the module, else the nearest instruction of the same JAX op that names one, else
        its twin before optimizations. The TPU compiler of
        jax 0.8.x keeps ``op_name`` on its LU custom call and drops the line, which the instructions XLA made
        around it keep: without this the op was placed in "(JAX's own code)" and ``bisect --op FILE:LINE`` passed
        over those releases (issue 58)."""
        path = self.op_path(instruction.op_name)
        for candidate in dict.fromkeys((path, _untransposed(path))):
            parts = candidate.split("/")
            for count in range(len(parts), 0, -1):  # the op path, then each path it is within, with one line only
                lines = self.path_lines.get("/".join(parts[:count]), set())
                if len(lines) == 1:
                    return next(iter(lines))
                if lines:
                    break  # several lines call this op path (one function called twice): its neighbours decide
        if instruction.inside_kit:
            # Named by the kit's export wrapper (a jit of JAX's own, jax.scipy's solve_triangular): its neighbours
            # are other lines' ops (the cholesky before it, one line up), so the line is said to be unknown.
            return None
        for step in (lambda name: computation.instructions[name].operands,
                     lambda name: self.users[computation.name].get(name, ())):
            for neighbour in _sourced(computation, instruction, step):
                theirs = self.op_path(neighbour.op_name)
                if theirs and (path.startswith(theirs + "/") or theirs.startswith(path + "/") or theirs == path):
                    return self.where(neighbour)[0]
        twin = self.twin(computation, instruction)
        if twin is not None:
            return self.where(twin)[0]
        lines = self.before_lines.get(path, set()) or self.before_lines.get(_untransposed(path), set())
        return next(iter(lines)) if len(lines) == 1 else None

    def twin(self, computation: Computation, instruction: Instruction) -> Instruction | None:
        """The op before optimizations that a linalg call without metadata is: one of its kind, at the source line
        its operands come from, nearest first, else the line its users go to, else the one line such ops have.

        Its operands first: XLA may fuse what follows two ops into one instruction named for the later line
        (jax 0.5.3 for TPU: the sort after eigh on line 6 and svd's on line 7, one fusion of line 7).
        """
        twins = self.twins.get(_family(instruction), [])
        lines = {self.where(each)[0] for each in twins}
        if not twins:
            return None
        for step in (lambda name: computation.instructions[name].operands,
                     lambda name: self.users[computation.name].get(name, ())):
            for neighbour in _sourced(computation, instruction, step):
                location, _, _, pass_ = self.where(neighbour)
                if location in lines:
                    there = [each for each in twins if self.where(each)[0] == location]
                    return next((each for each in there if self.where(each)[3] == pass_), there[0])
        return twins[0] if len(lines) == 1 else None

    def expected(self, instruction: Instruction, computation: Computation) -> bool:
        """A sum over the devices of partial gradients of replicated parameters, or of a scalar: data parallelism.

        XLA may combine the gradient and loss sums into one all-reduce: a tuple ``(f32[], f32[], f32[3],
        f32[8,8])`` on the CPU (jax 0.8), one concatenated f32[65] on GPUs (0.5.3 to 0.7). Where the batch is what
        is sharded, any sum over the devices that holds no batch dimension is a sum over the batch, the
        data-parallel sum; one that holds the batch (f32[256,6,6] of a det's backward) combines whole batches,
        which is the communication to flag (the trial of issue 58 flagged the combined sums as unexpected)."""
        if _collective(instruction) not in ("all-reduce", "reduce-scatter"):
            return False
        if _primitive(instruction) in LINALG_PRIMITIVES:
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
        size = _elements(dims)
        return size == 1 or size in self.replicated_sizes

    def judge(self, fingerprint: Fingerprint) -> None:
        if fingerprint.op in COLLECTIVES:  # expected, or communication where `add_collective` found it so
            return
        key = _key(fingerprint)[1:]
        # A release that keeps an inner jit as a called computation names its ops there without the source
        # line or the function (jax 0.12's "vmap()/lu"): the op alone then finds its global batch.
        fingerprint.global_batch = self.global_batches.get(key) or self.global_batches.get(("", "", key[2], ""))
        feeding = [c for comp, i in self.principal.get(_key(fingerprint), []) for c in _feeders(comp, i)]
        # And each collective named for the op itself: 0.4.35's CPU backend expands a triangular solve into loops,
        # whose all-gathers (f32[64,6,6] -> f32[256,6,6]) the trial's A2 left out ("fed by an all-gather of
        # 36 KiB" of det's LU and its three solves, each fed by one of 36 KiB).
        feeding = list({c.name: c for c in feeding + self.named_for.get(key, [])}.values())
        fingerprint.fed_by = sorted({_collective(c) for c in feeding})
        # What each collective delivers (an async -start's results, not its operands too: 0.5.x on GPUs said
        # 80 KiB for an all-gather of 64 KiB), each once.
        fingerprint.fed = {f"{self.number}/{c.name}": sum(a.bytes for a in delivered(c)) for c in feeding}
        fingerprint.bytes_per_device = sum(fingerprint.fed.values())
        fingerprint.state = _linalg_state(fingerprint, self.after.partitions, self.sharded)


def first_combined(op_name: str) -> str:
    """The op name of the first op an instruction XLA combined from several stands for, the name itself otherwise.

    jax 0.12 names a combined all-reduce by its parts in parentheses, ``:`` between them:
    ``jit(f)/(jvp()/reduce_sum:transpose(jvp(btc,dc->btd))/dot_general)``; split at ``/`` that was read as the
    function ``dot_general)`` on the backward pass (the trial's spectral_windows.py:24 on 0.12.0), a row of its own
    beside 0.8.0's ``reduce_sum`` (forward) of the same line. Its source line is the first part's."""
    start = op_name.find("/(") + 1 if not op_name.startswith("(") else 0
    if not op_name.endswith(")") or (start == 0 and not op_name.startswith("(")):
        return op_name
    depth, parts, begun = 0, [], start + 1
    for index in range(start, len(op_name)):
        char = op_name[index]
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and index < len(op_name) - 1:
            return op_name  # the parenthesis closes before the end: not one combined name
        if depth == 1 and char == ":":
            parts.append(op_name[begun:index])
            begun = index + 1
    if not parts:
        return op_name  # one part in parentheses: nothing was combined
    return op_name[:start] + parts[0]


def _add_line(lines: dict[str, set[str]], path: str, line: str) -> None:
    """``line`` for ``path`` and for every path it is within (``jvp(jit(qr))`` for ``jvp(jit(qr))/geqrf``)."""
    parts = path.split("/")
    for count in range(1, len(parts) + 1):
        lines.setdefault("/".join(parts[:count]), set()).add(line)


def _untransposed(path: str) -> str:
    """The forward call a backward op path transposes: ``jvp(jit(inv))/x`` for ``transpose(jvp(jit(inv)))/x``
    (the same line of the program)."""
    head, _, rest = path.partition("/")
    if head.startswith("transpose(") and head.endswith(")"):
        return head[len("transpose("):-1] + ("/" + rest if rest else "")
    return path


def _linalg_state(fingerprint: Fingerprint, partitions: int, sharded: set[int]) -> FingerprintState:
    device, global_ = fingerprint.device_batch, fingerprint.global_batch
    if partitions <= 1:
        return FingerprintState.ONE_DEVICE
    if device is not None and global_ is not None and device < global_:
        return FingerprintState.SPLIT
    whole = device is not None and (device == global_ or (global_ is None and device in sharded))
    if whole and sharded:
        return FingerprintState.GATHERED if fingerprint.fed_by else FingerprintState.WHOLE
    return FingerprintState.REPLICATED


def _key(fingerprint: Fingerprint) -> tuple[str, ...]:
    return ("linalg", fingerprint.location or fingerprint.op_path, fingerprint.function, fingerprint.op,
            fingerprint.pass_)


def _global_batches(before: Module, context: _Context) -> dict[tuple[str, ...], int]:
    """Per (line, function, op, pass), the largest batch the unpartitioned module gives the op."""
    batches: dict[tuple[str, ...], int] = {}
    for _, instruction in before.instructions():
        if _is_linalg(instruction):
            location, function, path, pass_ = context.where(instruction)
            key = (location or path, function, _primitive(instruction), pass_)
            by_op = ("", "", key[2], "")
            for each in (key, by_op):
                batches[each] = max(batches.get(each, 0), _batch(instruction))
    return batches


def _inputs(after: Module, before: Module | None) -> tuple[set[int], set[int], set[int]]:
    """The global extents of the dimensions the partitioner split, the element counts of replicated inputs, and
    the extents each device holds of the split dimensions.

    An entry parameter is sharded where its partitioned shape is smaller than
    its global one (no sharding syntax to parse: XLA's changed between releases).
    """
    local = _parameters(after)
    global_ = _parameters(before) if before else local
    sharded: set[int] = set()
    replicated: set[int] = set()
    shares: set[int] = set()
    for number, dims in global_.items():
        mine = local.get(number)
        if mine is None or len(mine) != len(dims):
            continue
        shrunk = [g for g, m in zip(dims, mine) if m < g]
        sharded |= set(shrunk)
        shares |= {m for g, m in zip(dims, mine) if m < g}
        if not shrunk:
            replicated.add(_elements(dims))
    return sharded, replicated, shares


def _parameters(module: Module) -> dict[int, tuple[int, ...]]:
    entry = module.entry
    if entry is None:
        return {}
    return {i.parameter: i.arrays[0].dims for i in entry.instructions.values()
            if i.opcode == "parameter" and i.parameter is not None and len(i.arrays) == 1}


def _feeders(computation: Computation, instruction: Instruction) -> list[Instruction]:
    """Collectives among the operands of ``instruction``, up to FEED_HOPS steps up, in its computation."""
    found, frontier, seen = [], list(instruction.operands), set()
    for _ in range(FEED_HOPS):
        following: list[str] = []
        for name in frontier:
            operand = computation.instructions.get(name)
            if operand is None or name in seen:
                continue
            seen.add(name)
            if _collective(operand):
                found.append(operand)
            else:
                following += operand.operands
        frontier = following
    return found


def _sourced(computation: Computation, start: Instruction, step: Callable[[str], Iterable[str]]) -> Iterable[Instruction]:
    """The instructions with a source line nearest ``start`` one ``step`` at a time (its operands, or its users),
    breadth first; the walk stops at each one it yields."""
    queue, seen = deque(step(start.name)), {start.name}
    while queue:
        name = queue.popleft()
        found = computation.instructions.get(name)
        if found is None or name in seen:
            continue
        seen.add(name)
        if found.source is not None:
            yield found
        else:
            queue.extend(step(name))


def _users(computation: Computation) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {}
    for instruction in computation.instructions.values():
        for operand in instruction.operands:
            users.setdefault(operand, []).append(instruction.name)
    return users


def _is_linalg(instruction: Instruction) -> bool:
    if instruction.opcode == "custom-call":
        return bool(linalg_kind(instruction.target))
    if instruction.opcode in LINALG_OPCODES:
        return True
    # What XLA expanded a linalg op into (a CPU triangular solve on older releases): named by its op path.
    return (_primitive(instruction) in LINALG_PRIMITIVES and any(len(a.dims) >= 3 for a in instruction.arrays)
            and not _collective(instruction))


def _family(instruction: Instruction) -> str:
    """What a linalg op computes, whatever the compiler calls it: a custom call's kind (``lu`` for both
    LuDecomposition and LuDecompositionBlock), or the HLO op's (``cholesky``, ``triangular_solve``)."""
    if instruction.opcode == "custom-call":
        return linalg_kind(instruction.target)
    return instruction.opcode.replace("-", "_") if instruction.opcode in LINALG_OPCODES else ""


def _primitive(instruction: Instruction) -> str:
    last = first_combined(instruction.op_name).rsplit("/", 1)[-1]
    if last in LINALG_PRIMITIVES or not (instruction.target or instruction.opcode in LINALG_OPCODES):
        return last
    # No op name says it (the TPU compiler's custom calls of some releases, or their own name): what it computes.
    return _family(instruction) or instruction.target


def _collective(instruction: Instruction) -> str:
    """The collective's kind (``all-gather`` for ``all-gather-start`` too), "" for anything else."""
    return collective_kind(instruction.opcode)


def _batch(instruction: Instruction) -> int:
    """The batch of matrices an instruction holds: its first array of rank 3 or more, all but the last two dims."""
    if linalg_kind(instruction.target) == "lu_pivots_to_permutation" and instruction.arrays:
        return _elements(instruction.arrays[0].dims[:-1])  # one permutation (a vector) per matrix
    for array in instruction.arrays:
        if len(array.dims) >= 3:
            return _elements(array.dims[:-2])
    return 1 if instruction.arrays else 0


def _elements(dims: Iterable[int]) -> int:
    count = 1
    for dim in dims:
        count *= dim
    return count
