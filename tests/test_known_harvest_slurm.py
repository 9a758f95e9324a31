"""``known --harvest --slurm``: the job script, and a job array run by stand-ins for sbatch, squeue and scontrol
that run each task here at once (the real cluster's run is in test_known_harvest_integration.py)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from kit.config import load_matrix
from kit.errors import UsageError
from kit.known.harvest import command as command_module
from kit.known.harvest.candidates import HarvestCandidate
from kit.known.harvest.slurm import batch_script, harvest_on_slurm, task_command
from kit.known.harvest.store import BuildKey, Store
from kit.slurm.jobs import SlurmOptions

BUILD = BuildKey("0.11.0", "0.11.0", "3.13.0", ("pytest==8.3.5",), 4)

# sbatch --parsable SCRIPT: job 42, every array task run now, one after the other, its output where the script's
# #SBATCH --output says (as slurmstepd writes it).
FAKE_SBATCH = '''
import re, subprocess, sys
script = open(sys.argv[-1]).read()
last = int(re.search(r"--array=0-(\\d+)", script).group(1))
output = re.search(r"--output=(\\S+)", script).group(1)
for task in range(last + 1):
    with open(output.replace("%A", "42").replace("%a", str(task)), "w") as out:
        subprocess.run(["bash", sys.argv[-1]], env={"SLURM_ARRAY_TASK_ID": str(task), "PATH": "/usr/bin:/bin"},
                       stdout=out, stderr=subprocess.STDOUT)
print("42")
'''

# What a task runs in the test: the first commit gets a confirmed result in the store; the second fails as the kit
# does on an error.
FAKE_TASK = '''
import json, sys
store, commit = sys.argv[1], sys.argv[-1]
if commit.startswith("a"):
    result = {"commit": commit, "build_tag": sys.argv[2], "status": "confirmed", "seconds": 5.0,
              "tests": [{"verdict": "confirmed"}]}
    open(f"{store}/{commit[:12]}.json", "w").write(json.dumps(result))
else:
    print("ERROR: boom")
    sys.exit(1)
'''


def _tool(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tools = tmp_path / "bin"
    tools.mkdir()
    _tool(tools, "sbatch", f"#!{sys.executable}\n{FAKE_SBATCH}")
    _tool(tools, "squeue", "#!/bin/sh\nexit 0\n")  # nothing queued: every task has left the queue
    _tool(tools, "scontrol", "#!/bin/sh\necho 'Slurmctld(primary) at here is UP'\n")
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    return tools


def test_the_script_runs_one_commit_per_task_with_the_login_nodes_command(tmp_path: Path) -> None:
    command = task_command("/venv/bin/python", "jax-v0.11.0", "f" * 40, "0.11.0", Path("/jax"), Path("/s"))
    script = batch_script(3, tmp_path / "job", Path("/checkout"), command, SlurmOptions("gpu", "2:00:00"), 2)
    assert "#SBATCH --array=0-2%2\n" in script and "#SBATCH --partition=gpu\n" in script
    assert "#SBATCH --time=2:00:00\n" in script and "cd /checkout\n" in script
    assert f'sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {tmp_path}/job/commits.txt' in script
    assert script.endswith("exec /venv/bin/python -m kit known --harvest --since jax-v0.11.0 --until "
                           f"{'f' * 40} --build 0.11.0 --jax-repo /jax --store /s --commits \"$commit\"\n")
    assert "%" not in batch_script(3, tmp_path, Path("/c"), command, SlurmOptions(), None).split("--array=")[1][:6]


def test_each_commit_is_said_as_its_task_lands_with_its_result_or_why_none(
        fake_slurm: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.folder.mkdir()
    todo = [HarvestCandidate(c * 40, "p" * 40, "2026-07-01", "Fix", ("tests/a_test.py",)) for c in "ab"]
    task = tmp_path / "task.py"
    task.write_text(FAKE_TASK, encoding="utf-8")
    said: list[str] = []
    finished = harvest_on_slurm(todo, [sys.executable, str(task), str(store.folder), BUILD.tag], tmp_path,
                                tmp_path / "jobs", store, BUILD, SlurmOptions(), None, said.append)
    assert finished
    assert said[0].startswith("submitted SLURM job array 42: 2 commits, one per task")
    assert any(line.startswith("[1/2] aaaaaaaaaa confirmed: 1 confirmed (5.0 s); ") for line in said), said
    (why,) = [line for line in said if line.startswith("[2/2] bbbbbbbbbb")]
    assert "no result in the store: finished without a record (ERROR: boom)" in why
    (job,) = (tmp_path / "jobs").iterdir()
    assert (job / "commits.txt").read_text() == f"{'a' * 40}\n{'b' * 40}\n"
    assert json.loads((job / "job.json").read_text())["build"]["release"] == "0.11.0"


def test_a_result_of_another_build_is_no_result(fake_slurm: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.folder.mkdir()
    todo = [HarvestCandidate("a" * 40, "p" * 40, "2026-07-01", "Fix", ("tests/a_test.py",))]
    task = tmp_path / "task.py"
    task.write_text(FAKE_TASK, encoding="utf-8")
    said: list[str] = []
    harvest_on_slurm(todo, [sys.executable, str(task), str(store.folder), "jaxlib-0.9.0-0123456789"], tmp_path,
                     tmp_path / "jobs", store, BUILD, SlurmOptions(), None, said.append)
    assert any("[1/1] aaaaaaaaaa: no result in the store" in line for line in said), said


def test_not_waiting_says_where_the_results_land(fake_slurm: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    todo = [HarvestCandidate("a" * 40, "p" * 40, "2026-07-01", "Fix", ("tests/a_test.py",))]
    said: list[str] = []
    assert not harvest_on_slurm(todo, ["true"], tmp_path, tmp_path / "jobs", store, BUILD,
                                SlurmOptions(wait=False), None, said.append)
    assert "not waiting (--no-wait): `squeue -j 42` shows the array" in said[-1]


def test_the_cluster_options_go_with_slurm() -> None:
    matrix = load_matrix(Path(__file__).resolve().parent.parent / "matrix.toml")
    with pytest.raises(UsageError, match="--partition, --time and --no-wait go with --slurm"):
        command_module.harvest_main(matrix, ["--harvest", "--since", "jax-v0.11.0", "--no-wait"], print,
                                    Path("/nonexistent"))
