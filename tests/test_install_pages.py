"""kit.install.pages: every page an install reads besides the index answers before uv runs, or exit 4 naming it."""

from __future__ import annotations

import pytest

from kit.errors import IndexUnreachable
from kit.install import pages
from kit.install.plan import JAX_CUDA_ARCHIVE_PAGE, InstallPlan
from tests.fake_index import refused_url, serve_index


@pytest.fixture(autouse=True)
def nothing_heard_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "_ANSWERED", set())
    monkeypatch.setattr(pages, "_SILENT", {})


def test_the_pages_are_extra_indexes_and_find_links_on_servers() -> None:
    plan = InstallPlan(jax="0.4.18", backend="cuda", requirements=(), exclude_newer=None,
                       index_url="https://pypi.org/simple", extra_index_urls=("https://mirror.example/simple",),
                       find_links=("/wheels", "file:///wheels/index.html", JAX_CUDA_ARCHIVE_PAGE,
                                   "https://mirror.example/simple"))
    assert pages.plan_pages(plan) == ("https://mirror.example/simple", JAX_CUDA_ARCHIVE_PAGE)


def test_each_page_is_asked_once_per_process() -> None:
    with serve_index(archive=("jaxlib-0.4.16-py3-none-any.whl",)) as served:
        pages.require_pages([served.archive], "0.4.16")
        pages.require_pages([served.archive], "0.4.18")
        assert served.requests == ["/archive/"]


def test_the_first_silent_page_is_named_with_the_release_and_the_reason() -> None:
    silent = refused_url().replace("/simple", "/wheels.html")
    with serve_index() as served:
        with pytest.raises(IndexUnreachable) as unreachable:
            pages.require_pages([served.archive, silent], "0.6.0")
    assert str(unreachable.value) == (f"jax 0.6.0 needs the page {silent} to install, and it could not be reached "
                                      "over the network (Connection refused)")
    assert "an outage says nothing about the release" in unreachable.value.tip
    assert pages._ANSWERED == {served.archive}  # the one that answered is not asked again


def test_a_silent_page_is_not_asked_again_for_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    monkeypatch.setattr(pages.http, "unreachable", lambda page, timeout: asked.append(page) or "timed out")
    for version in ("0.4.18", "0.4.20"):  # a sweep: one release after another needs the same page
        with pytest.raises(IndexUnreachable, match=r"could not be reached over the network \(timed out\)"):
            pages.require_pages([JAX_CUDA_ARCHIVE_PAGE], version)
    assert asked == [JAX_CUDA_ARCHIVE_PAGE]
    monkeypatch.setattr(pages, "SILENT_FOR_S", 0.0)
    with pytest.raises(IndexUnreachable):
        pages.require_pages([JAX_CUDA_ARCHIVE_PAGE], "0.4.23")
    assert len(asked) == 2


def test_jax_pages_are_called_what_jax_calls_them() -> None:
    assert pages.describe(JAX_CUDA_ARCHIVE_PAGE) == "JAX's page of CUDA jaxlibs"
    assert pages.describe("https://example.org/wheels.html") == "the page"
