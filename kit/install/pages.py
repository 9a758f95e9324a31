"""The pages an install depends on besides the index, and whether each answers before uv is asked.

A plan can read wheels from more than the index: extra indexes and
find-links pages from matrix.toml or ``--find-links``, JAX's page of CUDA
jaxlibs (the ``cuda12_pip`` era), JAX's archive of pruned jaxlibs. Asked to
resolve with one of them out of reach, uv retries it for seconds, once per
Python, and then fails in words that read like an answer about the release.
An outage says nothing about a release, so the same rule holds for every
page as for the index: each is probed once per process (one that did not
answer is asked again after a minute), all at once and quickly, and the
first that does not answer is `IndexUnreachable` (exit 4,
one sentence naming the page, no record), before uv runs.

Any HTTP answer counts, an error status too: the probe judges the network;
what the page holds is uv's to read. Local folders and file:// pages are
not probed: they are no network's.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from .. import http
from ..errors import IndexUnreachable
from .plan import JAX_ARCHIVE_PAGE, JAX_CUDA_ARCHIVE_PAGE, InstallPlan
from .uv_errors import NETWORK_TIP

_ANSWERED: set[str] = set()
"""Pages that answered in this process: a sweep or a bisect plans many releases against the same pages."""

_SILENT: dict[str, tuple[float, str]] = {}
"""Pages that did not answer: (when, why). A sweep meets the CUDA page once per cuda12_pip-era release,
and a page that times out would cost its timeout each time."""

SILENT_FOR_S = 60.0
"""How long a silent page is taken as still silent before it is asked again."""


def plan_pages(plan: InstallPlan) -> tuple[str, ...]:
    """The plan's extra indexes and find-links pages on servers (not folders), each once, in the plan's order."""
    return tuple(dict.fromkeys(url for url in (*plan.extra_index_urls, *plan.find_links) if _on_a_server(url)))


def require_pages(pages: Sequence[str], version: str, tip: str = NETWORK_TIP, what: str = "",
                  timeout: float = http.PROBE_TIMEOUT_S) -> None:
    """Probe the pages not yet heard from, in parallel; `IndexUnreachable` naming the first that is silent.

    ``what`` names the pages in the sentence where `describe` would not (the archive matrix.toml configures).
    """
    todo = [page for page in dict.fromkeys(pages) if _on_a_server(page) and page not in _ANSWERED]
    if not todo:
        return
    fresh = [page for page in todo if not _recently_silent(page)]
    if fresh:
        with ThreadPoolExecutor(max_workers=min(8, len(fresh))) as pool:
            answers = list(pool.map(lambda page: http.unreachable(page, timeout), fresh))
        for page, why in zip(fresh, answers):
            if why:
                _SILENT[page] = (time.monotonic(), why)
            else:
                _SILENT.pop(page, None)
                _ANSWERED.add(page)
    for page in todo:
        if page in _SILENT:
            raise IndexUnreachable(f"jax {version} needs {what or describe(page)} {page} to install, and it could not "
                                   f"be reached over the network ({_SILENT[page][1]})", tip)


def _recently_silent(page: str) -> bool:
    since = _SILENT.get(page)
    return since is not None and time.monotonic() - since[0] < SILENT_FOR_S


def describe(page: str) -> str:
    """What a page is, in the words of JAX's installation guide where it is one of JAX's."""
    if page == JAX_CUDA_ARCHIVE_PAGE:
        return "JAX's page of CUDA jaxlibs"
    if page == JAX_ARCHIVE_PAGE:
        return "JAX's archive of pruned jaxlibs"
    return "the page"


def _on_a_server(url: str) -> bool:
    return url.startswith(("http://", "https://"))
