"""``nox -s bisect -- --slurm``: each probe a task of a SLURM job array, a round's probes in one array.

The login node (where bisect runs) has no GPU; the nodes do. So a round's
releases are resolved and their environments built here, where the matrix
builds them (`nox -s matrix -- --slurm`, kit/matrix/slurm.py), and the probes
themselves run on the nodes: one array per round, task i running
``python -m kit probe JOB_DIR i`` in this checkout (shared with every node).
A task is a whole probe, as a local one is: it computes its identity there
(the node's hardware, the variables sbatch passed on), answers from the probe
cache when that identity is known, else runs and keeps its observation in the
cache and in ``JOB_DIR/i.json`` for the login node to read. Each observation
names its job and node, and the report shows them.

A release the index's metadata already rules out, or whose environment
cannot be built here, is answered here without a job. Ctrl-C stops the
waiting, not the job: its probes still land in the probe cache, and a rerun
uses them.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Sequence

from repro.contract import strict_json

from ...records import Source, Status
from ...atomic_files import atomic_write_text
from ...errors import UsageError
from ...log_events import Log
from ...records import JsonTextError, read_json
from ...run.multiprocess import SRUN_ENV
from ...slurm.jobs import POLL_S, REPO_ROOT, SlurmOptions, array_header, new_job_dir, require_sbatch, sbatch
from ...slurm.follow import follow
from ...slurm.task_output import task_end
from ..candidates import Candidate
from ...json_types import as_list, as_number, as_object
from ..observation import CameFrom, Found, Observation
from .probes import Prober
from .release_subject import ReleaseSubject
from ..search import ProbeOutcome

JOB_NAME = "jax-kit-bisect"
SPEC = "probes.json"
SPEC_SCHEMA = 1


class ClusterProbes:
    """Answers a round of probes with one SLURM job array; what needs no job is answered here."""

    def __init__(self, prober: Prober[ReleaseSubject], options: SlurmOptions, argv: Sequence[str], log: Log,
                 poll_s: float = POLL_S) -> None:
        self.prober, self.options, self.argv, self.log, self.poll_s = prober, options, tuple(argv), log, poll_s
        """``argv``: the bisect's command line, which each task reads again on its node (`kit.bisect.driver.run_task`)."""
        self.jobs_dir = prober.subject.matrix.layout.slurm

    def many(self, batch: Sequence[str]) -> dict[str, ProbeOutcome]:
        answers: dict[str, ProbeOutcome] = {}
        remote: list[str] = []
        for version in batch:
            candidate = self.prober.candidates[version]
            if candidate.yanked is not None or candidate.problem or self.prober.subject.prepare(version).environment is None:
                answers[version] = self.prober(version)  # the index, or an environment that cannot be built here
            else:
                remote.append(version)
        if remote:
            answers.update(self._on_the_cluster(remote))
        return answers

    def _on_the_cluster(self, versions: list[str]) -> dict[str, ProbeOutcome]:
        job_dir = new_job_dir(self.jobs_dir)
        job_id = self.submit(versions, job_dir)
        self.follow(job_id, versions)
        answers = {}
        for task, version in enumerate(versions):
            observation = self._landed(job_dir, job_id, task, version)
            answers[version] = self.prober.record(version, observation,
                                                  ran_now=Source.RUN in observation.came_from.steps)
        return answers

    def submit(self, versions: Sequence[str], job_dir: Path) -> str:
        """Write the round's probes and the job script into ``job_dir``, submit the array; its job id."""
        require_sbatch()
        job_dir.mkdir(parents=True, exist_ok=True)
        spec = {"schema": SPEC_SCHEMA, "argv": list(self.argv), "name": self.prober.name,
                "candidates": [dataclasses.asdict(self.prober.candidates[v]) for v in versions]}
        atomic_write_text(job_dir / SPEC, strict_json(spec))
        script = job_dir / "job.sh"
        atomic_write_text(script, batch_script(len(versions), job_dir, self.options, self._ntasks()))
        job_id = sbatch(script)
        self.log(f"submitted SLURM job array {job_id}: {len(versions)} probe{'' if len(versions) == 1 else 's'} "
                 f"(jax {', '.join(versions)}) ({job_dir})")
        return job_id

    def follow(self, job_id: str, versions: Sequence[str]) -> None:
        """Say each task's state as it changes (and on which node), until squeue no longer lists the job."""
        try:
            follow(job_id, len(versions),
                   lambda task: f"[{task + 1}/{len(versions)}] jax {versions[task]}: job {job_id}_{task}", self.log,
                   poll_s=self.poll_s)
        except KeyboardInterrupt:
            self.log(f"stopped waiting; job {job_id} goes on (`scancel {job_id}` stops it), and its probes land in "
                     "the probe cache, where a rerun finds them")
            raise

    def _landed(self, job_dir: Path, job_id: str, task: int, version: str) -> Observation:
        """The task's observation, with how the login node obtained its environment; a crash when it left none."""
        try:
            saved = read_json(job_dir / f"{task}.json")
            observation = Observation.from_json(saved.get("observation") if isinstance(saved, dict) else None)
        except (JsonTextError, ValueError):
            # Cancelled (scancel, its time limit) or ended on an error: its output says which.
            end = task_end(job_dir / f"{job_id}_{task}.out")
            return Observation(Found(Status.CRASHED, None, f"SLURM job {job_id}_{task} left no probe: {end.sentence}"),
                               CameFrom(job=f"SLURM job {job_id}_{task}"))
        return observation.with_installed(environment=self.prober.subject.environment_state(version))

    def _ntasks(self) -> int:
        """A check with processes > 1 gets that many tasks, started by srun inside the job (as the matrix does)."""
        subject = self.prober.subject.spec.subject
        return int(as_number(as_object(subject.get("parameters")).get("processes"), 1) or 1) if "check" in subject else 1


