"""``nox -s bisect``: list the candidates, verify the ends, search, report.

The driver is where the command line becomes the three values the modules below it take
(`kit.bisect.specs`): what runs, how to search, what to report. Nothing below it reads the
command line's `BisectOptions`; a SLURM node's task (`run_task`) reads it again here, as the login node did.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Mapping, Sequence


from repro.environment import jax_variables

from ..records import Source
from ..reproduce_line import shell_join
from ..config import Matrix
from .. import records
from ..history.source import History, open_history
from .ahead import resolve_ahead
from .commit_search import CommitPhase, narrow_to_commits
from ..errors import KitError, StorageError, UsageError
from ..install import open_index, PackageIndex
from ..log_events import Log
from ..run.facts import hardware_facts
from ..slurm.jobs import require_controller, require_sbatch
from .candidates import Candidate, list_candidates, release_versions
from .bounds import GALLOP, Bounds
from .options import make_parser, parse_options
from .bounds import recorded_verdicts
from .specs import HowToSearch, Specs, bisect_name
from ..user_paths import report_path
from .observation import Observation
from .outcomes import describe, recorded_outcomes
from .probe import (
    ClusterProbes, GivenProbe, HandedRun, MetricJudge, MetricSamples, ProbeCache, Prober, ReleaseSubject, given_by_release,
    read_task, release_prober,
)
from .report import (
    BisectFinding, bisected, candidate_table, publish_report, release_notes, reports_dir, scan_tip, shown_paths,
)
from .run_spec import RunSpec, run_spec
from . import gallop
from . import per_op
from .console import Console
from .rounds import ProbeMany, Rounds, side_by_side
from .search import BisectResult, ProbeOutcome, Transition, bisect, ksect, probe_round, scan_all, verify_bounds


def main(matrix: Matrix, argv: Sequence[str], log: Log, handed: Sequence[HandedRun] = ()) -> int:
    """``nox -s bisect -- ARGS``: returns 0 when the change was located (exactly or to a short list).

    ``handed``: runs made before it (``triage --run``'s, kit/bisect/probe/given.py), each taken for its release's
    probe where it answers it."""
    if "-h" in argv or "--help" in argv:
        print(make_parser().format_help())
        return 0
    started = time.monotonic()
    specs = parse_options(matrix, argv).specs  # what runs, how to search, what to report: each handed where it is read
    runs, search, report = specs.runs, specs.search, specs.report
    if per_op.wanted(specs):  # --explain without --op: every op that changed, each bisected on its own
        return per_op.bisect_each_op(matrix, specs, argv, log, main)
    log = Console(log, report.verbose)  # quiet unless -v: one line a probe, the phases, the summary
    if search.slurm:  # before anything is listed or built: a missing cluster is said in a second
        require_sbatch()
        require_controller()
    history = open_commit_history(matrix, search, log) if search.commits else None  # exit 4 before any probe
    index = open_index(matrix)
    given = given_by_release(handed, matrix.path.parent)
    bounds, candidates, prober, galloped = _bounds_and_prober(matrix, specs, index, log, given)
    name = prober.name
    # On SLURM a probe's identity holds its node's hardware, known only there: each task looks itself up in the
    # probe cache. (A metric judge remembers nothing: it judges against this run's bounds.)
    in_range = {c.version for c in candidates}  # a gallop's prober knows releases beyond the bounds too
    known = {} if search.slurm else {**galloped, **prober.known_outcomes()}
    known = {v: o for v, o in known.items() if v in in_range}
    print(candidate_table(candidates, search, set(known)), flush=True)
    rounds = Rounds(prober, _parallel(prober, search, report.argv, log))
    known = {**{v: o for v, o in prober.ruled_out().items() if v in in_range}, **known}
    evidence = recorded_outcomes(recorded_verdicts(matrix, runs)) if runs.check else {}  # for the tip
    ahead = resolve_ahead(matrix, prober.subject.spec, candidates, known, index)
    try:
        finding = search_between(specs, bounds, name, candidates, prober, known, rounds, evidence)
    except UsageError as stop:  # the bounds do not hold: the probes that showed it are still worth a report
        finding = BisectFinding(name, specs, bounds, candidates, prober.outcomes(), dict(prober.observations),
                          list(prober.ran_now), stopped=f"{stop} ({stop.tip})" if stop.tip else str(stop),
                          rounds=rounds.rounds)
        finding.seconds = time.monotonic() - started
        try:
            publish_report(reports_dir(matrix, report), finding, [], bisected(matrix, runs), shown_paths(matrix, specs))
        except StorageError as unsaved:
            log(unsaved.render())  # said, then the bounds' own sentence: why the search stopped comes last
        raise
    finally:
        ahead.close(wait=sys.exc_info()[0] is None)  # releases settled: the rest is not needed (Ctrl-C: no wait)
    if history is not None and finding.result is not None:
        try:
            finding.commits = narrow_to_commits(CommitPhase(matrix, finding, prober, history, log))
        except KitError:  # a full disk, a clone that cannot be read: the releases' answer still stands, said first
            _publish(matrix, finding, index, history, started)
            raise
    _publish(matrix, finding, index, history, started)
    return 0


def _bounds_and_prober(matrix: Matrix, specs: Specs, index: PackageIndex, log: Log,
                       given: Mapping[str, GivenProbe]) -> tuple[Bounds, list[Candidate], Prober[ReleaseSubject],
                                                                 dict[str, ProbeOutcome]]:
    """(the bounds, the candidates between them, the prober, what a gallop probed): from the command line, a
    gallop from one bound alone, or the records."""
    runs, search = specs.runs, specs.search
    cache = ProbeCache(matrix.layout.probe_cache, read=not search.fresh, log=log)
    spec = run_spec(matrix, runs)  # what every probe runs: made once, here
    if gallop.one_sided(search):
        good, bad, how, candidates, prober, galloped = gallop.find_bounds(
            matrix, search, runs.script is not None, spec.install, index,
            lambda wide: release_prober(matrix, specs, spec, wide, cache, "", index, log, given=given), log)
        prober.name = bisect_name(specs, good, bad)
        return Bounds.of_releases(good, bad, GALLOP, how), candidates, prober, galloped
    bounds = Bounds.given(search) if search.good is not None else Bounds.from_records(matrix, runs)
    log(bounds.how)
    versions = release_versions(index, bounds.good, bounds.bad)
    log(f"listing {len(versions)} releases from the index's metadata (nothing is resolved or downloaded)")
    candidates = list_candidates(matrix, versions, spec.install, index)
    name = bisect_name(specs, bounds.good, bounds.bad)
    # A metric's samples are kept so that Ctrl-C and a rerun do not measure everything again.
    judge = MetricJudge(search, runs.script is not None, name, log,
                        metric_samples(matrix, search, spec, bounds, candidates, name, log),
                        spec.pins) if search.metric else None
    return bounds, candidates, release_prober(matrix, specs, spec, candidates, cache, name, index, log, judge,
                                              given), {}


def _publish(matrix: Matrix, finding: BisectFinding, index: PackageIndex, history: History | None, started: float) -> None:
    """The report, with the release notes: printed first; a StorageError after it."""
    finding.seconds = time.monotonic() - started
    notes = release_notes(matrix, finding, index, history)
    publish_report(reports_dir(matrix, finding.specs.report), finding, notes, bisected(matrix, finding.specs.runs),
                   shown_paths(matrix, finding.specs))


def open_commit_history(matrix: Matrix, search: HowToSearch, log: Log) -> History:
    """The clone --commits reads: --jax-repo, else matrix.toml's jax_repo, else the kit's own (cloned now if need be)."""
    given, given_by, shown = search.jax_repo, "--jax-repo", search.jax_repo_shown
    if given is None and matrix.jax_repo is not None:
        given, given_by = matrix.jax_repo, "matrix.toml's [install] jax_repo"
        shown = report_path(matrix.jax_repo, matrix.path.parent)
    cache = matrix.layout.jax_history
    # Reports name the clone as the user did, or relative to the project: no machine's absolute path in them.
    history = open_history(given, given_by, cache, log, shown=shown or report_path(cache, matrix.path.parent))
    log(f"JAX's history: {history.path} ({history.origin})")
    return history


def _parallel(prober: Prober[ReleaseSubject], search: HowToSearch, argv: Sequence[str], log: Log) -> ProbeMany | None:
    """How a round of several probes runs: SLURM jobs (each task reads ``argv`` again), threads here, or (None) one
    after another."""
    if search.slurm:
        return ClusterProbes(prober, search.slurm, argv, log).many
    if search.jobs > 1:
        return side_by_side(prober, search.jobs, log)
    return None


def metric_samples(matrix: Matrix, search: HowToSearch, spec: RunSpec, bounds: Bounds,
                   candidates: Sequence[Candidate], name: str, log: Log) -> MetricSamples:
    """Where this metric bisect keeps its samples (reports/bisect/metric/), and what an earlier run left there."""
    # What else the samples depend on, as a probe's identity holds it: the hardware, the JAX/XLA variables, the pins.
    good, bad = bounds.good, bounds.bad
    identity = {"subject": spec.subject, "metric": search.metric, "good": good, "bad": bad, "backend": spec.backend,
                "hardware": hardware_facts(spec.backend), "variables": jax_variables(), "pins": list(spec.pins)}
    listed = {c.version: c for c in candidates}
    ends = {v: (listed[v].python, listed[v].jaxlib) for v in (good, bad)}
    return MetricSamples(matrix.layout.metric_samples, identity, records.machine_id(), ends,
                         name, read=not search.fresh, log=log)


def search_between(specs: Specs, bounds: Bounds, name: str, candidates: list[Candidate],
                   prober: Prober[ReleaseSubject], known: dict[str, ProbeOutcome], rounds: Rounds,
                   evidence: Mapping[str, ProbeOutcome] | None = None) -> BisectFinding:
    """Verify the bounds, then bisect (or scan every candidate with --all), starting from what is known.

    With ``--jobs K`` or ``--slurm`` the probes go in rounds of up to K at
    once: both bounds in the first round, then K+1-section (`search.ksect`).
    """
    cache = dict(known)
    versions = [c.version for c in candidates]
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = []
    search = specs.search
    prober.start(bounds, cache)  # a metric's baseline, which each probe is judged against (kit/bisect/probe/metric.py)
    if search.scan:
        if search.together:
            for start in range(0, len(versions), search.jobs):
                probe_round(versions[start:start + search.jobs], rounds.many, cache, [])
        transitions = scan_all(versions, rounds.one, cache)
    else:
        if not search.metric:
            if search.together:
                probe_round([versions[0], versions[-1]], rounds.many, cache, [])
            verify(bounds, versions, rounds.one, prober, cache, specs, evidence or {})
        old_outcome = bounds.old_outcome
        result = (ksect(versions, rounds.many, search.jobs, old_outcome=old_outcome, cache=cache) if search.together
                  else bisect(versions, rounds.one, old_outcome=old_outcome, cache=cache))
    finding = BisectFinding(name, specs, bounds, candidates, dict(cache), dict(prober.observations),
                      list(prober.ran_now), result, transitions, rounds=rounds.rounds)
    finding.metric = prober.summary()
    return finding


def _provenance(seen: Observation | None) -> str:
    """Where a bound's outcome came from, so an answer from an earlier probe is never taken for a new one."""
    if seen is None:
        return ""
    came = seen.came_from
    if came.source == Source.CACHE:
        return f" (answered by an earlier probe, {came.by or 'unnamed'} {came.ran_at}, under the same {came.matched})"
    if came.source == Source.RECORD:
        return f" (answered by a current record, {came.ran_at}, under the same {came.matched})"
    if came.source == Source.TRIAGE:
        return f" (answered by {came.taken_from})"
    return f" (probed now; {came.not_reused})" if came.not_reused else ""


def verify(bounds: Bounds, versions: list[str], probe: Callable[[str], ProbeOutcome], prober: Prober[ReleaseSubject],
           cache: dict[str, ProbeOutcome], specs: Specs, evidence: Mapping[str, ProbeOutcome] | None = None) -> None:
    """Good must be good and bad bad before halving trusts them; else one clear UsageError.

    The search's :func:`verify_bounds` judges; this says it with the user's flags. ``evidence``: outcomes the
    records show; with the probes', an outcome seen changing twice inside the bounds makes the tip ``--all``.
    """
    problem = verify_bounds(versions, probe, cache, old_outcome=bounds.old_outcome)
    if problem is None:
        return
    if problem.end is None or problem.got is None or problem.wanted is None:
        raise UsageError(problem.message, "widen the range between --good and --bad")
    version = problem.end
    flag, other = bounds.flag(version), bounds.other(version)
    wanted = ProbeOutcome.GOOD if flag == "--good" else ProbeOutcome.BAD
    seen = prober.observations.get(version)
    if seen is not None and seen.found.missing_import:
        raise missing_import_stop(seen.found.missing_import, flag, version, specs)
    message = f"{flag} {version} is {describe(problem.got, specs.runs.script is not None)}, not {wanted.value}: " \
              f"{seen.found.reason if seen else ''}{_provenance(seen)}"
    if problem.kind == "untestable":
        raise UsageError(message, f"choose a {flag} release that can be tested here")
    twice = scan_tip({**(evidence or {}), **cache}, bounds.good, bounds.bad, specs.report.quoted_argv)
    if twice is not None:  # a bug that came and went: moving a bound would hide it
        raise UsageError(message, twice)
    if problem.kind == "reversed":
        raise UsageError(message, "swap --good and --bad")
    away = "an older" if version == bounds.older else "a newer"
    raise UsageError(message, f"move {flag} away from {other}: try {away} release")


def missing_import_stop(package: str, flag: str, version: str, specs: Specs) -> UsageError:
    """A bound whose script could not import a package: the fix is the package, not other bounds."""
    check = specs.runs.check
    if check:
        return UsageError(f"the check's script could not import {package} on jax {version} ({flag}); add it to "
                          f"requires in [checks.{check}] (requires = [\"{package}\"])",
                          "it is then installed for each release's era, like numpy and scipy")
    return UsageError(f"the script could not import {package} on jax {version} ({flag}); pass --requires {package} "
                      f"to install it for each release's era",
                      f"nox -s bisect -- {shell_join([*specs.report.quoted_argv, '--requires', package])}")


def run_task(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """``python -m kit probe JOB_DIR TASK``: one probe of a ``--slurm`` round, on a node; its observation into
    ``JOB_DIR/TASK.json`` (kit/bisect/probe/cluster.py). The node reads the bisect's command line again, as here."""
    task = read_task(argv)
    if task is None:
        print("usage: probe JOB_DIR TASK: one probe of a bisect --slurm round, run on a node by the job "
              "script the bisect writes (not by hand)")
        return 0
    specs = parse_options(matrix, task.argv).specs
    cache = ProbeCache(matrix.layout.probe_cache, read=not specs.search.fresh, log=log)
    prober = release_prober(matrix, specs, run_spec(matrix, specs.runs), [task.candidate], cache, task.name,
                            open_index(matrix), log)
    version = task.candidate.version
    observation = prober.observe(version)
    task.keep(observation)
    prober.record(version, observation)  # said on the node's output too
    return 0
