"""Known upstream problems: the only upstream facts the report states, read from known_problems.toml.

Each entry names a JAX bug a check looks for, where it shows, and the change
that fixed it upstream, so matrix.md can put the release range the records
measured next to the release the fix went into. These are citations, never
verdicts: every verdict in the report comes from a record. They are data
(``known_problems.toml`` next to matrix.toml) so a user documents their own
bug next to their own check, and the report cites it the same way.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

FILE_NAME = "known_problems.toml"
DEFAULT_PATH = Path(__file__).resolve().parents[2] / FILE_NAME


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
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", "fix the line named above") from None
    items = raw.get("problem", [])
    if set(raw) - {"problem"} or not isinstance(items, list):
        raise ConfigError(f"{path} must hold only [[problem]] entries", "see the comment at the top of the file")
    problems = [_problem(item, f"{path.name} problem[{i}]") for i, item in enumerate(items)]
    keys = [p.key for p in problems]
    duplicate = next((k for k in keys if keys.count(k) > 1), None)
    if duplicate:
        raise ConfigError(f"{path.name} lists problem {duplicate!r} twice", "give each problem its own key")
    return tuple(problems)


_PROBLEM_KEYS = {"key", "check", "title", "links", "shows_on", "fix"}
_FIX_KEYS = {"release", "title", "url", "commit", "verified", "related"}


def _problem(item: Any, where: str) -> KnownProblem:
    if not isinstance(item, dict):
        raise ConfigError(f"{where} must be a table", "write it as [[problem]] followed by key = value lines")
    _only(item, _PROBLEM_KEYS, where)
    fix = item.get("fix")
    if fix is not None and not isinstance(fix, dict):
        raise ConfigError(f"{where}.fix must be a table", "write it as [problem.fix]")
    return KnownProblem(
        key=_text(item, "key", where),
        check=_text(item, "check", where),
        title=_text(item, "title", where),
        links=_texts(item, "links", where),
        fix=_fix(fix, f"{where}.fix") if fix is not None else None,
        shows_on=_texts(item, "shows_on", where) if "shows_on" in item else ("cpu", "gpu"),
    )


def _fix(table: Mapping[str, Any], where: str) -> UpstreamChange:
    _only(table, _FIX_KEYS, where)
    return UpstreamChange(
        release=_text(table, "release", where), title=_text(table, "title", where), url=_text(table, "url", where),
        commit=str(table.get("commit", "")), verified=str(table.get("verified", "")),
        related=_texts(table, "related", where) if "related" in table else (),
    )


def _only(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} in {where}", f"allowed keys: {', '.join(sorted(allowed))}")


def _text(table: Mapping[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where} needs {key} as a non-empty string", f'add {key} = "..."')
    return value


def _texts(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}.{key} must be a list of strings", f'e.g. {key} = ["..."]')
    return tuple(value)
