"""A JAX commit on this machine: its Python laid over a release environment already built.

JAX's repository holds the ``jax`` package (pure Python) and the Python files
of ``jaxlib``; the compiled part of jaxlib changes only with jaxlib releases.
So a commit between two releases runs, with no compiler, as "the commit's
Python on a released jaxlib build": its ``jax/`` and those of its
``jaxlib/**.py`` files that the installed jaxlib also has (``lapack.py``,
``gpu_solver.py``, ...: the Python that builds the custom calls; jax's
sharding rules for linalg moved into them with f93c2a1aa5) are written to a
folder that goes first on ``PYTHONPATH``.

A package folder earlier on the path hides the installed package entirely,
so the overlay's ``jaxlib/`` is a whole package: every installed entry linked
(extensions, data, ``version.py`` that names the binary), the commit's files
in place of their installed copies. ``__pycache__`` is not linked, so
bytecode of the commit's files never lands in the built environment.

This module writes files; the `Environment` that runs them is made by
`kit.install.environment.over_release`, and which build a commit runs on is
the commit search's choice (`kit.bisect.commits.builds`).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import tempfile
from pathlib import Path

from .. import scratch
from ..errors import OverlayUnwritable
from ..history.export import export_files
from ..history.source import History
from ..history.version_file import JaxlibRange

OVERLAY_FORMAT = 4
"""What an overlay holds; part of every commit probe's cache key, so a change to it re-runs commits.
(1: installed jaxlib files only; 2: plus new modules in folders the installed jaxlib has; 3: the same files,
but probes of format 2 may hold a failed ``import jax`` counted as an outcome, so none of them is reused;
4: the binary's declarations in ``xla_client.py`` are the build's, not the commit's.)"""

BINARY_DECLARATIONS = ("_version", "mlir_api_version")
"""What ``xla_client.py`` declares about the compiled extension beside it, and JAX gates on.

``jax._src.lib`` reads ``jaxlib_extension_version`` (``xla_extension_version``
before 0.5) as ``xla_client._version`` and ``mlir_api_version`` from the same
file; ``jaxlib/version.py`` (never laid) names the release; ``_ifrt_version``
is read from the binary itself. The number is bumped with each change to the
C++ extension, so a commit's copy names a binary that the build is not.
"""

_DECLARATION = re.compile(r"^(?P<name>" + "|".join(BINARY_DECLARATIONS) + r")\s*(?::[^=\n]*)?=\s*(?P<value>\d+)",
                          re.MULTILINE)

JAX_ALONE = "jax/ alone"
"""The smallest overlay: the commit's ``jax/`` over the build, whose own jaxlib (binary and Python) is untouched."""

WITH_JAXLIB = "jax/ and jaxlib Python"
"""The commit's ``jax/`` and its ``jaxlib/**.py`` (the gates of `lay_over`) over the build: format 4's overlay."""

LAID_FORMS = (WITH_JAXLIB, JAX_ALONE)
"""What may be laid, in the order a build's span is sought (`kit.bisect.commits.runnable.assign_builds`).

The commit's jaxlib Python comes first where it runs: f93c2a1aa5's change is
partly ``jaxlib/lapack.py``, and with ``jax/`` alone on jaxlib 0.5.1 it gives
its parent's outcome. Where JAX cannot run with it (Mosaic GPU's Python naming
an op the build's generated module lacks, from 0.9.2 → 0.10.0's 136th commit),
``jax/`` alone is laid: the commit's own ``jax/`` still runs there, and a fix
in ``jax/`` (2d252fb19d, ``jax/_src/scipy/fft.py``) is found on that build.
Issue 49 asked for the reverse order; docs/commits.md ("A deliberate deviation
from issue 49's order") says why not, measured by
``benchmarks/commit_overlay_outcomes.py``.
"""

_MINIMUM_JAXLIB = re.compile(r"^_minimum_jaxlib_version\s*(?::[^=\n]*)?=\s*[\"'][^\"'\n]*[\"']", re.MULTILINE)

_RELEASE_VERSION = re.compile(r"^_release_version\s*(?::[^=\n]*)?=\s*None\s*$", re.MULTILINE)


def commit_version(accepted: JaxlibRange, date: str, commit: str) -> str:
    """The version the overlay's jax reports: ``0.5.2.dev20250227+f93c2a1aa5``, as JAX names a source build."""
    return f"{accepted.jax}.dev{date[:10].replace('-', '')}+{commit[:10]}"


def new_overlay_folder() -> Path:
    """A private folder for one commit's overlay.

    A scratch folder of the kit's (`kit.scratch`), as the runner's are, so one
    left by a killed bisect is removed by the next kit, and nothing else is.
    """
    try:
        return scratch.make("commit")
    except OSError as error:  # a temp folder that is full or not writable: one sentence naming it, TIP: TMPDIR
        raise OverlayUnwritable(
            f"could not make a folder for a commit's overlay in {tempfile.gettempdir()} ({error.strerror or error}); "
            "an overlay needs about 15 MB there",
            "free some space there, or set TMPDIR to a folder with room: TMPDIR=/path/with/room nox -s bisect -- ...") \
            from error


def lay_over(history: History, commit: str, python: Path, folder: Path, version: str,
             laid: str = WITH_JAXLIB, minimum: str | None = None) -> None:
    """Write ``commit``'s ``jax/`` and a whole ``jaxlib`` package (its Python over ``python``'s build) into ``folder``.

    ``laid`` `JAX_ALONE`: ``jax/`` only; the build's jaxlib is imported as installed (nothing linked).
    ``minimum``: the jaxlib version JAX's import check takes as its minimum (a forced probe's build).
    """
    if laid == JAX_ALONE:
        export_files(history, commit, ["jax"], folder)
        _stamp_version(folder / "jax" / "version.py", version, minimum)
        return
    installed = installed_package(python, "jaxlib")
    export_files(history, commit, ["jax", "jaxlib"], folder,  # one read of the tree, one fetch when partial
                 wanted=lambda path: not path.startswith("jaxlib/") or _jaxlib_python(path, installed))
    _link_missing(installed, folder / "jaxlib")
    _keep_importable(folder / "jaxlib", installed)
    declare_the_build(folder / "jaxlib", installed)
    _stamp_version(folder / "jax" / "version.py", version, minimum)


def _jaxlib_python(path: str, installed: Path) -> bool:
    """A commit's ``jaxlib/...py`` file belongs in the overlay when the installed jaxlib has its folder.

    The wheel keeps the repository's layout for its Python (``jaxlib/lapack.py``,
    ``jaxlib/mosaic/python/tpu.py``), so same folder, same module: replaced if
    installed, added if new (``plugin_support.py`` appeared between 0.5.2 and
    0.5.3 and jax imports it). Folders the wheel lacks (``jaxlib/tools``) are
    build scripts. ``version.py`` is never taken: it names the binary.
    """
    relative = Path(path).relative_to("jaxlib")
    return path.endswith(".py") and relative.name != "version.py" and (installed / relative.parent).is_dir()


def _keep_importable(overlay: Path, installed: Path) -> None:
    """Put the build's own copy back where the commit's file imports a jaxlib module the build does not have.

    The wheel's layout is not always the repository's: from April 2025 the
    repository keeps ``jaxlib/xla/xla_client.py`` and a two-line
    ``jaxlib/xla_client.py`` that re-exports it, while the wheels of that time
    ship the module itself as ``jaxlib/xla_client.py``. Laid over as it is,
    the shim imports ``jaxlib.xla``, which the build lacks, and JAX cannot
    import at all. Such a file is the build's business: its own copy stays.
    """
    for path in sorted(overlay.rglob("*.py")):
        if path.is_symlink() or not (installed / path.relative_to(overlay)).exists():
            continue  # linked from the build already, or new (nothing of the build's to fall back on)
        missing = [name for name in _jaxlib_imports(path) if not _resolves(overlay, name)]
        if missing:
            path.unlink()
            os.symlink(installed / path.relative_to(overlay), path)


def declare_the_build(overlay: Path, installed: Path) -> None:
    """Make every laid ``xla_client.py`` declare the build's extension version, not the commit's.

    Laid as it is, a 2026 commit's ``_version = 395`` over a binary whose own
    file says 391 makes JAX take paths the binary lacks (``weakref_lru_cache()``
    called with arguments it does not know, ``cannot import name ...``), and
    the commit is wrongly called unrunnable there. JAX's own gates on
    ``jaxlib_extension_version`` exist so that one Python runs on older
    binaries; with the build's number they choose the binary's paths. The rest
    of the commit's file stays (its Python around the extension). Where the
    build's file declares no such number, the build's whole copy is used.
    """
    declared = _build_declarations(installed)
    for path in sorted(overlay.rglob("xla_client.py")):
        if path.is_symlink():
            continue  # the build's own copy already
        text = path.read_text(encoding="utf-8", errors="replace")
        names = {match["name"] for match in _DECLARATION.finditer(text)}
        if not names:
            continue
        if not names <= declared.keys():
            own = _installed_copy(installed, overlay, path)
            if own.exists():
                path.unlink()
                os.symlink(own, path)
            continue
        path.write_text(_DECLARATION.sub(
            lambda m: f"{m['name']} = {declared[m['name']]}  # the build's; the commit said {m['value']}", text),
            encoding="utf-8")


def _build_declarations(installed: Path) -> dict[str, int]:
    """``_version`` and ``mlir_api_version`` as the build's own ``xla_client.py`` files say them."""
    declared: dict[str, int] = {}
    for path in (installed / "xla_client.py", installed / "xla" / "xla_client.py"):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in _DECLARATION.finditer(text):
            declared.setdefault(match["name"], int(match["value"]))
    return declared


def _installed_copy(installed: Path, overlay: Path, path: Path) -> Path:
    """The build's file for ``path``, or its ``jaxlib/xla_client.py`` (the module the wheels ship) if it has none."""
    own = installed / path.relative_to(overlay)
    return own if own.exists() else installed / "xla_client.py"


def _jaxlib_imports(path: Path) -> list[str]:
    """The ``jaxlib.…`` modules a file imports by absolute name (a file that does not parse imports none)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return [name for name in names if name.startswith("jaxlib.")]


def _resolves(overlay: Path, module: str) -> bool:
    """Is ``jaxlib.a.b`` a package, a module or an extension in the overlay (which links the build's rest)?"""
    parts = module.split(".")[1:]
    place = overlay.joinpath(*parts)
    if place.is_dir() or place.with_suffix(".py").exists() or place.with_suffix(".pyi").exists():
        return True
    return any(place.parent.glob(f"{parts[-1]}.*.so")) or place.with_suffix(".so").exists()


def remove_overlay(folder: Path) -> None:
    scratch.remove(folder)


@functools.lru_cache(maxsize=None)
def installed_package(python: Path, name: str) -> Path:
    """Where ``python`` imports package ``name`` from (asked once per interpreter; nothing is imported).

    ``find_spec`` of a top-level package locates it without running it, so
    this costs a bare interpreter start, and works for any interpreter, not
    only a venv laid out as ``lib/pythonX.Y/site-packages``.
    """
    code = f"import importlib.util as u; s = u.find_spec({name!r}); print(s.submodule_search_locations[0] if s else '')"
    own = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # the build's, not the caller's
    found = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120, env=own).stdout.strip()
    if not found:
        raise FileNotFoundError(f"{name} is not installed for {python}")
    return Path(found).absolute()  # links made from it must not depend on the working folder


def _link_missing(installed: Path, overlay: Path) -> None:
    """Make ``overlay`` the whole package: link every installed entry it does not replace."""
    overlay.mkdir(parents=True, exist_ok=True)
    for entry in installed.iterdir():
        if entry.name == "__pycache__":
            continue
        target = overlay / entry.name
        if target.is_dir() and not target.is_symlink() and entry.is_dir():
            _link_missing(entry, target)  # a folder holding a replaced file: link the rest of it
        elif not os.path.lexists(target):
            os.symlink(entry, target)


def _stamp_version(version_file: Path, version: str, minimum: str | None = None) -> None:
    # JAX's own build writes _release_version the same way; here it names the commit, so every
    # record and log line says which Python ran (the jaxlib check reads _version, not this).
    try:
        text = version_file.read_text(encoding="utf-8")
    except OSError:
        return
    stamped, count = _RELEASE_VERSION.subn(f'_release_version = "{version}"', text)
    if minimum is not None:  # forced below the commit's minimum: the check reads this, nothing else does
        stamped, relaxed = _MINIMUM_JAXLIB.subn(f'_minimum_jaxlib_version = "{minimum}"  # forced', stamped)
        count += relaxed
    if count:
        version_file.write_text(stamped, encoding="utf-8")
