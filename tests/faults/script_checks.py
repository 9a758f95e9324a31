"""A user's script check run the whole way to its record, with this interpreter standing in for a release's python."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kit.config import Matrix, parse_matrix
from kit.install.environment import REUSED, Environment, Prepared
from kit.install.plan import InstallPlan, Resolution
from kit.run import runner
from tests.fake_index import refused_url
from tests.fake_jax_package import write_fake_jax


def script_matrix(tmp_path: Path, script: Path, timeout_s: int = 60) -> Matrix:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                         "install": {"index_url": refused_url()},
                         "release": [{"version": "0.6.0"}],
                         "checks": {"hostile": {"script": str(script), "timeout_s": timeout_s}}},
                        tmp_path / "matrix.toml")


def prepared_here(tmp_path: Path, jax_broken: bool = False) -> Prepared:
    """A 'built environment' whose python is this interpreter, with a stand-in jax: the run starts at once, offline."""
    plan = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0",),
                       exclude_newer="2025-04-30T00:00:00Z", index_url=refused_url(), pythons=("3.11",))
    resolution = Resolution("3.11", ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"})
    jax = write_fake_jax(tmp_path / "fake-jax", broken=jax_broken)
    return Prepared(plan, resolution, Environment(Path(sys.executable), {"jax": "0.6.0"}, REUSED, pythonpath=(jax,)))


def run_script_check(tmp_path: Path, body: str, timeout_s: int = 60,
                     jax_broken: bool = False) -> tuple[dict[str, Any], Path]:
    """Write ``body`` as the check script and run it as `nox -s hostile-0.6.0` would; the record and its file."""
    script = tmp_path / "hostile.py"
    script.write_text(body)
    matrix = script_matrix(tmp_path, script, timeout_s)
    return runner.run_check(matrix, runner.RunRequest("hostile", "0.6.0"), lambda _m: None,
                            prepared=prepared_here(tmp_path, jax_broken))
