"""The ``jax-kit`` command's project: the folder the user stands in, wherever the kit is installed.

The repository's sessions (``nox -s ...``, ``python -m kit``) read the
checkout's matrix.toml and write beside it, as always. ``jax-kit`` instead:

* reads paths on its command line from the current folder (it never changes
  folder, as nox does for its noxfile);
* writes records and reports to ``./jax-kit-reports/`` (``--out DIR``), laid out
  as the repository's ``reports/`` (``results/``, ``matrix.md``, ``bisect-*.md``);
* keeps release environments, their locks, the probe cache and JAX's clone in
  the user cache every project shares (kit/user_cache.py);
* knows the package's releases and checks (its matrix.toml), plus those of
  ``--config FILE`` or a ``matrix.toml`` in the current folder.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Mapping, Sequence

from .config import Matrix, parse_matrix
from .errors import ConfigError, UsageError
from .json_types import TomlTable
from .package_files import default_file
from .toml_tables import read_toml
from .user_cache import VARIABLE, cache_dir, tagged
from .user_paths import file_problem, folder_or_nothing_yet, writable_folder

REPORTS_FOLDER = "jax-kit-reports"
"""Where a project's records and reports go unless ``--out`` says otherwise."""

USAGE = f"""jax-kit: which JAX releases carry a bug, where did it change, and which release is safe to pick?

  jax-kit scaling VERSION             is jax VERSION affected? (sharded slogdet; installs it era-correctly)
  jax-kit correctness VERSION         large-batch det/slogdet against scipy references
  jax-kit CHECK VERSION               any check of matrix.toml, e.g. one of your own scripts
  jax-kit run CHECK --python PATH     a check with your own interpreter, as it is (nothing installed)
  jax-kit bisect --script ./x.py --good VERSION --bad VERSION
                                      the first release where a script's exit code changes
                                      (--check NAME, --metric NAME, --commits: jax-kit bisect --help)
  jax-kit explain ./train.py [ARGS]   which op of your program is not split across devices, per release
                                      (--releases A,B, --devices N: jax-kit explain --help)
  jax-kit triage ISSUE.md [--run]     a bug report's code as a check: where it reproduces, and the bisect
  jax-kit reduce ./x.py --bad R1 --good R2 --out DIR
                                      the smallest program still showing its problem, and its issue text
                                      (--op FILE:LINE, --time-limit S: jax-kit reduce --help)
  jax-kit matrix                      every check on every release, then the report
  jax-kit report                      matrix.md and matrix.json again from the records alone
  jax-kit audit VERSION               which known JAX problems a release has (--python PATH: your own)
  jax-kit known                       the catalogue of known problems and the ranges the kit measured
  jax-kit plan VERSION                how a release would install, downloading no wheel

Options, before or after the command:
  --out DIR       records and reports (default ./{REPORTS_FOLDER}/: results/, matrix.md, bisect-*.md)
  --config FILE   a matrix.toml adding releases, checks, environments (default ./matrix.toml, if there)
  --version       the kit's version

Paths are read from the current folder. Release environments, their locks, the probe cache and
JAX's clone live in one cache every project shares: $JAX_KIT_CACHE, else the platform's
(~/.cache/jax-kit on Linux)."""

GLOBAL_FLAGS = ("--config", "--out")
_OWN_FLAGS = {"reduce": ("--out",)}
"""A command's own option of a global flag's name, after the command: ``reduce ... --out DIR`` is where its
minimal program and issue text go (docs/reduce.md), not the reports' folder (``jax-kit --out DIR reduce ...``)."""
"""The options every ``jax-kit`` command takes, before or after its name."""


@dataclasses.dataclass(frozen=True)
class ProjectOptions:
    """``--config`` and ``--out`` as given (None: not given), and the command line without them."""

    config: Path | None
    out: Path | None
    argv: tuple[str, ...]


def project_options(argv: Sequence[str]) -> ProjectOptions:
    """``--config FILE`` and ``--out DIR`` (or ``--flag=VALUE``) taken out of ``argv`` wherever they stand."""
    given: dict[str, Path] = {}
    rest: list[str] = []
    items = iter(argv)
    for arg in items:
        flag, equals, value = arg.partition("=")
        if flag not in GLOBAL_FLAGS or (flag in _OWN_FLAGS.get(rest[0] if rest else "", ())):
            rest.append(arg)
            continue
        if not equals:
            value = next(items, "")
        if not value or value.startswith("-"):
            raise UsageError(f"{flag} needs a {'file' if flag == '--config' else 'folder'}",
                             f"e.g. {flag} {'matrix.toml' if flag == '--config' else REPORTS_FOLDER}")
        given[flag] = Path(value).expanduser()
    if "--slurm" in rest:  # its job scripts `cd` into the checkout and read matrix.toml there
        raise UsageError("jax-kit does not submit to SLURM yet: the job scripts run the kit from a repository checkout",
                         "run nox -s matrix -- --slurm or nox -s bisect -- --slurm from a clone of the repository")
    return ProjectOptions(given.get("--config"), given.get("--out"), tuple(rest))


