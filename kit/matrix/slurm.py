"""``nox -s matrix -- --slurm``: the matrix's pending cells as one SLURM job array.

The sweep (kit/matrix/sweep.py) decides which cells are pending; this module builds
their environments here, once per release, then submits one ``sbatch`` job
array with one cell per array task. Each task runs the same kit command a
check session runs (``python -m kit run CHECK VERSION``) on its node, in this
checkout, so the checkout, its ``.nox/jax-envs`` and ``reports/results`` must
be on a folder every node shares (docs/cluster.md: "What the nodes must share"). A cell with
``processes`` > 1 gets ``srun`` to start its processes inside the task's
allocation; ``jax.distributed.initialize()`` reads SLURM's variables itself.

By default the kit waits, printing a line per cell as it starts and lands,
then the matrix session writes the report. With ``--no-wait`` it prints the
job id and returns; ``nox -s report`` merges the records once they land.
Every record written inside a job says which job, array task and node ran it
(`kit.run.facts.job_facts`; `kit.run.facts.job_label` names it in the report).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..log_events import Log
from ..atomic_files import atomic_write_text, atomic_write_texts
from ..records import Record
from ..run.multiprocess import SRUN_ENV
from ..slurm.jobs import POLL_S, REPO_ROOT, SlurmOptions, array_header, new_job_dir, require_sbatch, sbatch
from ..slurm.follow import follow
from ..slurm.task_output import TaskEnd, task_end



@dataclass(frozen=True)
class ArrayTask:
    """One cell as one array task: ``python -m kit run CHECK VERSION [flags]``."""

    check: str
    version: str
    processes: int = 1

    def __str__(self) -> str:
        return f"{self.check} · jax {self.version}"


def batch_script(tasks: Sequence[ArrayTask], job_dir: Path, options: SlurmOptions, run_flags: Sequence[str],
                 python: str = sys.executable) -> str:
    """The sbatch script: array task i runs line i of cells.tsv with the kit, in this checkout."""
    lines = array_header("jax-kit-matrix", len(tasks), job_dir, max(task.processes for task in tasks), options)
    lines += [
        "set -euo pipefail",
        f"cd {shlex.quote(str(REPO_ROOT))}",
        f'read -r check version < <(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {shlex.quote(str(job_dir / "cells.tsv"))})',
        f"export {SRUN_ENV}=1  # processes of a multi-process cell start with srun",
        'echo "array task $SLURM_ARRAY_TASK_ID: $check $version on $(hostname)"',
        f'exec {shlex.quote(python)} -m kit run "$check" "$version" {shlex.join(run_flags)}'.rstrip(),
    ]
    return "\n".join(lines) + "\n"


def submit(tasks: Sequence[ArrayTask], job_dir: Path, options: SlurmOptions, run_flags: Sequence[str],
           log: Log) -> str:
    """Write the job folder and submit the array; the job id."""
    require_sbatch()
    job_dir.mkdir(parents=True, exist_ok=True)
    script = job_dir / "job.sh"
    atomic_write_texts({job_dir / "cells.tsv": "".join(f"{t.check}\t{t.version}\n" for t in tasks),
                        script: batch_script(tasks, job_dir, options, run_flags)})
    job_id = sbatch(script)
    atomic_write_text(job_dir / "job.json", json.dumps({"schema": 1, "job_id": job_id, "cells": [
        {"array_task_id": i, "check": t.check, "version": t.version} for i, t in enumerate(tasks)]}, indent=2))
    log(f"submitted SLURM job array {job_id}: {len(tasks)} cell{'' if len(tasks) == 1 else 's'} ({job_dir})")
    return job_id


# --------------------------------------------------------------------------
# Waiting


def landed_records(results_dir: Path, job_id: str, since: float) -> dict[int, tuple[Path, Record]]:
    """Records written by this job's array tasks, by task id."""
    found: dict[int, tuple[Path, Record]] = {}
    for path in Path(results_dir).glob("*.json"):
        try:
            if path.stat().st_mtime < since:
                continue
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        facts = record.get("slurm") if isinstance(record, dict) else None
        if isinstance(facts, dict) and facts.get("array_job_id") == job_id and str(facts.get("array_task_id")).isdigit():
            found[int(facts["array_task_id"])] = (path, Record(record))
    return found


Landed = dict[int, "tuple[Path, Record] | TaskEnd | None"]
"""Each array task's record and where it is, or how it ended without one (cancelled, an error), or None:
not known, as the waiting stopped first."""


def wait(job_id: str, tasks: Sequence[ArrayTask], job_dir: Path, results_dir: Path, since: float, log: Log,
         poll_s: float = POLL_S) -> Landed:
    """Print each task's start and landing; return each task's record, or how it ended without one."""
    ends: dict[int, TaskEnd] = {}

    def outcome(task_id: int,
                records: Mapping[int, tuple[Path, Record]]) -> tuple[Path, Record] | TaskEnd:
        landed = records.get(task_id)
        if landed is not None:
            return landed
        if task_id not in ends:  # read once: the output file does not change after the task
            ends[task_id] = task_end(job_dir / f"{job_id}_{task_id}.out")
        return ends[task_id]

    found: dict[int, tuple[Path, Record]] = {}

    def landed(task_id: int, elapsed: float) -> None:
        if task_id not in found:  # the records folder read once per landing round, not once per poll
            found.update(landed_records(results_dir, job_id, since))
        log(_landed_line(task_id, tasks, outcome(task_id, found), elapsed))

    finished = follow(job_id, len(tasks), lambda task_id: f"[{task_id + 1}/{len(tasks)}] {tasks[task_id]}", log,
                      landed=landed, stopped_tip="`nox -s report` merges its records when they land", poll_s=poll_s)
    records = landed_records(results_dir, job_id, since)
    if not finished:
        return {i: records.get(i) for i in range(len(tasks))}  # the others may still be running
    return {i: outcome(i, records) for i in range(len(tasks))}


def _landed_line(task_id: int, tasks: Sequence[ArrayTask], landed: tuple[Path, Record] | TaskEnd,
                 elapsed: float) -> str:
    head = f"[{task_id + 1}/{len(tasks)}] {tasks[task_id]}: "
    if isinstance(landed, TaskEnd):
        return head + landed.sentence
    path, record = landed
    verdict = f", {record.verdict}" if record.verdict else ""
    return head + f"{record.status_text}{verdict} -> {path} ({elapsed:.0f} s since submission)"


# --------------------------------------------------------------------------
# The matrix on SLURM


def run_matrix(tasks: Sequence[ArrayTask], jobs_dir: Path, results_dir: Path, options: SlurmOptions,
               run_flags: Sequence[str], log: Log) -> Landed | None:
    """Submit the array; wait for it unless --no-wait (then None)."""
    job_dir = new_job_dir(jobs_dir)
    since = time.time() - 1
    job_id = submit(tasks, job_dir, options, run_flags, log)
    if not options.wait:
        log(f"not waiting (--no-wait): `squeue -j {job_id}` shows the array; its records land in "
            f"{results_dir}, and `nox -s report` merges them into the report")
        return None
    log(f"waiting for job {job_id} (Ctrl-C stops waiting, not the job: `scancel {job_id}` does)")
    try:
        return wait(job_id, tasks, job_dir, results_dir, since, log)
    except KeyboardInterrupt:
        log(f"stopped waiting; job {job_id} goes on, and `nox -s report` merges its records when they land")
        raise
