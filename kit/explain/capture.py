"""One release: run the program unmodified with XLA's dump on, read what it compiled, keep one record.

The program runs the one way a script runs (`kit.run.runner.run_script`: the
release's environment as `kit run` / bisect ``--script`` resolve it, forced
host devices on CPU, its process tree ended at exit or timeout), with its
own arguments, in the folder it was called from, and the dump asked into a
kit-owned scratch folder (`kit.run.hlo_dump`). Whatever it compiled before
it exited, crashed or ran out of time is read.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from repro.contract import json_safe

from ..log_events import Log
from ..records import Status
from .. import __version__, records
from ..config import Matrix, script_check
from ..hlo import Fingerprint
from ..install import ExistingPython, InstallKey, install_facts, release_bytecode_env
from .. import launch
from ..run import explained, explained_ranks, runner, targeted
from ..run.kit_files import watching
from .options import Options



@dataclass
class Capture:
    """What one release made of the program: the record, and its fingerprints as values."""

    release: str
    record: dict[str, Any]
    fingerprints: list[Fingerprint] = field(default_factory=list)

    @property
    def compiled(self) -> bool:
        return bool(self.record.get("modules"))


def capture_release(matrix: Matrix, options: Options, release: str, log: Log, reproduce: str) -> Capture:
    """Run the program on ``release`` ("" with ``--python``: that interpreter's) and read its compiles."""
    started = time.monotonic()
    target = options.target
    too_old = targeted.release_too_old(target, release) if target else ""
    if too_old:  # said before anything is resolved or downloaded
        return Capture(release, json_safe(_unbuilt_record(options, release, too_old, reproduce)))
    check = script_check("explain", options.program, host_devices=options.devices, timeout_s=options.timeout_s)
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
    record = _base_record(options, jax, prepared, reproduce)
    found: list[Fingerprint] = []
    if prepared.environment is None or prepared.cannot_test:
        record.update(status=Status.NOT_INSTALLABLE, reason=prepared.problem or prepared.cannot_test or "")
    else:
        env = prepared.environment
        runs: list[explained.DumpedRun] = []

        def dumped() -> dict[str, Any]:
            if options.processes > 1:  # one program as N processes: every rank's compile read (docs/cluster.md)
                runs.append(explained_ranks.dumped_ranks(
                    env, check, options.backend, options.timeout_s, log, options.launch_spec,
                    launch.named(options.launcher), release_bytecode_env(env), args=options.args, cwd=options.cwd,
                    shown=lambda path: _shown_source(path, options)))
                return runs[-1].fields
            runs.append(explained.dumped_run(runner.run_script, runner.scratch_dir, env, check, options.backend,
                                             options.timeout_s, log,
                                             release_bytecode_env(env), args=options.args, cwd=options.cwd,
                                             shown=lambda path: _shown_source(path, options), target=target,
                                             run_child=runner.run_child))
            return runs[-1].fields

        # A program is a stranger's code as a check is: one that rewrites the kit's files (a record, matrix.toml,
        # the kit's own sources) is said, never passed over (`kit.run.kit_files`).
        changed = (watching(matrix, log, dumped).get("evidence") or {}).get("kit_files_changed")
        run = runs[-1]
        if changed:
            record["kit_files_changed"] = changed
        found = run.fingerprints
        record.update(modules=run.modules, dump=run.dump)
        if run.target is not None:
            record["target"] = run.target
        if run.program:
            record["program_facts"] = run.program
        if run.processes:
            record["processes"] = run.processes
        record.update(_run_fields(run.fields, record, options, run.output_tail))
    record["duration_s"] = round(time.monotonic() - started, 2)
    record["fingerprints"] = [f.to_json() for f in found]
    return Capture(jax, json_safe(record), found)


def _unbuilt_record(options: Options, release: str, reason: str, reproduce: str) -> dict[str, Any]:
    """A release the target cannot be compiled on, said without building it."""
    assert options.target is not None
    return {"schema": records.SCHEMA, "kit_version": __version__, "kind": "explain", "program": options.shown,
            "args": list(options.args), "requested": {"jax": release, "backend": options.backend,
                                                      "target": options.target.name},
            "status": Status.NOT_INSTALLABLE, "reason": reason, "target": options.target.to_json(),
            "reproduce": reproduce, "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def _shown_source(path: str, options: Options) -> str:
    """A source file as reports name it: relative to the folder the program was called from, never absolute."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, options.cwd)
    return path.rsplit("/", 1)[-1] if relative.startswith("..") else relative


def _base_record(options: Options, jax: str, prepared: Any, reproduce: str) -> dict[str, Any]:
    subject = {"explain": options.shown, "program_sha256": _sha256(options.program), "args": list(options.args),
               "host_devices": options.devices, "kit_version": __version__,
               **({"processes": options.processes, "launcher": options.launcher} if options.processes > 1 else {})}
    return {
        "schema": records.SCHEMA, "kit_version": __version__, "kind": "explain", "program": options.shown,
        "args": list(options.args), "requested": {"jax": jax, "backend": options.backend,
                                                  **({"target": options.target.name} if options.target else {})},
        "status": None, "reason": "",
        "install": install_facts(prepared),
        "identity": runner.prepared_identity(subject, jax, options.backend, prepared).to_json(),
        "host": {"name": socket.gethostname(), "machine_id": records.machine_id()},
        "reproduce": reproduce, "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _run_fields(fields: dict[str, Any], record: dict[str, Any], options: Options,
                tail: list[str]) -> dict[str, Any]:
    """The run's own outcome (as a script check's), and one sentence on what was read of it."""
    evidence = fields.get("evidence") or {}
    run = {"status": fields.get("status"), "exit_code": evidence.get("exit_code"),
           "reason": fields.get("reason"), "output_tail": evidence.get("output_tail") or tail}
    if evidence.get("left_running"):
        run["left_running"] = evidence["left_running"]
    modules = record.get("modules") or []
    partitioned = sum(1 for m in modules if (m.get("partitions") or 1) > 1)
    ended = _how_it_ended(fields, options, tail)
    if not modules:
        status, reason = Status.COMPILED_NOTHING, f"{ended}, and compiled nothing: there is no HLO to explain"
        if record.get("target"):
            reason = f"{ended}; {record['target']['sentence']}: there is no HLO to explain"
    else:
        status = Status.RAN if fields.get("status") == Status.RAN and evidence.get("exit_code") == 0 else Status.PARTIAL
        reason = f"{ended}; {len(modules)} module(s) compiled, {partitioned} of them partitioned over devices"
        if record.get("target"):
            reason = f"{ended}; {record['target']['sentence']}, {partitioned} of them partitioned over devices"
        if status is Status.PARTIAL:
            reason += " (what compiled before it ended counts)"
    reason += _program_said(record.get("program_facts") or {}, options)
    reason += processes_said(record.get("processes") or {})
    if record.get("kit_files_changed"):
        reason += "; " + kit_files_sentence(record["kit_files_changed"])
    if record["dump"]["dropped_count"]:
        reason += (f"; the dump passed {record['dump']['limit_bytes'] // 2**20} MiB, so "
                   f"{record['dump']['dropped_count']} file(s) compiled after that were not read")
    return {"status": status, "reason": reason, "run": run, "environment": fields.get("environment") or {}}


def kit_files_sentence(changed: list[str]) -> str:
    """What a program did to the kit's own files, in a clause ("" where it did nothing)."""
    if not changed:
        return ""
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return (f"the program changed the kit's own files while it ran: {', '.join(changed[:3])}{more} "
            "(restore them, e.g. git checkout / git status)")


def _program_said(facts: dict[str, Any], options: Options) -> str:
    """What the program did to the run that the reason must carry: XLA_FLAGS set by itself (the kit's dump flags
    were merged back in), and a device count other than the one the kit asked for."""
    said = ""
    if facts.get("xla_flags_set"):
        value = facts["xla_flags_set"][-1]
        said += (f"; the program set XLA_FLAGS itself ({' '.join(value.split())[:200] or 'removed it'}): "
                 "the kit kept its own dump flags in it, merged after the program's")
    devices = (facts.get("devices") or {}).get("count")
    if isinstance(devices, int) and options.devices and devices != options.devices:
        said += f"; JAX had {devices} device(s), not the {options.devices} host devices the kit asked for"
    return said


def processes_said(processes: dict[str, Any]) -> str:
    """How N processes ran as one program, in a clause ("" for one process): their launch, and whether every rank
    compiled the same program across processes (`processes_problem` where they did not)."""
    if not processes:
        return ""
    said = f"; {processes.get('how')}"
    if processes.get("devices_per_process"):
        each = processes["devices_per_process"]
        said += f", {each} host device{'s' if each != 1 else ''} each"
    problem = processes_problem(processes)
    if problem:
        return f"{said}; {problem}"
    ranks = processes.get("ranks") or []
    return said + (f"; all {len(ranks)} ranks compiled the same modules, read as one program"
                   if any(r.get("modules") for r in ranks) else "")


def processes_problem(processes: dict[str, Any]) -> str:
    """Why N ranks were not one program across processes ("" where they were): a release whose CPU client never
    joined them or has no collectives across them, or ranks that compiled different programs."""
    ranks = processes.get("ranks") or []
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
    count = ((capture.record.get("program_facts") or {}).get("devices") or {}).get("count")
    return count if isinstance(count, int) else None


def _how_it_ended(fields: dict[str, Any], options: Options, tail: list[str]) -> str:
    evidence = fields.get("evidence") or {}
    code = evidence.get("exit_code")
    left = len(evidence.get("left_running") or [])
    also = f" (it left {left} process(es) running: ended then)" if left else ""
    if fields.get("status") == Status.TIMED_OUT or code is None and fields.get("status") != Status.RAN:
        return f"the program did not end within {options.timeout_s} s (stopped there){also}"
    if code == 0:
        return f"the program ran to its end{also}"
    if isinstance(code, int) and code < 0:
        return f"the program was killed by signal {-code}{also}"
    exception = evidence.get("exception") or {}
    said = (f"{exception.get('type')}: {exception.get('message')}" if exception.get("type")
            else evidence.get("telling_line")  # several processes: the line that says why (`explained_ranks`)
            or next((line.strip() for line in reversed(tail) if line.strip()), "no output"))
    return f"the program exited {code} ({' '.join(str(said).split())[:200]}){also}"


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""

