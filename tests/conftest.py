"""Fixtures shared by the suites."""

from __future__ import annotations

import signal
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.fake_releases import FakeReleases, make_fake_releases
from tests.local_slurm import local_slurm  # noqa: F401  (a fixture for every suite: a running single-node SLURM)


def pytest_configure(config: pytest.Config) -> None:
    # The Ctrl-C tests need SIGINT to reach Python, here and in the processes the tests start. A shell without job
    # control starts a background job (`bash .ci/run &`) with SIGINT ignored, every process below inherits that,
    # and Python installs no KeyboardInterrupt for an ignored SIGINT: those tests then hang until their timeouts.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fake_releases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeReleases]]:
    """Make a fake machine: releases on a local index, built as fake environments, the kit's road real.

    ``fake_releases(["0.4.13", "0.4.16", "0.6.2"], not_installable=["0.4.16"])``;
    see `tests.fake_releases` for what is real and what is not.
    """
    with ExitStack() as stack:
        yield make_fake_releases(tmp_path, monkeypatch, stack)


@pytest.fixture(autouse=True)
def no_jax_platforms_of_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller's exported JAX_PLATFORMS (cuda, say) must not decide the suites: the kit refuses a run whose backend
    it keeps JAX off (`kit.run.facts.require_platform`); the tests that mean it set it themselves."""
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
