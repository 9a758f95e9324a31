"""The catalogue of known JAX problems: ``known/ID.toml`` beside its check ``known/ID.py``.

An entry is what a person writes down about a problem: what goes wrong, where
upstream tracks it, the commit that fixed it, a workaround, and the releases
to measure it on. It never states a range: which releases hold the problem is
what the kit measured (`kit.known.measured`), so a changelog's claim is never
taken for a fact. Adding a problem is one TOML file and its check (docs/known.md).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from ..config import is_release_number
from ..errors import ConfigError
from ..package_files import catalogue_folder
from ..errors import UsageError
from ..json_types import JsonObject, TomlTable
from ..target_files import looks_like_file
from ..targets import BACKENDS, Target, parse_target
from ..toml_tables import read_toml
from .signs import DifferenceSign, FingerprintSign, difference_sign, fingerprint_sign

KINDS = ("wrong-values", "exception", "sharding", "compile", "performance")
"""What a problem does to a user's program."""

_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_COMMIT = re.compile(r"[0-9a-f]{10,40}")
_UPSTREAM = ("https://github.com/jax-ml/jax/", "https://github.com/openxla/xla/")
_KEYS = {"title", "kind", "upstream", "fix_commit", "fix_note", "shows_on", "host_devices", "workaround", "measure_on",
         "timeout_s", "isolated", "targets"}
# What explain, triage and the matrix report match or cite (optional; once known_problems.toml's, docs/known.md).
_KEYS |= {"fingerprint", "difference", "matrix_check", "links", "fix", "workaround_measured"}
_FIX_KEYS = {"release", "title", "url", "verified", "related"}


@dataclass(frozen=True)
class UpstreamFix:
    """The change upstream that fixed the problem, as the report cites it: the first release holding its commit
    (checked in git history, ``verified`` says how), beside the ranges the kit measured."""

    release: str
    title: str
    url: str
    commit: str
    verified: str = ""
    related: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    """One known problem, as written in its TOML file (checked where it is read)."""

    id: str
    title: str
    kind: str
    upstream: str
    check: Path
    """The check script beside the entry: exit 0 the problem is absent, 1-127 present, 125 cannot tell."""
    measure_on: tuple[str, ...]
    shows_on: tuple[str, ...] = BACKENDS
    fix_commit: str = ""
    """A commit of jax-ml/jax (10 to 40 hex digits); empty where the fix lies outside JAX (``fix_note`` says)."""
    fix_note: str = ""
    host_devices: int | None = None
    workaround: str = ""
    timeout_s: int = 300
    isolated: bool = False
    """Run in a process of its own in an audit (it changes JAX's configuration, or may kill the interpreter)."""
    fingerprint: FingerprintSign | None = None
    """What it looks like in a compiled program: what ``explain`` matches (`kit.known.signs`)."""
    difference: DifferenceSign | None = None
    """What tells a run with it from one without: what ``triage`` matches."""
    matrix_check: str = ""
    """A check of matrix.toml whose records measure it too: the report puts that range beside the upstream fix."""
    links: tuple[str, ...] = ()
    fix: UpstreamFix | None = None
    workaround_measured: str = ""
    targets: tuple[Target, ...] = ()
    """Chips the check is compiled for (``tpu:v5e:2x2``), never run on: where set, it runs only for them
    (`repro.known_target`), each measured as a range of its own (docs/known.md)."""

    def compiles_for(self, target: Target) -> bool:
        return any(mine.name == target.name for mine in self.targets)

    def to_json(self) -> JsonObject:
        return {"id": self.id, "title": self.title, "kind": self.kind, "upstream": self.upstream,
                "fix_commit": self.fix_commit, "fix_note": self.fix_note, "check": self.check.name,
                "shows_on": list(self.shows_on), "workaround": self.workaround, "measure_on": list(self.measure_on),
                # What explain and triage match (null where the entry declares none), and the matrix check citing it.
                "fingerprint": asdict(self.fingerprint) if self.fingerprint else None,
                "difference": asdict(self.difference) if self.difference else None,
                "matrix_check": self.matrix_check or None,
                **({"targets": [t.name for t in self.targets]} if self.targets else {})}


def load_catalogue(folder: Path | None = None) -> list[Entry]:
    """Every entry of ``folder`` (default: the package's), sorted by id; ConfigError names the first bad one."""
    folder = folder or catalogue_folder()
    if not folder.is_dir():
        raise ConfigError(f"the catalogue of known problems {folder} is missing", "reinstall the kit")
    return [read_entry(_own_file(path, folder)) for path in sorted(folder.glob("*.toml"))]


def _own_file(path: Path, folder: Path) -> Path:
    """An entry's TOML as a plain file of the folder: a FIFO would hang the read, and a link out of the folder
    would read (and its check run) what the catalogue does not hold; each refused in one sentence."""
    check = path.with_suffix(".py")
    for part in (path, check):
        if part.is_symlink() and folder.resolve() not in part.resolve().parents:
            raise ConfigError(f"{part.name} in {folder} is a link out of the folder",
                              "copy the file into the catalogue folder instead of linking it")
        if part.exists() and not part.is_file():
            raise ConfigError(f"{part.name} in {folder} is not a plain file", "replace it with the file itself")
    return path


def load_catalogues(folders: Sequence[Path]) -> list[Entry]:
    """The entries of several catalogues (the package's, then a project's own ``known/``), sorted by id: an entry
    of a later folder replaces one of the same id. Each entry's measurements lie beside it (``entry.check.parent``)."""
    found: dict[str, Entry] = {}
    for folder in dict.fromkeys(Path(f).resolve() for f in folders):
        found.update((entry.id, entry) for entry in load_catalogue(folder))
    return [found[key] for key in sorted(found)]


