"""The whole tables: ``reports/explain-<program>-<release>.{md,json}`` per release, and one across releases.

The JSON is the release's record (identity, install, the run, every module
and fingerprint, the command that reproduces it); the markdown is for a bug
thread: no absolute path, every field escaped where printed.
"""

from __future__ import annotations

import re
from pathlib import Path
from dataclasses import dataclass, field
from typing import Sequence

from repro.contract import strict_json

from ..atomic_files import atomic_write_texts
from ..markdown_text import fenced
from ..json_types import JsonObject
from ..hlo import Fingerprint, FingerprintState
from .answer import size
from .capture import Capture

_COLUMNS = ("source line", "function", "op", "pass", "state", "per device / global batch", "collective bytes",
            "fed by", "count", "op path")


def file_stem(program: str) -> str:
    """``examples/programs/train.py`` → ``explain-train``: a name safe in any folder."""
    stem = Path(program).stem or "program"
    return "explain-" + re.sub(r"[^A-Za-z0-9_.-]", "_", stem)


def write_reports(folder: Path, program: str, captures: Sequence[Capture], answer: Sequence[str]) -> list[Path]:
    """Every release's md and json, and (for more than one release) the table across them; their paths."""
    files: dict[Path, str] = {}
    stem = file_stem(program)
    target = next((str(c.section("target").get("name")) for c in captures if c.section("target")), "")
    across = stem + ("-" + re.sub(r"[^A-Za-z0-9_.-]", "-", target) if target else "")  # beside the CPU table
    for capture in captures:
        name = release_name(stem, capture)
        files[folder / f"{name}.json"] = strict_json(capture.record) + "\n"
        files[folder / f"{name}.md"] = release_markdown(capture, answer)
    if len(captures) > 1:
        files[folder / f"{across}.md"] = across_markdown(program, captures, answer)
        files[folder / f"{across}.json"] = strict_json({"kind": "explain-across", "program": program,
                                                      "releases": [c.release for c in captures],
                                                      "answer": list(answer),
                                                      "rows": [row.to_json() for row in across_rows(captures)]}) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_texts(files)
    return sorted(files)


def release_name(stem: str, capture: Capture) -> str:
    """``explain-train-0.6.0``; a user's own interpreter (``--python``) adds ``-existing``: not the kit's build."""
    existing = capture.section("install").get("environment") == "existing"
    target = str(capture.section("target").get("name") or "")
    compiled_for = "-" + re.sub(r"[^A-Za-z0-9_.-]", "-", target) if target else ""  # beside, not over, the CPU run's
    return f"{stem}-{capture.release or 'unknown'}{compiled_for}" + ("-existing" if existing else "")


