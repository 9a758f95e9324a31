"""A machine for the drivers' tests: JAX releases on a local index, built as fake environments, the kit real.

`FakeReleases` (the ``fake_releases`` fixture in tests/conftest.py makes one)
serves a package index on 127.0.0.1 with the releases asked for
(`tests.fake_index.jax_releases`) and builds each installable one as a warm
environment whose ``python`` is `tests.fake_repro` (`install_fake_release`),
from the install plan the kit itself makes from that index. Everything between
the driver and the repro is the kit's own: planning, the lock, `prepare`, the
runner, the record store and "is this record current"; a release the index
lacks wheels for is resolved by uv against the index and found not installable.
A release not built beforehand is built by the kit when it is first prepared:
resolved by uv against the index, then installed by `tests.fake_repro.FakeBackend`.
Only this is not real: the environments hold no JAX (the repro reads its
parameters with the real parser and answers what `behave` says), and every
Python the plan names counts as installed (uv resolves for a Python version,
not an interpreter, and a fake environment needs none).

    def test_something(fake_releases):
        releases = fake_releases(["0.4.13", "0.4.16", "0.6.2"], not_installable=["0.4.16"])
        releases.behave("0.6.2", "crash", "unaffected", check="scaling")   # crashes once, then runs
        sweep.main(releases.matrix, [], print)
        assert releases.runs == [("0.4.13", "scaling"), ...]
"""

from __future__ import annotations

import json
import shutil
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pytest

from kit.config import Matrix, parse_matrix
from kit.install import environment, envs, plan as install_plan, release
from kit.install.environment import Prepared
from kit.install.plan import InstallPlan
from kit.install.key import InstallKey
from kit.run import runner
from tests.fake_index import ServedIndex, jax_releases, serve_index
from tests.fake_repro import RESULTS, FakeBackend, install_fake_release

PYTHON = "3.11"
"""The one Python the fake machine's matrix names: every plan resolves for it, every environment "has" it."""

class FakeReleases:
    """The fake machine: its matrix, its index, and what ran on it."""

    def __init__(self, folder: Path, raw: dict[str, Any], index: ServedIndex, stop_index: Callable[[], None],
                 numpy_moved: str | None = None) -> None:
        self.folder = folder
        self.numpy_moved = numpy_moved
        """When numpy 2.2.2 was uploaded (None: never): eras cut off after it resolve it."""
        self.index = index
        self._raw = raw
        self._stop_index = stop_index
        self.matrix = parse_matrix(raw, folder / "matrix.toml")
        self._forgotten = 0
        self.prepared: list[str] = []
        """Every release `kit.install.environment.prepare` was asked for, in order (whoever asked)."""
        self.prepared_pins: list[tuple[str, ...]] = []
        """The ``pins`` each of those prepares was asked to hold (``--pin``)."""

    # -- set-up

    def build(self, *versions: str) -> None:
        """Build these releases' environments, as a first `prepare` of each would, from the kit's own plan."""
        for version in versions:
            plan = release.plan_release(self.matrix, version, InstallKey("cpu"), release.open_index(self.matrix))
            install_fake_release(self.matrix.envs_dir, self.matrix, version, plan, versions=self.versions(plan))

    def versions(self, plan: InstallPlan) -> dict[str, str]:
        """What uv resolves for the plan on this index: the release's own jax and jaxlib, and its era's numpy."""
        era_has_new_numpy = (self.numpy_moved is not None and plan.exclude_newer is not None
                             and plan.exclude_newer >= self.numpy_moved)
        return {"jax": plan.jax, "jaxlib": plan.jax, "numpy": "2.2.2" if era_has_new_numpy else "2.2.1",
                "scipy": "1.11.2"}

    def behave(self, version: str, *results: str, check: str | None = None) -> None:
        """What the release's repro answers on successive runs (the last repeats); every check unless ``check``."""
        assert results and all(r in RESULTS for r in results), f"results are {RESULTS}"
        table_path = self.folder / "behaviour.json"
        table = json.loads(table_path.read_text()) if table_path.exists() else {}
        # Counted from the runs after this call: a release that ran before starts its list afresh.
        table[f"{version} {check}" if check else version] = {"results": list(results),
                                                              "from_run": len(self._all_runs())}
        table_path.write_text(json.dumps(table))

    def break_jax(self, *versions: str) -> None:
        """From now on JAX itself cannot import in these releases' environments (their scripts still start)."""
        (self.folder / "broken-jax.json").write_text(json.dumps(list(versions)))

    def reconfigure(self, **tables: Any) -> Matrix:
        """matrix.toml with some top-level tables replaced (say ``checks``); the same results, envs and index."""
        self._raw = {**self._raw, **tables}
        self.matrix = parse_matrix(self._raw, self.folder / "matrix.toml")
        return self.matrix

    def stop_index(self) -> None:
        """Take the index down: its port refuses from now on (built releases still run from their locks)."""
        self._stop_index()

    # -- what happened

    @property
    def runs(self) -> list[tuple[str, str]]:
        """(release, check) of every repro or script run since `forget`, in order (``script``: a user's script)."""
        return self._all_runs()[self._forgotten:]

    @property
    def versions_run(self) -> list[str]:
        return [version for version, _check in self.runs]

    def forget(self) -> None:
        """Count runs and prepares afresh from here."""
        self.prepared.clear()
        self.prepared_pins.clear()
        self._forgotten = len(self._all_runs())

    def _all_runs(self) -> list[tuple[str, str]]:
        log = self.folder / "runs.log"
        lines = log.read_text().splitlines() if log.exists() else []
        return [(version, check) for version, check in (line.split(" ", 1) for line in lines)]


