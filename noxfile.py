"""Sessions generated from matrix.toml.

    nox -l                          # what there is
    nox -s scaling-0.6.0            # one release, one check
    nox -s correctness-0.4.35
    nox -s scaling-mine             # an [[environment]] of matrix.toml: your own interpreter, as it is
    nox -s matrix                   # every check on every release, then the report
    nox -s report                   # rebuild reports/matrix.md from records only
    nox -s bisect -- --check scaling --good 0.6.0 --bad 0.4.35
    nox -s triage -- issue.md       # a bug report's code as a check: where it reproduces, and the bisect
    nox -s explain -- train.py      # which op of your program is not split across devices, per release
    nox -s reduce -- train.py --bad 0.4.35 --good 0.5.3 --out min/   # the minimal repro and its issue text
    nox -s tests                    # the kit's own tests: the unit lane (Python 3.9 and 3.13)
    nox -s tests-machine            # the kit end to end on a fake machine
    nox -s tests-integration        # the rest: real releases, a real SLURM

The JAX sessions run in nox's own process (python=False): the kit builds one
environment per release itself, era-resolved with uv, and shares it between
checks, the matrix and bisect. Options after ``--`` are in docs/install.md.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import nox

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kit import cli
from kit.exit_codes import EXIT_INTERRUPTED, EXIT_NETWORK, EXIT_NOT_INSTALLABLE, EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE
from kit.config import load_matrix
from kit.errors import KitError
from kit.install import bytecode_kept_under, find_interpreter

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

try:
    MATRIX = load_matrix(HERE / "matrix.toml")
except KitError as exc:
    print(exc.render(), file=sys.stderr)
    sys.exit(2)


def _run(session: nox.Session, argv: list[str]) -> None:
    """Run a kit command in-process and turn its exit code into nox's terms."""
    reproduce = "nox -s " + session.name + (" -- " + shlex.join(session.posargs) if session.posargs else "")
    code = cli.main(argv, log=session.log, matrix_path=str(HERE / "matrix.toml"), reproduce=reproduce)
    if code in (EXIT_USAGE, EXIT_NETWORK, EXIT_INTERRUPTED):  # Ctrl-C: 130, as the shell reads an interrupted command
        # The ERROR and TIP above say it all; exit as the kit's command line does
        # (session.error would add a second message and exit 1).
        raise SystemExit(code)
    if code == EXIT_NOT_INSTALLABLE:
        session.skip("not installable here; the record above says why and what to do")
    if code == EXIT_UNSUPPORTED:
        session.skip("this release cannot run that here; the record above says why")
    if code != EXIT_OK:
        session.error(f"exit code {code} (see above)")


def _check_session(check: str, version: str, note: str) -> None:
    description = MATRIX.runnable_checks[check].description

    def session(s: nox.Session) -> None:
        _run(s, ["run", check, version, *s.posargs])

    session.__doc__ = f"jax {version}: {description}" + (f" ({note})" if note else "")
    nox.session(name=f"{check}-{version}", python=False, default=False,
                tags=[check, f"jax-{version}"])(session)


for _release in MATRIX.releases:
    for _check in MATRIX.runnable_checks:
        _check_session(_check, _release.version, _release.note)


def _environment_session(check: str, name: str, python: Path, note: str) -> None:
    """`nox -s scaling-<name>`: the check with an [[environment]]'s interpreter, as it is (nothing installed)."""
    description = MATRIX.runnable_checks[check].description

    def session(s: nox.Session) -> None:
        _run(s, ["run", check, name, *s.posargs])

    session.__doc__ = f"your environment {name} ({python}): {description}" + (f" ({note})" if note else "")
    nox.session(name=f"{check}-{name}", python=False, default=False, tags=[check, f"env-{name}"])(session)


for _environment in MATRIX.environments:
    for _check in MATRIX.runnable_checks:
        _environment_session(_check, _environment.name, _environment.python, _environment.note)

# `nox -s scaling-9.9.9` for a release not in matrix.toml: nox will say "Sessions
# not found"; say first where sessions come from.
for _hint in cli.unknown_session_hints(MATRIX, sys.argv[1:]):
    print(_hint, file=sys.stderr)


@nox.session(python=False, default=False)
def matrix(session: nox.Session) -> None:
    """Every check on every release in matrix.toml, then reports/matrix.md."""
    _run(session, ["matrix", *session.posargs])
    _run(session, ["report"])  # the sweep's options are not the report's


@nox.session(python=False, default=False)
def plan(session: nox.Session) -> None:
    """Show how a release installs (e.g. `-- 0.4.35 --backend cuda`), downloading nothing."""
    _run(session, ["plan", *session.posargs])


@nox.session(python=False, default=False)
def bisect(session: nox.Session) -> None:
    """Find the first JAX release where a check's verdict changes (and with --commits, the JAX commit)."""
    _run(session, ["bisect", *session.posargs])


@nox.session(python=False, default=False)
def triage(session: nox.Session) -> None:
    """A check from a bug report (`-- ISSUE.md`): where it reproduces, and the bisect to run (`--run` runs it)."""
    _run(session, ["triage", *session.posargs])


@nox.session(python=False, default=False)
def explain(session: nox.Session) -> None:
    """Which op of a program is not split across devices (`-- PROGRAM [ARGS...] --releases A,B`)."""
    # The program runs in the folder nox was called from, as `python PROGRAM` would (nox moves to this one).
    _run(session, ["explain", "--called-from", session.invoked_from, *session.posargs])


@nox.session(python=False, default=False)
def reduce(session: nox.Session) -> None:
    """The smallest program that still shows a problem on one release and not another (`-- PROGRAM --bad R1 --good R2 --out DIR`)."""
    _run(session, ["reduce", "--called-from", session.invoked_from, *session.posargs])


