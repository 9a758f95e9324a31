"""The run spec: made once where the command line enters, so one bisect builds one install key and asks once
which check it runs (issue 39's ``--pin`` walk: 25 keys at 7 sites and 134 ``check_for`` calls before)."""

from __future__ import annotations

from collections import Counter
from typing import Callable

import pytest

from kit.bisect.report import changelog
from kit.install import key as install_key
from kit.install import lockfile
from kit.run import runner
from tests.call_counts import count_calls
from tests.bisect_machine import RELEASES, CHECKS, report_json, run, verdicts
from tests.fake_releases import FakeReleases


@pytest.mark.parametrize("bounds", [["--good", "0.4.35", "--bad", "0.6.0"],
                                    ["--good", "0.4.35"]])  # the other bound found by galloping
def test_a_pinned_bisect_makes_one_install_key_and_asks_for_its_check_once(
        fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch, bounds: list[str]) -> None:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    releases = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
    for version, verdict in verdicts("0.5.1").items():
        releases.behave(version, verdict)
    counts: Counter[str] = Counter()
    count_calls(monkeypatch, "InstallKey", install_key.InstallKey, counts)
    count_calls(monkeypatch, "check_for", runner.check_for, counts)
    count_calls(monkeypatch, "read_lock", lockfile.read_lock, counts,
                 by=lambda envs_dir, settings: lockfile.lock_path(envs_dir, settings).name)
    code, _lines = run(releases, "--check", "scaling", *bounds, "--pin", "numpy==2.2.1")
    print(f"{len(releases.runs)} probes, {len(RELEASES)} releases: {dict(counts)}")
    assert code == 0
    data = report_json(releases, "scaling-*-pin-numpy-2.2.1")
    assert data["first_different"] == "0.5.1"
    assert all(seen["installed"]["pins"] == ["numpy==2.2.1"] for seen in data["observations"].values() if seen["came_from"]["source"] != "index")
    assert counts["InstallKey"] == 1
    assert counts["check_for"] == 1
    assert all(count == 1 for count in _lock_reads(counts).values())  # each read once, where it was there
    assert counts["read_lock"] <= len(RELEASES)


def _lock_reads(counts: Counter[str]) -> dict[str, int]:
    """How often each lock file was read (`count_calls`' ``by``)."""
    return {name: count for name, count in counts.items() if name.startswith("read_lock ")}


def test_a_pinned_bisect_reads_each_release_s_lock_once(fake_releases: Callable[..., FakeReleases],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A lock is asked for where a remembered probe is looked up, where the release is resolved ahead and where it
    is prepared: read once, then again only when the file changed (`kit.install.lockfile.current_lock`). Was 19
    reads of 9 files on the bisect above, 2 or 3 of each release it probed."""
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    releases = fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
    for version, verdict in verdicts("0.5.1").items():
        releases.behave(version, verdict, verdict)  # the same answer the second time
    bisect = ("--check", "scaling", "--good", "0.4.35", "--bad", "0.6.0", "--pin", "numpy==2.2.1")
    assert run(releases, *bisect)[0] == 0  # builds the pinned environments, and their locks
    probed = list(releases.runs)
    counts: Counter[str] = Counter()
    count_calls(monkeypatch, "read_lock", lockfile.read_lock, counts,
                 by=lambda envs_dir, settings: lockfile.lock_path(envs_dir, settings).name)
    code, _lines = run(releases, *bisect, "--fresh")  # every lock there now: each probe prepares again
    print(f"{len(probed)} probes, then {len(releases.runs) - len(probed)} again: {dict(counts)}")
    assert code == 0
    assert releases.runs == probed * 2
    assert sorted(set(_lock_reads(counts).values())) == [1]
    assert len(_lock_reads(counts)) >= len(probed)  # one read for each release probed, at least
