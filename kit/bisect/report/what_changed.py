"""What else changed between the last good and the first bad: every package, and the era dates.

A bisect names a JAX release, but each release came with its own era's
packages: from 0.4.38 to 0.5.0 numpy went 2.2.1 → 2.2.2 and scipy 1.14.1 →
1.15.1. A triager must rule those out before blaming JAX, so the report lists
every installed package whose version differs between the two ends of the
change (from each probe's own record of what it installed), the release
dates and the era cut-offs their dependencies were resolved at, the packages
held with ``--pin``, and the command that holds one of the others. Pure: it
reads observations, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ...reproduce_line import shell_join
from ..candidates import Candidate
from ...json_types import JsonObject
from ..observation import Observation


@dataclass(frozen=True)
class Changes:
    """Between two probed candidates (release or commit): what differs besides JAX itself."""

    before: str
    after: str
    packages: dict[str, tuple[str | None, str | None]]
    """Package -> (version before, version after), for every package whose version differs (jax left out)."""
    uploaded: tuple[str | None, str | None]
    era: tuple[str | None, str | None]
    """The era cut-offs (dependencies uploaded no later than)."""
    held: list[str] = field(default_factory=list)
    """``--pin`` requirements held in both."""
    known: bool = True
    """False when a probe did not say what it installed (answered by the index, or an older cache)."""

    def to_json(self) -> JsonObject:
        return {"before": self.before, "after": self.after, "known": self.known, "held": self.held,
                "packages": {name: {"before": a, "after": b} for name, (a, b) in self.packages.items()},
                "uploaded": {"before": self.uploaded[0], "after": self.uploaded[1]},
                "era": {"before": self.era[0], "after": self.era[1]}}


def changes_between(before: str, after: str, observations: Mapping[str, Observation],
                    candidates: Sequence[Candidate]) -> Changes:
    """What differs between two probed candidates' installs."""
    one, two = observations.get(before), observations.get(after)
    uploads = {c.version: c.uploaded for c in candidates}
    packages_before = dict(one.installed.packages) if one else {}
    packages_after = dict(two.installed.packages) if two else {}
    names = sorted((set(packages_before) | set(packages_after)) - {"jax"})
    differ = {name: (packages_before.get(name), packages_after.get(name)) for name in names
              if packages_before.get(name) != packages_after.get(name)}
    held = sorted(set(one.installed.pins if one else []) & set(two.installed.pins if two else []))
    return Changes(before, after, differ, (uploads.get(before), uploads.get(after)),
                   (one.installed.era if one else None, two.installed.era if two else None), held,
                   known=bool(packages_before and packages_after))


def changes_lines(changes: Changes, words: tuple[str, str], reproduce: Sequence[str],
                  held_by_commits: Mapping[str, str] | None = None) -> list[str]:
    """The report's section: a table of the packages that differ, the era dates, what was held, how to hold one.

    ``held_by_commits``: package → version the commit phase held fixed (its two deciding commits ran with the
    same one): ruled out already, so never offered for ``--pin``.
    """
    held_by_commits = held_by_commits or {}
    first, second = changes.before, changes.after
    lines = ["## What else changed", ""]
    if not changes.known:
        return lines + [f"Not known: the probes of jax {first} and {second} did not record what they installed "
                        "(answered by the index, or by probes from before the kit kept it); `--fresh` probes them "
                        "again."]
    lines.append(f"Between jax {first} ({words[0]}) and jax {second} ({words[1]}), besides jax itself:")
    lines.append("")
    if changes.packages:
        lines += [f"| package | jax {first} | jax {second} |", "|---|---|---|"]
        lines += [f"| {name} | {a or '—'} | {b or '—'} |" for name, (a, b) in changes.packages.items()]
    else:
        lines.append("no other package's version differs.")
    lines += ["", f"Release dates: jax {first} {changes.uploaded[0] or 'unknown'}, jax {second} "
              f"{changes.uploaded[1] or 'unknown'}; their dependencies as of {_date(changes.era[0])} and "
              f"{_date(changes.era[1])} (the era cut-offs)."]
    if changes.held:
        lines.append(f"Held in every probe with --pin: {', '.join(changes.held)}.")
    ruled_out = sorted(name for name in changes.packages if name in held_by_commits)
    if ruled_out:
        lines.append("Ruled out by the commit phase, whose two deciding commits ran with the same version of each: "
                     + ", ".join(f"{name} {held_by_commits[name]}" for name in ruled_out) + ".")
    others = sorted((name for name in changes.packages if name != "jaxlib" and changes.packages[name][0]
                     and name not in held_by_commits),
                    key=lambda name: (_SUSPECTS.index(name) if name in _SUSPECTS else len(_SUSPECTS), name))
    if others:
        name = others[0]
        pin = f"{name}=={changes.packages[name][0]}"
        lines.append(f"To rule one out, hold it at the {words[0]} side's version in every probe: "
                     f"`{shell_join([*reproduce, '--pin', pin])}`.")
    return lines


_SUSPECTS = ("numpy", "scipy", "ml-dtypes", "opt-einsum")
"""Which package the report's "hold it" example names first: the ones a JAX result leans on most."""


def _date(cut_off: str | None) -> str:
    return cut_off[:10] if cut_off else "today"
