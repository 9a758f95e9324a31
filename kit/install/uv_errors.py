"""What a uv refusal's words say: the network's trouble, a gap in uv's cache, a version the index lacks.

`plan._resolve` keeps uv's stderr as a resolution's error (`uv_error`) after
asking `raise_if_network_trouble` whether the network, not the index, failed
it; `plan.choose_python` and `release` ask `cache_gap` whether an offline
answer is the cache's rather than the index's; `plan.unresolvable_reason`
and `refusals` read the patterns below for the sentence a record gets. A
failure that is this machine's (a cut download, a cache uv cannot write) is
read before any of these, by `uv_failures`.
"""

from __future__ import annotations

import os
import re

from ..errors import IndexUnreachable

CACHE_PREDATES_ERA = "uv's cache cannot tell: some page it read may predate the era's cut-off"
"""An offline resolve that uv answered from pages not known to hold the whole era: no answer (ask the index)."""


def cache_gap(error: str) -> bool:
    """An offline resolve failed on what uv's cache lacks (or may lack), not on what the index says."""
    return error == CACHE_PREDATES_ERA or _OFFLINE_WORDS.search(error) is not None


_OFFLINE_WORDS = re.compile(r"not (?:found )?in the cache|network was disabled|network connectivity is disabled|offline",
                            re.IGNORECASE)


# What uv says when the network, not the index, failed it.
_NETWORK_TROUBLE = re.compile(r"error sending request|tcp connect error|dns error|Connection refused|"
                              r"operation timed out|failed to lookup address|tunnel error|Network is unreachable",
                              re.IGNORECASE)


NETWORK_TIP = ("check the network (and HTTPS_PROXY); an outage says nothing about the release, so nothing was "
               "recorded; releases whose environment is already built run without it")

RELEASE_MISSING = re.compile(r"no version of (jaxlib|jax)==([\w.]+)")
"""uv's words when the release's own jax or jaxlib pin has no version at all (group 1 the package, 2 the version)."""
FIND_LINKS_UNREADABLE = re.compile(r"Failed to read `--find-links` URL: (\S+)")


def raise_if_network_trouble(stderr: str) -> None:
    """`IndexUnreachable` when uv's failure was the network's, not an answer about the release.

    A find-links page out of reach is the network's too: the pages are probed
    before uv runs (`pages.require_pages`), and this catches one that went
    away in between.
    """
    if not _NETWORK_TROUBLE.search(stderr):
        return
    causes = [ln.strip()[len("cause:"):].strip() for ln in stderr.splitlines() if ln.strip().startswith("cause:")]
    page = FIND_LINKS_UNREADABLE.search(stderr)
    what = f"the find-links page {page.group(1)}" if page else "the package index"
    raise IndexUnreachable(f"uv could not reach {what} over the network "
                           f"({causes[-1] if causes else uv_error(stderr)})", NETWORK_TIP)


def raise_if_offline_cache_gap(stderr: str) -> None:
    """`IndexUnreachable` when uv, kept offline (``UV_OFFLINE``, ``--offline``), failed an install on what its
    cache lacks: a locked release whose wheels were never downloaded here was recorded NOT INSTALLABLE."""
    if not re.search(r"network (?:was|is) disabled|network connectivity is disabled|not found in the cache", stderr,
                     re.IGNORECASE):
        return
    offline = " (UV_OFFLINE is set)" if os.environ.get("UV_OFFLINE", "").strip() not in ("", "0", "false") else ""
    raise IndexUnreachable(f"uv is offline{offline} and its cache lacks what the release installs "
                           f"({uv_cause(uv_error(stderr))}): the index was never asked, so nothing was built or "
                           "recorded",
                           "let uv reach the index (unset UV_OFFLINE), or fill its cache first on a machine that can "
                           "(the same command there); releases whose environment is already built run offline")


# uv's words when a package does not exist at all, or has no release before the era's cut-off that
# meets the requirement: for an extra package, no other Python changes either answer.
NOT_ON_INDEX = re.compile(r"Because ([A-Za-z0-9_.\-]+) was not found in the package registry")
NONE_OF_ITS_ERA = re.compile(r"Because (?:only |there (?:is|are) no versions? of )([A-Za-z0-9_.\-]+?)(?=[<>=!~ ]|$)")


def uv_cause(error: str) -> str:
    """uv's reason without its "No solution found" preamble and its hints."""
    text = error.split("cause:", 1)[-1].split(" hint:", 1)[0].strip()
    return text.removeprefix("error: ").strip()


def uv_error(stderr: str) -> str:
    """uv's stderr as one line of at most 600 characters, its warnings left out: a resolution's error."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    keep = [ln for ln in lines if not ln.lower().startswith("warning")]
    text = " ".join(keep or lines)
    text = re.sub(r"\s+", " ", text)
    return text[:600] or "uv could not resolve the requirements"
