"""``nox -s bisect``: find the first JAX release where a behaviour changes.

This module drives the pure search in :mod:`kit.bisection`: it lists the
candidate releases, turns one release into one probe outcome (reusing the
per-release environments and the records of the scaling/correctness
sessions), keeps finished probes on disk so an interrupted bisect resumes,
and writes a report ready to paste into an issue.

Words, from the user's side: *good* means the bug does not show (a check's
``unaffected``, a script's exit 0), *bad* means it does. ``--good`` and
``--bad`` may come in either order, so one search finds regressions (good is
older) and fixes (bad is older).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from packaging.version import InvalidVersion, Version

from . import __version__, changelog, records, runner
from .bisection import BisectResult, Outcome, Transition, bisect, expected_probes, non_monotonic, scan_all
from .config import Matrix
from .envs import available_pythons
from .errors import UsageError
from .index import PackageIndex, versions_between
from .install import choose_python, plan_install

Log = Callable[[str], None]

PROBES_SCHEMA = 1
CRASH_MODES = {"skip": Outcome.SKIP, "bad": Outcome.BAD, "good": Outcome.GOOD}
DEFAULT_SCRIPT_TIMEOUT_S = 900

_HELP_EPILOG = """\
outcomes:
  A check is good when its verdict is unaffected and bad when it is affected.
  An inconclusive verdict is re-run once before it counts (still inconclusive:
  skip). A release that cannot be installed here is skipped and named.

  --script follows `git bisect run`: the script runs with the release's own
  python, inside that release's environment, and its exit code decides:
    0                      good
    125                    skip (cannot test this release)
    1-127 (except 125)     bad
    killed by a signal, exit code above 127, or over --timeout: crashed
  A crashed probe counts as --crash says: skip (default), bad or good, like
  cargo-bisect-rustc's --regress modes.

  Finished probes are kept in reports/bisect/<name>.probes.json and reused when
  the same bisect runs again; --fresh ignores them. The result goes to
  reports/bisect-<name>.md and .json.

examples:
  nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35
  nox -s bisect -- --script repro.py --good 0.4.34 --bad 0.4.36
  nox -s bisect -- --check scaling            # bounds from the recorded matrix
