"""The kit removes only scratch folders it made and no kit holds: never a user's folder, never a live kit's.

The fault: before each run the kit removed every ``kit-<digits>-*`` folder of
the user's in TMPDIR whose "pid" was not alive, so a user's
``kit-9999999-my-notes/`` went, and a kit in another PID namespace sharing the
TMPDIR (a container, a node with a shared scratch) had its live folder removed
under it. Now every scratch folder is a `mkdtemp` in ``<TMPDIR>/jax-kit-<uid>``
(mode 0700, refused when it is a link or another user's) holding a lock the kit
keeps while it uses the folder (`kit.scratch`). Real processes, a real PID
namespace where `unshare` can make one. docs/faults.md, "Untrusted input and
the kit's folders".
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kit import scratch
from kit.errors import StorageError
from kit.install.overlay import new_overlay_folder, remove_overlay
from kit.run import script_runs

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="flock and PID namespaces as Linux has them")

# A second kit: it takes a scratch folder, says where it is and its pid, and holds it until its stdin closes.
SECOND_KIT = """
import os, sys
from kit.run import script_runs
with script_runs.scratch_dir() as path:
    print(path, os.getpid(), flush=True)
    sys.stdin.read()
"""


@pytest.fixture
def tmpdir_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR for this process and the kits it starts: a fresh folder."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def _second_kit(prefix: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([*prefix, sys.executable, "-c", SECOND_KIT], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def _dead_pid() -> int:
    """A pid no process of this namespace has."""
    for pid in range(30000, 5000, -1):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            continue
    pytest.skip("no free pid below 30000 here")


def _in_another_pid_namespace(pid: int) -> list[str] | None:
    """An ``unshare`` prefix that starts the command as ``pid`` of a new PID namespace, or None where it cannot."""
    if shutil.which("unshare") is None:
        return None
    for user in ([], ["--user", "--map-root-user"]):
        prefix = ["unshare", *user, "--pid", "--fork", "--mount-proc", "sh", "-c",
                  f'echo {pid - 1} > /proc/sys/kernel/ns_last_pid && "$0" "$@"']
        probe = subprocess.run([*prefix, sys.executable, "-c", "import os; print(os.getpid())"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == str(pid):
            return prefix
    return None


def test_a_users_folder_named_like_the_old_scratch_is_never_removed(tmpdir_here: Path) -> None:
    notes = tmpdir_here / "kit-9999999-my-notes"  # digits no pid can be (pid_max is at most 4194304)
    notes.mkdir()
    (notes / "todo.txt").write_text("mine\n")
    with script_runs.scratch_dir() as path:
        assert (notes / "todo.txt").is_file()  # was: removed, "pid" 9999999 not being alive
        assert path.parent == tmpdir_here / f"jax-kit-{os.getuid()}"
        assert (path / scratch.LOCK_NAME).is_file()
    assert not path.exists()
    assert (notes / "todo.txt").read_text() == "mine\n"


def test_a_live_kit_in_another_pid_namespace_keeps_its_scratch(tmpdir_here: Path) -> None:
    pid = _dead_pid()
    prefix = _in_another_pid_namespace(pid)
    if prefix is None:
        pytest.skip("unshare cannot make a PID namespace here")
    other = _second_kit(prefix)
    try:
        assert other.stdout is not None
        where, their_pid = other.stdout.readline().split()
        assert int(their_pid) == pid  # a pid that, seen from here, is nobody's
        with script_runs.scratch_dir():  # this kit's cleanup, as every run starts
            pass
        assert Path(where).is_dir()  # was: removed under the other kit
    finally:
        other.communicate("")
    assert not Path(where).exists()  # the other kit removed its own when it ended


def test_a_killed_kits_scratch_is_removed_by_the_next_and_a_folder_without_the_lock_stays(tmpdir_here: Path) -> None:
    other = _second_kit([])
    assert other.stdout is not None
    where = Path(other.stdout.readline().split()[0])
    other.send_signal(signal.SIGKILL)
    other.communicate()
    assert where.is_dir()  # nothing unwound in it
    unmarked = scratch.root() / "run-made-by-hand"
    unmarked.mkdir()
    with script_runs.scratch_dir():
        assert not where.exists()  # its lock went with the kit
        assert unmarked.is_dir()  # not the kit's: no lock file in it


def test_an_overlay_is_a_locked_scratch_folder(tmpdir_here: Path) -> None:
    folder = new_overlay_folder()
    assert folder.parent == scratch.root() and folder.name.startswith("commit-")
    assert scratch.remove_abandoned(scratch.root()) == []  # held by this kit
    remove_overlay(folder)
    assert not folder.exists()


def test_a_link_at_the_kits_folder_is_refused_and_nothing_written_through_it(tmpdir_here: Path,
                                                                           tmp_path: Path) -> None:
    theirs = tmp_path / "someone-elses"
    theirs.mkdir()
    (tmpdir_here / f"jax-kit-{os.getuid()}").symlink_to(theirs)
    with pytest.raises(StorageError) as refused:
        with script_runs.scratch_dir():
            pass
    assert refused.value.render().startswith(
        f"ERROR: the kit's scratch folder {tmpdir_here}/jax-kit-{os.getuid()} is a symbolic link: the kit makes it "
        "itself, with mode 700")
    assert "TIP: look at what it is, remove it" in refused.value.render()
    assert list(theirs.iterdir()) == []


def test_the_kits_folder_open_to_others_or_anothers_is_refused(tmpdir_here: Path) -> None:
    home = tmpdir_here / f"jax-kit-{os.getuid()}"
    home.mkdir()
    home.chmod(0o777)
    with pytest.raises(StorageError, match=r"is open to other users \(mode 777\)"):
        scratch.make("run")
    if os.getuid() != 0:
        return  # only root can give a folder to another user
    home.chmod(0o700)
    os.chown(home, 12345, -1)
    with pytest.raises(StorageError, match=r"belongs to another user \(uid 12345\)"):
        scratch.make("run")
    assert list(home.iterdir()) == []


def test_the_kits_folder_is_made_private(tmpdir_here: Path) -> None:
    home = scratch.root()
    assert home.stat().st_mode & 0o777 == 0o700
