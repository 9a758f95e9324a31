"""``nox -s bisect``: list the candidates, verify the ends, search, report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from packaging.version import Version

from . import changelog
from ..config import Matrix
from .. import records
from ..history.commit_range import tag
from ..history.commits import read_text
from ..history.source import History, open_history
from .changelog import CHANGELOG_NAME
from .commit_search import CommitPhase, narrow_to_commits
from ..errors import UsageError
from ..install.release import open_index
from . import report
from .candidates import Candidate, list_candidates, release_versions
from .finding import Finding
from .options import Log, Options, bisect_name, bounds, make_parser, parse_options
from .outcomes import describe
from .probe_cache import ProbeCache, subject_key
from .metric import MetricProber, metric_summary
from .metric_samples import MetricSamples
from .probes import Prober
from .search import BisectResult, Outcome, Transition, bisect, scan_all, verify_bounds


def main(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """``nox -s bisect -- ARGS``: returns 0 when the change was located (exactly or to a short list)."""
    if "-h" in argv or "--help" in argv:
        print(make_parser().format_help())
        return 0
    started = time.monotonic()
    options = parse_options(matrix, argv)
    history = open_commit_history(matrix, options, log) if options.commits else None  # exit 4 before any probe
    index = open_index(matrix)
    good, bad, how = bounds(matrix, options)
    log(how)
    versions = release_versions(index, good, bad)
    log(f"listing {len(versions)} releases from the index's metadata (nothing is resolved or downloaded)")
    candidates = list_candidates(matrix, versions, options.backend, index, options.find_links)
    name = bisect_name(options, good, bad)
    cache = ProbeCache(probe_cache_dir(matrix), read=not options.fresh, log=log)
    subject = subject_key(matrix, options)
    prober = (MetricProber if options.metric else Prober)(matrix, options, candidates, cache, subject, name, index, log)
    if isinstance(prober, MetricProber):  # kept so that Ctrl-C and a rerun do not measure everything again
        prober.samples = metric_samples(matrix, options, subject, good, bad, prober, name, log)
    known = {} if options.metric else prober.known_outcomes()  # a metric is judged against this run's bounds
    print(report.candidate_table(candidates, options, set(known)), flush=True)
    finding = search(options, good, bad, how, name, candidates, prober, known)
    if history is not None and finding.result is not None:
        finding.commits = narrow_to_commits(CommitPhase(matrix, finding, prober, history, log))
    finding.seconds = time.monotonic() - started
    versions = report.release_versions(finding)
    notes = changelog.release_notes(versions, index.cache_dir, options.changelog,
                                    text=clone_changelog(history, versions) if options.changelog is None else None)
    print(report.write_report(matrix.results_dir.parent, finding, notes))
    return 0


def open_commit_history(matrix: Matrix, options: Options, log: Log) -> History:
    """The clone --commits reads: --jax-repo, else matrix.toml's jax_repo, else the kit's own (cloned now if need be)."""
    given, given_by = options.jax_repo, "--jax-repo"
    if given is None and matrix.jax_repo is not None:
        given, given_by = matrix.jax_repo, "matrix.toml's [install] jax_repo"
    history = open_history(given, given_by, matrix.envs_dir.parent / "jax-history" / "jax.git", log)
    log(f"JAX's history: {history.path} ({history.origin})")
    return history


def clone_changelog(history: History | None, versions: list[str]) -> str | None:
    """CHANGELOG.md as it stood at the newest release asked for, from the clone (None without one)."""
    if history is None or not versions:
        return None
    return read_text(history, tag(max(versions, key=Version)), CHANGELOG_NAME)


def probe_cache_dir(matrix: Matrix) -> Path:
    """Where every bisect's probes are kept (next to the reports; not committed)."""
    return matrix.results_dir.parent / "bisect" / "probes"


def metric_samples(matrix: Matrix, options: Options, subject: Mapping[str, Any], good: str, bad: str,
                   prober: Prober, name: str, log: Log) -> MetricSamples:
    """Where this metric bisect keeps its samples (reports/bisect/metric/), and what an earlier run left there."""
    identity = {"subject": subject, "metric": options.metric, "good": good, "bad": bad, "backend": options.backend}
    bounds = {v: (prober.candidates[v].python, prober.candidates[v].jaxlib) for v in (good, bad)}
    return MetricSamples(matrix.results_dir.parent / "bisect" / "metric", identity, records.machine_id(), bounds,
                         name, read=not options.fresh, log=log)


def search(options: Options, good: str, bad: str, how: str, name: str, candidates: list[Candidate],
           prober: Prober, known: dict[str, Outcome]) -> Finding:
    """Verify the bounds, then bisect (or scan every candidate with --all), starting from what is known."""
    cache = dict(known)
    versions = [c.version for c in candidates]
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = []
    if isinstance(prober, MetricProber):
        prober.set_baseline(good, bad, cache)  # a metric probe is judged against it (kit/bisect/metric_samples.py)
    if options.scan:
        transitions = scan_all(versions, prober, cache)
    else:
        if not options.metric:
            verify(good, bad, versions, prober, cache, options)
        old_outcome = Outcome.GOOD if Version(good) < Version(bad) else Outcome.BAD
        result = bisect(versions, prober, old_outcome=old_outcome, cache=cache)
    finding = Finding(name, options, good, bad, how, candidates, dict(cache), dict(prober.observations),
                      list(prober.ran_now), result, transitions)
    if isinstance(prober, MetricProber):
        finding.metric = metric_summary(prober, finding.observations)
    return finding


def verify(good: str, bad: str, versions: list[str], prober: Prober, cache: dict[str, Outcome],
           options: Options) -> None:
    """Good must be good and bad bad before halving trusts them; else one clear UsageError.

    The search's :func:`verify_bounds` judges; this says it with the user's flags.
    """
    old_outcome = Outcome.GOOD if Version(good) < Version(bad) else Outcome.BAD
    problem = verify_bounds(versions, prober, cache, old_outcome=old_outcome)
    if problem is None:
        return
    if problem.end is None or problem.got is None or problem.wanted is None:
        raise UsageError(problem.message, "widen the range between --good and --bad")
    version = problem.end
    flag, other = ("--good", bad) if version == good else ("--bad", good)
    wanted = Outcome.GOOD if flag == "--good" else Outcome.BAD
    seen = prober.observations.get(version)
    message = f"{flag} {version} is {describe(problem.got, bool(options.script))}, not {wanted.value}: " \
              f"{seen.reason if seen else ''}"
    if problem.kind == "reversed":
        raise UsageError(message, "swap --good and --bad")
    if problem.kind == "untestable":
        raise UsageError(message, f"choose a {flag} release that can be tested here")
    away = "an older" if Version(version) < Version(other) else "a newer"
    raise UsageError(message, f"move {flag} away from {other}: try {away} release")
