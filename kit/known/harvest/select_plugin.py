"""A pytest plugin the harvest loads into a release's Python (``-p kit_harvest_select``): never imports the kit.

It keeps only the test functions the harvest asked for and writes each
case's outcome to a JSON file, so one pytest process runs every test of a
commit and the kit reads a result per test function, not a console.

``KIT_HARVEST_SELECT``: a JSON list of ``[path, class, name]``, one per test
function; a parametrised test's cases are generated methods whose
``__wrapped__`` chain ends at the function the file defines, so a case is
kept when its unwrapped name is the one asked for.
``KIT_HARVEST_RESULTS``: where the outcomes go: ``{"cases": [[path, class,
name, case, outcome, message]], "collect_errors": [[path, message]], "seconds": {path: s},
"interrupted": bool}``: ``seconds`` what each file's import and cases took (to share files out
among processes next time).

A test function's outcome is its first failing case's (`kit.known.harvest.pytest_run.summarised`),
so once a case failed the function's later cases are skipped unrun: they could not change it.
``KIT_HARVEST_COMPILE_CACHE`` (an audit's): JAX's persistent cache is made before the first test.
``KIT_HARVEST_ENTRIES`` (an audit's): a JSON file of a list of entries, each a list of ``[path,
class, name, message at the fix's parent]``; an entry is present once one of its tests fails as
at the parent (``kit_harvest_signatures``, copied beside this file), so a test whose every entry
is present by then is skipped unrun: it could not change their presence.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the release's pytest is imported by pytest itself; the kit's only for its types
    import pytest

_CASES: list[list[str]] = []
_COLLECT_ERRORS: list[list[str]] = []
_WANTED: set[tuple[str, str, str]] = set()
_KEPT: dict[str, tuple[str, str, str]] = {}
_INTERRUPTED: list[bool] = []
_FAILED: set[tuple[str, str, str]] = set()
_SECONDS: dict[str, float] = {}
AFTER_A_FAILURE = "not run: an earlier case of this test function failed, which is its outcome"
ENTRY_PRESENT = "not run: its entry's problem is present already (another of its tests fails as at the fix's parent)"
_SERVES: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
_PRESENT: set[int] = set()


def pytest_keyboard_interrupt(excinfo: object) -> None:
    _INTERRUPTED.append(True)  # Ctrl-C reached this pytest too: what it ran so far is not an outcome


def pytest_configure(config: pytest.Config) -> None:
    _WANTED.update(tuple(item) for item in json.loads(os.environ.get("KIT_HARVEST_SELECT", "[]")))
    for n, entry in enumerate(_read_json_file(os.environ.get("KIT_HARVEST_ENTRIES", ""))):
        for path, cls, name, parent_message in entry:
            _SERVES.setdefault((path, cls, name), []).append((n, parent_message))
    _narrow_unittest_collection()
    _share_parsed_sources()
    _read_source_only_for_messages()


def _read_json_file(path: str) -> list[list[list[str]]]:
    if not path:
        return []
    with open(path, encoding="utf-8") as given:
        return list(json.load(given))


_PARSED: dict[object, object] = {}


def _share_parsed_sources() -> None:
    """pytest parses a frame's whole source file to find the statement it shows, with a cache that lives for one
    failure's report only; a JAX failure's traceback runs through the same big modules (``lax.py``, ``pjit.py``)
    every time, so an audit's hundred failures spent half their run parsing them again (28 of 61 s on 0.5.3).
    One cache for the process: the same files, the same trees, the same report text. Only for a frame of a file
    on disk (pytest's key is then its path); code made from a string keeps the report's own cache. Where this
    pytest has no such parameter (another era's), nothing changes."""
    try:
        from _pytest._code import code
    except ImportError:
        return
    original = getattr(code.TracebackEntry, "getsource", None)
    if original is None or "astcache" not in inspect.signature(original).parameters:
        return

    def getsource(entry: object, astcache: dict[object, object] | None = None) -> object:
        path = getattr(getattr(getattr(entry, "frame", None), "code", None), "path", "")
        on_disk = astcache is not None and not isinstance(path, str)
        return original(entry, _PARSED if on_disk else astcache)

    setattr(code.TracebackEntry, "getsource", getsource)


_SOURCE_NEEDED = [True]


def _read_source_only_for_messages() -> None:
    """pytest shows each frame of a traceback with its statement, found by walking its file's whole syntax tree;
    only the last frame's statement shapes the lines the kit keeps (in the long style its indent is the ``E``
    lines'), the others' show code nobody reads. A file that fails to import walks the chain of JAX modules it
    imported: the walks were 32 of 53 s of an audit's second pytest on 0.5.3 (87 files failing to import). So a
    frame whose ``E`` lines do not depend on its source (not the last, or in the short style: collection errors,
    indent 4) is shown as pytest shows a frame without source (``???``); the kept lines stay the same. Where this
    pytest lacks the methods (another era's), nothing changes."""
    try:
        from _pytest._code import code
    except ImportError:
        return
    # pytest 9.1 renamed the class
    formatter = getattr(code, "ExceptionInfoFormatter", None) or getattr(code, "FormattedExcinfo", None)
    entry_repr = getattr(formatter, "repr_traceback_entry", None)
    entry_source = getattr(formatter, "_getentrysource", None)
    if entry_repr is None or entry_source is None:
        return

    def repr_traceback_entry(self: object, entry: object = None, excinfo: object = None) -> object:
        style = getattr(entry, "_repr_style", None) or getattr(self, "style", None)
        _SOURCE_NEEDED.append(excinfo is not None and style == "long")
        try:
            return entry_repr(self, entry, excinfo)
        finally:
            _SOURCE_NEEDED.pop()

    def getentrysource(self: object, entry: object) -> object:
        return entry_source(self, entry) if _SOURCE_NEEDED[-1] else None

    setattr(formatter, "repr_traceback_entry", repr_traceback_entry)
    setattr(formatter, "_getentrysource", getentrysource)


def _narrow_unittest_collection() -> None:
    """pytest makes an item of every method of a ``unittest.TestCase`` (JAX's tests: thousands per module, all
    dropped after); its loader is told to name only the methods asked for (by class name and unwrapped function
    name: `pytest_collection_modifyitems` still keeps exactly the asked ones), so a big module costs its import."""
    import unittest

    asked: dict[str, set[str]] = {}
    for _path, cls, name in _WANTED:
        asked.setdefault(cls, set()).add(name)
    listed = unittest.TestLoader.getTestCaseNames

    def names(loader: unittest.TestLoader, case_class: type) -> list[str]:
        wanted = asked.get(case_class.__name__, set())
        return [name for name in listed(loader, case_class) if name in wanted or _defined_as(case_class, name) in wanted]

    setattr(unittest.TestLoader, "getTestCaseNames", names)


def _defined_as(case_class: type, name: str) -> str:
    """The name of the function a (generated) method unwraps to: absl's parameterized cases wrap the defined one."""
    try:
        return str(getattr(inspect.unwrap(getattr(case_class, name)), "__name__", name))
    except (AttributeError, ValueError):  # no such attribute, or a __wrapped__ cycle
        return name


def _asked(item: pytest.Item) -> tuple[str, str, str] | None:
    path = item.nodeid.split("::", 1)[0]
    owner = getattr(item, "cls", None)
    cls = owner.__name__ if owner is not None else ""
    function = getattr(item, "function", None) or getattr(item, "obj", None)
    name = getattr(inspect.unwrap(function), "__name__", "") if function is not None else ""
    for candidate in (name, getattr(item, "originalname", ""), item.name):
        if (path, cls, candidate) in _WANTED:
            return path, cls, candidate
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        asked = _asked(item)
        if asked is None:
            dropped.append(item)
        else:
            _KEPT[item.nodeid] = asked
            kept.append(item)
    items[:] = kept
    config.hook.pytest_deselected(items=dropped)


def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("KIT_HARVEST_COMPILE_CACHE"):
        _make_the_compile_cache_now()


def _make_the_compile_cache_now() -> None:
    """JAX makes its persistent cache's object at a process's first compile, inside whichever test compiles first,
    and JAX's harness fails a test under which that object changed ("Test changed the compilation cache object"):
    made before the first test, it is one object for all of them (a test that resets it still fails, and its entry
    runs again without the cache: `kit.known.harvest.reused_compiles`). Where this JAX has no such function (or
    no test imported JAX), nothing is done."""
    make = getattr(sys.modules.get("jax._src.compilation_cache"), "_initialize_cache", None)
    if callable(make):
        try:
            make()
        except Exception:  # noqa: BLE001 -- the cache is only a speed: its first compile makes it as before
            pass


_COLLECTING: dict[str, float] = {}


def pytest_collectstart(collector: pytest.Collector) -> None:
    _COLLECTING[collector.nodeid] = time.perf_counter()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    started = _COLLECTING.pop(report.nodeid, None)
    if started is not None and "::" not in report.nodeid and report.nodeid.endswith(".py"):
        _SECONDS[report.nodeid] = _SECONDS.get(report.nodeid, 0.0) + time.perf_counter() - started  # its import
    if report.failed:
        _COLLECT_ERRORS.append([report.nodeid, _message(report)])


def pytest_runtest_setup(item: pytest.Item) -> None:
    asked = _KEPT.get(item.nodeid)
    if asked is None:
        return
    serves = _SERVES.get(asked)
    if asked in _FAILED or (serves and all(n in _PRESENT for n, _parent in serves)):
        import pytest

        pytest.skip(AFTER_A_FAILURE if asked in _FAILED else ENTRY_PRESENT)


def _failed_first(asked: tuple[str, str, str], message: str) -> None:
    """A test function's first failure, its outcome: the entries it shows present as at the fix's parent."""
    serves = _SERVES.get(asked)
    if serves:
        from kit_harvest_signatures import same_problem  # copied beside this file where entries are given

        _PRESENT.update(n for n, parent_message in serves if same_problem(parent_message, message))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    asked = _KEPT.get(report.nodeid)
    if asked is None:
        return
    _SECONDS[asked[0]] = _SECONDS.get(asked[0], 0.0) + float(getattr(report, "duration", 0.0) or 0.0)
    if report.when == "call" or (report.when == "setup" and (report.failed or report.skipped)) \
            or (report.when == "teardown" and report.failed):
        outcome = "error" if report.when != "call" and report.failed else report.outcome
        message = _message(report)
        _CASES.append([*asked, report.nodeid, outcome, message])
        if outcome in ("failed", "error") and asked not in _FAILED:
            _FAILED.add(asked)
            _failed_first(asked, message)


def _message(report: pytest.TestReport | pytest.CollectReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])[:400]
    text = str(getattr(report, "longreprtext", "") or "")
    lines = [line for line in text.splitlines() if line.startswith("E ")] or text.splitlines()[-1:]
    return "\n".join(lines[-6:])[:1000]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("KIT_HARVEST_RESULTS")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"cases": _CASES, "collect_errors": _COLLECT_ERRORS, "seconds": _SECONDS,
                       "interrupted": bool(_INTERRUPTED)}, out)
