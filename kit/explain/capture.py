"""One release: run the program unmodified with XLA's dump on, read what it compiled, keep one record.

The program runs the one way a script runs (`kit.run.script_runs.run_script`: the
release's environment as `kit run` / bisect ``--script`` resolve it, forced
host devices on CPU, its process tree ended at exit or timeout), with its
own arguments, in the folder it was called from, and the dump asked into a
kit-owned scratch folder (`kit.run.hlo_dump`). Whatever it compiled before
it exited, crashed or ran out of time is read.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping

from repro.contract import json_safe

from ..log_events import Log
from ..records import RunOutcome, Record, RecordHead, Status, new_record
from ..json_types import JsonObject, as_object, as_text
from .. import __version__
from ..config import Matrix
from ..check_settings import ExplainedProgram, script_check
from ..hlo import Fingerprint
from ..install import ExistingPython, InstallKey, Prepared, install_facts, release_bytecode_env
from .. import launch
from ..run import explained, explained_ranks, runner, script_runs, targeted
from ..run.kit_files import watching
from ..run.shared_runs import DumpedRun, partitions
from .options import ExplainOptions



@dataclass
class Capture:
    """What one release made of the program: the record, and its fingerprints as values."""

    release: str
    record: JsonObject
    fingerprints: list[Fingerprint] = field(default_factory=list)

    @property
    def compiled(self) -> bool:
        """Something compiled (a module read before optimizations alone, whose compile failed, is not)."""
        return any(m.get("compiled") is not False for m in self.modules)

    @property
    def uncompiled(self) -> int:
        """Modules lowered whose compile failed: their ops cannot be told about."""
        return sum(1 for m in self.modules if m.get("compiled") is False)

    # The record read as the answer and the tables read it: each value narrowed once, here.
    def section(self, name: str) -> JsonObject:
        """A top-level object of the record (``target``, ``processes``, ``program_facts``, ``install``,
        ``environment``, ``requested``, ``run``): empty where it has none."""
        return as_object(self.record.get(name))

    @property
    def modules(self) -> list[JsonObject]:
        return _objects(self.record.get("modules"))

    @property
    def status(self) -> Status | None:
        return Record.of(self.record).status

    @property
    def reason(self) -> str:
        return Record.of(self.record).reason

    @property
    def kit_files_changed(self) -> list[str]:
        changed = self.record.get("kit_files_changed")
        return [str(path) for path in changed] if isinstance(changed, list) else []


def _objects(value: object) -> list[JsonObject]:
    """A JSON array of objects (anything else in it, or no array, is left out)."""
    return [as_object(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def capture_release(matrix: Matrix, options: ExplainOptions, release: str, log: Log, reproduce: str) -> Capture:
    """Run the program on ``release`` ("" with ``--python``: that interpreter's) and read its compiles."""
    started = time.monotonic()
    target = options.target
    too_old = targeted.release_too_old(target, release) if target else ""
    if too_old:  # said before anything is resolved or downloaded
        assert target is not None
        unbuilt = RunOutcome(Status.NOT_INSTALLABLE, reason=too_old)
        return Capture(release, json_safe(new_record(_head(options, release, None, reproduce), unbuilt,
                                                     target=target.to_json())))
    check = script_check("explain", options.program, host_devices=options.devices, timeout_s=options.timeout_s,
                         explain=ExplainedProgram())
    # With a target the program runs on CPU host devices whatever that JAX would pick (a TPU machine's own
    # interpreter reports tpu): its backend is not asked to agree, the run's environment says cpu.
    asked = None if target else options.backend
    existing = ExistingPython(options.python, None, asked) if options.python else None
    # A target's environment carries its compiler (jax[tpu], the CUDA plugin); the program still runs on CPU.
    install = InstallKey(target.install_extra) if target else None
    request = runner.RunRequest(check="explain", version=release, backend=options.backend, script=check,
                                existing=existing, timeout_s=options.timeout_s, reproduce=reproduce, install=install)
    prepared = runner.prepare(matrix, request, log)
    jax = prepared.jax or release
    head = _head(options, jax, prepared, reproduce)
    if prepared.environment is None or prepared.cannot_test:
        unbuilt = RunOutcome(Status.NOT_INSTALLABLE, reason=prepared.problem or prepared.cannot_test or "")
        record = new_record(head, unbuilt, duration_s=round(time.monotonic() - started, 2), fingerprints=[])
        return Capture(jax, json_safe(record))
    env = prepared.environment
    runs: list[DumpedRun] = []

    def dumped() -> RunOutcome:
        if options.processes > 1:  # one program as N processes: every rank's compile read (docs/cluster.md)
            runs.append(explained_ranks.dumped_ranks(
                env, check, options.backend, options.timeout_s, log, options.launch_spec,
                launch.named(options.launcher), release_bytecode_env(env), args=options.args, cwd=options.cwd,
                shown=lambda path: _shown_source(path, options)))
            return runs[-1].outcome
        runs.append(explained.dumped_run(script_runs.run_script, script_runs.scratch_dir, env, check, options.backend,
                                         options.timeout_s, log,
                                         release_bytecode_env(env), args=options.args, cwd=options.cwd,
                                         shown=lambda path: _shown_source(path, options), target=target,
                                         run_child=script_runs.run_child))
        return runs[-1].outcome

    # A program is a stranger's code as a check is: one that rewrites the kit's files (a record, matrix.toml,
    # the kit's own sources) is said, never passed over (`kit.run.kit_files`).
    said = watching(matrix, log, dumped).evidence.get("kit_files_changed")
    changed = [str(path) for path in said] if isinstance(said, list) else []
    run = runs[-1]
    record = new_record(head, explained_outcome(run, changed, options),
                        kit_files_changed=changed or None, modules=run.modules, dump=run.dump, target=run.target,
                        program_facts=run.program or None, processes=run.processes or None,
                        run=_run_section(run.outcome, run.output_tail),
                        duration_s=round(time.monotonic() - started, 2),
                        fingerprints=[f.to_json() for f in run.fingerprints])
    return Capture(jax, json_safe(record), run.fingerprints)


def _head(options: ExplainOptions, jax: str, prepared: Prepared | None, reproduce: str) -> RecordHead:
    """What an explain record says before the program runs: which program, asked of which release, how installed
    (nothing, for a release the target cannot be compiled on: ``prepared`` None)."""
    target: JsonObject = {"target": options.target.name} if options.target else {}
    requested: JsonObject = {"jax": jax, "backend": options.backend, **target}
    program: JsonObject = {"kind": "explain", "program": options.shown, "args": list(options.args)}
    if prepared is None:
        return RecordHead(program, requested, reproduce=reproduce)
    subject = {"explain": options.shown, "program_sha256": _sha256(options.program), "args": list(options.args),
               "host_devices": options.devices, "kit_version": __version__,
               **({"processes": options.processes, "launcher": options.launcher} if options.processes > 1 else {})}
    identity = runner.prepared_identity(subject, jax, options.backend, prepared)
    return RecordHead(program, requested, install_facts(prepared), identity.to_json(), reproduce)


def _shown_source(path: str, options: ExplainOptions) -> str:
    """A source file as reports name it: relative to the folder the program was called from, never absolute."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, options.cwd)
    return path.rsplit("/", 1)[-1] if relative.startswith("..") else relative


def _run_section(ran: RunOutcome, tail: list[str]) -> JsonObject:
    """The program's own run, as a script check's: its status, exit, reason and last lines."""
    said = ran.evidence.get("output_tail")
    run: JsonObject = {"status": ran.status, "exit_code": ran.evidence.get("exit_code"), "reason": ran.reason,
                       "output_tail": said if isinstance(said, list) and said else tail}
    if ran.evidence.get("left_running"):
        run["left_running"] = ran.evidence["left_running"]
    return run


def explained_outcome(run: DumpedRun, changed: list[str], options: ExplainOptions) -> RunOutcome:
    """Explain's own states over the program's run (a named step): ``ran`` where it ran to its end, ``partial``
    where it compiled something and then failed or ran out of time, ``compiled-nothing``; one sentence on what
    was read of it, the environment as the run said it."""
    ran = run.outcome
    partitioned = sum(1 for m in run.modules if partitions(m) > 1)
    ended = _how_it_ended(ran, options, run.output_tail)
    compiled_for = as_text((run.target or {}).get("sentence"))
    compiled = [m for m in run.modules if m.get("compiled") is not False]
    cannot_tell = as_text(ran.evidence.get("cannot_tell"))
    if cannot_tell:  # N processes that were not one program (a rank failed, ranks disagree): no answer from rank 0
        status, reason = Status.PARTIAL, f"{ended}; {cannot_tell}"
    elif not compiled:
        status, reason = Status.COMPILED_NOTHING, f"{ended}, and compiled nothing: there is no HLO to explain"
        if compiled_for:
            reason = f"{ended}; {compiled_for}: there is no HLO to explain"
    else:
        status = Status.RAN if ran.status is Status.RAN and ran.evidence.get("exit_code") == 0 else Status.PARTIAL
        reason = f"{ended}; {len(compiled)} module(s) compiled, {partitioned} of them partitioned over devices"
        if compiled_for:  # what was called, compiled and not: the compile's own sentence
            reason = f"{ended}; {compiled_for}; {partitioned} of them partitioned over devices"
        elif len(compiled) < len(run.modules):
            reason += (f"; {len(run.modules) - len(compiled)} module(s) read before optimizations only (not "
                       "compiled): what their ops do on the devices cannot be told")
        if status is Status.PARTIAL:
            reason += " (what compiled before it ended counts)"
    reason += _program_said(run.program, options)
    reason += processes_said(run.processes or {})
    if changed:
        reason += "; " + kit_files_sentence(changed)
    dropped, limit = run.dump.get("dropped_count"), run.dump.get("limit_bytes")
    if isinstance(dropped, int) and dropped and isinstance(limit, int):
        reason += (f"; the dump passed {limit // 2**20} MiB, so "
                   f"{dropped} file(s) compiled after that were not read")
    return RunOutcome(status, None, reason, environment=dict(ran.environment or {}))


def kit_files_sentence(changed: list[str]) -> str:
    """What a program did to the kit's own files, in a clause ("" where it did nothing)."""
    if not changed:
        return ""
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return (f"the program changed the kit's own files while it ran: {', '.join(changed[:3])}{more} "
            "(restore them, e.g. git checkout / git status)")


def _program_said(facts: JsonObject, options: ExplainOptions) -> str:
    """What the program did to the run that the reason must carry: XLA_FLAGS set by itself (the kit's dump flags
    were merged back in), and a device count other than the one the kit asked for."""
    said = ""
    flags = facts.get("xla_flags_set")
    if isinstance(flags, list) and flags:
        value = str(flags[-1])
        said += (f"; the program set XLA_FLAGS itself ({' '.join(value.split())[:200] or 'removed it'}): "
                 "the kit kept its own dump flags in it, merged after the program's")
    devices = as_object(facts.get("devices")).get("count")
    if isinstance(devices, int) and options.devices and devices != options.devices:
        said += f"; JAX had {devices} device(s), not the {options.devices} host devices the kit asked for"
    return said


def processes_said(processes: Mapping[str, object]) -> str:
    """How N processes ran as one program, in a clause ("" for one process): their launch, and whether every rank
    compiled the same program across processes (`processes_problem` where they did not)."""
    if not processes:
        return ""
    said = f"; {processes.get('how')}"
    each = processes.get("devices_per_process")
    if each:
        said += f", {each} host device{'s' if each != 1 else ''} each"
    problem = processes_problem(processes)
    if problem:
        return f"{said}; {problem}"
    ranks = _objects(processes.get("ranks"))
    return said + (f"; all {len(ranks)} ranks compiled the same modules, read as one program"
                   if any(r.get("modules") for r in ranks) and not processes.get("cannot_tell") else "")


def processes_problem(processes: Mapping[str, object]) -> str:
    """Why N ranks were not one program across processes ("" where they were): a release whose CPU client never
    joined them or has no collectives across them, or ranks that compiled different programs."""
    ranks = _objects(processes.get("ranks"))
    said = []
    if any("count" in r for r in ranks) and not any(r.get("process_count") == processes.get("count") for r in ranks):
        said.append("the ranks never joined: each saw only its own devices (this release's CPU client ignores "
                    "jax.distributed, or the program did not call jax.distributed.initialize())")
    if any(r.get("cpu_collectives") == "none" for r in ranks):
        said.append("this release has no CPU collectives across processes (neither "
                    "jax_cpu_collectives_implementation nor jax_cpu_enable_gloo_collectives)")
    if processes.get("agree") is False:
        said.append(f"the ranks compiled different programs: {processes.get('difference')}")
    return "; ".join(said)


def devices_had(capture: Capture) -> int | None:
    """How many devices the program's JAX had, where it said (`repro.program_watch`); None where unknown."""
    count = as_object(capture.section("program_facts").get("devices")).get("count")
    return count if isinstance(count, int) else None


def _how_it_ended(ran: RunOutcome, options: ExplainOptions, tail: list[str]) -> str:
    evidence = ran.evidence
    code = evidence.get("exit_code")
    running = evidence.get("left_running")
    left = len(running) if isinstance(running, list) else 0
    also = f" (it left {left} process(es) running: ended then)" if left else ""
    if ran.status is Status.TIMED_OUT or code is None and ran.status is not Status.RAN:
        return f"the program did not end within {options.timeout_s} s (stopped there){also}"
    if code == 0:
        return f"the program ran to its end{also}"
    if isinstance(code, int) and code < 0:
        return f"the program was killed by signal {-code}{also}"
    exception = ran.evidence_object("exception")
    said = (f"{exception.get('type')}: {exception.get('message')}" if exception.get("type")
            else evidence.get("telling_line")  # several processes: the line that says why (`explained_ranks`)
            or next((line.strip() for line in reversed(tail) if line.strip()), "no output"))
    return f"the program exited {code} ({' '.join(str(said).split())[:200]}){also}"


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""

