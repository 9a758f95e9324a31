"""The commit phase's verdict, from the user's side: one word per answer, and the one table of how each is said.

A `CommitVerdict` is a `str` enum (`kit.records.Word`), so the report's JSON ``commits.verdict`` holds the same word
it always did and reports written before it read back equal. The words, in order of the checks that give them
(`kit.bisect.commits.finding.CommitFinding.verdict`):

* ``commit``: the first changed commit, exactly (the report names it in full);
* ``short-list``: skipped commits between the last unchanged and the first changed one could each hold the change;
* ``not-in-python``: the same Python gave both outcomes on two jaxlib builds, or both ends of the range gave the same
  outcome on one build: the change is in the compiled jaxlib (the report names both builds and the XLA range);
* ``commit-with-newer-jaxlib``: the first changed commit, exactly, but it changes the behaviour only on the newer
  jaxlib build (its Python takes another path there; the gates its diff adds are named);
* ``binary-may-be-the-cause``: the outcome changed exactly where the probes switched builds, and no commit there runs
  on both to tell;
* ``build-matters``: the same Python gave both outcomes on two builds, but the commits before some X could not run on
  the newer build, so a Python change that needs it was never ruled out (the untested span and leads);
* ``stopped``: the range's ends did not behave as the releases did (the reason says how).
"""

from __future__ import annotations

from ...records import Word


class CommitVerdict(Word):
    """What the commit phase found (the report's JSON ``commits.verdict``)."""

    COMMIT = "commit"
    SHORT_LIST = "short-list"
    NOT_IN_PYTHON = "not-in-python"
    COMMIT_WITH_NEWER_JAXLIB = "commit-with-newer-jaxlib"
    BINARY_MAY_BE_THE_CAUSE = "binary-may-be-the-cause"
    BUILD_MATTERS = "build-matters"
    STOPPED = "stopped"

    @property
    def answer(self) -> str:
        """The report's commit section's answer: ``**Answer: {answer}.**``."""
        return _WORDS[self][0]

    @property
    def short(self) -> str:
        """The summary's words for it, after ``**Commit**``."""
        return _WORDS[self][1]

    @property
    def exact(self) -> bool:
        """Is one commit named as the change?"""
        return self in (CommitVerdict.COMMIT, CommitVerdict.COMMIT_WITH_NEWER_JAXLIB)

    @property
    def names_commits(self) -> bool:
        """Does the summary name the first changed commit (exactly, or as the head of a short list)?"""
        return self.exact or self is CommitVerdict.SHORT_LIST

    @property
    def about_the_build(self) -> bool:
        """Does the answer turn on the jaxlib build (so the report asks each build for its extension's version)?"""
        return self in (CommitVerdict.NOT_IN_PYTHON, CommitVerdict.BINARY_MAY_BE_THE_CAUSE,
                        CommitVerdict.BUILD_MATTERS)


_WORDS: dict[CommitVerdict, tuple[str, str]] = {
    # verdict: (the report's answer, the summary's words)
    CommitVerdict.COMMIT: ("the commit", "exact"),
    CommitVerdict.COMMIT_WITH_NEWER_JAXLIB: ("the commit, with the newer jaxlib only", "with the newer jaxlib only"),
    CommitVerdict.SHORT_LIST: ("a short list of commits", "a short list"),
    CommitVerdict.NOT_IN_PYTHON: ("not in JAX's Python", "not in JAX's Python: the jaxlib binary"),
    CommitVerdict.BINARY_MAY_BE_THE_CAUSE: ("a range: the jaxlib binary and JAX's Python not told apart",
                                            "a range: the binary and the Python not told apart"),
    CommitVerdict.BUILD_MATTERS: ("the build matters; whether JAX's Python needs the newer jaxlib is untested",
                                  "the build matters; whether the Python needs it is untested"),
    CommitVerdict.STOPPED: ("stopped at the ends", "stopped at the ends"),
}
