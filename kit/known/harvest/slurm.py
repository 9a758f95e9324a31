"""``known --harvest --slurm``: the stretch's candidates as one SLURM job array, one commit per array task.

The login node lists the candidates and builds the release's environment with
JAX's test harness once (the tasks reuse it: the checkout, its environments
and the catalogue's store must be on a folder every node shares, as for the
matrix: docs/cluster.md). Array task *i* runs the same harvest for line *i* of
``commits.txt`` only (``--commits``), so each commit's two sides are kept in
the store as a local harvest keeps them (`kit.known.harvest.store`: one file
per side, written atomically, so tasks never write one file). A commit whose
result is already in the store for this build is not submitted again: a job
stopped half way (scancel, a time limit) is resumed by the same command.

While it waits, the kit says each task's state as it changes and, as each
lands, what its commit came to (read back from the store) or why it left none
(`kit.slurm.task_output`).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Sequence

from ...atomic_files import atomic_write_text, atomic_write_texts
from ...log_events import Log
from ...records import JsonTextError, read_json
from ...slurm.follow import follow
from ...slurm.jobs import SlurmOptions, array_header, new_job_dir, require_controller, require_sbatch, sbatch
from ...slurm.task_output import task_end
from .candidates import HarvestCandidate
from .store import BuildKey, Store


def task_command(python: str, since: str, until: str, release: str, clone: Path, store: Path) -> list[str]:
    """What every array task runs, less its ``--commits``: the harvest of one commit on the login node's build."""
    return [python, "-m", "kit", "known", "--harvest", "--since", since, "--until", until, "--build", release,
            "--jax-repo", str(clone), "--store", str(store)]


def batch_script(count: int, job_dir: Path, workdir: Path, command: Sequence[str], options: SlurmOptions,
                 at_once: int | None) -> str:
    """The sbatch script: array task i harvests the commit on line i + 1 of ``commits.txt``."""
    lines = array_header("jax-kit-harvest", count, job_dir, 1, options)
    if at_once:  # SLURM's own throttle: at most this many of the array's tasks run at a time
        lines = [f"{line}%{at_once}" if line.startswith("#SBATCH --array=") else line for line in lines]
    lines += [
        "set -euo pipefail",
        f"cd {shlex.quote(str(workdir))}",
        f'commit=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {shlex.quote(str(job_dir / "commits.txt"))})',
        'echo "array task $SLURM_ARRAY_TASK_ID: commit $commit on $(hostname)"',
        f'exec {shlex.join(command)} --commits "$commit"',
    ]
    return "\n".join(lines) + "\n"


def harvest_on_slurm(todo: Sequence[HarvestCandidate], command: Sequence[str], workdir: Path, jobs_dir: Path,
                     store: Store, build: BuildKey, options: SlurmOptions, at_once: int | None, log: Log) -> bool:
    """Submit one task per commit of ``todo``; unless ``options.wait`` is off, say each commit as it lands.

    True when every task left the queue while the kit watched (its results are
    in the store), False when it did not wait or stopped waiting.
    """
    require_sbatch()
    require_controller()
    job_dir = new_job_dir(jobs_dir)
    job_dir.mkdir(parents=True, exist_ok=True)
    script = job_dir / "job.sh"
    atomic_write_texts({job_dir / "commits.txt": "".join(f"{c.commit}\n" for c in todo),
                        script: batch_script(len(todo), job_dir, workdir, command, options, at_once)})
    job_id = sbatch(script)
    atomic_write_text(job_dir / "job.json", json.dumps({"schema": 1, "job_id": job_id, "build": build.to_json(),
                                                         "commits": [c.commit for c in todo]}, indent=2))
    log(f"submitted SLURM job array {job_id}: {len(todo)} commit{'' if len(todo) == 1 else 's'}, one per task "
        f"({job_dir})")
    if not options.wait:
        log(f"not waiting (--no-wait): `squeue -j {job_id}` shows the array; each commit's result lands in "
            f"{store.folder}, and the same command without --slurm --no-wait then says what they came to")
        return False
    log(f"waiting for job {job_id} (Ctrl-C stops waiting, not the job: `scancel {job_id}` does; the same command "
        "then submits only the commits with no result)")

    def landed(task: int, elapsed: float) -> None:
        log(landed_line(task, todo, store, build, job_dir / f"{job_id}_{task}.out", elapsed))

    try:
        return follow(job_id, len(todo), lambda task: f"[{task + 1}/{len(todo)}] {todo[task].short}", log,
                      landed=landed, stopped_tip="each commit's result still lands in the store")
    except KeyboardInterrupt:
        log(f"stopped waiting; job {job_id} goes on, and each commit's result lands in {store.folder}")
        raise


def landed_line(task: int, todo: Sequence[HarvestCandidate], store: Store, build: BuildKey, output: Path,
                elapsed: float) -> str:
    """``[3/29] 75a26ecf2f confirmed: 1 of 1 tests confirmed (48 s), 120 s since submission``, or why none."""
    candidate = todo[task]
    head = f"[{task + 1}/{len(todo)}] {candidate.short}"
    result = _result(store, candidate.commit, build)
    if result is None:
        return f"{head}: no result in the store: {task_end(output).sentence}"
    tests = result.get("tests")
    verdicts = [row.get("verdict") for row in tests if isinstance(row, dict)] if isinstance(tests, list) else []
    said = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts) if isinstance(v, str))
    return f"{head} {result.get('status')}: {said or 'no test ran'} ({result.get('seconds')} s); " \
           f"{elapsed:.0f} s since submission"


def _result(store: Store, commit: str, build: BuildKey) -> dict[str, object] | None:
    """The commit's result on this build, or None (none yet, another build's, or torn)."""
    try:
        data = read_json(store.result_path(commit))
    except (OSError, JsonTextError):
        return None
    if isinstance(data, dict) and data.get("commit") == commit and data.get("build_tag") == build.tag:
        return data
    return None

