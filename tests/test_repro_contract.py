"""repro/contract.py: the exit codes both halves name, and the strict JSON every file either half writes."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from repro import contract
from repro.contract import json_safe, strict_json


def test_the_exit_codes_are_distinct_and_none_is_a_script_checks_skip() -> None:
    # One table for both halves: a value means one thing whichever process exits with it (the repros' UNSUPPORTED
    # was 4, the kit's NETWORK). A code equal to 125 would read as "cannot test" to git-bisect-style readers.
    codes = [value for name, value in vars(contract).items()
             if name.startswith("EXIT_") and name not in ("EXIT_UNAFFECTED", "EXIT_AFFECTED", "EXIT_INCONCLUSIVE")]
    assert len(codes) == 8 and len(set(codes)) == len(codes)
    assert contract.EXIT_INCONCLUSIVE not in codes
    from kit import exit_codes  # the kit's command exits with the table's values, not a table of its own
    assert {name: value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")} == {
        name: getattr(contract, name) for name in ("EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_NOT_INSTALLABLE",
                                                   "EXIT_NETWORK", "EXIT_UNSUPPORTED", "EXIT_INTERRUPTED")}
    assert (contract.EXIT_UNAFFECTED, contract.EXIT_AFFECTED, contract.EXIT_INCONCLUSIVE) == (0, 1, 125)


def test_numpy_scalars_become_python_numbers_and_bools() -> None:
    safe = json_safe({"a": np.float32(1.5), "b": np.int64(3), "c": np.bool_(True), "d": np.float64("nan")})
    assert safe == {"a": 1.5, "b": 3, "c": True, "d": None}
    assert [type(v) for v in safe.values()] == [float, int, bool, type(None)]


def test_a_numpy_array_is_not_taken_for_a_scalar() -> None:
    # Only 0-d values have .item() without arguments meaning "the value": an array must be left to the caller.
    array = np.array([1.0, 2.0])
    assert json_safe(array) is array


def test_non_finite_floats_anywhere_become_null_and_tuples_lists() -> None:
    value = {"x": [1.0, math.inf, (-math.inf, {"y": math.nan})], "z": "nan"}
    assert json_safe(value) == {"x": [1.0, None, [None, {"y": None}]], "z": "nan"}


def test_finite_values_and_booleans_pass_unchanged() -> None:
    # True is an int: converting it to 1 would change a record's meaning.
    assert json_safe([True, 0, -0.0, 1e308, "s", None]) == [True, 0, -0.0, 1e308, "s", None]


def test_strict_json_is_parseable_by_a_strict_reader_and_ends_in_a_newline() -> None:
    text = strict_json({"b": math.nan, "a": [np.float64(math.inf)]})
    assert text.endswith("}\n")
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in strict JSON")) == {"a": [None],
                                                                                                "b": None}
    assert text.index('"a"') < text.index('"b"')  # sorted by default


def test_strict_json_keeps_key_order_when_asked_and_writes_one_line_without_indent() -> None:
    assert strict_json({"b": 1, "a": 2}, indent=None, sort_keys=False) == '{"b": 1, "a": 2}\n'


def test_an_unknown_type_fails_unless_a_default_is_given() -> None:
    class Thing:
        def __str__(self) -> str:
            return "thing"

    with pytest.raises(TypeError):
        strict_json({"x": Thing()})
    assert strict_json({"x": Thing()}, indent=None, default=str) == '{"x": "thing"}\n'


def test_what_a_default_returns_is_not_made_safe_so_a_nan_there_is_refused_not_written() -> None:
    # json_safe runs before the default: a NaN inside what the default returns must fail loudly (allow_nan=False),
    # never reach a file as the bare NaN a strict reader refuses.
    class Holder:
        pass

    def as_dict(_value: Any) -> Any:
        return {"t": math.nan}

    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        strict_json({"h": Holder()}, default=as_dict)
