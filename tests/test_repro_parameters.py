"""repro.parameters: one set of rules for the kit (before any install) and the repros."""

from __future__ import annotations

import math
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
        ("scaling", {"repeats": -1}, "--repeats -1 is not valid: it must be a non-negative integer"),
        ("scaling", {"modes": ["pmap"]}, "--modes pmap is not valid: it must be some of jit,shard_map"),
        ("correctness", {"batches": 200000000}, "--batches 200000000 is not valid"),
        ("correctness", {"samples": -1}, "--samples -1 is not valid: it must be a non-negative integer"),
        ("correctness", {"max_memory_gb": 0}, "--max-memory-gb 0 is not valid"),
    ],
)
def test_each_broken_rule_is_one_sentence_naming_the_flag(check: str, given: dict[str, Any], broken: str) -> None:
    found = problems(check, {**DEFAULTS[check], **given})
    assert broken in found[0]
    assert all(sentence.count(":") == 1 for sentence in found)


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

    assert scaling.DEFAULTS is DEFAULTS["scaling"]
    assert correctness.DEFAULTS is DEFAULTS["correctness"]


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


# --------------------------------------------------------------------------
# The contract between the halves: what the kit writes, the repro reads back unchanged.

from hypothesis import given as given_examples  # noqa: E402
from hypothesis import settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kit.checks import builtin_checks  # noqa: E402
from repro.parameters import RULES, normalise, parse, to_flags  # noqa: E402

_SMALL = st.integers(1, 64)
# A strategy per parameter that is not tied to others; a new rule must add one here.
_FREE = {
    "in_features": _SMALL, "hidden": st.lists(_SMALL, max_size=3), "dtype": st.sampled_from(parameters.DTYPES),
    "repeats": _SMALL, "warmup": st.integers(0, 5), "seed": st.integers(-2**40, 2**40),
    "modes": st.lists(st.sampled_from(parameters.MODES), min_size=1, max_size=3),
    "passes": st.lists(st.sampled_from(parameters.PASSES), min_size=1, max_size=3),
    "matrix_size": _SMALL, "dtypes": st.lists(st.sampled_from(parameters.DTYPES), min_size=1, max_size=3),
    "batches": st.one_of(st.just("auto"), st.lists(st.integers(1, 10**9), min_size=1, max_size=3)),
    "samples": st.integers(0, 10**6), "window": _SMALL,
    "max_memory_gb": st.one_of(st.none(), st.integers(1, 512), st.floats(0.01, 1e4, allow_nan=False)),
    "full_check_max": st.integers(0, 10**7),
    # A target as the kit writes it (kit.targets.Target.to_json as JSON), or none at all.
    "target": st.one_of(st.none(), st.sampled_from([
        '{"name": "tpu:v5e:2x2", "platform": "tpu", "chip": "v5e", "devices": 4, "topology": "v5e:2x2", '
        '"host_bounds": "2,2,1", "description": "", "title": "TPU v5e 2x2 (4 devices)"}',
        '{"name":"gpu:a100:2","platform":"cuda","chip":"a100","devices":2,"topology":"1x2x1","title":"2 NVIDIA A100 GPUs"}',
    ])),
}


@st.composite
def _scaling(draw: Any) -> dict[str, Any]:
    """Valid scaling parameters: every device count splits the batch and the matrix rows, the largest the processes."""
    devices = draw(st.lists(st.integers(1, 8), min_size=1, max_size=4))  # any order, repeats too
    common = math.lcm(*devices)
    largest = max(devices)
    values = {key: draw(strategy) for key, strategy in _FREE.items() if key in RULES["scaling"]}
    if values.get("target") is None:  # absent, not None: the rule has no default (the run is on this machine)
        values.pop("target", None)
    values.update(devices=devices, batch=common * draw(st.integers(1, 64)),
                  matrix_size=common * draw(st.integers(1, 4)),
                  processes=draw(st.sampled_from([p for p in range(1, largest + 1) if largest % p == 0])))
    if "target" in values:
        values["processes"] = 1  # a target is compiled for in one process
    return values


@st.composite
def _correctness(draw: Any) -> dict[str, Any]:
    return {key: draw(strategy) for key, strategy in _FREE.items() if key in RULES["correctness"]}


def _shares_scalings_rules(check: str) -> Any:
    """A registered check made of scaling's rules (kit/checks): scaling's valid parameters, its keys kept."""
    assert all(RULES[check][key] is RULES["scaling"][key] for key in RULES[check]), \
        f"{check} has rules of its own: give it a strategy here"
    return _scaling().map(lambda values: {key: value for key, value in values.items() if key in RULES[check]})


