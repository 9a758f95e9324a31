"""``JAX_PLATFORMS`` set to another platform than the run's backend: one sentence naming it, exit 2, no record.

The check inherits the variable; with ``JAX_PLATFORMS=cuda`` on a cpu run,
JAX died at its start in every check (``AssertionError``, from
``jax.default_backend()``), the record said "JAX itself cannot import and run
here (AssertionError)", and nothing named the variable. docs/faults.md,
"Inputs".
"""

from __future__ import annotations

from typing import Callable

import pytest

from kit.errors import UsageError
from kit.run import runner
from kit.run.facts import require_platform
from tests.fake_releases import FakeReleases


def test_jax_platforms_keeping_jax_off_the_backend_is_named_and_nothing_is_recorded(
        fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> None:
    machine = fake_releases(["0.6.0"])
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    with pytest.raises(UsageError) as refused:
        runner.run_check(machine.matrix, runner.RunRequest("scaling", "0.6.0"), lambda _line: None)
    assert refused.value.render().splitlines() == [
        "ERROR: JAX_PLATFORMS=cuda in the environment keeps JAX off cpu, the backend this run is for: JAX would not "
        "start in the check (or would run it elsewhere), so nothing was run or recorded",
        "TIP: unset JAX_PLATFORMS (the kit chooses the platform from --backend, now cpu), or set it to include cpu"]
    assert machine.runs == []
    assert not machine.matrix.results_dir.exists() or not any(machine.matrix.results_dir.iterdir())


@pytest.mark.parametrize("value", ["", "cpu", "CPU", "cuda,cpu", " cpu "])
def test_jax_platforms_that_lets_jax_use_the_backend_is_left_alone(value: str) -> None:
    require_platform("cpu", {"JAX_PLATFORMS": value})
    require_platform(None, {"JAX_PLATFORMS": "cuda"})  # an existing interpreter: its JAX says which backend
