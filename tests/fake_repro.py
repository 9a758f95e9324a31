"""A release's python for tests: ``python -m repro.<check> --out R.json [flags]`` without JAX.

The flags go through the repro's real command line (`repro.cli.checked_parameters`
with the parser `repro.cli.parser` generates from repro/parameters.py, as each
`repro.<check>.parse_parameters` does: its rules and its normal form), so the
record holds exactly the parameters a real run would; only the measurement is
left out, and so is the repro's module (its numpy import would cost a second a run). Anything else (a user's script) is run by the real interpreter,
with ``FAKE_JAX`` naming the release.
Used by a fake environment's ``bin/python`` (see `install_fake_release`).

What a run does is the test's to say (`tests.fake_releases.FakeReleases.behave`):
``$FAKE_RELEASES_DIR/behaviour.json`` maps ``"<version> <check>"`` (or
``"<version>"`` for every check) to a list of results for its successive runs
from then on, the last one repeating; each run is appended to
``$FAKE_RELEASES_DIR/runs.log`` first, so a test sees what ran and in which order. A result is a verdict
(``affected``, ``unaffected``, ``inconclusive``: RESULT.json written, exit 0),
or what goes wrong with a repro: ``crash`` (exit 1, a last line), ``hang``
(sleeps past any timeout), ``refuse`` (the repro's "does not fit" exit), or
``interrupt`` (a Ctrl-C reaching the kit while the repro runs). Without the
folder every run is ``unaffected``.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = ("affected", "unaffected", "inconclusive", "crash", "hang", "refuse", "interrupt")


def main(argv: list[str]) -> int:
    version = os.environ.get("FAKE_JAX", "0.6.0")
    if argv[:1] == ["-c"]:
        return _does_jax_run(version)
    if argv[:1] != ["-m"] or not argv[1].startswith("repro.") or argv[1] == "repro.kitcheck":
        _log_run(version, "script")
        if os.environ.get("FAKE_SITE"):  # the extra packages the environment "installed" (`FakeBackend`)
            sys.path.insert(0, os.environ["FAKE_SITE"])
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")
        return 0
    check = argv[1].split(".")[1]
    from repro.cli import UsageError, checked_parameters, parser, write_result
    from repro.contract import EXIT_REFUSED

    try:
        out, parameters = checked_parameters(check, parser(check, f"fake {check}"), argv[2:])
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    result = _next_result(version, check)
    if result == "crash":
        print(f"RuntimeError: fake crash of {check} on jax {version}", file=sys.stderr)
        return 1
    if result == "hang":
        time.sleep(600)
    if result == "refuse":
        print("error: does not fit: needs about 780 GiB of memory", file=sys.stderr)
        return EXIT_REFUSED
    if result == "interrupt":
        os.kill(os.getppid(), signal.SIGINT)  # the kit started us: Ctrl-C reaches it while we run
        time.sleep(600)
    environment = {"jax": version, "backend": "cpu", "device_kind": "cpu",
                   "device_count": max(parameters.get("devices") or [1]), "python": sys.version.split()[0],
                   "executable": os.environ.get("FAKE_PYTHON", sys.executable)}  # as a venv's python names itself
    written: dict[str, Any] = {"check": check, "verdict": result,
                               "reason": f"fake release: {result}; the parameters were read, nothing was measured",
                               "environment": environment, "parameters": parameters, "evidence": {"summary": {}}}
    write_result(out, written)
    return 0


def _folder() -> Path | None:
    folder = os.environ.get("FAKE_RELEASES_DIR")
    return Path(folder) if folder else None


def _log_run(version: str, check: str) -> list[str]:
    """Append this run to the runs log; the log's lines before it."""
    folder = _folder()
    if folder is None:
        return []
    log = folder / "runs.log"
    earlier = log.read_text().splitlines() if log.exists() else []
    with log.open("a") as file:
        file.write(f"{version} {check}\n")
    return earlier


def _next_result(version: str, check: str) -> str:
    """The result `behave` set for this run: the n-th of its list for the n-th run since it was set."""
    earlier = _log_run(version, check)
    folder = _folder()
    table = json.loads((folder / "behaviour.json").read_text()) if folder and (folder / "behaviour.json").exists() else {}
    said = table.get(f"{version} {check}") or table.get(version)
    if not said:
        return "unaffected"
    results = said["results"]
    runs_since = earlier[said["from_run"]:].count(f"{version} {check}")
    return str(results[min(runs_since, len(results) - 1)])


