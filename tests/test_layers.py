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

# Lower layers first; a module imports only from layers below its own, and from its own layer only inside its own
# package (kit.install.plan may import kit.install.index; kit.config may not import kit.targets: it stands higher).
# Only the entry point on top may import anything. Each layer says what it holds.
LAYER_TABLE: list[tuple[str, list[str]]] = [
    # values and words that import no other kit module: the version (kit/__init__), exit codes, JSON's types,
    # file names, the layout of folders, log events, Markdown escaping, sample statistics, one HTTP helper,
    # the user cache's folder, how the kit names its commands
    ("values", ["kit", "kit.exit_codes", "kit.json_types", "kit.file_names", "kit.layout", "kit.log_events",
                "kit.markdown_text", "kit.metrics", "kit.http", "kit.user_cache", "kit.wording",
                # the pure release search (no I/O): a bisect's, and the catalogue's boundaries are bisected with it
                "kit.bisect.search"]),
    # mechanics over the values: the kit's errors, whole-file writes, bounded text, the console that makes text
    # inert, where the package's own files are, compiled HLO read into fingerprints (stdlib only: kit.hlo's modules,
    # fingerprint, instructions, op_names, dataflow, sharding, source_lines and fingerprints, are one concept each,
    # seen from outside through kit.hlo's __all__), and the built-in checks, one module each (what the kit asks of a
    # check instead of its name)
    ("mechanics", ["kit.errors", "kit.atomic_files", "kit.text_bounds", "kit.inert_console", "kit.package_files",
                   "kit.hlo", "kit.checks",
                   # how a run is told apart from another by what it printed and raised (stdlib only): triage's
                   # and reduce's to share
                   "kit.triage.block_outcome"]),
    # input checked where it enters, and the stores read and written: a path the user gave, a TOML table, a
    # check's extra packages, scratch folders, the commands' parser; the record store; JAX's git history
    ("input", ["kit.user_paths", "kit.toml_tables", "kit.requirements", "kit.scratch", "kit.arguments",
               "kit.records", "kit.history"]),
    # what a run is asked, as the user wrote it: a check's settings, a target file, a reproduce line
    ("request", ["kit.check_settings", "kit.target_files", "kit.reproduce_line"]),
    # the backends and the chips compiled for without them: one named table (a target file read in)
    ("targets", ["kit.targets"]),
    # matrix.toml read and checked once, and the questions asked of it; a catalogue entry's signs and the
    # ranges the kit measured (files only, read by the report and the drivers alike)
    ("matrix", ["kit.config", "kit.known.signs", "kit.known.measured"]),
    # the catalogue's entries, read from their files (they name matrix checks and targets)
    ("catalogue", ["kit.known.catalogue"]),
    # the catalogue listed: entries beside their measured ranges
    ("listing", ["kit.known.listing"]),
    # how this run gets its Python; how N processes of one program start (pure: commands and environments)
    ("install", ["kit.install", "kit.launch"]),
    # run one check in one environment -> one record; SLURM job arrays, as both drivers submit and follow them
    ("run", ["kit.run", "kit.slurm"]),
    # the drivers: they do not import each other (explain: which op; known: the catalogue measured and audited)
    # (reduce: the smallest program that still shows a problem, and its issue text)
    ("drivers", ["kit.matrix", "kit.bisect", "kit.triage", "kit.explain", "kit.known", "kit.reduce"]),
    # the entry point: it may import every driver; the jax-kit command's project (its folder, its matrix) is the
    # entry's alone
    ("entry", ["kit.cli", "kit.commands", "kit.__main__", "kit.project"]),
]
LAYERS: dict[str, int] = {module: level for level, (_, modules) in enumerate(LAYER_TABLE) for module in modules}
ENTRY = len(LAYER_TABLE) - 1

# kit/ may import only these modules of repro/ (standard library only: they import in nox's process).
REPRO_FOR_KIT = {"repro", "repro.parameters", "repro.contract", "repro.environment", "repro.compile_cache", "repro.tpu_slices",
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
    for end in range(len(parts), 1, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return prefix, LAYERS[prefix]
    # kit itself holds only the version: every other module of kit/ must be placed, not fall to it
    return ("kit", LAYERS["kit"]) if module in ("kit", "kit.__version__") else None


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
        elif their_level == level and level != ENTRY and theirs != mine:
            wrong.append(f"line {line}: {target} is beside {here} (both layer {level}, different packages)")
    return wrong


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(KIT.parent)) for p in MODULES])
def test_imports_run_down_the_layers(path: Path) -> None:
    wrong = _violations(path)
    assert not wrong, f"{_module(path)} imports against the layers:\n" + "\n".join(wrong)


def test_the_table_is_checked_against_known_mistakes(tmp_path: Path) -> None:
    # The rule itself can fail: the two imports that used to run up, and matrix beside bisect.
    assert _layer("kit.run.records") == ("kit.run", LAYERS["kit.run"])
    assert _layer("kit.records.store") == ("kit.records", LAYERS["kit.records"])
    assert _layer("kit.unplaced") is None  # a new top-level module is named until it is placed
    assert LAYERS["kit.matrix"] == LAYERS["kit.bisect"] > LAYERS["kit.run"] > LAYERS["kit.install"] > LAYERS["kit"]
    assert LAYERS["kit.config"] > LAYERS["kit.targets"] > LAYERS["kit.target_files"] > LAYERS["kit.errors"]
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
    below = tmp_path / "kit" / "targets.py"  # the bottom layers are layers too: the table of chips reads no matrix
    below.write_text("from .config import Matrix\nfrom .errors import UsageError\n")
    assert [why.split(":")[0] for why in _violations(below)] == ["line 1"]


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
            if target.startswith(package + ".") and LAYERS.get(target, ENTRY) >= LAYERS.get(package, 0):
                # (a module the table places below its package, kit.bisect.search, is imported directly)
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