"""


# --------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class Options:
    check: str | None
    script: Path | None
    good: str | None
    bad: str | None
    backend: str = "cpu"
    preset: str | None = None
    crash: str = "skip"
    confirm: int = 0
    scan: bool = False
    timeout: int | None = None
    find_links: tuple[str, ...] = ()
    changelog: Path | None = None
    fresh: bool = False
    argv: tuple[str, ...] = ()

    @property
    def subject(self) -> str:
        """What is bisected, for file names and headings: the check or ``script-<stem>``."""
        return self.check or f"script-{self.script.stem if self.script else 'unknown'}"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one sentence, not a usage dump
        raise UsageError(message, "see `nox -s bisect -- --help`")


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="nox -s bisect --", add_help=False, epilog=_HELP_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Find the first JAX release where a check's verdict or a script's exit code changes.")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--check", help="a check from matrix.toml (scaling, correctness)")
    what.add_argument("--script", type=Path, help="a repro script run with each release's python (see below)")
    parser.add_argument("--good", metavar="VERSION", help="a release without the bug (older or newer than --bad)")
    parser.add_argument("--bad", metavar="VERSION", help="a release with the bug")
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--preset", default=None, help="a preset of the check in matrix.toml")
    parser.add_argument("--crash", default="skip", choices=tuple(CRASH_MODES),
                        help="how a crashed or timed-out probe counts (default: skip)")
    parser.add_argument("--confirm", type=int, default=0, metavar="N",
                        help="re-run each fresh probe N more times; a probe that flips is skipped and reported")
    parser.add_argument("--all", dest="scan", action="store_true",
                        help="probe every candidate and report every transition (short ranges)")
    parser.add_argument("--timeout", type=int, default=None, metavar="SECONDS",
                        help=f"per probe (checks: matrix.toml's timeout_s; scripts: {DEFAULT_SCRIPT_TIMEOUT_S})")
    parser.add_argument("--find-links", action="append", default=[], metavar="DIR_OR_URL",
                        help="extra wheels, e.g. a jaxlib the index no longer serves")
    parser.add_argument("--changelog", type=Path, default=None,
                        help="JAX's CHANGELOG.md, for the release notes in the report")
    parser.add_argument("--fresh", action="store_true", help="ignore the saved probes of an earlier run")
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser


def parse_options(matrix: Matrix, argv: Sequence[str]) -> Options:
    """Parse and validate; every mistake is a UsageError/ConfigError naming the fix."""
    args = make_parser().parse_args(list(argv))
    if not args.check and not args.script:
        raise UsageError("say what to bisect", "pass --check scaling, --check correctness or --script path/to/repro.py")
    if args.check:
        matrix.check(args.check)  # ConfigError naming the known checks
    if args.script and not args.script.is_file():
        raise UsageError(f"script {args.script} not found", "give the path of a Python file that exits 0 when good")
    if args.preset and not args.check:
        raise UsageError("--preset only applies to --check", "drop --preset, or bisect a check")
    if args.confirm < 0:
        raise UsageError("--confirm must be 0 or more", "e.g. --confirm 2")
    if (args.good is None) != (args.bad is None):
        raise UsageError("give both --good and --bad, or neither", "without them the bounds come from the records")
    for flag, version in (("--good", args.good), ("--bad", args.bad)):
        if version is not None:
            _parse_version(flag, version)
    if args.good is not None and Version(args.good) == Version(args.bad):
        raise UsageError(f"--good and --bad are both {args.good}", "give two different releases")
    return Options(
        check=args.check, script=args.script.resolve() if args.script else None, good=args.good, bad=args.bad,
        backend=args.backend, preset=args.preset, crash=args.crash, confirm=args.confirm, scan=args.scan,
        timeout=args.timeout, find_links=tuple(args.find_links), changelog=args.changelog, fresh=args.fresh,
        argv=tuple(argv),
    )


def _parse_version(flag: str, text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UsageError(f"{flag} {text!r} is not a JAX version", "give a release number such as 0.4.35") from None


# --------------------------------------------------------------------------
# Outcomes: the one place raw results become good / bad / skip


def outcome(status: str, verdict: str | None, crash: str) -> Outcome:
    """Map one observation to the search's outcome.

    unaffected → GOOD, affected → BAD, inconclusive (after its re-run) or a
    script's 125 → SKIP, not installable → SKIP, crashed or timed out → as
    ``--crash`` says.
    """
    if status in ("crashed", "timed-out"):
        return CRASH_MODES[crash]
    if status != "ran":
        return Outcome.SKIP
    return {"unaffected": Outcome.GOOD, "affected": Outcome.BAD}.get(verdict or "", Outcome.SKIP)


def script_observation(code: int | None, timeout: int) -> tuple[str, str | None, str]:
    """(status, verdict, reason) for a script's exit code, as ``git bisect run`` reads it."""
    if code is None:
        return "timed-out", None, f"the script did not finish within {timeout} s"
    if code < 0 or code > 127:
        signal_no = -code if code < 0 else code - 128
        return "crashed", None, f"the script was killed by signal {signal_no}"
    if code == 0:
        return "ran", "unaffected", "the script exited 0 (good)"
    if code == 125:
        return "ran", "untestable", "the script exited 125 (cannot test this release: skip)"
    return "ran", "affected", f"the script exited {code} (bad)"


def _word(outcome_: Outcome, script: bool) -> str:
    if outcome_ is Outcome.SKIP:
        return "skip"
    if script:
        return outcome_.value
    return {Outcome.GOOD: "good (unaffected)", Outcome.BAD: "bad (affected)"}[outcome_]


# --------------------------------------------------------------------------
# Candidates


@dataclass(frozen=True)
class Candidate:
    """One release to probe, and what installs it (resolved, nothing downloaded)."""

    version: str
    requirements: tuple[str, ...]
    exclude_newer: str | None
    python: str | None
    jaxlib: str | None
    problem: str = ""

    @property
    def fingerprint_args(self) -> dict[str, Any]:
        return {"python": self.python, "requirements": self.requirements, "exclude_newer": self.exclude_newer}


