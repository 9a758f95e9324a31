"""``nox -s bisect``: list the candidates, verify the ends, search, report."""

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
from .options import Options, bisect_name, make_parser, parse_options, recorded_verdicts
from ..user_paths import report_path
from .observation import Observation
from .outcomes import classify, describe
from .probe import (
    ClusterProbes, GivenProbe, HandedRun, MetricJudge, MetricSamples, ProbeCache, Prober, ReleaseSubject, given_by_release,
    release_prober,
)
from .report import (
    Finding, bisected, candidate_table, publish_report, recorded_outcomes, release_notes, reports_dir, scan_tip, shown_paths,
)
from .run_spec import RunSpec, run_spec
from . import gallop
from . import per_op
from .console import Console
from .rounds import ProbeMany, Rounds, side_by_side
from .search import BisectResult, Outcome, Transition, bisect, ksect, probe_round, scan_all, verify_bounds


def main(matrix: Matrix, argv: Sequence[str], log: Log, handed: Sequence[HandedRun] = ()) -> int:
    """``nox -s bisect -- ARGS``: returns 0 when the change was located (exactly or to a short list).

    ``handed``: runs made before it (``triage --run``'s, kit/bisect/probe/given.py), each taken for its release's
    probe where it answers it."""
    if "-h" in argv or "--help" in argv:
        print(make_parser().format_help())
        return 0
    started = time.monotonic()
    options = parse_options(matrix, argv)
    if per_op.wanted(options):  # --explain without --op: every op that changed, each bisected on its own
        return per_op.bisect_each_op(matrix, options, argv, log, main)
    log = Console(log, options.verbose)  # quiet unless -v: one line a probe, the phases, the summary
    if options.slurm:  # before anything is listed or built: a missing cluster is said in a second
        require_sbatch()
        require_controller()
    history = open_commit_history(matrix, options, log) if options.commits else None  # exit 4 before any probe
    index = open_index(matrix)
    given = given_by_release(handed, matrix.path.parent)
    bounds, candidates, prober, galloped = _bounds_and_prober(matrix, options, index, log, given)
    name = prober.name
    # On SLURM a probe's identity holds its node's hardware, known only there: each task looks itself up in the
    # probe cache. (A metric judge remembers nothing: it judges against this run's bounds.)
    in_range = {c.version for c in candidates}  # a gallop's prober knows releases beyond the bounds too
    known = {} if options.slurm else {**galloped, **prober.known_outcomes()}
    known = {v: o for v, o in known.items() if v in in_range}
    print(candidate_table(candidates, options, set(known)), flush=True)
    rounds = Rounds(prober, _parallel(prober, options, log))
    known = {**{v: o for v, o in prober.ruled_out().items() if v in in_range}, **known}
    evidence = recorded_outcomes(recorded_verdicts(matrix, options)) if options.check else {}  # for the tip
    ahead = resolve_ahead(matrix, prober.subject.spec, candidates, known, index)
    try:
        finding = search(options, bounds, name, candidates, prober, known, rounds, evidence)
    except UsageError as stop:  # the bounds do not hold: the probes that showed it are still worth a report
        finding = Finding(name, options, bounds, candidates, {}, dict(prober.observations),
                          list(prober.ran_now), stopped=f"{stop} ({stop.tip})" if stop.tip else str(stop),
                          rounds=rounds.rounds)
        finding.outcomes = {v: classify(o, options.crash) for v, o in prober.observations.items()}
        finding.seconds = time.monotonic() - started
        try:
            publish_report(reports_dir(matrix, options), finding, [],
                                  bisected(matrix, options), shown_paths(matrix, options))
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


def _bounds_and_prober(matrix: Matrix, options: Options, index: PackageIndex, log: Log,
                       given: Mapping[str, GivenProbe]) -> tuple[Bounds, list[Candidate], Prober[ReleaseSubject],
                                                                 dict[str, Outcome]]:
    """(the bounds, the candidates between them, the prober, what a gallop probed): from the command line, a
    gallop from one bound alone, or the records."""
    cache = ProbeCache(matrix.layout.probe_cache, read=not options.fresh, log=log)
    spec = run_spec(matrix, options)  # what every probe runs: made once, here
    if gallop.one_sided(options):
        good, bad, how, candidates, prober, galloped = gallop.find_bounds(
            matrix, options, spec.install, index,
            lambda wide: release_prober(matrix, options, spec, wide, cache, "", index, log, given=given), log)
        prober.name = bisect_name(options, good, bad)
        return Bounds.of_releases(good, bad, GALLOP, how), candidates, prober, galloped
    bounds = Bounds.given(options) if options.good is not None else Bounds.from_records(matrix, options)
    log(bounds.how)
    versions = release_versions(index, bounds.good, bounds.bad)
    log(f"listing {len(versions)} releases from the index's metadata (nothing is resolved or downloaded)")
    candidates = list_candidates(matrix, versions, spec.install, index)
    name = bisect_name(options, bounds.good, bounds.bad)
    # A metric's samples are kept so that Ctrl-C and a rerun do not measure everything again.
    judge = MetricJudge(options, name, log, metric_samples(matrix, options, spec, bounds, candidates, name, log)) \
        if options.metric else None
    return bounds, candidates, release_prober(matrix, options, spec, candidates, cache, name, index, log, judge,
                                              given), {}


def _publish(matrix: Matrix, finding: Finding, index: PackageIndex, history: History | None, started: float) -> None:
    """The report, with the release notes: printed first; a StorageError after it."""
    finding.seconds = time.monotonic() - started
    notes = release_notes(matrix, finding, index, history)
    publish_report(reports_dir(matrix, finding.options), finding, notes,
                          bisected(matrix, finding.options),
                          shown_paths(matrix, finding.options))


