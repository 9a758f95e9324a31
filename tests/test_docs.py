"""The docs keep up with the code: docs/architecture.md's module map is what scripts/module-map.py writes, every
page under docs/ is listed in docs/README.md, and the README stays one page whose links lead somewhere."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("module_map", ROOT / "scripts" / "module-map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _modules() -> list[Path]:
    return sorted(path for folder in ("kit", "repro") for path in (ROOT / folder).rglob("*.py")
                  if path.name != "__init__.py")


def test_the_committed_module_map_is_what_the_script_writes() -> None:
    script = _script()
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert script.with_map(text, script.module_map()) == text, "run python scripts/module-map.py and commit the map"


def test_the_map_names_every_module_with_a_sentence() -> None:
    written = _script().module_map()
    missing = [str(path.relative_to(ROOT)) for path in _modules() if f"* `{path.stem}`: " not in written]
    assert missing == []
    assert not re.search(r"^\* `\w+`: $", written, re.M), "a module without a docstring: say what it answers"


def test_the_map_follows_a_new_module(tmp_path: Path) -> None:
    # The check can fail: a module added to the tree shows in the map, with its docstring's first sentence.
    package = tmp_path / "kit" / "fresh"
    package.mkdir(parents=True)
    (tmp_path / "repro").mkdir()
    (package / "__init__.py").write_text('"""What is fresh."""\n')
    (package / "thing.py").write_text('"""Where a thing is made,\nover two lines. Then more."""\n')
    assert _script().module_map(tmp_path) == ("**`kit/fresh/`**: What is fresh.\n\n"
                                              "* `thing`: Where a thing is made, over two lines. Then more.\n")


def test_every_page_of_docs_is_listed_in_its_index() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert [page for page in pages if f"]({page})" not in index] == []


def test_the_readme_is_one_page_and_its_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    for folder, text in [(ROOT, readme)] + [(ROOT / "docs", p.read_text(encoding="utf-8"))
                                            for p in sorted((ROOT / "docs").glob("*.md"))]:
        prose = re.sub(r"(`+).*?\1", "", text, flags=re.S)  # a link inside a code span is an example, not a link
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
            if not target.startswith(("http://", "https://")):
                assert (folder / target).exists(), f"a link to {target} from {folder}: no such file"
