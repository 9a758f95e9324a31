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

import json
import time
from pathlib import Path
from typing import Sequence

from ..arguments import Parser
from ..atomic_files import atomic_write_texts
from ..config import Matrix, release_number
from ..errors import UsageError
from ..exit_codes import EXIT_FAILED, EXIT_OK
from ..install import ExistingPython
from ..log_events import Log
from ..markdown_text import text as md
from ..package_files import in_checkout
from ..target_files import looks_like_file
from ..targets import Target, parse_target
from ..user_paths import interpreter_path
from .batch import audit_runs
from .audit import finding, not_run_lines, present, shown, table, verdict_line
from .catalogue import Entry, catalogue_folder, load_catalogue
from .listing import entry_json, listing
from .harvest.listing import harvested_entries, harvested_line
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
    args = parser.parse_args(list(argv))
    if args.isolated and not (args.measure or args.verify):
        raise UsageError("--isolated says how --measure and --verify run the checks", "add --measure or --verify")
    folder = catalogue or catalogue_folder()
    entries = chosen(load_catalogue(folder), args.only)
    if args.measure or args.verify:
        if catalogue is None and not in_checkout():
            raise UsageError("the catalogue's measurements are the repository's files",
                             "run known --measure or --verify from a clone of the kit (nox -s known -- --verify)")
        if args.measure:
            undecided = measure(matrix, entries, folder, log, args.isolated)
            return EXIT_FAILED if undecided else EXIT_OK
        broken = verify(matrix, entries, folder, log, args.isolated)
        for line in broken:
            print(f"NO LONGER HOLDS: {line}")
        print(f"{len(entries) - len({b.split(':')[0] for b in broken})} of {len(entries)} entries re-measured true")
        return EXIT_FAILED if broken else EXIT_OK
    harvested = [] if args.only.strip() else harvested_entries(folder)  # marked "harvested": true
    if args.json:
        print(json.dumps([entry_json(e, folder) for e in entries] + harvested, indent=1))
    else:
        print("\n".join(listing(entries, folder) + ([harvested_line(harvested)] if harvested else [])))
    return EXIT_OK