def release_versions(index: PackageIndex, good: str, bad: str) -> list[str]:
    """Final releases from the index between the bounds, oldest first; both bounds must exist."""
    releases = index.jax_releases()
    for flag, version in (("--good", good), ("--bad", bad)):
        if Version(version) not in releases:
            near = [str(v) for v in releases if abs(_ordinal(v) - _ordinal(Version(version))) <= 2][:6]
            raise UsageError(f"{flag} {version} is not a jax release on {index.url}",
                             f"nearby releases: {', '.join(near) or 'none'}")
    return [str(v) for v in versions_between(releases, good, bad) if not v.is_devrelease]


def _ordinal(version: Version) -> int:
    """A rough distance measure, only for naming nearby releases in a tip."""
    parts = (list(version.release) + [0, 0, 0])[:3]
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


def resolve_candidate(matrix: Matrix, version: str, backend: str, index: PackageIndex,
                      find_links: tuple[str, ...]) -> Candidate:
    """Plan and resolve one release (metadata only) to name its jaxlib and python."""
    plan = plan_install(matrix, matrix.release(version), backend, index, find_links)
    resolution, attempts = choose_python(plan, available_pythons(plan.pythons))
    if resolution is None:
        problem = runner.unresolvable_reason(plan, attempts)
        return Candidate(version, plan.requirements, plan.exclude_newer, None, None, problem)
    return Candidate(version, plan.requirements, plan.exclude_newer, resolution.python,
                     resolution.pins.get("jaxlib"))


def resolve_candidates(matrix: Matrix, versions: Sequence[str], options: Options,
                       index: PackageIndex) -> list[Candidate]:
    # uv's resolves wait on the network, not the CPU: a few at once is faster.
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda v: resolve_candidate(matrix, v, options.backend, index, options.find_links),
                             versions))


# --------------------------------------------------------------------------
# Bounds from the recorded matrix


def bounds_from_records(matrix: Matrix, options: Options) -> tuple[str, str, str]:
    """(good, bad, how) from this machine's newest records of the check.

    Takes the newest release on each side and narrows the other end to the
    nearest release across the change, so the range is as short as the
    records allow.
    """
    if not options.check:
        raise UsageError("a script has no recorded matrix to take bounds from", "pass --good and --bad")
    verdicts = _recorded_verdicts(matrix, options)
    affected = sorted((v for v, verdict in verdicts.items() if verdict == "affected"), key=Version)
    unaffected = sorted((v for v, verdict in verdicts.items() if verdict == "unaffected"), key=Version)
    if not affected or not unaffected:
        raise UsageError(
            f"the records in {matrix.results_dir} do not hold both an affected and an unaffected "
            f"{options.check} run on this machine ({options.backend})",
            f"pass --good and --bad, or run e.g. nox -s {options.check}-0.4.35 and nox -s {options.check}-0.6.0 first",
        )
    newest_bad, newest_good = affected[-1], unaffected[-1]
    if Version(newest_bad) < Version(newest_good):  # a fix: bad is older
        good = next(v for v in unaffected if Version(v) > Version(newest_bad))
        bad = newest_bad
    else:  # a regression: good is older
        bad = next(v for v in affected if Version(v) > Version(newest_good))
        good = newest_good
    how = (f"bounds from the records in {matrix.results_dir}: newest affected release {newest_bad}, "
           f"newest unaffected {newest_good}; searching between bad {bad} and good {good}")
    return good, bad, how


def _recorded_verdicts(matrix: Matrix, options: Options) -> dict[str, str]:
    backend = records.record_backend({"requested": {"backend": options.backend}})
    newest, _older = records.newest_per_cell(records.load_records(matrix.results_dir).entries)
    return {
        key.jax: str(entry.record.get("verdict"))
        for key, entry in newest.items()
        if key.check == options.check and key.backend == backend and key.machine == records.machine_id()
        and entry.record.get("status") == "ran"
    }


# --------------------------------------------------------------------------
# The probes file: resume an interrupted bisect


def bisect_name(options: Options, good: str, bad: str) -> str:
    name = f"{options.subject}-good{good}-bad{bad}-{options.backend}"
    if options.preset:
        name += f"-{options.preset}"
    if options.scan:
        name += "-all"
    return "".join(c if c.isalnum() or c in ".-_" else "_" for c in name)


