"""kit.bisect.report.what_changed: every package and era date that changed besides JAX, from the probes alone."""

from __future__ import annotations

from kit.bisect.candidates import Candidate
from kit.bisect.observation import Observation
from kit.bisect.report.what_changed import changes_between, changes_lines
from tests.observations import observed

CANDIDATES = [Candidate("0.4.38", (), None, "3.13", "0.4.38", uploaded="2024-12-17"),
              Candidate("0.5.0", (), None, "3.13", "0.5.0", uploaded="2025-01-17")]


def seen(packages: dict[str, str], era: str, pins: list[str] | None = None) -> Observation:
    return observed("ran", "unaffected", "", packages=packages, era=era, pins=pins or [])


BEFORE = seen({"jax": "0.4.38", "jaxlib": "0.4.38", "numpy": "2.2.1", "scipy": "1.14.1", "ml-dtypes": "0.5.0",
               "opt-einsum": "3.4.0"}, "2024-12-31T00:00:00Z")
AFTER = seen({"jax": "0.5.0", "jaxlib": "0.5.0", "numpy": "2.2.2", "scipy": "1.15.1", "ml-dtypes": "0.5.1",
              "opt-einsum": "3.4.0"}, "2025-01-31T00:00:00Z")


def test_every_package_that_differs_is_listed_with_the_era_dates() -> None:
    changes = changes_between("0.4.38", "0.5.0", {"0.4.38": BEFORE, "0.5.0": AFTER}, CANDIDATES)
    assert changes.packages == {"jaxlib": ("0.4.38", "0.5.0"), "ml-dtypes": ("0.5.0", "0.5.1"),
                                "numpy": ("2.2.1", "2.2.2"), "scipy": ("1.14.1", "1.15.1")}
    assert changes.uploaded == ("2024-12-17", "2025-01-17")
    assert changes.known
    lines = changes_lines(changes, ("last good", "first bad"), ["nox", "-s", "bisect", "--", "--script", "r.py"])
    assert "| numpy | 2.2.1 | 2.2.2 |" in lines
    assert "| opt-einsum" not in "\n".join(lines)
    assert any("2024-12-31 and 2025-01-31 (the era cut-offs)" in line for line in lines)
    # The example names numpy first (what a JAX result leans on most), at the last good side's version.
    assert lines[-1].endswith("`nox -s bisect -- --script r.py --pin numpy==2.2.1`.")


def test_a_held_package_is_said_held_and_not_listed() -> None:
    before = seen({**BEFORE.installed.packages, "numpy": "2.2.1"}, "2024-12-31T00:00:00Z", ["numpy==2.2.1"])
    after = seen({**AFTER.installed.packages, "numpy": "2.2.1"}, "2025-01-31T00:00:00Z", ["numpy==2.2.1"])
    changes = changes_between("0.4.38", "0.5.0", {"0.4.38": before, "0.5.0": after}, CANDIDATES)
    assert "numpy" not in changes.packages
    assert changes.held == ["numpy==2.2.1"]
    assert "Held in every probe with --pin: numpy==2.2.1." in changes_lines(changes, ("last good", "first bad"), [])


def test_a_probe_that_did_not_say_what_it_installed_is_not_guessed() -> None:
    changes = changes_between("0.4.38", "0.5.0", {"0.4.38": observed("ran", "unaffected", ""), "0.5.0": AFTER},
                              CANDIDATES)
    assert not changes.known
    assert changes_lines(changes, ("last good", "first bad"), [])[2].startswith("Not known:")


def test_packages_the_commit_phase_held_are_ruled_out_and_the_next_one_is_offered_for_pin() -> None:
    """The deciding commits ran with numpy 2.2.1 and jaxlib 0.4.38 both: numpy is not suggested, scipy is."""
    changes = changes_between("0.4.38", "0.5.0", {"0.4.38": BEFORE, "0.5.0": AFTER}, CANDIDATES)
    lines = changes_lines(changes, ("last good", "first bad"), ["nox", "-s", "bisect", "--", "--script", "r.py"],
                          {"numpy": "2.2.1", "jaxlib": "0.4.38"})
    assert ("Ruled out by the commit phase, whose two deciding commits ran with the same version of each: "
            "jaxlib 0.4.38, numpy 2.2.1.") in lines
    assert lines[-1].endswith("--pin scipy==1.14.1`.")
    assert "--pin numpy" not in "\n".join(lines)


def test_when_the_commit_phase_held_every_package_no_pin_is_offered() -> None:
    changes = changes_between("0.4.38", "0.5.0", {"0.4.38": BEFORE, "0.5.0": AFTER}, CANDIDATES)
    held = {name: versions[0] or "" for name, versions in changes.packages.items()}
    assert "--pin" not in "\n".join(changes_lines(changes, ("last good", "first bad"), [], held))
