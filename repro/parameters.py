"""Each check's parameters: defaults, presets, the shape of each value, and the limits.

One set of rules for both halves, and the one road a parameter takes:

* `parse_value` turns a flag's text into the value matrix.toml would hold
  (lists stay lists even with one item), already in its normal form
  (`normalise`: device counts sorted and de-duplicated);
* `problems` says, one sentence each, what breaks a rule, including the rules
  between values (every device count must split the batch and the matrix);
* `to_flags` writes parameters as the repro's command line, and
  `add_flags` builds that command line's parser, so
  ``parse(to_flags(p)) == p`` for every valid ``p`` (tests/test_repro_parameters.py).

The kit (in nox's process) parses and checks matrix.toml and its own command
line with these once, where they enter, before it resolves or installs
anything; the repros (inside each JAX environment) check what they were given
with the same rules, so a value the repro would refuse is refused in seconds,
with nothing installed and no record written. Standard library only, Python 3.9+.

A rule breaks as one sentence naming the flag (``--devices``) and what it needs.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Sequence, Tuple

DTYPES = ("float32", "float64")
CORRECTNESS_DTYPES = DTYPES + ("complex64",)
"""complex64 too: with float32 the only types XLA's LU takes on TPU, where float64 cannot run."""
MODES = ("jit", "shard_map")
PASSES = ("forward", "grad")

MAX_HOST_DEVICES = 4096
"""The most CPU devices a run may force (a script check's ``host_devices``): XLA makes each one, and
``host_devices = 100000000`` was taken, then every check ground on making them."""


def _as_is(value: Any) -> Any:
    return value


