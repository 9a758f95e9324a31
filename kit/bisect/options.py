"""The options of ``nox -s bisect``, and the two ends of the search.

Words, from the user's side: *good* means the bug does not show (a check's
``unaffected``, a script's exit 0), *bad* means it does. ``--good`` and
``--bad`` may come in either order, so one search finds regressions (good is
older) and fixes (bad is older). Without them, the ends come from this
machine's newest records of the check; with one of them, the other is found
by galloping (`kit.bisect.gallop`).
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from repro.parameters import MAX_HOST_DEVICES

from ..arguments import Parser
from ..check_settings import DEFAULT_TIMEOUT_S, Check, ExplainedProgram, bad_if_pattern, script_check, timeout_seconds
from ..config import Matrix, bisect_command, release_number
from ..checks import builtin
from ..errors import UsageError
from ..targets import BACKENDS, Target, parse_target
from ..requirements import requirements
from ..slurm.jobs import SlurmOptions

from ..user_paths import file_problem, find_links_argument, relative_to_what, report_path
from ..reproduce_line import reproduce_argv
from .outcomes import CRASH_MODES
from .specs import HowToSearch, Specs, WhatRuns, WhatToReport, script_name


_HELP_EPILOG = """\
outcomes:
  A check is good when its verdict is unaffected and bad when it is affected.
  An inconclusive verdict is re-run once before it counts (still inconclusive:
  skip). A release that cannot be installed here is skipped and named; a
  release the index has yanked is listed and skipped without a probe.

  --script runs exactly as a check block with that script would
  (docs/checks.md): the release's own python, KIT_RESULT, --host-devices, --timeout,
  --requires, --bad-if, one record per probe (reports/bisect/script-records/).
  Its exit code decides, as `git bisect run` reads it:
    0                      good
    125                    skip (cannot test this release)
    1-127 (except 125)     bad
    killed by a signal, exit code above 127, or over --timeout: crashed
  A crashed probe counts as --crash says: skip (default), bad or good, like
  cargo-bisect-rustc's --regress modes. A failed import of a package that is
  not JAX's own is never bad: it is a skip, and bounds that fail that way stop
  the bisect naming the package to pass with --requires. With --bad-if REGEX a
  failure is bad only when the script's output matches; any other failure is
  a skip, named in the report with its exception.

  Every probe is kept in one cache, reports/bisect/probes/, keyed by its
  identity: what ran (the check and its parameters, or the script's content),
  the release, every installed package, the backend, the hardware (CPU; GPU
  and driver) and every JAX/XLA variable set (JAX_*, XLA_*, TF_CPP_*,
  CUDA_VISIBLE_DEVICES, ...; docs/bisect.md). Any later bisect with the same
  identity, with any bounds, reuses it and the report says why it matched; a
  probe of another identity is never reused, and the report says what
  differed. A timeout is reused only under a timeout no longer than the one it hit. --fresh ignores the cache (and current records). The
  candidate list comes from the index's metadata, in seconds; a release is
  resolved and installed only when it is probed. The result goes to
  reports/bisect-<name>.md and .json.

  --jobs K probes K releases per round side by side (K+1-section): fewer
  rounds, more probes in all. With --slurm each probe is a SLURM job (the
  environments are built here first, as for `nox -s matrix -- --slurm`), so a
  GPU bisect starts from a login node; without it they run on this machine
  (worth it when builds wait on downloads, not when probes need the cores).

commits (--commits):
  After the releases, the commits between the last unchanged and the first
  changed release are searched the same way, without building jaxlib: each
  commit's jax/ and jaxlib Python are laid over a release environment whose
  jaxlib that commit accepts (jax/version.py), the bad side's first. The
  history comes from --jax-repo, else [install] jax_repo in matrix.toml, else
  a partial clone the kit keeps under .nox/jax-history/ (no clone and GitHub
  unreachable: exit 4). When the same Python gives both outcomes on two jaxlib
  builds, the report says the change is not in JAX's Python and names the XLA
  range. Commit probes share the probe cache, keyed by commit and jaxlib.

examples:
  nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35
  nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35 --commits --jax-repo ../jax
  nox -s bisect -- --script repro.py --good 0.4.34 --bad 0.4.36
  nox -s bisect -- --explain train.py --op train.py:37 --good 0.6.0 --bad 0.4.35   (docs/explain.md: bad where
      an op of that line holds the whole batch on every device or is fed by a collective)
  nox -s bisect -- --script uses_flax.py --requires flax --good 0.5.0 --bad 0.4.34
  nox -s bisect -- --script jit_kwarg.py --bad-if "multiple values for argument 'f'" --good 0.4.30 --bad 0.4.36
  nox -s bisect -- --check scaling            # bounds from the recorded matrix
  nox -s bisect -- --check scaling --bad 0.4.35   # is it fixed? the newest first, then galloping
  nox -s bisect -- --check slogdet-time --metric slogdet_ms --good 0.6.0 --bad 0.4.35
  nox -s bisect -- --script repro.py --good 0.4.20 --bad 0.6.0 --slurm --jobs 3 --partition gpu

metrics (--metric NAME):
  Each probe runs the check or script and reads the metric's samples from its
  result (KIT_RESULT "metrics"). The bounds' samples set the baseline and
  which way is worse; they must differ by --factor and a Mann-Whitney U test,
  else there is no step to find. A probe is bad when its median is at least
  --factor times worse than --good's and the test tells it from --good's
  samples; good when it is less and the test tells it from --bad's; otherwise
  it is within noise: run again and pooled, and skipped (named) if still so.
  With --all every release is measured and every step over --factor is shown.
"""


@dataclass(frozen=True)
class BisectOptions:
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
    metric: str | None = None
    """Bisect a measured metric (a step by ``factor``) instead of the verdict."""
    target: Target | None = None
    """``--target``: the chip each probe compiles for and never runs on."""
    factor: float = 1.5
    commits: bool = False
    """After the releases, bisect JAX's commits between the two releases found (``--commits``)."""
    good_commit: str | None = None
    """``--good-commit``: a JAX commit or tag without the bug, where the commit search starts or ends."""
    bad_commit: str | None = None
    """``--bad-commit``: a JAX commit or tag with the bug, where the commit search ends or starts."""
    jax_repo: Path | None = None
    """A clone of JAX to read the commits from (``--jax-repo``; else matrix.toml's, else the kit's own)."""
    jax_repo_shown: str = ""
    """``--jax-repo`` as reports name it: relative to the project when inside it, else as it was given."""
    script_shown: str = ""
    """The script as reports name it: relative to the project when it is inside, else as it was given."""
    jobs: int = 1
    """Probes per round, run side by side: K+1-section (`search.ksect`) when more than one."""
    slurm: SlurmOptions | None = None
    """Each probe a task of a SLURM job array (kit/bisect/probe/cluster.py), environments built here first."""
    pins: tuple[str, ...] = ()
    """``NAME==VERSION`` held in every probe (``--pin``), names in normal form, sorted."""
    argv_shown: tuple[str, ...] = ()
    """``argv`` as reports quote it (`shown_argv`): each absolute path relative, ``~/...`` or a placeholder."""
    verbose: bool = False
    """``-v``: every install, overlay and run line and each probe's whole output on the console, as before."""
    out: Path | None = None
    """``--out DIR``: where bisect-<name>.md and .json go (else the reports folder beside the records)."""
    command: str = "nox -s bisect --"
    """How the command line begins where reports quote it (`kit.config.bisect_command`: ``jax-kit bisect`` too)."""
    script_check: Check | None = None
    """``--script`` and its settings (``--host-devices``, ``--timeout``, ``--requires``, ``--bad-if``) as the
    check it runs as: the same value a ``[checks.NAME]`` block with that script gives."""

    @property
    def specs(self) -> Specs:
        """The command line split for the modules below the driver: what runs, how to search, what to report."""
        return Specs(
            WhatRuns(check=self.check, script=self.script, script_check=self.script_check, backend=self.backend,
                     preset=self.preset, target=self.target, timeout=self.timeout, find_links=self.find_links,
                     pins=self.pins, timed=self.metric is not None),
            HowToSearch(good=self.good, bad=self.bad, crash=self.crash, confirm=self.confirm, scan=self.scan,
                        fresh=self.fresh, metric=self.metric, factor=self.factor, jobs=self.jobs, slurm=self.slurm,
                        commits=self.commits, good_commit=self.good_commit, bad_commit=self.bad_commit,
                        jax_repo=self.jax_repo, jax_repo_shown=self.jax_repo_shown),
            WhatToReport(argv=self.argv, argv_shown=self.argv_shown, command=self.command,
                         script_shown=self.script_shown, out=self.out, changelog=self.changelog, verbose=self.verbose))

    @property
    def subject(self) -> str:
        """What is bisected, for file names and headings: the check or ``script-<stem>`` (``--op``'s line added)."""
        return self.specs.runs.subject

    @property
    def explained_op(self) -> str:
        """The OP of ``--op FILE:LINE:OP`` (``triangular_solve``), "" where none is named."""
        return self.specs.runs.explained_op

    @property
    def quoted_argv(self) -> tuple[str, ...]:
        """The command line as reports, records and TIPs quote it (`argv_shown`; ``argv`` where none was made)."""
        return self.argv_shown or self.argv


def make_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="nox -s bisect --", tip="see `nox -s bisect -- --help`", add_help=False, epilog=_HELP_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Find the first JAX release where a check's verdict or a script's exit code changes.")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--check", help="a check from matrix.toml (scaling, correctness)")
    what.add_argument("--script", type=Path, help="a repro script run with each release's python (see below)")
    what.add_argument("--explain", type=Path, metavar="PROGRAM", help="a program, bad where an op is whole (see below)")
    parser.add_argument("--op", metavar="FILE:LINE[:OP]", type=_op_line,
                        help="--explain: only this line's ops (train.py:37:lu)")
    parser.add_argument("--good", metavar="VERSION",
                        help="a release without the bug (older or newer than --bad; alone, the kit finds a bad one)")
    parser.add_argument("--bad", metavar="VERSION",
                        help="a release with the bug (alone: is it fixed? the kit finds a good one)")
    parser.add_argument("--backend", default="cpu", choices=BACKENDS)
    parser.add_argument("--target", default=None, metavar="TARGET",
                        help="--check scaling or --explain: compile each probe for a chip this machine lacks (tpu:v5e:2x2, "
                             "or FILE.toml of your own), not run")
    parser.add_argument("--preset", default=None, help="a preset of the check in matrix.toml")
    parser.add_argument("--crash", default="skip", choices=tuple(CRASH_MODES),
                        help="how a crashed or timed-out probe counts (default: skip)")
    parser.add_argument("--confirm", type=int, default=0, metavar="N",
                        help="re-run each fresh probe N more times; a probe that flips is skipped and reported")
    parser.add_argument("--all", dest="scan", action="store_true",
                        help="probe every candidate and report every transition (short ranges)")
    parser.add_argument("--timeout", type=timeout_seconds, default=None, metavar="SECONDS",
                        help=f"per probe (checks: matrix.toml's timeout_s; scripts: {DEFAULT_TIMEOUT_S})")
    parser.add_argument("--host-devices", type=_host_devices, default=None, metavar="N",
                        help="--script: CPU runs get N forced host devices, as a check's host_devices")
    parser.add_argument("--requires", action="append", default=[], metavar="PKG",
                        help="--script: a package it imports (flax, optax>=0.2), installed for each release's era; "
                             "repeatable")
    parser.add_argument("--bad-if", default=None, metavar="REGEX",
                        help="--script: bad only when it fails and its output matches REGEX; other failures skip")
    parser.add_argument("--find-links", action="append", default=[], type=find_links_argument, metavar="DIR_OR_URL",
                        help="extra wheels, e.g. a jaxlib the index no longer serves")
    parser.add_argument("--changelog", type=Path, default=None,
                        help="JAX's CHANGELOG.md, for the release notes in the report")
    parser.add_argument("--fresh", action="store_true", help="ignore the probe cache and the records: probe everything again")
    parser.add_argument("--metric", default=None, metavar="NAME",
                        help="bisect a metric the check or script reports (KIT_RESULT metrics) instead of its verdict")
    parser.add_argument("--factor", type=_factor, default=1.5, metavar="F",
                        help="--metric: a probe is bad when its median is F times worse than --good's (default 1.5)")
    parser.add_argument("--commits", action="store_true",
                        help="then narrow to the JAX commit: its Python laid over a built release (docs/commits.md)")
    _commit_ends(parser)
    parser.add_argument("--jax-repo", type=Path, default=None, metavar="PATH",
                        help="a clone of github.com/jax-ml/jax: the commits for --commits (else [install] jax_repo, else "
                             "the kit's own) and the release notes, read from its CHANGELOG.md")
    parser.add_argument("--pin", action="append", default=[], type=_pin, metavar="PKG==VERSION",
                        help="hold a package at one version in every probe (repeatable), e.g. --pin numpy==2.2.1: "
                             "rules it out as what changed")
    parser.add_argument("--jobs", type=_jobs, default=1, metavar="K",
                        help="probe K releases per round at once: about log_{K+1}(n) rounds instead of log2(n)")
    parser.add_argument("--slurm", action="store_true",
                        help="run each probe as a SLURM job (environments are built here first; see docs/cluster.md)")
    parser.add_argument("--partition", default=None, help="--slurm: the partition to submit to")
    parser.add_argument("--time", default=None, metavar="LIMIT", help="--slurm: time limit per probe's job")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every install and run line and each probe's whole output (else one line a probe)")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="write bisect-<name>.md and .json into DIR (default: reports/)")
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser


