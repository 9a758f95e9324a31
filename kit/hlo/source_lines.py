"""Where in the program an instruction of a compiled module stands: its source line, JAX function, op path and
pass, also where the compiler dropped them.

A collective the SPMD partitioner inserts may carry no source line (only a
parameter's name): it is attributed to the first of its users that has one.
The TPU compiler of some releases (libtpu 0.0.11, jax 0.5.3) drops a linalg
custom call's metadata: the call is then named by its twin before
optimizations (the same op, with its source line), chosen by where its
operands come from, else where its users go (`SourceLines.twin`).
"""

from __future__ import annotations

import os
import re
import stat
from functools import lru_cache
from typing import Callable

from repro.hlo_text import Computation, Instruction, Module

from .dataflow import sourced, users_of
from .instructions import collective, family, is_linalg
from .op_names import function_of, module_jits, op_path, untransposed, without_outer_jit

JAX_LINALG_JITS = frozenset({"lstsq", "slogdet", "det", "inv", "solve", "eigh", "eigvalsh", "svd", "qr", "cholesky",
                             "pinv", "lu_factor", "lu_solve", "cho_solve", "solve_triangular", "expm", "eig",
                             "eigvals", "matrix_power", "tensorsolve", "schur", "hessenberg", "norm", "lu"})
"""JAX's linear-algebra functions that JAX jits (their ops' paths name them, ``jit(_lstsq)``): a line that calls
one the op's path does not name is another op's line (t7: TPU 0.7.0 stamped svd's ops of ``norm`` with the
``lstsq`` line of another function, from a cached trace). A wrapper that is no jit of its own (``cho_factor``
calls ``jit(_cholesky)``) is not here, so its line stays its ops' line."""
UNTOLD = "(line cannot be told)"
"""An op's location where the module's own evidence disagrees about its line (see `SourceLines.checked`)."""
_CALLED = re.compile(r"jit\(([A-Za-z_]\w*)\)")


