"""Checks that measure but never judge: shown as *measured*, kept out of the answer.

A user's script check may only time something: it writes metrics to
KIT_RESULT, gives no verdict of its own, and exits 0. By the protocol's exit
code that reads "unaffected", and it once moved the Answer's "newest measured
that passes" from 0.12.0.1 to 0.6.0. A check is *measured only* when every
record of it that ran is such a run: a script check (its evidence has an exit
code) that exited 0 with metrics and whose verdict came from the exit code,
not from KIT_RESULT (``evidence.verdict_from``, recorded since this module;
older records, which lack it, count as from the exit code). One run that says
"affected", or a KIT_RESULT that states a verdict, makes it a judging check again.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..records import LoadedRecord, Record


def measured_only(record: Record) -> bool:
    """A run that measured (metrics) and judged nothing of its own (exit 0, no verdict in KIT_RESULT)."""
    evidence = record.evidence
    if not record.ran or not isinstance(evidence, dict) or "exit_code" not in evidence:
        return False  # not a script check's run: a built-in check's verdicts are its own
    return (bool(record.metrics) and evidence.get("exit_code") == 0
            and evidence.get("verdict_from", "exit code") == "exit code")


def measuring_checks(entries: Iterable[LoadedRecord]) -> set[str]:
    """Checks every one of whose runs measured only: shown as measured, never in the answer."""
    runs: dict[str, list[bool]] = {}
    for entry in entries:
        if entry.record.ran:
            runs.setdefault(str(entry.record.check), []).append(measured_only(entry.record))
    return {check for check, flags in runs.items() if flags and all(flags)}