def project_matrix(options: ProjectOptions, here: Path | None = None,
                   environ: Mapping[str, str] | None = None) -> Matrix:
    """The matrix ``jax-kit`` runs with from the folder ``here`` (the current one): the package's defaults,
    the project's matrix.toml added, its records in the project and its environments in the user cache."""
    here = Path(os.path.abspath(here or Path.cwd()))
    config = _config_file(options.config, here)
    defaults = read_toml(default_file("matrix.toml"))
    own = read_toml(config) if config.exists() else {}
    matrix = parse_matrix(merged_tables(defaults, own), config)
    given = own.get("kit")
    kit: TomlTable = given if isinstance(given, dict) else {}
    cache = cache_dir(environ)
    if options.out is not None:
        writable_folder(here / options.out, "--out")
    results = (here / options.out / "results" if options.out is not None
               else matrix.results_dir if "results_dir" in kit else here / REPORTS_FOLDER / "results")
    envs = matrix.envs_dir if "envs_dir" in kit else cache / "jax-envs"
    if "envs_dir" not in kit and _uses_cache(options.argv):
        _tag(cache, environ)
    where = "--out" if options.out is not None else "the project's reports folder"
    outside = matrix.results_outside if options.out is None and "results_dir" in kit else ""  # --out: asked
    return dataclasses.replace(matrix, results_dir=folder_or_nothing_yet(results, where, UsageError),
                               envs_dir=envs, shared_dir=cache, results_outside=outside)


def _config_file(given: Path | None, here: Path) -> Path:
    """``--config`` (relative to ``here``), else ``here/matrix.toml``, which need not exist."""
    if given is None:
        return here / "matrix.toml"
    path = here / given
    problem = file_problem(path)
    if problem:
        relative = "" if given.is_absolute() else f" (relative to the current folder, {here})"
        raise UsageError(f"--config {str(given)!r} {problem}{relative}",
                         "give a matrix.toml that adds releases, checks or environments "
                         "(README: Adding a release or a check)")
    return path


def _uses_cache(argv: tuple[str, ...]) -> bool:
    """Whether the command builds or reads what the user cache keeps: ``known`` only lists the catalogue (a
    read-only HOME blocked it), unless it measures."""
    return not (argv[:1] == ("known",) and not {"--measure", "--verify"} & set(argv))


def _tag(cache: Path, environ: Mapping[str, str] | None = None) -> None:
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or Path.home())
    if not environ.get(VARIABLE) and cache.is_relative_to(home) and not home.is_dir():
        raise ConfigError(f"the user cache {cache} would be made under HOME={home}, which is no folder here: the kit "
                          "does not make a home folder", "set HOME to this user's home, or JAX_KIT_CACHE to a folder "
                          "this user can write")
    try:
        tagged(cache)
    except OSError as error:
        raise ConfigError(f"the user cache {cache} cannot be made ({error.strerror or error})",
                          "set JAX_KIT_CACHE to a folder this user can write") from None


def merged_tables(defaults: TomlTable, own: TomlTable) -> dict[str, object]:
    """The package's matrix.toml with a project's added: its releases beside the package's (its own entry for a
    release the package has too), its checks' keys over the package's, its ``[install]`` keys over the package's.

    The package's ``[kit]`` folders are the repository's and never a project's: only the project's own count.
    Anything malformed is passed on as it is, for `parse_matrix` to name.
    """
    merged: dict[str, object] = {**defaults, **own, "kit": own.get("kit", {})}
    merged["install"] = _over(defaults.get("install"), own.get("install"))
    merged["checks"] = _over(defaults.get("checks"), own.get("checks"), depth=2)
    releases, added = defaults.get("release", []), own.get("release", [])
    if isinstance(added, list) and isinstance(releases, list):
        mine = {item.get("version") for item in added if isinstance(item, dict)}
        merged["release"] = [item for item in releases
                             if not isinstance(item, dict) or item.get("version") not in mine] + added
    return merged


def _over(base: object, top: object, depth: int = 1) -> object:
    """``top``'s keys over ``base``'s, tables merged ``depth`` levels down (a check's presets too)."""
    if not isinstance(base, dict) or not isinstance(top, dict):
        return base if top is None else top
    merged = dict(base)
    for key, value in top.items():
        merged[key] = _over(base.get(key), value, depth - 1) if depth > 0 and key in base else value
    return merged
