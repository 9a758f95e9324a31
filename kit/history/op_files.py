"""Which of JAX's files the script's failing op lives in, so that the leads of an untested span can be narrowed.

Where a pair cannot run, the commit answer lists leads: commits whose diff
gates on the jaxlib or extension version (:func:`kit.history.leads.gated_leads`).
Every gate the two builds answer apart is many commits in a busy range; the
ones worth reading first are those in the code that emits the op the check
fails on. What the kit knows of that op, without guessing:

* the op named by ``--explain PROGRAM --op FILE:LINE:OP`` (``lu``,
  ``triangular_solve``): JAX's primitive;
* the failing probes' output: the custom-call targets and HLO ops it names
  (``lapack_strsm_ffi``, ``cusolver_getrf_ffi``, ``triangular-solve``), as
  a check that reads the compiled HLO prints them, and JAX's own files a
  traceback names (``jax/_src/lax/linalg.py``).

Each name is reduced to the words JAX's Python spells it with: a LAPACK or
GPU-solver target to its routine (``lapack_strsm_ffi`` → ``trsm``: JAX builds
the target as ``prepare_lapack_call("trsm_ffi", dtype)``) and to the primitive
whose lowering calls it (``triangular_solve``); an HLO op to its primitive's
name. The files are those of JAX's Python (``jax/``, ``jaxlib/``, tests and
test data left out) that hold one of those words at the range's newer end,
found with one ``git grep``.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass
from typing import Iterable

from .git import GitFailed, git
from .source import History

# The LAPACK / cuSOLVER routine each linear-algebra primitive's lowering calls, both ways round.
ROUTINES = {"triangular_solve": ("trsm",), "lu": ("getrf",), "cholesky": ("potrf",), "qr": ("geqrf", "orgqr"),
            "householder_product": ("orgqr",), "eigh": ("syevd", "heevd"), "eig": ("geev",),
            "svd": ("gesdd", "gesvd"), "schur": ("gees",), "hessenberg": ("gehrd",), "tridiagonal": ("sytrd",),
            "tridiagonal_solve": ("gtsv",)}
PRIMITIVES = {routine: primitive for primitive, routines in ROUTINES.items() for routine in routines}
_TARGET = re.compile(r"\b(?:lapack|blas|cusolver|hipsolver|cublas|hipblas|cu|hip)_([a-z0-9]+?)(?:_ffi)?\b")
_HLO_OP = re.compile(r"\b(triangular-solve|cholesky|fft|custom-call)\b")
_JAX_FILE = re.compile(r"\b((?:jax|jaxlib)/[\w/]+\.py)\b")
_LAPACK_TYPES = "sdcz"
_NOT_THE_OP = ("test", "/experimental/jax2tf/", "internal_test_util")


@dataclass(frozen=True)
class OpFiles:
    """The failing op as the kit saw it, the words searched for, and the JAX files that hold them."""

    names: tuple[str, ...]
    """What named the op: ``lapack_strsm_ffi`` (a probe's output), ``--op triangular_solve``, a traceback's file."""
    words: tuple[str, ...]
    """What JAX's Python was searched for: ``trsm``, ``triangular_solve``."""
    files: tuple[str, ...]

    def named_in(self, text: str) -> list[str]:
        """The words of the op that ``text`` holds as names of their own."""
        return [word for word in self.words if re.search(word_pattern([word]), text, re.M)]

    def describe(self) -> str:
        shown = ", ".join(self.files[:4]) + (f" and {len(self.files) - 4} more" if len(self.files) > 4 else "")
        return f"{shown} (the files naming {' / '.join(self.words)}, from {', '.join(self.names[:4])})"


def op_words(texts: Iterable[str], op: str = "", passing: Iterable[str] = ()) -> tuple[
        tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(names found, words to search for, JAX files named outright) in the failing output and ``--op``'s op.

    A check often prints every op it saw, failing or not; where the failing
    output names some more often than the ``passing`` output does (``whole
    batch: ['lapack_strsm_ffi']`` beside the list of all), only those count.
    """
    texts = list(texts)
    excess = _excess(texts, list(passing))
    if excess:
        texts = [" ".join(excess)]
    names: list[str] = []
    words: list[str] = []
    paths: list[str] = []
    if op:
        names.append(f"--op {op}")
        words += [op, *ROUTINES.get(op, ())]
    for text in texts:
        for match in _TARGET.finditer(text):
            routine = _routine(match.group(0), match.group(1))
            if routine:
                names.append(match.group(0))
                words += [routine, *((PRIMITIVES[routine],) if routine in PRIMITIVES else ())]
        for match in _HLO_OP.finditer(text):
            if match.group(1) != "custom-call":  # a custom call is named by its target, above
                names.append(match.group(1))
                primitive = match.group(1).replace("-", "_")
                words += [primitive, *ROUTINES.get(primitive, ())]
        for match in _JAX_FILE.finditer(text):
            if not any(part in match.group(1) for part in _NOT_THE_OP):
                names.append(match.group(1))
                paths.append(match.group(1))
    return tuple(dict.fromkeys(names)), tuple(dict.fromkeys(words)), tuple(dict.fromkeys(paths))


def _excess(failing: list[str], passing: list[str]) -> list[str]:
    """The op names the failing output holds more often than the passing one (per output, on average)."""
    def counts(texts: list[str]) -> collections.Counter[str]:
        found: collections.Counter[str] = collections.Counter()
        for text in texts:
            found.update(m.group(0) for pattern in (_TARGET, _HLO_OP) for m in pattern.finditer(text))
        return found
    if not failing or not passing:
        return []
    bad, good = counts(failing), counts(passing)
    return [name for name in bad if bad[name] / len(failing) > good[name] / len(passing)]


def word_pattern(words: Iterable[str]) -> str:
    """An extended regex for any of ``words`` as a name of its own (``lu_p``, ``_lu_cpu_lowering``, not ``value``);
    a LAPACK routine also with its type letter (``strsm``)."""
    alternatives = [f"[{_LAPACK_TYPES}]?{re.escape(w)}" if w in PRIMITIVES else re.escape(w) for w in words]
    return f"(^|[^A-Za-z0-9])({'|'.join(alternatives)})([^A-Za-z0-9]|$)"


def _routine(target: str, body: str) -> str:
    """``lapack_strsm_ffi`` → ``trsm`` (LAPACK names carry the type letter; the GPU solvers' do not)."""
    if target.startswith(("lapack_", "blas_")) and len(body) > 3 and body[0] in _LAPACK_TYPES:
        body = body[1:]
    return body if body in PRIMITIVES or len(body) >= 4 else ""


def op_files(history: History, commit: str, texts: Iterable[str], op: str = "",
             passing: Iterable[str] = ()) -> OpFiles | None:
    """The JAX files at ``commit`` the failing op lives in; None where nothing named an op (or git failed)."""
    names, words, paths = op_words(texts, op, passing)
    if not words and not paths:
        return None
    found: list[str] = list(paths)
    if words:
        try:
            out = git(history.path, "grep", "-l", "-E", word_pattern(words), commit, "--", "jax/*.py", "jaxlib/*.py")
        except GitFailed:  # no file names it (git grep exits 1), or the commit's contents are not here
            out = ""
        found += [line.partition(":")[2] for line in out.splitlines()
                  if not any(part in line for part in _NOT_THE_OP)]
    files = tuple(dict.fromkeys(found))
    return OpFiles(names, words, files) if files else None


def commits_touching(history: History, old: str, new: str, files: Iterable[str]) -> set[str] | None:
    """The commits in ``old..new`` that change one of ``files``; None where git could not say."""
    try:
        out = git(history.path, "log", "--format=%H", f"{old}..{new}", "--", *files)
    except GitFailed:
        return None
    return set(out.split())
