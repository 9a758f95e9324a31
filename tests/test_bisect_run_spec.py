"""The run spec: made once where the command line enters, so one bisect builds one install key and asks once
which check it runs (issue 39's ``--pin`` walk: 25 keys at 7 sites and 134 ``check_for`` calls before)."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable

import pytest

from kit.bisect.report import changelog
from kit.install import key as install_key
from kit.install import lockfile
from kit.run import runner
from tests.bisect_machine import RELEASES, CHECKS, report_json, run, verdicts
from tests.fake_releases import FakeReleases


def _count_calls(monkeypatch: pytest.MonkeyPatch, name: str, real: Callable[..., Any], counts: Counter[str]) -> None:
    """Every kit module's ``name`` (its own import of ``real``) replaced by a counting wrapper.

    A module that calls the name counts; ``dataclasses.replace`` on an install key calls the class itself, so a
    release's own key made from the spec's does not count as a new one.
    """
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(*args, **kwargs)

    for module_name, module in list(sys.modules.items()):
        if (module_name == "kit" or module_name.startswith("kit.")) and getattr(module, name, None) is real:
            monkeypatch.setattr(module, name, counted)


@pytest.mark.parametrize("bounds", [["--good", "0.4.35", "--bad", "0.6.0"],
                                    ["--good", "0.4.35"]])  # the other bound found by galloping
def test_a_pinned_bisect_makes_one_install_key_and_asks_for_its_check_once(
        fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch, bounds: list[str]) -> None:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    releases = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
    for version, verdict in verdicts("0.5.1").items():
        releases.behave(version, verdict)
    counts: Counter[str] = Counter()
    _count_calls(monkeypatch, "InstallKey", install_key.InstallKey, counts)
    _count_calls(monkeypatch, "check_for", runner.check_for, counts)
    _count_calls(monkeypatch, "read_lock", lockfile.read_lock, counts)
    code, _lines = run(releases, "--check", "scaling", *bounds, "--pin", "numpy==2.2.1")
    print(f"{len(releases.runs)} probes, {len(RELEASES)} releases: {dict(counts)}")
    assert code == 0
    data = report_json(releases, "scaling-*-pin-numpy-2.2.1")
    assert data["first_different"] == "0.5.1"
    assert all(seen["pins"] == ["numpy==2.2.1"] for seen in data["observations"].values() if seen["source"] != "index")
    assert counts["InstallKey"] == 1
    assert counts["check_for"] == 1
    # Each release's lock is read once by the subject; a release it probes is read again where it is resolved
    # ahead and prepared (`kit.install.release.resolve_release`): at most three times, never once per question.
    assert counts["read_lock"] <= len(RELEASES) + 2 * len(releases.runs)
