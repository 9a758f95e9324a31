"""repro/scaling_target.py and the scaling repro's target mode, the parts that need no JAX.

Which slice a single real TPU chip compiles for is tested with fake device kinds (no TPU here); the TPU
compiler's own HLO is in tests/fixtures/hlo/tpu (tests/test_repro_hlo.py), and a whole run compiled for
TPU v5e 2x2 is in tests/test_target_integration.py.
"""

from __future__ import annotations

import json
import types

import pytest

from kit.targets import parse_target
from repro import scaling_target, scaling, scaling_setup, tpu_slices
from repro.parameters import target_of

V5E = parse_target("tpu:v5e:2x2").to_json()


@pytest.mark.parametrize("kind", sorted(tpu_slices.SLICE_OF_KIND))
def test_each_chip_kinds_slice_is_the_kits_target_of_that_name(kind: str) -> None:
    slice_ = scaling_target.single_chip_slice("tpu", kind, 1)
    assert slice_ == parse_target(slice_["name"]).to_json()  # one table (repro/tpu_slices.py), read by both halves


@pytest.mark.parametrize(("kind", "name"), [("TPU v5 lite", "tpu:v5e:2x2"), ("TPU v6 lite", "tpu:v6e:2x2"),
                                            ("TPU v4", "tpu:v4:2x2x1"), ("TPU v5", "tpu:v5p:2x2x1")])
def test_a_single_chip_compiles_for_its_own_kinds_four_chips(kind: str, name: str) -> None:
    assert scaling_target.single_chip_slice("tpu", kind, 1)["name"] == name


@pytest.mark.parametrize(("backend", "kind", "count"), [
    ("tpu", "TPU v5 lite", 4),  # a slice: it measures its own devices
    ("tpu", "TPU v9 giant", 1),  # a kind nobody mapped: no guessed topology
    ("cpu", "cpu", 1),
    ("gpu", "NVIDIA H100", 1),
])
def test_anything_but_one_known_tpu_chip_runs_as_it_would(backend: str, kind: str, count: int) -> None:
    assert scaling_target.single_chip_slice(backend, kind, count) is None


def test_every_reason_says_what_it_was_compiled_for_and_that_it_did_not_run() -> None:
    asked = scaling_target.judged_reason("jit forward: Every device factorises the whole batch.", V5E)
    assert asked.endswith("The verdict is from the target compiler's HLO: compiled for TPU v5e 2x2 (4 devices), "
                          "not run.")
    single = scaling_target.judged_reason("jit forward: ...", V5E, single_chip="TPU v5 lite")
    assert "This machine has one TPU v5 lite chip" in single
    assert "compiled for TPU v5e 2x2 (4 devices), not run" in single


def _setup(environment: dict) -> scaling.Setup:
    jax = types.SimpleNamespace(devices=lambda: [object()] * environment["device_count"])
    return scaling.Setup(jax, None, {"jax": "0.12.0.1", **environment}, 1, None, [])


def test_one_real_tpu_chip_turns_the_run_into_a_compile_for_its_2x2_and_says_why() -> None:
    setup = _setup({"backend": "tpu", "device_kind": "TPU v5 lite", "device_count": 1})
    scaling_setup.single_chip_target(setup)
    assert setup.target == V5E
    assert setup.single_chip == "TPU v5 lite"
    assert setup.notes == ["this machine has one TPU v5 lite chip, and one device cannot show replication: "
                           "compiled for TPU v5e 2x2 (4 devices), not run (tpu:v5e:2x2)"]


def test_a_cpu_run_is_left_alone() -> None:
    setup = _setup({"backend": "cpu", "device_kind": "cpu", "device_count": 4})
    scaling_setup.single_chip_target(setup)
    assert setup.target is None and setup.notes == []


def test_in_target_mode_the_counts_come_from_the_targets_devices_not_this_machines() -> None:
    setup = _setup({"backend": "cpu", "device_kind": "cpu", "device_count": 1})
    setup.target, setup.compile_only = V5E, [object()] * 4
    assert scaling_setup.device_counts(setup, {"devices": [1, 2, 4, 8]}) == [1, 2, 4]
    assert setup.notes == ["requested [8] devices but only 4 exist on TPU v5e 2x2 (4 devices); measured [1, 2, 4]"]


def test_a_target_the_release_cannot_compile_for_is_inconclusive_never_unaffected() -> None:
    setup = _setup({"backend": "cpu", "device_kind": "cpu", "device_count": 1})
    setup.target = V5E
    outcome = scaling_setup.cannot_compile_for(setup, {"devices": [1, 2, 4]}, "ImportError: no libtpu")
    result = outcome["result"]
    assert result["verdict"] == "inconclusive"
    assert result["reason"] == ("This release cannot compile for TPU v5e 2x2 (4 devices) here (ImportError: no libtpu), "
                                "so nothing was compiled or run for it and the check does not apply.")
    assert result["environment"]["compiled_for"] == "TPU v5e 2x2 (4 devices)"


def test_the_repro_reads_the_target_the_kit_writes() -> None:
    text = json.dumps(V5E)
    assert target_of(text) == V5E
    out, parameters = scaling.parse_parameters(["--out", "r.json", "--target", text])
    assert target_of(parameters["target"]) == V5E


def test_a_release_that_cannot_compile_for_the_target_prints_its_reason_not_a_crash() -> None:
    """The summary of a run that compiled nothing (no positive control in its evidence) says why, where it
    raised KeyError and the run was recorded as crashed."""
    from repro import scaling_figures

    target = tpu_slices.slice_json("v5e:2x2")
    result = scaling_target.cannot_compile_result(target, "NotImplementedError: topology not implemented for cuda",
                                                  {"jax": "0.6.0", "backend": "cpu"}, {}, [])
    text = scaling_figures.human_summary(result, [], [])
    assert text.splitlines()[-1].startswith("  nothing compiled: This release cannot compile for TPU v5e 2x2")