def read_entry(path: Path) -> Entry:
    """One ``ID.toml``, every value checked; ConfigError with the file and the key."""
    table: TomlTable = read_toml(path)
    where = f"{path.name}"
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}", f"the keys are: {', '.join(sorted(_KEYS))}")
    if not _ID.fullmatch(path.stem):
        raise ConfigError(f"{where}: an entry's file name is its id: lowercase letters, digits and -",
                          "rename the file and its check")
    check = path.with_suffix(".py")
    if not check.is_file():
        raise ConfigError(f"{where}: its check {check.name} is not beside it", "write the check (docs/known.md)")
    kind = _text(table, "kind", where)
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}", "pick the nearest")
    upstream = _text(table, "upstream", where)
    if not upstream.startswith(_UPSTREAM):
        raise ConfigError(f"{where}: upstream {upstream!r} is not a jax-ml/jax or openxla/xla address",
                          "link the issue, commit or changelog entry")
    fix_commit = str(table.get("fix_commit", ""))
    if fix_commit and not _COMMIT.fullmatch(fix_commit):
        raise ConfigError(f"{where}: fix_commit {fix_commit!r} is not a commit hash (10 to 40 lowercase hex digits)",
                          "copy it from git log")
    if not fix_commit and not table.get("fix_note"):
        raise ConfigError(f"{where}: no fix_commit and no fix_note", "say where the fix lies, or that none exists")
    measure_on = _list(table, "measure_on", where)
    bad = [v for v in measure_on if not is_release_number(v)]
    if not measure_on or bad:
        raise ConfigError(f"{where}: measure_on must list release numbers, got {bad or 'none'}",
                          "e.g. measure_on = [\"0.4.35\", \"0.6.0\"]")
    shows_on = _list(table, "shows_on", where) if "shows_on" in table else list(BACKENDS)
    if not shows_on or set(shows_on) - set(BACKENDS):
        raise ConfigError(f"{where}: shows_on must name backends among {', '.join(BACKENDS)}", "e.g. [\"cpu\"]")
    targets = _targets(table, where, shows_on)
    return Entry(id=path.stem, title=_text(table, "title", where), kind=kind, upstream=upstream, check=check,
                 measure_on=tuple(measure_on), shows_on=tuple(shows_on), fix_commit=fix_commit,
                 fix_note=str(table.get("fix_note", "")), host_devices=_count(table, "host_devices", where),
                 workaround=str(table.get("workaround", "")), timeout_s=_count(table, "timeout_s", where) or 300,
                 isolated=_flag(table, "isolated", where), targets=targets,
                 fingerprint=fingerprint_sign(table.get("fingerprint"), where),
                 difference=difference_sign(table.get("difference"), where),
                 matrix_check=str(table.get("matrix_check", "")).strip(),
                 links=tuple(_list(table, "links", where)) if "links" in table else (upstream,),
                 fix=_fix(table.get("fix"), fix_commit, where),
                 workaround_measured=str(table.get("workaround_measured", "")).strip())


def _targets(table: TomlTable, where: str, shows_on: list[str]) -> tuple[Target, ...]:
    """``targets``: chips the kit names (`kit.targets`), each of a platform the entry shows on."""
    if "targets" not in table:
        return ()
    names = _list(table, "targets", where)
    if not names:
        raise ConfigError(f"{where}: targets is empty", "name a chip, e.g. targets = [\"tpu:v5e:2x2\"], or drop the key")
    found = []
    for name in names:
        try:
            target = None if looks_like_file(name) else parse_target(name)
        except UsageError as exc:
            raise ConfigError(f"{where}: targets: {exc.message}", exc.tip) from None
        if target is None:
            raise ConfigError(f"{where}: targets: {name!r} is not a chip the kit names",
                              "e.g. tpu:v5e:2x2 or gpu:a100:4 (docs/targets.md; a target file is for the command line)")
        if target.platform not in shows_on:
            raise ConfigError(f"{where}: target {target.name} compiles for {target.platform}, which shows_on leaves out",
                              f"add \"{target.platform}\" to shows_on")
        found.append(target)
    return tuple(found)


def _fix(table: object, commit: str, where: str) -> UpstreamFix | None:
    if table is None:
        return None
    if not isinstance(table, dict) or set(table) - _FIX_KEYS:
        raise ConfigError(f"{where}: [fix] holds release, title, url, verified and related",
                          "the fixing commit is fix_commit, at the top of the file")
    if not commit:
        raise ConfigError(f"{where}: [fix] cites a release but the entry has no fix_commit", "add fix_commit")
    release = _text(table, "release", where + " [fix]")
    if not is_release_number(release):
        raise ConfigError(f"{where}: [fix] release {release!r} is not a release number", 'e.g. release = "0.5.3"')
    return UpstreamFix(release, _text(table, "title", where + " [fix]"), _text(table, "url", where + " [fix]"),
                       commit, str(table.get("verified", "")), tuple(_list(table, "related", where))
                       if "related" in table else ())


def _text(table: TomlTable, key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a line of text", f"add {key} = \"...\"")
    return value.strip()


def _list(table: TomlTable, key: str, where: str) -> list[str]:
    value = table.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of strings", f"e.g. {key} = [\"...\"]")
    return [item.strip() for item in value]


def _flag(table: TomlTable, key: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be true or false", f"e.g. {key} = true")
    return value


def _count(table: TomlTable, key: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096:
        raise ConfigError(f"{where}: {key} must be a whole number from 1 to 4096", f"e.g. {key} = 4")
    return value
