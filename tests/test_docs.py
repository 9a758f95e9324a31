"""The docs keep up with the code: docs/architecture.md's Layout names every module, once."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _layout() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text()
    return text.split("## Layout", 1)[1].split("\n## ", 1)[0]


def _modules() -> list[Path]:
    return sorted(path for folder in ("kit", "repro") for path in (ROOT / folder).rglob("*.py")
                  if path.name != "__init__.py")


def test_the_layout_names_every_module_of_kit_and_repro() -> None:
    named = set(re.findall(r"`([a-z_]+)`", _layout()))
    missing = [str(path.relative_to(ROOT)) for path in _modules() if path.stem not in named]
    assert not missing, f"docs/architecture.md's Layout does not name: {missing}"


def test_the_layout_names_every_package_of_kit() -> None:
    layout = _layout()
    packages = sorted(p.name for p in (ROOT / "kit").iterdir() if (p / "__init__.py").is_file())
    assert [p for p in packages if f"`{p}/`" not in layout] == []