class Rule(NamedTuple):
    """What one parameter's value must be: a test, the words for it, whether it is a list, its normal form."""

    valid: Callable[[Any], bool]
    expected: str
    is_list: bool = False
    normal: Callable[[Any], Any] = _as_is
    """The one spelling of a valid value (applied after `valid` passed)."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _pos_int(v: Any) -> bool:
    return _is_int(v) and v > 0


def _non_negative_int(v: Any) -> bool:
    return _is_int(v) and v >= 0


def _pos_int_list(v: Any) -> bool:
    return isinstance(v, list) and all(_pos_int(x) for x in v)


def _some_of(allowed: Tuple[str, ...]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and len(v) > 0 and all(x in allowed for x in v)


def _pos_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _sorted_unique(values: List[int]) -> List[int]:
    # The repro measures each count once, smallest first; one spelling means a
    # record of [4, 2, 1] and one of [1, 2, 4] are the same measurement.
    return sorted(set(values))


# What a target names (`kit.targets.Target.to_json`): the repro needs these to find its compile-only devices
# (`repro.target_devices`) and to say what it compiled for.
TARGET_FIELDS = ("name", "platform", "chip", "devices", "topology", "title")


def target_of(value: Any) -> Dict[str, Any] | None:
    """The ``target`` parameter as a dict, None where it names none; ValueError where it is not a target.

    The kit passes `kit.targets.Target.to_json` as JSON text (``--target`` on the kit's command line takes the
    name, ``tpu:v5e:2x2``, and `kit.targets` resolves it): the repro imports nothing of the kit, and the text
    carries what it needs (the topology, the device count, the title a verdict quotes).
    """
    if value is None or value == "":
        return None
    data = json.loads(value) if isinstance(value, str) else None
    if not isinstance(data, dict) or any(key not in data for key in TARGET_FIELDS):
        raise ValueError(f"not a target's JSON: {value!r}")
    if not _pos_int(data["devices"]):
        raise ValueError(f"a target's devices must be a positive integer: {data['devices']!r}")
    return data


def _is_target(value: Any) -> bool:
    try:
        return target_of(value) is not None
    except ValueError:
        return False


def _target_text(value: Any) -> str:
    return target_text(target_of(value) or {})


def target_text(target: Mapping[str, Any]) -> str:
    """A target's JSON as the ``target`` parameter spells it (a record's parameters, the repro's ``--target``): one
    spelling (keys sorted, no spaces), so the same target read from a record or a flag is one value."""
    return json.dumps(dict(target), sort_keys=True, separators=(",", ":"))


RULES: Dict[str, Dict[str, Rule]] = {
    "scaling": {
        "devices": Rule(lambda v: _pos_int_list(v) and len(v) > 0,
                        "a non-empty list of device counts, e.g. 1,2,4", True, _sorted_unique),
        "batch": Rule(_pos_int, "a positive integer"),
        "matrix_size": Rule(_pos_int, "a positive integer"),
        "in_features": Rule(_pos_int, "a positive integer"),
        "hidden": Rule(_pos_int_list, "a list of layer widths, e.g. 8192,8192 (empty for none)", True),
        "dtype": Rule(lambda v: v in DTYPES, "one of float32, float64"),
        # 0 times nothing: the compiled HLO alone (what decides where timing is not weighed, `untimed`).
        "repeats": Rule(_non_negative_int, "a non-negative integer (0 reads the compiled HLO and times nothing)"),
        "warmup": Rule(_non_negative_int, "a non-negative integer"),
        "modes": Rule(_some_of(MODES), "some of jit,shard_map", True),
        "passes": Rule(_some_of(PASSES), "some of forward,grad", True),
        "seed": Rule(_is_int, "an integer"),
        "processes": Rule(_pos_int, "a positive integer (processes joined by jax.distributed)"),
        # No default: absent, the check runs on this machine's devices; given, it compiles for the target's
        # compile-only devices and runs nothing (repro/scaling.py). The kit's --target takes a name.
        "target": Rule(_is_target, "a target's JSON (kit.targets.Target.to_json); the kit's --target takes a "
                                   "name such as tpu:v5e:2x2", normal=_target_text),
    },
    "correctness": {
        "matrix_size": Rule(_pos_int, "a positive integer"),
        "dtypes": Rule(_some_of(CORRECTNESS_DTYPES), "some of float32,float64,complex64", True),
        "batches": Rule(lambda v: v == "auto" or (_pos_int_list(v) and len(v) > 0),
                        '"auto" or a list of positive batch sizes, e.g. 1500000', True),
        "samples": Rule(_non_negative_int, "a non-negative integer"),
        "window": Rule(_pos_int, "a positive integer"),
        "seed": Rule(_is_int, "an integer"),
        "max_memory_gb": Rule(lambda v: v is None or _pos_number(v), "a positive number of GiB"),
        "full_check_max": Rule(_non_negative_int, "a non-negative batch size"),
    },
}

DEFAULTS: Dict[str, Dict[str, Any]] = {
    "scaling": {
        # Sized so one CPU run takes seconds on a 2-core machine.
        "devices": [1, 2, 4],
        "batch": 4096,
        "matrix_size": 32,
        "in_features": 64,
        "hidden": [],
        "dtype": "float32",
        "repeats": 7,
        "warmup": 2,
        "modes": ["jit", "shard_map"],
        # grad is opt-in: slogdet's backward pass on CPU takes seconds per call in
        # newer releases (batched triangular solves), minutes for a full sweep.
        "passes": ["forward"],
        "seed": 0,
        # More than 1: the kit starts this many copies joined by jax.distributed,
        # each with an equal share of the devices (repro/distributed.py).
        "processes": 1,
    },
    "correctness": {
        "matrix_size": 20,
        "dtypes": ["float32", "float64"],
        "batches": "auto",
        "samples": 2000,
        "window": 64,
        "seed": 0,
        "max_memory_gb": None,
        # Checking every entry costs ~10 µs per matrix on the host; batches up to
        # this size are checked in full, larger ones by windows and samples.
        "full_check_max": 400_000,
    },
}

PRESETS: Dict[str, Dict[str, Dict[str, Any]]] = {
    "scaling": {
        # The thread's full GPU workload (layer_sizes 784, 8192×3, 32*32; batch 8192).
        # The thread timed both the loss and its gradient.
        "thread": {"in_features": 784, "hidden": [8192, 8192, 8192], "matrix_size": 32, "batch": 8192,
                   "passes": ["forward", "grad"]},
    },
    "correctness": {
        # The shape reported in jax#24843: jax.random.normal(key, (1500000, 20, 20)).
        "issue-24843": {"matrix_size": 20, "dtypes": ["float32"], "batches": [1_500_000]},
        # One TPU chip (a v5e's 15.7 GiB): both LU types it takes, at the tile's size, where 2**31 bytes of
        # float32 needs 6 GiB on the chip (20×20 needed 34 GiB, padded to 128 lanes); the batches are sized
        # to the chip's free memory (repro/correctness_plan.py, size_to_chip).
        "tpu": {"matrix_size": 128, "dtypes": ["float32", "complex64"], "samples": 500, "full_check_max": 0},
    },
}

def timing_weighed(check: str, backend: str) -> bool:
    """Can timing change ``check``'s verdict on ``backend``? Only scaling's, and not on CPU.

    Forced host CPU devices all run on the same cores, so there the scaling
    verdict rests on the compiled HLO alone (`repro.verdicts.scaling_verdict`
    is told so by `repro.scaling`); on a GPU a strong slowdown can veto
    "unaffected". The correctness check times nothing.
    """
    return check == "scaling" and backend != "cpu"


def untimed(check: str, backend: str) -> Dict[str, Any]:
    """The parameters that leave out timings that cannot change ``check``'s verdict on ``backend``; {} for none.

    A bisect probe asks for the verdict, not the timing table (the matrix keeps
    that): on CPU a scaling probe compiles and reads the HLO, and times nothing.
    """
    if "repeats" in RULES.get(check, {}) and not timing_weighed(check, backend):
        return {"repeats": 0, "warmup": 0}
    return {}


def flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def shown(value: Any) -> str:
    """A value as it is written on the command line (lists comma-joined)."""
    if isinstance(value, list):
        return ",".join(str(item) for item in value) or "''"
    return str(value)


def normalise(check: str, parameters: Mapping[str, Any]) -> Dict[str, Any]:
    """The parameters with every valid value in its one spelling; invalid ones are left for `problems`."""
    rules = RULES.get(check, {})
    return {key: rules[key].normal(value) if key in rules and rules[key].valid(value) else value
            for key, value in parameters.items()}


def problems(check: str, parameters: Mapping[str, Any]) -> List[str]:
    """Every rule the parameters break, one sentence each; [] when they are fine.

    Keys the check does not know are left to the caller (matrix.toml and the
    command line name them differently); keys that are absent are not checked.
    """
    rules = RULES.get(check, {})
    found = [
        f"{flag(key)} {shown(value)} is not valid: it must be {rules[key].expected}"
        for key, value in parameters.items()
        if key in rules and not rules[key].valid(value)
    ]
    if not found:
        found += _cross_problems(check, parameters)
    return found


def _cross_problems(check: str, parameters: Mapping[str, Any]) -> List[str]:
    """Rules between parameters: a check's own, where it has them (scaling's: `even_split_problems`)."""
    rule = CROSS_RULES.get(check)
    return rule(parameters) if rule is not None else []


def even_split_problems(parameters: Mapping[str, Any]) -> List[str]:
    """Each device count must split the batch and the matrix rows evenly, and the largest count must split
    evenly over the processes: a check that shards a batch of matrices over devices, with a control sharding
    each matrix's rows."""
    processes, devices = parameters.get("processes", 1), parameters.get("devices") or []
    if parameters.get("target") and processes != 1:  # compile-only devices are not split over processes
        return [f"--processes {processes} with --target: a target is compiled for in one process, nothing runs"]
    if devices and max(devices) % processes:
        return [f"--processes {processes} does not divide the largest device count {max(devices)}: "
                "each process gets an equal share of the devices"]
    found = []
    for key, why in (("batch", "each device count must divide the batch"),
                     # The positive control shards each matrix's rows over the devices
                     # (repro/scaling.py); JAX refuses rows that do not split evenly.
                     ("matrix_size", "the positive control splits each matrix's rows over the devices, "
                                     "so each device count must divide the matrix size")):
        if key not in parameters:
            continue
        uneven = [n for n in devices if parameters[key] % n]
        if uneven:
            counts = ",".join(str(n) for n in uneven)
            found.append(f"{flag(key)} {parameters[key]} does not split evenly over {counts} devices: {why}")
    return found


