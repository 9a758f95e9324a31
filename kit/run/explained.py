"""A program run with XLA's dump on, its compiles read into fingerprints; and the check that judges them.

`dumped_run` is the one way a program runs to be explained: `kit.run.script_runs.run_script`
(the release's environment, forced host devices, the process tree) with the
dump asked into the run's scratch folder and kept to what is read
(`kit.run.hlo_dump`). `nox -s explain` reads its fingerprints into an answer
(`kit.explain`); a ``[checks.NAME] explain = "train.py"`` block of matrix.toml
runs through `run_explained`, which makes them a verdict: affected where some
op holds the whole batch on every device or is fed by a collective, so the
matrix shows a user's program across releases.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, ContextManager, Mapping, Protocol, Sequence

from repro.program_watch import DUMP_FLAGS_ENV, FACTS_ENV

from ..errors import MachineUnwritable
from ..log_events import Log
from ..records import JsonTextError, RunOutcome, Verdict, read_json
from ..json_types import JsonObject, as_text
from ..check_settings import Check
from ..hlo import HOLDS_WHOLE, Fingerprint, FingerprintState, extents, fingerprints, read_module, uncompiled
from ..hlo import whole_where_the_program_shards
from ..install import Environment
from ..package_files import repro_root

from . import shared_runs
from .shared_runs import DumpedRun
from .child_processes import with_site
from .hlo_dump import Dump, dump_flags
from . import targeted
from ..targets import Target

class ScriptRun(Protocol):
    """`script_runs.run_script`, handed in by the runner (which imports this module: no import circle)."""

    def __call__(self, env: Environment, check: Check, backend: str, timeout: int, log: Log,
                 output_log: Path | None = None, echo: bool = True, extra_env: Mapping[str, str] | None = None,
                 args: Sequence[str] = (), cwd: Path | None = None) -> RunOutcome: ...


Scratch = Callable[[], ContextManager[Path]]
"""`script_runs.scratch_dir`, likewise."""
FINGERPRINTS_KEPT = 200  # in a record; the explain report has them all
NO_PERSISTENT_CACHE = {"JAX_ENABLE_COMPILATION_CACHE": "false"}
"""JAX's persistent compilation cache off in the program explained: a computation it loads from there is not
compiled, so XLA dumps nothing of it (jax 0.8.0 on CPU, issue 58's program with the user's JAX_COMPILATION_CACHE_DIR:
6 of 6 modules dumped on the first run, 0 on the second; with the cache off, 6)."""


def dumped_run(run_script: ScriptRun, scratch_dir: Scratch, env: Environment, check: Check, backend: str,
               timeout: int, log: Log,
               extra_env: Mapping[str, str] | None = None, args: Sequence[str] = (), cwd: Path | None = None,
               shown: Callable[[str], str] | None = None, target: Target | None = None,
               run_child: targeted.RunChild | None = None) -> DumpedRun:
    """Run ``check``'s script with the dump on; every module it compiled, read, whatever way it ended.

    With a ``target`` the program runs on CPU host devices and what it compiled is compiled again for the
    target (`kit.run.targeted`, with ``run_child``): the modules read are the target compiler's.
    """
    with scratch_dir() as tmp:
        compiled = None
        program: JsonObject = {}
        if target is None:
            with Dump(tmp / "dump") as dump:
                flags = dump_flags(dump.folder, os.environ.get("XLA_FLAGS", ""))
                # Its output goes to a log beside the dump, not the console (the record keeps the last lines).
                outcome = run_script(env, check, backend, timeout, log, tmp / "output.log", echo=False,
                                    extra_env={**with_site(extra_env, watch_env(dump.folder,
                                                                                tmp / "program-facts.json")),
                                               "XLA_FLAGS": flags, **NO_PERSISTENT_CACHE},
                                    args=args, cwd=cwd)
                program = program_facts(tmp / "program-facts.json")
        else:
            assert run_child is not None
            exports = tmp / "exports"
            exports.mkdir()
            outcome = run_script(env, check, "cpu", timeout, log, tmp / "output.log", echo=False,
                                extra_env=with_site(extra_env, targeted.program_env(target, exports)),
                                args=args, cwd=cwd)
            with Dump(tmp / "dump") as dump:
                compiled = targeted.compile_exports(run_child, env, target, exports, tmp, dump.folder, timeout, log)
        run = DumpedRun(outcome, output_tail=_tail(tmp / "output.log"), program=program)
        if compiled is not None and target is not None:
            run.target = {**target.to_json(), "sentence": targeted.compile_sentence(target, compiled),
                          **{k: compiled[k] for k in ("devices", "failed", "export_errors", "jax", "counts")
                             if k in compiled}}
        read_dump(dump, run, shown)  # pruned a last time as the run ended; read before the folder goes
        said = outcome.evidence.get("output_tail")
        _refuse_a_torn_dump(run, [str(line) for line in said] if isinstance(said, list) else [], tmp)
    return run


def read_dump(dump: Dump, run: DumpedRun, shown: Callable[[str], str] | None) -> None:
    """Every module of ``dump`` read into ``run``: its modules (name, partitions) and their fingerprints."""
    read: list[tuple[tuple[set[int], set[int]], list[Fingerprint]]] = []  # each module's extents, fingerprints
    for module in dump.modules():
        try:
            after = read_module(module.after)
            before = read_module(module.before) if module.before else None
        except OSError as error:
            run.modules.append({"number": module.number, "name": module.name, "error": str(error)})
            continue
        prints = fingerprints(after, before, shown=shown, number=module.number)
        run.modules.append({"number": module.number, "name": module.name, "partitions": after.partitions,
                            "fingerprints": len(prints), "cut": after.cut or None})
        run.fingerprints += prints
        read.append((extents(after, before), prints))
    whole_where_the_program_shards(read)
    for module in dump.uncompiled():  # its ops cannot be told about: said so, never split
        try:
            before = read_module(module.before or module.after)
        except OSError as error:
            run.modules.append({"number": module.number, "name": module.name, "error": str(error)})
            continue
        prints = uncompiled(before, shown=shown)
        run.modules.append({"number": module.number, "name": module.name, "partitions": 0, "compiled": False,
                            "fingerprints": len(prints), "cut": before.cut or None})
        run.fingerprints += prints
    run.dump = {"kept_bytes": dump.kept_bytes, "limit_bytes": dump.limit_bytes, "dropped": dump.dropped[:20],
                "dropped_count": len(dump.dropped)}


def refuse_a_torn_dump(run: DumpedRun, tail: Sequence[str], folder: Path) -> None:
    """`_refuse_a_torn_dump`, for a run of several processes (`kit.run.explained_ranks`)."""
    _refuse_a_torn_dump(run, tail, folder)


_DUMP_REFUSED = "Could not write XLA debug data"
"""What XLA's dump.cc says, once per file, when the dump's folder refuses a write (a full TMPDIR)."""
_DUMP_ROOM = 256 * 1024


def _refuse_a_torn_dump(run: DumpedRun, tail: Sequence[str], folder: Path) -> None:
    """No answer from a dump XLA could not write whole: its modules are empty files, so "nothing was partitioned"
    would be said of a program that shards (found with TMPDIR on a full tmpfs). The machine's fault: exit 1."""
    said = any(_DUMP_REFUSED in line for line in [*tail, *run.output_tail])
    unread = any("error" in module for module in run.modules)
    if not said and not (unread and shutil.disk_usage(folder).free < _DUMP_ROOM):
        return
    raise MachineUnwritable(f"XLA could not write its dump of the program into {folder} (no room left there): "
                            "what it compiled cannot be read, so this run has no answer",
                            f"free some space in {tempfile.gettempdir()} (TMPDIR: a program's dump can take "
                            "hundreds of MB), or set TMPDIR to a folder with room, then run the same command again")


