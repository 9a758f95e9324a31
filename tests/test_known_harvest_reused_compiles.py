"""An audit's compiles reused from the last audit, only where that cannot change an answer (issue 59)."""

from __future__ import annotations

import ast
import base64
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Sequence

import pytest

from kit.history.source import History
from kit.install import Environment
from kit.known.harvest import compiling_tests, kept_tests, release_runs, reused_compiles
from kit.known.harvest.changed_tests import TestFunction, parsed_tests
from kit.known.harvest.pytest_run import SideRun
from kit.known.harvest.release_runs import RangeEntry, probe_release
from kit.known.measured import Presence
from tests.git_repo import commit as _commit
from tests.git_repo import git as _git

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("body", "looks"), [
    ("with jtu.count_jit_compilation_cache_miss() as count:\n    f(1)\nself.assertEqual(count(), 1)", True),
    ("with self.assertWarnsRegex(UserWarning, 'constants'):\n    f(x)", True),
    ("text = jax.jit(f).lower(x).compile().as_text()\nself.assertNotIn('all-gather', text)", True),
    ("with config.log_compiles(True), self.assertLogs(level='WARNING'):\n    f(1)", True),
    ("self.assertIn('xla_dump_to', os.environ['XLA_FLAGS'])", True),  # a flag named in a string
    ("out = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True)", True),  # a child inherits it
    ("start = time.perf_counter()\nf(x)\nself.assertLess(time.perf_counter() - start, 1.0)", True),  # a clock
    ("with contextlib.redirect_stderr(io.StringIO()) as err:\n    f(x)", True),
    ("register_event_duration_secs_listener(seen.append)", True),
    # JAX's helpers that jit and compare, or lower only, and plain numerics: not compiling itself
    ("self._CompileAndCheck(jnp.heaviside, args_maker)", False),
    ("ir = jax.jit(f).lower(1.).compiler_ir('stablehlo')\nself.assertIn('loc(', str(ir))", False),
    ("self.assertAllClose(jnp.linalg.slogdet(x)[1], expected, rtol=1e-6)", False),
    ("self.assertAllClose(jax.nn.log_softmax(x), expected)", False),
    ("with jax.ensure_compile_time_eval():\n    y = jnp.ones(3)", False),
])
def test_a_test_looks_at_compiling_where_its_source_names_what_sees_the_compile(body: str, looks: bool) -> None:
    # The one way reused compiles could turn a failure into a pass: a test that sees the compile itself.
    function = ast.parse("def test_x(self):\n" + "".join(f"    {line}\n" for line in body.splitlines())).body[0]
    assert compiling_tests.looks_at_compiling(function) is looks


def test_what_a_test_calls_in_its_file_and_its_class_set_up_count_too() -> None:
    source = ("def _hlo(f, x):\n    return jax.jit(f).lower(x).compile().as_text()\n\n"
              "def _close(a, b):\n    np.testing.assert_allclose(a, b)\n\n"
              "class A(jtu.JaxTestCase):\n"
              "  def _no_gather(self, f):\n    self.assertNotIn('all-gather', _hlo(f, 1))\n"
              "  def test_calls_a_method(self):\n    self._no_gather(jnp.sin)\n"
              "  def test_calls_a_function(self):\n    _hlo(jnp.sin, 1)\n"
              "  def test_plain(self):\n    _close(jnp.sin(0.), 0.)\n\n"
              "@jtu.with_config(jax_log_compiles=True)\nclass B(jtu.JaxTestCase):\n"
              "  def test_plain_but_logged(self):\n    _close(jnp.sin(0.), 0.)\n")
    nodes, module = parsed_tests(source, "tests/x_test.py")
    said = {test.name: compiling_tests.looks_at_compiling(node, module) for test, node in nodes.items()}
    # test_calls_a_method reaches _hlo through _no_gather; test_plain's helper reads nothing of the compile
    assert said == {"test_calls_a_method": True, "test_calls_a_function": True, "test_plain": False,
                    "test_plain_but_logged": True}


CACHE_SHY = "import base64, os\n\ndef test_fix():\n" \
            "    assert os.environ.get(base64.b64decode('SkFYX0NPTVBJTEFUSU9OX0NBQ0hFX0RJUg==').decode()) is None\n"
"""A test that fails with reused compiles only, its source silent on them (as JAX's harness fails a test under which
the cache object changed)."""
CACHE_READER = "import os\n\ndef test_reads():\n    assert os.environ.get('JAX_COMPILATION_CACHE_DIR'), 'no cache'\n"
"""A test that passes with reused compiles only, and says so in its source: it never runs with them."""
PLAIN = "def test_plain():\n    assert True\n"