CROSS_RULES: Dict[str, Callable[[Mapping[str, Any]], List[str]]] = {"scaling": even_split_problems}
"""Each check's rules between its parameters, where it has some."""


def register(check: str, rules: Mapping[str, Rule], defaults: Mapping[str, Any],
             presets: Mapping[str, Mapping[str, Any]] | None = None,
             cross: Callable[[Mapping[str, Any]], List[str]] | None = None) -> None:
    """Add a check's parameters beside scaling's and correctness's: its repro registers them when it starts, the kit's
    module for the check when the kit does (the same rules: tests/test_checks.py), and every function here then
    answers for it."""
    RULES[check], DEFAULTS[check] = dict(rules), dict(defaults)
    PRESETS[check] = {name: dict(values) for name, values in (presets or {}).items()}
    if cross is not None:
        CROSS_RULES[check] = cross


# The cholesky check (repro/cholesky_scaling.py, kit/checks/cholesky.py): scaling's rules for the keys it shares
# with it, registered here once, where both halves read every check's parameters.
CHOLESKY_KEYS = ("devices", "batch", "matrix_size", "dtype", "repeats", "warmup", "seed")
register("cholesky", {key: RULES["scaling"][key] for key in CHOLESKY_KEYS},
         {"devices": [1, 2, 4], "batch": 4096, "matrix_size": 32, "dtype": "float32", "repeats": 5, "warmup": 1,
          "seed": 0}, cross=even_split_problems)