def watch_env(dump: Path, facts: Path) -> dict[str, str]:
    """What arms `repro.program_watch` in the program: the dump flags it keeps in XLA_FLAGS, where its facts go,
    and its sitecustomize on PYTHONPATH (after the environment's own paths: `repro_env`)."""
    return {DUMP_FLAGS_ENV: dump_flags(dump, ""), FACTS_ENV: str(facts),
            "PYTHONPATH": str(repro_root() / "repro" / "explain_site")}


def program_facts(path: Path) -> JsonObject:
    """What `repro.program_watch` wrote from inside the program (``{}`` where it wrote nothing usable): the
    XLA_FLAGS values it set itself, and the devices its JAX had."""
    try:
        data = read_json(path, limit=1 << 20)
    except JsonTextError:
        return {}
    if not isinstance(data, dict):
        return {}
    facts: JsonObject = {}
    set_flags = data.get("xla_flags_set")
    if isinstance(set_flags, list) and all(isinstance(v, str) for v in set_flags):
        facts["xla_flags_set"] = [v[:2000] for v in set_flags[:20]]
    devices = data.get("devices")
    if isinstance(devices, dict) and isinstance(devices.get("count"), int) and not isinstance(devices["count"], bool):
        had: JsonObject = {"count": devices["count"], "platform": str(devices.get("platform") or "")[:40]}
        # One of several processes (`repro.launch_rank`): its own devices and place, as JAX had them.
        had.update({key: devices[key] for key in ("local", "process_index", "process_count")
                    if isinstance(devices.get(key), int) and not isinstance(devices[key], bool)})
        facts["devices"] = had
    for key in ("cluster", "cpu_collectives"):
        if isinstance(data.get(key), str):
            facts[key] = data[key][:300]
    return facts


