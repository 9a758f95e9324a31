"""The commits between two releases as bisect candidates, each with the jaxlib build it runs on.

A commit is one more kind of :class:`~kit.bisect.candidates.Candidate`: its
``version`` is the key the search walks (the full hash), its ``python`` and
``jaxlib`` are those of the release environment it is laid over, and a
commit that no build at hand accepts carries the reason as its ``problem``,
so the prober skips it as it skips an uninstallable release.

The builds are the two releases the release search ended on, bad side first
(the issue's preference: the bad side's environment shows the bug with the
fewest surprises; the good side's next). :func:`~kit.bisect.commits.builds.choose_build`
prefers one that is already built, so the commit phase builds nothing the
release phase did not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from ...history.commit_range import CommitRange, resolve
from ...history.commits import headlines
from ...history.source import History
from ...history.version_file import JaxlibRange, dotted, jaxlib_ranges
from ...install import WITH_JAXLIB, commit_version
from .builds import Build, choose_build
from ..candidates import Candidate


@dataclass(frozen=True)
class CommitCandidate(Candidate):
    """A commit to probe: its Python laid over ``build``'s environment."""

    commit: str = ""
    build: Build | None = None
    accepts: JaxlibRange | None = None
    title: str = ""
    date: str = ""
    forced: bool = False
    """Run on a jaxlib newer than its jax accepts, JAX's version check relaxed (:func:`forced_on`): a lead only."""
    laid: str = WITH_JAXLIB
    """What of the commit is laid over the build (`kit.install.overlay.LAID_FORMS`): the smallest that runs."""

    @property
    def short(self) -> str:
        return self.commit[:10]

    @property
    def jax_version(self) -> str:
        """What the overlay's jax reports, e.g. ``0.5.2.dev20250227+f93c2a1aa5``.

        Forced: the build's jaxlib as the version (``0.5.3.dev20250227+f93c2a1aa5.forced``). JAX's import
        refuses a jaxlib newer than ``jax.__version__``, which the overlay stamps; nothing else reads it.
        """
        if self.forced and self.accepts is not None and self.jaxlib:
            return commit_version(JaxlibRange(self.accepts.minimum, self.jaxlib), self.date, self.commit) + ".forced"
        return commit_version(self.accepts, self.date, self.commit) if self.accepts else self.short


def commit_candidates(history: History, commit_range: CommitRange, builds: Sequence[Build]) -> list[CommitCandidate]:
    """Every commit of the range, oldest first, with the build it runs on (or why none)."""
    commits = list(commit_range.candidates)
    ranges = jaxlib_ranges(history, commits)
    heads = headlines(history, commits)
    return [_candidate(commit, ranges.get(commit), heads.get(commit, ("", "")), builds) for commit in commits]


def _candidate(commit: str, accepts: JaxlibRange | None, head: tuple[str, str],
               builds: Sequence[Build]) -> CommitCandidate:
    date, title = head
    build, why = choose_build(accepts, builds)
    return CommitCandidate(
        version=commit, requirements=(), exclude_newer=None, python=build.python if build else None,
        jaxlib=build.jaxlib if build else None, problem=f"no jaxlib build here runs it: {why}" if why else "",
        uploaded=date[:10] or None, commit=commit, build=build, accepts=accepts, title=title, date=date)


def tag_as_old_end(history: History, old_tag: str, candidates: list[CommitCandidate],
                   builds: Sequence[Build]) -> tuple[list[CommitCandidate], str]:
    """Where the branch point runs on no build, the older tag itself, on its own release's build, is the old end.

    A patch release cut on its predecessor's branch (jax-v0.9.0.1 on 0.9.0's)
    leaves a branch point whose jax/version.py accepts neither build at hand
    (it says 0.8.3), so the search could not start. The tag's own tree is the
    wheel its release was built from: on that release's environment it *is*
    the release probe, known without a run. Returns the candidates and one
    sentence saying so ("" where nothing was replaced).
    """
    first = candidates[0] if candidates else None
    if first is None or not first.problem or not old_tag.startswith("jax-v"):
        return candidates, ""
    tagged = resolve(history, old_tag)
    own = [b for b in builds if b.release == old_tag[len("jax-v"):]]
    if tagged == first.commit or not own:
        return candidates, ""
    [candidate] = commit_candidates_of(history, [tagged], own)
    if candidate.problem:
        return candidates, ""
    said = (f"the branch point {first.short} runs on no build here ({first.problem}); {old_tag} itself "
            f"({tagged[:10]}), on its own release's build, stands as the old end")
    return [candidate, *candidates[1:]], said


def commit_candidates_of(history: History, commits: Sequence[str], builds: Sequence[Build]) -> list[CommitCandidate]:
    """Candidates for ``commits`` as given (any order), each with the build it runs on or why none."""
    ranges = jaxlib_ranges(history, list(commits))
    heads = headlines(history, list(commits))
    return [_candidate(commit, ranges.get(commit), heads.get(commit, ("", "")), builds) for commit in commits]


def forced_on(candidate: CommitCandidate, build: Build, below_minimum: bool = False) -> CommitCandidate | None:
    """The commit on a build its jax does not accept, past JAX's version check; None where more refuses it.

    Only the "jaxlib newer than jax" check is relaxed, unless ``below_minimum``
    (a crossed pair's four probes, `kit.bisect.commits.crossed`): then also
    "jaxlib older than the minimum", which the overlay stamps as the build's.
    Such a probe is labelled forced wherever it is shown, and never carries
    an answer alone.
    """
    accepts = candidate.accepts
    if accepts is None or accepts.accepts(build.jaxlib):
        return None
    if dotted(build.jaxlib) < dotted(accepts.minimum) and not below_minimum:
        return None
    return replace(candidate, version=f"{candidate.commit}@jaxlib-{build.jaxlib}-forced", python=build.python,
                   jaxlib=build.jaxlib, problem="", build=build, forced=True)


def on_build(candidate: CommitCandidate, build: Build) -> CommitCandidate | None:
    """The same commit on another build (to tell the binary from the Python), if it accepts that build."""
    if candidate.accepts is None or not candidate.accepts.accepts(build.jaxlib):
        return None
    return replace(candidate, version=f"{candidate.commit}@jaxlib-{build.jaxlib}", python=build.python,
                   jaxlib=build.jaxlib, problem="", build=build)
