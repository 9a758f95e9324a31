"""The matrix swept for a chip compiled for and not run: ``nox -s matrix -- --target tpu:v5e:2x2``.

A target answers only what its compiler can show: a check whose repro takes a
``target`` parameter (scaling: every case compiled over the chip's
compile-only devices, its HLO read, nothing timed). What needs the chip to run
cannot be answered there: correctness (it compares what the chip computes
with references), a script check (it runs), and scaling's timings. The sweep
says those are untested for the target (`untested`), never skips them in
silence.

A target cell's records hold matrix.toml's parameters plus the target's JSON
(`cell_parameters`), so currency is per target: a record for one chip never
stands for another chip, nor for the backend's cell. A release below the
target's lowest (`kit.targets.Target.compiles_on`) is `not-installable` with
the reason, its record written without resolving anything, and stays current
while the kit and the request are the same (`unplanned_identity`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from repro import parameters as parameter_rules

from ..config import Matrix, configured_parameters

from ..check_settings import Check, CheckKind
from ..records import Identity
from ..run.facts import identity_here
from ..targets import Target, target_parameter


def takes_target(check: Check) -> bool:
    """Whether a check can be compiled for a target: a built-in one whose repro takes ``target``."""
    return check.kind is CheckKind.BUILTIN and "target" in parameter_rules.RULES.get(check.name, {})


def cell_parameters(matrix: Matrix, check: str, target: Target | None) -> dict[str, object]:
    """What a cell's records must have run: matrix.toml's parameters, plus the target as a record holds it (the
    text `kit.run.runner.parameters_for` writes for a run's ``RunRequest.target``)."""
    return {**configured_parameters(matrix, check), **target_parameter(target)}


def untested(matrix: Matrix, target: Target, checks: Sequence[str]) -> list[str]:
    """A sentence per check: what the target's cells answer, and what they cannot since it needs the chip to run."""
    said = []
    for name in checks:
        if takes_target(matrix.check(name)):
            said.append(f"{name}: {target.compiled_not_run}; its timings are untested there (nothing runs on the chip)")
        else:
            said.append(f"{name}: untested for {target.title}: it needs the chip to run, and a target is compiled "
                        "for, never run")
    return said


def unplanned_identity(subject: Mapping[str, object], version: str, target: Target) -> Identity:
    """The identity of a release too old for ``target``: nothing resolved or installed, as its record was made
    (`kit.run.runner.run_check` with no environment), so a second sweep finds it current."""
    return identity_here(subject=dict(subject), jax=version, backend=target.install_extra, python=None, packages={},
                         requirements=(), exclude_newer=None)