def parse_options(matrix: Matrix, argv: Sequence[str]) -> BisectOptions:
    """Parse and validate; every mistake is a UsageError/ConfigError naming the fix."""
    args = make_parser().parse_args(list(argv))
    if args.op and not args.explain:
        raise UsageError("--op applies to --explain", "e.g. --explain train.py --op train.py:37")
    target = _target(args)
    # The target stays out of the check: it travels as the probes' `Target` and becomes text in their records.
    explained = ExplainedProgram(op=args.op or None) if args.explain else None
    args.script, args.host_devices = args.script or args.explain, args.host_devices or (4 if args.explain else None)
    if not args.check and not args.script:
        raise UsageError("say what to bisect", "pass --check scaling, --check correctness or --script path/to/repro.py")
    if args.check:
        matrix.check(args.check)  # ConfigError naming the known checks
    _regular_files(args)
    if args.preset and not args.check:
        raise UsageError("--preset only applies to --check", "drop --preset, or bisect a check")
    given = [flag for flag, value in (("--host-devices", args.host_devices), ("--requires", args.requires),
                                      ("--bad-if", args.bad_if)) if value not in (None, [])]
    if given and not args.script:
        raise UsageError(f"{given[0]} applies to --script", f"for --check {args.check}, set host_devices, requires "
                         f"or bad_if in [checks.{args.check}] in matrix.toml")
    if args.confirm < 0:
        raise UsageError("--confirm must be 0 or more", "e.g. --confirm 2")
    for flag, version in (("--good", args.good), ("--bad", args.bad)):
        if version is not None:
            release_number(version, flag)
    if args.metric and (args.good is None or args.bad is None):
        raise UsageError("--metric needs --good and --bad", "their samples set the baseline and which way is worse")
    if args.good is not None and args.bad is not None and Version(args.good) == Version(args.bad):
        raise UsageError(f"--good and --bad are both {args.good}", "give two different releases")
    if (args.good_commit or args.bad_commit) and not args.commits:
        raise UsageError("--good-commit and --bad-commit narrow the commit search", "add --commits")
    if args.commits and args.scan:
        raise UsageError("--commits narrows one change and --all lists every change", "drop one of them")
    if args.commits and args.slurm:
        raise UsageError("--commits runs its commit probes here, one at a time: each is laid over an environment "
                         "of this machine", "drop --slurm (the release search may use --jobs)")
    if not args.slurm and (args.partition or args.time):
        raise UsageError("--partition and --time go with --slurm", "add --slurm, or drop them")
    if args.metric and (args.slurm or args.jobs > 1):
        raise UsageError("--metric runs one probe at a time, here: each is judged against a run of --good right "
                         "before it, on the same machine and under the same load",
                         "drop --slurm and --jobs, or bisect the verdict instead of the metric")
    script = args.script.resolve() if args.script else None
    return BisectOptions(
        check=args.check, script=script, good=args.good, bad=args.bad,
        target=target,
        # The release is installed with the target's compiler (jax[tpu]); nothing runs on its chip.
        backend=target.install_extra if target else args.backend, preset=args.preset, crash=args.crash, confirm=args.confirm, scan=args.scan,
        timeout=args.timeout, find_links=tuple(args.find_links), changelog=args.changelog, fresh=args.fresh,
        argv=tuple(argv), metric=args.metric, factor=args.factor,
        script_shown=report_path(args.script, matrix.path.parent) if args.script else "",
        jobs=args.jobs, slurm=SlurmOptions(args.partition, args.time) if args.slurm else None,
        pins=_pins(args.pin),
        commits=args.commits, good_commit=args.good_commit, bad_commit=args.bad_commit, jax_repo=args.jax_repo.expanduser().resolve() if args.jax_repo else None,
        jax_repo_shown=report_path(args.jax_repo, matrix.path.parent) if args.jax_repo else "",
        argv_shown=shown_argv(argv, matrix.path.parent), command=bisect_command(matrix),
        verbose=args.verbose, out=args.out.expanduser().resolve() if args.out else None,
        script_check=script_check(script_name(script), script, host_devices=args.host_devices,
                                  timeout_s=args.timeout or DEFAULT_TIMEOUT_S,
                                  requires=requirements(args.requires, "--requires"),
                                  bad_if=bad_if_pattern(args.bad_if, "--bad-if") if args.bad_if is not None else None,
                                  explain=explained)
        if script else None,
    )


