"""kit.bisect.probe.cluster: a bisect whose probes run as SLURM jobs, K per round, on a real (local) SLURM."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from kit.bisect.probe.cluster import batch_script
from kit.slurm.jobs import SlurmOptions
from tests.local_slurm import checkout_copy


def test_the_batch_script_runs_probe_i_of_the_round_with_the_kit(tmp_path: Path) -> None:
    script = batch_script(3, tmp_path, SlurmOptions(partition="gpu"), ntasks=2, python="/usr/bin/python3")
    assert "#SBATCH --array=0-2" in script
    assert "#SBATCH --ntasks=2" in script
    assert "#SBATCH --partition=gpu" in script
    assert "export KIT_SRUN=1" in script
    assert script.rstrip().endswith(f'exec /usr/bin/python3 -m kit probe {tmp_path} "$SLURM_ARRAY_TASK_ID"')


# The same repro and range as test_bisect_driver's real bisect, so CI's environments serve both.
SCRIPT = textwrap.dedent(
    """\
    import sys
    import jax
    version = tuple(int(p) for p in jax.__version__.split(".")[:3])
    print("jax", jax.__version__)
    sys.exit(1 if version >= (0, 5, 2) else 0)
    """
)


@pytest.mark.integration
@pytest.mark.slurm
def test_a_slurm_bisect_names_the_same_release_in_fewer_rounds_with_job_ids(
        local_slurm: dict[str, str], tmp_path: Path) -> None:
    copy = checkout_copy(tmp_path)
    (copy / "repro.py").write_text(SCRIPT)
    argv = ["nox", "-s", "bisect", "--", "--script", "repro.py", "--good", "0.5.0", "--bad", "0.5.3"]
    reports = copy / "reports" / "bisect-script-repro-good0.5.0-bad0.5.3-cpu.json"
    done = subprocess.run([*argv, "--slurm", "--jobs", "3"], cwd=copy, env=local_slurm, capture_output=True,
                          text=True, timeout=1200)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    on_slurm = json.loads(reports.read_text())
    job_ids = re.findall(r"submitted SLURM job array (\d+)", output)
    assert len(job_ids) == len(on_slurm["rounds"]) == 2, output[-3000:]  # the bounds, then 0.5.1 and 0.5.2 together
    assert on_slurm["rounds"][1] == ["0.5.1", "0.5.2"]
    for version in ("0.5.0", "0.5.1", "0.5.2", "0.5.3"):
        assert re.fullmatch(rf"SLURM job ({'|'.join(job_ids)})_\d on \S+", on_slurm["observations"][version]["came_from"]["job"])
    here = subprocess.run([*argv, "--fresh"], cwd=copy, env=local_slurm, capture_output=True, text=True, timeout=1200)
    assert here.returncode == 0, (here.stdout + here.stderr)[-3000:]
    local = json.loads(reports.read_text())
    assert (local["last_same"], local["first_different"]) == (on_slurm["last_same"], on_slurm["first_different"]) \
        == ("0.5.1", "0.5.2")
    assert len(local["rounds"]) > len(on_slurm["rounds"])
    markdown = reports.with_suffix(".md").read_text()
    assert "/" + str(copy).strip("/") not in markdown  # paths relative to the project, never this machine's