def probes_key(matrix: Matrix, options: Options) -> dict[str, Any]:
    """What must not change for saved probes to stay valid."""
    key: dict[str, Any] = {"subject": options.subject, "backend": options.backend,
                           "machine": records.machine_id(), "kit_version": __version__}
    if options.check:
        request = runner.RunRequest(check=options.check, version="0", backend=options.backend, preset=options.preset)
        key["parameters"] = runner.parameters_for(matrix, request)
    if options.script:
        key["script_sha256"] = hashlib.sha256(options.script.read_bytes()).hexdigest()
    return json.loads(json.dumps(key))  # as it reads back from the file


@dataclass
class ProbeStore:
    """Finished probes of one bisect, written atomically after each probe."""

    path: Path
    key: dict[str, Any]
    candidates: list[Candidate] = field(default_factory=list)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def open(cls, path: Path, key: dict[str, Any], fresh: bool, log: Log) -> ProbeStore:
        store = cls(path, key)
        if fresh or not path.exists():
            return store
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            log(f"ignoring unreadable {path} ({error}); probing from scratch")
            return store
        if saved.get("schema") != PROBES_SCHEMA or saved.get("key") != key:
            log(f"ignoring {path}: it was made with other parameters, script, kit version or machine")
            return store
        store.candidates = [Candidate(**{**c, "requirements": tuple(c["requirements"])})
                            for c in saved.get("candidates", [])]
        store.probes = dict(saved.get("probes", {}))
        log(f"resuming from {path}: {len(store.probes)} finished probes")
        return store

    def save(self) -> None:
        data = {"schema": PROBES_SCHEMA, "key": self.key, "candidates": [asdict(c) for c in self.candidates],
                "probes": self.probes}
        records.atomic_write_text(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def outcomes(self, crash: str) -> dict[str, Outcome]:
        """The saved probes as a bisection cache, mapped under today's ``--crash`` mode."""
        return {v: outcome(p["status"], p.get("verdict"), crash) for v, p in self.probes.items()}


# --------------------------------------------------------------------------
# One probe


@dataclass
class Observation:
    """What one release did, before it is mapped to an outcome."""

    status: str
    verdict: str | None
    reason: str
    source: str = "run"
    """``run`` (measured now) or ``record`` (a current record of an earlier run)."""
    runs: list[str] = field(default_factory=list)
    """Each run's verdict or status, in order, when there was more than one."""
    flipped: bool = False
    environment: str | None = None
    """``built`` or ``reused`` when this probe prepared the release's environment; None when it did not."""


class Prober:
    """Turns a release into an outcome: records first, then an environment and a run."""

    def __init__(self, matrix: Matrix, options: Options, candidates: Sequence[Candidate], store: ProbeStore,
                 index: PackageIndex, log: Log) -> None:
        self.matrix, self.options, self.store, self.index, self.log = matrix, options, store, index, log
        self.candidates = {c.version: c for c in candidates}
        self._prepared: dict[str, runner.Prepared] = {}
        self._environments: dict[str, str] = {}

    def __call__(self, version: str) -> Outcome:
        observation = self.observe(self.candidates[version])
        self.store.probes[version] = asdict(observation)
        self.store.save()  # after every probe: an interrupted bisect loses at most the one running
        result = outcome(observation.status, observation.verdict, self.options.crash)
        flip = f" — flipped: {' → '.join(observation.runs)}" if observation.flipped else ""
        self.log(f"probe jax {version}: {_word(result, bool(self.options.script))} "
                 f"[{observation.source}] {observation.reason}{flip}")
        return result

    def observe(self, candidate: Candidate) -> Observation:
        """Look once (a current record, or a run); re-run an inconclusive look; confirm on request."""
        first = self._record_observation(candidate) or self._run(candidate)
        runs = [first]
        if first.verdict == "inconclusive":
            runs.append(self._run(candidate))  # an inconclusive probe is re-run once before it counts
        if runs[-1].verdict in ("affected", "unaffected"):
            runs += [self._run(candidate) for _ in range(self.options.confirm)]
        observation = settle(runs)
        observation.environment = self._environments.get(candidate.version)
        return observation

    # -- records

    def _newest_records(self) -> dict[str, records.Record]:
        # Read afresh for every probe: a sweep running alongside may have just measured this release.
        backend = records.record_backend({"requested": {"backend": self.options.backend}})
        newest, _older = records.newest_per_cell(records.load_records(self.matrix.results_dir).entries)
        return {key.jax: entry.record for key, entry in newest.items()
                if key.check == self.options.check and key.backend == backend
                and key.machine == records.machine_id()}

    def _record_observation(self, candidate: Candidate) -> Observation | None:
        if not self.options.check:
            return None
        record = self._newest_records().get(candidate.version)
        if record is None:
            return None
        fingerprint = records.environment_fingerprint(
            **candidate.fingerprint_args, backend=self.options.backend, machine=records.machine_id())
        parameters = runner.parameters_for(self.matrix, self._request(candidate.version))
        if not records.is_current(record, __version__, parameters, fingerprint):
            return None
        return Observation(str(record["status"]), record.get("verdict"), str(record.get("reason") or ""), "record")

    # -- runs

    def _request(self, version: str) -> runner.RunRequest:
        return runner.RunRequest(check=self.options.check or "script", version=version,
                                 backend=self.options.backend, preset=self.options.preset,
                                 find_links=self.options.find_links, timeout_s=self.options.timeout,
                                 reproduce=f"nox -s {self.options.check}-{version}")

    def _prepare(self, version: str) -> runner.Prepared:
        """The release's environment, built at most once per bisect."""
        if version not in self._prepared:
            prepared = runner.prepare(self.matrix, self._request(version), self.log, self.index)
            if prepared.env is not None:
                self._environments[version] = "reused" if prepared.env.reused else "built"
            self._prepared[version] = prepared
        return self._prepared[version]

    def _run(self, candidate: Candidate) -> Observation:
        prepared = self._prepare(candidate.version)
        if self.options.script:
            return self._run_script(prepared)
        record, _path = runner.run_check(self.matrix, self._request(candidate.version), self.log,
                                         self.index, prepared=prepared)
        return Observation(str(record["status"]), record.get("verdict"), str(record.get("reason") or ""))

    def _run_script(self, prepared: runner.Prepared) -> Observation:
        if prepared.env is None:
            return Observation("not-installable", None, f"not installable here: {prepared.problem}")
        assert self.options.script is not None
        timeout = self.options.timeout or DEFAULT_SCRIPT_TIMEOUT_S
        self.log(f"running {prepared.env.python} {self.options.script}")
        code = run_script([str(prepared.env.python), str(self.options.script)], timeout)
        status, verdict, reason = script_observation(code, timeout)
        return Observation(status, verdict, reason)


def settle(runs: Sequence[Observation]) -> Observation:
    """One observation from several looks at the same release.

    The first conclusive look counts; later looks (``--confirm``) must agree
    with it, or the release is noisy: reported as flipped, and skipped.
    """
    labels = [r.verdict or r.status for r in runs]
    source = "+".join(dict.fromkeys(r.source for r in runs))  # "record+run": a record, then a re-run
    conclusive = [r for r in runs if r.verdict in ("affected", "unaffected")]
    if not conclusive:
        last = runs[-1]
        return Observation(last.status, last.verdict, last.reason, source, labels if len(runs) > 1 else [])
    counted = conclusive[0]
    if any(r.verdict != counted.verdict for r in conclusive[1:]):
        reason = f"the verdict changed between runs ({', '.join(labels)}): too noisy to count"
        return Observation("ran", "inconclusive", reason, source, labels, flipped=True)
    flipped = len(runs) > 1 and runs[0].verdict == "inconclusive"
    return Observation(counted.status, counted.verdict, counted.reason, source,
                       labels if len(runs) > 1 else [], flipped)


def run_script(cmd: list[str], timeout: int) -> int | None:
    """Run a user script with output to the terminal; its exit code, or None on timeout.

    Its own session, so a timeout kills the whole process group (a script
    that spawns workers must not leave them behind).
    """
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        runner.kill_process_group(proc)
        return None
    except BaseException:
        runner.kill_process_group(proc)  # Ctrl-C: stop the script too
        raise


# --------------------------------------------------------------------------
# The search


@dataclass
class Finding:
    """Everything the report says."""

    name: str
    options: Options
    good: str
    bad: str
    bounds_from: str
    candidates: list[Candidate]
    outcomes: dict[str, Outcome]
    observations: dict[str, dict[str, Any]]
    probed_now: list[str]
    resumed: list[str]
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = field(default_factory=list)
    seconds: float = 0.0

    def with_environment(self, state: str) -> list[str]:
        """Releases whose environment a probe of this bisect (now or before a resume) built or reused."""
        return [v for v, p in self.observations.items() if p.get("environment") == state]

    @property
    def built(self) -> list[str]:
        return self.with_environment("built")

    @property
    def reused(self) -> list[str]:
        return self.with_environment("reused")

    @property
    def from_records(self) -> list[str]:
        """Releases answered by a current record alone, without a run."""
        return [v for v, p in self.observations.items() if p.get("source") == "record"]

    @property
    def fix(self) -> bool:
        """True when hunting a fix: the bad release is the older one."""
        return Version(self.bad) < Version(self.good)

    @property
    def reproduce(self) -> str:
        """The command line, with the bounds spelled out when they came from the records (they move)."""
        argv = list(self.options.argv)
        if self.options.good is None:
            argv += ["--good", self.good, "--bad", self.bad]
        return "nox -s bisect -- " + shlex.join(argv)


def main(matrix: Matrix, argv: Sequence[str], log: Log) -> int:
    """``nox -s bisect -- ARGS``: returns 0 when the change was located (exactly or to a short list)."""
    if "-h" in argv or "--help" in argv:
        print(make_parser().format_help())
        return 0
    started = time.monotonic()
    options = parse_options(matrix, argv)
    index = PackageIndex(matrix.install.index_url)
    good, bad, how = _bounds(matrix, options)
    log(how)
    versions = release_versions(index, good, bad)
    name = bisect_name(options, good, bad)
    store = ProbeStore.open(matrix.results_dir.parent / "bisect" / f"{name}.probes.json",
                            probes_key(matrix, options), options.fresh, log)
    candidates = _candidates(matrix, versions, options, index, store, log)
    print(candidate_table(candidates, options, store))
    finding = search(matrix, options, good, bad, how, name, candidates, store, index, log)
    finding.seconds = time.monotonic() - started
    text = render_markdown(finding, _notes(finding, index))
    write_report(matrix.results_dir.parent, finding, text)
    print(text)
    return 0


def _bounds(matrix: Matrix, options: Options) -> tuple[str, str, str]:
    if options.good and options.bad:
        return options.good, options.bad, f"bounds from the command line: good {options.good}, bad {options.bad}"
    return bounds_from_records(matrix, options)


def _candidates(matrix: Matrix, versions: list[str], options: Options, index: PackageIndex, store: ProbeStore,
                log: Log) -> list[Candidate]:
    """Resolved candidates, from the probes file when it lists exactly these releases."""
    if [c.version for c in store.candidates] == versions:
        return store.candidates
    log(f"resolving {len(versions)} releases (metadata only, nothing is downloaded)")
    store.candidates = resolve_candidates(matrix, versions, options, index)
    store.save()
    return store.candidates


def candidate_table(candidates: Sequence[Candidate], options: Options, store: ProbeStore) -> str:
    k = len(candidates)
    known = sum(1 for c in candidates if c.version in store.probes)
    plan = f"{k} probes (--all)" if options.scan else f"about {expected_probes(k)} probes"
    lines = [f"{k} candidate releases, oldest first; {plan}"
             + (f", {known} already done" if known else "") + ":"]
    for c in candidates:
        installs = f"jaxlib {c.jaxlib}, python {c.python}" if c.jaxlib else f"NOT INSTALLABLE: {c.problem}"
        lines.append(f"  jax {c.version:<10} {installs}")
    return "\n".join(lines)


def search(matrix: Matrix, options: Options, good: str, bad: str, how: str, name: str,
           candidates: list[Candidate], store: ProbeStore, index: PackageIndex, log: Log) -> Finding:
    """Verify the bounds, then bisect (or scan every candidate with --all)."""
    prober = Prober(matrix, options, candidates, store, index, log)
    cache = store.outcomes(options.crash)
    resumed = list(cache)
    versions = [c.version for c in candidates]
    old_outcome = Outcome.GOOD if Version(good) < Version(bad) else Outcome.BAD
    result: BisectResult[str] | None = None
    transitions: list[Transition[str]] = []
    if options.scan:
        transitions = scan_all(versions, prober, cache)
    else:
        verify(good, bad, prober, cache, options, store)
        result = bisect(versions, prober, old_outcome=old_outcome, cache=cache)
    return Finding(name, options, good, bad, how, candidates, dict(cache), dict(store.probes),
                   [v for v in versions if v in cache and v not in resumed], resumed, result, transitions)


def verify(good: str, bad: str, probe: Callable[[str], Outcome], cache: dict[str, Outcome], options: Options,
           store: ProbeStore) -> None:
    """Good must be good and bad bad before halving trusts them; else one clear UsageError.

    Both ends are probed before judging, so reversed bounds are told apart
    from one wrong bound.
    """
    ends = (("--good", good, Outcome.GOOD), ("--bad", bad, Outcome.BAD))
    for _flag, version, _wanted in ends:
        if version not in cache:
            cache[version] = probe(version)
    wrong = [(flag, version, wanted) for flag, version, wanted in ends if cache[version] is not wanted]
    if not wrong:
        return
    flag, version, wanted = wrong[0]
    got = cache[version]
    why = store.probes.get(version, {}).get("reason", "")
    message = f"{flag} {version} is {_word(got, bool(options.script))}, not {wanted.value}: {why}"
    if len(wrong) == 2 and cache[good] is Outcome.BAD and cache[bad] is Outcome.GOOD:
        raise UsageError(message, "swap --good and --bad")
    if got is Outcome.SKIP:
        raise UsageError(message, f"choose a {flag} release that can be tested here")
    other = bad if flag == "--good" else good
    away = "an older" if Version(version) < Version(other) else "a newer"
    raise UsageError(message, f"move {flag} away from {other}: try {away} release")


# --------------------------------------------------------------------------
# Report


def answer(finding: Finding) -> tuple[str, str, list[str]]:
    """(last good, first bad, ambiguous) in the user's words; for a fix, (last bad, first good, ...)."""
    assert finding.result is not None
    return finding.result.last_same, finding.result.first_different, finding.result.ambiguous


def _notes(finding: Finding, index: PackageIndex) -> dict[str, str]:
    """Changelog sections of the releases after the last old-side release up to the first new-side one."""
    if finding.result is not None:
        versions = [*finding.result.ambiguous, finding.result.first_different]
    else:
        versions = [t.after for t in finding.transitions] + [v for t in finding.transitions for v in t.skipped_between]
    explicit = finding.options.changelog
    if explicit is None and (Path(".cache") / changelog.CHANGELOG_NAME).is_file():
        explicit = Path(".cache") / changelog.CHANGELOG_NAME
    return changelog.changelog_sections(sorted(set(versions), key=Version), index.cache_dir, explicit)


def render_markdown(finding: Finding, notes: Mapping[str, str]) -> str:
    o = finding.options
    lo, hi = sorted((finding.good, finding.bad), key=Version)
    what = f"check `{o.check}`" if o.check else f"script `{o.script}`"
    lines = [f"# Bisect: {o.subject} ({o.backend})", "",
             f"Searched jax {lo} … {hi} ({len(finding.candidates)} releases) with {what}; "
             f"good = {finding.good}, bad = {finding.bad} ({'hunting a fix' if finding.fix else 'hunting a regression'}).",
             f"{finding.bounds_from}.", ""]
    lines += _answer_lines(finding)
    skipped = [v for v, out in finding.outcomes.items() if out is Outcome.SKIP]
    flipped = [v for v, p in finding.observations.items() if p.get("flipped")]
    lines += ["", "## Probes", "",
              f"{len(finding.outcomes)} probes ({len(finding.probed_now)} now, {len(finding.resumed)} from "
              f"the probes file); environments: {len(finding.built)} built, {len(finding.reused)} reused; "
              f"{len(finding.from_records)} answered by current records; {finding.seconds:.1f} s.", "",
              "| jax | jaxlib | python | outcome | how | reason |", "|---|---|---|---|---|---|"]
    for c in finding.candidates:
        out = finding.outcomes.get(c.version)
        p = finding.observations.get(c.version, {})
        label = _word(out, bool(o.script)) if out else "not probed"
        how = p.get("source", "") + (" (flipped: " + " → ".join(p.get("runs", [])) + ")" if p.get("flipped") else "")
        reason = str(p.get("reason", "") or (c.problem if not c.jaxlib else "")).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c.version} | {c.jaxlib or '—'} | {c.python or '—'} | {label} | {how} | {reason[:200]} |")
    if skipped:
        lines += ["", "Skipped (not installable, crashed, inconclusive or exit 125): " + ", ".join(skipped) + "."]
    if flipped:
        lines += ["", "Flipped between runs: " + ", ".join(flipped) + "."]
    lines += ["", "## Release notes", ""]
    lines += [notes[v] + "\n" for v in notes] or ["(none)"]
    lines += ["## Reproduce with:", "", "    " + finding.reproduce, ""]
    return "\n".join(lines)


