"""Records for the tests: the committed fixture records and a well-formed record to vary.

Shared by the records and matrix suites (a test module never imports another).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit.records import SCHEMA

FIXTURES = Path(__file__).parent / "fixtures" / "records"


def make_record(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "kit_version": "0.1.0",
        "check": "scaling",
        "requested": {"jax": "0.4.35", "backend": "cpu"},
        "status": "ran",
        "verdict": "affected",
        "reason": "whole batch on every device",
        "environment": {"backend": "cpu", "device_kind": "cpu", "device_count": 4},
        "install": {"python": "3.11", "requirements": ["jax[cpu]==0.4.35"], "exclude_newer": "2024-10-23T20:57:46Z"},
        "parameters": {"devices": [1, 2, 4], "matrix_size": 32, "batch": 8192},
        "evidence": {"summary": {"all_gathers": 1}},
        "host": {"name": "box", "machine_id": "abc123abc123"},
        "reproduce": "nox -s scaling-0.4.35",
        "created": "2026-11-29T21:30:00Z",
        "duration_s": 1.0,
    }
    record.update(overrides)
    return record

# The parameters the fixture records ran with, as a matrix.toml would configure them.
CONFIGURED = {"scaling": {"batch": 8192, "devices": [1, 2, 4], "matrix_size": 32}, "correctness": {"matrix_size": 4}}


def fixture_matrix(*releases: str) -> str:
    """A matrix.toml of ``releases`` whose checks hold the parameters the fixture records ran with (CONFIGURED)."""
    return "".join(f'[[release]]\nversion = "{v}"\n\n' for v in releases) + (
        "[checks.scaling]\nbatch = 8192\ndevices = [1, 2, 4]\nmatrix_size = 32\n\n"
        "[checks.correctness]\nmatrix_size = 4\n")


def answer_section(markdown: str) -> str:
    """matrix.md's Answer section alone."""
    return markdown.split("## Answer", 1)[1].split("## Matrix", 1)[0]
