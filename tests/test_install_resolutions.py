"""kit.install.resolutions and kit.install.uv_cache: a resolution asked once per run, kept once its era is closed,
and answered from uv's cache only where that cache holds the whole era."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import kit.install.plan as install
from kit.install import uv_cache
from kit.install.plan import InstallPlan, Resolution
from kit.install.resolutions import Once, ResolutionStore, era_closed
from tests.resolution_fixtures import CLOSED, PLAN, VERSIONS, fake_uv_cache



def test_two_threads_asking_one_question_get_one_answer_computed_once() -> None:
    once: Once[int] = Once()
    computed: list[int] = []
    started = threading.Event()

    def slow() -> int:
        started.set()
        time.sleep(0.2)  # the second asker arrives while the first is still waiting on "uv"
        computed.append(1)
        return 42

    answers: list[int] = []
    first = threading.Thread(target=lambda: answers.append(once.get("plan", slow)))
    first.start()
    started.wait()
    answers.append(once.get("plan", lambda: pytest.fail("asked twice")))  # type: ignore[arg-type,return-value]
    first.join()
    assert answers == [42, 42]
    assert computed == [1]


def test_a_question_that_failed_is_asked_again_not_kept() -> None:
    once: Once[int] = Once()

    def unreachable() -> int:
        raise ConnectionError("the index is down")

    with pytest.raises(ConnectionError):
        once.get("plan", unreachable)
    assert once.get("plan", lambda: 7) == 7  # the failure was said once, by whoever needed the answer


def test_only_an_era_already_over_is_closed() -> None:
    assert era_closed(CLOSED)
    assert not era_closed(None)
    assert not era_closed("2999-01-01T00:00:00Z")
    assert not era_closed("not a date")


def uv_answering(monkeypatch: pytest.MonkeyPatch, answer: Resolution) -> list[bool]:
    """uv replaced by one that answers ``answer`` and notes each call (True: offline)."""
    calls: list[bool] = []

    def fake_uv(plan: InstallPlan, python: str, uv: Any, platform: Any, offline: bool) -> Resolution:
        calls.append(offline)
        return answer

    monkeypatch.setattr(install, "_resolve", fake_uv)
    monkeypatch.setattr(install, "_RESOLVED", Once())
    return calls


def test_a_closed_era_s_answer_is_kept_with_its_inputs_and_given_back_without_uv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ResolutionStore(tmp_path / "resolutions")
    calls = uv_answering(monkeypatch, Resolution("3.13", ok=True, versions=VERSIONS, hashes={"jax": ("sha256:aa",)}))
    made = install.resolve(PLAN, "3.13", store=store)
    assert calls == [False]
    assert made.kept == ""
    (kept_file,) = (tmp_path / "resolutions").iterdir()
    assert '"exclude_newer": "2024-11-05T20:56:00Z"' in kept_file.read_text()  # its inputs beside its answer
    monkeypatch.setattr(install, "_RESOLVED", Once())  # a later run
    again = install.resolve(PLAN, "3.13", store=store)
    assert calls == [False]
    assert again.versions == VERSIONS
    assert again.hashes == {"jax": ("sha256:aa",)}
    assert again.kept.startswith(time.strftime("%Y-"))
    assert again.kept.endswith("Z")  # and says when it was made
    # --refresh: asked again (and kept again)
    monkeypatch.setattr(install, "_RESOLVED", Once())
    assert install.resolve(PLAN, "3.13", store=ResolutionStore(tmp_path / "resolutions", read=False)).kept == ""
    assert calls == [False, False]


def test_an_answer_kept_by_schema_2_is_given_back_without_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema 2 named the resolved versions ``pins``; its files are kept under the same name (the inputs' digest)."""
    store = ResolutionStore(tmp_path)
    calls = uv_answering(monkeypatch, Resolution("3.13", ok=True, versions=VERSIONS))
    install.resolve(PLAN, "3.13", store=store)
    (kept,) = tmp_path.iterdir()
    data = json.loads(kept.read_text())
    assert (data["schema"], data["answer"]["versions"]) == (3, VERSIONS)
    data["schema"] = 2
    data["answer"] = {"pins": data["answer"].pop("versions"), "hashes": {}}
    kept.write_text(json.dumps(data))
    monkeypatch.setattr(install, "_RESOLVED", Once())  # a later run
    again = install.resolve(PLAN, "3.13", store=store)
    assert calls == [False]
    assert again.versions == VERSIONS
    assert again.kept != ""
    assert list(tmp_path.iterdir()) == [kept]


