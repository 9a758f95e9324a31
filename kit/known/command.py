"""``known`` and ``audit``, the catalogue's two commands (docs/known.md).

* ``known [--json] [--only IDS]`` lists the entries with the ranges the kit measured;
  ``known --measure`` measures them (a repository checkout: the catalogue is its files),
  ``known --verify`` measures them again and exits 1 where a range no longer holds.
* ``audit [RELEASE | --python PATH] [--only IDS] [--target T]`` runs every check on one installation
  (with ``--target``, only the entries compiled for that chip, nothing run on it),
  prints the problems present, writes ``audit-NAME.md`` and ``.json`` beside the
  reports, and exits 1 when any is present (0 when none is), as ``pip-audit`` does.
"""

from __future__ import annotations

import difflib
import json
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Sequence, TextIO

from ..arguments import Parser
from ..config import Matrix, release_number
from ..errors import UsageError
from ..exit_codes import EXIT_FAILED, EXIT_OK, EXIT_UNSUPPORTED
from ..install import ExistingPython
from ..json_types import JsonObject
from ..log_events import Log
from ..package_files import in_checkout
from ..target_files import looks_like_file
from ..targets import Target, parse_target
from ..user_paths import interpreter_path
from .batch import audit_runs
from .bisection import bisect_ranges
from .workarounds import measure_workarounds
from .audit import finding, not_run_lines, nothing_tested, present, shown, verdict_line
from .audit_report import Audited, answer_lines, document, markdown, write_report
from .audit_refusals import refuse_what_cannot_run
from .measured import Measurement, Presence
from ..package_files import catalogue_folder
from .catalogue import Entry, load_catalogue
from .listing import entry_json, listing
from .harvest.kinds import KINDS as HARVESTED_KINDS
from .harvest.listing import harvested_entries, harvested_entry_lines, harvested_line
from .harvest.audit_rows import (HarvestedVerdict, console_rows, harvested_json, harvested_verdicts, markdown_rows,
                                 verdict_sentence)
from .harvest.release_runs import ReleaseProbe
from .catalogue import KINDS as HAND_KINDS
from .timeline import ranking, rows as timeline_rows

ALL_KINDS = tuple(dict.fromkeys((*HAND_KINDS, *HARVESTED_KINDS)))
"""What ``--kind`` takes: the hand catalogue's kinds and the harvest's."""
from .measure import measure, records_folder, verify
from .runs import run_entry


def known_main(matrix: Matrix, argv: Sequence[str], log: Log, catalogue: Path | None = None) -> int:
    if "--harvest" in argv:  # the harvest's own options (kit.known.harvest.command, docs/known.md "The harvest")
        from .harvest.command import harvest_main
        return harvest_main(matrix, argv, log, catalogue or catalogue_folder())
    parser = Parser(prog="nox -s known --", tip="see docs/known.md",
                    description="The catalogue of known JAX problems, with the ranges the kit measured.")
    parser.add_argument("--json", action="store_true", help="one JSON object per entry, on one list")
    parser.add_argument("--only", default="", help="entry ids, comma-separated (default: all)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--measure", action="store_true", help="run each check on its measure_on releases, write "
                                                             "known/measured/ID.json")
    what.add_argument("--verify", action="store_true", help="measure again; exit 1 where an outcome changed")
    parser.add_argument("--isolated", action="store_true",
                        help="with --measure or --verify: each run in a process of its own (default: a release's "
                             "checks that need the same devices share one interpreter)")
    parser.add_argument("--bisect", action="store_true",
                        help="with --measure: find each range's boundaries by release bisect over every release "
                             "from 0.4.13, all entries measured together release by release (docs/known.md)")
    parser.add_argument("--workarounds", action="store_true",
                        help="with --measure: run each entry's known/workarounds/ID.py on the releases measured with "
                             "its problem")
    parser.add_argument("--fresh", action="store_true",
                        help="with --bisect: start without the outcomes measured before (after a check changed)")
    args = parser.parse_args(list(argv))
    if ((args.bisect or args.workarounds) and not args.measure) or (args.fresh and not args.bisect):
        raise UsageError("--bisect says how --measure measures, and --fresh how --bisect starts",
                         "e.g. known --measure --bisect --only sharded-cumsum")
    if args.isolated and not (args.measure or args.verify):
        raise UsageError("--isolated says how --measure and --verify run the checks", "add --measure or --verify")
    folder = catalogue or catalogue_folder()
    if args.measure or args.verify:
        entries = chosen(load_catalogue(folder), args.only)
    else:  # a listing: --only may name harvested entries too (t5: "harvest-4603e66f1f is not a known problem")
        entries, harvested = _chosen_listed(folder, args.only)
    if args.measure or args.verify:
        if catalogue is None and not in_checkout():
            raise UsageError("the catalogue's measurements are the repository's files",
                             "run known --measure or --verify from a clone of the kit (nox -s known -- --verify)")
        if args.workarounds:
            return EXIT_FAILED if measure_workarounds(matrix, entries, folder, log, args.isolated) else EXIT_OK
        if args.bisect:
            searches = bisect_ranges(matrix, entries, folder, log, fresh=args.fresh, isolated=args.isolated)
            return EXIT_OK if all(s.done for s in searches.values()) else EXIT_FAILED
        if args.measure:
            undecided = measure(matrix, entries, folder, log, args.isolated)
            return EXIT_FAILED if undecided else EXIT_OK
        broken = verify(matrix, entries, folder, log, args.isolated)
        for line in broken:
            print(f"NO LONGER HOLDS: {line}")
        print(f"{len(entries) - len({b.split(':')[0] for b in broken})} of {len(entries)} entries re-measured true")
        return EXIT_FAILED if broken else EXIT_OK
    if args.json:
        print(json.dumps([entry_json(e, folder) for e in entries] + harvested, indent=1))
    elif args.only.strip():
        # Only the harvested ones named: no "0 known problems" header above them (t11)
        hand = listing(entries, folder) if entries or not harvested else []
        print("\n".join(hand + [line for h in harvested for line in harvested_entry_lines(h)]))
    else:
        print("\n".join(listing(entries, folder) + ([harvested_line(harvested)] if harvested else [])))
    return EXIT_OK