class SourceLines:
    """One module's instructions placed on the program's lines (``show`` makes a file the name people read)."""

    def __init__(self, after: Module, before: Module | None, show: Callable[[str], str],
                 read_line: Callable[[str, int], str | None] | None = None) -> None:
        self.after, self.show = after, show
        self.jits = module_jits(after.name)
        self.read_line = read_line or source_line_text
        self.sources: dict[str, tuple[str, int]] = {}  # each line as shown → as the module names it
        # The JAX functions the linalg ops' paths name: a line that calls one of them is another op's line.
        self.linalg_names = {name for module in (after, before) if module for _, i in module.instructions()
                             if is_linalg(i) for name in self.names(self.op_path(i.op_name))}
        self.vetted_names = self.linalg_names | JAX_LINALG_JITS
        self.before_lines: dict[str, set[str]] = {}
        self.before_families: dict[str, set[str]] = {}  # each linalg family → the lines the module before has it on
        if before:
            named_in_full(before)
            self.checked(before)
            for _, instruction in before.instructions():
                line = located(instruction, show)
                if line not in (None, UNTOLD) and is_linalg(instruction) and family(instruction):
                    self.before_families.setdefault(family(instruction), set()).add(str(line))
        # The module before optimizations, by op path: its paths start at the program's own jit (jit(<lambda>)),
        # which the compiled module's paths are stripped of.
        for _, instruction in before.instructions() if before else ():
            line = located(instruction, show)
            if line is not None and instruction.op_name:
                self.sources[line] = instruction.source or (UNTOLD, 0)
                path = self.op_path(instruction.op_name)
                for each in {path, without_outer_jit(path)}:
                    self.before_lines.setdefault(each, set()).add(line)
        self.checked(after)
        self.users = {c.name: users_of(c) for c in after.computations.values()}
        self.path_lines: dict[str, set[str]] = {}
        for _, instruction in after.instructions():
            line = located(instruction, show)
            if line is not None and instruction.op_name:
                self.sources[line] = instruction.source or (UNTOLD, 0)
                add_line(self.path_lines, self.op_path(instruction.op_name), line)
        self.twins: dict[str, list[Instruction]] = {}
        for _, instruction in before.instructions() if before else ():
            if instruction.source is not None and is_linalg(instruction) and family(instruction):
                self.twins.setdefault(family(instruction), []).append(instruction)

    def checked(self, module: Module) -> None:
        """Each line read from the stack-frame tables kept only where that line calls what the op path names.

        libtpu 0.0.32.1 (jax 0.8.3, compiled for TPU) writes stack-frame ids that point at wrong rows of the
        module's own tables: eigh's, solve's and cholesky's ops resolved to a line of ``shrunk_cov`` that calls
        none of them (the held-out trial of issue 58). An op whose path names JAX functions (``jvp(jit(eigh))``)
        on a line whose text calls none of them is said to be on a line that cannot be told, never on that line;
        where the text cannot be read or the path names no function, the tables are all there is. A linalg op's
        inline line (0.7.0, 0.8.0) is held to the same rule: ``jit(_solve_triangular)`` was placed at the
        cholesky one line above it.

        Where at least two of a module's stack-frame lines are shown wrong and no more are shown right, the
        tables themselves are wrong, so a line they give that nothing can vet (a sum's ``jvp()/reduce_sum``
        names no function) is not told either: on 0.8.3 the loss's all-reduce was placed on the cholesky line."""
        unvetted, wrong, another = [], [], []
        moved: list[tuple[Instruction, tuple[str, int] | None]] = []
        right: set[tuple[tuple[str, int], frozenset[str]]] = set()
        for _, instruction in module.instructions():
            if instruction.source is None or not instruction.op_name:
                continue
            if instruction.frame_id is None and not (is_linalg(instruction) or collective(instruction)):
                continue  # an inline line (0.8.0 and older) is vetted on the linalg ops and the collectives alone
            path = self.op_path(instruction.op_name)
            verdict = self.calls(instruction.source, path)
            if instruction.source[0].startswith("<frozen "):
                # Python's own machinery (the kit's compile runs under runpy): never the program's line, and
                # where the frames lead there the tables are wrong (t8: 0.8.3 placed lu at `<frozen runpy>:88`)
                another.append(instruction)
            elif verdict is False and self.calls_another(instruction.source, path):
                another.append(instruction)
            elif verdict is False and self.contradicted(instruction, path):
                # the module before optimizations has this op path on one line that calls what it names: that
                # line (t7: 0.8.3 put spd_step's cholesky on its caller's :21; the module before has it at :15)
                moved.append((instruction, self.line_before(path, is_linalg(instruction))))
            elif verdict is None and (is_linalg(instruction) or collective(instruction)) and \
                    self.contradicted(instruction, path):
                # a path that names no function (``transpose(jvp(vmap()))/dot_general``) has no words to check
                # on the line, but the module before may place it elsewhere (t9: 0.8.3's gradient all-reduce at
                # :15, which calls no dot_general; the module before has that path at :17 alone)
                moved.append((instruction, self.line_before(path, is_linalg(instruction))))
            elif verdict is False and instruction.frame_id is not None and self.names(path) & self.vetted_names:
                # only a linalg function's name is evidence: JAX's inner jits (`_roll_dynamic`, `remainder`) are
                # no words of the program's line, and counted they made good tables (0.10.2) look wrong
                wrong.append(instruction)
            if verdict is True and instruction.frame_id is not None:
                right.add((instruction.source, frozenset(self.names(path))))
            unvetted += [instruction] if verdict is None and instruction.frame_id is not None else []
        # A line that names none of the op's functions may still be its line: a wrapper (cho_factor's line for
        # jit(_cholesky)) calls it by another name (t5: cholesky's line was lost on every release). So it is
        # doubted only where it calls another op's function, or where the module's tables are shown wrong.
        # Counted by distinct (line, functions): one op's many instructions on one line are one piece of evidence.
        another += [instruction for instruction, line in moved if line is None]
        shown_wrong = {(i.source, frozenset(self.names(self.op_path(i.op_name))))
                       for i in another + wrong + [instruction for instruction, _ in moved]}
        doubted = another + (wrong + unvetted if len(shown_wrong) >= 2 and len(shown_wrong) >= len(right) else [])
        for instruction in doubted:
            instruction.source = (UNTOLD, 0)
        for instruction, line in moved:
            instruction.source = line or (UNTOLD, 0)

    def line_before(self, path: str, linalg: bool = True) -> tuple[str, int] | None:
        """The one line the module before optimizations has ``path`` (or its forward call) on, unless that line
        calls none of what the path names (or, for a linalg op, calls another linalg op's function); None
        otherwise."""
        lines = self.before_lines.get(path, set()) or self.before_lines.get(untransposed(path), set())
        lines = lines - {UNTOLD}
        source = self.sources.get(next(iter(lines))) if len(lines) == 1 else None
        if source is None or self.calls(source, path) is False or (linalg and self.calls_another(source, path)):
            # no evidence, or a linalg op on another linalg function's line: the module before borrowed it too
            # (JAX's trace cache: t7's norm QDWH loop at lstsq's :19). A collective of a line's other op (the
            # gradient sum of `b_ @ w` beside solve_triangular on t9's :17) may share the line.
            return None
        return source

    def calls(self, source: tuple[str, int], path: str) -> bool | None:
        """Whether the line ``source`` calls a JAX function ``path`` names (None: no evidence either way)."""
        return self.names_any(source, self.names(path))

    def contradicted(self, instruction: Instruction, path: str) -> bool:
        """Whether the module before optimizations places this op path, or the linalg op a function of the path
        is named for, on other lines only. It is read first, and libtpu 0.8.3's fault is in the compiled
        module's tables: ``jvp(jit(eigh))/...`` at :22 there, where the module before names its Eigh at :40."""
        here = located(instruction, self.show)
        lines = self.before_lines.get(path, set()) - {UNTOLD}
        if lines and here not in lines:
            return True
        return any(here not in self.before_families[name] for name in self.names(path) if name in self.before_families)

    def calls_another(self, source: tuple[str, int], path: str) -> bool:
        """Whether the line calls a JAX function another linalg op's path names and this one's does not."""
        return bool(self.names_any(source, (self.linalg_names | JAX_LINALG_JITS) - self.names(path)))

    def names_any(self, source: tuple[str, int], names: set[str]) -> bool | None:
        text = self.read_line(source[0], source[1]) if names and source[0] != UNTOLD else None
        if text is None:
            return None
        return any(re.search(rf"\b{re.escape(name)}\b", text) for name in names)

    @staticmethod
    def names(path: str) -> set[str]:
        return {name.lstrip("_") for name in _CALLED.findall(path)} - {""}

    def where(self, instruction: Instruction) -> tuple[str | None, str, str, str]:
        """(``file:line`` or None, the JAX function, the op path, ``forward`` or ``backward``)."""
        location = located(instruction, self.show)
        path = self.op_path(instruction.op_name)
        return location, function_of(path), path, "backward" if "transpose(" in path else "forward"

    def where_named(self, op_name: str, otherwise: str | None) -> tuple[str | None, str, str, str]:
        """`where` for an op known by its name alone (a part of a combined instruction): its line the one its op
        path has in the module, else ``otherwise`` (the instruction's own)."""
        path = self.op_path(op_name)
        lines = self.path_lines.get(path, set())
        location = next(iter(lines)) if len(lines) == 1 else otherwise
        return location, function_of(path), path, "backward" if "transpose(" in path else "forward"

    def op_path(self, op_name: str) -> str:
        return op_path(op_name, self.jits)

    def attributed(self, computation: Computation, instruction: Instruction) -> Instruction:
        """The instruction whose source names a collective: its own, or its first user's (SPMD-inserted).

        One that names its op path and no line (``jit(advance)/jit(lu_factor)/lu``: libtpu 0.7.0) is placed by
        that path where the module places it: its first user was the ``fori_loop`` on the next line, or a ``mul``
        (t5), and its pass that user's."""
        if "/" in instruction.op_name and (instruction.source is not None or
                                           self.line_of(computation, instruction) is not None):
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
            if instruction.source is None and instruction.op_name and is_linalg(instruction):
                path = self.op_path(instruction.op_name)
                if path not in self.path_lines:
                    line = self.line_of(computation, instruction)
                    if line is not None:
                        found.setdefault(path, set()).add(line)
        for path, lines in found.items():
            for line in lines:
                add_line(self.path_lines, path, line)

    def line_of(self, computation: Computation, instruction: Instruction) -> str | None:
        """`found_line`, kept only where that line calls what the op path names: another op's line (the cholesky
        one line up, for ``jit(_solve_triangular)`` on 0.7.0 and 0.8.0 for TPU) is no evidence of this op's."""
        line = self.found_line(computation, instruction)
        source = self.sources.get(line or "")
        path = self.op_path(instruction.op_name)
        if source is not None and self.calls_another(source, path):
            # the module before optimizations may still have this path on one line (t7 on 0.7.0: norm's QR
            # borrowed lstsq's :19 from a neighbour; the module before has it at :33, its own)
            before = self.line_before(path, is_linalg(instruction))
            return f"{self.show(before[0])}:{before[1]}" if before else UNTOLD
        return line

    def found_line(self, computation: Computation, instruction: Instruction) -> str | None:
        """The source line of an op whose own metadata names none: the one line its op path (or the nearest path
        it is within) has in the module, else the nearest instruction of the same JAX op that names one, else
        its twin before optimizations. The TPU compiler of
        jax 0.8.x keeps ``op_name`` on its LU custom call and drops the line, which the instructions XLA made
        around it keep: without this the op was placed in "(JAX's own code)" and ``bisect --op FILE:LINE`` passed
        over those releases (issue 58)."""
        path = self.op_path(instruction.op_name)
        for candidate in dict.fromkeys((path, untransposed(path))):
            parts = candidate.split("/")
            for count in range(len(parts), 0, -1):  # the op path, then each path it is within, with one line only
                lines = self.path_lines.get("/".join(parts[:count]), set())
                if len(lines) == 1:
                    return next(iter(lines))
                if lines:
                    break  # several lines call this op path (one function called twice): its neighbours decide
        transposed = backward_call(path)
        if transposed:  # the backward ops of the same call (0.7.0, 0.8.0 for TPU: they keep its line)
            lines = self.path_lines.get(transposed, set())
            if len(lines) == 1:
                return next(iter(lines))
        if instruction.inside_kit:
            # Named by the kit's export wrapper (a jit of JAX's own, jax.scipy's solve_triangular): its neighbours
            # are other lines' ops (the cholesky before it, one line up), so the line is said to be unknown.
            return None
        for step in (lambda name: computation.instructions[name].operands,
                     lambda name: self.users[computation.name].get(name, ())):
            for neighbour in sourced(computation, instruction, step):
                theirs = self.op_path(neighbour.op_name)
                if theirs and (path.startswith(theirs + "/") or theirs.startswith(path + "/") or theirs == path):
                    return self.where(neighbour)[0]
        twin = self.twin(computation, instruction)
        if twin is not None:
            return self.where(twin)[0]
        lines = self.before_lines.get(path, set()) or self.before_lines.get(untransposed(path), set())
        return next(iter(lines)) if len(lines) == 1 else None

    def twin(self, computation: Computation, instruction: Instruction) -> Instruction | None:
        """The op before optimizations that a linalg call without metadata is: one of its kind, at the source line
        its operands come from, nearest first, else the line its users go to, else the one line such ops have.

        Its operands first: XLA may fuse what follows two ops into one instruction named for the later line
        (jax 0.5.3 for TPU: the sort after eigh on line 6 and svd's on line 7, one fusion of line 7).
        """
        twins = self.twins.get(family(instruction), [])
        lines = {self.where(each)[0] for each in twins}
        if not twins:
            return None
        for step in (lambda name: computation.instructions[name].operands,
                     lambda name: self.users[computation.name].get(name, ())):
            for neighbour in sourced(computation, instruction, step):
                location, _, _, pass_ = self.where(neighbour)
                if location in lines:
                    there = [each for each in twins if self.where(each)[0] == location]
                    return next((each for each in there if self.where(each)[3] == pass_), there[0])
        return twins[0] if len(lines) == 1 else None


