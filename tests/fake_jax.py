"""A small fake JAX history and fake built environments, for the commit-bisect tests.

The repository (made with one ``git fast-import``, fixed authors and dates)
holds a fake ``jax`` package whose ``version.py`` and behaviour change at
known commits:

* ``jax.batch_sharded()`` turns True at the commit titled :data:`FIX_TITLE`,
  which came in through a merge (PR #4242) and needs BOTH the commit's
  ``jax/_src/linalg.py`` and its ``jaxlib/lapack.py`` (as the real fix,
  f93c2a1aa5, needed ``jaxlib/lapack.py``);
* ``jax.fast_kernel()`` is decided by the installed jaxlib's ``_kernels.py``
  alone (a stand-in for a compiled extension); the repository only changes
  ``jaxlib/kernels.cc``: a change no overlay can show;
* one commit asks for a jaxlib no build has (:data:`UNRUNNABLE_TITLE`);
* one adds ``jaxlib/plugin_support.py``, which jax imports from then on and
  jaxlib 0.1.0 lacks (:data:`PLUGINS_TITLE`, as c7ed1bd3a8 did before 0.5.3);
* ``_version`` becomes 0.2.0 at :data:`BUMP_TITLE`, and the release commit
  raises ``_minimum_jaxlib_version`` to 0.2.0 (as jax-v0.5.3 did).

Tags ``jax-v0.1.0`` and ``jax-v0.2.0``. :func:`fake_env` makes a "built
environment" of release 0.1.0 or 0.2.0: that tag's jax installed, a jaxlib
of that version, and a ``bin/python`` that puts its site-packages after
whatever PYTHONPATH holds (where an overlay goes), as a venv would.
:func:`build_fake_release` leaves what a real build does: that environment
where the kit looks for it, finished, and the lock that names it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tests.fake_jax_package import NUMPY

FIX_TITLE = "Add and test support for partitioning of batch dimensions (#4242)"
PREP_TITLE = "Teach lapack about batch dimensions"
MERGE_TITLE = "Merge pull request #4242 from dev:batch-dims"
UNRUNNABLE_TITLE = "Bump the minimum jaxlib version to 0.1.5"
BUMP_TITLE = "Update version numbers after 0.1.0 release"
KERNELS_TITLE = "Speed up the CPU kernels"
PLUGINS_TITLE = "Add jaxlib.plugin_support, imported by jax"
XLA_OLD, XLA_NEW = "a" * 40, "b" * 40

JAX_INIT = '''\
"""A fake jax: JAX's jaxlib version check, and two behaviours the tests bisect."""
import re as _re

from jax.version import __version__, _minimum_jaxlib_version
import jaxlib.version as _lib


def _dotted(v):
    return tuple(int(p) for p in _re.match(r"[0-9]+(?:[.][0-9]+)*", v).group(0).split("."))


# As jax/_src/lib/__init__.py: the newest jaxlib accepted is jax.__version__ (``_release_version`` when a build
# stamps one, as the overlay does), so a forced overlay that stamps the build's version passes this check.
if not _dotted(_minimum_jaxlib_version) <= _dotted(_lib.__version__) <= _dotted(__version__):
    raise RuntimeError(f"jaxlib {_lib.__version__} does not fit jax {__version__}")

from jax._src.linalg import batch_sharded  # noqa: E402
from jax._src.kernels import fast_kernel  # noqa: E402
'''

LINALG = '''\
import jaxlib.lapack

USES_BATCH_RULE = {flag}


def batch_sharded():
    return USES_BATCH_RULE and jaxlib.lapack.SUPPORTS_BATCH
'''

KERNELS = '''\
{plugins}def fast_kernel():
    import jaxlib._kernels  # in the installed jaxlib only: a compiled extension's stand-in
    return jaxlib._kernels.FAST
'''

VERSION = '''\
from __future__ import annotations