def _answer_lines(finding: Finding) -> list[str]:
    if finding.result is None:
        return _transition_lines(finding)
    last_same, first_different, ambiguous = answer(finding)
    old_word, new_word = ("bad", "good") if finding.fix else ("good", "bad")
    lines = ["## Result", "",
             f"- last {old_word} release: **jax {last_same}**",
             f"- first {new_word} release: **jax {first_different}**"
             + (" (exact)" if not ambiguous else ""),
             f"- compare: {changelog.compare_url(last_same, first_different)}"]
    if ambiguous:
        lines.append(f"- ambiguous: the change is in one of {', '.join([*ambiguous, first_different])} "
                     f"(skipped releases between the two could hold it)")
    return lines


def _transition_lines(finding: Finding) -> list[str]:
    lines = ["## Transitions (--all)", ""]
    if not finding.transitions:
        return lines + ["No change of outcome between the releases that could be tested."]
    if non_monotonic(finding.transitions):
        lines += [f"**Non-monotonic**: the outcome changes {len(finding.transitions)} times; "
                  "a plain bisect over this range would mislead.", ""]
    for t in finding.transitions:
        between = f" (untested between: {', '.join(t.skipped_between)})" if t.skipped_between else ""
        lines.append(f"- jax {t.before} ({t.outcome_before.value}) → jax {t.after} ({t.outcome_after.value}){between}: "
                     f"{changelog.compare_url(t.before, t.after)}")
    return lines


