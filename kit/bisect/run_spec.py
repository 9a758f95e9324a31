"""What every probe of one bisect runs, made once where the command line enters: the run spec.

A probe of a release (or of a commit laid over one) runs the same check, with
the same judged parameters, under the same identity subject, installed with
the same settings, under the same time limit, its record in the same folder;
only the release and the Python to try first differ. Asked again for each
probe, each of these was once rebuilt from the options tens of times per
bisect (a throwaway request to learn the parameters, an install key per
probe, the check looked up 134 times on one 5-probe bisect), and each rebuild
was a chance to drop a setting: the bug class `kit.install.key` exists to
stop. Here they are one frozen value: `run_spec` makes it from the parsed
options, a release's own is `RunSpec.for_release` (``dataclasses.replace``),
and `RunSpec.identity` is the one way a bisect's identities are made.

Words: the packages a user holds with ``--pin`` are *pins* (``spec.install.pins``);
the versions a resolution chose are *versions* (an identity's ``packages``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..json_types import JsonObject, json_form

from repro.parameters import untimed

from ..config import Matrix

from ..check_settings import Check
from ..install import InstallKey, InstallPlan
from ..records import Identity
from ..run import runner
from ..run.failures import script_probe_subject
from .specs import WhatRuns


@dataclass(frozen=True)
class RunSpec:
    """One bisect's run, every value in its normal form (see the module's docstring)."""

    name: str
    """What records call the check: the check's name, or ``script-<stem>`` for a ``--script``."""
    check: Check
    """matrix.toml's block, or the ``--script`` made a check (`kit.check_settings.script_check`), its extra packages in it."""
    preset: str | None
    parameters: Mapping[str, object]
    """What each probe asks of the check, merged and judged once (`runner.parameters_for`), overrides applied."""
    overrides: Mapping[str, object]
    """What a probe leaves out because its verdict never reads it (`probe_overrides`; {} for none)."""
    subject: Mapping[str, object]
    """What runs, apart from the release: the identity's subject (the check and its parameters, or a script's
    content and settings)."""
    record_subject: Mapping[str, object]
    """The subject a matrix record of the same run holds (timings included): such a record answers a probe too."""
    install: InstallKey
    """How each probe installs (backend, ``--find-links``, the user's pins, the check's extra packages); a
    release's own adds the Python to try first."""
    timeout: int
    """A probe's time limit: ``--timeout``, else the check's (a script's default)."""
    records_dir: Path | None
    """Where the probes' records go (None: the matrix's own folder; a ``--script``'s stay apart)."""
    asked: WhatRuns
    """What the command line asked to run, as the driver split it: the check's name (None for a script), the
    script, the target."""

    @property
    def backend(self) -> str:
        return self.install.backend

    @property
    def pins(self) -> tuple[str, ...]:
        """The packages held in every probe (``--pin``), ``NAME==VERSION``, names canonical, sorted."""
        return self.install.pins

    def for_release(self, python: str | None) -> RunSpec:
        """This spec for one release: the Python its index metadata named tried first when it is resolved."""
        return dataclasses.replace(self, install=dataclasses.replace(self.install, python=python))

    def identity(self, version: str, python: str | None, versions: Mapping[str, str],
                 plan: InstallPlan | None) -> Identity:
        """The identity of a probe of ``version`` here, installed as ``plan`` asked and resolved to ``versions``.

        The one constructor of a bisect's identities: from a built environment's lock, from a prepared
        environment (`runner.prepared_identity`), for a release or a commit's build.
        """
        return runner.installed_identity(self.subject, version, self.backend, python, versions, plan)


def run_spec(matrix: Matrix, runs: WhatRuns) -> RunSpec:
    """The run spec of a bisect of what the command line asked to run: the check asked for once, its parameters judged once."""
    asked = runner.RunRequest(check=runs.subject, version="", backend=runs.backend, preset=runs.preset,
                              script=runs.script_check)
    check = runner.check_for(matrix, asked)
    overrides = probe_overrides(runs, check)
    parameters = runner.parameters_for(matrix, dataclasses.replace(asked, overrides=overrides, target=runs.target),
                                       check)
    subject = _subject(runs, asked, parameters)
    record_subject = subject
    if overrides:  # a record with timings answers an untimed probe: it read the same HLO
        timed = runner.check_subject(asked, runner.parameters_for(matrix, asked, check))
        record_subject = json_form(timed)
    return RunSpec(
        name=runs.subject, check=check, preset=runs.preset, parameters=parameters, overrides=overrides,
        subject=subject, record_subject=record_subject,
        install=InstallKey(runs.backend, runs.find_links, runs.pins, check.requires),
        timeout=runs.timeout or check.timeout_s,
        # A --script's records stay out of the matrix's folder: it is no check of it.
        records_dir=matrix.layout.script_records if runs.script is not None else None, asked=runs)


def _subject(runs: WhatRuns, asked: runner.RunRequest, parameters: Mapping[str, object]) -> JsonObject:
    """What a probe runs, apart from the release: the check and its parameters, or the script's content.

    A check's subject is the one its records hold (`runner.check_subject`), so
    a probe and a record of the same run have the same identity. A --script
    by what decides its outcome: its content and its settings (devices, extra
    packages, bad_if), not its path: a copy of the script elsewhere is the same probe.
    """
    if runs.check:
        return runner.check_subject(asked, parameters)
    return json_form(script_probe_subject(parameters))


def probe_overrides(runs: WhatRuns, check: Check) -> JsonObject:
    """What a probe of a built-in check leaves out of its run because its verdict never reads it ({} for none).

    A verdict bisect needs the verdict, not the timing table: where the check's
    verdict comes from the compiled HLO alone (scaling on CPU,
    `repro.parameters.untimed`), its probes time nothing. The parameters say so,
    so such a probe has its own identity: it is never reused where timings are
    asked (``--metric``, the matrix), and its record is ad-hoc to the matrix.
    """
    if not runs.check or runs.timed or check.script is not None:
        return {}  # a script check's block: the script decides what it measures
    if runs.target:  # compiled for a chip, never run: nothing is timed, as a probe on CPU
        return untimed(runs.check, "cpu")
    return untimed(runs.check, runs.backend)
