"""matrix.toml: which JAX releases to test, how to install them, which checks to run (`kit.check_settings`).

Read once, validated on load; then the questions every command asks of it, at the end: where a project's pages
and catalogues are, how its commands are spelt. Every mistake is reported as one sentence that
names the key and the fix (``ConfigError``), never as a traceback: the people
editing this file are scientists adding the release they run on a cluster.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Mapping

from packaging.version import Version

from repro import parameters as parameter_rules

from .check_settings import BUILTIN_CHECKS, Check, CheckKind, parse_any_check, parse_check
from .errors import ConfigError, KitError, UsageError
from .json_types import JsonObject, TomlTable
from .layout import Layout
from .package_files import catalogue_folder

# The TOML table checks are shared with the catalogue's entries; the short names keep this module's calls as they read.
from .toml_tables import known_keys as _known_keys, read_toml, string as _string, strings as _strings, table as _table
from .toml_tables import whole_number as _whole
from .user_paths import checked_find_links, checked_index_url, folder_or_nothing_yet, results_outside, script_bytes

from .targets import BACKENDS as BACKENDS, Target, configured_targets  # BACKENDS: where the rest of the kit has always asked

# A release as JAX numbers them: digits and dots, nothing around them.
_RELEASE_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)+")

# An [[environment]]'s name becomes part of session names (`scaling-<name>`)
# and record file names, and stands where a release number would
# (`python -m kit run scaling <name>`): a letter first, so it never reads as one.
_ENVIRONMENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def release_number(text: str, where: str, error: type[KitError] = UsageError) -> str:
    """``text`` when it is a plain JAX release number (``0.4.35``); else ``error``, one sentence naming it.

    The one parser of a JAX version, for matrix.toml's releases (`ConfigError`)
    and every command line that names one (`UsageError`), so a version travels
    as this string after it.
    """
    if not isinstance(text, str) or not _RELEASE_NUMBER.fullmatch(text):
        raise error(f"{where} {text!r} is not a plain JAX release number", "write it like 0.4.35: digits and dots, nothing else")
    return text


def is_release_number(text: str) -> bool:
    """Does ``text`` read as a JAX release number (``0.4.35``) rather than a name?"""
    return bool(_RELEASE_NUMBER.fullmatch(text))


def is_environment_name(text: str) -> bool:
    """Could ``text`` name an ``[[environment]]`` (a letter first, then letters, digits, - and _)?"""
    return bool(_ENVIRONMENT_NAME.fullmatch(text))


@dataclass(frozen=True)
class Release:
    """One JAX release and whatever it needs to install."""

    version: str
    note: str = ""
    python: str | None = None
    find_links: tuple[str, ...] = ()
    extra_index_urls: tuple[str, ...] = ()

    @property
    def key(self) -> Version:
        return Version(self.version)


@dataclass(frozen=True)
class InstallSettings:
    """How every release is installed unless the release says otherwise."""

    pythons: tuple[str, ...] = ("3.13", "3.12", "3.11", "3.10", "3.9")
    index_url: str = "https://pypi.org/simple"
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    # Dependencies are resolved as of the release's upload date plus this slack, so a numpy/scipy
    # published days after the release (and tested by its users) still counts as its era.
    era_slack_days: int = 14
    # JAX's own page of jaxlib wheels the index pruned, tried as a find-links
    # when the index lacks a release's jaxlib ("" turns that off).
    jaxlib_archive: str = "https://storage.googleapis.com/jax-releases/jax_releases.html"


@dataclass(frozen=True)
class NamedEnvironment:
    """A user's own installation (``[[environment]]``): checks run with its interpreter as it is."""

    name: str
    python: Path
    """The interpreter, absolute (a relative path in matrix.toml is relative to that file)."""
    note: str = ""