def shown_argv(argv: Sequence[str], project: Path) -> tuple[str, ...]:
    """The command line as reports, records and TIPs quote it: `kit.reproduce_line.reproduce_argv` (a path inside
    the project relative, under home ``~/...``, elsewhere ``<JAX_REPO>``; anything else, a ``--bad-if`` regex, as
    it was)."""
    return tuple(reproduce_argv(argv, project))


def _regular_files(args: argparse.Namespace) -> None:
    """``--script`` and ``--changelog`` must be regular files; a folder, a symbolic link loop or a pipe is said as
    what it is (was: "not found" for any of them, and a --changelog pipe or /dev/zero skipped without a word)."""
    for flag, path, tip in (("script", args.script, "give the path of a Python file that exits 0 when good"),
                            ("--changelog", args.changelog,
                             "give JAX's CHANGELOG.md, a regular file (or leave --changelog out: it is fetched)")):
        problem = file_problem(path) if path is not None else None
        if problem:
            raise UsageError(f"{flag} {path} {problem}{relative_to_what(path)}", tip)


def _commit_ends(parser: argparse.ArgumentParser) -> None:
    """``--good-commit`` / ``--bad-commit``: where the commit search starts and ends (docs/commits.md)."""
    parser.add_argument("--good-commit", default=None, metavar="REV",
                        help="--commits: start (or end) the commit search at this JAX commit or tag without the bug")
    parser.add_argument("--bad-commit", default=None, metavar="REV",
                        help="--commits: end (or start) the commit search at this JAX commit or tag with the bug")


