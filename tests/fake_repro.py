"""A release's python for tests: ``python -m repro.<check> --out R.json [flags]`` without JAX.

The flags go through the repro's real command line (`repro.<check>.parse_parameters`:
the parser generated from repro/parameters.py, its rules and its normal form), so
the record holds exactly the parameters a real run would; only the measurement
is left out (verdict ``unaffected``). Anything else is run by the real interpreter.
Used by a fake environment's ``bin/python`` (see `install_fake_release`).
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    if argv[:1] != ["-m"] or not argv[1].startswith("repro.") or argv[1] == "repro.kitcheck":
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")
        return 0
    repro = importlib.import_module(argv[1])
    from repro.cli import UsageError, write_result

    try:
        out, parameters = repro.parse_parameters(argv[2:])
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    environment = {"jax": os.environ.get("FAKE_JAX", "0.6.0"), "backend": "cpu", "device_kind": "cpu",
                   "device_count": max(parameters.get("devices") or [1]), "python": sys.version.split()[0]}
    result: dict[str, Any] = {"check": argv[1].split(".")[1], "verdict": "unaffected",
                              "reason": "fake release: the parameters were read, nothing was measured",
                              "environment": environment, "parameters": parameters, "evidence": {"summary": {}}}
    write_result(out, result)
    return 0


def install_fake_release(envs_dir: Path, matrix: Any, version: str) -> Path:
    """A built environment of ``version`` whose python is this module, and its lock: a warm release, offline."""
    from kit.install import envs, lockfile
    from kit.install.plan import InstallPlan, Resolution

    plan = InstallPlan(jax=version, backend="cpu", requirements=(f"jax[cpu]=={version}", "scipy"),
                       exclude_newer="2025-04-30T00:00:00Z", index_url="https://example.invalid/simple",
                       pythons=("3.11",))
    resolution = Resolution("3.11", ok=True, pins={"jax": version, "jaxlib": version})

    class FakeBackend:
        name = "fake"

        def create(self, path: Path, interpreter: Path) -> None:
            python = envs.env_python(path)
            python.parent.mkdir(parents=True)
            python.write_text(f'#!/bin/sh\nFAKE_JAX={version} exec "{sys.executable}" "{__file__}" "$@"\n')
            python.chmod(0o755)

        def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
            pass

    real_find = envs.find_interpreter
    envs.find_interpreter = lambda wanted: Path(sys.executable)  # type: ignore[assignment]
    try:
        built = envs.ensure_env(envs_dir, plan, resolution, FakeBackend(), lambda message: None)
    finally:
        envs.find_interpreter = real_find  # type: ignore[assignment]
    lockfile.write_lock(envs_dir, lockfile.install_settings(matrix, matrix.release(version), "cpu"), plan, resolution)
    return built.python


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
