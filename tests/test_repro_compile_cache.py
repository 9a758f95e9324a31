"""repro.compile_cache: compiles reused only where that cannot change an answer.

Unit tests with a stand-in ``jax`` (what is feature-detected, what is said);
then real releases from ``.nox/jax-envs/`` (skipped where absent): the
scaling check run without the cache, then with it cold and warm, must give
the same verdict and the same HLO figures (each compiled program's digest
included); an old release whose CPU backend has no persistent cache says so;
and over a commit range where the lowering changes (f93c2a1aa5, with
``KIT_JAX_REPO`` naming a clone of JAX), a cache filled by the commit before
never answers for the commit's own, different, programs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kit.history.source import History
from kit.install.environment import Environment, overlaid
from kit.install.overlay import lay_over
from kit.run.compile_cache import compile_cache_dir
from repro import compile_cache
from repro.compile_cache import CompileCache
from tests.real_releases import release_python

REPO = Path(__file__).resolve().parent.parent
ENVS = REPO / ".nox" / "jax-envs"
FIX = "f93c2a1aa51d0d124bf0632eacbe95c261dacd57"
SMALL = ["--devices", "1,2", "--batch", "64", "--matrix-size", "8", "--in-features", "8", "--modes", "jit"]


class Config:
    """A stand-in for ``jax.config`` that knows only some options, as an old or new release would."""

    def __init__(self, known: set[str]) -> None:
        self.known, self.values = known, {}  # type: ignore[var-annotated]

    def update(self, name: str, value: Any) -> None:
        if name not in self.known:
            raise AttributeError(f"Unrecognized config option: {name}")
        self.values[name] = value


class FakeJax:
    def __init__(self, known: set[str]) -> None:
        self.config = Config(known)


def test_nothing_is_cached_unless_the_kit_names_a_folder() -> None:
    cache = compile_cache.enable(FakeJax({"jax_compilation_cache_dir"}), environ={})
    assert cache.figures() == {"used": False, "why": "not asked for"}
    assert compile_cache.summary(cache.figures()) == "compile cache: not asked for"


def test_settings_are_feature_detected_and_a_release_without_any_cache_says_so(tmp_path: Path) -> None:
    new = FakeJax({"jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
                   "jax_persistent_cache_min_entry_size_bytes"})
    cache = compile_cache.enable(new, environ={compile_cache.ENV: str(tmp_path / "c")})
    assert new.config.values == {"jax_compilation_cache_dir": str(tmp_path / "c"),
                                 "jax_persistent_cache_min_compile_time_secs": 0.0,
                                 "jax_persistent_cache_min_entry_size_bytes": -1}  # no XLA caches option: not set
    assert cache.problem == ""
    bare = compile_cache.enable(FakeJax(set()), environ={compile_cache.ENV: str(tmp_path / "d")})
    assert bare.figures()["used"] is False
    assert bare.figures()["why"].startswith("not supported here")


def test_reuse_is_what_jax_reported_and_a_cache_never_consulted_is_not_counted(tmp_path: Path) -> None:
    cache = CompileCache(str(tmp_path))
    cache.counting = True
    for event in ["/jax/compilation_cache/compile_requests_use_cache"] * 3 + ["/jax/compilation_cache/cache_hits"]:
        cache.listen(event, tag="x")  # newer releases pass keyword arguments
    cache.listen("/jax/other_event")
    assert cache.figures() == {"used": True, "compiles": 3, "reused": 1, "written": 0}
    assert compile_cache.summary(cache.figures()) == "compile cache: 1 of 3 compiles reused"
    silent = CompileCache(str(tmp_path))
    silent.counting = True  # the CPU backend of a release before its cache supported it: no event, no entry
    assert silent.figures()["why"].startswith("not supported here: this jax compiled without consulting")


def test_each_jaxlib_build_and_backend_has_its_own_folder(tmp_path: Path) -> None:
    def folder(**versions: str) -> Path | None:
        return compile_cache_dir(tmp_path / "jax-envs", Environment(Path("python"), versions, "reused"), "cpu")

    release = folder(jax="0.5.2", jaxlib="0.5.1", numpy="2.2.0")
    assert release is not None
    assert release.parent == tmp_path / "compile-cache"
    assert folder(jax="0.5.2.dev20250201+f93c2a1aa", jaxlib="0.5.1", numpy="2.1.0") == release  # commits share it
    assert folder(jax="0.5.3", jaxlib="0.5.3") != release
    cuda = compile_cache_dir(tmp_path, Environment(Path("python"), {"jaxlib": "0.5.1"}, "reused"), "cuda")
    assert cuda is not None
    assert cuda.name.startswith("cuda-")
    assert cuda.name != release.name
    assert folder(jax="0.5.2") is None  # no jaxlib to key it by: nothing cached


# --------------------------------------------------------------------------
# Real releases


def env_python(version: str) -> Path:
    return release_python(version)  # built here first where it is not (the integration lane installs releases)


def scaling(python: Path, out: Path, cache: Path | None, *flags: str, pythonpath: tuple[Path, ...] = ()) -> Any:
    env = {k: v for k, v in os.environ.items() if k != compile_cache.ENV}
    env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), str(REPO)])
    if cache is not None:
        env[compile_cache.ENV] = str(cache)
    subprocess.run([str(python), "-m", "repro.scaling", "--out", str(out), *SMALL, *flags], env=env, check=True,
                   capture_output=True, timeout=600)
    return json.loads(out.read_text())


def answer(result: Any) -> Any:
    """What a run decides and the HLO figures it rests on (every program's digest included), without timings."""
    evidence = result["evidence"]
    return (result["verdict"], evidence["structure"], evidence["positive_control"], evidence["summary"]["lu_fed_by"])


@pytest.mark.integration
@pytest.mark.parametrize("version", ["0.4.30", "0.6.0", "0.10.2"])
def test_a_run_with_reused_compiles_reads_the_same_hlo_as_one_without(tmp_path: Path, version: str) -> None:
    """0.10.2 reads cached executables back with their source metadata renumbered: the program is the same."""
    python = env_python(version)
    uncached = scaling(python, tmp_path / "uncached.json", None)
    cold = scaling(python, tmp_path / "cold.json", tmp_path / "cache", "--repeats", "0", "--warmup", "0")
    warm = scaling(python, tmp_path / "warm.json", tmp_path / "cache", "--repeats", "0", "--warmup", "0")
    assert answer(uncached) == answer(cold) == answer(warm)
    assert uncached["evidence"]["compile_cache"] == {"used": False, "why": "not asked for"}
    # Cold, only a program met twice in one run is reused (the same small jit of jax.random, say).
    assert cold["evidence"]["compile_cache"]["reused"] < cold["evidence"]["compile_cache"]["compiles"]
    figures = warm["evidence"]["compile_cache"]
    assert figures["reused"] == figures["compiles"] == cold["evidence"]["compile_cache"]["compiles"]
    assert all(timing["runs"] == 0 for timing in warm["evidence"]["timings"])  # --repeats 0 timed nothing


@pytest.mark.integration
def test_an_old_release_without_a_cpu_cache_says_so_and_answers_the_same(tmp_path: Path) -> None:
    python = env_python("0.4.20")  # its persistent cache serves TPUs and GPUs only
    uncached = scaling(python, tmp_path / "uncached.json", None, "--repeats", "0")
    asked = scaling(python, tmp_path / "asked.json", tmp_path / "cache", "--repeats", "0")
    assert answer(uncached) == answer(asked)
    assert asked["evidence"]["compile_cache"]["used"] is False
    assert asked["evidence"]["compile_cache"]["why"].startswith("not supported here")


@pytest.mark.integration
def test_over_a_commit_range_where_the_lowering_changes_a_cache_never_answers_for_another_program(
        tmp_path: Path) -> None:
    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    python = env_python("0.5.2")  # jaxlib 0.5.1: the build the fix's commits run on
    history = History(Path(clone), "--jax-repo")
    base = Environment(python, {"jax": "0.5.2", "jaxlib": "0.5.1"}, "reused")
    for commit, name in ((f"{FIX}^", "before"), (FIX, "fix")):
        lay_over(history, commit, python, tmp_path / name, "0.5.2")
    before, fix = (overlaid(base, tmp_path / name, "0.5.2") for name in ("before", "fix"))
    cache = tmp_path / "cache"
    untimed = ("--repeats", "0", "--warmup", "0")
    replicated = scaling(python, tmp_path / "before.json", cache, *untimed, pythonpath=before.pythonpath)
    cached = scaling(python, tmp_path / "fix-cached.json", cache, *untimed, pythonpath=fix.pythonpath)
    fresh = scaling(python, tmp_path / "fix-fresh.json", None, *untimed, pythonpath=fix.pythonpath)
    assert (replicated["verdict"], cached["verdict"]) == ("affected", "unaffected")
    assert answer(cached) == answer(fresh)
    programs = {(s["loss"], s["devices"]): s["program"] for s in replicated["evidence"]["structure"]}
    changed = [s for s in cached["evidence"]["structure"] if programs[(s["loss"], s["devices"])] != s["program"]]
    # The fix lowers slogdet differently (its LU gets partitioned); the control's programs are the same.
    assert {s["loss"] for s in changed} == {"slogdet"}
    assert ("slogdet", 2) in [(s["loss"], s["devices"]) for s in changed]
    figures = cached["evidence"]["compile_cache"]
    assert 0 < figures["reused"] < figures["compiles"]  # the unchanged programs came from the cache, the rest did not