def _released(tmp_path: Path) -> Path:
    """A clone of "JAX" with a release, jax-v0.1.0, and pytest settings."""
    repo = tmp_path / "jax"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "Start", {"pyproject.toml": "[tool.pytest.ini_options]\n", "jax/x.py": "v = 1\n"})
    _git(repo, "tag", "jax-v0.1.0")
    return repo


@pytest.fixture
def history(tmp_path: Path) -> tuple[History, str]:
    repo = _released(tmp_path)
    fix = _commit(repo, "Fix a.", {"tests/shy_test.py": CACHE_SHY, "tests/reader_test.py": CACHE_READER,
                                  "tests/plain_test.py": PLAIN})
    return History(repo, "made by the test"), fix


def _entries(fix: str) -> list[RangeEntry]:
    return [RangeEntry("harvest-shy", fix, (TestFunction("tests/shy_test.py", "", "test_fix"),), ("E   ValueError",)),
            RangeEntry("harvest-reader", fix, (TestFunction("tests/reader_test.py", "", "test_reads"),),
                       ("E   AssertionError: no cache",)),
            RangeEntry("harvest-plain", fix, (TestFunction("tests/plain_test.py", "", "test_plain"),),
                       ("E   ValueError",))]


def test_every_answer_is_a_run_without_reused_compiles_where_they_could_change_it(
        history: tuple[History, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone, fix = history
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "the-callers"))  # never passed on
    monkeypatch.setattr(kept_tests, "kept_home", lambda _environment: tmp_path / "kept")
    runs: list[tuple[list[str], bool]] = []
    real = release_runs.run_side

    def spied(environment: Environment, workdir: Path, tests: Sequence[TestFunction], **kwargs: object) -> SideRun:
        runs.append((sorted(t.name for t in tests), kwargs.get("compile_cache") is not None))
        return real(environment, workdir, tests, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(release_runs, "run_side", spied)
    environment = Environment(Path(sys.executable), {}, "existing")
    first = probe_release(clone, environment, "0.1.0", _entries(fix), shared=True, compile_cache=tmp_path / "cache")
    # shy failed with the cache and ran again without it (its answer: it passes); reader never ran with it
    assert [p.outcome for p in first] == [Presence.ABSENT, Presence.PRESENT, Presence.ABSENT]
    assert sorted(runs[:2]) == [(["test_fix", "test_plain"], True), (["test_reads"], False)]  # side by side
    assert runs[2:] == [(["test_fix"], False)]
    kept = tmp_path / "kept" / reused_compiles.NOT_PASSING
    assert json.loads(kept.read_text()) == ["harvest-reader", "harvest-shy"]  # what did not pass at first
    # The next audit runs the entries that did not pass without the cache from the start, beside the others.
    kept.write_text(json.dumps(["harvest-shy", "harvest-reader", "harvest-gone"]))
    runs.clear()
    second = probe_release(clone, environment, "0.1.0", _entries(fix), shared=True, compile_cache=tmp_path / "cache")
    assert [p.outcome for p in second] == [p.outcome for p in first]
    assert sorted(runs) == [(["test_fix", "test_reads"], False), (["test_plain"], True)]
    assert json.loads(kept.read_text()) == ["harvest-gone", "harvest-reader"]  # an entry not audited stays kept


def test_without_a_cache_folder_every_run_is_without_one(history: tuple[History, str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    clone, fix = history
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "the-callers"))
    probes = probe_release(clone, Environment(Path(sys.executable), {}, "existing"), "0.1.0", _entries(fix))
    assert [p.outcome for p in probes] == [Presence.ABSENT, Presence.PRESENT, Presence.ABSENT]


def test_a_cache_grown_past_its_bound_is_emptied_before_the_audit(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "compile-cache" / "cpu-jaxlib-0.4.35-abc"
    folder.mkdir(parents=True)
    (folder / "entry").write_bytes(b"x" * 64)
    monkeypatch.setattr(reused_compiles, "compile_cache_dir", lambda *_args: folder)
    environment = Environment(Path(sys.executable), {"jaxlib": "0.4.35"}, "existing")
    assert reused_compiles.cache_folder(tmp_path, environment) == folder and (folder / "entry").is_file()
    monkeypatch.setattr(reused_compiles, "LARGEST_BYTES", 63)
    assert reused_compiles.cache_folder(tmp_path, environment) == folder and not (folder / "entry").exists()
    said = reused_compiles.cache_env(folder)
    assert said["JAX_COMPILATION_CACHE_DIR"] == str(folder.absolute())
    assert said["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0" and reused_compiles.cache_env(None) == {}


def test_the_plugin_makes_jaxs_cache_before_the_first_test_where_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Made lazily inside the first test that compiles, JAX's harness failed that test ("Test changed the
    # compilation cache object"): three of the 0.11.0 audit's tests, each time.
    spec = importlib.util.spec_from_file_location("plugin_under_test", ROOT / "kit/known/harvest/select_plugin.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    made: list[bool] = []
    monkeypatch.setitem(sys.modules, "jax._src.compilation_cache",
                        types.SimpleNamespace(_initialize_cache=lambda: made.append(True)))
    monkeypatch.delenv("KIT_HARVEST_COMPILE_CACHE", raising=False)
    plugin.pytest_collection_finish(None)
    assert made == []
    monkeypatch.setenv("KIT_HARVEST_COMPILE_CACHE", "1")
    plugin.pytest_collection_finish(None)
    assert made == [True]
    monkeypatch.setitem(sys.modules, "jax._src.compilation_cache", types.SimpleNamespace())  # another era's JAX
    plugin.pytest_collection_finish(None)
    assert made == [True]


def test_the_entries_of_a_program_jax_could_not_read_are_dropped_for_the_next_audit_to_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # JAX never replaces an entry it cannot read: every later audit failed those tests and ran them twice.
    repo = _released(tmp_path)
    said = "Error reading persistent compilation cache entry for 'jit_stage': error: Error -3 while decompressing"
    hidden = base64.b64encode(said.encode()).decode()  # its source silent on the cache: it runs with it
    fix = _commit(repo, "Fix a.", {"tests/a_test.py": "import base64, os\n\ndef test_a():\n    if os.environ.get("
                                  "base64.b64decode('SkFYX0NPTVBJTEFUSU9OX0NBQ0hFX0RJUg==').decode()):\n"
                                  f"        raise UserWarning(base64.b64decode('{hidden}').decode())\n"})
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("jit_stage-0e4d-cache", "jit_stage-0e4d-atime", "jit_other-77aa-cache"):
        (cache / name).write_bytes(b"garbage")
    monkeypatch.setattr(kept_tests, "kept_home", lambda _environment: tmp_path / "kept")
    entry = RangeEntry("harvest-a", fix, (TestFunction("tests/a_test.py", "", "test_a"),), ("E   ValueError",))
    probes = probe_release(History(repo, "made by the test"), Environment(Path(sys.executable), {}, "existing"),
                           "0.1.0", [entry], shared=True, compile_cache=cache)
    assert probes[0].outcome is Presence.ABSENT  # its run without the cache
    assert sorted(path.name for path in cache.iterdir()) == ["jit_other-77aa-cache"]
    assert reused_compiles.drop_unreadable(tmp_path / "gone", [said]) == []  # a folder gone: nothing, no error


def test_a_file_that_does_not_import_with_reused_compiles_runs_again_from_the_same_copy_without_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The review's case: a later fix's copy failing to import with the cache only (a damaged entry read at import)
    # was retried from the entry's own copy, which does not import on the release: untested where a run without the
    # cache says absent.
    repo = _released(tmp_path)
    test = "def test_t():\n    assert 1 == 1\n"
    fix = _commit(repo, "Fix a.", {"tests/a_test.py": "import not_there\n" + test})
    later = _commit(repo, "Fix b.", {"tests/a_test.py": "import os\nassert not os.environ.get("
                                    "'JAX_COMPILATION_CACHE_DIR')\n" + test})
    monkeypatch.setattr(kept_tests, "kept_home", lambda _environment: tmp_path / "kept")
    t = TestFunction("tests/a_test.py", "", "test_t")
    entries = [RangeEntry("harvest-a", fix, (t,), ("E   AssertionError",)),
               RangeEntry("harvest-b", later, (t,), ("E   AssertionError",))]
    answers = [[(p.outcome, p.reason) for p in probe_release(
        History(repo, "made by the test"), Environment(Path(sys.executable), {}, "existing"), "0.1.0", entries,
        shared=True, compile_cache=cache)] for cache in (None, tmp_path / "cache")]
    assert answers[0] == answers[1]
    assert answers[1][0] == (Presence.ABSENT, f"fix copy (the fix's test in {later[:10]}'s copy of its file): passes")


def test_no_cache_where_its_folder_cannot_be_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "compile-cache").write_text("a file where the folder would be")
    monkeypatch.setattr(reused_compiles, "compile_cache_dir", lambda *_args: tmp_path / "compile-cache" / "cpu-x")
    assert reused_compiles.cache_folder(tmp_path, Environment(Path(sys.executable), {}, "existing")) is None