def parse_value(check: str, key: str, text: str) -> Any:
    """A flag's text as the value matrix.toml would hold, in its normal form: lists stay lists even with
    one item. Text that fits no shape is kept as it is, for `problems` to name."""
    rule = RULES.get(check, {}).get(key)
    if rule is None:
        return scalar(text)
    whole = scalar(text)
    if rule.is_list and not (isinstance(whole, str) and rule.valid(whole)):  # "auto" is a whole value
        value: Any = [scalar(part) for part in text.split(",") if part.strip()]
    else:
        value = whole
    return rule.normal(value) if rule.valid(value) else value


def scalar(text: str) -> Any:
    """A flag's text as an int, else a float, else the text itself."""
    text = text.strip()
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def to_flags(parameters: Mapping[str, Any]) -> List[str]:
    """``{"matrix_size": 32, "devices": [1, 2]}`` → ``--matrix-size 32 --devices 1,2``.

    None is written as no flag: the only rule that accepts it (``max_memory_gb``)
    has None as its default, so the repro fills it back in.
    """
    flags: List[str] = []
    for key, value in parameters.items():
        if value is None:
            continue
        flags += [flag(key), ",".join(str(v) for v in value) if isinstance(value, list) else str(value)]
    return flags


def add_flags(parser: argparse.ArgumentParser, check: str) -> None:
    """One ``--key`` option per parameter of ``check``, parsed by `parse_value` (the repros' and the kit's
    parsers are both built with this). Unset options are None."""
    for key, rule in RULES.get(check, {}).items():
        parser.add_argument(flag(key), dest=key, default=None, type=_flag_parser(check, key),
                            metavar="VALUE", help=rule.expected)


def _flag_parser(check: str, key: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        return parse_value(check, key, text)

    parse.__name__ = key  # argparse names the type in "invalid <type> value"
    return parse


def given(check: str, namespace: argparse.Namespace) -> Dict[str, Any]:
    """The parameters a parsed command line set (the options `add_flags` made that were given)."""
    return {key: getattr(namespace, key) for key in RULES.get(check, {}) if getattr(namespace, key, None) is not None}


def merged(check: str, preset: str | None, flags: Mapping[str, Any]) -> Dict[str, Any]:
    """The repro's full parameters: its defaults, then the preset's, then the flags'."""
    parameters = dict(DEFAULTS[check])
    if preset:
        parameters.update(PRESETS[check][preset])
    parameters.update(flags)
    return normalise(check, parameters)


def parse(check: str, argv: Sequence[str]) -> Dict[str, Any]:
    """The repro's full parameters from its command line (no ``--out``), unchecked: `to_flags`'s inverse."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--preset", default=None)
    add_flags(parser, check)
    args = parser.parse_args(list(argv))
    return merged(check, args.preset, given(check, args))