def _chosen_listed(folder: Path, only: str) -> tuple[list[Entry], list[JsonObject]]:
    """The hand and harvested entries ``--only`` names (all when empty); UsageError for an id neither has."""
    hand = load_catalogue(folder)
    harvested = harvested_entries(folder)  # marked "harvested": true
    if not only.strip():
        return hand, harvested
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    harvested_ids = {str(h["id"]) for h in harvested}
    hand_wanted = [name for name in wanted if name not in harvested_ids]
    entries = chosen(hand, ",".join(hand_wanted), sorted(harvested_ids)) if hand_wanted else []
    if not wanted:
        chosen(hand, only)  # says that --only names nothing
    return entries, [h for h in harvested if str(h["id"]) in wanted]


def audit_main(matrix: Matrix, argv: Sequence[str], log: Log, catalogue: Path | None = None) -> int:
    parser = Parser(prog="nox -s audit --",
                    tip="e.g. nox -s audit -- 0.4.35, or nox -s audit -- --python .venv/bin/python",
                    description="Which known JAX problems does one installation have?")
    parser.add_argument("release", nargs="?", help="a JAX release to install and audit")
    parser.add_argument("--python", help="audit this interpreter's JAX as it is (nothing installed)")
    parser.add_argument("--only", default="", help="entry ids, comma-separated (default: all)")
    parser.add_argument("--isolated", action="store_true",
                        help="each check in a process of its own, with its record (default: checks that need the "
                             "same devices share one warm interpreter, each check in a fresh fork of it)")
    parser.add_argument("--target", help="the entries compiled for this chip (tpu:v5e:2x2, gpu:a100:4): compiled for "
                                         "it, nothing run (docs/targets.md)")
    parser.add_argument("--json", action="store_true", help="the report's JSON on standard output (progress on "
                                                            "standard error); the files are written as well")
    parser.add_argument("--kind", default="", help="only entries of these kinds, comma-separated "
                                                   f"({', '.join(ALL_KINDS)})")
    parser.add_argument("--harvested", action="store_true",
                        help="also the confirmed harvested entries (their tests: pytest processes on every core, "
                             "compiles reused from the last audit where that cannot change an answer)")
    parser.add_argument("--jax-repo", type=Path, help="with --harvested: a clone of JAX (the tests' files)")
    parser.add_argument("--rank", action="store_true", help="rank the releases by the known problems measured "
                                                            "present on each, from what was kept; nothing run")
    args = parser.parse_args(list(argv))
    kinds = chosen_kinds(args.kind)
    if args.rank:
        return _rank(catalogue or catalogue_folder())
    if args.harvested and args.release is None:
        raise UsageError("--harvested runs JAX's tests in a release's environment with JAX's test harness",
                         "give a release: audit 0.11.0 --harvested")
    if (args.release is None) == (args.python is None):
        raise UsageError("audit needs a release or --python PATH (one of them)",
                         "e.g. audit 0.4.35, or audit --python .venv/bin/python")
    folder = catalogue or catalogue_folder()
    target = audited_target(args.target)
    version = release_number(args.release, "release") if args.release else ""
    existing = ExistingPython(interpreter_path(args.python)) if args.python else None
    where = f"--python {args.python}" if args.python else version
    every = [e for e in chosen(load_catalogue(folder), args.only) if not kinds or e.kind in kinds]
    entries = [e for e in every if (e.compiles_for(target) if target else not e.targets)]
    skipped = [e for e in every if e not in entries]
    if target is not None and not entries:
        named = sorted({t.name for e in every for t in e.targets})
        raise UsageError(f"no catalogue entry{' of --only' if args.only.strip() else ''} is compiled for "
                         f"{target.name}", f"entries are compiled for: {', '.join(named) or 'no chip'} (jax-kit known)")
    refuse_what_cannot_run(version, existing, target)
    say = _speaker(sys.stderr if args.json else sys.stdout)
    started = time.monotonic()
    # The harvested entries' pytest runs in its own environment beside the hand checks' interpreter: two
    # processes on two cores, the audit's wall the longer of the two, not their sum.
    pending = _start(lambda: _audit_harvested(matrix, version, folder, kinds, args.jax_repo, log, say)) \
        if args.harvested else None
    runs = _runs(matrix, entries, log, version, existing, target, args.isolated, say)
    findings = [finding(entry, here, folder) for entry, here in zip(entries, runs)]
    for f in findings:
        say(f"  {f.entry.id}: {f.here.outcome.value} ({shown(f.here.reason)})")
    say(f"{len(entries)} checks in {time.monotonic() - started:.1f} s")
    skipped_lines = not_run_lines(skipped, target.name if target else "", where)
    for line in skipped_lines:
        say(line)
    audited = Audited(findings[0].here.release if findings else version,
                      findings[0].here.backend if findings else "cpu", str(args.python or ""), target,
                      tuple(e.id for e in every) if args.only.strip() else ())
    line = verdict_line(findings, audited.installation)
    for shown_line in answer_lines(findings, line):  # the answer first: writing the files below can fail
        say(shown_line)
    harvested = _harvested_said(folder, pending, say)
    blank = nothing_tested(findings) and not any(v.outcome is not Presence.UNTESTED for v in harvested)
    written = document(audited, findings, line, skipped_lines, blank)
    if pending is not None:
        written["harvested"] = harvested_json(harvested)
    write_report(matrix.results_dir.parent, audited, written,
                 markdown(audited, findings, line, skipped_lines, _audit_records(matrix)) + markdown_rows(harvested),
                 say)
    if args.json:
        print(json.dumps(written, indent=1), flush=True)
    if blank:  # a CI gate on the exit code must not pass with nothing tested
        return EXIT_UNSUPPORTED
    return EXIT_FAILED if present(findings) or any(v.problem for v in harvested) else EXIT_OK


