"""What one bisect runs, how it searches and what it reports: three frozen values the driver makes.

The command line (`kit.bisect.options`) is read once into one value of thirty
fields; every module below the driver once took all of it and read the few it
needed, so a reader could not tell what a module depends on, and a test had to
build the whole command line to probe one release. The driver splits it here
and hands each module only its part:

- `WhatRuns`: what each probe runs (the check or script, the backend or chip,
  the preset, the pins, the extra wheels, the time limit). `kit.bisect.run_spec`
  resolves it against matrix.toml once.
- `HowToSearch`: the ends and how the search walks between them (``--good``,
  ``--bad``, ``--crash``, ``--confirm``, ``--all``, ``--metric``, ``--jobs``,
  ``--slurm``, ``--commits`` and its ends, ``--fresh``).
- `WhatToReport`: where the report goes and how it quotes the command line
  (``--out``, ``--changelog``, ``-v``, the argv as given and as shown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..check_settings import Check
from ..slurm.jobs import SlurmOptions
from ..targets import Target


@dataclass(frozen=True)
class WhatRuns:
    """What each probe runs, apart from the release: the check (or the script made a check) and its settings."""

    check: str | None
    """``--check``: a check of matrix.toml (None for a ``--script`` or ``--explain``)."""
    script: Path | None = None
    """``--script`` (or ``--explain``'s program), resolved."""
    script_check: Check | None = None
    """``--script`` and its settings as the check it runs as (`kit.check_settings.script_check`)."""
    backend: str = "cpu"
    preset: str | None = None
    target: Target | None = None
    """``--target``: the chip each probe compiles for and never runs on (text only in its runs' parameters)."""
    timeout: int | None = None
    """``--timeout`` (None: the check's own)."""
    find_links: tuple[str, ...] = ()
    pins: tuple[str, ...] = ()
    """``NAME==VERSION`` held in every probe (``--pin``), names in normal form, sorted."""
    timed: bool = False
    """The probes must time what they run (``--metric``): nothing is left out of a check's run."""

    @property
    def subject(self) -> str:
        """What is bisected, for file names and headings: the check or ``script-<stem>`` (``--op``'s line added)."""
        op = self.op
        return self.check or script_name(self.script) + ("-op-" + re.sub(r"[^A-Za-z0-9_-]", "_", op) if op else "")

    @property
    def op(self) -> str:
        """``--op FILE:LINE[:OP]`` as given ("" where none is)."""
        explained = self.script_check.explain if self.script_check else None
        return explained.op or "" if explained is not None else ""

    @property
    def explained_op(self) -> str:
        """The OP of ``--op FILE:LINE:OP`` (``triangular_solve``), "" where none is named."""
        op = self.op
        return op.split(":")[2] if op.count(":") >= 2 else ""


@dataclass(frozen=True)
class HowToSearch:
    """The ends of the search and how it walks between them."""

    good: str | None = None
    bad: str | None = None
    crash: str = "skip"
    """How a crashed or timed-out probe counts (`kit.bisect.outcomes.CRASH_MODES`)."""
    confirm: int = 0
    scan: bool = False
    """``--all``: probe every candidate and report every transition."""
    fresh: bool = False
    """Ignore the probe cache and the records."""
    metric: str | None = None
    factor: float = 1.5
    jobs: int = 1
    slurm: SlurmOptions | None = None
    commits: bool = False
    good_commit: str | None = None
    bad_commit: str | None = None
    jax_repo: Path | None = None
    jax_repo_shown: str = ""

    @property
    def together(self) -> bool:
        """Several probes a round (``--jobs K`` or ``--slurm``)."""
        return self.jobs > 1 or self.slurm is not None


@dataclass(frozen=True)
class WhatToReport:
    """Where the report goes and how it quotes what was asked."""

    argv: tuple[str, ...] = ()
    argv_shown: tuple[str, ...] = ()
    """``argv`` as reports quote it: each absolute path relative, ``~/...`` or a placeholder."""
    command: str = "nox -s bisect --"
    """How the command line begins where reports quote it (``jax-kit bisect`` too)."""
    script_shown: str = ""
    """The script as reports name it: relative to the project when it is inside, else as it was given."""
    out: Path | None = None
    changelog: Path | None = None
    verbose: bool = False

    @property
    def quoted_argv(self) -> tuple[str, ...]:
        """The command line as reports, records and TIPs quote it (`argv_shown`; ``argv`` where none was made)."""
        return self.argv_shown or self.argv


@dataclass(frozen=True)
class Specs:
    """The three parts of one bisect's command line, split where it is parsed (`kit.bisect.options`)."""

    runs: WhatRuns
    search: HowToSearch
    report: WhatToReport

    @property
    def subject(self) -> str:
        return self.runs.subject


def script_name(script: Path | None) -> str:
    """``script-<stem>``: a ``--script``'s check name, spelled as a check name must be (it names record files)."""
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in (script.stem if script else "unknown"))
    return f"script-{stem}"


def bisect_name(specs: Specs, good: str, bad: str) -> str:
    """The file-name-safe name of one bisect: what, the ends, the backend and the mode."""
    runs, search = specs.runs, specs.search
    name = f"{runs.subject}-good{good}-bad{bad}-{runs.backend}"
    if runs.preset:
        name += f"-{runs.preset}"
    if search.scan:
        name += "-all"
    if search.metric:
        name += f"-{search.metric}-x{search.factor:g}"
    if search.commits:
        name += "-commits"
    for pin in runs.pins:
        name += f"-pin-{pin.replace('==', '-')}"
    return "".join(c if c.isalnum() or c in ".-_" else "_" for c in name)
