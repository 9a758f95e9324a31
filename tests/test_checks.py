"""The built-in checks' registry (kit/checks): every module with a CHECK is a check the whole kit knows by asking it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from kit.checks import builtin, builtin_checks, check_order, names
from kit.config import parse_matrix
from kit.matrix.key_figures import key_figure
from kit.run.multiprocess import structural_keys
from repro import parameters as parameter_rules

ROOT = Path(__file__).resolve().parent.parent
CHECKS = sorted(builtin_checks())


def test_the_registry_finds_the_checks_of_its_package_in_their_order() -> None:
    assert names()[:2] == ("scaling", "correctness")
    assert sorted(names(), key=check_order) == list(names())
    assert check_order("my-script") > check_order(names()[-1])
    assert builtin("my-script") is None


@pytest.mark.parametrize("name", CHECKS)
def test_each_check_names_a_repro_that_is_there(name: str) -> None:
    module = builtin_checks()[name].repro
    assert module.startswith("repro.") and (ROOT / (module.replace(".", "/") + ".py")).is_file()


@pytest.mark.parametrize("name", CHECKS)
def test_each_checks_defaults_pass_its_own_rules_and_round_trip_as_flags(name: str) -> None:
    check = builtin_checks()[name]
    assert set(check.defaults) <= set(check.rules)
    assert parameter_rules.problems(name, dict(check.defaults)) == []
    assert parameter_rules.parse(name, parameter_rules.to_flags(check.defaults)) == \
        parameter_rules.normalise(name, dict(check.defaults))


@pytest.mark.parametrize("name", CHECKS)
def test_the_repro_registers_the_parameters_the_kit_module_declares(name: str) -> None:
    """Both halves judge a value by the same rules: the kit's declaration, then the repro's (imported here with the
    standard library alone, as it starts before jax), must leave the same rules, defaults and presets."""
    check = builtin_checks()[name]
    declared = ({k: r.expected for k, r in check.rules.items()}, dict(check.defaults), dict(check.presets))
    importlib.import_module(check.repro)
    registered = ({k: r.expected for k, r in parameter_rules.RULES[name].items()},
                  parameter_rules.DEFAULTS[name], parameter_rules.PRESETS.get(name, {}))
    assert registered == declared


@pytest.mark.parametrize("name", CHECKS)
def test_each_check_says_its_key_figure_and_structure(name: str) -> None:
    check = builtin_checks()[name]
    assert isinstance(key_figure(name, {}), str) and check.description and check.verdict_from
    assert structural_keys({"check": name}) == check.structural_keys
    assert check.plot in ("", "speedup", "errors") and check.workaround in ("", "shard_map")


def test_the_key_figure_of_a_script_check_is_its_first_keys() -> None:
    assert key_figure("mine", {"b": 2, "a": 1}) == "a=1; b=2"
    assert structural_keys({"check": "mine"}) == () and structural_keys({}) == ()


_ONLY_CORRECTNESS = {"release": [{"version": "0.6.0"}], "checks": {"correctness": {"matrix_size": 8}}}


def test_a_built_in_check_that_matrix_toml_does_not_list_still_runs_with_its_declared_defaults() -> None:
    """matrix.toml lists what `nox -s matrix` sweeps; every built-in check can still be run by name (a session,
    `python -m kit run NAME VERSION`), with the parameters its module declares."""
    matrix = parse_matrix(_ONLY_CORRECTNESS)
    assert list(matrix.checks) == ["correctness"]
    assert list(matrix.runnable_checks)[0] == "correctness" and set(matrix.runnable_checks) == set(names())
    scaling = matrix.check("scaling")
    assert scaling.builtin and scaling.parameters == parameter_rules.DEFAULTS["scaling"]
    assert scaling.description == builtin_checks()["scaling"].description
    assert matrix.check("correctness").parameters == {"matrix_size": 8}


def test_a_check_says_what_it_is_by_its_kind_never_by_a_key_of_its_parameters(tmp_path: Path) -> None:
    # Issue 61: an explain check was a script check whose parameters held {"explain": True, "op": ...} (and the
    # target's JSON), read back by six modules as a dict; its kind and its op are now typed fields.
    from kit.check_settings import CheckKind, ExplainedProgram, parse_any_check

    (tmp_path / "train.py").write_text("pass\n")
    matrix = tmp_path / "matrix.toml"
    kinds = {name: parse_any_check(name, table, matrix) for name, table in
             (("scaling", {}), ("mine", {"script": "train.py"}), ("why", {"explain": "train.py", "host_devices": 4}))}
    assert {name: check.kind for name, check in kinds.items()} == {
        "scaling": CheckKind.BUILTIN, "mine": CheckKind.SCRIPT, "why": CheckKind.EXPLAIN}
    assert kinds["why"].explain == ExplainedProgram() and kinds["why"].parameters == {}
    assert [check.builtin for check in kinds.values()] == [True, False, False]
    # The record says it as records always have: the explain key, and the op only where one is named.
    assert ExplainedProgram().as_parameters() == {"explain": True}
    assert ExplainedProgram(op="").as_parameters() == {"explain": True, "op": ""}
