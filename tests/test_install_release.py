"""kit.install.release: how a release installs here (its plan, its Python, its lock)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from kit.install import plan as install, lockfile, release
from kit.config import parse_matrix
from kit.errors import IndexUnreachable, UsageError
from kit.install.plan import InstallPlan, Resolution
from kit.install.uv_errors import CACHE_PREDATES_ERA
from kit.install.key import InstallKey
from tests.fake_index import refused_url, serve_index, wheel
from tests.metadata_index import TableIndex

MATRIX = parse_matrix({"kit": {"envs_dir": "/nonexistent/envs"}, "install": {"jaxlib_archive": ""},
                       "release": [{"version": "0.4.35"}], "checks": {"scaling": {}}})


def plan_for(matrix: Any, rel: Any, key: InstallKey, index: Any) -> InstallPlan:
    return InstallPlan(jax=rel.version, backend=key.backend,
                       requirements=(f"jax[cpu]=={rel.version}", "scipy", *key.requires, *key.pins),
                       exclude_newer="2024-11-05T20:56:00Z", index_url="https://example.invalid/simple",
                       pythons=("3.13", "3.12", "3.11", "3.10"), pins=key.pins, requires=key.requires)


INDEX: Any = TableIndex()  # up, and has every release asked about


@pytest.fixture(autouse=True)
def no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release, "plan_install", plan_for)
    monkeypatch.setattr(release, "available_pythons", lambda wanted: [p for p in wanted if p != "3.12"])


def test_the_first_installed_python_in_preference_order_that_resolves_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "resolve", lambda plan, python, offline=False, store=None: Resolution(python, ok=python <= "3.11"))
    resolved = release.resolve_release(MATRIX, "0.4.35", InstallKey("cpu"), INDEX)
    assert resolved.python == "3.11"
    assert resolved.problem == ""
    assert [a.python for a in resolved.attempts] == ["3.13", "3.11"]  # 3.12 is not installed


def test_pins_reach_the_plan_that_is_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[InstallPlan] = []
    monkeypatch.setattr(install, "resolve", lambda plan, python, offline=False, store=None: asked.append(plan) or
                        Resolution(python, ok=True, versions={"numpy": "2.2.1"}))
    resolved = release.resolve_release(MATRIX, "0.4.35", InstallKey("cpu", pins=("numpy==2.2.1",)), INDEX)
    assert asked
    assert all(plan.pins == ("numpy==2.2.1",) and "numpy==2.2.1" in plan.requirements for plan in asked)
    assert resolved.plan.pins == ("numpy==2.2.1",)
    assert resolved.settings["pins"] == ["numpy==2.2.1"]


@pytest.mark.parametrize("cache", ["answers", "predates the era", "lacks what 3.13 needs"])
def test_uv_s_cache_is_asked_first_and_the_index_only_where_it_cannot_answer(
        cache: str, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, bool]] = []
    no_wheels = "Because jaxlib==0.4.35 has no wheels with a matching Python ABI tag (cp313)"

    def resolve(plan: InstallPlan, python: str, offline: bool = False, store: Any = None) -> Resolution:
        asked.append((python, offline))
        if python == "3.13":
            gap = offline and cache == "lacks what 3.13 needs"
            return Resolution(python, ok=False, error="uv is offline: not in the cache: ml-dtypes" if gap else no_wheels)
        if offline and cache == "predates the era":
            return Resolution(python, ok=False, error=CACHE_PREDATES_ERA)
        return Resolution(python, ok=True)

    monkeypatch.setattr(install, "resolve", resolve)
    resolved = release.resolve_release(MATRIX, "0.4.35", InstallKey("cpu"), INDEX)
    assert resolved.python == "3.11"
    # The cache's answer stands only where every Python it passed over failed on what the index said too;
    # the first thing it lacks ends its turn.
    offline = [("3.13", True)] if cache == "lacks what 3.13 needs" else [("3.13", True), ("3.11", True)]
    assert asked == (offline if cache == "answers" else offline + [("3.13", False), ("3.11", False)])
    assert [attempt.error for attempt in resolved.attempts] == [no_wheels, ""]


def test_a_release_no_python_resolves_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    error = "jaxlib (v0.4.35) with the following Python ABI tags: cp314"
    monkeypatch.setattr(install, "resolve", lambda plan, python, offline=False, store=None: Resolution(python, ok=False, error=error))
    resolved = release.resolve_release(MATRIX, "0.4.35", InstallKey("cpu"), INDEX)
    assert resolved.python is None
    assert resolved.versions == {}
    # Installed Pythons first, then the one uv could supply.
    assert resolved.problem == "jaxlib 0.4.35 has wheels only for cp314 (tried Python 3.13, 3.11, 3.10, 3.12)"


def test_a_jaxlib_missing_from_the_index_is_not_asked_again_for_every_python(monkeypatch: pytest.MonkeyPatch) -> None:
    error = "Because there is no version of jaxlib==0.4.35 and jax[cpu]==0.4.35 depends on it"
    monkeypatch.setattr(install, "resolve", lambda plan, python, offline=False, store=None: Resolution(python, ok=False, error=error))
    resolved = release.resolve_release(MATRIX, "0.4.35", InstallKey("cpu"), INDEX)
    assert resolved.problem == "https://example.invalid/simple has no jaxlib 0.4.35 wheels (tried Python 3.13)"


# --------------------------------------------------------------------------
# The lock, and an index that is down or lacks the release


def matrix_on(index_url: str, tmp_path: Path, slack: int = 14) -> Any:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                         "install": {"index_url": index_url, "era_slack_days": slack},
                         "release": [{"version": "0.6.0"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


def lock_0_6_0(matrix: Any) -> InstallPlan:
    plan = plan_for(matrix, matrix.release("0.6.0"), InstallKey("cpu"), None)
    settings = lockfile.install_settings(matrix, matrix.release("0.6.0"), InstallKey("cpu"))
    lockfile.write_lock(matrix.envs_dir, settings, plan, Resolution("3.12", ok=True, versions={"jaxlib": "0.6.0"},
                                                                    hashes={"jaxlib": ("sha256:aa", "sha256:bb")}))
    return plan


@pytest.fixture
def uv_must_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "resolve", lambda *a, **k: pytest.fail("uv was asked"))


def test_a_locked_release_needs_neither_index_nor_uv(tmp_path: Path, uv_must_not_run: None) -> None:
    matrix = matrix_on(refused_url(), tmp_path)
    plan = lock_0_6_0(matrix)
    resolved = release.resolve_release(matrix, "0.6.0", InstallKey("cpu"))
    assert resolved.lock is not None
    assert resolved.plan == plan
    assert resolved.python == "3.12"
    assert resolved.versions == {"jaxlib": "0.6.0"}
    assert resolved.resolution is not None
    assert resolved.resolution.hashes == {"jaxlib": ("sha256:aa", "sha256:bb")}


def test_pins_have_a_lock_of_their_own_and_none_is_the_lock_as_before(tmp_path: Path, uv_must_not_run: None) -> None:
    matrix = matrix_on(refused_url(), tmp_path)
    lock_0_6_0(matrix)
    unpinned = lockfile.install_settings(matrix, matrix.release("0.6.0"), InstallKey("cpu"))
    assert "pins" not in unpinned
    assert release.locked_release(matrix, "0.6.0", InstallKey("cpu")) is not None
    assert release.locked_release(matrix, "0.6.0", InstallKey("cpu", pins=("numpy==2.2.1",))) is None  # never built
    with pytest.raises(IndexUnreachable):  # so it is resolved, at the index
        release.resolve_release(matrix, "0.6.0", InstallKey("cpu", pins=("numpy==2.2.1",)))


@pytest.mark.parametrize("how", ["refresh", "settings changed"])
def test_refresh_or_changed_settings_resolve_again(how: str, tmp_path: Path, uv_must_not_run: None) -> None:
    url = refused_url()
    lock_0_6_0(matrix_on(url, tmp_path))
    matrix = matrix_on(url, tmp_path, slack=30 if how == "settings changed" else 14)
    with pytest.raises(IndexUnreachable):  # it went to the index, which is down
        release.resolve_release(matrix, "0.6.0", InstallKey("cpu"), refresh=how == "refresh")


def test_an_unreachable_index_is_said_in_seconds_before_uv_is_asked(tmp_path: Path, uv_must_not_run: None) -> None:
    started = time.monotonic()
    with pytest.raises(IndexUnreachable, match="jax 0.6.0 needs the package index to resolve its install, and .* could not be reached over the network"):
        release.resolve_release(matrix_on(refused_url(), tmp_path), "0.6.0", InstallKey("cpu"))
    assert time.monotonic() - started < 15


def test_a_version_the_index_lacks_is_a_usage_error_naming_the_newest(tmp_path: Path, uv_must_not_run: None) -> None:
    with serve_index() as served:
        with pytest.raises(UsageError, match=re.escape(f"jax 9.9.9 is not a JAX release on {served.url}; "
                                                       "newest is 0.6.0")):
            release.resolve_release(matrix_on(served.url, tmp_path), "9.9.9", InstallKey("cpu"))


# --------------------------------------------------------------------------
# JAX's archive of pruned jaxlibs, as a local find-links page (uv resolves for real)

needs_uv = pytest.mark.skipif(shutil.which("uv") is None, reason="uv resolves these plans")

PRUNED = {
    "jax": [("jax-0.4.16-py3-none-any.whl", "2023-09-18T20:00:00Z")],
    "jaxlib": [("jaxlib-0.4.13-py3-none-any.whl", "2023-06-22T20:00:00Z")],  # 0.4.16's jaxlib was pruned
    "scipy": [("scipy-1.11.2-py3-none-any.whl", "2023-08-17T20:00:00Z")],
}
BLOBS = dict([wheel("jax", "0.4.16", requires=('jaxlib==0.4.16; extra == "cpu"',), extras=("cpu",)),
              wheel("jaxlib", "0.4.13"), wheel("jaxlib", "0.4.16"), wheel("scipy", "1.11.2")])


def pruned_matrix(index_url: str, archive: str, tmp_path: Path) -> Any:
    return parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                         "install": {"index_url": index_url, "jaxlib_archive": archive, "pythons": ["3.11"]},
                         "release": [{"version": "0.4.16"}], "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


@pytest.fixture
def own_uv_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "kit-cache"))
    monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
    monkeypatch.setattr(release, "plan_install", install.plan_install)  # the real plan, on the fake index


@needs_uv
def test_a_jaxlib_the_index_pruned_comes_from_the_archive_page(tmp_path: Path, own_uv_cache: None) -> None:
    with serve_index(PRUNED, BLOBS, archive=("jaxlib-0.4.16-py3-none-any.whl",)) as served:
        resolved = release.resolve_release(pruned_matrix(served.url, served.archive, tmp_path), "0.4.16", InstallKey("cpu"))
    assert resolved.problem == ""
    assert resolved.versions["jaxlib"] == "0.4.16"
    assert served.archive in resolved.plan.find_links  # so the install (and the record) use it too


@needs_uv
def test_an_unreachable_archive_page_leaves_the_release_unknown_not_uninstallable(tmp_path: Path,
                                                                                  own_uv_cache: None) -> None:
    # The archive may well have the jaxlib: an outage there is the network's (exit 4), not the release's.
    archive = refused_url().replace("/simple", "/jax_releases.html")
    with serve_index(PRUNED, BLOBS) as served:
        with pytest.raises(IndexUnreachable) as unreachable:
            release.resolve_release(pruned_matrix(served.url, archive, tmp_path), "0.4.16", InstallKey("cpu"))
    assert str(unreachable.value) == (f"jax 0.4.16 needs the archive of pruned jaxlibs (install.jaxlib_archive) "
                                      f"{archive} to install, and it could not be reached over the network "
                                      f"(Connection refused)")
    assert 'jaxlib_archive = ""' in unreachable.value.tip


@needs_uv
def test_the_archive_is_not_tried_when_matrix_toml_turns_it_off(tmp_path: Path, own_uv_cache: None) -> None:
    with serve_index(PRUNED, BLOBS, archive=("jaxlib-0.4.16-py3-none-any.whl",)) as served:
        resolved = release.resolve_release(pruned_matrix(served.url, "", tmp_path), "0.4.16", InstallKey("cpu"))
        assert not any(path.startswith("/archive") for path in served.requests)
    assert resolved.problem == f"{served.url} has no jaxlib 0.4.16 wheels (tried Python 3.11)"


def test_built_env_answers_for_the_environment_the_pins_and_requires_key(fake_releases: Any) -> None:
    """A commit bisect with --pin asked whether the unpinned environment was built (and read its lock)."""
    from types import SimpleNamespace

    from kit.bisect import commit_search
    from kit.install.release import built_env

    releases = fake_releases(["0.6.0", "0.6.1"])
    matrix = releases.matrix
    assert built_env(matrix, "0.6.0", InstallKey("cpu")) is not None
    assert built_env(matrix, "0.6.0", InstallKey("cpu", pins=("numpy==2.2.2",))) is None  # that environment was never built
    assert built_env(matrix, "0.6.0", InstallKey("cpu", requires=("flax",))) is None
    # The commit phase asks as the run spec installs (its key alone: the options are not read again).
    spec = SimpleNamespace(install=InstallKey("cpu", pins=("numpy==2.2.2",)))
    result = SimpleNamespace(last_same="0.6.0", first_different="0.6.1")
    candidates = [SimpleNamespace(version=v, jaxlib=v, python="3.11") for v in ("0.6.0", "0.6.1")]
    finding = SimpleNamespace(result=result, fix=True, candidates=candidates, observations={}, options=None)
    phase = SimpleNamespace(matrix=matrix, finding=finding, releases=SimpleNamespace(subject=SimpleNamespace(spec=spec)))
    builds = commit_search.release_builds(phase)  # type: ignore[arg-type]
    assert [b.built for b in builds] == [False, False]  # built unpinned, not as this bisect installs them
    spec.install = InstallKey("cpu")
    assert [b.built for b in commit_search.release_builds(phase)] == [True, True]  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# The caller's installer settings (kit.install.installer_env): the plan alone decides what resolves

TWO_SCIPYS = {
    "jax": [("jax-0.4.16-py3-none-any.whl", "2023-09-18T20:00:00Z")],
    "jaxlib": [("jaxlib-0.4.16-py3-none-any.whl", "2023-09-18T20:00:00Z")],
    "scipy": [("scipy-1.10.0-py3-none-any.whl", "2023-01-03T20:00:00Z"),
              ("scipy-1.11.2-py3-none-any.whl", "2023-08-17T20:00:00Z")],
}
TWO_SCIPYS_BLOBS = dict([wheel("jax", "0.4.16", requires=('jaxlib==0.4.16; extra == "cpu"',), extras=("cpu",)),
                         wheel("jaxlib", "0.4.16"), wheel("scipy", "1.10.0"), wheel("scipy", "1.11.2")])


@needs_uv
@pytest.mark.parametrize("setting", ["UV_CONSTRAINT", "UV_RESOLUTION", "UV_EXTRA_INDEX_URL"])
def test_the_callers_uv_settings_do_not_change_what_a_release_resolves_to(
        setting: str, tmp_path: Path, own_uv_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each of these turned the era's scipy 1.11.2 into 1.10.0, written to the lock (or asked an index the plan
    # does not name, here one that refuses: no answer).
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("scipy==1.10.0\n")
    value = {"UV_CONSTRAINT": str(constraints), "UV_RESOLUTION": "lowest", "UV_EXTRA_INDEX_URL": refused_url()}[setting]
    monkeypatch.setenv(setting, value)
    with serve_index(TWO_SCIPYS, TWO_SCIPYS_BLOBS) as served:
        resolved = release.resolve_release(pruned_matrix(served.url, "", tmp_path), "0.4.16", InstallKey("cpu"))
    assert resolved.problem == ""
    assert resolved.versions["scipy"] == "1.11.2"
