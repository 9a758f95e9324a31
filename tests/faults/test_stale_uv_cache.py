"""A resolution from uv's cache alone whose pages were read before the era ended (issue 28 item 1).

uv's cache answers a resolution in a second where the index takes twelve;
but a page read before the era's cut-off may lack files of that era, and the
answer would then differ from the index's: another numpy, installed and
recorded as the era's. Such an answer is no answer, and the index is asked.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import kit.install.plan as install
from kit.install.uv_errors import CACHE_PREDATES_ERA
from tests.resolution_fixtures import VERSIONS, PLAN, fake_uv_cache


def test_an_offline_answer_from_pages_read_before_the_era_ended_is_no_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """uv's cache alone answered, from a numpy page read before the era ended: the index is asked instead."""
    before = time.mktime((2024, 10, 1, 0, 0, 0, 0, 0, 0))
    fake_uv_cache(tmp_path, monkeypatch, read_at=before)
    stdout = "".join(f"{name}=={version}\n" for name, version in VERSIONS.items())
    completed: Any = type("Done", (), {"returncode": 0, "stdout": stdout, "stderr": ""})
    monkeypatch.setattr(install.subprocess, "run", lambda *a, **k: completed)
    assert install._resolve(PLAN, "3.13", "uv", None, offline=True).error == CACHE_PREDATES_ERA
    assert install._resolve(PLAN, "3.13", "uv", None, offline=False).ok  # the index's own answer is taken
    fake_uv_cache(tmp_path / "fresh", monkeypatch, read_at=time.time() - 60)
    assert install._resolve(PLAN, "3.13", "uv", None, offline=True).versions == VERSIONS


def test_an_offline_answer_that_passed_over_a_version_of_the_era_is_no_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """uv, offline, passes over a version whose metadata its cache lacks and answers an older one, saying so only
    in its log (measured: optax 0.2.3 for jax 0.6.0's era, whose optax is 0.2.4): the index is asked instead."""
    fake_uv_cache(tmp_path, monkeypatch, read_at=time.time() - 60)  # pages fresh: only the log can tell
    stdout = "".join(f"{name}=={version}\n" for name, version in VERSIONS.items())
    calls: list[list[str]] = []

    def run(cmd: list[str], **kwargs: Any) -> Any:
        calls.append(list(cmd))
        log = " WARN `numpy==2.2.5` needs to be downloaded from a registry\n" if "-v" in cmd else ""
        return type("Done", (), {"returncode": 0, "stdout": stdout, "stderr": log})

    monkeypatch.setattr(install.subprocess, "run", run)
    assert install._resolve(PLAN, "3.13", "uv", None, offline=True).error == CACHE_PREDATES_ERA
    assert "-v" in calls[0]  # offline, uv's log is what is read
    assert install._resolve(PLAN, "3.13", "uv", None, offline=False).versions == VERSIONS  # online, uv fetches what it needs
    assert "-v" not in calls[-1]
