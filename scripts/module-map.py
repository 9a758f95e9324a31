"""Write docs/architecture.md's module map from the code: each module of kit/ and repro/ with its docstring's first
sentence (the one question the module answers), a folder at a time.

    python scripts/module-map.py           # rewrite the map in docs/architecture.md
    python scripts/module-map.py --check   # exit 1 when the committed map is not what the code says

The map sits between two marker lines in docs/architecture.md; everything outside them is written by hand.
tests/test_docs.py holds the committed map to what this script writes.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- module map: written by scripts/module-map.py from each module's docstring; do not edit by hand -->"
END = "<!-- end of the module map -->"
FOLDERS = ("repro", "kit")


def first_sentence(path: Path) -> str:
    """The module docstring's first line, carried on to the end of its sentence where the line breaks mid-way."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    taken: list[str] = []
    for line in doc.splitlines():
        if not line.strip():
            break
        taken.append(line.strip())
        if line.rstrip().endswith((".", ":", "?", ")")):
            break
    return " ".join(taken).rstrip(":")


def module_map(root: Path = ROOT) -> str:
    """The map: a heading per package (its ``__init__``'s sentence), a line per module beneath it."""
    lines: list[str] = []
    for folder in FOLDERS:
        packages = sorted({p.parent for p in (root / folder).rglob("*.py")})
        for package in packages:
            name = package.relative_to(root).as_posix()
            init = package / "__init__.py"
            about = first_sentence(init) if init.is_file() else "a folder of modules put on sys.path, not a package."
            lines += ["", f"**`{name}/`**: {about}", ""]
            for module in sorted(package.glob("*.py")):
                if module.name != "__init__.py":
                    lines.append(f"* `{module.stem}`: {first_sentence(module)}")
    return "\n".join(lines[1:]) + "\n"


def with_map(text: str, written: str) -> str:
    """``text`` (docs/architecture.md) with what stands between the markers replaced by ``written``."""
    head, _, rest = text.partition(BEGIN + "\n")
    _, found, tail = rest.partition(END)
    if not found:
        raise SystemExit(f"{DOC}: the markers {BEGIN!r} and {END!r} are missing")
    return f"{head}{BEGIN}\n{written}{END}{tail}"


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    wanted = with_map(text, module_map())
    if "--check" in argv:
        if wanted != text:
            print(f"{DOC} is not what scripts/module-map.py writes: run it and commit the map", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