@dataclass(frozen=True)
class Matrix:
    path: Path
    releases: tuple[Release, ...]
    checks: Mapping[str, Check]
    install: InstallSettings = field(default_factory=InstallSettings)
    results_dir: Path = Path("reports/results")
    envs_dir: Path = Path(".nox/jax-envs")
    environments: tuple[NamedEnvironment, ...] = ()
    jax_repo: Path | None = None  # [install] jax_repo: a JAX clone for bisect --commits (no lock depends on it)
    shared_dir: Path | None = None  # the jax-kit command's user cache: probes every project shares (kit/project.py)
    results_outside: str = ""  # said before a command writes: the results folder leads outside the project
    targets: tuple[Target, ...] = ()  # [kit] targets: chips `nox -s matrix` also compiles for (docs/targets.md)

    def release(self, version: str) -> Release:
        """The configured release, or an ad-hoc one for a version the matrix lacks.

        ``version`` has been through `release_number` where it entered.
        """
        for release in self.releases:
            if release.key == Version(version):
                return release
        return Release(version=version, note="not in matrix.toml")

    def environment(self, name: str) -> NamedEnvironment:
        """The ``[[environment]]`` called ``name``; ConfigError naming the known ones."""
        for environment in self.environments:
            if environment.name == name:
                return environment
        known = ", ".join(e.name for e in self.environments) or "none yet"
        raise ConfigError(f"{name!r} is neither a JAX release number nor an [[environment]] in matrix.toml",
                          f"write a release like 0.4.35, one of the environments ({known}), "
                          "or --python PATH for any interpreter")

    def check(self, name: str) -> Check:
        """matrix.toml's check ``name``, or a built-in one it does not list, with its defaults; else ConfigError."""
        runnable = self.runnable_checks
        if name not in runnable:
            raise ConfigError(f"unknown check {name!r}", f"use one of: {', '.join(sorted(runnable))}")
        return runnable[name]

    @cached_property
    def runnable_checks(self) -> Mapping[str, Check]:
        """Every check a run may name: matrix.toml's (what `nox -s matrix` sweeps), then each built-in check it does
        not list, with the defaults its module declares (kit/checks)."""
        unlisted = {name: parse_check(name, dict(parameter_rules.DEFAULTS[name]))
                    for name in BUILTIN_CHECKS if name not in self.checks}
        return {**self.checks, **unlisted}

    @property
    def layout(self) -> Layout:  # where everything the kit writes goes, beside these two folders (kit/layout.py)
        return Layout.of(self.results_dir, self.envs_dir, self.shared_dir)


def load_matrix(path: Path | str = "matrix.toml") -> Matrix:
    """Read and validate matrix.toml; raise ConfigError naming the bad key."""
    path = Path(path)
    try:
        raw = read_toml(path)
    except FileNotFoundError:
        raise ConfigError(f"{path} not found", "run from the repository root, where matrix.toml lives") from None
    return parse_matrix(raw, path)


def parse_matrix(raw: TomlTable, path: Path = Path("matrix.toml")) -> Matrix:
    _known_keys(raw, {"kit", "install", "release", "checks", "environment"}, "")
    kit = _table(raw, "kit", "")
    _known_keys(kit, {"results_dir", "envs_dir", "targets"}, "kit")
    install = _parse_install(install_raw := _table(raw, "install", ""), path.parent)
    releases = _parse_releases(raw.get("release", []), path.parent)
    checks_raw = _table(raw, "checks", "")
    if not checks_raw:
        raise ConfigError("matrix.toml has no [checks.*] tables", "add [checks.scaling] and [checks.correctness]")
    checks = {name: parse_any_check(name, _table(checks_raw, name, "checks"), path) for name in checks_raw}
    results_dir = path.parent / _string(kit, "results_dir", "kit", "reports/results")  # relative to matrix.toml
    return Matrix(
        path=path,
        releases=releases,
        checks=checks,
        environments=_parse_environments(raw.get("environment", []), path, releases, tuple(checks)),
        install=install,
        results_dir=folder_or_nothing_yet(results_dir, "kit.results_dir"),
        results_outside=results_outside(results_dir, path.parent),
        envs_dir=folder_or_nothing_yet(path.parent / _string(kit, "envs_dir", "kit", ".nox/jax-envs"), "kit.envs_dir"),
        jax_repo=path.parent / Path(r).expanduser() if (r := _string(install_raw, "jax_repo", "install", "")) else None,
        targets=configured_targets(_strings(kit, "targets", "kit"), path.parent),
    )