def chosen_kinds(given: str) -> list[str]:
    """``--kind``: the kinds named (none: every kind); UsageError naming the known ones."""
    kinds = [k.strip() for k in given.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown:
        raise UsageError(f"--kind {unknown[0]!r} is not a kind of the catalogue", f"kinds: {', '.join(ALL_KINDS)}")
    return kinds


def _rank(folder: Path) -> int:
    """``audit --rank``: reports/known.md's ranking, from the kept measurements."""
    found = timeline_rows(load_catalogue(folder), [folder])
    print(f"releases ranked by the known problems measured present on each, of {len(found)} entries (fewest first, "
          "then most absent; untested and never measured: not known):")
    for release, present_here, absent, untested in ranking(found):
        print(f"  {release}: {present_here} present, {absent} absent, {untested} untested, "
              f"{len(found) - present_here - absent - untested} never measured")
    return EXIT_OK


def _start(work: Callable[[], list[tuple[str, ReleaseProbe]]]) -> Future[list[tuple[str, ReleaseProbe]]]:
    """``work()`` begun on a thread of its own (its pytest is a process of its own: the GIL is not shared)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harvested-audit")
    try:
        return pool.submit(work)
    finally:
        pool.shutdown(wait=False)  # the thread ends with its work; the result is waited for where it is needed


def _harvested_said(folder: Path, pending: Future[list[tuple[str, ReleaseProbe]]] | None,
                    say: Callable[[str], None]) -> list[HarvestedVerdict]:
    """The harvested entries' verdicts, the problems present said with their safe releases as the hand table is
    (t5: the report and the table held the hand entries only, "13 of 34 present" where 26 harvested ones were
    present too)."""
    harvested = harvested_verdicts(folder, pending.result()) if pending is not None else []
    for shown_line in ([verdict_sentence(harvested), *console_rows(harvested)] if harvested else []):
        say(shown_line)
    return harvested


def _audit_harvested(matrix: Matrix, version: str, folder: Path, kinds: Sequence[str], jax_repo: Path | None,
                     log: Log, say: Callable[[str], None]) -> list[tuple[str, ReleaseProbe]]:
    from .harvest.audit import audit_harvested, harvested_to_audit
    from .harvest.command import jax_history

    entries = harvested_to_audit(folder, kinds)
    if not entries:
        say("no confirmed harvested entry to audit")
        return []
    probes = audit_harvested(matrix, version, jax_history(matrix, jax_repo, log), entries, log, say)
    return [(entry.id, probe) for entry, probe in zip(entries, probes)]


def _speaker(stream: TextIO) -> Callable[[str], None]:
    def say(line: str) -> None:
        print(line, file=stream, flush=True)
    return say


def _runs(matrix: Matrix, entries: Sequence[Entry], log: Log, version: str, existing: ExistingPython | None,
          target: Target | None, isolated: bool, say: Callable[[str], None]) -> list[Measurement]:
    """Each entry's outcome: compiled for ``target`` (one process each), one process each (``--isolated``), or
    the checks that need the same devices in one warm interpreter, each in a fresh fork of it."""
    records = _audit_records(matrix)
    if target is not None:  # one process each: the compiler's settings are read before jax is imported
        say(f"running {len(entries)} checks compiled for {target.name} ({target.compiled_not_run})")
        return [run_entry(matrix, entry, log, records, version=version, existing=existing, target=target)
                for entry in entries]
    if isolated:
        runs = []
        for number, entry in enumerate(entries, 1):
            runs.append(run_entry(matrix, entry, log, records, version=version, existing=existing))
            say(f"[{number}/{len(entries)}] {entry.id}: {runs[-1].outcome.value}")
        return runs
    # Said once the installation is there: a release the index lacks or a --python that is no interpreter is
    # refused first, without "running 34 checks" above the error.
    return audit_runs(matrix, entries, log, records, version=version, existing=existing,
                      ready=lambda: say(f"running {len(entries)} checks, those that need the same devices from one "
                                        "interpreter, each in a fresh fork of it"))


def audited_target(name: str | None) -> Target | None:
    """``--target``: a chip the kit names (UsageError with the nearest otherwise); a target file is refused, since
    the catalogue's entries name the chips they were measured for."""
    if name is None:
        return None
    if looks_like_file(name):
        raise UsageError(f"--target {name}: audit compiles the catalogue for the chips its entries name, not a file",
                         "e.g. --target tpu:v5e:2x2 (jax-kit known lists each entry's targets)")
    return parse_target(name)


def chosen(entries: list[Entry], only: str, harvested: Sequence[str] = ()) -> list[Entry]:
    """The entries ``--only`` names (all when empty); UsageError for an unknown id, with the ids nearest it of all
    the catalogue's (``harvested`` too, where the command takes them) and how to list every one: a tip that listed
    the hand-written ids alone read as the whole catalogue, and the harvested ones are hundreds."""
    if not only.strip():
        return entries
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    if not wanted:  # --only ",," (a list of unset shell variables): not the whole catalogue, and not nothing tested
        raise UsageError(f"--only {only!r} names nothing", "give entry ids, e.g. --only cumsum-bool-dtype "
                                                           "(jax-kit known lists them), or leave --only out for all")
    ids = {e.id for e in entries}
    unknown = [name for name in wanted if name not in ids]
    if unknown:
        every = sorted(ids | set(harvested))
        near = difflib.get_close_matches(unknown[0], every, n=5, cutoff=0.6)
        listed = (f"jax-kit known --json lists every id ({len(every)}, the harvested ones included)" if harvested
                  else f"jax-kit known lists every id ({len(every)})")
        raise UsageError(f"--only {unknown[0]!r} is not a known problem",
                         (f"did you mean {', '.join(near)}? " if near else "") + listed)
    return [e for e in entries if e.id in wanted]


def _audit_records(matrix: Matrix) -> Path:
    return records_folder(matrix).parent / "audits"