@pytest.mark.parametrize("why", ["open era", "no era", "not installable", "torn file", "other inputs",
                                 "versions of another kind", "hashes of another kind"])
def test_what_is_not_kept_or_cannot_be_read_is_asked_again(
        why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ResolutionStore(tmp_path)
    plan = {"open era": InstallPlan(**{**PLAN.to_json(), "exclude_newer": "2999-01-01T00:00:00Z"}),
            "no era": InstallPlan(**{**PLAN.to_json(), "exclude_newer": None})}.get(why, PLAN)
    calls = uv_answering(monkeypatch, Resolution("3.13", ok=why != "not installable", versions=VERSIONS))
    install.resolve(plan, "3.13", store=store)
    if why == "torn file":
        for path in tmp_path.iterdir():
            path.write_text('{"schema": 1, "inp')
    if why.endswith("of another kind"):
        assert list(tmp_path.iterdir()), "the answer was kept, to be damaged"
    for path in tmp_path.iterdir() if why.endswith("of another kind") else ():  # read into a typed KeptAnswer
        data = json.loads(path.read_text())
        data["answer"]["versions" if why.startswith("versions") else "hashes"] = ["jax==0.4.35"]
        path.write_text(json.dumps(data))
    if why == "other inputs":
        plan = InstallPlan(**{**PLAN.to_json(), "pythons": ("3.12",)})
    monkeypatch.setattr(install, "_RESOLVED", Once())
    assert install.resolve(plan, "3.13", store=store).kept == ""
    assert calls == [False, False]


def test_uv_s_cache_answers_only_where_every_page_was_read_after_the_era_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pages = fake_uv_cache(tmp_path, monkeypatch, read_at=time.time() - 3600)
    assert uv_cache.holds_era("https://pypi.org/simple/", False, CLOSED, VERSIONS, "uv")
    assert uv_cache.holds_era("https://pypi.org/simple", False, CLOSED, ["ML_Dtypes"], "uv")  # by canonical name
    before = time.mktime((2024, 10, 1, 0, 0, 0, 0, 0, 0))
    os.utime(pages / "numpy.rkyv", (before, before))  # read before the era ended: may lack its newest numpy
    assert not uv_cache.holds_era("https://pypi.org/simple", False, CLOSED, VERSIONS, "uv")
    os.utime(pages / "numpy.rkyv", None)
    (pages / "scipy.rkyv").unlink()
    assert not uv_cache.holds_era("https://pypi.org/simple", False, CLOSED, VERSIONS, "uv")  # never read
    (pages / "scipy.rkyv").write_bytes(b"")
    assert not uv_cache.holds_era("https://mirror.example/simple", False, CLOSED, VERSIONS, "uv")  # pages not judged
    assert not uv_cache.holds_era("https://pypi.org/simple", True, CLOSED, VERSIONS, "uv")  # find-links: unknown age
    assert not uv_cache.holds_era("https://pypi.org/simple", False, None, VERSIONS, "uv")  # no era at all


def test_uv_s_cache_is_found_by_uv_s_own_rule_without_asking_uv(tmp_path: Path) -> None:
    from kit.install.uv_cache import default_cache_dir

    (tmp_path / "mine").mkdir()
    (tmp_path / "xdg" / "uv").mkdir(parents=True)
    assert default_cache_dir({"UV_CACHE_DIR": str(tmp_path / "mine")}) == tmp_path / "mine"
    assert default_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg" / "uv"
    assert default_cache_dir({"UV_CACHE_DIR": str(tmp_path / "none")}) is None  # not there: uv is asked