def _parse_install(table: TomlTable, folder: Path) -> InstallSettings:
    where = "install"
    _known_keys(table, {"pythons", "index_url", "extra_index_urls", "find_links", "era_slack_days",
                        "jaxlib_archive", "jax_repo"}, where)
    defaults = InstallSettings()
    pythons = _strings(table, "pythons", where, defaults.pythons)
    for py in pythons:
        if not _looks_like_python(py):
            raise ConfigError(f"install.pythons has {py!r}", 'list interpreter versions like "3.12"')
    slack = _whole(table.get("era_slack_days", defaults.era_slack_days))
    if slack is None or not 0 <= slack <= 3650:  # ten years; far more is past any calendar (OverflowError)
        raise ConfigError("install.era_slack_days must be a whole number of days from 0 to 3650", "e.g. era_slack_days = 14")
    return InstallSettings(
        pythons=pythons,
        index_url=checked_index_url(_string(table, "index_url", where, defaults.index_url), f"{where}.index_url"),
        extra_index_urls=_strings(table, "extra_index_urls", where, ()),
        # URLs, or folders that are there, relative to matrix.toml: nox runs uv from its folder.
        find_links=checked_find_links(_strings(table, "find_links", where, ()), f"{where}.find_links", folder, ConfigError),
        era_slack_days=slack,
        jaxlib_archive=_string(table, "jaxlib_archive", where, defaults.jaxlib_archive),
    )


def _parse_releases(items: object, folder: Path) -> tuple[Release, ...]:
    if not isinstance(items, list) or not items:
        raise ConfigError("matrix.toml has no [[release]] entries", 'add one: [[release]] version = "0.6.0"')
    releases: list[Release] = []
    seen: set[Version] = set()
    for i, item in enumerate(items):
        where = f"release[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{where} must be a table", "write it as [[release]] followed by key = value lines")
        _known_keys(item, {"version", "note", "python", "find_links", "extra_index_urls"}, where)
        version = item.get("version")
        if not isinstance(version, str):
            raise ConfigError(f"{where} has no version string", 'add version = "0.4.35"')
        parsed = Version(release_number(version, f"{where}.version", ConfigError))
        where = f"release {version}"
        if parsed in seen:
            raise ConfigError(f"{where} is listed twice", "keep one [[release]] entry per version")
        seen.add(parsed)
        python = item.get("python")
        if python is not None and not (isinstance(python, str) and _looks_like_python(python)):
            raise ConfigError(f"{where}: python must be a version string", 'e.g. python = "3.11"')
        releases.append(
            Release(
                version=version,
                note=_string(item, "note", where, ""),
                python=python,
                find_links=checked_find_links(_strings(item, "find_links", where, ()), f"{where}: find_links", folder,
                                              ConfigError),
                extra_index_urls=_strings(item, "extra_index_urls", where, ()),
            )
        )
    return tuple(sorted(releases, key=lambda r: r.key))


def _parse_environments(items: object, path: Path, releases: tuple[Release, ...],
                        checks: tuple[str, ...]) -> tuple[NamedEnvironment, ...]:
    """The ``[[environment]]`` blocks: a name that is a safe session name and clashes with nothing, a python."""
    if not isinstance(items, list):
        raise ConfigError("environment must be a list of tables", 'write each as [[environment]] name = "..."')
    found: list[NamedEnvironment] = []
    for i, item in enumerate(items):
        where = f"environment[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{where} must be a table", "write it as [[environment]] followed by key = value lines")
        _known_keys(item, {"name", "python", "note"}, where)
        name = _string(item, "name", where, "")
        if not is_environment_name(name):
            raise ConfigError(f"{where}.name {name!r} cannot name sessions (scaling-<name>) and record files",
                              'start with a letter, then letters, digits, - and _, e.g. name = "cluster-module"')
        where = f"environment {name}"
        if any(other.name == name for other in found):
            raise ConfigError(f"{where} is listed twice", "keep one [[environment]] per name")
        python = _string(item, "python", where, "")
        if not python:
            raise ConfigError(f"{where} has no python", 'add python = "/path/to/bin/python" (the interpreter to use)')
        found.append(NamedEnvironment(name, path.parent / Path(python).expanduser(), _string(item, "note", where, "")))
    _no_session_clashes(found, releases, checks)
    return tuple(found)


def _no_session_clashes(environments: list[NamedEnvironment], releases: tuple[Release, ...],
                        checks: tuple[str, ...]) -> None:
    """Every session name (``<check>-<release>``, ``<check>-<environment>``) must name one thing only.

    Check and environment names may hold ``-``, so check ``slogdet`` with
    environment ``time-mine`` and check ``slogdet-time`` with environment
    ``mine`` would both be ``slogdet-time-mine``: refused here, at load, rather
    than one session silently shadowing the other. (An environment's name has
    no dot, so it never meets a release's session.)
    """
    sessions = {f"{check}-{release.version}": f"check {check} on release {release.version}"
                for check in checks for release in releases}
    for environment in environments:
        if environment.name in checks:
            raise ConfigError(f"environment name {environment.name!r} is also a check's name",
                              "give the environment another name, e.g. " + repr(f"my-{environment.name}"))
        for check in checks:
            session = f"{check}-{environment.name}"
            if session in sessions:
                raise ConfigError(f"environment {environment.name!r} would make session {session}, which is "
                                  f"already {sessions[session]}", "give the environment another name")
            sessions[session] = f"check {check} in environment {environment.name}"


