"""A check's process, run: a script check's environment, its exit and KIT_RESULT read into an outcome.

`run_script` is the one way a script runs, from a check block or from
``--script``; `run_child` runs any check's process (a repro's too), its output
echoed and bounded, kept in a log where asked, and whatever it started ended
with it (kit/run/child_processes.py). After a failure, `unless_jax_failed` asks
whether JAX itself runs in the environment: if not, the failure is no verdict.
`kit.run.runner` builds the request and writes the record around these.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from repro.known_target import ENV as KNOWN_TARGET_ENV, PROBE_ENV as KNOWN_TARGET_PROBE_ENV

from .. import scratch
from ..check_settings import Check
from ..install import Environment, release_bytecode_env
from ..json_types import JsonObject, as_object
from ..log_events import Log, detail
from ..package_files import repro_root
from ..records import RunOutcome, Status
from ..requirements import installed_versions
from . import child_processes, failures, protocol
from .child_output import OutputLog, echo_to_console
from .child_processes import repro_env
from .facts import host_facts
from .jax_runs import jax_runs

# A script that forks hundreds of helpers still gets a short record: the first few name the rest.
LEFTOVERS_SHOWN = 10



def unless_jax_failed(failed_run: RunOutcome, env: Environment, log: Log,
                      told: Mapping[str, str] | None = None) -> RunOutcome:
    """A failed run's outcome as it is, unless JAX itself cannot import and run here: then no verdict (a named step).

    A failure inside ``import jax`` (a commit laid over a jaxlib it cannot
    use, a damaged environment) is "cannot run here", never the script's
    bad (`kit.run.jax_runs`); ``evidence.jax_cannot_run`` says what JAX died of.
    ``told``: what the probe needs besides (a check compiled for a chip: `repro.known_target.PROBE_ENV`).
    """
    health = jax_runs(env, extra_env={**env.isolating_env(), **release_bytecode_env(env),  # as the run imported it
                                      **(told or {})})
    log(detail(f"after the failure, asked whether JAX itself runs here: {health.sentence()} ({health.seconds:.1f} s)"))
    if health.ok:
        return failed_run
    return failed_run.inconclusive(f"JAX itself cannot import and run here ({health.error}), so the run's failure is "
                                   f"not a verdict on the behaviour; it was: {failed_run.reason or 'no reason given'}",
                                   jax_cannot_run=health.to_json())


def _bad_if_matched(outcome: RunOutcome) -> bool:
    """Did the user's bad_if match the failure? Then it is the verdict they asked for, whatever JAX did."""
    return bool(outcome.evidence_object("bad_if").get("matched"))


