"""No status that lies under faults in ``audit`` (issue 60): each case is a clean refusal or the right answer.

The batched audit runs each check in a fresh fork of one warm interpreter
(`repro.known_batch`): no check sees another's changes, and its exit status is
the one ``python SCRIPT`` gives. An installation where nothing could be
decided is refused before anything runs, or ends "nothing tested" with exit 5,
never "none of the N known problems found" with exit 0. docs/faults.md, "Audit".
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kit.config import load_matrix
from kit.errors import UsageError
from kit.install.environment import Prepared
from kit.known import batch, command
from kit.known.batch import audit_runs
from kit.known.catalogue import Entry, read_entry
from kit.known.command import audit_main
from kit.known.measured import Measurement, Presence
from repro.known_batch import run_one
from tests.fake_interpreter import RELEASE, fake_interpreter
from tests.faults.script_checks import prepared_here, script_matrix

ROOT = Path(__file__).resolve().parents[2]

ENTRY = """title = "t"
kind = "wrong-values"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_note = "none yet"
shows_on = ["cpu"]
measure_on = ["0.6.0"]
workaround = "cast it first"
"""


def entries(folder: Path, bodies: dict[str, str], extra: str = "") -> list[Entry]:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in bodies.items():
        (folder / f"{name}.py").write_text(body)
        text = ENTRY.replace('["cpu"]', '["cpu", "tpu"]') if "targets" in extra else ENTRY
        (folder / f"{name}.toml").write_text(text + extra)
    return [read_entry(folder / f"{name}.toml") for name in bodies]


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Prepared:
    prepared = prepared_here(tmp_path)
    monkeypatch.setattr(batch, "prepare", lambda *_a, **_k: prepared)
    return prepared


# Each check from the same state: one that patches a jnp function must not decide the next entry.

PATCHER = "import jax.numpy as jnp\njnp.arange = lambda n: [0] * n\nraise SystemExit(1)\n"
READER = "import jax.numpy as jnp\nimport sys\nsys.exit(0 if list(jnp.arange(3)) == [0, 1, 2] else 1)\n"


def test_a_check_that_patches_jnp_does_not_decide_the_next_entry(tmp_path: Path, here: Prepared) -> None:
    listed = entries(tmp_path / "known", {"a-patcher": PATCHER, "b-reader": READER})
    said = audit_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "audits", version="0.6.0")
    assert [m.outcome for m in said] == [Presence.PRESENT, Presence.ABSENT]  # was: PRESENT, PRESENT


@pytest.mark.parametrize("body", ["raise KeyboardInterrupt\n", "import sys\nsys.exit(256)\n",
                                  "import sys\nsys.exit(-1)\n", "import sys\nsys.exit(True)\n",
                                  "import os\nos._exit(7)\n", "raise SystemExit('bye')\n",
                                  "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
                                  "def (:\n", "import sys\nsys.exit(125)\n", "print('fine')\n"])
def test_a_batched_check_exits_exactly_as_python_script_does(tmp_path: Path, body: str) -> None:
    script = tmp_path / "check.py"
    script.write_text(body)
    alone = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=60).returncode
    assert run_one(str(script))["exit"] == alone


def test_a_check_ending_in_keyboard_interrupt_is_untested_batched_as_alone(tmp_path: Path, here: Prepared) -> None:
    listed = entries(tmp_path / "known", {"stopped": "raise KeyboardInterrupt\n"})
    [said] = audit_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "audits",
                        version="0.6.0")
    assert said.outcome is Presence.UNTESTED  # was: present (the batch read it as exit 1)
    assert "signal 2 (SIGINT)" in said.reason


def test_a_hanging_check_costs_its_timeout_once_and_is_not_run_again(
        tmp_path: Path, here: Prepared, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = entries(tmp_path / "known", {"hangs": "import time\ntime.sleep(600)\n", "quick": "print('ok')\n"},
                     extra="timeout_s = 3\n")
    monkeypatch.setattr(batch, "run_entry", lambda *_a, **_k: pytest.fail("a timed-out check was run again"))
    started = time.monotonic()
    said = audit_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "audits", version="0.6.0")
    assert time.monotonic() - started < 3 * 2 + 20  # once, not three times (was: the batch's, then alone, ...)
    assert [m.outcome for m in said] == [Presence.UNTESTED, Presence.ABSENT]
    assert "did not finish within 3 s" in said[0].reason


def test_a_backend_jax_cannot_start_makes_no_failure_a_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = prepared_here(tmp_path)
    jax_folder = prepared.environment.pythonpath[0] if prepared.environment else tmp_path
    (jax_folder / "jax" / "numpy.py").write_text("def arange(n):\n    raise RuntimeError("
                                                 "\"Unable to initialize backend 'tpu'\")\n")
    monkeypatch.setattr(batch, "prepare", lambda *_a, **_k: prepared)
    listed = entries(tmp_path / "known", {"fails": "import jax.numpy as jnp\njnp.arange(3)\n",
                                          "passes": "print('fine')\n"})
    said = audit_runs(script_matrix(tmp_path, listed[0].check), listed, print, tmp_path / "audits", version="0.6.0")
    assert [m.outcome for m in said] == [Presence.UNTESTED, Presence.UNTESTED]  # was: PRESENT for "fails"
    assert "Unable to initialize backend 'tpu'" in said[0].reason


# The audit's own refusals and answers (command.audit_main).

@pytest.fixture()
def catalogue(tmp_path: Path) -> Path:
    folder = tmp_path / "known"
    entries(folder, {"one": "print('x')\n", "two": "print('x')\n"})
    return folder


def matrix_at(tmp_path: Path) -> Any:
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    return type(matrix)(**{**matrix.__dict__, "results_dir": tmp_path / "reports" / "results"})


def fake_runs(monkeypatch: pytest.MonkeyPatch, outcomes: dict[str, str]) -> None:
    def audit_runs(matrix: Any, listed: Any, log: Any, records: Path, *, version: str = "", existing: Any = None,
                   ready: Any = lambda: None) -> list[Measurement]:
        ready()
        return [Measurement(version, "cpu", Presence(outcomes[e.id]), "the script exited 125: no jax here", "")
                for e in listed]

    monkeypatch.setattr(command, "audit_runs", audit_runs)


def test_an_audit_that_tested_nothing_exits_5_and_says_so(monkeypatch: pytest.MonkeyPatch, catalogue: Path,
                                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_runs(monkeypatch, {"one": "untested", "two": "untested"})
    assert audit_main(matrix_at(tmp_path), ["0.4.35"], print, catalogue) == 5  # was 0: "none ... found"
    out = capsys.readouterr().out
    assert "nothing tested: none of the 2 checks decided anything here" in out
    assert "none of the" not in out.replace("none of the 2 checks", "")
    assert json.loads((tmp_path / "reports" / "audit-jax-0.4.35-cpu.json").read_text())["nothing_tested"] is True


def test_the_console_ends_with_the_table_of_problems_present(monkeypatch: pytest.MonkeyPatch, catalogue: Path,
                                                             tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    fake_runs(monkeypatch, {"one": "present", "two": "absent"})
    assert audit_main(matrix_at(tmp_path), ["0.4.35"], print, catalogue) == 1
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("problem "))
    assert lines[head].split() == ["problem", "safe", "release", "workaround"]
    # "cast it first" was never run (no known/workarounds/one.py): a claim, not offered (issue 58, W2)
    assert lines[head + 2].split(None, 1) == ["one", "not measured  (workaround not measured)"]
    assert not any(line.startswith("two ") for line in lines[head:])


def test_audit_json_goes_to_stdout_with_its_schema(monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    fake_runs(monkeypatch, {"one": "present", "two": "absent"})
    assert audit_main(matrix_at(tmp_path), ["0.4.35", "--json"], print, catalogue) == 1
    captured = capsys.readouterr()
    said = json.loads(captured.out)
    assert said["schema"] == "jax-kit-audit/1" and said["present"] == ["one"]
    assert "report:" in captured.err


def test_two_audits_of_one_release_keep_two_reports(monkeypatch: pytest.MonkeyPatch, catalogue: Path,
                                                    tmp_path: Path) -> None:
    fake_runs(monkeypatch, {"one": "present", "two": "absent"})
    audit_main(matrix_at(tmp_path), ["0.4.35"], print, catalogue)
    audit_main(matrix_at(tmp_path), ["0.4.35", "--only", "two"], print, catalogue)
    reports = sorted(p.name for p in (tmp_path / "reports").glob("audit-*.json"))
    assert len(reports) == 2, reports  # was: the second overwrote the first
    assert json.loads((tmp_path / "reports" / "audit-jax-0.4.35-cpu.json").read_text())["present"] == ["one"]


def test_a_folder_where_the_json_goes_is_one_sentence_and_nothing_half_written(
        monkeypatch: pytest.MonkeyPatch, catalogue: Path, tmp_path: Path) -> None:
    from kit.cli import main

    fake_runs(monkeypatch, {"one": "present", "two": "absent"})
    reports = tmp_path / "reports"
    (reports / "audit-jax-0.4.35-cpu.json").mkdir(parents=True)
    monkeypatch.setattr(command, "catalogue_folder", lambda: catalogue)
    matrix = matrix_at(tmp_path)
    monkeypatch.setattr("kit.cli.load_matrix", lambda *_a, **_k: matrix, raising=False)
    with pytest.raises(IsADirectoryError):
        audit_main(matrix, ["0.4.35"], print, catalogue)
    assert sorted(p.name for p in reports.iterdir()) == ["audit-jax-0.4.35-cpu.json"]  # no .md, no .part
    from kit.errors import unusable_file

    fault = unusable_file(IsADirectoryError(21, "Is a directory", str(reports / "audit-jax-0.4.35-cpu.json")))
    assert fault is not None and fault.render().splitlines()[0].endswith(
        "audit-jax-0.4.35-cpu.json is a folder, where the kit writes a file: nothing was written there, and no file "
        "beside it was changed")
    assert main  # the command line renders it (kit.cli._main's OSError branch)


@pytest.mark.parametrize(("argv", "said"), [
    (["0.4.35", "--only", ",,"], "--only ',,' names nothing"),
    (["0.4.35", "--only", " , "], "names nothing"),
])
def test_audit_refuses_a_selection_that_names_nothing(catalogue: Path, tmp_path: Path, argv: list[str],
                                                      said: str) -> None:
    with pytest.raises(UsageError, match=said):  # was: "none of the 0 known problems found", exit 0
        audit_main(matrix_at(tmp_path), argv, print, catalogue)


def test_jax_platforms_off_cpu_is_refused_before_the_batch(catalogue: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAX_PLATFORMS", "tpu")
    monkeypatch.setattr(command, "audit_runs", lambda *_a, **_k: pytest.fail("nothing runs"))
    with pytest.raises(UsageError, match="JAX_PLATFORMS=tpu in the environment keeps JAX off cpu"):
        audit_main(matrix_at(tmp_path), ["0.4.35"], print, catalogue)
    with pytest.raises(UsageError, match="JAX_PLATFORMS=tpu"):  # the batch itself, as known --measure uses it
        batch.measured_runs(matrix_at(tmp_path), read_all(catalogue), print, tmp_path, version="0.4.35")


def read_all(folder: Path) -> list[Entry]:
    return [read_entry(p) for p in sorted(folder.glob("*.toml"))]


def test_a_release_too_old_for_the_target_is_refused_before_anything_is_installed(tmp_path: Path) -> None:
    folder = tmp_path / "known"
    entries(folder, {"chip": "print('x')\n"}, extra='targets = ["tpu:v5e:2x2"]\n')
    with pytest.raises(UsageError, match="jax 0.4.35 cannot compile for TPU v5e 2x2 .* from jax 0.5.3 on"):
        audit_main(matrix_at(tmp_path), ["0.4.35", "--target", "tpu:v5e:2x2"], print, folder)


@pytest.mark.parametrize(("packages", "jax_source", "argv", "said"), [
    ({"numpy": "2.1.3"}, None, [], "has no jax or jaxlib installed, so it holds no JAX to audit"),
    (RELEASE, "raise ImportError(\"cannot import name '_jax' from 'jaxlib'\")\n", [],
     "its JAX cannot start .*cannot import name '_jax'"),
    (RELEASE, None, ["--target", "tpu:v5e:2x2"], "has no compiler for TPU v5e 2x2 .*libtpu"),
])
def test_an_interpreter_where_nothing_can_be_tested_is_refused(
        tmp_path: Path, packages: dict[str, str], jax_source: str | None, argv: list[str], said: str) -> None:
    folder = tmp_path / "known"
    entries(folder, {"one": "print('x')\n"}, extra='targets = ["tpu:v5e:2x2"]\n' if argv else "")
    python = fake_interpreter(tmp_path / "venv", packages, jax_source=jax_source)
    with pytest.raises(UsageError, match=said):  # was: "none of the 1 known problems found", exit 0
        audit_main(matrix_at(tmp_path), ["--python", str(python), *argv], print, folder)


# A torn known/measured/ID.json is said, never read as "never measured".

def test_a_truncated_measured_file_is_said_in_known_audit_and_verify(catalogue: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from kit.known.command import known_main
    from kit.known.measured import save_measurements

    save_measurements(catalogue, "one", [Measurement("0.4.35", "cpu", Presence.PRESENT, "x")], "2026-12-06")
    path = catalogue / "measured" / "one.json"
    path.write_text(path.read_text()[:40])
    assert known_main(matrix_at(tmp_path), [], print, catalogue) == 0
    listed = capsys.readouterr().out
    assert "one.json cannot be read (" in listed and "known --measure --only one writes it again" in listed
    assert listed.count("    never measured") == 1  # "two" only (was: both)
    known_main(matrix_at(tmp_path), ["--json"], print, catalogue)
    assert "cannot be read" in json.loads(capsys.readouterr().out)[0]["measured_unreadable"]
    fake_runs(monkeypatch, {"one": "present", "two": "absent"})
    audit_main(matrix_at(tmp_path), ["0.4.35"], print, catalogue)
    found = json.loads((tmp_path / "reports" / "audit-jax-0.4.35-cpu.json").read_text())["findings"][0]
    assert found["measured_range_says"] == "unreadable" and "cannot be read" in found["measured_unreadable"]
    assert "cannot tell (its measurements cannot be read)" in capsys.readouterr().out


# The C locale (LC_ALL=C, PYTHONUTF8=0): nothing crashes on a non-ASCII character or folder name.

def test_the_console_in_the_c_locale_writes_what_it_cannot_encode_escaped(tmp_path: Path) -> None:
    import io

    from kit.inert_console import InertStream

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    InertStream(stream).write("choice-weighted: costs 10.2x the control (one Gumbel ar…) \u2265 ok\n")
    stream.flush()
    assert raw.getvalue() == b"choice-weighted: costs 10.2x the control (one Gumbel ar\\u2026) \\u2265 ok\n"


def test_a_report_naming_a_non_ascii_folder_read_in_the_c_locale_is_written_with_its_bytes(tmp_path: Path) -> None:
    from kit.atomic_files import atomic_write_texts

    folder = "caf\u00e9".encode().decode("ascii", "surrogateescape")  # as the C locale decodes the name
    atomic_write_texts({tmp_path / "audit.md": f"records under `{folder}/reports`\n"})
    assert (tmp_path / "audit.md").read_bytes() == "records under `caf\u00e9/reports`\n".encode()


def test_a_check_prints_utf_8_whatever_the_callers_locale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.run.child_processes import repro_env

    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("PYTHONUTF8", "0")
    monkeypatch.delenv("PYTHONIOENCODING", raising=False)
    env = repro_env()
    script = tmp_path / "check.py"
    script.write_text("print('\\u2026 caf\\u00e9')\n")  # the source is ASCII; what it prints is not
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True)
    assert done.returncode == 0 and done.stdout.decode() == "\u2026 caf\u00e9\n"  # was: UnicodeEncodeError, exit 1


# uv kept offline with an empty cache: the network's absence, not the release's answer.

OFFLINE_WORDS = ("Using Python 3.13.0 environment at: /x\nerror: No solution found when resolving dependencies\n"
                 "  cause: Because jax was not found in the cache and you require jax==0.4.35, we can conclude that "
                 "your requirements are unsatisfiable.\n\nhint: Packages were unavailable because the network was "
                 "disabled. When the network is disabled, registry packages may only be read from the cache.\n")


def test_an_offline_uv_with_an_empty_cache_is_exit_4_not_a_release_that_cannot_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.errors import IndexUnreachable
    from kit.exit_codes import EXIT_NETWORK
    from kit.install import envs

    monkeypatch.setenv("UV_OFFLINE", "1")
    speak = f"import sys; sys.stderr.write({OFFLINE_WORDS!r}); sys.exit(1)"
    with pytest.raises(IndexUnreachable) as refused:  # was: InstallFailed, a NOT INSTALLABLE record
        envs._run([sys.executable, "-c", speak])
    assert refused.value.exit_code == EXIT_NETWORK
    assert refused.value.render().splitlines()[0].startswith(
        "ERROR: uv is offline (UV_OFFLINE is set) and its cache lacks what the release installs (Because jax was not "
        "found in the cache")


def test_sigterm_is_said_in_one_sentence_and_exits_143(tmp_path: Path) -> None:
    body = ("import os, signal, sys, time\n"
            "from kit import cli\n"
            "def slow(*_a, **_k):\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    time.sleep(30)\n"
            "cli._main = slow\n"
            "sys.exit(cli.main(['audit', '0.4.35']))\n")
    done = subprocess.run([sys.executable, "-c", body], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 143
    assert done.stderr.strip() == ("stopped by SIGTERM: every record written before it is kept, and the run it "
                                   "stopped wrote none; the same command again starts it over")  # was: nothing


# HOME: a known listing needs no user cache, and a HOME that is not there is never made.

def at_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    for name in ("JAX_KIT_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)


def test_known_lists_the_catalogue_where_home_cannot_hold_a_cache(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.errors import ConfigError
    from kit.project import ProjectOptions, project_matrix

    home = tmp_path / "home"
    home.mkdir()
    (home / ".cache").write_text("a file where the cache folder goes: nothing can be made there, as in a read-only HOME")
    at_home(monkeypatch, home)
    project_matrix(ProjectOptions(None, None, ("known", "--json")), tmp_path)  # was: ConfigError
    with pytest.raises(ConfigError, match="cannot be made"):
        project_matrix(ProjectOptions(None, None, ("known", "--measure")), tmp_path)


def test_a_home_that_does_not_exist_is_not_made_at_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kit.errors import ConfigError
    from kit.project import ProjectOptions, project_matrix

    at_home(monkeypatch, tmp_path / "nonexistent" / "home")
    with pytest.raises(ConfigError, match="would be made under HOME=.*nonexistent/home, which is no folder here"):
        project_matrix(ProjectOptions(None, None, ("audit", "0.4.35")), tmp_path)
    assert not (tmp_path / "nonexistent").exists()  # was: nonexistent/home/.cache/jax-kit made