def release_markdown(capture: Capture, answer: Sequence[str]) -> str:
    record = capture.record
    lines = [f"## explain {cell(record.get('program'))} on jax {cell(capture.release or '(interpreter)')}", "",
             f"{cell(record.get('reason'))}", "", "```", *answer, "```", "",
             "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    lines += ["| " + " | ".join(cell(v) for v in _row(f)) + " |" for f in capture.fingerprints]
    if not capture.fingerprints:
        lines.append("| (no linear-algebra op or collective in what compiled) |" + " |" * (len(_COLUMNS) - 1))
    environment = capture.section("environment")
    target = capture.section("target")
    if target:
        lines += ["", f"{cell(target.get('sentence'))} (the program ran on CPU host devices to find what it "
                      f"compiles; each computation was compiled again by {cell(target.get('title'))}'s compiler)."]
    lines += ["", f"Ran on {cell(environment.get('backend') or capture.section('requested').get('backend'))}"
                  f", jax {cell(environment.get('jax'))}, jaxlib {cell(environment.get('jaxlib'))}"
                  f", python {cell(environment.get('python'))}; modules read: {len(capture.modules)}.",
              "", "Reproduce with:", "", *fenced(str(record.get("reproduce") or "")), ""]
    return "\n".join(lines)


@dataclass(frozen=True)
class AcrossRow:
    """One (source line, function, op, pass) of the table across releases: its state on each release."""

    location: str
    function: str
    op: str
    pass_: str
    states: dict[str, str] = field(default_factory=dict)
    """Per release, the op's state there (the worst, where it compiled more than once); absent where it is absent."""

    def to_json(self) -> JsonObject:
        return {"location": self.location, "function": self.function, "op": self.op, "pass": self.pass_,
                "states": dict(self.states)}


def across_rows(captures: Sequence[Capture]) -> list[AcrossRow]:
    """One row per (source line, function, op, pass): its state on each release ("" where it is absent)."""
    rows: dict[tuple[str, ...], AcrossRow] = {}
    for capture in captures:
        seen: dict[tuple[str, ...], set[str]] = {}
        for f in capture.fingerprints:
            row = rows.setdefault(f.key, AcrossRow(f.key[0], f.function, f.op, f.pass_))
            row.states[capture.release] = _worse(row.states.get(capture.release), _state(f))
            seen.setdefault(f.key, set()).add(_state(f))
        # An op of a function compiled into several modules is in each (t5: a collective's cell showed one
        # module's 144 KiB where the console said the two modules' 288 KiB): how many is said beside the figure.
        for key, states in seen.items():
            count = sum(1 for f in capture.fingerprints if f.key == key)
            said = rows[key].states[capture.release]
            if count > 1 and said.endswith(")"):
                rows[key].states[capture.release] = said[:-1] + (f"; each of {count} modules)" if len(states) == 1
                                                                  else f"; one of {count} modules, which differ)")
    return [rows[key] for key in sorted(rows)]


def across_markdown(program: str, captures: Sequence[Capture], answer: Sequence[str]) -> str:
    releases = [c.release or "(interpreter)" for c in captures]
    lines = [f"## explain {cell(program)}: source line x release", "", "```", *answer, "```", "",
             "| source line | function | op | pass | " + " | ".join(cell(r) for r in releases) + " |",
             "|" + "---|" * (4 + len(releases))]
    for row in across_rows(captures):
        states = [cell(row.states.get(c.release, "")) for c in captures]
        lines.append(f"| {cell(row.location)} | {cell(row.function)} | {cell(row.op)} | {cell(row.pass_)} | "
                     + " | ".join(states) + " |")
    lines += ["", "Per release: " + ", ".join(f"{release_name(file_stem(program), c)}.md" for c in captures), ""]
    return "\n".join(lines)


def cell(value: object) -> str:
    """A field as a markdown table cell: one line, pipes and backticks escaped, bounded."""
    text = " ".join(str("" if value is None else value).split())
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;")
    return text if len(text) <= 300 else text[:297] + "..."


_RANK: dict[str, int] = {FingerprintState.GATHERED: 5, FingerprintState.WHOLE: 4, FingerprintState.COMMUNICATION: 3,
                        FingerprintState.REPLICATED: 2, FingerprintState.SPLIT: 1, FingerprintState.EXPECTED: 1,
                        FingerprintState.ONE_DEVICE: 0, FingerprintState.CANNOT_TELL: 3}
"""Which state a row of the table across releases shows where one release has the op more than once: the worst."""


def _worse(old: str | None, new: str) -> str:
    if old is None:
        return new
    # The state is the words before a figure in parentheses: "cannot tell" and "one device" are two words.
    return old if _RANK.get(old.split(" (")[0], 0) >= _RANK.get(new.split(" (")[0], 0) else new


def _state(f: Fingerprint) -> str:
    if f.device_batch is not None and f.global_batch:
        return f"{f.state} ({f.device_batch}/{f.global_batch})"
    if f.bytes_per_device:
        return f"{f.state} ({size(f.bytes_per_device)})"
    return f.state


def _row(f: Fingerprint) -> list[object]:
    batch = f"{f.device_batch} / {f.global_batch}" if f.global_batch else (f.device_batch or "")
    moved = size(f.bytes_per_device) if f.bytes_per_device else ""
    count = f"{f.count}{' (in a loop)' if f.in_loop else ''}" if f.count else "expanded by XLA"
    return [f.location or "(JAX's own code)", f.function, f.op, f.pass_, f.state, batch, moved,
            ", ".join(f.fed_by), count, f.op_path]
