"""Known problems as fingerprints: which op, in which state, a [[problem]] of known_problems.toml explains.

A ``[problem.fingerprint]`` table says what the problem looks like in a
compiled program: the ops (``lu``, ``cholesky``, ...), the states
(``whole``, ``gathered``), and ``fed_by``, a collective that feeds some op of
the same source line. The problem's ``[problem.fix]`` release and
``workaround`` are what the answer cites.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ConfigError
from ..hlo import Fingerprint
from ..toml_tables import known_keys, read_toml, string, strings

_FINGERPRINT_KEYS = {"ops", "states", "fed_by"}


@dataclass(frozen=True)
class KnownFingerprint:
    key: str
    title: str
    ops: tuple[str, ...]
    states: tuple[str, ...]
    fed_by: str
    fix_release: str
    fix_commit: str
    workaround: str
    shows_on: tuple[str, ...] = ("cpu", "gpu")
    """Platforms as jax names them (cpu, gpu, tpu) where the problem shows: a TPU compile matches only its own."""
    workaround_measured: str = ""

    def matches(self, fingerprint: Fingerprint, same_line: Iterable[Fingerprint]) -> bool:
        if fingerprint.op not in self.ops or fingerprint.state not in self.states:
            return False
        return not self.fed_by or any(self.fed_by in other.fed_by for other in same_line)

    def sentence(self) -> str:
        fixed = f"fixed in {self.fix_release} ({self.fix_commit[:10]})" if self.fix_release else "no fix upstream yet"
        workaround = f"; workaround {self.workaround}" if self.workaround else ""
        if workaround and self.workaround_measured:
            workaround += f" ({self.workaround_measured})"
        return f"known problem {self.key}: {fixed}{workaround}"


def load(path: Path) -> tuple[KnownFingerprint, ...]:
    """The problems of ``path`` that carry a fingerprint; none when there is no file."""
    try:
        raw = read_toml(path)
    except FileNotFoundError:
        return ()
    found = []
    for index, item in enumerate(raw.get("problem") or []):
        if isinstance(item, dict) and isinstance(item.get("fingerprint"), dict):
            found.append(_known(item, f"problem[{index}]", path.name))
    return tuple(found)


def _known(item: Mapping[str, Any], where: str, source: str) -> KnownFingerprint:
    table = item["fingerprint"]
    known_keys(table, _FINGERPRINT_KEYS, f"{where}.fingerprint", source)
    ops = strings(table, "ops", f"{where}.fingerprint")
    if not ops:
        raise ConfigError(f"{source}: {where}.fingerprint needs ops", 'e.g. ops = ["lu", "cholesky"]')
    fix: Mapping[str, Any] = item["fix"] if isinstance(item.get("fix"), dict) else {}
    return KnownFingerprint(key=string(item, "key", where, "?"), title=string(item, "title", where, ""), ops=ops,
                            states=strings(table, "states", f"{where}.fingerprint", ("whole", "gathered")),
                            fed_by=string(table, "fed_by", f"{where}.fingerprint", ""),
                            fix_release=string(fix, "release", f"{where}.fix", ""),
                            fix_commit=string(fix, "commit", f"{where}.fix", ""),
                            workaround=string(item, "workaround", where, ""),
                            shows_on=strings(item, "shows_on", where, ("cpu", "gpu")),
                            workaround_measured=string(item, "workaround_measured", where, ""))
