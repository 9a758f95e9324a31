"""The check protocol: how any check (a user's script or a built-in repro) says what it found.

One protocol for every check, so the report and bisect treat a user's bug the
way they treat the built-in ones:

* **Exit code**, as ``git bisect run`` reads it: 0 unaffected, 125
  inconclusive (cannot test this release), any other 1-127 affected; killed by
  a signal is a crash, and so is an exit code above 127 (``git bisect run``
  aborts on those), said as the exit code it is; running past the timeout is
  ``timed-out``.
* **KIT_RESULT** (optional): the script may write a JSON object to the path in
  the environment variable ``KIT_RESULT``::

      {"verdict": "affected", "reason": "one sentence",
       "summary": {"all_gathers": 1},                     # flat figures for the matrix cell
       "metrics": {"solve": {"unit": "ms", "samples": [4.1, 4.0], "better": "lower"}}}

  Every key is optional. A ``verdict`` that contradicts the exit code makes the
  run ``crashed`` (the script disagrees with itself, so neither can be trusted).

This module is pure (no I/O but reading the result file, through
kit/run/result_files.py) and runs in the nox process; the optional helper a script can import is ``repro/kitcheck.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from repro.contract import EXIT_INCONCLUSIVE, EXIT_UNAFFECTED

from ..records import RunOutcome, Status, Verdict
from ..json_types import JsonObject, as_object
from . import result_files

VERDICTS = tuple(Verdict)
BETTER = ("lower", "higher")
RESULT_KEYS = ("verdict", "reason", "summary", "metrics", "environment")


class ResultError(ValueError):
    """KIT_RESULT is not what the protocol says; the message names the key."""


def exit_observation(code: int | None, timeout: int) -> tuple[Status, Verdict | None, str]:
    """(status, verdict, reason) for a script's exit code, or None when it timed out."""
    if code is None:
        return Status.TIMED_OUT, None, f"the script did not finish within {timeout} s"
    if code < 0:  # subprocess's word for a signal; an exit status never is negative
        return Status.CRASHED, None, f"the script was killed by signal {-code}"
    if code > 127:
        # The script chose it (sys.exit(200)): no signal was involved, whatever a shell's 128+N convention
        # suggests, so it is said as the exit it was.
        return Status.CRASHED, None, f"the script exited {code} (outside git bisect run's 0-127)"
    if code == EXIT_UNAFFECTED:
        return Status.RAN, Verdict.UNAFFECTED, "the script exited 0 (unaffected)"
    if code == EXIT_INCONCLUSIVE:
        return Status.RAN, Verdict.INCONCLUSIVE, "the script exited 125 (cannot test this release)"
    return Status.RAN, Verdict.AFFECTED, f"the script exited {code} (affected)"


def read_result(path: Path) -> JsonObject | None:
    """The script's KIT_RESULT, validated; None when it wrote none. Raises ResultError.

    Whatever the script left there (a folder, bytes that are not UTF-8, JSON
    nested 100,000 deep) is one ResultError sentence (kit/run/result_files.py).
    """
    try:
        data = result_files.read_json_object(path, "KIT_RESULT")
    except result_files.ResultFileError as exc:
        raise ResultError(str(exc)) from None
    if data is not None:
        check_result(data)
    return data


def check_result(data: Mapping[str, object]) -> None:
    """Raise ResultError naming the first key that breaks the protocol."""
    unknown = sorted(set(data) - set(RESULT_KEYS) - {"check", "parameters", "evidence"})
    if unknown:
        raise ResultError(f"KIT_RESULT has unknown key {unknown[0]!r} (allowed: {', '.join(RESULT_KEYS)})")
    if "verdict" in data and data["verdict"] not in VERDICTS:
        raise ResultError(f"KIT_RESULT verdict {data['verdict']!r} is not one of {', '.join(VERDICTS)}")
    if "reason" in data and not isinstance(data["reason"], str):
        raise ResultError("KIT_RESULT reason must be a string")
    if not isinstance(data.get("environment", {}), dict):
        raise ResultError("KIT_RESULT environment must be an object (facts such as {\"gpu\": \"H100\"})")
    summary = data.get("summary", {})
    if not isinstance(summary, dict) or not all(_scalar(v) for v in summary.values()):
        raise ResultError("KIT_RESULT summary must be a flat object of numbers, strings, booleans or null")
    check_metrics(data.get("metrics", {}))


def check_metrics(metrics: object) -> None:
    """``{"name": {"unit": "ms", "samples": [...], "better": "lower"}}``, else ResultError."""
    if not isinstance(metrics, dict):
        raise ResultError("metrics must be an object of name -> {unit, samples, better}")
    for name, metric in metrics.items():
        if not isinstance(metric, dict):
            raise ResultError(f"metric {name!r} must be an object with unit, samples and better")
        samples = metric.get("samples")
        if not isinstance(samples, list) or not samples or not all(_finite(x) for x in samples):
            raise ResultError(f"metric {name!r}: samples must be a non-empty list of finite numbers")
        if metric.get("better", "lower") not in BETTER:
            raise ResultError(f"metric {name!r}: better must be \"lower\" or \"higher\"")
        if not isinstance(metric.get("unit", ""), str):
            raise ResultError(f"metric {name!r}: unit must be a string")


def observation(code: int | None, timeout: int, result: Mapping[str, object] | None) -> RunOutcome:
    """One script run's outcome: exit code first, KIT_RESULT adds detail.

    Its evidence says where the verdict came from (``verdict_from``: "result" where KIT_RESULT stated it) and
    the flat figures KIT_RESULT gave (``summary``): a script that only measures is shown as measured, not
    unaffected (kit/matrix/measured.py).
    """
    status, verdict, reason = exit_observation(code, timeout)
    told = RunOutcome(status, verdict, reason, {"summary": {}, "verdict_from": "exit code"})
    if result is None or status is not Status.RAN:
        return told
    claimed = result.get("verdict")
    if claimed is not None and claimed != verdict:
        return RunOutcome(Status.CRASHED, None, f"the script exited {code} ({verdict}) but its KIT_RESULT says {claimed}",
                       told.evidence)
    said = result.get("reason")
    return replace(told, reason=said if isinstance(said, str) and said else reason,
                   evidence={"summary": as_object(result.get("summary")),
                             "verdict_from": "result" if claimed is not None else "exit code"},
                   metrics=normalise_metrics(as_object(result.get("metrics"))))


def normalise_metrics(metrics: Mapping[str, object]) -> JsonObject:
    """Every metric (checked by `check_metrics`) with its three keys spelled out (better defaults to lower)."""
    normal: JsonObject = {}
    for name, value in metrics.items():
        metric = as_object(value)
        samples = metric.get("samples")
        normal[name] = {"unit": str(metric.get("unit", "")),
                        "samples": [float(x) for x in samples if isinstance(x, (int, float))]
                        if isinstance(samples, list) else [],
                        "better": metric.get("better", "lower")}
    return normal


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, bool, int)) or _finite(value)


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
