"""kit/install/uv_cache.py: whether uv's cached PyPI pages hold a whole era, and where that cache is.

tests/test_install_resolutions.py checks the main rule (every page read after the cut-off) with the pages'
folder stood in for; here the folder is found as uv lays it out (the newest ``simple-v*`` layout), and the
boundaries of the rule: a page read at the cut-off itself, a cut-off that is not one, no cache at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from kit.install import uv_cache

CLOSED = "2024-11-05T20:56:34Z"
CUTOFF = 1730840194.0  # CLOSED as a POSIX time
PYPI = "https://pypi.org/simple"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty uv cache folder, named by UV_CACHE_DIR as uv's own rule reads it."""
    root = tmp_path / "uv-cache"
    root.mkdir()
    monkeypatch.setenv("UV_CACHE_DIR", str(root))
    uv_cache._pypi_pages.cache_clear()  # the folder is looked up once per process: forget the last test's
    yield root
    uv_cache._pypi_pages.cache_clear()


def page(cache: Path, layout: str, name: str, read_at: float) -> Path:
    path = cache / layout / "pypi" / f"{name}.rkyv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    os.utime(path, (read_at, read_at))
    return path


def test_the_newest_layout_is_read_by_its_number_not_its_spelling(cache: Path) -> None:
    # As text "simple-v9" sorts after "simple-v28": reading it would judge by pages uv no longer updates.
    page(cache, "simple-v9", "numpy", CUTOFF + 3600)
    page(cache, "simple-v28", "numpy", CUTOFF - 3600)
    assert not uv_cache.holds_era(PYPI, False, CLOSED, ["numpy"], "uv")


def test_a_page_read_exactly_at_the_cut_off_may_still_lack_a_file_uploaded_that_second(cache: Path) -> None:
    page(cache, "simple-v28", "numpy", CUTOFF)
    assert not uv_cache.holds_era(PYPI, False, CLOSED, ["numpy"], "uv")
    page(cache, "simple-v28", "numpy", CUTOFF + 1)
    assert uv_cache.holds_era(PYPI, False, CLOSED, ["numpy"], "uv")


@pytest.mark.parametrize("cutoff", ["2024-11-05", "2024-11-05T20:56:34+00:00", "yesterday", ""])
def test_a_cut_off_in_another_form_is_no_answer_not_an_error(cache: Path, cutoff: str) -> None:
    page(cache, "simple-v28", "numpy", CUTOFF + 3600)
    assert not uv_cache.holds_era(PYPI, False, cutoff, ["numpy"], "uv")


def test_a_cache_without_pypi_pages_holds_nothing(cache: Path) -> None:
    (cache / "simple-v28" / "other-index").mkdir(parents=True)  # another index's pages are not PyPI's
    assert not uv_cache.holds_era(PYPI, False, CLOSED, ["numpy"], "uv")


def test_a_layout_without_a_number_is_passed_over_for_one_with_a_number(cache: Path) -> None:
    page(cache, "simple-vnext", "numpy", CUTOFF - 3600)
    page(cache, "simple-v2", "numpy", CUTOFF + 3600)
    assert uv_cache.holds_era(PYPI, False, CLOSED, ["numpy"], "uv")


def test_no_cache_folder_and_a_uv_that_cannot_say_where_is_no_answer(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "never-made"))
    uv_cache._pypi_pages.cache_clear()
    try:
        assert not uv_cache.holds_era(PYPI, False, CLOSED, ["numpy"], str(tmp_path / "no-such-uv"))
    finally:
        uv_cache._pypi_pages.cache_clear()


def test_an_empty_uv_cache_dir_falls_back_to_the_xdg_folder_as_uv_does(tmp_path: Path) -> None:
    (tmp_path / "xdg" / "uv").mkdir(parents=True)
    environ = {"UV_CACHE_DIR": "", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert uv_cache.default_cache_dir(environ) == tmp_path / "xdg" / "uv"
