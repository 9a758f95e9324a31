"""An existing interpreter: what it has, read without changing anything.

A user's own installation (``--python PATH``, an ``[[environment]]`` in
matrix.toml) is run as it is: nothing is resolved or installed and no index is
asked. Before a check runs there, `inspect_interpreter` starts that interpreter
once on ``repro/inventory.py`` (standard library only, so it runs on whatever
Python is there) and reads back its Python, every installed distribution and
the backend and devices its JAX reports. Whatever goes wrong (not a file, not a
Python, a Python too old, a JAX that does not import) becomes one sentence.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..errors import UsageError
from ..json_types import JsonObject
from ..package_files import repro_root
from ..records import packages_fingerprint
from ..user_paths import file_problem

PREFIX = "KIT-INVENTORY "
"""What each line of ``repro/inventory.py``'s answer starts with (the rest is JSON)."""

PROBE_TIMEOUT_S = 180
"""Importing a CUDA JAX and listing its GPUs takes seconds, up to a minute on a cold node's first import."""


@dataclass(frozen=True)
class Interpreter:
    """What an existing interpreter has, as it reported it."""

    python: Path
    """The interpreter as given (a venv's ``bin/python`` is a link: it is not resolved, or the venv would be lost)."""
    python_version: str
    packages: Mapping[str, str]
    """Every installed distribution, by normalised name (``jax-cuda12-plugin``), and its version."""
    backend: str | None
    """``jax.default_backend()`` there (cpu, gpu, tpu); None when JAX did not say."""
    device_kind: str | None = None
    device_count: int | None = None
    jax_problem: str = ""
    """Why JAX did not report ("" when it did): ``ModuleNotFoundError: No module named 'jax'``."""

    @property
    def fingerprint(self) -> str:
        """`kit.records.packages_fingerprint` of what is installed."""
        return packages_fingerprint(self.packages)

    def versions(self, names: tuple[str, ...]) -> str:
        """``jax 0.4.35, jaxlib 0.4.35, numpy (absent)`` for ``names``."""
        return ", ".join(f"{name} {self.packages.get(name, '(absent)')}" for name in names)

    def report(self) -> str:
        """What its JAX reports, in words."""
        if self.backend is None:
            return f"JAX did not report a backend ({self.jax_problem or 'no answer'})"
        count = self.device_count if self.device_count is not None else "?"
        return f"JAX reports backend {self.backend}, {count} device(s) ({self.device_kind or 'unknown kind'})"


def inspect_interpreter(python: Path, timeout_s: float = PROBE_TIMEOUT_S) -> Interpreter:
    """Run ``repro/inventory.py`` with ``python``; `UsageError` (one sentence) when it is no usable interpreter."""
    _must_be_a_program(python)
    lines, said = _probe(python, timeout_s)
    if not lines:
        raise UsageError(f"{python} did not answer as a Python interpreter ({said or 'it printed nothing'})",
                         "point --python (or the environment's python) at an interpreter, e.g. VENV/bin/python")
    first = lines[0]
    if not first.get("supported"):
        raise UsageError(f"{python} is Python {first.get('python', '?')}; the checks need Python 3.9 or newer",
                         "point it at an interpreter of Python 3.9 or newer")
    if len(lines) == 1 and said.startswith("no answer within"):  # Python answered, then `import jax` hung
        raise UsageError(f"{python}: import jax did not finish in {timeout_s:.0f} s (Python {first.get('python', '?')} "
                         "answered, then its JAX did not), so no check can run with it",
                         f"see where it hangs: {python} -X importtime -c 'import jax'")
    report: JsonObject = lines[1] if len(lines) > 1 else {"error": f"it stopped before JAX answered ({said or 'no reason given'})"}
    packages, backend, kind, count = (first.get("packages"), report.get("backend"), report.get("device_kind"),
                                      report.get("device_count"))
    return Interpreter(
        python=python,
        python_version=str(first.get("python")),
        packages={str(k): str(v) for k, v in packages.items()} if isinstance(packages, dict) else {},
        backend=backend if isinstance(backend, str) else None,
        device_kind=kind if isinstance(kind, str) else None,
        device_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        jax_problem=str(report.get("error") or ""),
    )


def _must_be_a_program(python: Path) -> None:
    if python.is_dir():
        inside = next((p for p in (python / "bin" / "python", python / "Scripts" / "python.exe") if p.is_file()), None)
        tip = f"did you mean {inside}?" if inside else "give the interpreter itself, e.g. VENV/bin/python"
        raise UsageError(f"{python} is a folder, not a Python interpreter", tip)
    if not python.is_file():  # missing, a symbolic link loop, a pipe or a device: file_problem says which
        raise UsageError(f"{python} {file_problem(python) or 'is not a file'}",
                         "give the path of an interpreter, e.g. VENV/bin/python")
    if not os.access(python, os.X_OK):
        raise UsageError(f"{python} is not executable, so it cannot be a Python interpreter",
                         "give the path of an interpreter, e.g. VENV/bin/python")


def probe_env() -> dict[str, str]:
    """The inventory's environment: the user's, with ``repro`` importable (`kit.package_files.repro_root`: never
    an installed kit's site-packages, whose packages would pass for the user's) and no GPU memory claimed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repro_root()), env.get("PYTHONPATH", "")]))
    # Listing the GPUs must not reserve most of their memory, as JAX does on first use by default.
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return env


def _probe(python: Path, timeout_s: float) -> tuple[list[JsonObject], str]:
    """The inventory's answer lines (JSON objects, read into an `Interpreter` by the caller), and its last words when it said less than both lines."""
    try:
        proc = subprocess.Popen([str(python), "-m", "repro.inventory"], cwd=repro_root(), env=probe_env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True)
    except OSError as error:  # not an executable format, a broken link, ...
        return [], error.strerror or str(error)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        ended = f"exit code {proc.returncode}" if proc.returncode else ""
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        ended = f"no answer within {timeout_s:.0f} s"
    except BaseException:
        _kill_group(proc)  # Ctrl-C: the probe ends with the kit
        proc.communicate()
        raise
    lines: list[JsonObject] = []
    for line in out.splitlines():
        if line.startswith(PREFIX):
            try:
                parsed = json.loads(line[len(PREFIX):])
            except ValueError:
                continue
            if isinstance(parsed, dict):
                lines.append(parsed)
    # What it said last: on stderr, else on stdout (a shell script given as python prints there).
    errors = [line.strip() for line in (err or "").splitlines() if line.strip()]
    printed = [line.strip() for line in out.splitlines() if line.strip() and not line.startswith(PREFIX)]
    last = (errors or printed or [""])[-1]
    return lines, "; ".join(filter(None, [ended, last[:300]]))


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
