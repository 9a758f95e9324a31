"""Known upstream problems: the only upstream facts the report states, read from known_problems.toml.

Each entry names a JAX bug a check looks for, where it shows, and the change
that fixed it upstream, so matrix.md can put the release range the records
measured next to the release the fix went into. These are citations, never
verdicts: every verdict in the report comes from a record. They are data
(``known_problems.toml`` next to matrix.toml) so a user documents their own
bug next to their own check, and the report cites it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError
from ..package_files import default_file
from ..toml_tables import known_keys, read_toml, required_string, strings

FILE_NAME = "known_problems.toml"
DEFAULT_PATH = default_file(FILE_NAME)


@dataclass(frozen=True)
class UpstreamChange:
    """A change in JAX that fixed a problem, as cited in the report."""

    release: str
    title: str
    url: str
    commit: str
    verified: str
    related: tuple[str, ...] = ()


@dataclass(frozen=True)
class KnownProblem:
    key: str
    check: str
    title: str
    links: tuple[str, ...]
    fix: UpstreamChange | None
    """None while upstream has no fix (a user's own open bug)."""
    # Where the bug shows; a clean result on another backend does not clear a release.
    shows_on: tuple[str, ...] = ("cpu", "gpu")


def load_known_problems(path: Path = DEFAULT_PATH) -> tuple[KnownProblem, ...]:
    """The problems in ``path``; none when the file does not exist; ConfigError naming a bad entry."""
    path = Path(path)
    try:
        raw = read_toml(path)
    except FileNotFoundError:
        return ()
    items = raw.get("problem", [])
    if set(raw) - {"problem"} or not isinstance(items, list):
        raise ConfigError(f"{path} must hold only [[problem]] entries", "see the comment at the top of the file")
    problems = [_problem(item, f"problem[{i}]", path.name) for i, item in enumerate(items)]
    keys = [p.key for p in problems]
    duplicate = next((k for k in keys if keys.count(k) > 1), None)
    if duplicate:
        raise ConfigError(f"{path.name} lists problem {duplicate!r} twice", "give each problem its own key")
    return tuple(problems)


_PROBLEM_KEYS = {"key", "check", "title", "links", "shows_on", "fix",
                 "workaround", "workaround_measured", "fingerprint"}  # read by kit.explain.known (explain matches fingerprints)
_FIX_KEYS = {"release", "title", "url", "commit", "verified", "related"}


def _problem(item: Any, entry: str, source: str) -> KnownProblem:
    where = f"{source} {entry}"
    if not isinstance(item, dict):
        raise ConfigError(f"{where} must be a table", "write it as [[problem]] followed by key = value lines")
    known_keys(item, _PROBLEM_KEYS, entry, source)
    fix = item.get("fix")
    if fix is not None and not isinstance(fix, dict):
        raise ConfigError(f"{where}.fix must be a table", "write it as [problem.fix]")
    return KnownProblem(
        key=required_string(item, "key", where),
        check=required_string(item, "check", where),
        title=required_string(item, "title", where),
        links=strings(item, "links", where),
        fix=_fix(fix, f"{entry}.fix", source) if fix is not None else None,
        shows_on=strings(item, "shows_on", where, ("cpu", "gpu")),
    )


def _fix(table: Mapping[str, Any], entry: str, source: str) -> UpstreamChange:
    where = f"{source} {entry}"
    known_keys(table, _FIX_KEYS, entry, source)
    return UpstreamChange(
        release=required_string(table, "release", where), title=required_string(table, "title", where),
        url=required_string(table, "url", where),
        commit=str(table.get("commit", "")), verified=str(table.get("verified", "")),
        related=strings(table, "related", where),
    )
