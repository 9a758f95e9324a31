"""kit.bisect.commits.builds: which release build a JAX commit runs on."""

from __future__ import annotations

import pytest

from kit.bisect.commits.builds import Build, choose_build
from kit.history.version_file import JaxlibRange

A = Build("0.5.2", "0.5.1", "3.13", True, "bad")
B = Build("0.5.3", "0.5.3", "3.13", True, "good")
B_UNBUILT = Build("0.5.3", "0.5.3", "3.13", False, "good")


@pytest.mark.parametrize(("accepted", "builds", "chosen", "why"), [
    (JaxlibRange("0.5.1", "0.5.2"), [A, B], A, ""),  # only the old jaxlib fits
    (JaxlibRange("0.5.1", "0.5.3"), [A, B], A, ""),  # both fit: the first (the bad side's)
    (JaxlibRange("0.5.1", "0.5.3"), [B, A], B, ""),
    (JaxlibRange("0.5.3", "0.5.3"), [A, B], B, ""),  # the release commit raised the minimum
    (JaxlibRange("0.5.1", "0.5.3"), [B_UNBUILT, A], A, ""),  # a built one before one to build
    (JaxlibRange("0.5.3", "0.5.3"), [A, B_UNBUILT], B_UNBUILT, ""),  # none built fits: that one gets built
    (JaxlibRange("0.5.2", "0.5.2"), [A, B], None, "needs jaxlib >= 0.5.2 and <= 0.5.2; the builds at hand are jaxlib 0.5.1, jaxlib 0.5.3"),
    (None, [A, B], None, "names no jaxlib range"),
])
def test_choose_build(accepted: JaxlibRange | None, builds: list[Build], chosen: Build | None, why: str) -> None:
    got, reason = choose_build(accepted, builds)
    assert got == chosen
    assert why in reason
    assert bool(reason) == (chosen is None)