_OP_LINE = re.compile(r"[^:\s]+\.py:[1-9][0-9]*(?::[A-Za-z_][\w.-]*)?")


def _op_line(text: str) -> str:
    """``--op``: a line of the program (``train.py:37``), and maybe one op of it (``train.py:37:lu``); anything else
    is refused here, naming --op (``--op bad`` once became a bisect stopped at "--bad 0.5.0 is skip, not bad")."""
    if not _OP_LINE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be FILE:LINE or FILE:LINE:OP, a line of the program as explain names "
                                         f"it (train.py:37, train.py:37:lu), got {text!r}")
    return text


def _host_devices(text: str) -> int:
    """``--host-devices``: a positive whole number, as a check block's host_devices."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_HOST_DEVICES:
        raise argparse.ArgumentTypeError(f"must be a positive whole number up to {MAX_HOST_DEVICES}, e.g. 4, got {text!r}")
    return int(text)


def _factor(text: str) -> float:
    """``--factor``: a finite number above 1 (how many times worse a probe must be to count as bad)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 1):
        raise argparse.ArgumentTypeError(f"must be a finite number above 1, e.g. 1.5 (a 50% slowdown), got {text!r}")
    return value


def _pin(text: str) -> str:
    """``--pin``: one exact ``NAME==VERSION``, the name in its normal form (``ML_Dtypes`` → ``ml-dtypes``)."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        requirement = None
    specifiers = list(requirement.specifier) if requirement else []
    if requirement is None or requirement.extras or requirement.marker or requirement.url or len(specifiers) != 1 \
            or specifiers[0].operator != "==" or "*" in specifiers[0].version:
        raise argparse.ArgumentTypeError(f"must be one package at one version, NAME==VERSION (e.g. numpy==2.2.1), "
                                         f"got {text!r}")
    name = canonicalize_name(requirement.name)
    if name in ("jax", "jaxlib"):
        raise argparse.ArgumentTypeError(f"{name} is what a bisect walks; pin the packages beside it")
    return f"{name}=={specifiers[0].version}"


def _pins(pins: Sequence[str]) -> tuple[str, ...]:
    """The pins sorted, one per package: a package given twice at two versions is a mistake."""
    by_name: dict[str, str] = {}
    for pin in pins:
        name = pin.split("==", 1)[0]
        if by_name.get(name, pin) != pin:
            raise UsageError(f"--pin {by_name[name]} and --pin {pin} hold {name} at two versions",
                             "give each package one --pin")
        by_name[name] = pin
    return tuple(sorted(by_name.values()))


def _jobs(text: str) -> int:
    """``--jobs``: a whole number of probes per round, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of probes per round, 1 or more, got {text!r}")
    return int(text)


def _target(args: argparse.Namespace) -> Target | None:
    """``--target``: the scaling check compiled for a chip this machine lacks (`kit.targets`)."""
    if args.target is None:
        return None
    builtin_check = builtin(args.check or "")
    if not (builtin_check and builtin_check.compiles_for_targets) and not args.explain:
        raise UsageError("--target compiles the scaling check or an --explain program for a chip: it goes with "
                         "--check scaling or --explain", "e.g. nox -s bisect -- --explain train.py --op "
                         "train.py:39 --good 0.12.0.1 --bad 0.5.3 --target tpu:v5e:2x2")
    if args.backend != "cpu":
        raise UsageError(f"--target installs the release with its chip's compiler: it cannot go with --backend "
                         f"{args.backend}", "drop --backend")
    if args.metric or args.commits:
        raise UsageError("--target judges the compiled HLO of each release: no metric, no commit overlay",
                         "drop --metric and --commits")
    return parse_target(args.target)
