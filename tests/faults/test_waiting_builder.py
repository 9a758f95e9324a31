"""A builder that waited for another build of the same environment, which failed: the same answer at once.

Two runs (two sessions, or a bisect's ``--jobs``) wanting one environment
take turns under its lock. When the first build failed on the network (a
minute of uv retrying a page), the one that waited used to build again and
wait out the same network failure; now the failed build says why beside its
lock, and the waiter meets that answer at once. docs/faults.md, "Network".
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from kit.errors import IndexUnreachable
from kit.install import envs
from kit.install.plan import InstallPlan, Resolution

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
PLAN = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0", "scipy"), exclude_newer=None,
                   index_url="http://127.0.0.1:9/simple", pythons=(PYTHON,))
RESOLUTION = Resolution(PYTHON, ok=True, versions={"jax": "0.6.0", "jaxlib": "0.6.0"})
OUTAGE = "uv could not reach the package index over the network (Connection refused)"


class OutageBackend:
    """An installer that fails as uv does when the network goes away, once the second builder is waiting."""

    name = "uv"

    def __init__(self, waiting: threading.Event) -> None:
        self.waiting = waiting
        self.installs = 0

    def create(self, path: Path, interpreter: Path) -> None:
        path.mkdir(parents=True)

    def install(self, path: Path, plan: InstallPlan, resolution: Resolution) -> None:
        self.installs += 1
        self.waiting.wait(30)
        raise IndexUnreachable(OUTAGE, "check the network")


def test_a_builder_that_waited_for_a_failed_build_fails_the_same_at_once(tmp_path: Path) -> None:
    waiting = threading.Event()
    backend = OutageBackend(waiting)
    failures: dict[str, BaseException] = {}
    lines: list[str] = []

    def build(who: str) -> None:
        def log(line: str) -> None:
            lines.append(f"{who}: {line}")
            if line.startswith("waiting for another process"):
                waiting.set()
        try:
            envs.ensure_env(tmp_path, PLAN, RESOLUTION, backend, log)
        except IndexUnreachable as exc:
            failures[who] = exc

    first = threading.Thread(target=build, args=("first",))
    first.start()
    while not backend.installs:
        first.join(0.01)
    second = threading.Thread(target=build, args=("second",))
    second.start()
    first.join(60)
    second.join(60)
    assert str(failures["first"]) == str(failures["second"]) == OUTAGE
    assert backend.installs == 1, "the builder that waited asked the network again"
    name = envs.env_path(tmp_path, PLAN, RESOLUTION).name
    assert f"second: the other build of {name} failed: {OUTAGE}; not trying again now" in lines


def test_a_failure_from_before_the_wait_is_not_taken_as_the_answer(tmp_path: Path) -> None:
    path = envs.env_path(tmp_path, PLAN, RESOLUTION)
    envs._note_failure(path, IndexUnreachable(OUTAGE))
    with pytest.raises(IndexUnreachable):
        envs._raise_if_it_failed(path, 0.0, lambda _line: None)
    envs._raise_if_it_failed(path, float("inf"), lambda _line: None)  # a new wait began after it: build again
