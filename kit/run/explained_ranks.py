"""A program explained as N processes: each rank run with XLA's dump into its own folder, all read as one program.

A launcher (`kit.launch`: ``local``, ``srun``, ``ssh``) says how the ranks
start; they run as one group (`multiprocess.ProcessGroup`): one that fails
takes the others down after a short grace, the timeout and Ctrl-C kill every
one, and each line they print is kept with its rank's prefix (``[p1] ``,
srun's ``1: ``) in the run's log. Each rank dumps into ``dump/rank-N`` and
writes its facts (its devices, its place, the CPU collectives it had) beside
it (`repro.program_watch`, `repro.launch_rank`).

One program across processes compiles one module per jit on every rank, each
rank holding its share of a module partitioned over every device of every
process: rank 0's modules stand for the program when every rank compiled the
same (the same modules with the same partitions, the same ops in the same
states); where they differ the run says so and names the first difference.
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Mapping, Sequence

from .. import launch
from ..check_settings import Check
from ..hlo import Fingerprint
from ..install import Environment
from ..log_events import Log, detail
from ..records import Status
from ..json_types import JsonObject, as_object
from . import child_processes, multiprocess, script_runs
from .child_output import OutputLog
from .explained import program_facts, read_dump, refuse_a_torn_dump, watch_env
from .hlo_dump import Dump, dump_flags
from .shared_runs import DumpedRun, partitions


def dumped_ranks(env: Environment, check: Check, backend: str, timeout: int, log: Log, spec: launch.LaunchSpec,
                 launcher: launch.Launcher, extra_env: Mapping[str, str] | None = None, args: Sequence[str] = (),
                 cwd: Path | None = None, shown: Callable[[str], str] | None = None) -> DumpedRun:
    """Run ``check``'s program as ``spec.processes`` ranks with the dump on; rank 0's compile, and every rank's."""
    assert check.script is not None
    with script_runs.scratch_dir() as tmp:
        folders = [tmp / "dump" / f"rank-{rank}" for rank in range(spec.processes)]
        place = tmp / "dump" / f"rank-{launch.RANK}"
        result = tmp / f"kit-result-{launch.RANK}.json"
        base = (extra_env or {}).get("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))
        forced = script_runs.script_env(result, backend, spec.devices_per_process, base)  # each process's own devices
        extra = {**child_processes.with_site(extra_env, watch_env(place, tmp / f"program-facts-{launch.RANK}.json")),
                 **forced, "XLA_FLAGS": dump_flags(place, forced.get("XLA_FLAGS", base))}
        command = [str(env.python), str(check.script), *args]
        started = launcher.launch(spec, command, child_processes.repro_env(extra, env.pythonpath), str(cwd or tmp))
        log(f"starting {started.how}")
        log(detail("running " + " ".join(command)))
        child_processes.end_abandoned_trees(log)
        output = OutputLog.opened(tmp / "output.log", console=False)
        with ExitStack() as watching:  # every rank's dump pruned while they run, a last time once all have ended
            dumps = [watching.enter_context(Dump(folder)) for folder in folders]
            watching.callback(output.close)
            group = multiprocess.ProcessGroup(started.commands, started.envs, started.prefixes, echo=output,
                                              cwd=cwd or tmp)
            codes, tail = group.wait(timeout, multiprocess.GRACE_S)
        ranks = [_rank(rank, env, check, timeout, group, codes, tmp, dumps[rank], shown)
                 for rank in range(spec.processes)]
        run = _one_program(ranks, tail, group.timed_out, timeout, _rank_lines(tail, started.prefixes, spec, launcher))
        how = started.how
        if group.timed_out and any(_WAITING in line for line in tail):
            how += (f" that waited for its resources until the timeout (the cluster has fewer CPUs free than "
                    f"{spec.processes} tasks: fewer --processes, or KIT_SRUN_ARGS=--overcommit)")
        run.processes = {"count": spec.processes, "launcher": launcher.name, "how": how,
                         "devices_per_process": spec.devices_per_process, **_agreement(ranks),
                         "ranks": [_rank_facts(rank, run_) for rank, run_ in enumerate(ranks)]}
        refuse_a_torn_dump(run, tail, tmp)
    return _cannot_tell_where_not_one_program(run, ranks)


_WAITING = "queued and waiting for resources"
"""What srun says while the controller has no room for its tasks."""


def _rank(rank: int, env: Environment, check: Check, timeout: int, group: multiprocess.ProcessGroup,
          codes: Sequence[int | None], tmp: Path, dump: Dump, shown: Callable[[str], str] | None) -> DumpedRun:
    """One rank's outcome (its own process, or the one srun that started them all) and what it compiled."""
    child = rank if rank < len(codes) else 0
    ended = child_processes.Ended(None if group.timed_out else codes[child], group.tails[child].lines(), [])
    outcome, _result = script_runs.script_fields(ended, tmp / f"kit-result-{rank}.json", timeout, check.bad_if, env)
    run = DumpedRun(outcome, output_tail=ended.tail[-15:], program=program_facts(tmp / f"program-facts-{rank}.json"))
    read_dump(dump, run, shown)
    return run


def _rank_lines(tail: list[str], prefixes: Sequence[str], spec: launch.LaunchSpec,
                launcher: launch.Launcher) -> Callable[[int], tuple[list[str], str]]:
    """Each rank's own lines of the interleaved output (by its prefix: ``[p1] ``, srun's ``1: ``), and the host
    it was started on where ssh started it ("" elsewhere)."""
    def own(rank: int) -> tuple[list[str], str]:
        mark = prefixes[rank] if rank < len(prefixes) and prefixes[rank] else f"{rank}: "
        lines = [line for line in tail if line.startswith(mark)]
        host = spec.hosts[rank * len(spec.hosts) // spec.processes] if launcher.name == "ssh" and spec.hosts else ""
        return lines, host
    return own


def _one_program(ranks: list[DumpedRun], tail: list[str], timed_out: bool, timeout: int,
                 rank_lines: Callable[[int], tuple[list[str], str]] = lambda _rank: ([], "")) -> DumpedRun:
    """Rank 0's compile as the program's; the run's outcome is the first rank that failed on its own, said in
    that rank's own line (not a partner's that came first in the interleaved output).

    A rank killed by a signal after a partner failed is the kit's doing, so the partner's exit is what is said.
    """
    failed = [(rank, run) for rank, run in enumerate(ranks) if _exit_code(run)]
    own = [(rank, run) for rank, run in failed if (_exit_code(run) or 0) > 0] or failed
    first = ranks[0]
    outcome = first.outcome
    if timed_out:
        outcome = dataclasses.replace(outcome, status=Status.TIMED_OUT, reason=f"the {len(ranks)} processes did not "
                                      f"finish within {timeout} s; all were killed").with_evidence(exit_code=None)
    elif own:
        rank, run = own[0]
        lines, host = rank_lines(rank)
        # The line that says why, in the failing rank's own output: not the partners' heartbeat and gRPC noise.
        telling = multiprocess.telling_line(lines or run.output_tail or tail)
        never = launch.NEVER_CONNECTED.search("\n".join(lines or run.output_tail)) if host else None
        reason = (f"rank {rank} of {len(ranks)}: ssh never connected to {host} ({never.group(0).strip()}), so the "
                  "program did not start there" if never is not None else
                  f"rank {rank} of {len(ranks)}: {run.outcome.reason or 'it failed'}")
        outcome = run.outcome.with_reason(reason).with_evidence(telling_line=telling)
    outcome = outcome.with_evidence(output_tail=tail[-30:])
    return DumpedRun(outcome, modules=list(first.modules), fingerprints=list(first.fingerprints), dump=first.dump,
                     output_tail=tail[-30:], program=first.program)


def _cannot_tell_where_not_one_program(run: DumpedRun, ranks: list[DumpedRun]) -> DumpedRun:
    """Rank 0's modules stand for the program only where every rank ran to its end and compiled the same: a rank
    that failed (rank 0's compile is then one side of a program that did not run) or ranks that disagree leave
    no answer, said as that, never "every op is split" read off rank 0 alone."""
    # A rank that failed on its own first (a positive exit), then one killed: None is a rank stopped at the
    # timeout with every other, where what every rank compiled before it counts, as for one process.
    failed = sorted((rank for rank, one in enumerate(ranks) if (_exit_code(one) or 0) != 0),
                    key=lambda rank: (_exit_code(ranks[rank]) or 0) < 0)
    differ = (run.processes or {}).get("agree") is False
    if not failed and not differ:
        return run
    reason = run.outcome.reason
    why = (f"the ranks compiled different programs ({(run.processes or {}).get('difference')})" if differ else
           reason if reason.startswith(f"rank {failed[0]} of ") else
           f"rank {failed[0]} of {len(ranks)} did not run to its end ({reason})")
    said = f"cannot tell: {why}; what rank 0 compiled is not the program's answer"
    if run.processes is not None:
        run.processes["cannot_tell"] = said
    return dataclasses.replace(run, modules=[], fingerprints=[],
                               outcome=run.outcome.with_evidence(cannot_tell=said, rank0_modules=len(run.modules)))


def _exit_code(run: DumpedRun) -> int | None:
    """The rank's exit code as its outcome's evidence holds it (None: it was killed at the timeout, or ran none)."""
    code = run.outcome.evidence.get("exit_code")
    return code if isinstance(code, int) else None


def _signature(run: DumpedRun) -> list[tuple[object, ...]]:
    """What every rank of one program must have compiled alike: each module's name and partitions, each op."""
    modules = [("module", m.get("name"), m.get("partitions")) for m in run.modules]
    return modules + [_op(f) for f in run.fingerprints]


def _op(f: Fingerprint) -> tuple[object, ...]:
    return ("op", f.module, f.location or f.op_path, f.op, f.pass_, f.state, f.device_batch, f.global_batch)


def _agreement(ranks: list[DumpedRun]) -> JsonObject:
    """Whether every rank compiled what rank 0 did, and where the first one that did not differs."""
    mine = _signature(ranks[0])
    for rank, run in enumerate(ranks[1:], start=1):
        theirs = _signature(run)
        if theirs == mine:
            continue
        at = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        said = (f"rank {rank} compiled {_words(theirs[at]) if at < len(theirs) else 'nothing more'} where rank 0 "
                f"compiled {_words(mine[at]) if at < len(mine) else 'nothing more'}")
        return {"agree": False, "difference": said}
    return {"agree": True, "difference": ""}


def _words(item: tuple[object, ...]) -> str:
    if item[0] == "module":
        return f"module {item[1]} over {item[2]} partition(s)"
    _kind, module, where, op, pass_, state, device, whole = item
    return f"{op} ({pass_}) at {where} in {module}: {state}, {device} of {whole}"


def _rank_facts(rank: int, run: DumpedRun) -> JsonObject:
    facts: JsonObject = {"rank": rank, "status": run.outcome.status, "exit_code": _exit_code(run),
                         "modules": len(run.modules), "partitions": sorted({partitions(m) for m in run.modules}),
                         "fingerprints": len(run.fingerprints)}
    devices = as_object(run.program.get("devices"))
    facts.update({key: devices[key] for key in ("local", "count", "process_index", "process_count") if key in devices})
    facts.update({key: run.program[key] for key in ("cpu_collectives", "cluster") if key in run.program})
    if _exit_code(run):
        facts["reason"] = run.outcome.reason
    return facts
