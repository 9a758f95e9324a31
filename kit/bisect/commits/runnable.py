"""Which commits run on which jaxlib build: a commit counts only on a build where JAX itself runs.

``jax/version.py`` says which jaxlib a commit accepts, and JAX's main branch
does not keep that promise between releases: on 2025-04-23 the compiled
module was renamed ``_jax``, and no later commit imports on jaxlib 0.6.0,
although its ``version.py`` still accepts 0.6.0. A (commit, build) pair
counts only where JAX imports and runs a trivial computation
(`kit.run.jax_runs`); an overlay that cannot is "cannot run on jaxlib X",
never good, never bad.

Importability is monotonic enough to bisect: on the older build the commits
that run are a prefix of the range, on the newer build a suffix. So each
build's span is found with a check at the far end of what ``version.py``
accepts (one check where the promise holds) and a bisection of the pairs
only where it does not. Each commit then runs on the first build, in the
caller's order of preference, whose span holds it; a commit no build runs
carries the reason as its ``problem``, an ambiguous stretch of the answer.

Pairs are kept on disk (the overlay's format and the build are in the key),
so a rerun asks none again: a pair that ran, and a pair whose JAX failed the
way code fails against another binary (an ImportError, an AttributeError, a
version check). Any other failure (a timeout, a signal, bad bytecode, a full
disk) is kept for this run only: it may be the machine rather than the commit.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

from packaging.version import Version

from ...atomic_files import atomic_write_text
from ...records import JsonTextError, read_json
from ...run.jax_runs import JaxRuns
from .candidates import CommitCandidate, on_build
from ...install import JAX_ALONE, LAID_FORMS, OVERLAY_FORMAT
from .builds import Build

CODE_AGAINST_BINARY = ("ImportError", "ModuleNotFoundError", "AttributeError", "RuntimeError", "NameError",
                       "TypeError", "SyntaxError")
"""How JAX's Python fails on a jaxlib it does not fit: a fact about the pair, worth keeping."""

Check = Callable[[CommitCandidate], JaxRuns]
"""Lay one (commit, build) pair over and ask whether JAX runs there."""


@dataclass
class PairStore:
    """What is known of (commit, build) pairs: every answer of this run, and on disk those worth keeping."""

    folder: Path
    backend: str
    read: bool = True
    """False with ``--fresh``: what earlier runs kept is not read (each pair is asked once more, then kept)."""
    seen: dict[str, JaxRuns] = field(default_factory=dict)
    """This run's answers, by key: asked once per run, whatever is kept on disk."""

    def key(self, candidate: CommitCandidate) -> str:
        assert candidate.build is not None
        build = candidate.build
        alone = candidate.laid == JAX_ALONE  # another overlay: another pair (format 4's keys stay those of WITH_JAXLIB)
        text = f"{candidate.commit} {build.release} {build.jaxlib} {build.python} {self.backend} {OVERLAY_FORMAT}" \
            + (" forced" if candidate.forced else "") + (" jax-alone" if alone else "")
        forced = "forced-" if candidate.forced else ""
        form = "jax-alone-" if alone else ""
        return f"{candidate.commit[:12]}-jaxlib-{build.jaxlib}-{forced}{form}" \
               f"{hashlib.sha256(text.encode()).hexdigest()[:12]}"

    def get(self, candidate: CommitCandidate) -> JaxRuns | None:
        key = self.key(candidate)
        if key in self.seen:
            return self.seen[key]
        if not self.read:
            return None
        try:
            data = read_json(self.folder / f"{key}.json")
        except (OSError, JsonTextError):
            return None
        return _kept_pair(data)  # None: not a pair this store wrote (a hand-edit, another tool): asked again

    def put(self, candidate: CommitCandidate, runs: JaxRuns) -> None:
        key = self.key(candidate)
        self.seen[key] = runs
        if not runs.ok and not runs.error.startswith(CODE_AGAINST_BINARY):
            return  # a timeout, a signal, bad bytecode: perhaps the machine, not the commit
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.folder / f"{key}.json", json.dumps({"commit": candidate.commit, **runs.to_json()}))
        except OSError:
            pass  # only a cache: the pair is asked again next time


def _kept_pair(data: object) -> JaxRuns | None:
    """The pair `PairStore.put` wrote (``ok`` a boolean, ``error`` text, ``seconds`` a number), else None."""
    if not isinstance(data, dict):
        return None
    ok, error, seconds = data.get("ok"), data.get("error") or "", data.get("seconds")
    if not isinstance(ok, bool) or not isinstance(error, str):
        return None
    if seconds is not None and (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)):
        return None
    return JaxRuns(ok, error, (), float(seconds or 0))


