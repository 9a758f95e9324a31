"""A check across N processes joined by jax.distributed: start them, watch them, merge their results.

A launcher (`kit.launch`) says how they start: locally (``local``) the kit
starts N copies of the repro itself, each in its own process group, with the
coordinator (127.0.0.1 on a free port) and its rank in the environment (see
repro/distributed.py); inside a SLURM job started by `kit.matrix.slurm`,
``srun`` starts them instead and ``jax.distributed.initialize()`` reads
SLURM's variables by itself. `ProcessGroup` runs a launch, whatever started it:
a user's program explained across processes too (`kit.run.explained_ranks`).

Every process reads the compiled HLO and reaches a verdict on its own; the
merged record keeps process 0's evidence, every process's facts, and says
whether they agree. One process that dies or hangs takes the others down
(a short grace lets partners that are failing the same way write why), and
the timeout or Ctrl-C kills every process group: nothing is left behind.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Mapping, Sequence

from .. import launch
from ..checks import builtin
from ..log_events import Log
from ..records import RunOutcome, Status, Verdict
from ..json_types import JsonObject, as_object, as_text
from ..package_files import repro_root
from . import result_files
from .child_output import Echo, Tail, echo_to_console
from .child_processes import Child, end_all


# After one process fails, how long the others get to finish or fail on their
# own before they are killed: long enough to write their reason, short enough
# that a partner blocked in a collective does not wait out the whole timeout.
GRACE_S = 20.0

# How long SIGTERM gets before SIGKILL when the processes are ended (srun cancels its step on SIGTERM).
KILL_GRACE_S = 5.0

# Set by the SLURM batch script: start the processes with srun, not locally.
SRUN_ENV = "KIT_SRUN"



def structural_keys(result: Mapping[str, object]) -> tuple[str, ...]:
    """The summary figures of ``result``'s check that come from the compiled HLO: every process must see the same."""
    check = builtin(str(result.get("check")))
    return check.structural_keys if check is not None else ()


def result_path(out: Path, rank: int) -> Path:
    """Where process ``rank`` writes (repro.scaling.process_result_path)."""
    return out.with_name(f"{out.stem}.p{rank}{out.suffix}")



def run_processes(cmd: Sequence[str], out: Path, processes: int, timeout: int, env: dict[str, str],
                  log: Log, launcher: str | None = None, hosts: tuple[str, ...] = ()) -> RunOutcome:
    """Run the repro as ``processes`` processes; their one outcome.

    ``launcher``: the one the command line named; by default srun inside the kit's SLURM tasks, else local.
    """
    name = launcher or ("srun" if os.environ.get(SRUN_ENV) else "local")
    spec = launch.LaunchSpec(processes, hosts=hosts)
    started = launch.checked(name, spec).launch(spec, cmd, env, str(repro_root()))
    log(f"starting {started.how}")
    group = ProcessGroup(started.commands, started.envs, started.prefixes)
    codes, tail = group.wait(timeout)
    if group.timed_out:
        return RunOutcome(Status.TIMED_OUT, reason=f"the {processes} processes did not finish within {timeout} s; "
                       "all were killed", evidence={"output_tail": tail, "exit_codes": list(codes)})
    return merge(out, processes, codes, tail)


def merge(out: Path, processes: int, codes: Sequence[int | None], tail: list[str]) -> RunOutcome:
    """One outcome from the N result files (or why there is no result)."""
    read = [read_result(result_path(out, rank)) for rank in range(processes)]
    results = [result for result, _why in read]
    unsupported = [r["unsupported"] for r in results if r and r.get("unsupported")]
    if unsupported:
        return RunOutcome(Status.UNSUPPORTED, reason=f"{processes} processes cannot run here: {unsupported[0]}",
                       evidence={"exit_codes": list(codes), "per_process": unsupported})
    missing = [rank for rank, r in enumerate(results) if r is None]
    if missing or any(code != 0 for code in codes):
        unusable = next((why for _result, why in read if why), "")
        return RunOutcome(Status.CRASHED, reason=f"process(es) {missing or 'all'} of {processes} gave no result "
                       f"(exit codes {list(codes)}): {unusable or telling_line(tail)}",
                       evidence={"output_tail": tail, "exit_codes": list(codes)})
    return _agreed([r for r in results if r is not None], processes)


# Lines that say why a process died, best first: a C++ exception's message, then
# a Python or XLA error; the partners' "missing heartbeat" noise comes after them.
TELLING = (re.compile(r"what\(\):\s*(.*)"), re.compile(r"((?:\w+Error|\w+Exception|Error|FATAL)\b.*)"))

GLOO_HINT = ("; this release's gloo CPU collectives could not span several devices per process "
             "(jax 0.4.25 fails so, and works with one device per process: --devices 2 --processes 2)")


def telling_line(tail: Sequence[str]) -> str:
    """The line of the interleaved output that best says why the run failed."""
    for pattern in TELLING:
        for line in tail:
            found = pattern.search(line)
            if found and "heartbeat" not in line.lower():
                text = line.split("] ", 1)[0] + "] " + found.group(1) if line.startswith("[p") else found.group(1)
                return text + (GLOO_HINT if "Gloo context initialization failed" in text else "")
    return next((line for line in reversed(tail) if line.strip()), "no output")


