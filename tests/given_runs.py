"""Runs handed to a bisect as triage hands them (kit/bisect/probe/given.py): shared by the tests of the module
and of the judge that takes them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kit.records import Identity, Record

CHECK = {"script_sha256": "c" * 64, "host_devices": None, "bad_if": "(?m)^BEHAVES AS REPORTED:"}
"""What the bisect's probe runs: the check triage wrote, as its identity names it."""


def identity(version: str, subject: dict[str, Any], numpy: str = "2.1.3") -> Identity:
    return Identity(subject=subject, jax=version, backend="cpu", python="3.13",
                    packages={"jax": version, "jaxlib": version, "numpy": numpy},
                    install={"exclude_newer": "2024-11-05T00:00:00Z", "requirements": []},
                    hardware={"cpu": "test"}, variables={})


CAPTURE = {"check": "issue-1a2b3c", "kit_version": "0.1.0", "preset": None,
           "parameters": {"script": "reports/triage/captures/issue-1a2b3c.py", "script_sha256": "a" * 64,
                          "host_devices": None, "processes": 1}}
"""What ran in triage: the capture, not the check (another script, another sha256)."""


def capture_record(version: str, numpy: str = "2.1.3") -> dict[str, Any]:
    return {"status": "ran", "verdict": "affected", "reason": "the script exited 1", "created": "2026-12-02T07:31:30Z",
            "duration_s": 19.8, "identity": identity(version, CAPTURE, numpy).to_json(),
            "evidence": {"exception": {"type": "TypeError", "message": "boom"}}}


def handed(version: str, tmp_path: Path, numpy: str = "2.1.3", verdict: str = "affected") -> Any:
    log = tmp_path / "reports" / "triage" / "logs" / f"issue-{version}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("Traceback (most recent call last):\nTypeError: boom\n")
    return SimpleNamespace(version=version, record=Record(capture_record(version, numpy)), judged_by=CHECK, verdict=verdict,
                           reason="the check's judge on triage's run: BEHAVES AS REPORTED: behaves as on jax 0.6.0",
                           ran="triage ran reports/triage/captures/issue-1a2b3c.py (sha256 aaaaaaaaaaaa) on jax "
                               f"{version}; record reports/triage/records/x.json",
                           log=str(log.relative_to(tmp_path)))