@dataclass
class Runnable:
    """Runnability of pairs, asked once each: from the store, else by ``check``."""

    store: PairStore
    check: Check
    asked: int = 0
    """How many pairs were laid over and run in this search (the rest came from the store)."""
    seconds: float = 0.0

    def __call__(self, candidate: CommitCandidate) -> JaxRuns:
        known = self.store.get(candidate)
        if known is not None:
            return known
        runs = self.check(candidate)
        self.asked += 1
        self.seconds += runs.seconds
        self.store.put(candidate, runs)
        return runs


@dataclass(frozen=True)
class Span:
    """The commits (indices into the range) that run on one build with one overlay, and why the next one did not."""

    build: Build
    runs: frozenset[int]
    stopped: str = ""
    """What JAX died of at the first accepted commit past the span (empty: every accepted commit runs)."""
    laid: str = LAID_FORMS[0]
    """What of each commit was laid over the build (`kit.install.overlay.LAID_FORMS`)."""


UNRUN = "unrun"
"""A commit that runs in no form on no build here: never good, never bad; inside the answer, a range."""


def assign_builds(candidates: Sequence[CommitCandidate], builds: Sequence[Build],
                  runnable: Runnable) -> list[CommitCandidate]:
    """Each commit on the first build (in ``builds``' order) whose span holds it; none: `UNRUN` and why.

    On each build the commit's jaxlib Python is laid with its ``jax/`` where JAX runs so, then ``jax/``
    alone for the accepted commits past that span (`kit.install.overlay.LAID_FORMS`), before the next build.
    A candidate that already has a problem (no build accepts it) keeps it. With one build, no spans are
    sought: every accepted commit is taken to run, and a probe that finds otherwise is a skip, not a verdict.
    """
    if len({b.jaxlib for b in builds}) < 2:
        return list(candidates)
    newest = max(builds, key=lambda b: Version(b.jaxlib)).jaxlib
    spans: list[Span] = []
    for build in builds:
        for laid in LAID_FORMS:
            covered = set().union(*(span.runs for span in spans)) if spans else set()
            accepted = [i for i, c in enumerate(candidates) if i not in covered and _accepts(c, build)]
            spans.append(span_on(candidates, build, accepted, runnable, suffix=build.jaxlib == newest, laid=laid))
    return [_placed(i, candidate, spans) for i, candidate in enumerate(candidates)]


def _accepts(candidate: CommitCandidate, build: Build) -> bool:
    return candidate.accepts is not None and candidate.accepts.accepts(build.jaxlib)


def span_on(candidates: Sequence[CommitCandidate], build: Build, accepted: list[int], runnable: Runnable,
            suffix: bool, laid: str = LAID_FORMS[0]) -> Span:
    """The accepted commits that run on ``build``: a suffix of them on the newer build, a prefix on the older.

    The far end first (the commit furthest from the build's own release): if it runs, they all do. Else
    the near end, and if that runs too, a bisection for the last (first, on the newer build) that runs.
    """
    if not accepted:
        return Span(build, frozenset(), laid=laid)
    order = list(reversed(accepted)) if suffix else accepted  # from the build's own end outwards
    far = _asks(candidates[order[-1]], build, runnable, laid)
    if far.ok:
        return Span(build, frozenset(accepted), laid=laid)
    near = _asks(candidates[order[0]], build, runnable, laid) if len(order) > 1 else far
    if not near.ok:
        return Span(build, frozenset(), near.error, laid)
    good, bad, stopped = 0, len(order) - 1, far.error
    while bad - good > 1:
        middle = (good + bad) // 2
        runs = _asks(candidates[order[middle]], build, runnable, laid)
        if runs.ok:
            good = middle
        else:
            bad, stopped = middle, runs.error
    return Span(build, frozenset(order[: good + 1]), stopped, laid)


def _asks(candidate: CommitCandidate, build: Build, runnable: Runnable, laid: str) -> JaxRuns:
    moved = on_build(candidate, build) if candidate.build != build else candidate
    assert moved is not None  # only accepted pairs are asked
    return runnable(replace(moved, laid=laid))


def _placed(index: int, candidate: CommitCandidate, spans: Sequence[Span]) -> CommitCandidate:
    if candidate.problem:
        return candidate
    for span in spans:
        if index in span.runs:
            if candidate.build == span.build:
                return replace(candidate, laid=span.laid)
            return replace(candidate, build=span.build, python=span.build.python, jaxlib=span.build.jaxlib,
                           laid=span.laid)
    why = "; ".join(f"on jaxlib {s.build.jaxlib} with {s.laid}: {s.stopped}" for s in spans
                    if s.stopped and _accepts(candidate, s.build))
    return replace(candidate, build=None, python=None, jaxlib=None,
                   problem=f"{UNRUN}: JAX itself cannot run it on any jaxlib build here, with its jaxlib Python or "
                           f"{JAX_ALONE} ({why or 'no build accepts it'})")
