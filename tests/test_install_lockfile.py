"""kit.install.lockfile: a built release's resolution, kept under the settings that decided it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from kit.atomic_files import atomic_write_text
from kit.config import parse_matrix
from kit.install import lockfile
from kit.install.plan import InstallPlan, Resolution
from kit.install.key import InstallKey
from kit.run.runner import installed_identity

PLAN = InstallPlan(jax="0.4.35", backend="cpu", requirements=("jax[cpu]==0.4.35", "scipy"),
                   exclude_newer="2024-11-05T20:56:34Z", index_url="https://pypi.org/simple",
                   find_links=("/wheels",), pythons=("3.13", "3.12"), notes=("a note",))
RESOLUTION = Resolution("3.13", ok=True, versions={"scipy": "1.14.1", "jaxlib": "0.4.35", "jax": "0.4.35"},
                        hashes={"jaxlib": ("sha256:aa", "sha256:bb")})


def matrix(**install: Any) -> Any:
    return parse_matrix({"install": install, "release": [{"version": "0.4.35", "python": "3.13"}],
                         "checks": {"scaling": {}}})


def settings(**install: Any) -> dict[str, Any]:
    m = matrix(**install)
    return lockfile.install_settings(m, m.release("0.4.35"), InstallKey("cpu"))


def test_a_lock_reads_back_as_it_was_written(tmp_path: Path) -> None:
    path = lockfile.write_lock(tmp_path, settings(), PLAN, RESOLUTION)
    lock = lockfile.read_lock(tmp_path, settings())
    assert lock is not None
    assert lock.path == path
    assert lock.plan == PLAN  # tuples stay tuples, so the plan compares (and fingerprints) as before
    assert lock.resolution == RESOLUTION
    assert lock.resolved_at.endswith("Z")
    # Written sorted, so two builds of the same answer make the same file.
    assert list(json.loads(path.read_text())["versions"]) == ["jax", "jaxlib", "scipy"]


def test_a_lock_of_schema_1_still_answers_with_the_same_probe_identity(tmp_path: Path) -> None:
    """Schema 1 named the resolved versions ``pins``: a lock made then is not resolved again, and the identity a
    bisect makes from it (its probe cache key) is the one it made before."""
    path = lockfile.lock_path(tmp_path, settings())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({  # as write_lock wrote it before schema 2
        "schema": 1, "settings": settings(), "plan": PLAN.to_json(), "python": "3.13",
        "pins": {"jax": "0.4.35", "jaxlib": "0.4.35", "scipy": "1.14.1"},
        "hashes": {"jaxlib": ["sha256:aa", "sha256:bb"]}, "resolved_at": "2025-05-01T10:00:00Z"}))
    old = lockfile.read_lock(tmp_path, settings())
    lockfile.write_lock(tmp_path, settings(), PLAN, RESOLUTION)
    new = lockfile.read_lock(tmp_path, settings())
    assert old is not None
    assert new is not None
    assert old.resolution == RESOLUTION == new.resolution
    assert json.loads(path.read_text())["schema"] == lockfile.LOCK_SCHEMA == 2  # written in the new form

    def identity(lock: lockfile.Lock) -> str:
        return installed_identity({"check": "scaling"}, "0.4.35", "cpu", lock.resolution.python,
                                  lock.resolution.versions, lock.plan).digest()

    assert identity(old) == identity(new)


def test_a_lock_is_read_again_only_when_its_file_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`current_lock` keeps what it read; a lock another process writes or removes meanwhile is still seen."""
    reads: list[Path] = []
    real_read = lockfile.read_lock

    def read(envs_dir: Path, settings_: dict[str, Any]) -> lockfile.Lock | None:
        reads.append(lockfile.lock_path(envs_dir, settings_))
        return real_read(envs_dir, settings_)

    monkeypatch.setattr(lockfile, "read_lock", read)
    assert lockfile.current_lock(tmp_path, settings()) is None
    assert reads == []  # no file: nothing to read
    path = lockfile.write_lock(tmp_path, settings(), PLAN, RESOLUTION)
    first = lockfile.current_lock(tmp_path, settings())
    assert first is not None
    assert first.resolution == RESOLUTION
    assert lockfile.current_lock(tmp_path, settings()) is first
    assert reads == [path]  # asked twice, read once
    other = json.loads(path.read_text())  # another process resolves it again and replaces the file
    other["versions"] = {**other["versions"], "scipy": "1.15.0"}
    atomic_write_text(path, json.dumps(other))
    again = lockfile.current_lock(tmp_path, settings())
    assert again is not None
    assert again.resolution.versions["scipy"] == "1.15.0"
    assert reads == [path, path]
    path.unlink()  # and removes it
    assert lockfile.current_lock(tmp_path, settings()) is None


