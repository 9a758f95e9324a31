"""kit/install/installed.py: does a built environment still hold each pinned package, by names alone.

A damaged environment rebuilt end to end is in tests/faults/test_damaged_environments.py; here the check is
called on hand-made site-packages for its boundaries, and on the real environments already built here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kit.install.installed import missing_from, site_packages

ROOT = Path(__file__).resolve().parents[1]


def _site(env: Path, python: str = "3.12") -> Path:
    site = env / "lib" / f"python{python}" / "site-packages"
    site.mkdir(parents=True)
    return site


def _dist(site: Path, folder: str, record: str | None, *entries: str) -> None:
    info = site / f"{folder}.dist-info"
    info.mkdir()
    if record is not None:
        (info / "RECORD").write_text(record)
    for entry in entries:
        path = site / entry
        if entry.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.write_text("")


def test_everything_there_is_nothing_missing(tmp_path: Path) -> None:
    site = _site(tmp_path)
    _dist(site, "jax-0.4.35", "jax/__init__.py,sha256=x,1\njax-0.4.35.dist-info/RECORD,,\n", "jax/")
    _dist(site, "six-1.16.0", "six.py,,\n", "six.py")
    assert missing_from(tmp_path, {"jax": "0.4.35", "six": "1.16.0"}) == ""


def test_names_and_versions_are_compared_in_their_normal_forms(tmp_path: Path) -> None:
    # The lock says ml-dtypes 0.5, the installer wrote ml_dtypes-0.5.0.dist-info: the same distribution.
    _dist(_site(tmp_path), "ml_dtypes-0.5.0", "ml_dtypes/__init__.py,,\n", "ml_dtypes/")
    assert missing_from(tmp_path, {"ML-Dtypes": "0.5"}) == ""


def test_another_version_installed_is_missing_the_pinned_one(tmp_path: Path) -> None:
    _dist(_site(tmp_path), "numpy-2.1.3", "numpy/__init__.py,,\n", "numpy/")
    assert missing_from(tmp_path, {"numpy": "1.26.4"}) == ("numpy 1.26.4 has no numpy-1.26.4.dist-info in "
                                                            "site-packages")


def test_a_removed_top_level_entry_is_named_from_site_packages(tmp_path: Path) -> None:
    _dist(_site(tmp_path), "numpy-2.1.3", "numpy/__init__.py,,\nnumpy.libs/libopenblas.so,,\n", "numpy/")
    assert missing_from(tmp_path, {"numpy": "2.1.3"}) == ("site-packages/numpy.libs, listed in numpy 2.1.3's "
                                                          "RECORD, is missing")


def test_scripts_data_bytecode_and_the_dist_info_are_not_entries_to_look_for(tmp_path: Path) -> None:
    # They are not what `import` needs: a missing ../../bin/script or __pycache__ must not force a rebuild.
    record = ("../../bin/tool,,\ntool-1.0.data/scripts/x,,\n__pycache__/tool.cpython-312.pyc,,\n"
              "tool-1.0.dist-info/METADATA,,\ntool.py,,\n\n")
    _dist(_site(tmp_path), "tool-1.0", record, "tool.py")
    assert missing_from(tmp_path, {"tool": "1.0"}) == ""


def test_a_record_written_with_backslashes_is_read_as_paths(tmp_path: Path) -> None:
    _dist(_site(tmp_path), "win-1.0", "win\\__init__.py,,\n", "other/")
    assert missing_from(tmp_path, {"win": "1.0"}) == "site-packages/win, listed in win 1.0's RECORD, is missing"


@pytest.mark.parametrize("record", [None, b"\xff\xfe not utf-8"])
def test_without_a_readable_record_only_the_dist_info_counts(tmp_path: Path, record: bytes | None) -> None:
    site = _site(tmp_path)
    _dist(site, "odd-1.0", None)
    if record is not None:
        (site / "odd-1.0.dist-info" / "RECORD").write_bytes(record)
    assert missing_from(tmp_path, {"odd": "1.0"}) == ""


def test_no_site_packages_is_said_only_when_something_was_pinned(tmp_path: Path) -> None:
    assert missing_from(tmp_path, {"jax": "0.4.35"}) == "it has no site-packages folder"
    assert missing_from(tmp_path, {}) == ""


def test_every_site_packages_of_the_environment_is_searched(tmp_path: Path) -> None:
    # A venv upgraded in place may hold two lib/pythonX.Y folders: a package in either one is installed.
    _dist(_site(tmp_path, "3.11"), "a-1.0", "a.py,,\n", "a.py")
    _dist(_site(tmp_path, "3.12"), "b-1.0", "b.py,,\n", "b.py")
    assert [p.parent.name for p in site_packages(tmp_path)] == ["python3.11", "python3.12"]
    assert missing_from(tmp_path, {"a": "1.0", "b": "1.0"}) == ""


def _built_environments() -> list[Path]:
    envs = ROOT / ".nox" / "jax-envs"
    return sorted(path.parent for path in envs.glob("jax-*/kit-env.json")) if envs.is_dir() else []


@pytest.mark.skipif(not _built_environments(), reason="no release environment is built here (.nox/jax-envs)")
def test_the_release_environments_built_here_hold_what_they_installed() -> None:
    # Real environments, as uv installed them: the check must find every version, or each reuse would rebuild.
    for env in _built_environments()[:5]:
        saved = json.loads((env / "kit-env.json").read_text())
        versions = saved.get("versions", saved.get("pins"))  # an environment built before the rename says "pins"
        assert "jax" in versions and missing_from(env, versions) == "", env.name