def explain_runner(run_script: ScriptRun, scratch_dir: Scratch, shared: Path | None = None,
                   run_child: targeted.RunChild | None = None, target: Target | None = None) -> ScriptRun:
    """What runs an ``explain`` check in the runner's place of `script_runs.run_script` (the same arguments).

    ``shared``: a folder where a release's dumped run is kept, so that bisecting another op of the same
    program (``--op``, its own probes) reads the same compile instead of running the program again.
    ``run_child``: `script_runs.run_child`, for a check compiled for a ``target`` (`bisect --explain --target`).
    ``target``: the run request's (`kit.run.runner.RunRequest.target`), as a value.
    """
    def run(env: Environment, check: Check, backend: str, timeout: int, log: Log, output_log: Path | None = None,
            echo: bool = True, extra_env: Mapping[str, str] | None = None, args: Sequence[str] = (),
            cwd: Path | None = None) -> RunOutcome:
        # A check's program runs as its check block says, without arguments of the command line's.
        return run_explained(run_script, scratch_dir, env, check, backend, timeout, log, extra_env, shared,
                             run_child, target)

    return run


def run_explained(run_script: ScriptRun, scratch_dir: Scratch, env: Environment, check: Check, backend: str,
                  timeout: int, log: Log, extra_env: Mapping[str, str] | None = None,
                  shared: Path | None = None, run_child: targeted.RunChild | None = None,
                  target: Target | None = None) -> RunOutcome:
    """An ``explain`` check's outcome: affected where an op is whole or gathered, from the program's HLO.

    With a ``target`` (`bisect --explain --target`) the program runs on CPU and is compiled for the target
    (`dumped_run`); the HLO judged is that compiler's, and the reason says so.
    """
    assert check.script is not None
    root = check.script.parent
    # Only bisect's per-op probes share (an "op" set, "" for the bounds' look at every op): a matrix run or an
    # explain runs the program itself.
    op = check.explain.op if check.explain is not None else None  # bisect's --op FILE:LINE[:OP] ("" every op)
    kept = shared_runs.path(shared, env, check, backend, target) if shared is not None and op is not None else None
    run = shared_runs.load(kept) if kept is not None else None
    if run is not None:
        log(f"read the compile this release made of {check.script.name} for another op's probe "
            f"({kept.name if kept else ''})")
    else:
        run = dumped_run(run_script, scratch_dir, env, check, backend, timeout, log, extra_env,
                         shown=lambda path: _shown_source(path, root), target=target, run_child=run_child)
        if kept is not None:
            shared_runs.save(kept, run)
    return judged_by_fingerprints(run.outcome, run, op or "", target is not None)  # that line's (op's) alone decide