@nox.session(python=False, default=False)
def known(session: nox.Session) -> None:
    """The catalogue of known JAX problems and their measured ranges (`-- --json`, `--measure`, `--verify`)."""
    _run(session, ["known", *session.posargs])


@nox.session(python=False, default=False)
def audit(session: nox.Session) -> None:
    """Which known problems one installation has (`-- 0.4.35`, or `-- --python /abs/venv/bin/python`)."""
    _run(session, ["audit", *session.posargs])


@nox.session(python=False, default=False)
def report(session: nox.Session) -> None:
    """Rebuild reports/matrix.md and matrix.json from the records, installing nothing."""
    _run(session, ["report", *session.posargs])


# The kit's own tests, in three lanes. `nox -s tests` is the unit lane for everyday work: no real JAX
# install, no SLURM, nothing end to end, on the oldest and the newest Python the kit supports.
# `nox -s tests-machine` runs the kit end to end on a fake machine (fake releases on a local index) and
# the modules tests/conftest.py names END_TO_END (checks, kits and histories in child processes, for
# seconds each): most of the time, so on one Python. `nox -s tests-integration` is the rest: real
# releases, real compiled HLO, a real single-node SLURM. CI runs all three.
TEST_PYTHONS = ("3.9", "3.13")
UNIT_LANE = "not integration and not slurm and not machine"
COMPILED = {"UV_COMPILE_BYTECODE": "1"}
"""The test tools installed with their bytecode: where PYTHONDONTWRITEBYTECODE is set (CI's machines) every run
would otherwise compile numpy, scipy, matplotlib and hypothesis again in each process it starts."""
MACHINE_LANE = "machine and not integration and not slurm"
WORKERS = ("--numprocesses=auto", "--maxprocesses=4")
"""The unit and machine lanes spread over the cores (pytest-xdist), at most four workers. The unit lane's ~2,100
tests are a few hundredths of a second each, a fifth of them waiting on a child Python: two workers took it from
~50 s to ~31 s here (2 cores), and past four each worker's own start and collection cost more than it shares.
The machine lane's ~230 tests wait on child processes and local servers: 5.4 min in one process, 3.2 with two.
Every test already has its own temporary folder and free ports; ``-- -n 0`` runs them in one process."""
BYTECODE_KEPT = bytecode_kept_under(HERE / ".nox" / "pycache")
"""The tests' own bytecode kept between runs, under .nox (as kit/install/bytecode.py does for a release's
environment): where PYTHONDONTWRITEBYTECODE is set, pytest rewrote and compiled all 300 test modules again on
every run (8 of the unit lane's ~60 s here), and every child process compiled the kit again."""


def _pythons_where_nox_looks(versions: tuple[str, ...]) -> None:
    """Link pyenv's interpreters for ``versions`` into a folder put first on PATH.

    nox looks for ``python3.9`` on PATH, and pyenv's shims answer only for the versions made
    active (`pyenv global`), so a machine with every Python installed still failed to find them.
    """
    folder = HERE / ".nox" / "pythons"
    folder.mkdir(parents=True, exist_ok=True)
    for version in versions:
        found = find_interpreter(version)
        link = folder / f"python{version}"
        if found is None or (link.is_symlink() and link.resolve() == found.resolve()):
            continue
        # Made aside and moved into place: CI starts two nox processes at once, and unlink-then-link raced
        # (FileExistsError when the other made the link in between).
        aside = folder / f".python{version}.{os.getpid()}"
        aside.unlink(missing_ok=True)
        aside.symlink_to(found)
        os.replace(aside, link)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


_pythons_where_nox_looks(TEST_PYTHONS)


@nox.session(python=TEST_PYTHONS)
def tests(session: nox.Session) -> None:
    """The unit lane: no JAX release installed, no SLURM, no fake machine (and mypy, on the newest)."""
    session.install("-r", "requirements-test.txt", env=COMPILED)
    if session.python == TEST_PYTHONS[-1]:
        session.run("mypy")  # one Python is enough: it checks for the kit's target version either way
    # The property tests draw their examples thoroughly on the newest Python only (tests/conftest.py).
    brief = [] if session.python == TEST_PYTHONS[-1] else ["--hypothesis-profile=brief"]
    session.run("pytest", "-m", UNIT_LANE, *WORKERS, *brief, *session.posargs, env=BYTECODE_KEPT)


@nox.session(name="tests-machine", python=TEST_PYTHONS[-1])
def tests_machine(session: nox.Session) -> None:
    """The kit end to end on a fake machine: fake releases on a local index, bisects, sweeps, faults."""
    session.install("-r", "requirements-test.txt", env=COMPILED)
    session.run("pytest", "-m", MACHINE_LANE, *WORKERS, *session.posargs, env=BYTECODE_KEPT)


@nox.session(name="tests-integration", python=TEST_PYTHONS[-1])
def tests_integration(session: nox.Session) -> None:
    """The rest: real JAX releases from the index, real HLO, a real SLURM (scripts/slurm-local.sh)."""
    session.install("-r", "requirements-test.txt", env=COMPILED)
    # The few tests that need the machine to themselves first, in one process; then the rest on two workers,
    # since most of their time waits on a release's own processes (CI's 20 minutes were nearly spent in one).
    session.run("pytest", "-m", "(integration or slurm) and serial", *session.posargs, env=BYTECODE_KEPT,
                success_codes=[0, 5])  # 5: none selected (a -k of the caller's that picks none of them)
    session.run("pytest", "-m", "(integration or slurm) and not serial", "--numprocesses=2", *session.posargs,
                env=BYTECODE_KEPT)
