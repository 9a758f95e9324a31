"""Walking one computation's data flow: who uses an instruction, the collectives up an op's operands, the nearest
instructions that name a source line."""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from repro.hlo_text import Computation, Instruction

from .instructions import collective

FEED_HOPS = 6  # how far up a linalg op's operands a collective still "feeds" it


def users_of(computation: Computation) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {}
    for instruction in computation.instructions.values():
        for operand in instruction.operands:
            users.setdefault(operand, []).append(instruction.name)
    return users


def feeders(computation: Computation, instruction: Instruction) -> list[Instruction]:
    """Collectives among the operands of ``instruction``, up to FEED_HOPS steps up, in its computation."""
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
            else:
                following += operand.operands
        frontier = following
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