def script_env(result_path: Path, backend: str, host_devices: int | None, flags: str | None = None) -> dict[str, str]:
    """The variables a script check runs with: KIT_RESULT, and forced host devices on CPU (added to ``flags``,
    by default our XLA_FLAGS)."""
    extra = {"KIT_RESULT": str(result_path)}
    if backend == "cpu" and host_devices:
        flags = os.environ.get("XLA_FLAGS", "") if flags is None else flags
        flags = re.sub(r"--xla_force_host_platform_device_count=\S+", "", flags).strip()
        extra["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={host_devices}".strip()
    return extra


def run_script(env: Environment, check: Check, backend: str, timeout: int, log: Log,
               output_log: Path | None = None, echo: bool = True, extra_env: Mapping[str, str] | None = None,
               args: Sequence[str] = (), cwd: Path | None = None) -> RunOutcome:
    """Run a script check with the environment's python; the outcome its exit, KIT_RESULT and output give.

    The one way a script runs, whether it came from a check block or from
    ``--script``: KIT_RESULT, forced host devices on CPU, the environment's
    paths and the repository root on PYTHONPATH. The exit code and KIT_RESULT
    are read by kit/run/protocol.py, a failure is classed by
    kit/run/failures.py (an exception, an import, ``bad_if``). ``args``, ``cwd``: a program as its user runs it.
    """
    assert check.script is not None
    with scratch_dir() as tmp:
        out = tmp / "kit-result.json"
        cmd = [str(env.python), str(check.script), *args]
        log(detail("running " + " ".join(cmd)))
        extra = {**(extra_env or {}), **script_env(out, backend, check.host_devices, (extra_env or {}).get("XLA_FLAGS"))}
        # A check runs in its scratch folder, not the project; a program to explain where its user called it.
        ended = run_child(cmd, timeout, log, extra, env.pythonpath, output_log, echo=echo, cwd=cwd or tmp)
        outcome, result = script_fields(ended, out, timeout, check.bad_if, env)
    if failures.failed(ended.code) and (not_source := failures.source_problem(check.script)):
        outcome = failures.not_source(outcome, not_source)  # Python says so without a traceback: a plain exit 1
    if failures.failed(ended.code) and not _bad_if_matched(outcome):
        compiling = dict(KNOWN_TARGET_PROBE_ENV) if KNOWN_TARGET_ENV in (extra_env or {}) else {}
        outcome = unless_jax_failed(outcome, env, log, compiling)
    env_facts: JsonObject = {**{k: env.versions.get(k) for k in ("jax", "jaxlib", "numpy", "scipy")},
                             "python": env.python_version, "backend": backend,
                             "device_count": check.host_devices or None}
    if check.requires:
        env_facts["packages"] = installed_versions(check.requires, env.versions)  # what the extra packages were
    return outcome.ran_on({**host_facts(None), **env_facts, **as_object((result or {}).get("environment"))})


def script_fields(ended: child_processes.Ended, out: Path, timeout: int, bad_if: re.Pattern[str] | None,
                  env: Environment) -> tuple[RunOutcome, JsonObject | None]:
    """A script run's outcome (and its KIT_RESULT): the exit code first, KIT_RESULT adds detail, and a failure is
    classed by what it died of (kit/run/failures.py; ``env`` says what was installed).

    KIT_RESULT is read only when the script ran to its end: after a timeout or
    a signal, a torn result file says nothing the exit does not.
    """
    code = ended.code
    result = None
    try:
        if protocol.exit_observation(code, timeout)[0] is Status.RAN:
            result = protocol.read_result(out)
    except protocol.ResultError as exc:
        return RunOutcome(Status.CRASHED, None, f"{exc}", {"exit_code": code, "output_tail": ended.tail[-15:],
                                                         **leftover_evidence(ended)}), None
    judged = failures.judge(protocol.observation(code, timeout, result), code, ended.tail, bad_if, env.versions,
                            env.python_version)
    # Whether KIT_RESULT stated the verdict or the exit code alone gave it (``verdict_from``): a script that only
    # measures (metrics, exit 0, no verdict) is shown as measured, not unaffected (kit/matrix/measured.py).
    outcome = judged.with_evidence(exit_code=code, **leftover_evidence(ended))
    if failures.failed(code) or outcome.status is not Status.RAN:
        outcome = outcome.with_evidence(output_tail=ended.tail[-15:])
        last = last_line(ended.tail)
        if outcome.status is Status.CRASHED and last and "exception" not in judged.evidence:
            outcome = outcome.with_reason(f"{outcome.reason}: {last}")
    if ended.leftovers and not ended.timed_out:
        outcome = outcome.with_reason(f"{outcome.reason}; {_leftover_sentence(ended)}")
    return outcome, result


def run_child(cmd: list[str], timeout: int, log: Log, extra_env: Mapping[str, str] | None = None,
              pythonpath: tuple[Path, ...] = (), output_log: Path | None = None,
              echo: bool = True, cwd: Path | None = None) -> child_processes.Ended:
    """Run a check's process (kit/run/child_processes.py) in ``cwd``: output echoed, bounded; its whole tree ended.

    ``output_log``: every line echoed is also appended there (a bisect probe's log, kept beside it).
    ``echo=False`` with an ``output_log``: the lines go there only (a quiet bisect keeps the console short).
    """
    child_processes.end_abandoned_trees(log)
    with kept_output(output_log, echo) as shown:
        ended = child_processes.run(cmd, repro_env(extra_env, pythonpath), timeout, cwd=cwd or repro_root(),
                                    echo=shown)
    if isinstance(shown, OutputLog) and shown.sentence(output_log):
        log(shown.sentence(output_log))
    if ended.leftovers and not ended.timed_out:
        log(f"{_leftover_sentence(ended)} ({', '.join(ended.leftovers[:LEFTOVERS_SHOWN])})")
    return ended


@contextmanager
def kept_output(output_log: Path | None, console: bool = True) -> Iterator[Callable[[str], None]]:
    """An echo that shows each line and, with ``output_log``, appends it there as it comes (a kill keeps the rest).

    ``console=False`` shows nothing where a log keeps the lines; without a log the console is all there is.
    """
    if output_log is None:
        yield echo_to_console
        return
    writer = OutputLog.opened(output_log, console)
    try:
        yield writer
    finally:
        writer.close()


def _leftover_sentence(ended: child_processes.Ended) -> str:
    count = len(ended.leftovers)
    return f"it left {count} process{'' if count == 1 else 'es'} running when it exited, killed then"


def leftover_evidence(ended: child_processes.Ended) -> JsonObject:
    if not ended.leftovers:
        return {}
    return {"left_running": ended.leftovers[:LEFTOVERS_SHOWN], "left_running_count": len(ended.leftovers)}


def last_line(tail: list[str]) -> str:
    """The last line of output that says something ("" for none)."""
    return next((line for line in reversed(tail) if line.strip()), "")


@contextmanager
def scratch_dir() -> Iterator[Path]:
    """A private folder for one run's result file (`kit.scratch`), removed when the run ends.

    A session stopped by SIGTERM or SIGHUP unwinds through here (`cli.main`
    turns those signals into SystemExit); one killed outright (SIGKILL) leaves
    its folder, unlocked, which the next kit removes.
    """
    with scratch.folder("run") as path:
        yield path


