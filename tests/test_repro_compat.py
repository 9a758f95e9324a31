"""repro.compat: each helper picks what the JAX at hand has, by asking it, never by its version.

The suite has no JAX (the integration tests run the repros in real releases),
so each test hands compat a stand-in ``jax`` shaped like an old or a new
release: the attributes and signatures compat feature-tests, nothing more.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import repro


class Mesh:
    def __init__(self, devices: Any, axis_names: tuple[str, ...]) -> None:
        self.devices, self.axis_names = devices, axis_names


def shard_map_new(f: Callable[..., Any], *, mesh: Any, in_specs: Any, out_specs: Any, check_vma: bool = True) -> Any:
    return ("jax.shard_map", f, mesh, in_specs, out_specs, {"check_vma": check_vma})


def shard_map_old(f: Callable[..., Any], mesh: Any, in_specs: Any, out_specs: Any, check_rep: bool = True) -> Any:
    return ("experimental", f, mesh, in_specs, out_specs, {"check_rep": check_rep})


def shard_map_plain(f: Callable[..., Any], *, mesh: Any, in_specs: Any, out_specs: Any) -> Any:
    return ("plain", f, mesh, in_specs, out_specs, {})


def fake_jax(*, public_shard_map: Callable[..., Any] | None = None,
             experimental_shard_map: Callable[..., Any] = shard_map_old, typed_keys: bool = True,
             public_block: bool = True) -> dict[str, types.ModuleType]:
    """The modules ``import jax`` and ``from jax.sharding import Mesh`` would find, as one release has them."""
    jax = types.ModuleType("jax")
    sharding = types.ModuleType("jax.sharding")
    sharding.Mesh = Mesh  # type: ignore[attr-defined]
    experimental = types.ModuleType("jax.experimental")
    shard_map_module = types.ModuleType("jax.experimental.shard_map")
    shard_map_module.shard_map = experimental_shard_map  # type: ignore[attr-defined]
    random = types.ModuleType("jax.random")
    random.PRNGKey = lambda seed: ("raw uint32 key", seed)  # type: ignore[attr-defined]
    if typed_keys:
        random.key = lambda seed: ("typed key", seed)  # type: ignore[attr-defined]
    tree_util = types.ModuleType("jax.tree_util")
    tree_util.tree_leaves = lambda tree: list(tree)  # type: ignore[attr-defined]
    jax.sharding, jax.random, jax.tree_util, jax.experimental = sharding, random, tree_util, experimental  # type: ignore[attr-defined]
    experimental.shard_map = shard_map_module  # type: ignore[attr-defined]
    if public_shard_map is not None:
        jax.shard_map = public_shard_map  # type: ignore[attr-defined]
    if public_block:
        jax.block_until_ready = lambda tree: ("blocked", tree)  # type: ignore[attr-defined]
    return {"jax": jax, "jax.sharding": sharding, "jax.experimental": experimental,
            "jax.experimental.shard_map": shard_map_module, "jax.random": random, "jax.tree_util": tree_util}


@pytest.fixture
def compat_with(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """``compat_with(**fake_jax options)``: repro.compat imported afresh against that stand-in."""
    original = sys.modules.get("repro.compat")

    def load(**options: Any) -> Any:
        for name, module in fake_jax(**options).items():
            monkeypatch.setitem(sys.modules, name, module)
        sys.modules.pop("repro.compat", None)
        return importlib.import_module("repro.compat")

    yield load
    sys.modules.pop("repro.compat", None)  # never leave a compat bound to a stand-in behind
    if original is not None:
        sys.modules["repro.compat"] = original
        repro.compat = original  # type: ignore[attr-defined]
    elif hasattr(repro, "compat"):
        delattr(repro, "compat")


def test_new_releases_get_the_public_shard_map_with_check_vma_off(compat_with: Callable[..., Any]) -> None:
    compat = compat_with(public_shard_map=shard_map_new)
    called = compat.shard_map(len, "mesh", in_specs=("P()",), out_specs="P()")
    assert called == ("jax.shard_map", len, "mesh", ("P()",), "P()", {"check_vma": False})
    assert compat.shard_map_location() == "jax.shard_map(check_vma=False)"


def test_old_releases_get_the_experimental_shard_map_with_check_rep_off(compat_with: Callable[..., Any]) -> None:
    compat = compat_with()
    assert compat.shard_map(len, "mesh", in_specs=(), out_specs=())[-1] == {"check_rep": False}
    assert compat.shard_map_location() == "jax.experimental.shard_map.shard_map(check_rep=False)"


def test_a_shard_map_without_a_replication_check_is_called_without_one(compat_with: Callable[..., Any]) -> None:
    compat = compat_with(public_shard_map=shard_map_plain)
    assert compat.shard_map(len, "mesh", in_specs=(), out_specs=())[-1] == {}
    assert compat.shard_map_location() == "jax.shard_map"
    # A callable whose signature cannot be read (a C extension's, say) gets no keyword either.
    assert compat._replication_check_keyword(iter) is None


def test_keys_are_typed_where_jax_random_key_exists(compat_with: Callable[..., Any]) -> None:
    assert compat_with().random_key(7) == ("typed key", 7)
    assert compat_with(typed_keys=False).random_key(7) == ("raw uint32 key", 7)


class Leaf:
    def __init__(self) -> None:
        self.waited = False

    def block_until_ready(self) -> None:
        self.waited = True


def test_waiting_uses_jax_block_until_ready_or_each_leaf(compat_with: Callable[..., Any]) -> None:
    tree = [Leaf(), Leaf(), 3.0]
    assert compat_with().block_until_ready(tree) == ("blocked", tree)
    assert not any(leaf.waited for leaf in tree[:2])
    assert compat_with(public_block=False).block_until_ready(tree) is tree
    assert all(leaf.waited for leaf in tree[:2])  # and the float, which has nothing to wait for, is passed over


class Compiled:
    def __init__(self, analysis: Any = None, text: Any = "HloModule m") -> None:
        self.analysis, self.text = analysis, text

    def cost_analysis(self) -> Any:
        if isinstance(self.analysis, Exception):
            raise self.analysis
        return self.analysis

    def as_text(self) -> Any:
        return self.text


@pytest.mark.parametrize(("analysis", "flat"), [
    ({"flops": 12.0, "bytes accessed": "64", "utilization": "n/a"}, {"flops": 12.0, "bytes accessed": 64.0}),
    ([{"flops": 3}], {"flops": 3.0}),  # old releases: a list of one dict
    ([], {}),
    (None, {}),
    (RuntimeError("UNIMPLEMENTED: cost analysis"), {}),
])
def test_cost_analysis_is_one_flat_dict_of_numbers_or_nothing(compat_with: Callable[..., Any], analysis: Any,
                                                              flat: dict[str, float]) -> None:
    assert compat_with().cost_analysis(Compiled(analysis)) == flat


def test_hlo_text_of_several_modules_is_joined(compat_with: Callable[..., Any]) -> None:
    compat = compat_with()
    assert compat.compiled_hlo_text(Compiled(text="HloModule one")) == "HloModule one"
    assert compat.compiled_hlo_text(Compiled(text=["HloModule a", "HloModule b"])) == "HloModule a\nHloModule b"


def test_the_batch_mesh_keeps_the_devices_in_the_order_given(compat_with: Callable[..., Any]) -> None:
    mesh = compat_with().batch_mesh(["cpu:3", "cpu:1"])
    assert mesh.axis_names == ("batch",)
    assert isinstance(mesh.devices, np.ndarray)
    assert list(mesh.devices) == ["cpu:3", "cpu:1"]


class _Analysis:
    """What ``compiled.memory_analysis()`` returns in the releases that have it (a CompiledMemoryStats)."""

    def __init__(self, temp: Any, argument: Any = 2 * 2**30, output: Any = 256 * 2**10) -> None:
        self.temp_size_in_bytes, self.argument_size_in_bytes, self.output_size_in_bytes = temp, argument, output


class _Unimplemented:
    def memory_analysis(self) -> Any:
        raise RuntimeError("UNIMPLEMENTED: memory analysis")


class _Analysed:
    def __init__(self, analysis: Any) -> None:
        self.analysis = analysis

    def memory_analysis(self) -> Any:
        return self.analysis


@pytest.mark.parametrize("compiled, need", [
    (_Analysed(_Analysis(4 * 2**30)), 6 * 2**30 + 256 * 2**10),  # a v5e's 128×128 float32 past 2**31 bytes
    (_Analysed([_Analysis(1, 2, 3)]), 6),  # a list of one module
    (_Analysed(None), None),
    (_Analysed(_Analysis(None)), None),  # a field the release leaves empty
    (_Analysed(object()), None),  # no fields at all
    (_Unimplemented(), None),
    (object(), None),  # no memory_analysis method
])
def test_memory_analysis_bytes_is_temporaries_arguments_and_outputs_or_nothing(
        compat_with: Callable[..., Any], compiled: Any, need: int | None) -> None:
    assert compat_with().memory_analysis_bytes(compiled) == need
