"""``--commits``: the same search over JAX's commits between the two releases the release bisect found.

* :mod:`.builds`: the release builds a commit can run on, and the one it runs on;
* :mod:`.candidates`: the commits between two releases, each with the jaxlib build it runs on;
* :mod:`.runnable`: which commits JAX itself runs on which build (pairs kept in ``reports/bisect/runnable/``);
* :mod:`.probes`: the commit subject, a commit's Python laid over its build;
* :mod:`.crossed`: each side's Python on the other's build at a build switch (forced where refused);
* :mod:`.pairs`: the probe pairs an answer rests on, run where the search's own probes left them out;
* :mod:`.verdict`: the verdict's words, one table of how each is said;
* :mod:`.finding`: the verdict and what it cost, and the report's JSON ``commits``;
* :mod:`.report`: the report's commit section.

The phase that runs them in order is :mod:`kit.bisect.commit_search`.
"""

from .builds import Build
from .candidates import CommitCandidate, commit_candidates, on_build, tag_as_old_end
from .crossed import binary_only_from_four, same_python_other_build
from .finding import CommitFinding, CommitLevel, PairProbe, TieBreak, commits_json, describe_commits
from .pairs import old_end_on_newer_build, pair_on_other_build
from .probes import CommitProber, CommitSubject
from .report import commit_section
from .runnable import PairStore, Runnable, assign_builds, span_on
from .verdict import CommitVerdict

__all__ = [
    "Build", "binary_only_from_four", "CommitCandidate", "CommitVerdict", "CommitFinding", "CommitLevel", "CommitProber", "CommitSubject", "PairProbe",
    "PairStore", "Runnable", "TieBreak", "assign_builds", "commit_candidates", "commit_section", "commits_json",
    "describe_commits", "old_end_on_newer_build", "on_build", "pair_on_other_build", "same_python_other_build", "span_on", "tag_as_old_end",
]