def named_in_full(module: Module) -> None:
    """Each op name of a called computation made whole: the module before optimizations (0.8.x) names the ops of a
    nested jit relative to its call (``cholesky`` in ``_cholesky``, called as ``jit(_cholesky)`` from ``_solve``),
    so ``jit(_cholesky)`` at :15 read as a line that calls no ``cholesky``, and :15 (``jsl.solve``, t7) was doubted.
    A computation called under one name only is given it; its ops' names then read as the compiled module's do."""
    callers: dict[str, set[tuple[str, str]]] = {}  # a called computation → (the caller's computation, op name)
    for computation, instruction in module.instructions():
        if instruction.opcode == "call" and instruction.op_name:
            for called in instruction.called:
                callers.setdefault(called, set()).add((computation.name, instruction.op_name))
    prefixes: dict[str, str | None] = {}

    def prefix(name: str) -> str | None:
        if name not in prefixes:
            prefixes[name] = None  # a cycle (none in a well-formed module) ends here
            ways = callers.get(name, set())
            if len(ways) == 1:
                caller, own = next(iter(ways))
                prefixes[name] = joined(prefix(caller), own)
        return prefixes[name]

    for name in list(module.computations):
        prefix(name)
    for computation, instruction in module.instructions():
        outer = prefixes.get(computation.name)
        if outer is not None and instruction.op_name:
            instruction.op_name = joined(outer, instruction.op_name)


