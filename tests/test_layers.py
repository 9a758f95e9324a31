"""Imports run down the layers of kit/ (docs/architecture.md): never up, never sideways.

Every module under kit/ is parsed (not imported) and each of its imports,
top-level or inside a function, is checked against the layer table below. A
new module must be placed in the table: the test names it until it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.source_trees import nodes

KIT = Path(__file__).resolve().parent.parent / "kit"

# Lower numbers are lower layers; a module may import its own layer only inside its own package
# (the bottom layer's modules are one foundation and may import each other, and so may the entry's).
LAYERS: dict[str, int] = {
    # 0: what everything reads: errors, the kit's exit codes, config, the record store and currency,
    # whole-file writes, sample statistics, one HTTP helper, one TOML table checker, JAX's git history,
    # how much of a check's text is kept, a check's extra packages, what a path the user gave is.
    "kit": 0, "kit.errors": 0, "kit.exit_codes": 0, "kit.config": 0, "kit.check_settings": 0, "kit.records": 0, "kit.atomic_files": 0,
    "kit.metrics": 0, "kit.http": 0, "kit.toml_tables": 0, "kit.json_types": 0, "kit.history": 0, "kit.text_bounds": 0,
    "kit.requirements": 0, "kit.user_paths": 0, "kit.layout": 0, "kit.arguments": 0,
    "kit.user_cache": 0, "kit.package_files": 0, "kit.project": 0,
    "kit.file_names": 0, "kit.markdown_text": 0, "kit.log_events": 0, "kit.scratch": 0,
    "kit.inert_console": 0, "kit.reproduce_line": 0, "kit.wording": 0,
    "kit.targets": 0,  # the backends and the chips compiled for without them: one named table
    "kit.checks": 0,  # the built-in checks, one module each: what the kit asks of a check instead of its name
    "kit.hlo": 0,  # compiled HLO text read into each op's fingerprint (stdlib only: every layer may read it)
    "kit.install": 1,  # how does this run get its Python
    "kit.launch": 1,  # how N processes of one program start: local, srun, ssh (pure: commands and environments)
    "kit.run": 2,  # run one check in one environment -> one record
    "kit.slurm": 2,  # SLURM job arrays, as both drivers submit and follow them
    "kit.matrix": 3, "kit.bisect": 3, "kit.triage": 3,  # the drivers; they do not import each other
    "kit.explain": 3,  # which op of a program is not split, per release (a driver too)
    "kit.reduce": 3,  # the smallest program that still shows a problem, and its issue text (a driver too)
    # ... which judges runs as triage does: its outcome reader is stdlib only, the foundation's to share.
    "kit.triage.block_outcome": 0,
    "kit.known": 3,  # the catalogue of known problems, its measured ranges and the audit (a driver too)
    # ... whose entries and measured ranges are read by the report too: files only, the foundation.
    "kit.known.catalogue": 0, "kit.known.measured": 0, "kit.known.listing": 0, "kit.known.signs": 0,
    "kit.cli": 4, "kit.commands": 4, "kit.__main__": 4,  # the entry point: it may import every driver
}
BOTTOM, ENTRY = 0, 4

# kit/ may import only these modules of repro/ (standard library only: they import in nox's process).
REPRO_FOR_KIT = {"repro", "repro.parameters", "repro.contract", "repro.environment", "repro.compile_cache",
                 "repro.target_export", "repro.hlo_text", "repro.known_target",
                 "repro.program_watch"}


def _module(path: Path) -> str:
    """kit/matrix/sweep.py -> kit.matrix.sweep (from the last folder named kit)."""
    parts = path.with_suffix("").parts
    parts = parts[len(parts) - 1 - parts[::-1].index("kit"):]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _from_module(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module a ``from ... import`` statement of ``path`` reads (``from .. import x``: the package)."""
    if not node.level:
        return node.module or ""
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in the file."""
    found = []
    for node in nodes(path):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _from_module(node, path)
            # `from . import records` imports the module kit.records, not a name of kit.
            found += [(node.lineno, f"{target}.{alias.name}" if not node.module else target) for alias in node.names]
    return found


def _layer(module: str) -> tuple[str, int] | None:
    """The table's entry for ``module``: its longest prefix in LAYERS."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return prefix, LAYERS[prefix]
    return None


def _group(module: str) -> str:
    """A kit module's package for the sideways rule: kit.matrix.sweep -> kit.matrix."""
    entry = _layer(module)
    return entry[0] if entry else module


MODULES = sorted(KIT.rglob("*.py"))


def _violations(path: Path) -> list[str]:
    """Each import of the module that runs up or sideways, in one line."""
    here = _module(path)
    placed = _layer(here)
    assert placed is not None, f"{here} is in no layer: add it (or its package) to LAYERS in tests/test_layers.py"
    mine, level = placed
    wrong = []
    for line, target in _imports(path):
        if target == "repro" or target.startswith("repro."):
            if target not in REPRO_FOR_KIT:
                wrong.append(f"line {line}: {target} (kit imports only repro's stdlib modules {sorted(REPRO_FOR_KIT)})")
            continue
        if not (target == "kit" or target.startswith("kit.")):
            continue
        entry = _layer(target)
        assert entry is not None, f"{here} line {line} imports {target}, which is in no layer"
        theirs, their_level = entry
        if their_level > level:
            wrong.append(f"line {line}: {target} is above {here} (layer {their_level} > {level})")
        elif their_level == level and level not in (BOTTOM, ENTRY) and theirs != mine:
            wrong.append(f"line {line}: {target} is beside {here} (both layer {level}, different packages)")
    return wrong


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(KIT.parent)) for p in MODULES])
def test_imports_run_down_the_layers(path: Path) -> None:
    wrong = _violations(path)
    assert not wrong, f"{_module(path)} imports against the layers:\n" + "\n".join(wrong)


