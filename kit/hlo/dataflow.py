"""Walking one computation's data flow: who uses an instruction, the collectives up an op's operands, the nearest
instructions that name a source line."""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterable, Mapping

from repro.hlo_text import Computation, Instruction

from .instructions import collective

FEED_HOPS = 6  # how far up a linalg op's operands a collective still "feeds" it


def users_of(computation: Computation) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {}
    for instruction in computation.instructions.values():
        for operand in instruction.operands:
            users.setdefault(operand, []).append(instruction.name)
    return users


def feeders(computation: Computation, instruction: Instruction,
            computations: Mapping[str, Computation] | None = None) -> list[Instruction]:
    """Collectives among the operands of ``instruction``, up to FEED_HOPS steps up, in its computation, and
    those inside a fusion met on the way (``computations``: the module's, to look inside it).

    libtpu 0.0.42 (jax 0.10.2) runs slogdet's all-gather as a fusion, ``async-collective-start``, whose called
    computations hold the chained all-gathers; the LU takes ``async-collective-done``: without looking inside,
    the LU every device holds whole read as not fed by any collective (t3's "whole", where truth is gathered)."""
    found, frontier, seen = [], list(instruction.operands), set()
    for _ in range(FEED_HOPS):
        following: list[str] = []
        for name in frontier:
            operand = computation.instructions.get(name)
            if operand is None or name in seen:
                continue
            seen.add(name)
            if collective(operand):
                found.append(operand)
                continue
            if operand.opcode == "fusion" and computations is not None:
                found += _collectives_inside(operand, computations)
            following += operand.operands
        frontier = following
    return found


def _collectives_inside(fusion: Instruction, computations: Mapping[str, Computation]) -> list[Instruction]:
    found, queue, seen = [], list(fusion.called), set()
    while queue:
        name = queue.pop()
        if name in seen or name not in computations:
            continue
        seen.add(name)
        for instruction in computations[name].instructions.values():
            if collective(instruction):
                found.append(instruction)
            elif instruction.opcode == "fusion":
                queue += instruction.called
    return found


def sourced(computation: Computation, start: Instruction, step: Callable[[str], Iterable[str]]) -> Iterable[Instruction]:
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
