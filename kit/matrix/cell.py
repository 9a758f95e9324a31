"""One cell of ``nox -s matrix`` (a release × a check, on the sweep's backend or for a target), and what became of it."""

from __future__ import annotations

from dataclasses import dataclass

from ..targets import Target


@dataclass(frozen=True)
class Cell:
    """One release × check: what a record measures on this machine."""

    version: str
    check: str
    target: Target | None = None
    """The chip it is compiled for, not run (``--target``); None: run on the sweep's backend."""

    def __str__(self) -> str:
        return f"{self.check} · jax {self.version}" + (f" · {self.target.name}" if self.target else "")

    @property
    def backend(self) -> str:
        """What it installs for, where it is not the sweep's backend: its target's compiler (jax[tpu])."""
        return self.target.install_extra if self.target else ""

    @property
    def too_old(self) -> bool:
        """A release that cannot compile for the cell's target: not installable, nothing resolved."""
        return self.target is not None and not self.target.compiles_on(self.version)


@dataclass
class CellResult:
    """What became of one cell in this sweep, for the closing table."""

    cell: Cell
    status: str | None
    verdict: str | None
    current: bool = False
    note: str = ""
