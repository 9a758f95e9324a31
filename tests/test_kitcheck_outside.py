"""``from repro import kitcheck`` in a script of the user's own project, run by hand.

The script lives outside the kit's folder. Run by hand it finds ``repro`` the two ways docs/checks.md gives
(PYTHONPATH, or a ``.pth`` file in the environment's site-packages), prints its verdict and exits with the
protocol's code, writing no KIT_RESULT; the same file run by the kit writes KIT_RESULT as any check does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KIT_ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """\
from repro import kitcheck

samples = kitcheck.time_ms(lambda: sum(range(1000)), repeats=3, warmup=1)
kitcheck.finish("affected", "sum is slow", summary={"n": 1000}, metrics={"sum_ms": kitcheck.metric(samples)})
"""


def _project(tmp_path: Path) -> Path:
    """The user's own project: a folder far from the kit, with the check in a subfolder."""
    script = tmp_path / "myproject" / "checks" / "sum_check.py"
    script.parent.mkdir(parents=True)
    script.write_text(SCRIPT)
    return script


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KIT_RESULT")}
    return {**env, **extra}


def test_without_the_kit_on_the_path_the_import_fails_as_python_says(tmp_path: Path) -> None:
    """The control: nothing finds repro by chance (not the working folder, not the test runner's path)."""
    script = _project(tmp_path)
    done = subprocess.run([sys.executable, "-I", str(script)], cwd=script.parent, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1
    assert "ModuleNotFoundError: No module named 'repro'" in done.stderr


def test_run_by_hand_with_the_kit_on_pythonpath_it_prints_and_exits_with_the_verdict(tmp_path: Path) -> None:
    script = _project(tmp_path)
    done = subprocess.run([sys.executable, str(script)], cwd=script.parent, capture_output=True, text=True,
                          timeout=60, env=_clean_env(PYTHONPATH=str(KIT_ROOT)))
    assert (done.returncode, done.stdout) == (1, "AFFECTED: sum is slow\n"), done.stderr
    assert sorted(p.name for p in script.parent.iterdir()) == ["sum_check.py"]  # no result file left behind


def test_a_pth_file_in_site_packages_finds_it_too(tmp_path: Path) -> None:
    """What `echo KIT > SITE/jax-bisect-kit.pth` does, with a folder the interpreter treats as its site dir."""
    script = _project(tmp_path)
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "jax-bisect-kit.pth").write_text(f"{KIT_ROOT}\n")
    runner = f"import runpy, site, sys; site.addsitedir({str(site)!r}); sys.argv = [{str(script)!r}]; " \
             f"runpy.run_path({str(script)!r}, run_name='__main__')"
    done = subprocess.run([sys.executable, "-I", "-c", runner], cwd=script.parent, capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout) == (1, "AFFECTED: sum is slow\n"), done.stderr


@pytest.mark.parametrize("verdict, code", [("unaffected", 0), ("inconclusive", 125)])
def test_run_by_the_kit_it_writes_kit_result(tmp_path: Path, verdict: str, code: int) -> None:
    script = _project(tmp_path)
    script.write_text(SCRIPT.replace('"affected"', repr(verdict)))
    result = tmp_path / "result.json"
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env=_clean_env(PYTHONPATH=str(KIT_ROOT), KIT_RESULT=str(result)))
    assert done.returncode == code, done.stderr
    written = json.loads(result.read_text())
    assert written["verdict"] == verdict
    assert written["summary"] == {"n": 1000}
    assert len(written["metrics"]["sum_ms"]["samples"]) == 3