def to_json(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": finding.name, "subject": finding.options.subject, "backend": finding.options.backend,
        "good": finding.good, "bad": finding.bad, "bounds_from": finding.bounds_from,
        "candidates": [asdict(c) for c in finding.candidates],
        "outcomes": {v: o.value for v, o in finding.outcomes.items()},
        "observations": finding.observations,
        "probes": len(finding.outcomes), "probed_now": finding.probed_now, "resumed": finding.resumed,
        "environments_built": finding.built, "environments_reused": finding.reused,
        "answered_by_records": finding.from_records, "seconds": round(finding.seconds, 1),
        "reproduce": finding.reproduce,
    }
    if finding.result is not None:
        last_same, first_different, ambiguous = answer(finding)
        data.update(last_same=last_same, first_different=first_different, ambiguous=ambiguous,
                    compare=changelog.compare_url(last_same, first_different))
    else:
        data["transitions"] = [{"before": t.before, "after": t.after, "outcome_before": t.outcome_before.value,
                                "outcome_after": t.outcome_after.value, "skipped_between": t.skipped_between}
                               for t in finding.transitions]
        data["non_monotonic"] = non_monotonic(finding.transitions)
    return data


def write_report(reports_dir: Path, finding: Finding, markdown: str) -> None:
    records.atomic_write_text(reports_dir / f"bisect-{finding.name}.md", markdown)
    records.atomic_write_text(reports_dir / f"bisect-{finding.name}.json",
                              json.dumps(to_json(finding), indent=2, sort_keys=True) + "\n")


__all__ = ["main", "outcome", "script_observation", "settle", "Options", "Candidate"]
