"""A real single-node SLURM for the tests that submit jobs (the matrix's array, bisect's rounds), and a checkout copy.

`local_slurm` is the cluster CI started (``SLURM_CONF``), or one it starts in
a state folder of its own and stops; `checkout_copy` is this checkout's files
without its records, sharing its JAX environments, for a nox run of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def local_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A running single-node SLURM: the one CI started, or one this fixture starts and stops."""
    env = dict(os.environ)
    if env.get("SLURM_CONF") and Path(env["SLURM_CONF"]).is_file() and shutil.which("sinfo") and sinfo_ok(env):
        yield env
        return
    # A state folder (and free ports) of its own: a cluster someone else runs here is left alone.
    env["KIT_SLURM_STATE"] = str(tmp_path_factory.mktemp("slurm-state"))
    script = str(ROOT / "scripts" / "slurm-local.sh")
    subprocess.run([script, "up"], check=True, timeout=900, env=env)
    conf = subprocess.run([script, "env"], check=True, capture_output=True, text=True, env=env).stdout
    env["SLURM_CONF"] = conf.split("=", 1)[1].strip()
    try:
        yield env
    finally:
        subprocess.run([script, "down"], timeout=120, env=env)


def sinfo_ok(env: dict[str, str]) -> bool:
    try:
        return subprocess.run(["sinfo", "-h"], env=env, capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def checkout_copy(tmp_path: Path) -> Path:
    """This checkout's files, without its records, sharing its JAX environments."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.split("\0")
    copy = tmp_path / "checkout"
    for name in filter(None, listed):
        if name.startswith("reports/") or not (ROOT / name).is_file():
            continue
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    (ROOT / ".nox" / "jax-envs").mkdir(parents=True, exist_ok=True)
    (copy / ".nox").mkdir()
    (copy / ".nox" / "jax-envs").symlink_to(ROOT / ".nox" / "jax-envs")
    return copy