class FakeBackend:
    """Builds a release's environment as a ``bin/python`` that is this module, with ``FAKE_JAX`` naming the release.

    The kit's `EnvBackend`: given to `kit.install.envs.ensure_env` (or returned
    by a patched `pick_backend`), the kit builds and locks fake releases itself.
    """

    name = "fake"

    def create(self, path: Path, interpreter: Path) -> None:
        path.mkdir(parents=True)

    def install(self, path: Path, plan: Any, resolution: Any) -> None:
        from kit.install import envs

        python = envs.env_python(path)
        python.parent.mkdir(parents=True)
        # A check's extra packages (requires) as importable stubs that know their version; the release's own
        # packages are the real interpreter's.
        site = path / "fake-site"
        for name, version in resolution.versions.items():
            if name not in ("jax", "jaxlib", "numpy", "scipy"):
                (site / name).mkdir(parents=True)
                (site / name / "__init__.py").write_text(f"__version__ = {version!r}\n")
        write_installed(path, resolution.versions)
        python.write_text(f'#!/bin/sh\nFAKE_JAX={plan.jax} FAKE_SITE="{site}" FAKE_PYTHON="$0" exec "{sys.executable}" "{__file__}" "$@"\n')
        python.chmod(0o755)
        (path / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")  # as every venv the kit builds


def write_installed(path: Path, versions: dict[str, str], python: str = "3.11") -> None:
    """What an installer leaves in site-packages for ``versions``: each one's dist-info with a RECORD, and its package.

    The kit checks these before it reuses an environment (`kit.install.installed`).
    """
    site = path / "lib" / f"python{python}" / "site-packages"
    for name, version in versions.items():
        folder = name.replace("-", "_")
        (site / folder).mkdir(parents=True, exist_ok=True)
        (site / folder / "__init__.py").write_text("")
        info = site / f"{folder}-{version}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "RECORD").write_text(f"{folder}/__init__.py,,\n{info.name}/RECORD,,\n")


def install_fake_release(envs_dir: Path, matrix: Any, version: str, plan: Any = None,
                         versions: dict[str, str] | None = None) -> Path:
    """A built environment of ``version`` whose python is this module, and its lock: a warm release, offline.

    ``plan``: the install plan to build it from (the kit's own plan, when the
    test serves an index); by default one that needs no index. Its first Python
    is the one the environment "has"; ``versions`` what it "installed".
    """
    from kit.install import envs, lockfile
    from kit.install.key import InstallKey
    from kit.install.plan import InstallPlan, Resolution

    plan = plan or InstallPlan(jax=version, backend="cpu", requirements=(f"jax[cpu]=={version}", "scipy"),
                               exclude_newer="2025-04-30T00:00:00Z", index_url="https://example.invalid/simple",
                               pythons=("3.11",))
    resolution = Resolution(plan.pythons[0], ok=True, versions=versions or {"jax": version, "jaxlib": version})
    real_find = envs.find_or_fetch_interpreter
    envs.find_or_fetch_interpreter = lambda wanted, log: Path(sys.executable)  # type: ignore[assignment]
    try:
        built = envs.ensure_env(envs_dir, plan, resolution, FakeBackend(), lambda message: None)
    finally:
        envs.find_or_fetch_interpreter = real_find  # type: ignore[assignment]
    lockfile.write_lock(envs_dir, lockfile.install_settings(matrix, matrix.release(version), InstallKey("cpu")), plan, resolution)
    return built.python


def _does_jax_run(version: str) -> int:
    """The kit's "does JAX itself run here?" (kit/run/jax_runs.py): yes, unless the test broke this release's JAX."""
    folder = os.environ.get("FAKE_RELEASES_DIR")
    broken = Path(folder) / "broken-jax.json" if folder else None
    if broken is not None and broken.exists() and version in json.loads(broken.read_text()):
        print("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
              f"ImportError: cannot import name '_jax' from 'jaxlib' (fake jax {version})", file=sys.stderr)
        return 1
    from kit.run.jax_runs import RAN_MARK

    print(RAN_MARK, version, 6)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