def audit_main(matrix: Matrix, argv: Sequence[str], log: Log, catalogue: Path | None = None) -> int:
    parser = Parser(prog="nox -s audit --",
                    tip="e.g. nox -s audit -- 0.4.35, or nox -s audit -- --python .venv/bin/python",
                    description="Which known JAX problems does one installation have?")
    parser.add_argument("release", nargs="?", help="a JAX release to install and audit")
    parser.add_argument("--python", help="audit this interpreter's JAX as it is (nothing installed)")
    parser.add_argument("--only", default="", help="entry ids, comma-separated (default: all)")
    parser.add_argument("--isolated", action="store_true",
                        help="each check in a process of its own, with its record (default: checks that need the "
                             "same devices share one interpreter)")
    parser.add_argument("--target", help="the entries compiled for this chip (tpu:v5e:2x2, gpu:a100:4): compiled for "
                                         "it, nothing run (docs/targets.md)")
    args = parser.parse_args(list(argv))
    if (args.release is None) == (args.python is None):
        raise UsageError("audit needs a release or --python PATH (one of them)",
                         "e.g. audit 0.4.35, or audit --python .venv/bin/python")
    folder = catalogue or catalogue_folder()
    target = audited_target(args.target)
    version = release_number(args.release, "release") if args.release else ""
    existing = ExistingPython(interpreter_path(args.python)) if args.python else None
    where = f"--python {args.python}" if args.python else version
    every = chosen(load_catalogue(folder), args.only)
    entries = [e for e in every if (e.compiles_for(target) if target else not e.targets)]
    skipped = [e for e in every if e not in entries]
    if target is not None and not entries:
        named = sorted({t.name for e in every for t in e.targets})
        raise UsageError(f"no catalogue entry{' of --only' if args.only.strip() else ''} is compiled for "
                         f"{target.name}", f"entries are compiled for: {', '.join(named) or 'no chip'} (jax-kit known)")
    started = time.monotonic()
    if target is not None:  # one process each: the compiler's settings are read before jax is imported
        print(f"running {len(entries)} checks compiled for {target.name} ({target.compiled_not_run})", flush=True)
        runs = [run_entry(matrix, entry, log, _audit_records(matrix), version=version, existing=existing,
                          target=target) for entry in entries]
    elif args.isolated:
        runs = []
        for number, entry in enumerate(entries, 1):
            runs.append(run_entry(matrix, entry, log, _audit_records(matrix), version=version, existing=existing))
            print(f"[{number}/{len(entries)}] {entry.id}: {runs[-1].outcome.value}", flush=True)
    else:
        # Said once the installation is there: a release the index lacks or a --python that is no interpreter is
        # refused first, without "running 34 checks" above the error.
        runs = audit_runs(matrix, entries, log, _audit_records(matrix), version=version, existing=existing,
                          ready=lambda: print(f"running {len(entries)} checks, those that need the same devices in "
                                              "one interpreter", flush=True))
    findings = [finding(entry, here, folder) for entry, here in zip(entries, runs)]
    for f in findings:
        print(f"  {f.entry.id}: {f.here.outcome.value} ({shown(f.here.reason)})")
    print(f"{len(entries)} checks in {time.monotonic() - started:.1f} s")
    skipped_lines = not_run_lines(skipped, target.name if target else "", where)
    for said in skipped_lines:
        print(said)
    release = findings[0].here.release if findings else version
    backend = findings[0].here.backend if findings else "cpu"
    how = "--python " + str(args.python) if args.python else "installed"
    installation = (f"jax {release} ({target.compiled_not_run}, {how})" if target else
                    f"jax {release} ({backend}, {how})")
    line = verdict_line(findings, installation)
    print(line)  # the answer first: writing the files below can fail
    name = f"audit-jax-{release}-{target.name.replace(':', '-') if target else backend}" \
           f"{'-python' if args.python else ''}"
    out = matrix.results_dir.parent
    aimed = {"target": target.to_json(), "compiled_not_run": target.compiled_not_run} if target else {}
    document = {"installation": {"jax": release, "backend": backend, "python": str(args.python or ""), **aimed},
                "verdict": line, "present": [f.entry.id for f in present(findings)],
                "findings": [f.to_json() for f in findings], "not_run": skipped_lines}
    markdown = "\n".join([f"# Audit: {installation}", "", f"**{line}**", "", *table(findings), "",
                          *(f"- {md(said)}" for said in skipped_lines), *([""] if skipped_lines else []),
                          "Each row is one catalogue check run on this installation (its record is under "
                          f"`{_audit_records(matrix)}`); the measured range is what `known --measure` found.", ""])
    atomic_write_texts({out / f"{name}.md": markdown, out / f"{name}.json": json.dumps(document, indent=1) + "\n"})
    print(f"report: {out / name}.md (and .json)")
    return EXIT_FAILED if present(findings) else EXIT_OK


def audited_target(name: str | None) -> Target | None:
    """``--target``: a chip the kit names (UsageError with the nearest otherwise); a target file is refused, since
    the catalogue's entries name the chips they were measured for."""
    if name is None:
        return None
    if looks_like_file(name):
        raise UsageError(f"--target {name}: audit compiles the catalogue for the chips its entries name, not a file",
                         "e.g. --target tpu:v5e:2x2 (jax-kit known lists each entry's targets)")
    return parse_target(name)


def chosen(entries: list[Entry], only: str) -> list[Entry]:
    """The entries ``--only`` names (all when empty); UsageError naming an unknown id and the known ones."""
    if not only.strip():
        return entries
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    ids = {e.id for e in entries}
    unknown = [name for name in wanted if name not in ids]
    if unknown:
        raise UsageError(f"--only {unknown[0]!r} is not a known problem", f"known: {', '.join(sorted(ids))}")
    return [e for e in entries if e.id in wanted]


def _audit_records(matrix: Matrix) -> Path:
    return records_folder(matrix).parent / "audits"
