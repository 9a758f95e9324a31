"""A kit killed in the middle of writing a file: its temp file is ignored by git and cleared by the next write.

Every file is written to a ``.tmp-*.part`` beside its final name, fsynced, then
moved (records: linked). A kill in between (during the fsync, say) left the
temp file for good, listed by ``git status`` among the records. Now the
pattern is in .gitignore, and the next write into that folder removes temp
files over an hour old (a write takes milliseconds; by age, not pid, since a
results folder may be shared by several machines). docs/faults.md, "Values
and records".
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from kit import atomic_files
from kit.records import store
from tests.faults.kit_commands import ROOT
from tests.record_samples import make_record

# A writer killed by SIGKILL while it fsyncs the record's temp file (os.fsync stands in for the moment of the kill).
KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from kit.records import store
from tests.record_samples import make_record
os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)
store.write_record(make_record(), Path(sys.argv[1]))
"""


def test_a_writer_killed_mid_write_leaves_an_ignored_temp_that_the_next_write_clears(tmp_path: Path) -> None:
    results = tmp_path / "results"
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(results)], cwd=ROOT, capture_output=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert killed.returncode == -9
    [left] = list(results.iterdir())
    assert left.name.startswith(".tmp-")
    assert left.name.endswith(".json.part")
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", f"reports/results/{left.name}"])
    assert ignored.returncode == 0, "git status lists a killed writer's temp file"

    store.write_record(make_record(), results)  # a write now: the temp may be a writer's at work, and stays
    assert left.exists()
    hour_ago = time.time() - atomic_files.ABANDONED_AFTER_S - 60
    os.utime(left, (hour_ago, hour_ago))
    busy = results / ".tmp-another-writer.json.part"
    busy.write_text("{")
    written = store.write_record(make_record(), results)
    assert not left.exists()
    assert busy.exists()
    assert written.exists()


def test_the_reports_temp_files_are_cleared_the_same_way(tmp_path: Path) -> None:
    old = tmp_path / ".tmp-abc.part"
    old.write_text("half a matrix.md")
    hour_ago = time.time() - atomic_files.ABANDONED_AFTER_S - 60
    os.utime(old, (hour_ago, hour_ago))
    atomic_files.atomic_write_texts({tmp_path / "matrix.md": "md", tmp_path / "matrix.json": "{}"})
    assert sorted(path.name for path in tmp_path.iterdir()) == ["matrix.json", "matrix.md"]


# A report writer killed between its two moves: matrix.md moved into place, matrix.json not yet.
KILLED_BETWEEN_MOVES = """
import os, signal, sys
from pathlib import Path
from kit import atomic_files
moved = []
replace = os.replace
def replace_then_die(source, target):
    if moved:
        os.kill(os.getpid(), signal.SIGKILL)
    replace(source, target)
    moved.append(target)
os.replace = replace_then_die
folder = Path(sys.argv[1])
atomic_files.atomic_write_texts({folder / "matrix.md": "new md", folder / "matrix.json": "new json"})
"""


def test_a_writer_killed_between_its_two_moves_is_finished_by_the_next_write(tmp_path: Path) -> None:
    (tmp_path / "matrix.md").write_text("old md")
    (tmp_path / "matrix.json").write_text("old json")
    killed = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_MOVES, str(tmp_path)], cwd=ROOT,
                            capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert killed.returncode == -9
    assert ((tmp_path / "matrix.md").read_text(), (tmp_path / "matrix.json").read_text()) == ("new md", "old json")
    [journal] = tmp_path.glob(".tmp-*" + atomic_files.JOURNAL_SUFFIX)
    atomic_files.atomic_write_text(tmp_path / "notes.txt", "a writer at work may still be moving: left alone")
    assert (tmp_path / "matrix.json").read_text() == "old json"
    minute_ago = time.time() - atomic_files.INTERRUPTED_AFTER_S - 5
    os.utime(journal, (minute_ago, minute_ago))
    atomic_files.atomic_write_text(tmp_path / "notes.txt", "the next write")
    # was: matrix.md new and matrix.json old until the next report
    assert ((tmp_path / "matrix.md").read_text(), (tmp_path / "matrix.json").read_text()) == ("new md", "new json")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["matrix.json", "matrix.md", "notes.txt"]