def joined(outer: str | None, name: str) -> str:
    """``name`` within ``outer`` where it is relative to it (its first step not ``outer``'s), else as it is."""
    if outer is None or name == outer or name.split("/")[0] == outer.split("/")[0]:
        return name
    return f"{outer}/{name}"


def add_line(lines: dict[str, set[str]], path: str, line: str) -> None:
    """``line`` for ``path`` and for every path it is within (``jvp(jit(qr))`` for ``jvp(jit(qr))/geqrf``)."""
    parts = path.split("/")
    for count in range(1, len(parts) + 1):
        lines.setdefault("/".join(parts[:count]), set()).add(line)


def backward_call(path: str) -> str:
    """The op path of the backward pass of the innermost function call ``path`` names, "" where it names none:
    ``transpose(jvp())/while/body/closed_call/jit(_solve_triangular)`` for the forward solve in a scan's body."""
    parts = path.split("/")
    called = [index for index, part in enumerate(parts) if _CALLED.search(part)]
    if not called or parts[0].startswith("transpose("):
        return ""
    return "/".join([f"transpose({parts[0]})", *parts[1:called[-1] + 1]])


def located(instruction: Instruction, show: Callable[[str], str]) -> str | None:
    """``file:line`` of an instruction, `UNTOLD` where its evidence disagrees, None where it names no line."""
    if instruction.source is None:
        return None
    return UNTOLD if instruction.source[0] == UNTOLD else f"{show(instruction.source[0])}:{instruction.source[1]}"


@lru_cache(maxsize=64)
def _source_lines(file: str) -> tuple[str, ...] | None:
    """The lines of a file the module names, where it is a regular file: a FIFO or a device named in the
    metadata would block the read or never end, and says nothing of the program's lines."""
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):
            return None
        with open(file, encoding="utf-8", errors="replace") as source:
            return tuple(source.read(4_000_000).splitlines())
    except OSError:
        return None


def source_line_text(file: str, number: int) -> str | None:
    """The text of line ``number`` of the program's file as the module names it (None: unreadable)."""
    lines = _source_lines(file)
    return lines[number - 1] if lines is not None and 0 < number <= len(lines) else None
