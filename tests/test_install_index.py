"""kit.install.index: releases, upload dates and neighbours read from a PEP 691 index, cached on disk."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from packaging.version import Version

from kit.errors import IndexUnreachable
from kit.install.index import PackageIndex, versions_between
from tests.fake_index import refused_url, serve_index


def test_releases_dates_and_neighbours_come_from_the_index(tmp_path: Path) -> None:
    with serve_index() as served:
        index = PackageIndex(served.url, cache_dir=tmp_path)
        assert index.jax_releases() == [Version("0.4.13"), Version("0.4.16"), Version("0.4.18"), Version("0.6.0")]
        assert index.release_date("0.4.16") == datetime(2023, 9, 18, 20, 0, tzinfo=timezone.utc)
        assert index.release_date("9.9.9") is None
        # 0.4.16 has no jaxlib on this index: its neighbours are the nearest releases that have one.
        assert index.neighbours("0.4.16") == ["0.4.13", "0.4.18"]


def test_a_version_the_index_lacks_is_named_with_the_newest(tmp_path: Path) -> None:
    with serve_index() as served:
        index = PackageIndex(served.url, cache_dir=tmp_path)
        assert index.unknown_release("0.4.16") == ""
        assert index.unknown_release("9.9.9") == f"jax 9.9.9 is not a JAX release on {served.url}; newest is 0.6.0"


def test_a_second_index_object_reads_the_page_from_the_disk_cache(tmp_path: Path) -> None:
    with serve_index() as served:
        PackageIndex(served.url, cache_dir=tmp_path).jax_releases()
        asked = len(served.requests)
        PackageIndex(served.url, cache_dir=tmp_path).jax_releases()
        assert len(served.requests) == asked == 1


def test_an_index_that_refuses_connections_is_one_error_naming_the_url(tmp_path: Path) -> None:
    url = refused_url()
    with pytest.raises(IndexUnreachable, match=f"{url}/jax/ could not be reached over the network"):
        PackageIndex(url, cache_dir=tmp_path).jax_releases()


def test_versions_between_takes_the_bounds_in_either_order() -> None:
    versions = [Version(v) for v in ("0.4.13", "0.4.16", "0.4.18", "0.6.0")]
    assert versions_between(versions, "0.6.0", "0.4.16") == [Version("0.4.16"), Version("0.4.18"), Version("0.6.0")]