def batch_script(count: int, job_dir: Path, options: SlurmOptions, ntasks: int = 1,
                 python: str = sys.executable) -> str:
    """The sbatch script: array task i runs probe i of ``job_dir/probes.json`` with the kit, in this checkout."""
    lines = array_header(JOB_NAME, count, job_dir, ntasks, options)
    lines += ["set -euo pipefail", f"cd {shlex.quote(str(REPO_ROOT))}",
              f"export {SRUN_ENV}=1  # processes of a multi-process check start with srun",
              f'exec {shlex.quote(python)} -m kit probe {shlex.quote(str(job_dir))} "$SLURM_ARRAY_TASK_ID"']
    return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class Task:
    """One task of a round's job array, as the bisect wrote it into ``JOB_DIR/probes.json``."""

    job_dir: Path
    task: int
    argv: tuple[str, ...]
    """The bisect's command line: the node reads it again, as the login node did (`kit.bisect.driver.run_task`)."""
    name: str
    candidate: Candidate

    def keep(self, observation: Observation) -> None:
        """The task's observation into ``JOB_DIR/TASK.json``, where the login node reads it."""
        atomic_write_text(self.job_dir / f"{self.task}.json", strict_json(
            {"schema": SPEC_SCHEMA, "version": self.candidate.version, "observation": observation.to_json()}))


def read_task(argv: Sequence[str]) -> Task | None:
    """``probe JOB_DIR TASK``'s task (None for ``--help``); a UsageError for anything the job script never writes."""
    if argv[:1] in (["-h"], ["--help"]):
        return None
    if len(argv) != 2 or not argv[1].isdigit():
        raise UsageError("probe needs a job folder and a task number", "it is run by the job script bisect --slurm writes")
    job_dir, task = Path(argv[0]), int(argv[1])
    spec = read_json(job_dir / SPEC)
    if not isinstance(spec, dict) or spec.get("schema") != SPEC_SCHEMA:
        raise UsageError(f"{job_dir / SPEC} is not a bisect job's probes", "resubmit with nox -s bisect -- --slurm")
    return Task(job_dir, task, tuple(str(arg) for arg in spec["argv"]), str(spec["name"]),
                _candidate(spec["candidates"][task]))


def _candidate(saved: object) -> Candidate:
    """A candidate as `ClusterProbes.submit` wrote it (``dataclasses.asdict``); a field of another shape is refused."""
    fields = as_object(saved)

    def text(name: str) -> str | None:
        value = fields.get(name)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"the bisect job's candidate has a {name} of the wrong kind", "resubmit with --slurm")
        return value

    version = text("version")
    if version is None:
        raise UsageError("the bisect job's candidate names no version", "resubmit with --slurm")
    return Candidate(version, tuple(str(r) for r in as_list(fields.get("requirements"))), text("exclude_newer"),
                     text("python"), text("jaxlib"), text("problem") or "", text("uploaded"), text("yanked"))
