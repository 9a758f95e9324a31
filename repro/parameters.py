"""Each check's parameters: defaults, presets, the shape of each value, and the limits.

One set of rules for both halves. The repros (inside each JAX environment)
validate what they were given with them; the kit (in nox's process, before it
resolves or installs anything) validates matrix.toml and the command line with
the same ones, so a value the repro would refuse is refused in seconds, with
nothing installed and no record written. Standard library only, Python 3.9+.

A rule breaks as one sentence naming the flag (``--devices``) and what it needs.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Tuple

DTYPES = ("float32", "float64")
MODES = ("jit", "shard_map")
PASSES = ("forward", "grad")


class Rule(NamedTuple):
    """What one parameter's value must be: a test, the words for it, and whether it is a list."""

    valid: Callable[[Any], bool]
    expected: str
    is_list: bool = False


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
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


RULES: Dict[str, Dict[str, Rule]] = {
    "scaling": {
        "devices": Rule(lambda v: _pos_int_list(v) and len(v) > 0,
                        "a non-empty list of device counts, e.g. 1,2,4", True),
        "batch": Rule(_pos_int, "a positive integer"),
        "matrix_size": Rule(_pos_int, "a positive integer"),
        "in_features": Rule(_pos_int, "a positive integer"),
        "hidden": Rule(_pos_int_list, "a list of layer widths, e.g. 8192,8192 (empty for none)", True),
        "dtype": Rule(lambda v: v in DTYPES, "one of float32, float64"),
        "repeats": Rule(_pos_int, "a positive integer"),
        "warmup": Rule(_non_negative_int, "a non-negative integer"),
        "modes": Rule(_some_of(MODES), "some of jit,shard_map", True),
        "passes": Rule(_some_of(PASSES), "some of forward,grad", True),
        "seed": Rule(_is_int, "an integer"),
        "processes": Rule(_pos_int, "a positive integer (processes joined by jax.distributed)"),
    },
    "correctness": {
        "matrix_size": Rule(_pos_int, "a positive integer"),
        "dtypes": Rule(_some_of(DTYPES), "some of float32,float64", True),
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
    },
}

TIMEOUT_RULE = Rule(_pos_int, "a positive number of seconds")
"""The kit's per-run time limit (``--timeout``, ``timeout_s`` in matrix.toml)."""


def flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def shown(value: Any) -> str:
    """A value as it is written on the command line (lists comma-joined)."""
    if isinstance(value, list):
        return ",".join(str(item) for item in value) or "''"
    return str(value)


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
    """Rules between parameters: each device count must split the batch evenly, and the
    largest count must split evenly over the processes."""
    if check != "scaling":
        return []
    processes, devices = parameters.get("processes", 1), parameters.get("devices") or []
    if devices and max(devices) % processes:
        return [f"--processes {processes} does not divide the largest device count {max(devices)}: "
                "each process gets an equal share of the devices"]
    if "batch" not in parameters:
        return []
    uneven = [n for n in parameters.get("devices") or [] if parameters["batch"] % n]
    if not uneven:
        return []
    counts = ",".join(str(n) for n in uneven)
    return [f"--batch {parameters['batch']} does not split evenly over {counts} devices: "
            "each device count must divide the batch"]


def parse_value(check: str, key: str, text: str) -> Any:
    """A flag's text as the value matrix.toml would hold: lists stay lists even with one item."""
    rule = RULES.get(check, {}).get(key)
    if rule is not None and rule.is_list:
        if text.strip() == "auto" and check == "correctness" and key == "batches":
            return "auto"
        return [scalar(part) for part in text.split(",") if part.strip()]
    return scalar(text)


def scalar(text: str) -> Any:
    """A flag's text as an int, else a float, else the text itself."""
    text = text.strip()
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