builtin_checks()  # every built-in check has registered its parameters, whichever tests ran first in this process
CHECKS = {"scaling": _scaling(), "correctness": _correctness(),
          **{check: _shares_scalings_rules(check) for check in sorted(RULES) if check not in ("scaling", "correctness")}}


def test_every_check_and_every_parameter_has_a_strategy() -> None:
    assert set(CHECKS) == set(RULES)
    assert set(RULES["scaling"]) - set(_FREE) == {"devices", "batch", "processes"}
    assert set(RULES["correctness"]) <= set(_FREE)


@pytest.mark.parametrize("check", sorted(CHECKS))
@settings(max_examples=200, deadline=None)
@given_examples(data=st.data())
def test_the_repro_reads_back_exactly_what_the_kit_writes(check: str, data: Any) -> None:
    written = data.draw(CHECKS[check])
    normal = normalise(check, written)
    assert problems(check, normal) == []
    assert normalise(check, normal) == normal  # one spelling: normalising twice changes nothing
    assert parse(check, to_flags(normal)) == normal
    assert parse(check, to_flags(written)) == normal  # what the repro runs is the normal form, however written


@pytest.mark.parametrize("check", sorted(CHECKS))
@settings(max_examples=50, deadline=None)
@given_examples(data=st.data())
def test_the_repros_own_command_line_agrees(check: str, data: Any) -> None:
    import importlib

    from repro.cli import checked_parameters, parser

    normal = normalise(check, data.draw(CHECKS[check]))
    repro = importlib.import_module(builtin_checks()[check].repro)  # it registers its own parameters, as it starts
    argv = ["--out", "result.json", *to_flags(normal)]
    out, parsed = (repro.parse_parameters(argv) if hasattr(repro, "parse_parameters")
                   else checked_parameters(check, parser(check, ""), argv))
    assert out == "result.json"
    assert parsed == {**normal, "preset": None}


def test_devices_in_any_order_are_one_value() -> None:
    assert parse_value("scaling", "devices", "4,2,1,2") == [1, 2, 4]
    assert normalise("scaling", {"devices": [4, 2, 1]}) == {"devices": [1, 2, 4]}
    assert normalise("scaling", {"devices": [4, "x"]}) == {"devices": [4, "x"]}  # left for problems() to name


def test_a_positive_control_that_cannot_split_the_matrix_rows_is_refused() -> None:
    # Once accepted, then the positive control's ValueError blamed the release.
    broken = problems("scaling", {**DEFAULTS["scaling"], "devices": [1, 3], "batch": 4095})
    assert broken == ["--matrix-size 32 does not split evenly over 3 devices: the positive control splits each "
                      "matrix's rows over the devices, so each device count must divide the matrix size"]


def test_a_target_is_the_kits_json_in_one_spelling() -> None:
    spaced = '{"title": "TPU v5e 2x2 (4 devices)", "name": "tpu:v5e:2x2", "platform": "tpu", "chip": "v5e", ' \
             '"devices": 4, "topology": "v5e:2x2", "host_bounds": "2,2,1"}'
    value = parse_value("scaling", "target", spaced)
    assert value == ('{"chip":"v5e","devices":4,"host_bounds":"2,2,1","name":"tpu:v5e:2x2","platform":"tpu",'
                     '"title":"TPU v5e 2x2 (4 devices)","topology":"v5e:2x2"}')
    assert parameters.target_of(value)["topology"] == "v5e:2x2"
    assert parameters.target_of(None) is None


@pytest.mark.parametrize("text", ["tpu:v5e:2x2", "{}", '{"name": "x"}', "[1]",
                                  '{"name":"a","platform":"tpu","chip":"v5e","devices":0,"topology":"t","title":"T"}'])
def test_anything_but_a_targets_json_is_refused_with_what_the_kit_takes(text: str) -> None:
    found = problems("scaling", {"target": parse_value("scaling", "target", text)})
    assert len(found) == 1 and found[0].startswith("--target ")
    assert "the kit's --target takes a name such as tpu:v5e:2x2" in found[0]


def test_a_target_is_compiled_for_in_one_process() -> None:
    target = '{"name":"a","platform":"tpu","chip":"v5e","devices":4,"topology":"t","title":"T"}'
    assert problems("scaling", {"devices": [1, 2], "processes": 2, "target": target}) == [
        "--processes 2 with --target: a target is compiled for in one process, nothing runs"]