_version = "{version}"
# Overwritten by build scripts in releases.
_release_version: str | None = None
__version__ = _release_version or _version
_minimum_jaxlib_version = "{minimum}"
'''


CHANGELOG_1 = "# Changelog\n\n## jax 0.1.0 (Jan 2, 2025)\n\n* First release.\n"
CHANGELOG_2 = ("# Changelog\n\n## jax 0.2.0 (Feb 20, 2025)\n\n* Batch dimensions of lax.linalg are partitioned.\n\n"
               "## jax 0.1.0 (Jan 2, 2025)\n\n* First release.\n")

SCRIPT_BATCH = "import sys, jax\nsys.exit(0 if jax.batch_sharded() else 1)\n"
"""A user's repro: good (exit 0) when batch dimensions are sharded."""
SCRIPT_KERNEL = "import sys, jax\nsys.exit(0 if jax.fast_kernel() else 1)\n"
"""A user's repro of a behaviour only the compiled jaxlib changes."""


def _files(version: str = "0.1.0", minimum: str = "0.1.0", jax_rule: bool = False, lapack: bool = False,
           kernels: str = "slow", xla: str = XLA_OLD, noise: int = 0, changelog: str = CHANGELOG_1,
           plugins: bool = False) -> dict[str, str]:
    extra = {"jaxlib/plugin_support.py": "PLUGINS = ()\n"} if plugins else {}
    return {**extra,
        "jax/__init__.py": JAX_INIT,
        "jax/version.py": VERSION.format(version=version, minimum=minimum),
        "jax/_src/__init__.py": "",
        "jax/numpy.py": NUMPY,
        "jax/_src/linalg.py": LINALG.format(flag=jax_rule),
        "jax/_src/kernels.py": KERNELS.format(plugins="import jaxlib.plugin_support  # new: not in jaxlib 0.1.0\n\n\n"
                                              if plugins else ""),
        "jax/_src/noise.py": f"NOISE = {noise}\n",
        "jaxlib/lapack.py": f"SUPPORTS_BATCH = {lapack}\n",
        "jaxlib/kernels.cc": f"// {kernels} kernels\n",
        "jaxlib/BUILD": "# build rules\n",
        "third_party/xla/workspace.bzl": f'XLA_COMMIT = "{xla}"\nXLA_SHA256 = "0"\n',
        "CHANGELOG.md": changelog,
    }


@dataclass
class _Commit:
    mark: int
    title: str
    files: dict[str, str]
    parents: tuple[int, ...]
    author_date: int | None = None
    """Seconds since the epoch; default one a day (a cherry-pick keeps its original's)."""


def _history() -> tuple[list[_Commit], dict[str, int], dict[str, int]]:
    """The commits (oldest first), the tags, and the branch tips, as fast-import marks."""
    commits: list[_Commit] = []
    state = _files()

    def commit(title: str, parents: tuple[int, ...] | None = None, **changes: object) -> int:
        state.update(_files(**{**_current(state), **changes}))  # type: ignore[arg-type]
        mark = len(commits) + 1
        commits.append(_Commit(mark, title, dict(state), parents if parents is not None else ((mark - 1,) if mark > 1 else ())))
        return mark

    commit("Initial commit")
    release_1 = commit("JAX release v0.1.0")
    for i in range(1, 5):
        commit(f"Change noise to {i}", noise=i)
    branch_point = commits[-2].mark  # the PR branch left main one commit back
    main_tip = commits[-1].mark
    side_state = dict(commits[branch_point - 1].files)
    saved = dict(state)
    state.clear()
    state.update(side_state)
    prep = commit(PREP_TITLE, parents=(branch_point,), lapack=True)
    fix = commit(FIX_TITLE, parents=(prep,), jax_rule=True)
    state.clear()
    state.update({**saved, "jaxlib/lapack.py": "SUPPORTS_BATCH = True\n",
                  "jax/_src/linalg.py": LINALG.format(flag=True)})
    commit(MERGE_TITLE, parents=(main_tip, fix))
    commit("Change noise to 5", noise=5)
    commit(PLUGINS_TITLE, plugins=True)
    for i in range(6, 9):
        commit(f"Change noise to {i}", noise=i)
    commit(UNRUNNABLE_TITLE, minimum="0.1.5")
    commit("Revert the minimum jaxlib bump", minimum="0.1.0")
    for i in range(9, 11):
        commit(f"Change noise to {i}", noise=i)
    commit(BUMP_TITLE, version="0.2.0")
    commit(KERNELS_TITLE, kernels="fast")
    commit("Update XLA dependency", xla=XLA_NEW)
    commit("Change noise to 11", noise=11)
    release_2 = commit("JAX release v0.2.0", minimum="0.2.0", changelog=CHANGELOG_2)
    return commits, {"jax-v0.1.0": release_1, "jax-v0.2.0": release_2}, {"main": release_2, "pr-4242": fix}


def _current(state: dict[str, str]) -> dict[str, object]:
    """The _files() arguments that reproduce ``state`` (so one change keeps the rest)."""
    version = state["jax/version.py"]
    return {
        "version": version.split('_version = "')[1].split('"')[0],
        "minimum": version.split('_minimum_jaxlib_version = "')[1].split('"')[0],
        "jax_rule": "= True" in state["jax/_src/linalg.py"],
        "lapack": "True" in state["jaxlib/lapack.py"],
        "kernels": state["jaxlib/kernels.cc"].split()[1],
        "xla": state["third_party/xla/workspace.bzl"].split('"')[1],
        "noise": int(state["jax/_src/noise.py"].split("=")[1]),
        "changelog": state["CHANGELOG.md"],
        "plugins": "jaxlib/plugin_support.py" in state,
    }


def make_repo(path: Path) -> Path:
    """The fake JAX repository at ``path`` (a normal clone with a work tree); returns ``path``."""
    commits, tags, branches = _history()
    return write_history(path, commits, tags, branches)


def write_history(path: Path, commits: list[_Commit], tags: dict[str, int], branches: dict[str, int]) -> Path:
    """A repository holding exactly ``commits`` (one a day from 2025-01-03), with the tags and branches given."""
    stream: list[bytes] = []
    when = 1735776000  # 2025-01-02
    for c in commits:
        when += 86400
        if not c.parents:
            stream.append(b"reset refs/heads/main\n\n")  # a root: the branch starts again from nothing
        stream.append(f"commit refs/heads/main\nmark :{c.mark}\n".encode())
        stream.append(f"author Jax Dev <dev@example.com> {c.author_date or when} +0000\n"
                      f"committer Jax Dev <dev@example.com> {when} +0000\n".encode())
        message = c.title.encode() + b"\n"
        stream.append(b"data %d\n" % len(message) + message)
        if c.parents:
            stream.append(f"from :{c.parents[0]}\n".encode())
            stream += [f"merge :{p}\n".encode() for p in c.parents[1:]]
        stream.append(b"deleteall\n")
        for name, text in sorted(c.files.items()):
            data = text.encode()
            stream.append(f"M 100644 inline {name}\n".encode() + b"data %d\n" % len(data) + data + b"\n")
        stream.append(b"\n")
    for name, mark in branches.items():
        stream.append(f"reset refs/heads/{name}\nfrom :{mark}\n\n".encode())
    for name, mark in tags.items():
        stream.append(f"reset refs/tags/{name}\nfrom :{mark}\n\n".encode())
    _git(path.parent, "init", "-q", "-b", "main", str(path))
    _git(path, "fast-import", "--quiet", stdin=b"".join(stream))
    _git(path, "checkout", "-q", "-f", "main")
    # Serve partial clones over file:// (the kit's own clone is one).
    _git(path, "config", "uploadpack.allowFilter", "true")
    _git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
    return path


def small_history(path: Path, shape: str) -> Path:
    """Five-commit histories of the two shapes a release range can take besides a plain line.

    ``branch``: jax-v0.1.1 is a patch release cut on a branch from m1 and merged back at m4.
    ``unmerged``: the same, but the branch never comes back (jax-v0.6.2 is no ancestor of jax-v0.7.0).
    ``rootless``: jax-v0.1.0 is a root the newer tag's line never meets (a filtered clone, like the CI bundle).
    """
    files = _files()
    if shape == "branch":
        commits = [_Commit(1, "m1 base", files, ()), _Commit(2, "m2 main work", {**files, "jax/_src/noise.py": "N = 2\n"}, (1,)),
                   _Commit(3, "b1 Prepare the patch release", {**files, "CHANGELOG.md": "patch\n"}, (1,)),
                   _Commit(4, "m3 main work", {**files, "jax/_src/noise.py": "N = 3\n"}, (2,)),
                   _Commit(5, "m4 Merge branch release/0.1.1 into main",
                           {**files, "jax/_src/noise.py": "N = 3\n", "CHANGELOG.md": "patch\n"}, (4, 3)),
                   _Commit(6, "m5 main work", {**files, "jax/_src/noise.py": "N = 5\n", "CHANGELOG.md": "patch\n"}, (5,))]
        return write_history(path, commits, {"jax-v0.1.1": 3, "jax-v0.2.0": 6}, {"main": 6})
    if shape == "unmerged":
        commits = [_Commit(1, "m1 base", files, ()), _Commit(2, "m2 main work", {**files, "jax/_src/noise.py": "N = 2\n"}, (1,)),
                   _Commit(3, "b1 Prepare the patch release", {**files, "CHANGELOG.md": "patch\n"}, (1,)),
                   _Commit(4, "m3 main work", {**files, "jax/_src/noise.py": "N = 3\n"}, (2,))]
        return write_history(path, commits, {"jax-v0.1.1": 3, "jax-v0.2.0": 4}, {"main": 4})
    commits = [_Commit(1, "r1 old release, filtered to a root", files, ()),
               _Commit(2, "s1 first commit of the slice", {**files, "jax/_src/noise.py": "N = 1\n"}, ()),
               _Commit(3, "s2 new release", {**files, "jax/_src/noise.py": "N = 2\n"}, (2,))]
    return write_history(path, commits, {"jax-v0.1.0": 1, "jax-v0.2.0": 3}, {"main": 3, "old": 1})


RENAME_TITLE = "Rename the compiled module xla_extension to _jax"
NOISE_FIX_TITLE = "Fix the noise in pure Python"
GATE_TITLE = "Take the new path when jaxlib_version >= (0, 2, 0)"
SCRIPT_NOISE = "import sys, jax\nfrom jax._src import noise\nsys.exit(0 if noise.NOISE >= 10 else 1)\n"
"""Good once :data:`NOISE_FIX_TITLE` is in: a pure-Python fix that lies after the rename."""
SCRIPT_GATE = "import sys, jax\nfrom jax._src import gated\nsys.exit(0 if gated.NEW_PATH else 1)\n"
"""Good on a jaxlib 0.2.0 build once :data:`GATE_TITLE` is in; never on jaxlib 0.1.0."""

_COMPILED = "import jaxlib.{module} as _lib  # the compiled extension: jaxlib 0.1.0 has _xla, 0.2.0 has _jax\n"
_GATED = ("import jaxlib.version as _v\n\njaxlib_version = tuple(int(p) for p in _v.__version__.split('.'))\n"
          "NEW_PATH = {flag}\n")


def renamed_history(path: Path) -> Path:
    """A range whose late commits cannot import on the older build, although their version.py accepts it.

    As JAX's 2025-04-23 rename of ``xla_extension`` to ``_jax``: from
    :data:`RENAME_TITLE` on, jax imports ``jaxlib._jax``, which only the 0.2.0
    build has, while ``version.py`` accepts jaxlib 0.1.0 to 0.2.0 until the
    release commit. Before it, jax imports ``jaxlib._xla``, which both builds have (0.2.0 as an alias).
    :data:`NOISE_FIX_TITLE` (after the rename) is a pure-Python fix;
    :data:`GATE_TITLE` (before it) takes a new path only on jaxlib >= 0.2.0.
    """
    base = {**_files(), "jax/__init__.py": JAX_INIT + "from jax._src import compiled  # noqa: E402\n",
            "jax/_src/compiled.py": _COMPILED.format(module="_xla"), "jax/_src/gated.py": _GATED.format(flag=False)}
    gate = "False"
    steps: list[tuple[str, dict[str, str]]] = [("Initial commit", {}), ("JAX release v0.1.0", {}),
                                               (BUMP_TITLE, {"jax/version.py": VERSION.format(version="0.2.0", minimum="0.1.0")})]
    for i in range(1, 4):
        steps.append((f"Change noise to {i}", {"jax/_src/noise.py": f"NOISE = {i}\n"}))
    gate = "jaxlib_version >= (0, 2, 0)"
    steps.append((GATE_TITLE, {"jax/_src/gated.py": _GATED.format(flag=gate)}))
    steps.append(("Change noise to 4", {"jax/_src/noise.py": "NOISE = 4\n"}))
    steps.append((RENAME_TITLE, {"jax/_src/compiled.py": _COMPILED.format(module="_jax")}))
    steps += [("Change noise to 5", {"jax/_src/noise.py": "NOISE = 5\n"}),
              (NOISE_FIX_TITLE, {"jax/_src/noise.py": "NOISE = 10\n"}),
              ("Change noise to 11", {"jax/_src/noise.py": "NOISE = 11\n"}),
              ("JAX release v0.2.0", {"jax/version.py": VERSION.format(version="0.2.0", minimum="0.2.0"),
                                      "CHANGELOG.md": CHANGELOG_2})]
    commits: list[_Commit] = []
    state = dict(base)
    for mark, (title, changes) in enumerate(steps, start=1):
        state = {**state, **changes}
        commits.append(_Commit(mark, title, state, (mark - 1,) if mark > 1 else ()))
    return write_history(path, commits, {"jax-v0.1.0": 2, "jax-v0.2.0": len(commits)}, {"main": len(commits)})


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], input=stdin, check=True, capture_output=True,
                          env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}).stdout.decode()


def commit_titled(repo: Path, title: str) -> str:
    """The full hash of the (one) commit with this title."""
    out = _git(repo, "log", "--all", "--format=%H %s")
    found = [line.split(" ", 1)[0] for line in out.splitlines() if line.split(" ", 1)[1] == title]
    assert len(found) == 1, (title, found)
    return found[0]


def fake_env(env: Path, repo: Path, release: str, jaxlib: str | None = None) -> Path:
    """A 'built environment' of a fake release in ``env``: the tag's jax, a jaxlib (the release's by default), a python.

    Files already there (an installer's dist-info stubs, `tests.fake_repro.write_installed`) are overwritten.
    """
    jaxlib = jaxlib or release
    site = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    for path in _git(repo, "ls-tree", "-r", "--name-only", f"jax-v{release}", "jax").split():
        target = site / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_git(repo, "show", f"jax-v{release}:{path}"))
    version_py = site / "jax" / "version.py"
    version_py.write_text(version_py.read_text().replace("_release_version: str | None = None",
                                                         f'_release_version = "{release}"'))
    lib = site / "jaxlib"
    lib.mkdir(exist_ok=True)
    (lib / "__init__.py").write_text("")
    (lib / "version.py").write_text(f'__version__ = "{jaxlib}"\n')
    for path in _git(repo, "ls-tree", "--name-only", f"jax-v{release}", "jaxlib/").split():
        if path.endswith(".py"):  # the wheel carries the repository's jaxlib Python
            (lib / Path(path).name).write_text(_git(repo, "show", f"jax-v{release}:{path}"))
    (lib / "_kernels.py").write_text(f"FAST = {release != '0.1.0'}\n")
    # The compiled module by era: 0.1.0 has _xla only; 0.2.0 has _jax and keeps _xla as an alias.
    for module in ("_xla.py",) if release == "0.1.0" else ("_xla.py", "_jax.py"):
        (lib / module).write_text("")
    python = env / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec "{sys.executable}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    (env / "pyvenv.cfg").write_text(f"version_info = {sys.version.split()[0]}\n")
    return env


class FakeJaxBackend:
    """The kit's `EnvBackend` for the fake releases: "installs" a release of ``repo`` as `fake_env` makes it."""

    name = "fake-jax"

    def __init__(self, repo: Path) -> None:
        self.repo = repo

    def create(self, path: Path, interpreter: Path) -> None:
        path.mkdir(parents=True)

    def install(self, path: Path, plan: Any, resolution: Any) -> None:
        from tests.fake_repro import write_installed

        # Each resolved package's dist-info and RECORD first, as `kit.install.installed` checks before a reuse;
        # then the release's own files over the stubs it wrote.
        write_installed(path, resolution.versions, python=f"{sys.version_info[0]}.{sys.version_info[1]}")
        fake_env(path, self.repo, plan.jax, resolution.versions.get("jaxlib"))


def build_fake_release(matrix: Any, key: Any, repo: Path, release: str, jaxlib: str | None = None) -> Path:
    """What a real build of ``release`` as ``key`` asks leaves behind; the environment's folder.

    The environment is built by the kit's own `kit.install.envs.ensure_env` (with `FakeJaxBackend`), so it lies
    at `envs.env_path` for its plan and resolution with the finished-build marker the kit writes; the lock is
    `lockfile.write_lock`'s under ``matrix.envs_dir``, keyed by `lockfile.install_settings` for ``key`` (a
    `kit.install.key.InstallKey`): its pins and extra packages are in the plan, as `plan_install` puts them.
    ``jaxlib``: another jaxlib than the release's own (a lock that must not answer for other settings).
    """
    from kit.install import envs, lockfile
    from kit.install.plan import InstallPlan, Resolution

    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    tagged = int(_git(repo, "log", "-1", "--format=%ct", f"jax-v{release}"))
    era = datetime.fromtimestamp(tagged, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # the release's cut-off
    plan = InstallPlan(jax=release, backend=key.backend,
                       requirements=(f"jax[{key.backend}]=={release}", "scipy", *key.pins, *key.requires),
                       exclude_newer=era, index_url=matrix.install.index_url, find_links=key.find_links,
                       pythons=(python,), pins=key.pins, requires=key.requires)
    held = dict(pin.split("==", 1) for pin in key.pins)
    resolution = Resolution(python, ok=True, versions={"jax": release, "jaxlib": jaxlib or release, **held})
    real_find = envs.find_or_fetch_interpreter
    envs.find_or_fetch_interpreter = lambda wanted, log: Path(sys.executable)  # type: ignore[assignment]
    try:  # the release's "Python" is this one: nothing to look for or download
        built = envs.ensure_env(matrix.envs_dir, plan, resolution, FakeJaxBackend(repo), lambda line: None)
    finally:
        envs.find_or_fetch_interpreter = real_find  # type: ignore[assignment]
    lockfile.write_lock(matrix.envs_dir, lockfile.install_settings(matrix, matrix.release(release), key), plan,
                        resolution)
    return built.path
