"""``nox -s bisect``: list the candidates, verify the ends, search, report."""

from __future__ import annotations

import time
from typing import Sequence

from packaging.version import Version

from ..config import Matrix
from ..errors import UsageError
from ..index import PackageIndex
from . import report
from .candidates import Candidate, release_versions, resolve_candidates
from .options import Options, bounds, make_parser, parse_options
from .options import Log
from .outcomes import describe
from .metric import MetricProber, metric_summary
from .probes import Prober
from .search import BisectResult, Outcome, Transition, bisect, scan_all, verify_bounds
from .store import ProbeStore, bisect_name, probes_key


def main(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """``nox -s bisect -- ARGS``: returns 0 when the change was located (exactly or to a short list)."""
    if "-h" in argv or "--help" in argv:
        print(make_parser().format_help())
        return 0
    started = time.monotonic()
    options = parse_options(matrix, argv)
    index = PackageIndex(matrix.install.index_url)
    good, bad, how = bounds(matrix, options)
    log(how)
    versions = release_versions(index, good, bad)
    name = bisect_name(options, good, bad)
    store = ProbeStore.open(matrix.results_dir.parent / "bisect" / f"{name}.probes.json",
                            probes_key(matrix, options), options.fresh, log)
    candidates = _candidates(matrix, versions, options, index, store, log)
    print(report.candidate_table(candidates, options, store))
    finding = search(matrix, options, good, bad, how, name, candidates, store, index, log)
    finding.seconds = time.monotonic() - started
    text = report.render_markdown(finding, report.release_notes(finding, index))
    report.write_report(matrix.results_dir.parent, finding, text)
    print(text)
    return 0


def _candidates(matrix: Matrix, versions: list[str], options: Options, index: PackageIndex, store: ProbeStore,
                log: Log) -> list[Candidate]:
    """Resolved candidates, from the probes file when it lists exactly these releases."""
    if [c.version for c in store.candidates] == versions:
        return store.candidates
    log(f"resolving {len(versions)} releases (metadata only, nothing is downloaded)")
    store.candidates = resolve_candidates(matrix, versions, options.backend, index, options.find_links)
    store.save()
    return store.candidates


def search(matrix: Matrix, options: Options, good: str, bad: str, how: str, name: str,
           candidates: list[Candidate], store: ProbeStore, index: PackageIndex, log: Log) -> report.Finding:
    """Verify the bounds, then bisect (or scan every candidate with --all)."""
    prober = (MetricProber if options.metric else Prober)(matrix, options, candidates, store, index, log)
    cache = store.outcomes(options.crash)
    if isinstance(prober, MetricProber):
        # A metric's baseline is measured afresh each run: a saved probe is judged against saved bounds.
        store.probes.clear()
        cache.clear()
        prober.set_baseline(good, bad, cache)
    resumed = list(cache) if not options.metric else []
    versions = [c.version for c in candidates]
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = []
    if options.scan:
        transitions = scan_all(versions, prober, cache)
    else:
        if not options.metric:
            verify(good, bad, versions, prober, cache, options, store)
        old_outcome = Outcome.GOOD if Version(good) < Version(bad) else Outcome.BAD
        result = bisect(versions, prober, old_outcome=old_outcome, cache=cache)
    finding = report.Finding(name, options, good, bad, how, candidates, dict(cache), dict(store.probes),
                             [v for v in versions if v in cache and v not in resumed], resumed, result, transitions)
    if isinstance(prober, MetricProber):
        finding.metric = metric_summary(prober, finding.observations)
    return finding


def verify(good: str, bad: str, versions: list[str], prober: Prober, cache: dict[str, Outcome],
           options: Options, store: ProbeStore) -> None:
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
    why = store.probes.get(version, {}).get("reason", "")
    message = f"{flag} {version} is {describe(problem.got, bool(options.script))}, not {wanted.value}: {why}"
    if problem.kind == "reversed":
        raise UsageError(message, "swap --good and --bad")
    if problem.kind == "untestable":
        raise UsageError(message, f"choose a {flag} release that can be tested here")
    away = "an older" if Version(version) < Version(other) else "a newer"
    raise UsageError(message, f"move {flag} away from {other}: try {away} release")