def judged_by_fingerprints(outcome: RunOutcome, run: DumpedRun, op: str = "", compiled_for_target: bool = False,
                           ) -> RunOutcome:
    """The program's outcome judged by what it compiled (a named step): affected where an op (``op``'s, where
    one is named) holds the whole batch on every device, inconclusive where nothing of it compiled."""
    judged = [f for f in run.fingerprints if not op or _same_op(f, op)]
    flagged = [f for f in judged if f.state in HOLDS_WHOLE]
    split = [f for f in judged if f.state is FingerprintState.SPLIT]
    untold = [f for f in judged if f.state is FingerprintState.CANNOT_TELL]
    if run.modules and op and not judged:
        outcome = outcome.inconclusive(f"no linear-algebra op or collective of {op} compiled, so it cannot be judged")
    elif not run.modules:
        outcome = outcome.inconclusive("it compiled nothing, so there is no HLO to judge "
                                       f"({outcome.reason or 'no reason'})")
    elif flagged:
        worst = sorted(flagged, key=lambda f: -(f.global_batch or 0))[0]
        outcome = outcome.judged(Verdict.AFFECTED,
                                 f"{len(flagged)} op(s) hold the whole batch on every device, e.g. "
                                 f"{worst.location or worst.op_path} {worst.function} {worst.op} ({worst.pass_}, "
                                 f"{worst.state}, {worst.device_batch} of {worst.global_batch})")
    elif untold:  # its module was not compiled (the target's compiler refused it): never called split
        worst = untold[0]
        outcome = outcome.inconclusive(f"{len(untold)} op(s) could not be compiled, so they cannot be judged, e.g. "
                                       f"{worst.location or worst.op_path} {worst.function} {worst.op} "
                                       f"({worst.pass_})")
    else:
        outcome = outcome.judged(Verdict.UNAFFECTED, f"every linalg op is split across devices ({len(split)} of them)"
                                 if split else "no linalg op holds a sharded batch whole")
    if compiled_for_target and run.target:  # where the HLO came from: the chip's compiler, nothing run on it
        outcome = outcome.with_reason(f"{outcome.reason}; {as_text(run.target.get('sentence'))}")
    if run.target:
        outcome = outcome.with_evidence(target=run.target)
    summary: JsonObject = {"whole_ops": sum(f.state is FingerprintState.WHOLE for f in run.fingerprints),
                           "gathered_ops": sum(f.state is FingerprintState.GATHERED for f in run.fingerprints),
                           "split_ops": len(split), "modules": len(run.modules),
                           "unexpected_collective_bytes": sum(f.bytes_per_device for f in run.fingerprints
                                                              if f.state is FingerprintState.COMMUNICATION)}
    kept = [f.to_json() for f in run.fingerprints[:FINGERPRINTS_KEPT]]
    return outcome.with_evidence(summary=summary, fingerprints=kept, dump=run.dump)


def _shown_source(path: str, root: Path) -> str:
    """A source file as records name it: relative to the program's folder inside it, else its name alone."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, root)
    return os.path.basename(path) if relative.startswith("..") else relative


def _same_op(fingerprint: Fingerprint, op: str) -> bool:
    """``train.py:37`` is ``examples/train.py:37`` as the user gave it, either way round; ``train.py:37:lu``
    is that line's LU alone (``:triangular_solve`` its solves, ``:all-gather`` a collective)."""
    where, _, name = op.rpartition(":")
    if name.isdigit() or not where:
        where, name = op, ""
    location = fingerprint.location or ""
    line = location == where or where.endswith("/" + location) or location.endswith("/" + where)
    return line and (not name or fingerprint.op == name)


def _tail(output: Path, lines: int = 15) -> list[str]:
    """The last lines the program printed (its whole output went to a log, not the console)."""
    try:
        with open(output, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 16384))
            return log.read().decode("utf-8", "replace").splitlines()[-lines:]
    except OSError:
        return []
