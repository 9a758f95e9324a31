"""repro.parameters: one set of rules for the kit (before any install) and the repros."""

from __future__ import annotations

from typing import Any

import pytest

from repro import parameters
from repro.parameters import DEFAULTS, parse_value, problems


@pytest.mark.parametrize(
    "check, given, broken",
    [
        ("scaling", {"devices": [3]}, "--batch 4096 does not split evenly over 3 devices"),
        ("scaling", {"devices": [1, 3, 6], "batch": 4096}, "over 3,6 devices"),
        ("scaling", {"devices": []}, "--devices '' is not valid: it must be a non-empty list"),
        ("scaling", {"repeats": 0}, "--repeats 0 is not valid: it must be a positive integer"),
        ("scaling", {"modes": ["pmap"]}, "--modes pmap is not valid: it must be some of jit,shard_map"),
        ("correctness", {"batches": 200000000}, "--batches 200000000 is not valid"),
        ("correctness", {"samples": -1}, "--samples -1 is not valid: it must be a non-negative integer"),
        ("correctness", {"max_memory_gb": 0}, "--max-memory-gb 0 is not valid"),
    ],
)
def test_each_broken_rule_is_one_sentence_naming_the_flag(check: str, given: dict[str, Any], broken: str) -> None:
    found = problems(check, {**DEFAULTS[check], **given})
    assert broken in found[0] and all(sentence.count(":") == 1 for sentence in found)


@pytest.mark.parametrize("check", sorted(DEFAULTS))
def test_the_defaults_and_every_preset_pass_their_own_rules(check: str) -> None:
    assert problems(check, DEFAULTS[check]) == []
    for preset in parameters.PRESETS[check].values():
        assert problems(check, {**DEFAULTS[check], **preset}) == []


@pytest.mark.parametrize(
    "check, key, text, value",
    [
        ("correctness", "batches", "200000000", [200000000]),  # one value of a list is a one-element list
        ("correctness", "batches", "200000000,", [200000000]),
        ("correctness", "batches", "auto", "auto"),
        ("scaling", "devices", "4", [4]),
        ("scaling", "hidden", "", []),
        ("scaling", "batch", "4096", 4096),
        ("scaling", "dtype", "float64", "float64"),
    ],
)
def test_flag_text_parses_into_the_shape_matrix_toml_uses(check: str, key: str, text: str, value: Any) -> None:
    assert parse_value(check, key, text) == value


def test_the_repros_use_these_defaults() -> None:
    # The repros import jax only inside functions, so they import here without it.
    from repro import correctness, scaling

    assert scaling.DEFAULTS is DEFAULTS["scaling"] and correctness.DEFAULTS is DEFAULTS["correctness"]


def test_the_repro_refuses_what_the_kit_refuses() -> None:
    from repro import cli as repro_cli
    from repro import scaling

    with pytest.raises(repro_cli.UsageError, match="--batch 4096 does not split evenly over 3 devices"):
        scaling.parse_parameters(["--out", "result.json", "--devices", "3"])


def test_processes_must_share_the_largest_device_count_equally() -> None:
    from repro.parameters import problems

    assert problems("scaling", {"devices": [1, 2, 4], "processes": 2}) == []
    broken = problems("scaling", {"devices": [1, 2, 4], "processes": 3})
    assert broken == ["--processes 3 does not divide the largest device count 4: "
                      "each process gets an equal share of the devices"]
