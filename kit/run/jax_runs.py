"""Does JAX itself import and run here? The question asked before a failure may count as a verdict.

A probe counts only where JAX ran: a script that died because ``import jax``
failed (a commit's Python laid over a jaxlib it cannot use, a damaged
environment, a corrupt bytecode file) says nothing about the behaviour it
tests. So when a check fails, the same interpreter, with the same paths, is
asked to import jax and run one trivial computation. If that fails too, the
failure is JAX's, not the script's: "cannot run here", with JAX's error.

The question is asked after a failure, not before every run: a run that
passed has imported JAX already, and a bisect's probes fail about half the
time, so this costs one interpreter start (about 1-2 s) per failed probe.
The commit search asks it before runs too, where it has to know which build
a commit runs on (:mod:`kit.bisect.commits.runnable`).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import out_of_files
from ..install import Environment
from . import failures
from .child_processes import repro_env

RAN_MARK = "KIT_JAX_RAN"

# Portable from jax 0.4.13 to today: jax.numpy and a reduction; printing the value forces the computation.
SMOKE = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "value = (jnp.arange(3) + 1).sum()\n"
    f"print({RAN_MARK!r}, jax.__version__, int(value))\n"
)

TIMEOUT_S = 180
"""A first import of a large JAX on a loaded machine takes seconds; one that hangs is cut off here."""


@dataclass(frozen=True)
class JaxRuns:
    """The answer: whether JAX imported and computed, and if not, what it died of."""

    ok: bool
    error: str = ""
    """One line: the exception JAX raised (``ImportError: cannot import name '_jax' from 'jaxlib'``), or why none."""
    output_tail: tuple[str, ...] = ()
    seconds: float = 0.0

    def sentence(self) -> str:
        return "JAX imports and runs here" if self.ok else f"JAX itself cannot run here: {self.error}"

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "error": self.error, "output_tail": list(self.output_tail),
                "seconds": round(self.seconds, 2)}


def jax_runs(environment: Environment, timeout: int = TIMEOUT_S,
             extra_env: Mapping[str, str] | None = None) -> JaxRuns:
    """Import jax in ``environment`` (its interpreter, its extra paths) and run one small computation; ``extra_env``:
    what the run that failed was told besides (where its bytecode is kept), so JAX imports as it did there."""
    started = time.monotonic()
    try:
        done = subprocess.run([str(environment.python), "-c", SMOKE], capture_output=True, text=True,
                              errors="replace", timeout=timeout, stdin=subprocess.DEVNULL,
                              env=repro_env({**environment.isolating_env(), **(extra_env or {})},
                                            environment.pythonpath))
    except subprocess.TimeoutExpired:
        return JaxRuns(False, f"import jax did not finish in {timeout} s", (), time.monotonic() - started)
    except OSError as exc:
        fault = out_of_files(exc)  # no descriptor for its pipes: nothing about whether JAX runs
        if fault is not None:
            raise fault from None
        return JaxRuns(False, f"{environment.python} could not start: {exc.strerror or exc}", (),
                       time.monotonic() - started)
    lines = (done.stdout + done.stderr).splitlines()
    seconds = time.monotonic() - started
    if done.returncode == 0 and any(line.startswith(RAN_MARK) and line.rstrip().endswith(" 6") for line in lines):
        return JaxRuns(True, "", (), seconds)
    error = _unnamed_overlays(_error(lines, done.returncode), environment.pythonpath)
    tail = tuple(_unnamed_overlays(line, environment.pythonpath) for line in lines[-10:])
    return JaxRuns(False, error, tail, seconds)


def _unnamed_overlays(text: str, folders: Sequence[Path]) -> str:
    """``text`` with each of a commit's overlay folders (temporary, under /tmp) said as such: the error and the
    tail go into reports pasted into bug threads and into the kept pairs under reports/."""
    for folder in folders:
        text = text.replace(str(folder), "<the commit's overlay>")
    return text


def _error(lines: Sequence[str], code: int) -> str:
    """The exception JAX died of, in one line; else how the interpreter ended."""
    raised = failures.uncaught_exception(lines)
    if raised is not None:
        return raised.headline()
    if code < 0:
        return f"import jax was killed by signal {-code}"
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return f"import jax exited {code}" + (f": {last[:failures.HEADLINE_CHARS]}" if last else " and printed nothing")


_EXTENSION = "from jaxlib import xla_client\nprint(getattr(xla_client, '_version', ''))\n"


def extension_version(environment: Environment, timeout: int = 60) -> int | None:
    """The compiled jaxlib's ``xla_client._version`` (JAX's ``xla_extension_version``, later
    ``jaxlib_extension_version``): what JAX's Python gates new paths on. None where it does not say."""
    try:
        done = subprocess.run([str(environment.python), "-c", _EXTENSION], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=repro_env(environment.isolating_env()))
    except (subprocess.TimeoutExpired, OSError):
        return None
    last = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    return int(last[0]) if last and last[0].isdigit() else None