def make_fake_releases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       stack: ExitStack) -> Callable[..., FakeReleases]:
    """The fixture's factory; see `fake_releases` in tests/conftest.py."""

    def make(versions: Sequence[str], *, not_installable: Sequence[str] = (), built: Sequence[str] | None = None,
             checks: Mapping[str, Any] | None = None, matrix_releases: Sequence[str] | None = None,
             install: Mapping[str, Any] | None = None, numpy_moves_at: str | None = None,
             packages: Sequence[tuple[str, str, str]] = ()) -> FakeReleases:
        """The index serves ``versions``; all but ``not_installable`` are built unless ``built`` names them.

        ``numpy_moves_at``: the release from whose era on numpy 2.2.2 is resolved
        instead of 2.2.1 (`tests.fake_index.jax_releases`). ``packages``: more
        projects on the index, ``(name, version, release it was uploaded with)``,
        for a check's ``requires``; an environment that installs one can import it
        (a stub that knows its ``__version__``).

        A release left unbuilt is built by the kit when first prepared (uv
        resolves it against the index; the environment is a fake one too).

        ``checks``: matrix.toml's [checks] tables (default: scaling on 1 and 2
        devices); ``matrix_releases``: its [[release]] blocks (default:
        ``versions``); ``install``: more [install] keys.
        """
        if shutil.which("uv") is None:
            pytest.skip("uv resolves the releases the index lacks wheels for")
        folder = tmp_path / "fake-machine"
        folder.mkdir()
        files, blobs = jax_releases(versions, missing_jaxlib=not_installable, numpy_moves_at=numpy_moves_at,
                                    packages=packages)
        numpy_moved = next((uploaded for name, uploaded in files["numpy"] if "2.2.2" in name), None)
        server = ExitStack()
        index = server.enter_context(serve_index(files, blobs))
        stack.callback(server.close)
        raw: dict[str, Any] = {
            "kit": {"results_dir": str(folder / "reports" / "results"), "envs_dir": str(folder / "envs")},
            # JAX's archive is a real page: the fake index alone decides what installs.
            "install": {"index_url": index.url, "jaxlib_archive": "", "pythons": [PYTHON], **(install or {})},
            "release": [{"version": v} for v in (versions if matrix_releases is None else matrix_releases)],
            "checks": dict(checks or {"scaling": {"devices": [1, 2]}}),
        }
        # Each test its own caches: the index's pages, and uv's answers about this port's index.
        monkeypatch.setenv("KIT_CACHE_DIR", str(folder / "cache"))
        monkeypatch.setenv("UV_CACHE_DIR", str(folder / "uv-cache"))
        monkeypatch.setenv("FAKE_RELEASES_DIR", str(folder))
        monkeypatch.setattr(release, "available_pythons", lambda wanted: list(wanted))
        # A release not built yet is built by the kit itself (resolved by uv, locked), as a fake environment.
        monkeypatch.setattr(environment, "pick_backend", FakeBackend)
        monkeypatch.setattr(envs, "find_or_fetch_interpreter", lambda wanted, log: Path(sys.executable))
        monkeypatch.setattr(install_plan, "_RESOLVED", install_plan.Once())  # uv's answers this process kept: another test's index had this port
        releases = FakeReleases(folder, raw, index, server.close, numpy_moved)
        real_prepare = environment.prepare

        def counted_prepare(matrix: Matrix, version: str, key: InstallKey, *args: Any, **kwargs: Any) -> Prepared:
            releases.prepared.append(version)
            releases.prepared_pins.append(key.pins)
            return real_prepare(matrix, version, key, *args, **kwargs)

        monkeypatch.setattr(environment, "prepare", counted_prepare)
        # The runner holds its own name for it (imported through kit.install's front door): counted there too.
        monkeypatch.setattr(runner, "prepare_environment", counted_prepare)
        releases.build(*(built if built is not None else [v for v in versions if v not in not_installable]))
        return releases

    return make
