"""kit/run/compile_cache.py: the compile-cache folder a run is given, and the variable that names it.

tests/test_repro_compile_cache.py checks that commits share a build's folder, that jax's own version and numpy
do not split it, and the CUDA backend; here are the GPU plugins, the spellings of a package name, and the
variable handed to the repro.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.install.environment import Environment
from kit.run.compile_cache import compile_cache_dir, compile_cache_env
from repro.compile_cache import ENV


def folder(envs: Path, backend: str = "cuda", **pins: str) -> Path | None:
    return compile_cache_dir(envs, Environment(Path("python"), pins, "reused"), backend)


def test_a_gpu_plugin_of_another_version_is_another_build(tmp_path: Path) -> None:
    # The plugin holds the compiled GPU code: an executable built with one plugin must not be handed to another.
    base = folder(tmp_path, jaxlib="0.5.1", **{"jax-cuda12-plugin": "0.5.1", "jax-cuda12-pjrt": "0.5.1"})
    assert base is not None
    assert folder(tmp_path, jaxlib="0.5.1", **{"jax-cuda12-plugin": "0.5.2", "jax-cuda12-pjrt": "0.5.1"}) != base
    assert folder(tmp_path, jaxlib="0.5.1", **{"jax-cuda12-plugin": "0.5.1", "jax-cuda12-pjrt": "0.5.2"}) != base
    assert folder(tmp_path, jaxlib="0.5.1", **{"jax_cuda12_plugin": "0.5.1", "jax_cuda12_pjrt": "0.5.1"}) is not None
    assert folder(tmp_path, backend="tpu", jaxlib="0.5.1", libtpu="0.0.9") != folder(tmp_path, backend="tpu",
                                                                                     jaxlib="0.5.1", libtpu="0.0.10")


def test_packages_that_are_not_the_compiled_part_do_not_split_the_folder(tmp_path: Path) -> None:
    # A name that merely starts like a plugin (jax-cuda-tools, jaxtyping) is no build: matching it would give each
    # environment its own folder for nothing.
    base = folder(tmp_path, jaxlib="0.5.1")
    assert folder(tmp_path, jaxlib="0.5.1", jaxtyping="0.2.36", flax="0.10.2", **{"jax-cuda12-tools": "1"}) == base


def test_a_jaxlib_spelt_in_capitals_still_keys_the_folder(tmp_path: Path) -> None:
    made = folder(tmp_path, backend="cpu", JaxLib="0.5.1")
    assert made is not None
    assert made.name.startswith("cpu-jaxlib-0.5.1-")


def test_the_variable_names_the_folder_absolute_and_is_left_out_without_a_jaxlib(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = Environment(Path("python"), {"jax": "0.5.1", "jaxlib": "0.5.1"}, "reused")
    named = compile_cache_env(Path("relative/jax-envs"), env, "cpu")
    # The repro runs in another working folder: a relative path would put its cache somewhere else.
    assert list(named) == [ENV]
    assert os.path.isabs(named[ENV])
    assert Path(named[ENV]).parent == tmp_path / "relative" / "compile-cache"
    assert compile_cache_env(tmp_path, Environment(Path("python"), {"jax": "0.5.1"}, "reused"), "cpu") == {}
