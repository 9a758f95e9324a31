"""Shared data for the bisect suites on the fake machine (`tests.fake_releases`): ten releases, one check.

Helpers, not tests: the suites import these rather than one another's internals.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

from packaging.version import Version

from kit.bisect.report.finding import REPORT_SCHEMA
from kit.bisect import driver
from kit.config import Matrix, parse_matrix
from kit.run import runner
from tests.fake_releases import FakeReleases

RELEASES = ["0.4.34", "0.4.35", "0.4.36", "0.4.37", "0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]

CHECKS = {"scaling": {"devices": [1, 2], "batch": 64, "timeout_s": 60}}

PLAIN_MATRIX = parse_matrix({"release": [{"version": "0.4.35"}, {"version": "0.6.0"}], "checks": CHECKS})
"""For what is decided from the command line alone."""

ROOT = Path(__file__).resolve().parent.parent

METRIC_VERSIONS = ["0.4.35", "0.4.36", "0.4.37", "0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0"]
"""The releases a --metric table answers for."""


def run(machine: FakeReleases, *argv: str) -> tuple[int, list[str]]:
    """``nox -s bisect -- ARGV`` on the fake machine: its exit code and what it logged."""
    lines: list[str] = []
    code = driver.main(machine.matrix, list(argv), lines.append)
    return code, lines


def noisy(center: float, seed: int, n: int = 9) -> list[float]:
    """``n`` timings around ``center`` with 5 % noise, the same for the same seed."""
    rng = random.Random(seed)
    return [center * (1 + rng.gauss(0, 0.05)) for _ in range(n)]


def step_at(first_fast: str) -> dict[str, Callable[[int], list[float]]]:
    """Slow (20 ms) before ``first_fast``, fast (10 ms) from it on: a fix hunt, bad is older."""
    at = METRIC_VERSIONS.index(first_fast)
    return {v: (lambda run, i=i: noisy(20 if i < at else 10, seed=i * 10 + run)) for i, v in enumerate(METRIC_VERSIONS)}


def verdicts(first_bad: str, *, fix: bool = False) -> dict[str, Any]:
    """Every release affected from ``first_bad`` on (a regression), or unaffected from there on (a fix)."""
    before, after = ("affected", "unaffected") if fix else ("unaffected", "affected")
    return {v: (after if Version(v) >= Version(first_bad) else before) for v in RELEASES}


def report_json(where: FakeReleases | Matrix, name: str = "*") -> dict[str, Any]:
    """The newest bisect report's JSON (next to the results folder of the machine's, or a real, matrix)."""
    matrix = where.matrix if isinstance(where, FakeReleases) else where
    path = max(matrix.results_dir.parent.glob(f"bisect-{name}.json"), key=lambda p: p.stat().st_mtime_ns)
    data = json.loads(path.read_text())
    assert data["schema"] == REPORT_SCHEMA
    return data


def record_run(machine: FakeReleases, version: str, *results: str) -> None:
    """Run the check on ``version`` as `nox -s scaling-<version>` would, leaving the record it writes."""
    machine.behave(version, *results)
    runner.run_check(machine.matrix, runner.RunRequest(check="scaling", version=version), lambda line: None)