def _agreed(results: list[JsonObject], processes: int) -> RunOutcome:
    """Process 0's result, each process's facts, and whether they all read the same evidence."""
    first = results[0]
    verdict, reason = Verdict.of(first.get("verdict")), as_text(first.get("reason"))
    disagreements = [
        f"process {rank}: {what}"
        for rank, result in enumerate(results[1:], start=1)
        for what in _differences(first, result)
    ]
    if disagreements:
        verdict = Verdict.INCONCLUSIVE
        reason = f"the {processes} processes read different evidence ({'; '.join(disagreements)})"
    evidence = as_object(first.get("evidence"))
    evidence["processes"] = [_process_facts(result) for result in results]
    evidence["processes_agree"] = not disagreements
    environment = as_object(first.get("environment"))
    environment["process_count"] = processes
    environment["device_count"] = as_object(first.get("process")).get("global_devices", environment.get("device_count"))
    return RunOutcome(Status.RAN, verdict, reason, evidence, environment=environment,
                   parameters=as_object(first.get("parameters")))


def _differences(first: JsonObject, other: JsonObject) -> list[str]:
    found = []
    if other.get("verdict") != first.get("verdict"):
        found.append(f"verdict {other.get('verdict')} vs {first.get('verdict')}")
    mine = _summary(first)
    theirs = _summary(other)
    found += [f"{key} {theirs.get(key)} vs {mine.get(key)}" for key in structural_keys(first)
              if theirs.get(key) != mine.get(key)]
    return found


def _summary(result: JsonObject) -> JsonObject:
    return as_object(as_object(result.get("evidence")).get("summary"))


def _process_facts(result: JsonObject) -> JsonObject:
    summary = _summary(result)
    facts = as_object(result.get("process"))
    facts["verdict"] = result.get("verdict")
    facts.update({key: summary.get(key) for key in structural_keys(result)})
    return facts


def read_result(path: Path, name: str = "") -> tuple[JsonObject | None, str]:
    """A repro's RESULT.json as a dict, or None and why ("" when it is simply missing).

    Any content is an answer, never an exception (kit/run/result_files.py): a
    torn, non-UTF-8, huge or absurdly nested file is one sentence naming it
    (``name``, or the file's own name).
    """
    return result_files.read_or_why(path, name or path.name)


class ProcessGroup:
    """N commands, each in its own session (kit/run/child_processes.py), output interleaved with a ``[pN]`` prefix.

    ``tail`` has the last lines of all of them together, ``tails`` each one's own (a rank's failure is read
    from its own lines); ``echo`` shows or logs each line as it comes, ``cwd`` is where they run.
    """

    def __init__(self, commands: Sequence[Sequence[str]], envs: Sequence[Mapping[str, str]],
                 prefixes: Sequence[str] = (), echo: Echo | None = echo_to_console, cwd: Path | None = None) -> None:
        self.tail = Tail(max_lines=60)
        self.tails: list[Tail] = []
        self.timed_out = False
        self.children: list[Child] = []
        self.leftovers: list[str] = []
        try:
            for rank, (cmd, env) in enumerate(zip(commands, envs)):
                prefix = prefixes[rank] if rank < len(prefixes) else f"[p{rank}] " if len(commands) > 1 else ""
                self.tails.append(Tail())
                self.children.append(Child(cmd, env, cwd or repro_root(), self.tails[-1], prefix,
                                           echo=self._both(echo)))
        except BaseException:
            self.kill_all()
            raise

    def _both(self, echo: Echo | None) -> Echo:
        """Each line into the group's tail (the child's own tail has it already) and on to ``echo``."""
        def shown(line: str) -> None:
            self.tail.add(line)
            if echo is not None:
                echo(line)

        return shown

    def wait(self, timeout: float, grace: float = GRACE_S) -> tuple[list[int | None], list[str]]:
        """Wait for all; a failure gives the rest ``grace`` seconds; the timeout kills everything."""
        deadline = time.monotonic() + timeout
        grace_ends: float | None = None
        try:
            while not all(child.exited() for child in self.children):
                now = time.monotonic()
                if now >= deadline:
                    self.timed_out = True
                    break
                if grace_ends is None and any(child.status() not in (None, 0) for child in self.children):
                    grace_ends = now + grace
                if grace_ends is not None and now >= grace_ends:
                    break  # a partner failed: the rest would wait in a collective forever
                time.sleep(0.1)
        finally:
            self.kill_all()  # also on Ctrl-C: no process, nor anything it started, outlives the kit
        return [child.returncode for child in self.children], self.tail.lines()

    def kill_all(self) -> None:
        """SIGTERM every tree still running (srun passes it on to its tasks), then SIGKILL."""
        ended = end_all(self.children, grace_s=KILL_GRACE_S)
        self.leftovers = [line for left in ended for line in left]
