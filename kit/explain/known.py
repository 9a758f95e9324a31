"""Catalogue entries as fingerprints: which op, in which state, on which platform, an entry of ``known/`` explains.

An entry's ``[fingerprint]`` (`kit.known.signs`) says what its problem looks
like in a compiled program: the ops (``lu``, ``cholesky``, ...), the states
(``whole``, ``gathered``), and ``fed_by``, a collective that feeds some op of
the same source line; its ``shows_on`` says where. An entry without one is
never matched. The answer cites the entry with how well it matched, the range
the kit measured on that platform, the upstream fix and the workaround.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..hlo import Fingerprint
from ..known.catalogue import Entry, load_catalogues
from ..known.listing import range_text
from ..known.measured import load_measurements, ranges
from ..known.signs import FingerprintSign, Match, fingerprint_match
from ..targets import JAX_PLATFORM


@dataclass(frozen=True)
class KnownFingerprint:
    key: str
    title: str
    sign: FingerprintSign
    fix_release: str
    """The upstream fix's release (the entry's ``[fix]``), else the first release the kit measured without it on
    this platform; "" while open."""
    fix_commit: str
    workaround: str
    shows_on: tuple[str, ...] = ("cpu", "cuda")
    """Backends (cpu, cuda, tpu) where the problem shows: a compile for another matches only in part."""
    workaround_measured: str = ""
    measured: str = ""
    """The range the kit measured on this platform, in words ("" where it was never measured there)."""
    targets: tuple[str, ...] = ()
    """The chips the entry names (``gpu:a100:4``): for a compile for one of them, it is the entry to cite first."""

    def matches(self, fingerprint: Fingerprint, same_line: Iterable[Fingerprint], platform: str) -> Match | None:
        return fingerprint_match(self.key, self.sign, self.shows_on, fingerprint, same_line, platform)

    def sentence(self, match: Match) -> str:
        """``known problem sharded-slogdet (matches all 4 parts: ...): measured cpu: ...; upstream fix f93c2a1aa5 ...``."""
        said = f"known problem {self.key} ({match.how_well()})"
        said += f": measured {self.measured}" if self.measured else ": not measured on this platform"
        if self.fix_commit and not self.measured:
            # Measured elsewhere only: the fix is not known to fix it here (t9: on 4 A100s f93c2a1aa5, CPU's fix of
            # the batch-sharded LU and solves, was named "first in 0.5.3" where the solves split from 0.7.0).
            said += f"; upstream fix {self.fix_commit[:10]} for the platforms measured, untested on this one"
        elif self.fix_commit:  # the measured range says where it was fixed; this is the change that did
            said += f"; upstream fix {self.fix_commit[:10]}" + (f" (first in {self.fix_release})"
                                                                if self.fix_release else "")
        elif not self.fix_release:
            said += "; no fix upstream yet"
        if self.workaround:
            said += f"; workaround {self.workaround}"
            if self.workaround_measured:
                said += f" ({self.workaround_measured})"
        return said


def load(folders: Sequence[Path], platform: str) -> tuple[KnownFingerprint, ...]:
    """The entries of the catalogues ``folders`` that carry a fingerprint, with what was measured on ``platform``
    (as jax names it: cpu, gpu, tpu; a backend's name, ``cuda``, is read as jax's)."""
    platform = JAX_PLATFORM.get(platform, platform)
    return tuple(known(entry, platform) for entry in load_catalogues(folders) if entry.fingerprint is not None)


def known(entry: Entry, platform: str) -> KnownFingerprint:
    assert entry.fingerprint is not None
    mine = [r for r in ranges(load_measurements(entry.check.parent, entry.id))
            if JAX_PLATFORM.get(r.backend, r.backend) == platform]
    fixed = entry.fix.release if entry.fix else next((r.fixed_in for r in mine if r.fixed_in), "")
    return KnownFingerprint(key=entry.id, title=entry.title, sign=entry.fingerprint, fix_release=fixed or "",
                            fix_commit=entry.fix_commit, workaround=entry.workaround, shows_on=entry.shows_on,
                            workaround_measured=entry.workaround_measured,
                            measured="; ".join(range_text(r) for r in mine),
                            targets=tuple(t.name for t in entry.targets))
