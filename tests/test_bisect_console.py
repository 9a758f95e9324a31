"""kit.bisect.console: a quiet console (one line a probe, the phases), and -v as before; end to end too."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List

import pytest

from kit.bisect.report import changelog
from kit.bisect import driver
from kit.bisect.console import PROBE_WIDTH, Console
from kit.log_events import Event, Kind, detail
from tests.fake_releases import FakeReleases
from tests.bisect_machine import CHECKS, RELEASES

FAILING = """\
import os
version = tuple(int(p) for p in os.environ["FAKE_JAX"].split("."))
for i in range(20):
    print("step", i, "of the repro on jax", os.environ["FAKE_JAX"])
def decompose():
    raise RuntimeError("slogdet went wrong on jax " + os.environ["FAKE_JAX"])
if version >= (0, 5, 2):
    decompose()
"""

# Lines as the install, overlay and run layers log them (kit/install, kit/bisect/commit_probes, kit/run/runner),
# each a detail where it is written.
DETAIL_TEXTS = [
    "jax 0.4.35: as locked in .nox/jax-envs/locks/jax-0.4.35-cpu-e8c6.json (resolved 2026-12-01T15:45:50Z; "
    "-- --refresh resolves again)",
    "Python 3.13: jaxlib 0.4.35, numpy 2.1.3, scipy 1.14.1",
    "reusing environment /work/main/.nox/jax-envs/jax-0.4.35-cpu-py3.13-0fd806a509",
    "running -m repro.scaling --out /tmp/kit-1/result.json --devices 1,2,4",
    "jax 0.5.2's environment: bytecode for its packages in place",
    "laid 8c7a55ea82's jax/ and jaxlib Python over jax 0.5.2's environment (/tmp/kit-2); bytecode: 607 files",
    "  8c7a55ea82 on jaxlib 0.5.1: JAX imports and runs here (0.7 s)",
    # a commit no build runs: the commit search's one grouped line says how many and why
    "probe commit 4606652c30 ([JAX] Rename xla_extension to _jax.): skip [index] not installable here: JAX itself "
    "cannot run it on any jaxlib build here (on jaxlib 0.6.0: ImportError: cannot import name '_jax')",
]
DETAIL_LINES = [detail(text) for text in DETAIL_TEXTS]
PHASE_LINES = [
    "bounds from the command line: good 0.6.0, bad 0.4.35",
    "jaxlib 0.5.1 runs 393 commits (b0cfcb8eb2 .. 8c7a55ea82)",
    "runnable pairs: 2 laid over and run, 1.6 s in all so far",
    "239 commits (7877bec782 .. cf976283cb) run on no build here (skipped unrun, never good or bad): 239 × JAX itself "
    "cannot run it on any jaxlib build here (on jaxlib 0.6.0: ImportError: cannot import name '_jax')",
    "probe jax 0.4.14: skip [index] not installable here: no wheel for this platform",
    "could not keep probes in the probe cache reports/bisect/probes (read-only); the bisect goes on",
]


def test_quiet_keeps_phase_lines_and_leaves_out_how_a_probe_was_prepared() -> None:
    shown: List[str] = []
    console = Console(shown.append)
    for line in DETAIL_LINES + PHASE_LINES:
        console(line)
    assert shown == PHASE_LINES
    assert console.hidden == len(DETAIL_LINES)


def test_a_probe_is_one_line_on_a_quiet_console() -> None:
    shown: List[str] = []
    line = "probe jax 0.5.0: bad (affected) [cache] " + "a long reason " * 30
    Console(shown.append)(Event(line + "\n  reused: the same check scaling ...\n  ran again: the jaxlib differs",
                                Kind.PROBE))
    assert len(shown) == 1
    assert "\n" not in shown[0]
    assert len(shown[0]) <= PROBE_WIDTH
    assert shown[0].startswith("probe jax 0.5.0: bad (affected) [cache] a long reason")
    assert shown[0].endswith("…")


def test_the_kind_decides_never_the_wording() -> None:
    shown: List[str] = []
    console = Console(shown.append)
    console(DETAIL_TEXTS[2])  # worded as a detail, logged as a plain line: shown
    console(detail(PHASE_LINES[0]))  # worded as a phase line, logged as a detail: folded
    console(Event("command output", Kind.OUTPUT))
    assert shown == [DETAIL_TEXTS[2]]
    assert console.hidden == 2


def test_verbose_shows_everything_as_it_came() -> None:
    shown: List[str] = []
    console = Console(shown.append, verbose=True)
    for line in DETAIL_LINES + ["probe jax 0.5.0: bad\n  reused: the same x"]:
        console(line)
    assert shown == DETAIL_LINES + ["probe jax 0.5.0: bad\n  reused: the same x"]


@pytest.fixture
def releases(fake_releases: Callable[..., FakeReleases], monkeypatch: pytest.MonkeyPatch) -> FakeReleases:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    return fake_releases(RELEASES, matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)


def console_lines(capsys: pytest.CaptureFixture[str], logged: List[str]) -> List[str]:
    """What reached the console: printed (the plan, the summary) and logged (phases, probes), apart."""
    return capsys.readouterr().out.splitlines() + [line for entry in logged for line in entry.splitlines()]


def test_a_quiet_bisect_fits_a_screen_and_a_failing_deciding_probe_shows_its_last_three_lines(
        releases: FakeReleases, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script that dies with a traceback: its output goes to its log; only the deciding probes' ends show."""
    script = tmp_path / "repro.py"
    script.write_text(FAILING)
    logged: List[str] = []
    argv = ["--script", str(script), "--good", "0.4.34", "--bad", "0.6.0"]
    assert driver.main(releases.matrix, argv, logged.append) == 0
    quiet = console_lines(capsys, logged)
    probes = [line for line in quiet if line.startswith("probe ")]
    assert 3 <= len(probes) <= 6
    assert len(quiet) <= len(probes) + 30  # the plan (11), the phases, the summary, one tail, where the report is
    assert not any(line.startswith("running ") for line in quiet)
    assert sum("Traceback (most recent call last)" in line for line in quiet) == 0
    tail_at = next(i for i, line in enumerate(quiet) if "last lines" in line)
    assert quiet[tail_at].startswith("  first bad jax 0.5.2, last lines (reports/bisect/probes/")
    assert quiet[tail_at + 3].strip().startswith("RuntimeError")
    said = [line for line in quiet if line.startswith("report: ")]
    assert len(said) == 1
    assert said[0].endswith("(and .json); -v prints every step")

    logged.clear()
    assert driver.main(releases.matrix, [*argv, "-v", "--fresh"], logged.append) == 0
    verbose = console_lines(capsys, logged)
    assert len(verbose) > 2 * len(quiet)
    assert any(line.startswith("running ") for line in verbose)
    assert sum("Traceback (most recent call last)" in line for line in verbose) >= 2
    assert "## Probes" in verbose  # the whole report, as before