def test_every_setting_that_decides_the_install_names_another_lock(tmp_path: Path) -> None:
    m = matrix()
    release = m.release("0.4.35")
    base = lockfile.install_settings(m, release, InstallKey("cpu"))
    others = [
        lockfile.install_settings(m, release, InstallKey("cuda")),
        lockfile.install_settings(m, release, InstallKey("cpu", find_links=("/more/wheels",))),
        lockfile.install_settings(m, dataclasses.replace(release, python="3.12"), InstallKey("cpu")),
        settings(era_slack_days=30),
        settings(index_url="https://mirror.example/simple"),
        {**base, "plan_format": lockfile.PLAN_FORMAT + 1},  # the kit plans differently now
    ]
    paths = {lockfile.lock_path(tmp_path, s) for s in [base, *others]}
    assert len(paths) == 1 + len(others)
    lockfile.write_lock(tmp_path, base, PLAN, RESOLUTION)
    assert all(lockfile.read_lock(tmp_path, s) is None for s in others)
    assert lockfile.lock_path(tmp_path, base).name.startswith("jax-0.4.35-cpu-")


def test_the_release_note_does_not_decide_the_install() -> None:
    m = matrix()
    release = m.release("0.4.35")
    assert lockfile.install_settings(m, dataclasses.replace(release, note="another note"), InstallKey("cpu")) == \
        lockfile.install_settings(m, release, InstallKey("cpu"))


@pytest.mark.parametrize("damage", ["missing", "torn", "not an object", "other schema", "other settings",
                                    "no plan", "plan with an unknown key", "versions not a mapping",
                                    "a plan's field of another kind", "a version not a string", "hashes not lists"])
def test_a_lock_that_cannot_be_trusted_is_resolved_again(tmp_path: Path, damage: str) -> None:
    path = lockfile.write_lock(tmp_path, settings(), PLAN, RESOLUTION)
    data = json.loads(path.read_text())
    if damage == "missing":
        path.unlink()
    elif damage == "torn":
        path.write_text(path.read_text()[:40])
    elif damage == "not an object":
        path.write_text("[1, 2]")
    else:
        if damage == "other schema":
            data["schema"] = lockfile.LOCK_SCHEMA + 1
        elif damage == "other settings":
            data["settings"]["jax"] = "0.4.36"  # hand-edited or copied from another release's lock
        elif damage == "no plan":
            del data["plan"]
        elif damage == "plan with an unknown key":
            data["plan"]["wheels"] = []
        elif damage == "versions not a mapping":
            data["versions"] = ["jax==0.4.35"]
        elif damage == "a plan's field of another kind":  # the lock is read into typed values, field by field
            data["plan"]["requirements"] = "jax[cpu]==0.4.35"
        elif damage == "a version not a string":
            data["versions"]["jax"] = 0.4
        elif damage == "hashes not lists":
            data["hashes"]["jaxlib"] = "sha256:aa"
        path.write_text(json.dumps(data))
    assert lockfile.read_lock(tmp_path, settings()) is None
