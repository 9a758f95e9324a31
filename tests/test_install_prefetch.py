"""kit.install.prefetch: resolutions the next rounds may need, asked in the background, in order."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from kit.config import parse_matrix
from kit.install import prefetch
from kit.install.key import InstallKey

MATRIX = parse_matrix({"release": [{"version": "0.6.0"}], "checks": {"scaling": {}}})


def test_releases_are_resolved_in_the_order_given_and_a_failure_is_left_to_the_probe(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, InstallKey]] = []

    def resolve_release(matrix: Any, version: str, key: InstallKey, index: Any) -> None:
        asked.append((version, key))
        if version == "0.5.0":
            raise ConnectionError("the index went away")  # the probe of 0.5.0 will ask again and say so

    monkeypatch.setattr(prefetch, "resolve_release", resolve_release)
    ahead = prefetch.Prefetch(MATRIX, index=None, workers=1)  # type: ignore[arg-type]
    wanted = [(v, InstallKey("cpu", python="3.12")) for v in ("0.4.35", "0.6.0", "0.5.0", "0.5.3")]
    ahead.start(wanted)
    ahead.close()  # waits for what is under way
    assert asked[0] == wanted[0]
    assert ahead.resolved == [v for v, _ in asked if v != "0.5.0"]


def test_close_drops_what_has_not_started_and_leaves_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    asked: list[str] = []

    def slow(matrix: Any, version: str, key: InstallKey, index: Any) -> None:
        asked.append(version)
        release.wait(5)

    monkeypatch.setattr(prefetch, "resolve_release", slow)
    ahead = prefetch.Prefetch(MATRIX, index=None, workers=1)  # type: ignore[arg-type]
    ahead.start([(v, InstallKey("cpu")) for v in ("0.4.35", "0.6.0", "0.5.0")])
    while not asked:
        threading.Event().wait(0.01)
    threading.Timer(0.2, release.set).start()
    ahead.close()
    assert asked == ["0.4.35"]
    assert not any(thread.is_alive() for thread in ahead._threads)


def test_a_probe_asking_what_is_being_resolved_waits_for_that_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prefetch and the probe ask uv the same question once between them (kit.install.plan's Once)."""
    import kit.install.plan as install
    from kit.install.plan import InstallPlan, Resolution

    calls: list[bool] = []
    started, go = threading.Event(), threading.Event()

    def fake_uv(plan: InstallPlan, python: str, uv: Any, platform: Any, offline: bool) -> Resolution:
        calls.append(offline)
        started.set()
        go.wait(5)
        return Resolution(python, ok=True, versions={"jax": "0.6.0"})

    monkeypatch.setattr(install, "_resolve", fake_uv)
    monkeypatch.setattr(install, "_RESOLVED", install.Once())
    plan = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0",), exclude_newer=None,
                       index_url="https://pypi.org/simple", pythons=("3.13",))
    answers: list[Resolution] = []
    background = threading.Thread(target=lambda: answers.append(install.resolve(plan, "3.13")))
    background.start()
    started.wait(5)
    threading.Timer(0.2, go.set).start()
    answers.append(install.resolve(plan, "3.13"))
    background.join()
    assert calls == [False]
    assert answers[0] == answers[1]


def test_a_bisect_resolves_ahead_only_the_ends_and_the_first_rounds_midpoints_it_may_reach(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from kit.bisect import ahead
    from kit.bisect.search import ProbeOutcome

    started: list[list[tuple[str, InstallKey]]] = []
    monkeypatch.setattr(ahead.Prefetch, "start", lambda self, wanted: started.append(list(wanted)))
    versions = [f"0.4.{n}" for n in range(30, 39)]
    candidates = [SimpleNamespace(version=v, python="3.12", yanked="bad upload" if v == "0.4.36" else None,
                                  problem="") for v in versions]
    spec = SimpleNamespace(for_release=lambda python: SimpleNamespace(
        install=InstallKey("cpu", pins=("numpy==2.1.3",), requires=("flax",), python=python)))
    ahead.resolve_ahead(MATRIX, spec, candidates, {"0.4.30": ProbeOutcome.GOOD}, index=None)  # type: ignore[arg-type]
    (wanted,) = started
    # The ends, the midpoint, the quarter points (0.4.32 and 0.4.36): the known end and the yanked one left out.
    assert [version for version, _ in wanted] == ["0.4.38", "0.4.34", "0.4.32"]
    assert wanted[0][1] == InstallKey("cpu", pins=("numpy==2.1.3",), requires=("flax",), python="3.12")


def test_on_ctrl_c_close_does_not_wait_for_a_resolution_under_way(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    asked = threading.Event()

    def stuck(matrix: Any, version: str, key: InstallKey, index: Any) -> None:
        asked.set()
        release.wait(5)  # an index taking its time

    monkeypatch.setattr(prefetch, "resolve_release", stuck)
    ahead = prefetch.Prefetch(MATRIX, index=None, workers=1)  # type: ignore[arg-type]
    ahead.start([("0.4.35", InstallKey("cpu"))])
    asked.wait(5)
    ahead.close(wait=False)
    assert all(thread.daemon and thread.is_alive() for thread in ahead._threads)  # left to end with the kit
    release.set()
