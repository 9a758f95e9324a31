"""What an audit leaves: the answer and the table of problems present on the console, ``audit-NAME.md`` and ``.json``.

The console ends as ``pip-audit`` ends: the verdict line, then each problem
present with the safe release and the workaround it needs. ``--json`` puts the
report's JSON on standard output instead (the progress lines go to standard
error). The report's name says what was audited (the release, the backend or
the chip, which interpreter, which entries), so two different audits never
write over each other's report; the same audit again replaces its own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..atomic_files import atomic_write_texts
from ..json_types import JsonObject
from ..markdown_text import text as md
from ..targets import Target
from .audit import AuditFinding, console_table, present, table

SCHEMA = "jax-kit-audit/1"
"""The audit JSON's ``schema``: a program reading it checks it (a change of meaning gets a new number)."""


@dataclass(frozen=True)
class Audited:
    """What one audit ran on, as its report names it."""

    release: str
    backend: str
    python: str
    """``--python`` as given ("" for a release the kit installed)."""
    target: Target | None
    only: tuple[str, ...]
    """``--only``'s entry ids (empty: the whole catalogue)."""

    @property
    def installation(self) -> str:
        how = f"--python {self.python}" if self.python else "installed"
        where = self.target.compiled_not_run if self.target else self.backend
        return f"jax {self.release} ({where}, {how})"

    @property
    def name(self) -> str:
        """``audit-jax-0.4.35-cpu``; ``-python-<digest of the path>`` for an interpreter, ``-only-<digest>`` for a
        selection, so that audits of different things never share a report."""
        where = self.target.name.replace(":", "-") if self.target else self.backend
        python = f"-python-{_digest(str(Path(self.python).absolute()))}" if self.python else ""
        only = f"-only-{_digest(','.join(sorted(self.only)))}" if self.only else ""
        return f"audit-jax-{self.release}-{where}{python}{only}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def answer_lines(findings: Sequence[AuditFinding], line: str) -> list[str]:
    """The verdict, then the table of problems present (safe release, workaround)."""
    rows = console_table(findings)
    return [line, *([""] + rows if rows else [])]


def document(audited: Audited, findings: Sequence[AuditFinding], line: str, skipped: Sequence[str],
             nothing_tested: bool) -> JsonObject:
    aimed: JsonObject = ({"target": audited.target.to_json(), "compiled_not_run": audited.target.compiled_not_run}
                         if audited.target else {})
    return {"schema": SCHEMA,
            "installation": {"jax": audited.release, "backend": audited.backend, "python": audited.python, **aimed},
            "only": list(audited.only), "verdict": line, "nothing_tested": nothing_tested,
            "present": [f.entry.id for f in present(findings)],
            "findings": [f.to_json() for f in findings], "not_run": list(skipped)}


def markdown(audited: Audited, findings: Sequence[AuditFinding], line: str, skipped: Sequence[str],
             records: Path) -> str:
    return "\n".join([f"# Audit: {audited.installation}", "", f"**{line}**", "", *table(findings), "",
                      *(f"- {md(said)}" for said in skipped), *([""] if skipped else []),
                      "Each row is one catalogue check run on this installation (its record is under "
                      f"`{records}`); the measured range is what `known --measure` found.", ""])


def write_report(folder: Path, audited: Audited, written: JsonObject, text: str,
                 say: Callable[[str], None]) -> None:
    """Both files or neither (`kit.atomic_files`): a folder where one goes is refused before either is written."""
    base = folder / audited.name
    atomic_write_texts({base.with_name(base.name + ".md"): text,
                        base.with_name(base.name + ".json"): json.dumps(written, indent=1) + "\n"})
    say(f"report: {base}.md (and .json)")