def open_commit_history(matrix: Matrix, options: Options, log: Log) -> History:
    """The clone --commits reads: --jax-repo, else matrix.toml's jax_repo, else the kit's own (cloned now if need be)."""
    given, given_by, shown = options.jax_repo, "--jax-repo", options.jax_repo_shown
    if given is None and matrix.jax_repo is not None:
        given, given_by = matrix.jax_repo, "matrix.toml's [install] jax_repo"
        shown = report_path(matrix.jax_repo, matrix.path.parent)
    cache = matrix.layout.jax_history
    # Reports name the clone as the user did, or relative to the project: no machine's absolute path in them.
    history = open_history(given, given_by, cache, log, shown=shown or report_path(cache, matrix.path.parent))
    log(f"JAX's history: {history.path} ({history.origin})")
    return history


def _parallel(prober: Prober[ReleaseSubject], options: Options, log: Log) -> ProbeMany | None:
    """How a round of several probes runs: SLURM jobs, threads here, or (None) one after another."""
    if options.slurm:
        return ClusterProbes(prober, options.slurm, log).many
    if options.jobs > 1:
        return side_by_side(prober, options.jobs, log)
    return None


def metric_samples(matrix: Matrix, options: Options, spec: RunSpec, bounds: Bounds,
                   candidates: Sequence[Candidate], name: str, log: Log) -> MetricSamples:
    """Where this metric bisect keeps its samples (reports/bisect/metric/), and what an earlier run left there."""
    # What else the samples depend on, as a probe's identity holds it: the hardware, the JAX/XLA variables, the pins.
    good, bad = bounds.good, bounds.bad
    identity = {"subject": spec.subject, "metric": options.metric, "good": good, "bad": bad, "backend": spec.backend,
                "hardware": hardware_facts(spec.backend), "variables": jax_variables(), "pins": list(spec.pins)}
    listed = {c.version: c for c in candidates}
    ends = {v: (listed[v].python, listed[v].jaxlib) for v in (good, bad)}
    return MetricSamples(matrix.layout.metric_samples, identity, records.machine_id(), ends,
                         name, read=not options.fresh, log=log)


def search(options: Options, bounds: Bounds, name: str, candidates: list[Candidate],
           prober: Prober[ReleaseSubject], known: dict[str, Outcome], rounds: Rounds,
           evidence: Mapping[str, Outcome] | None = None) -> Finding:
    """Verify the bounds, then bisect (or scan every candidate with --all), starting from what is known.

    With ``--jobs K`` or ``--slurm`` the probes go in rounds of up to K at
    once: both bounds in the first round, then K+1-section (`search.ksect`).
    """
    cache = dict(known)
    versions = [c.version for c in candidates]
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = []
    together = options.jobs > 1 or options.slurm is not None
    prober.start(bounds, cache)  # a metric's baseline, which each probe is judged against (kit/bisect/probe/metric.py)
    if options.scan:
        if together:
            for start in range(0, len(versions), options.jobs):
                probe_round(versions[start:start + options.jobs], rounds.many, cache, [])
        transitions = scan_all(versions, rounds.one, cache)
    else:
        if not options.metric:
            if together:
                probe_round([versions[0], versions[-1]], rounds.many, cache, [])
            verify(bounds, versions, rounds.one, prober, cache, options, evidence or {})
        old_outcome = bounds.old_outcome
        result = (ksect(versions, rounds.many, options.jobs, old_outcome=old_outcome, cache=cache) if together
                  else bisect(versions, rounds.one, old_outcome=old_outcome, cache=cache))
    finding = Finding(name, options, bounds, candidates, dict(cache), dict(prober.observations),
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
    if came.source == "triage":
        return f" (answered by {came.taken_from})"
    return f" (probed now; {came.not_reused})" if came.not_reused else ""


def verify(bounds: Bounds, versions: list[str], probe: Callable[[str], Outcome], prober: Prober[ReleaseSubject],
           cache: dict[str, Outcome], options: Options, evidence: Mapping[str, Outcome] | None = None) -> None:
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
    wanted = Outcome.GOOD if flag == "--good" else Outcome.BAD
    seen = prober.observations.get(version)
    if seen is not None and seen.found.missing_import:
        raise missing_import_stop(seen.found.missing_import, flag, version, options)
    message = f"{flag} {version} is {describe(problem.got, bool(options.script))}, not {wanted.value}: " \
              f"{seen.found.reason if seen else ''}{_provenance(seen)}"
    if problem.kind == "untestable":
        raise UsageError(message, f"choose a {flag} release that can be tested here")
    twice = scan_tip({**(evidence or {}), **cache}, bounds.good, bounds.bad, options)
    if twice is not None:  # a bug that came and went: moving a bound would hide it
        raise UsageError(message, twice)
    if problem.kind == "reversed":
        raise UsageError(message, "swap --good and --bad")
    away = "an older" if version == bounds.older else "a newer"
    raise UsageError(message, f"move {flag} away from {other}: try {away} release")


def missing_import_stop(package: str, flag: str, version: str, options: Options) -> UsageError:
    """A bound whose script could not import a package: the fix is the package, not other bounds."""
    if options.check:
        return UsageError(f"the check's script could not import {package} on jax {version} ({flag}); add it to "
                          f"requires in [checks.{options.check}] (requires = [\"{package}\"])",
                          "it is then installed for each release's era, like numpy and scipy")
    return UsageError(f"the script could not import {package} on jax {version} ({flag}); pass --requires {package} "
                      f"to install it for each release's era",
                      f"nox -s bisect -- {shell_join([*options.quoted_argv, '--requires', package])}")