def test_the_table_is_checked_against_known_mistakes(tmp_path: Path) -> None:
    # The rule itself can fail: the two imports that used to run up, and matrix beside bisect.
    assert _layer("kit.run.records") == ("kit.run", 2)
    assert _layer("kit.records.store") == ("kit.records", 0)
    assert LAYERS["kit.matrix"] == LAYERS["kit.bisect"] > LAYERS["kit.run"] > LAYERS["kit.install"] > BOTTOM
    assert _group("kit.matrix.slurm") != _group("kit.bisect.probe.probes")
    fake = tmp_path / "kit" / "install" / "release.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ..run import records\nfrom ..matrix.slurm import job_facts\nfrom . import plan\n"
                    "def later():\n    from kit.bisect import probes\n    import repro.scaling\n")
    assert [target for _, target in _imports(fake)] == ["kit.run", "kit.matrix.slurm", "kit.install.plan",
                                                         "kit.bisect", "repro.scaling"]
    assert [why.split(":")[0] for why in _violations(fake)] == ["line 1", "line 2", "line 5", "line 6"]
    sideways = tmp_path / "kit" / "matrix" / "sweep.py"
    sideways.parent.mkdir(parents=True)
    sideways.write_text("from ..bisect.options import Options\n")
    assert "beside" in _violations(sideways)[0]


def _cycle(graph: dict[str, list[str]]) -> list[str]:
    """One import cycle of ``graph`` (module -> the kit modules it imports), as a path; [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in graph.get(module, []):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[module] = 2
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def test_no_module_imports_itself_round_a_circle() -> None:
    """Within one package imports may run either way; a circle (type-only imports included) is still one
    concept split in two: environment.py and overlay.py were one until issue 25 item 5."""
    modules = {_module(path): path for path in MODULES}
    graph = {name: sorted({target for _, target in _imports(path) if target in modules and target != name})
             for name, path in modules.items()}
    assert _cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == ["a", "b", "c", "a"]  # the check can fail
    assert _cycle(graph) == [], "an import circle: " + " -> ".join(_cycle(graph))


def _exported(init: Path) -> set[str] | None:
    """The names a package's ``__init__.py`` lists in ``__all__``; None when it lists none."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return None


def _through_the_front(path: Path, packages: dict[str, set[str]]) -> list[str]:
    """Each import of ``path`` that reaches into a package with ``__all__`` from outside it, or takes a name
    the package does not list."""
    here = _module(path)
    wrong = []
    for node in nodes(path):
        if not isinstance(node, ast.ImportFrom):
            continue
        for package, names in packages.items():
            if here == package or here.startswith(package + "."):
                continue  # inside: its modules import each other directly
            target, line = _from_module(node, path), node.lineno
            if target.startswith(package + "."):
                wrong.append(f"line {line}: {target} is inside {package}: import from {package} itself")
            elif target == package:
                wrong += [f"line {line}: {package} does not list {alias.name!r} in __all__"
                          for alias in node.names if alias.name not in names]
    return wrong


PACKAGES_WITH_ALL = {_module(init): names for init in sorted(KIT.rglob("__init__.py"))
                     if (names := _exported(init)) is not None}


def test_packages_with_all_are_imported_through_it() -> None:
    """A package that lists ``__all__`` (kit.bisect and its sub-packages probe, commits and report, records,
    hlo, explain) is one concept to the rest of the kit: its modules can move or split without an importer
    changing, and the names in ``__all__`` are all another module may take."""
    assert {"kit.bisect", "kit.bisect.probe", "kit.bisect.commits", "kit.bisect.report"} <= set(PACKAGES_WITH_ALL)
    wrong = {str(path.relative_to(KIT.parent)): found for path in MODULES
             if (found := _through_the_front(path, PACKAGES_WITH_ALL))}
    assert wrong == {}


def test_the_front_door_rule_can_fail(tmp_path: Path) -> None:
    fake = tmp_path / "kit" / "bisect" / "gallop.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from .probe.judges import release_prober\nfrom .probe import Prober, _private\n"
                    "from .options import Options\n")
    packages = {"kit.bisect.probe": {"Prober"}}
    assert _through_the_front(fake, packages) == [
        "line 1: kit.bisect.probe.judges is inside kit.bisect.probe: import from kit.bisect.probe itself",
        "line 2: kit.bisect.probe does not list '_private' in __all__"]


@pytest.mark.parametrize("package", sorted(PACKAGES_WITH_ALL))
def test_every_name_in_all_is_defined(package: str) -> None:
    module = __import__(package, fromlist=["__all__"])
    assert [name for name in module.__all__ if not hasattr(module, name)] == []
