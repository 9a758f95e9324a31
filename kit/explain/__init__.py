"""``explain PROGRAM [ARGS...]``: which op of a program is not split across devices, on which release.

The program runs unmodified on each release (`capture`), its compiled HLO is
read into fingerprints (`kit.hlo`), and the answer (`answer`) and the whole
tables (`report`) are written; docs/explain.md.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Sequence

from ..arguments import asks_help
from ..log_events import Log
from ..records import Status
from ..targets import JAX_PLATFORM
from ..config import Matrix
from ..hlo import HOLDS_WHOLE, UNTOLD, FingerprintState
from ..json_types import as_object
from ..markdown_text import inert
from ..config import catalogue_folders, legacy_known_problems
from ..reproduce_line import reproduce_text
from ..errors import StorageError
from ..exit_codes import EXIT_FAILED, EXIT_NOT_INSTALLABLE, EXIT_OK
from ..run.facts import require_platform
from . import answer as answers
from .capture import Capture, capture_release, devices_had, kit_files_sentence, processes_problem
from .known import KnownFingerprint, load as load_known
from .options import HELP, ExplainOptions, parse
from .report import write_reports


__all__ = ["main", "short_answer", "ExplainOptions", "Capture"]


def main(matrix: Matrix, argv: Sequence[str], log: Log, reproduce: str = "") -> int:
    """Explain the program on each release; print the short answer; write the reports. Exit 0 when it compiled."""
    if asks_help(argv):
        print(HELP)
        return EXIT_OK
    options = parse(matrix, argv)
    if options.target is None and any(options.releases):  # a run for the target sets JAX_PLATFORMS=cpu itself
        require_platform(options.backend)  # a JAX_PLATFORMS that keeps JAX off the backend: refused, as a check is
    # Pasted into a shell by someone else: every word quoted (a program's "$(...)" argument ran), no machine path.
    said = [word for at, word in enumerate(argv) if "--called-from" not in (word, argv[at - 1] if at else "")]
    reproduce = reproduce_text(reproduce or "python -m kit explain " + shlex.join(said), matrix.path.parent)
    captures = []
    for release in options.releases:
        log(f"explain {options.shown} on jax {release or 'of ' + str(options.python)}: running it with XLA's dump "
            "on (a release not built yet is built first: minutes)")
        kept: list[str] = []  # the install's and the run's own lines go to the record, not the console
        captures.append(capture_release(matrix, options, release, kept.append, reproduce))
        captures[-1].record["log"] = paste_ready(kept[-40:], matrix)
    known = load_known(catalogue_folders(matrix), _platform(options))
    if legacy_known_problems(matrix):
        log(legacy_known_problems(matrix))
    lines = short_answer(options, captures, known)
    # The answer first: a folder that refuses the tables (read-only, full, --out on a file) must not lose it.
    print("\n".join(lines[:answers.MAX_LINES - 1]), flush=True)
    try:
        written = write_reports(matrix.layout.reports, options.shown, captures, lines)
    except OSError as error:
        raise StorageError(f"could not write the tables into {matrix.layout.reports} ({error.strerror or error}); "
                           "the answer printed above is all there is of this run",
                           "make that folder writable (or free some space, or give --out a folder you can "
                           "write), then run the same command again") from None
    shown = [str(p.relative_to(matrix.path.parent)) if p.is_relative_to(matrix.path.parent) else p.name
             for p in written if p.suffix == ".md"]
    print("tables: " + ", ".join(shown[-1:] if len(captures) > 1 else shown), flush=True)
    if not any(c.compiled for c in captures):
        installable = any(c.record.get("status") != Status.NOT_INSTALLABLE for c in captures)
        return EXIT_FAILED if installable else EXIT_NOT_INSTALLABLE
    return EXIT_OK


def paste_ready(lines: Sequence[str], matrix: Matrix) -> list[str]:
    """The run's log lines as a record committed or pasted into a thread may hold them: the environments' folder
    named ``<envs>``, the project ``.`` and the home folder ``~`` (the lock, the environment, the interpreter)."""
    folders = [(matrix.envs_dir, "<envs>"), (matrix.path.parent, "."), (Path.home(), "~")]
    spelled = [(f"{spelling}{os.sep}", f"{name}{os.sep}") for folder, name in folders
               for spelling in dict.fromkeys((os.path.abspath(folder), str(Path(folder).resolve())))]
    shown = []
    for line in lines:
        for spelling, name in spelled:
            line = line.replace(spelling, name)
        shown.append(line)
    return shown


def short_answer(options: ExplainOptions, captures: Sequence[Capture], known: Sequence[KnownFingerprint]) -> list[str]:
    """The console's answer, at most MAX_LINES - 1 lines (the last is where the tables went)."""
    where = f"{options.backend}" + (f", {_devices(options, captures)}" if options.devices else "")
    if options.target:
        where = f"{options.target.compiled_not_run}; the program ran on cpu, {options.devices} host devices"
    if options.processes > 1:
        where += f" as {options.processes} processes ({options.launcher})"
    names = ", ".join(c.release or "(interpreter)" for c in captures)
    lines = [f"explain {options.shown} on jax {names} ({where})"]
    budget = answers.MAX_LINES - 6  # header, expected, a known problem, the answer, per op, the tables
    # Releases that say the same are said once ("0.4.35, 0.4.36, 0.5.0: ..."), in release order.
    said: dict[tuple[str, ...], list[Capture]] = {}
    for capture in captures:
        said.setdefault(tuple(_release_lines(capture, options, budget)), []).append(capture)
    room = max(1, budget // len(said))
    for alike in said.values():
        # Said again in the room each group has, so that "(N more line(s) in the table)" counts what is left
        # out here (t5: a line cut after it was counted went unsaid, and "1 more" stood for 3).
        body = _release_lines(alike[0], options, room)
        lines += [", ".join(c.release or "(interpreter)" for c in alike) + body[0], *body[1:]]
    expected = answers.expected_sentence(captures)
    matched = answers.matched_problems(captures, known, _platform(options),
                                       options.target.name if options.target else "")
    tail = [expected] if expected else []
    tail += answers.known_sentence(matched)
    per_op = answers.per_op(captures)
    tail += [per_op] if per_op else []
    tail.append(answers.choice(captures, [p for p, m in matched if m.full], options.target))
    return lines[:answers.MAX_LINES - 1 - len(tail)] + tail


def _platform(options: ExplainOptions) -> str:
    """The platform compiled for, as jax and the catalogue's ``shows_on`` read it (``gpu`` for a CUDA target: issue
    58's "not: on cuda (it shows on cpu, gpu)" held the backend's name against jax's)."""
    backend = options.target.platform if options.target else options.backend
    return JAX_PLATFORM.get(backend, backend)


def _devices(options: ExplainOptions, captures: Sequence[Capture]) -> str:
    """The host devices as JAX had them: the kit's ``--devices``, or what the program made of them
    (``jax_num_cpu_devices``, its own XLA_FLAGS), per release where they differ."""
    had = {n for n in (devices_had(c) for c in captures) if n is not None}
    if not had or had == {options.devices}:
        return f"{options.devices} host devices"
    return "/".join(str(n) for n in sorted(had)) + f" host devices (the program's own; the kit asked for {options.devices})"


def _release_lines(capture: Capture, options: ExplainOptions, room: int) -> list[str]:
    """What one release says, its first line without the release's name (`short_answer` puts the names)."""
    name = ""
    if not capture.compiled:
        return [f"{name}: {capture.reason or capture.record.get('status')}"]
    if capture.status is not Status.RAN:  # it crashed, timed out or left processes: say so first
        name += f" ({capture.reason})"
    elif capture.section("run").get("left_running"):
        name += f" ({capture.reason})"
    elif capture.kit_files_changed:
        name += f" ({kit_files_sentence(capture.kit_files_changed)})"
    elif processes_problem(capture.section("processes")):
        name += f" ({processes_problem(capture.section('processes'))})"
    elif capture.section("program_facts").get("xla_flags_set"):
        name += " (the program set XLA_FLAGS itself: the kit merged its dump flags into the program's)"
    flagged = answers.flagged_lines(capture, options.cwd)
    linalg = [f for f in capture.fingerprints if f.op not in answers.COLLECTIVE_KINDS]
    untold = _untold(capture)
    if not flagged:
        split = sorted({f.op for f in linalg if f.state is FingerprintState.SPLIT})
        what = f"every linalg op split ({', '.join(split)})" if split else "no linalg op on a sharded batch"
        if untold:
            what = (f"every linalg op compiled is split ({', '.join(split)})" if split
                    else "no linalg op compiled on a sharded batch")
        return [f"{name}: {what}; no unexpected collective", *untold]
    # ops whose line cannot be told are told apart by their JAX function (0.8.3 for TPU: slogdet's and solve's LU)
    whole = len({(f.location or f.op_path, f.function if f.location == UNTOLD else "", f.op, f.pass_)
                 for f in linalg if f.state in HOLDS_WHOLE})
    head = f"{name}: {whole} op(s) hold the whole batch on every device" if whole else f"{name}: unexpected collectives"
    split = sorted({f.op for f in linalg if f.state is FingerprintState.SPLIT})
    if not whole and split and not untold:  # the trial's 0.8.0 said only "unexpected collectives" of a split release
        head = f"{name}: every linalg op split ({', '.join(split)}); unexpected collectives"
    shown = [f"  {answers.sentence(line)}" for line in flagged[:max(1, room - 1 - len(untold))]]
    more = len(flagged) - len(shown)
    return [head + (f" ({more} more line(s) in the table)" if more > 0 else "")] + untold + shown


def _untold(capture: Capture) -> list[str]:
    """The release's line of what could not be told: computations not compiled for the target (or not exported,
    or past the kit's bound), and the ops they hold; [] where everything the program called was read."""
    gaps = answers.unseen(capture)
    if not gaps:
        return []
    ops = sorted({f"{f.location or f.op_path} {f.op}" for f in capture.fingerprints
                  if f.state is FingerprintState.CANNOT_TELL})
    target = capture.section("target")
    failed = target.get("failed")
    why = as_object(failed[0]).get("error") if isinstance(failed, list) and failed else ""
    exported = target.get("export_errors")  # t8: an unregistered pytree class refused by export, said only in .json
    if not why and isinstance(exported, list) and exported:
        why = f"not exported: {inert(str(exported[0]))[:160]}"
    said = f"  cannot tell: {gaps} computation(s) of the program could not be compiled or examined"
    said += f" ({why})" if why else ""
    return [said + (f"; their ops: {', '.join(ops[:4])}" if ops else "")]
