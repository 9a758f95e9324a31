"""kit.install.bytecode: an overlay's bytecode from a cache filed by source; a release run's kept as it imports."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from fake_jax import fake_env, make_repo
from kit.install.bytecode import PYCACHE, compile_environment, fill_bytecode, release_bytecode_env
from kit.install.environment import REUSED, Environment
from kit.records import EXISTING

PYTHON = Path(sys.executable)


def overlay(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def pyc_of(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_a_second_overlay_copies_what_the_first_compiled(tmp_path: Path) -> None:
    files = {"jax/__init__.py": "from jax.core import X\n", "jax/core.py": "X = 1\n", "jax/new.py": "Y = 2\n"}
    cache = tmp_path / "cache"
    first = fill_bytecode(PYTHON, overlay(tmp_path / "a", files), cache)
    assert (first.copied, first.compiled, first.failed, first.problem) == (0, 3, 0, "")
    changed = {**files, "jax/core.py": "X = 3\n"}  # the next commit changed one file
    second = fill_bytecode(PYTHON, overlay(tmp_path / "b", changed), cache)
    assert (second.copied, second.compiled) == (2, 1)
    assert "2 files from the cache, 1 compiled now" in str(second)
    pyc = pyc_of(tmp_path / "b" / "jax" / "core.py").read_bytes()
    assert int.from_bytes(pyc[4:8], "little") == 0b11  # checked-hash (PEP 552): valid wherever the source is
    # The copied bytecode is what the import uses, and it runs the commit's source, not the first one's.
    done = subprocess.run([sys.executable, "-c", "import jax; print(jax.X)"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "b"), "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.stdout.strip() == "3", done.stderr


def test_a_cache_entry_that_does_not_match_its_source_is_recompiled_on_import(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fill_bytecode(PYTHON, overlay(tmp_path / "a", {"m.py": "V = 'right'\n"}), cache)
    (entry,) = cache.rglob("*.pyc")
    wrong = tmp_path / "w"
    fill_bytecode(PYTHON, overlay(wrong, {"m.py": "V = 'wrong'\n"}), tmp_path / "other")
    shutil.copyfile(pyc_of(wrong / "m.py"), entry)  # a corrupted cache: the wrong code under the right source's name
    fill_bytecode(PYTHON, overlay(tmp_path / "b", {"m.py": "V = 'right'\n"}), cache)
    done = subprocess.run([sys.executable, "-c", "import m; print(m.V)"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "b")})
    assert done.stdout.strip() == "right"  # the hash in the pyc is checked against the source on import


def test_linked_files_broken_files_and_a_missing_interpreter(tmp_path: Path) -> None:
    root = overlay(tmp_path / "o", {"ok.py": "A = 1\n", "broken.py": "def (:\n"})
    installed = overlay(tmp_path / "installed", {"lib.py": "B = 2\n"})
    os.symlink(installed / "lib.py", root / "lib.py")
    os.symlink(installed, root / "linked")
    made = fill_bytecode(PYTHON, root, tmp_path / "cache")
    assert (made.compiled, made.failed) == (1, 1)
    assert "1 left to the import" in str(made)
    assert not (installed / "__pycache__").exists()  # nothing written into the installed package
    gone = fill_bytecode(tmp_path / "no-python", root, tmp_path / "cache")
    assert gone.problem
    assert "the import compiles it" in str(gone)


def test_environment_bytecode_skips_tests_and_jax(tmp_path: Path) -> None:
    env = fake_env(tmp_path / "envs", make_repo(tmp_path / "jax"), "0.1.0")
    site = next(env.rglob("site-packages"))
    overlay(site, {"numpy/__init__.py": "N = 1\n", "numpy/tests/test_n.py": "T = 1\n"})
    assert compile_environment(env / "bin" / "python") == "bytecode for its packages in place"
    assert pyc_of(site / "numpy" / "__init__.py").exists()
    assert pyc_of(site / "jaxlib" / "version.py").exists()
    assert not pyc_of(site / "numpy" / "tests" / "test_n.py").exists()  # no check imports tests
    assert not list((site / "jax").rglob("*.pyc"))  # every overlay hides it behind its own
    assert compile_environment(tmp_path / "no-python").startswith("no bytecode written")


def test_a_release_run_keeps_the_bytecode_of_what_it_imports_in_its_environment(tmp_path: Path) -> None:
    """Only what the run imported is compiled and kept, under the environment's folder, never beside a source;
    the next run loads it (Python's own check against the source's time stamp)."""
    env = fake_env(tmp_path / "envs", make_repo(tmp_path / "jax"), "0.1.0")
    if not (env / "pyvenv.cfg").is_file():
        (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    site = next(env.rglob("site-packages"))
    overlay(site, {"numpy/__init__.py": "N = 1\n", "numpy/unused.py": "U = 1\n"})
    user = overlay(tmp_path / "user", {"helper.py": "H = 1\n"})  # a check's own module beside its script
    told = release_bytecode_env(Environment(env / "bin" / "python", {}, REUSED))
    assert told["PYTHONDONTWRITEBYTECODE"] == ""  # as here, a user may have it set: it would write nothing
    run = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **told, "PYTHONPATH": f"{site}{os.pathsep}{user}"}
    code = "import sys, numpy, helper; print(sys.modules['helper'].__cached__)"
    first = subprocess.run([sys.executable, "-c", code], env=run, cwd=user, capture_output=True, text=True, check=True)
    prefix = env / PYCACHE  # mirrors each source's absolute path
    kept = sorted(str(path.relative_to(prefix)) for folder in (site, user)
                  for path in (prefix / folder.relative_to(folder.anchor)).rglob("*.pyc"))
    tag = sys.implementation.cache_tag
    assert kept == [f"{site.relative_to(site.anchor)}/numpy/__init__.{tag}.pyc",  # numpy.unused was never imported
                    f"{user.relative_to(user.anchor)}/helper.{tag}.pyc"]
    assert not list(site.rglob("__pycache__"))
    assert not (user / "__pycache__").exists()
    second = subprocess.run([sys.executable, "-v", "-c", code], env=run, cwd=user, capture_output=True, text=True,
                            check=True)
    assert first.stdout == second.stdout
    assert f"matches {user / 'helper.py'}" in second.stderr  # loaded, not compiled
    python = env / "bin" / "python"
    assert release_bytecode_env(Environment(tmp_path / "not-a-venv" / "bin" / "python", {}, REUSED)) == {}
    assert release_bytecode_env(Environment(python, {}, EXISTING)) == {}  # a user's own: used as it is
    assert release_bytecode_env(Environment(python, {}, REUSED, pythonpath=(tmp_path,))) == {}  # an overlay's own
