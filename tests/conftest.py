"""Fixtures shared by the suites."""

from __future__ import annotations

import signal
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Iterator

import pytest
from hypothesis import settings

from kit.history.git import REPOSITORY_ENV
from kit.install.installer_env import ignored_settings

from tests import golden
from tests.fake_releases import FakeReleases, make_fake_releases
from tests.local_slurm import local_slurm  # noqa: F401  (a fixture for every suite: a running single-node SLURM)

# The property tests of pure logic (the search, a record's every field) draw 300 examples by default
# ("thorough"). Their code has no path that differs between Pythons, so the unit lane draws them thoroughly
# on the newest Python and briefly on the oldest (noxfile.py passes --hypothesis-profile=brief there), as
# mypy runs on one Python: the same checks, not the same work twice. A test that names its own count keeps it.
settings.register_profile("thorough", max_examples=300)
settings.register_profile("brief", max_examples=100)
settings.load_profile("thorough")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="write tests/golden/* from this run instead of comparing (each golden test then fails, "
                          "saying so); read the diff and commit it")


def pytest_configure(config: pytest.Config) -> None:
    golden.set_update(config.getoption("--update-golden"))
    # The Ctrl-C tests need SIGINT to reach Python, here and in the processes the tests start. A shell without job
    # control starts a background job (`bash .ci/run &`) with SIGINT ignored, every process below inherits that,
    # and Python installs no KeyboardInterrupt for an ignored SIGINT: those tests then hang until their timeouts.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


END_TO_END = {
    "test_bisect_commit_search.py": "whole commit bisects, over a git history each test builds",
    "test_run_multiprocess.py": "processes joined over a real coordinator, killed at their time limits",
    "faults/test_local_faults.py": "real uv against a proxy that cuts a download, a full tmpfs, a read-only cache",
    "faults/test_inputs.py": "the kit run as a command to its exit code, real uv on a local index",
    "faults/test_metric_resume.py": "whole metric bisects, interrupted and resumed",
    "faults/test_child_processes.py": "checks that start children, run to their time limits",
    "faults/test_output_bounds.py": "a check writing 20 MB on one line, then killed",
    "faults/test_network.py": "servers that stall or refuse, waited on to their timeouts",
    "faults/test_killed_kit.py": "a kit killed outright, and the next one cleaning up",
}
"""Modules of the machine lane although they use no fake machine: each runs the kit, a check or a history end to
end in child processes, for seconds a test (why, beside each). The unit lane is the rest: one quick look at one
piece, fast enough to run on every change, on every Python the kit supports."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the fake machine (`fake_releases`, directly or through another fixture), of a module in
    `END_TO_END`, or marked `real_time` (it waits out a real time limit, or draws real images: seconds by design)
    is of the machine lane."""
    here = Path(__file__).parent
    for item in items:
        module = Path(str(item.fspath)).resolve()
        name = module.relative_to(here).as_posix() if module.is_relative_to(here) else ""
        if ("fake_releases" in getattr(item, "fixturenames", ()) or name in END_TO_END
                or item.get_closest_marker("real_time") is not None):
            item.add_marker(pytest.mark.machine)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the modules past the soft cap, as a note for whoever touches them next (never a failure)."""
    from tests.test_code_shape import SOFT_MODULE_LINES, module_lengths

    long = module_lengths(SOFT_MODULE_LINES)
    if long:
        terminalreporter.write_line(f"note: modules over {SOFT_MODULE_LINES} lines (look at them again, split by "
                                    f"concept): " + ", ".join(f"{name} ({n})" for name, n in sorted(long.items())))


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


@pytest.fixture(autouse=True, scope="session")
def no_git_repository_of_the_caller() -> Iterator[None]:
    """Suites started from a git hook (GIT_DIR, GIT_INDEX_FILE exported) must still build and read their own
    repositories: the kit's git drops these itself, the tests' own git calls would not. For the session, as
    module fixtures build histories before any test's own fixtures."""
    with pytest.MonkeyPatch.context() as patch:
        for name in REPOSITORY_ENV:
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(autouse=True, scope="session")
def no_installer_settings_of_the_caller() -> Iterator[None]:
    """A caller's UV_CONSTRAINT or UV_INDEX_URL no longer reaches the kit's uv, but the kit says so on every fresh
    resolution, and the wording pinned by the goldens would then differ by machine."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ignored_settings():
            patch.delenv(name)
        yield
