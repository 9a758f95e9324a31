"""repro/inventory.py: an interpreter's Python, distributions and JAX report, called directly.

The kit's side (tests/test_install_existing.py) runs it in fake interpreters, old Pythons included; here
its pieces are checked where that misses them: which of two installs wins, broken metadata, a JAX that
exits or reports no device, and the file's promise to parse on any Python.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import tokenize
import types
from pathlib import Path

import pytest

from repro import inventory

SOURCE = Path(inventory.__file__)


def _dist(folder: Path, name: str | None, version: str) -> None:
    info = folder / f"{(name or 'broken').replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(("" if name is None else f"Name: {name}\n") + f"Version: {version}\n")


def _jax(monkeypatch: pytest.MonkeyPatch, **attributes: object) -> None:
    module = types.ModuleType("jax")
    for name, value in attributes.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, "jax", module)


@pytest.mark.parametrize("name, normal", [("Jax_Cuda12-Plugin", "jax-cuda12-plugin"), ("a..b__c", "a-b-c"),
                                          ("NumPy", "numpy")])
def test_names_compare_as_pep_503_says(name: str, normal: str) -> None:
    assert inventory._normal_name(name) == normal


def test_the_first_install_on_the_path_wins_as_for_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A user site or a PYTHONPATH folder shadowing site-packages: the version that imports is the one to report.
    _dist(tmp_path / "first", "Widget_Lib", "2.0")
    _dist(tmp_path / "second", "widget-lib", "1.0")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "first"), str(tmp_path / "second")])
    assert inventory._distributions() == {"widget-lib": "2.0"}


def test_a_leftover_folder_without_a_name_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dist(tmp_path, None, "1.0")
    _dist(tmp_path, "ok", "3.1")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert inventory._distributions() == {"ok": "3.1"}


def test_a_jax_that_reports_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    device = types.SimpleNamespace(device_kind="NVIDIA H200")
    _jax(monkeypatch, __version__="0.6.0", devices=lambda: [device, device], default_backend=lambda: "gpu")
    assert inventory._jax_report() == {"jax_version": "0.6.0", "backend": "gpu", "device_kind": "NVIDIA H200",
                                       "device_count": 2}


def test_a_jax_without_devices_or_version_still_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    _jax(monkeypatch, devices=lambda: [], default_backend=lambda: "cpu")
    assert inventory._jax_report() == {"jax_version": None, "backend": "cpu", "device_kind": None, "device_count": 0}


def test_a_jax_that_exits_while_starting_is_reported_not_obeyed(monkeypatch: pytest.MonkeyPatch) -> None:
    # SystemExit is no Exception: catching only Exception would let it end the inventory before its second line.
    def devices() -> None:
        raise SystemExit("no driver\nsecond line")

    _jax(monkeypatch, devices=devices)
    assert inventory._jax_report() == {"error": "SystemExit: no driver"}


def test_an_error_without_a_message_is_named_by_its_type(monkeypatch: pytest.MonkeyPatch) -> None:
    def devices() -> None:
        raise RuntimeError()

    _jax(monkeypatch, devices=devices)
    assert inventory._jax_report() == {"error": "RuntimeError"}


def test_main_prints_two_marked_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _jax(monkeypatch, devices=lambda: [], default_backend=lambda: "cpu")
    assert inventory.main() == 0
    first, second = capsys.readouterr().out.splitlines()
    facts = json.loads(first[len(inventory.PREFIX):])
    assert first.startswith(inventory.PREFIX)
    assert facts["supported"] is True
    assert facts["executable"] == sys.executable
    assert isinstance(facts["packages"], dict)
    assert "pytest" in facts["packages"]
    assert json.loads(second[len(inventory.PREFIX):])["backend"] == "cpu"


def test_an_unsupported_python_prints_only_its_facts(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # No package listing and no import of jax: on an old Python either could fail before the kit hears why.
    monkeypatch.setattr(inventory, "OLDEST", (99, 0))
    assert inventory.main() == 0
    [line] = capsys.readouterr().out.splitlines()
    facts = json.loads(line[len(inventory.PREFIX):])
    assert facts["supported"] is False
    assert "packages" not in facts


def test_the_file_parses_without_syntax_newer_than_python_3_5() -> None:
    # Above the version check the file must at least parse on old Pythons: no f-strings, no variable annotations,
    # no `from __future__ import annotations` (Python 3.7). feature_version stopped catching f-strings in 3.12,
    # so the tokens are read for them too.
    text = SOURCE.read_text(encoding="utf-8")
    tree = ast.parse(text, feature_version=(3, 5))
    futures = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and node.module == "__future__" for alias in node.names]
    assert futures == []
    f_strings = [token.string for token in tokenize.generate_tokens(io.StringIO(text).readline)
                 if tokenize.tok_name[token.type] == "FSTRING_START"
                 or (token.type == tokenize.STRING and "f" in token.string.split("'")[0].split('"')[0].lower())]
    assert f_strings == []
