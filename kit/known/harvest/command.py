"""``known --harvest``: confirm the candidates of a stretch of JAX's history, one commit at a time or ``--jobs`` at once.

Each commit's pair runs on one build (``--build RELEASE``: that release's
environment with JAX's test harness of its era, `kit.known.harvest.harness`);
what each side showed is kept as it ends (`kit.known.harvest.store`), so a
harvest stopped by Ctrl-C resumes with the next commit (and the other side of
a half-run one). A progress line per commit says what it came to, and how
long the rest should take at the pace so far.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Sequence

from ...arguments import Parser
from ...config import Matrix, release_number
from ...errors import KitError, UsageError
from ...exit_codes import EXIT_OK, EXIT_UNSUPPORTED
from ...history.git import GitFailed, git
from ...history.source import History, open_history
from ...install import OVERLAY_FORMAT, InstallKey, prepare
from ...json_types import JsonObject, as_list, as_number, as_object
from ...log_events import Log
from ...slurm.jobs import SlurmOptions
from ...markdown_text import inert
from ...requirements import package_name
from ...user_paths import report_path
from .candidates import HarvestCandidate, list_candidates
from .confirm import HarvestBuild, confirm
from .harness import harness_requirements
from .pytest_run import SideInterrupted
from .slurm import harvest_on_slurm, task_command
from .store import BuildKey, Store
from .verdicts import BINARY, CONFIRMED, UNRUN, unrun_reasons

_RELEASE_TAG = re.compile(r"^jax-v(\d+(?:\.\d+)+)$")


def harvest_main(matrix: Matrix, argv: Sequence[str], log: Log, catalogue: Path) -> int:
    if "--ranges" in argv:  # the confirmed entries' ranges over the releases (kit.known.harvest.ranges)
        from .ranges import ranges_main
        given = _option(argv, "--jax-repo")
        store_given = _option(argv, "--store")
        return ranges_main(matrix, argv, log, Store(Path(store_given) if store_given else catalogue / "harvested"),
                           jax_history(matrix, Path(given) if given else None, log))
    parser = Parser(prog="nox -s known -- --harvest", tip="see docs/known.md (The harvest)",
                    description="Known problems from the regression tests JAX's fixes added, each confirmed by its "
                                "test failing at the parent and passing at the fix.")
    parser.add_argument("--harvest", action="store_true", required=True)
    parser.add_argument("--since", required=True, help="the commit or tag the stretch starts after (jax-v0.11.0)")
    parser.add_argument("--until", default="HEAD", help="the last commit of the stretch (default: HEAD)")
    parser.add_argument("--build", help="the release whose environment both sides run on (default: --since's "
                                        "release, where it is a jax-vX.Y.Z tag)")
    parser.add_argument("--jobs", type=int, default=None, help="commits confirmed at once (default 1; with --slurm, "
                                                               "array tasks running at once: default no cap)")
    parser.add_argument("--limit", type=int, default=0, help="confirm at most this many commits not yet harvested")
    parser.add_argument("--commits", default="", help="only these candidates of the range (hash prefixes, "
                                                      "comma-separated): held-out fixes first, on the range's build")
    parser.add_argument("--jax-repo", type=Path, help="a clone of JAX (default: matrix.toml's, else the kit's own)")
    parser.add_argument("--store", type=Path, help="where probes and results are kept (default: the catalogue's "
                                                   "harvested/)")
    parser.add_argument("--slurm", action="store_true", help="one SLURM array task per commit (docs/cluster.md)")
    parser.add_argument("--partition", default=None, help="--slurm: the partition to submit to")
    parser.add_argument("--time", default=None, metavar="LIMIT", help="--slurm: time limit per array task")
    parser.add_argument("--no-wait", action="store_true", help="--slurm: print the job id and return")
    args = parser.parse_args(list(argv))
    if not args.slurm and (args.partition or args.time or args.no_wait):
        raise UsageError("--partition, --time and --no-wait go with --slurm", "add --slurm, or drop them")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: at least one commit runs at a time", "e.g. --jobs 2")
    release = _build_release(args.build, args.since)
    history = jax_history(matrix, args.jax_repo, log)
    store = Store(args.store or catalogue / "harvested")
    try:
        candidates = list_candidates(history, args.since, args.until)
    except GitFailed as error:
        raise UsageError(f"--since {args.since!r} .. --until {args.until!r} is not a range of {history.path}: "
                         f"{inert(str(error))[:300]}", "give commits or tags of that clone (jax-v0.11.0, a hash)") \
            from None
    print(f"{len(candidates)} candidates in {inert(args.since)}..{inert(args.until)} (a change to jax/ or jaxlib/ "
          "and to a test, a message that says fix)", flush=True)
    if not candidates:  # nothing to confirm: no build is made, and a CI gate on the exit code does not pass
        _refuse_an_empty_range(history, args.since, args.until)
        print("harvest: nothing tested: no commit of the range is a candidate")
        return EXIT_UNSUPPORTED
    build = _build(matrix, history, release, args.since, log)
    done = {str(r["commit"]) for r in store.results() if r.get("build_tag") == build.key.tag}
    todo = [c for c in candidates if c.commit not in done]
    wanted = [prefix.strip() for prefix in args.commits.split(",") if prefix.strip()]
    if wanted:
        todo = [c for c in todo if any(c.commit.startswith(prefix) for prefix in wanted)]
    if args.limit:
        todo = todo[:args.limit]
    at_once = "one per SLURM array task" if args.slurm else f"with {args.jobs or 1} at a time"
    print(f"{len(candidates) - len([c for c in candidates if c.commit not in done])} already harvested on this build "
          f"({store.folder}); confirming {len(todo)} on {build.key.jaxlib and 'jaxlib ' + build.key.jaxlib} "
          f"{at_once}", flush=True)
    if args.slurm and todo:
        command = task_command(sys.executable, args.since, _commit(history, args.until), release, history.path,
                               store.folder.resolve())
        if not harvest_on_slurm(todo, command, matrix.path.parent.resolve(), matrix.layout.slurm / "harvest", store,
                                build.key, SlurmOptions(args.partition, args.time, not args.no_wait), args.jobs, log):
            return EXIT_OK
    elif todo:
        _run_all(history, todo, build, store, args.jobs or 1)
    results = [r for r in store.results() if r["commit"] in {c.commit for c in candidates}]
    print(summary_line(results))
    for kind, count in unrun_reasons(results).items():
        print(f"  unrun: {count} {kind}")
    print(time_line(results))
    return EXIT_OK


def _commit(history: History, ref: str) -> str:
    """``ref`` as the commit it names now: the tasks list the same stretch even if a branch such as main moves."""
    return git(history.path, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()


def _option(argv: Sequence[str], name: str) -> str | None:
    """The value of ``name VALUE`` or ``name=VALUE`` in ``argv`` (the ranges' parser checks the rest)."""
    for number, word in enumerate(argv):
        if word == name and number + 1 < len(argv):
            return argv[number + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def _refuse_an_empty_range(history: History, since: str, until: str) -> None:
    """`UsageError` when ``since..until`` holds no commit at all: the two ends swapped, or the same commit."""
    if git(history.path, "rev-list", "--count", f"{since}..{until}").strip() != "0":
        return
    swapped = git(history.path, "rev-list", "--count", f"{until}..{since}").strip() != "0"
    raise UsageError(f"--since {inert(since)} .. --until {inert(until)} holds no commit"
                     + (": --since is newer than --until" if swapped else ": both name the same commit"),
                     "give the older commit or tag as --since and the newer as --until (default HEAD)")


def _build_release(given: str | None, since: str) -> str:
    if given:
        return release_number(given, "--build")
    tag = _RELEASE_TAG.match(since)
    if tag is None:
        raise UsageError(f"--since {since!r} is not a release tag, so it names no build",
                         "add --build RELEASE: the release whose jaxlib both sides of each pair run on")
    return tag.group(1)


def jax_history(matrix: Matrix, given: Path | None, log: Log) -> History:
    given_by = "--jax-repo"
    if given is None and matrix.jax_repo is not None:
        given, given_by = matrix.jax_repo, "matrix.toml's [install] jax_repo"
    cache = matrix.layout.jax_history
    return open_history(given, given_by, cache, log, shown=report_path(cache, matrix.path.parent))


def _build(matrix: Matrix, history: History, release: str, since: str, log: Log) -> HarvestBuild:
    """The release's environment with the harness of its era (JAX's test requirements as of ``since``)."""
    harness = harness_requirements(history, since)
    print(f"building or reusing jax {release}'s environment with JAX's test harness: {', '.join(harness)}", flush=True)
    prepared = prepare(matrix, release, InstallKey(requires=harness), log)
    if prepared.environment is None:
        raise UsageError(f"jax {release}'s environment with the test harness could not be prepared: "
                         f"{prepared.problem}", "try another --build release")
    environment = prepared.environment
    installed = tuple(f"{package_name(r)}=={environment.versions.get(package_name(r), '?')}" for r in harness)
    key = BuildKey(release, environment.versions.get("jaxlib", "?"), environment.python_version or "", installed,
                   OVERLAY_FORMAT)
    return HarvestBuild(prepared, key, matrix.layout.commit_bytecode)


def _run_all(history: History, todo: list[HarvestCandidate], build: HarvestBuild, store: Store, jobs: int) -> None:
    started, finished = time.monotonic(), 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        waiting: dict[Future[JsonObject], HarvestCandidate] = {}
        queue = list(todo)
        try:
            while queue or waiting:
                while queue and len(waiting) < jobs:
                    candidate = queue.pop(0)
                    waiting[pool.submit(confirm, history, candidate, build, store)] = candidate
                ready, _ = wait(waiting, return_when=FIRST_COMPLETED)
                for future in ready:
                    candidate = waiting.pop(future)
                    finished += 1
                    try:
                        result = future.result()
                    except (KitError, GitFailed, OSError, subprocess.SubprocessError, SideInterrupted) as error:
                        # One commit's trouble (a full disk, an unreadable object) is said and the rest go on;
                        # nothing is kept for it, so the next harvest tries it again.
                        print(f"[{finished}/{len(todo)}] {candidate.short}: not confirmed now, tried again next "
                              f"time: {inert(str(error))[:300]}", flush=True)
                        continue
                    print(progress_line(finished, len(todo), candidate, result, time.monotonic() - started, jobs),
                          flush=True)
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C, or SIGTERM and SIGHUP as the kit takes them (cli)
            for future in waiting:
                future.cancel()
            print(f"stopped: {finished} of {len(todo)} commits confirmed and kept in {store.folder}; the same command "
                  "resumes", flush=True)
            raise


def progress_line(finished: int, total: int, candidate: HarvestCandidate, result: JsonObject, elapsed: float,
                  jobs: int) -> str:
    """``[3/29] 75a26ecf2f confirmed: 1 of 1 tests (48 s); about 21 min left``."""
    verdicts = [as_object(row).get("verdict") for row in as_list(result.get("tests"))]
    counts = {v: verdicts.count(v) for v in (CONFIRMED, BINARY, UNRUN)}
    said = ", ".join(f"{n} {v}" for v, n in counts.items() if n) or inert(str(result.get("problem", "")))[:120]
    left = (total - finished) * elapsed / finished
    eta = f"about {left / 60:.0f} min left" if finished < total else "done"
    return (f"[{finished}/{total}] {candidate.short} {result.get('status')}: {said} "
            f"({result.get('seconds')} s); {eta}")


def summary_line(results: Sequence[JsonObject]) -> str:
    counts = {status: sum(1 for r in results if r.get("status") == status) for status in (CONFIRMED, BINARY, UNRUN)}
    return (f"harvest: {len(results)} commits tried on this build: {counts[CONFIRMED]} confirmed, "
            f"{counts[BINARY]} binary (unconfirmed by overlay), {counts[UNRUN]} unrun")


def time_line(results: Sequence[JsonObject]) -> str:
    """The time per commit its results kept (each commit's own wall time, both sides and the overlays)."""
    seconds = sorted(as_number(r.get("seconds")) for r in results if r.get("tests"))
    if not seconds:
        return "time per commit: no commit ran a test"
    return (f"time per commit that ran its tests: median {statistics.median(seconds):.0f} s, "
            f"mean {statistics.mean(seconds):.0f} s, {seconds[0]:.0f} to {seconds[-1]:.0f} s ({len(seconds)} commits)")
