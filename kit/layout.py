"""Where everything the kit writes goes, as one value derived from matrix.toml's two folders.

``[kit] results_dir`` (the matrix's records, ``reports/results``) and
``envs_dir`` (built environments, ``.nox/jax-envs``) are the only places a
user chooses. Everything else sits beside them: what is read back (reports,
a bisect's probe cache, its records of scripts and commits) next to the
records, what is rebuilt at will (SLURM job folders, bytecode, JAX's clone)
next to the environments. Derived once here (``Matrix.layout``) and passed
down; nothing rewrites a folder of the matrix to send a record elsewhere.

The ``jax-kit`` command (kit/project.py) adds a third folder, the user cache
every project on the machine shares: there the probe cache and the runnable
pairs, which any project's bisect can reuse and any rerun rebuilds, sit in
it instead of beside one project's records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    """The kit's folders and files on disk."""

    results: Path
    """The matrix's records, one JSON per run (what ``nox -s report`` reads)."""
    envs: Path
    """Built release environments and their locks."""
    reports: Path
    """matrix.md, matrix.json and every bisect's report."""
    probe_cache: Path
    """Every bisect's probes, keyed by identity (`kit.bisect.probe.cache`)."""
    script_records: Path
    """Records of ``--script`` probes: no check of the matrix, so not among its records."""
    commit_records: Path
    """Records of commit probes: a commit is not a release, and the matrix reads releases only."""
    runnable: Path
    """Which (commit, build) pairs JAX itself runs on (`kit.bisect.commits.runnable`)."""
    metric_samples: Path
    """A metric bisect's kept samples, so a rerun resumes (`kit.bisect.probe.metric_samples`)."""
    triage_records: Path
    """Records of checks ``nox -s triage`` wrote from a bug report: not yet a check of the matrix."""
    slurm: Path
    """SLURM job folders: scripts, task output, what each task left."""
    commit_bytecode: Path
    """Commit overlays' bytecode, filed by source hash (`kit.install.bytecode`)."""
    jax_history: Path
    """The kit's own clone of JAX for ``--commits`` when none is given."""

    @classmethod
    def of(cls, results: Path, envs: Path, shared: Path | None = None) -> Layout:
        """Everything else beside the two folders a user chooses; the probes every project reuses in ``shared``."""
        bisect, state = results.parent / "bisect", envs.parent
        reused = shared / "bisect" if shared is not None else bisect
        return cls(results=results, envs=envs, reports=results.parent, probe_cache=reused / "probes",
                   script_records=bisect / "script-records", commit_records=bisect / "commit-records",
                   runnable=reused / "runnable", metric_samples=bisect / "metric",
                   triage_records=results.parent / "triage" / "records", slurm=state / "slurm",
                   commit_bytecode=state / "commit-bytecode", jax_history=state / "jax-history" / "jax.git")
