"""Delta debugging (Zeller's ddmin) over a list, pure: which items can go while the test still holds.

The test is asked a batch at a time (``first_kept``: the candidates of one granularity, in order; the
index of the first that stays interesting, or None), so a caller may run a batch's candidates side by
side. Complements are tried before subsets: removing a chunk is the coarse step a program reduction
wants first (a subset of two statements out of forty is rarely a program that still runs).
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

FirstKept = Callable[[list[list[T]]], "int | None"]


def chunks(items: Sequence[T], n: int) -> list[list[T]]:
    """``items`` cut into ``n`` runs of near-equal length, in order (fewer where there are fewer items)."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    out, at = [], 0
    for k in range(n):
        step = size + (1 if k < extra else 0)
        out.append(list(items[at:at + step]))
        at += step
    return out


def ddmin(items: Sequence[T], first_kept: FirstKept[T]) -> list[T]:
    """A 1-minimal sublist of ``items`` (order kept) for which the test holds; ``items`` is taken as holding.

    1-minimal: removing any one item of the result makes the test fail (or the result is empty).
    """
    current, n = list(items), 2
    if current and first_kept([[]]) == 0:
        return []
    while len(current) >= 2:
        parts = chunks(current, n)
        complements = [[x for j, part in enumerate(parts) if j != i for x in part] for i in range(len(parts))]
        kept = first_kept(complements)
        if kept is not None:
            current, n = complements[kept], max(n - 1, 2)
            continue
        kept = first_kept(parts) if n > 2 else None  # with two parts, each subset is the other's complement
        if kept is not None:
            current, n = parts[kept], 2
            continue
        if n >= len(current):
            break
        n = min(2 * n, len(current))
    if len(current) == 1 and first_kept([[]]) == 0:
        return []
    return current
