"""What the release search will likely probe, resolved ahead while it probes (`kit.install.prefetch`).

The candidates' order of need comes from the search (`search.likely_probes`:
the ends, then each round's midpoints, `AHEAD_ROUNDS` of them); a candidate already answered (the
probe cache, the index's metadata ruling it out) needs no install and is
left out. Each is resolved with the install key its probe will use, the
Python the metadata named tried first, so the probe's own resolve finds
the same question already answered.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..config import Matrix
from ..install import PackageIndex, Prefetch
from .candidates import Candidate
from .run_spec import RunSpec
from .search import ProbeOutcome, likely_probes


AHEAD_ROUNDS = 2
"""How many rounds of midpoints are resolved ahead, besides the ends: round r has 2**r candidates of which the
search probes one, so deeper rounds cost resolves (a second of uv's CPU each, beside a probe that wants the
cores) that mostly go unused; the few probes past them resolve when they come."""


def resolve_ahead(matrix: Matrix, spec: RunSpec, candidates: Sequence[Candidate], known: Mapping[str, ProbeOutcome],
                  index: PackageIndex, rounds: int = AHEAD_ROUNDS) -> Prefetch:
    """Start resolving the candidates the search may need; `Prefetch.close` when it is done with releases."""
    likely = likely_probes(list(candidates))[:2 + 2 ** rounds - 1]
    wanted = [candidate for candidate in likely
              if candidate.version not in known and candidate.yanked is None and not candidate.problem]
    prefetch = Prefetch(matrix, index)
    prefetch.start([(c.version, spec.for_release(c.python).install) for c in wanted])
    return prefetch