def configured_parameters(matrix: Matrix, name: str) -> JsonObject:
    """What `nox -s matrix` runs for check ``name``: what its records must match to count and stay current.

    A built-in check: matrix.toml's parameters (in their normal form). A script
    check: the script's path and SHA-256 and its devices, so an edited script
    makes its records stale. ConfigError when the script went missing since load.
    """
    check = matrix.check(name)
    if check.kind is CheckKind.BUILTIN:
        return dict(check.parameters)
    return script_parameters(check, matrix.path.parent)


def configured_processes(matrix: Matrix, name: str) -> int:
    """How many processes each run of check ``name`` starts (its ``processes`` parameter; 1 where it has none)."""
    processes = configured_parameters(matrix, name).get("processes") or 1
    return int(processes) if isinstance(processes, (int, float, str)) else 1


def script_parameters(check: Check, root: Path) -> JsonObject:
    """A script check's parameters in its records: what it ran, and every setting that can change its verdict.

    The script's path (relative to ``root``, matrix.toml's folder, where it is
    inside) and SHA-256, its devices, and, where set, its extra packages and
    ``bad_if``: a record of other settings is not the same measurement.
    Set only when set, so records from before these settings stay current.
    ConfigError when the script went missing (`user_paths.script_bytes`).
    """
    assert check.script is not None
    try:
        shown = str(check.script.relative_to(root.resolve()))
    except ValueError:
        shown = str(check.script)
    parameters: JsonObject = {"script": shown, "script_sha256": hashlib.sha256(script_bytes(check.script, check.name)).hexdigest(),
                              "host_devices": check.host_devices,
                              **(check.explain.as_parameters() if check.explain is not None else {})}
    if check.requires:
        parameters["requires"] = list(check.requires)
    if check.bad_if is not None:
        parameters["bad_if"] = check.bad_if.pattern
    return parameters


def _looks_like_python(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 2 and all(p.isdigit() for p in parts)


# The questions asked of a loaded matrix: where its project keeps things, how its front door spells commands.


def index_pages(matrix: Matrix, environ: Mapping[str, str] | None = None) -> Path | None:
    """Where jax-kit keeps the package index's pages and JAX's changelog: in the user cache, not in the user's
    folder (kit/install/index.py's default, ``./.cache/kit``). None: that default, or ``KIT_CACHE_DIR`` if set."""
    environ = os.environ if environ is None else environ
    if matrix.shared_dir is None or environ.get("KIT_CACHE_DIR"):
        return None
    return matrix.shared_dir / "index-pages"


def bisect_command(matrix: Matrix) -> str:
    """How a bisect's command line begins where reports and records quote it: ``jax-kit bisect`` in a project,
    the repository's session otherwise."""
    return "jax-kit bisect" if matrix.shared_dir is not None else "nox -s bisect --"


def run_command(matrix: Matrix, check: str, version: str) -> str:
    """The command that runs ``check`` on ``version`` as the front door in use spells it (before its flags)."""
    if matrix.shared_dir is not None:
        return f"jax-kit {check} {version}"
    return f"python -m kit run {check} {version}"


def catalogue_folders(matrix: Matrix) -> list[Path]:
    """The catalogues of known problems explain, triage, the report and audit read: the package's ``known/``, then
    the project's own ``known/`` beside matrix.toml (its entries added, one of the same id replacing the kit's)."""
    folders = [catalogue_folder()]
    beside = matrix.path.parent / "known"
    if beside.is_dir() and beside.resolve() != folders[0].resolve():
        folders.append(beside)
    return folders


def legacy_known_problems(matrix: Matrix) -> str:
    """A sentence for a project's ``known_problems.toml``, no longer read ("" where there is none): its problems are
    catalogue entries now, each a file of ``known/`` (docs/known.md, "Moving known_problems.toml")."""
    beside = matrix.path.parent / "known_problems.toml"
    if not beside.is_file():
        return ""
    return (f"note: {beside.name} beside {matrix.path.name} is no longer read: known problems are entries of the "
            "catalogue now; move each [[problem]] into known/KEY.toml beside a check KEY.py (docs/known.md, "
            "'Moving known_problems.toml')")
