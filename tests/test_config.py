"""matrix.toml validation: each mistake is one sentence naming the key and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.config import configured_parameters, configured_processes, load_matrix, parse_matrix
from kit.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def _minimal() -> dict:
    return {
        "release": [{"version": "0.4.35"}, {"version": "0.6.0"}],
        "checks": {"scaling": {"devices": [1, 2, 4], "batch": 64}},
    }


def test_the_shipped_matrix_loads_with_the_releases_users_asked_for() -> None:
    matrix = load_matrix(ROOT / "matrix.toml")
    versions = [r.version for r in matrix.releases]
    for wanted in ("0.4.16", "0.4.35", "0.4.36", "0.5.3", "0.6.0"):
        assert wanted in versions
    # 0.4.16's jaxlib is gone from the index: its installable neighbours are there too.
    assert "0.4.13" in versions
    assert "0.4.18" in versions
    assert set(matrix.checks) == {"scaling", "correctness"}
    assert "thread" in matrix.checks["scaling"].presets
    assert "issue-24843" in matrix.checks["correctness"].presets


def test_releases_are_sorted_by_version_not_text() -> None:
    raw = _minimal()
    raw["release"] = [{"version": "0.10.0"}, {"version": "0.4.35"}, {"version": "0.9.1"}]
    assert [r.version for r in parse_matrix(raw).releases] == ["0.4.35", "0.9.1", "0.10.0"]


@pytest.mark.parametrize(
    ("mutate", "names", "tip"),
    [
        (lambda r: r["checks"]["scaling"].update(devcies=[1]), "checks.scaling.devcies", "did you mean 'devices'"),
        (lambda r: r["checks"]["scaling"].update(devices="4"), "checks.scaling.devices", "list of device counts"),
        (lambda r: r["checks"]["scaling"].update(dtype="float16"), "checks.scaling.dtype", "float32, float64"),
        (lambda r: r["checks"]["scaling"].update(batch=True), "checks.scaling.batch", "positive integer"),
        (lambda r: r["release"].append({"version": "0.4.x"}), "release[2].version '0.4.x' is not a plain JAX release",
         "write it like 0.4.35"),
        (lambda r: r["release"].append({"version": "0.6.0"}), "release 0.6.0 is listed twice", "one [[release]]"),
        (lambda r: r["release"][0].update(pyhton="3.11"), "release[0].pyhton", "did you mean 'python'"),
        (lambda r: r["release"][0].update(python=3.11), "python must be a version string", '"3.11"'),
        (lambda r: r.update(install={"pythons": ["3"]}), "install.pythons", '"3.12"'),
        (lambda r: r["checks"].update(speed={}), "checks.speed has no script", 'script = "checks/speed.py"'),
        (lambda r: r.pop("release"), "no [[release]]", "version ="),
        (lambda r: r["checks"]["scaling"].update(presets={"big": {"batch": -1}}), "presets.big.batch", "positive"),
    ],
)
def test_a_mistake_names_the_key_and_the_fix(mutate, names: str, tip: str) -> None:
    raw = _minimal()
    mutate(raw)
    with pytest.raises(ConfigError) as caught:
        parse_matrix(raw)
    assert names in caught.value.message
    assert tip in caught.value.tip
    assert caught.value.render().count("\n") == 1  # one ERROR line, one TIP line


def test_broken_toml_is_one_sentence(tmp_path: Path) -> None:
    bad = tmp_path / "matrix.toml"
    bad.write_text('[[release]]\nversion = "0.4.35\n')
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_matrix(bad)


def test_missing_file_says_where_to_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_matrix(tmp_path / "matrix.toml")
    assert "repository root" in caught.value.tip


def test_unknown_version_and_check_lookups() -> None:
    matrix = parse_matrix(_minimal())
    assert matrix.release("0.4.35").version == "0.4.35"
    assert matrix.release("0.5.0").note == "not in matrix.toml"  # ad hoc releases are allowed
    with pytest.raises(ConfigError, match="unknown check"):
        matrix.check("speed")


def test_a_check_starts_the_processes_matrix_toml_gives_it_and_one_where_it_gives_none(tmp_path: Path) -> None:
    raw = _minimal()
    raw["checks"]["scaling"]["processes"] = 2
    raw["checks"]["correctness"] = {}
    script = tmp_path / "mine.py"
    script.write_text("print('hi')\n")
    raw["checks"]["mine"] = {"script": "mine.py"}
    matrix = parse_matrix(raw, tmp_path / "matrix.toml")
    assert [configured_processes(matrix, name) for name in ("scaling", "correctness", "mine")] == [2, 1, 1]


# -- user (script) checks


def _with_script_check(tmp_path: Path, **table: object) -> dict:
    (tmp_path / "checks").mkdir(exist_ok=True)
    (tmp_path / "checks" / "eigh.py").write_text("import sys; sys.exit(0)\n")
    raw = _minimal()
    raw["checks"]["eigh"] = {"script": "checks/eigh.py", **table}
    return raw


def test_script_check_path_is_relative_to_matrix_toml(tmp_path: Path) -> None:
    raw = _with_script_check(tmp_path, description="eigh shards?", host_devices=4, timeout_s=60)
    check = parse_matrix(raw, tmp_path / "matrix.toml").check("eigh")
    assert check.script == (tmp_path / "checks" / "eigh.py").resolve()
    assert (check.host_devices, check.timeout_s, check.description, check.builtin) == (4, 60, "eigh shards?", False)
    assert not check.parameters
    assert not check.presets


def test_install_jax_repo_is_relative_to_matrix_toml_and_expands_home(tmp_path: Path) -> None:
    raw: dict = {"release": [{"version": "0.6.0"}], "checks": {"scaling": {}}, "install": {"jax_repo": "../jax"}}
    assert parse_matrix(raw, tmp_path / "matrix.toml").jax_repo == tmp_path / ".." / "jax"
    raw["install"] = {"jax_repo": "~/src/jax"}
    assert parse_matrix(raw, tmp_path / "matrix.toml").jax_repo == Path.home() / "src" / "jax"
    del raw["install"]
    assert parse_matrix(raw, tmp_path / "matrix.toml").jax_repo is None


@pytest.mark.parametrize(
    ("table", "names", "tip"),
    [
        ({"script": "checks/eigh_typo.py"}, "checks.eigh.script 'checks/eigh_typo.py' is not a file",
         "relative to matrix.toml"),
        ({"host_devices": 0}, "host_devices must be 1 to 4096", "host_devices = 4"),
        ({"timeout": 60}, "unknown key 'checks.eigh.timeout'", "did you mean 'timeout_s'"),
        ({"batch": 64}, "unknown key 'checks.eigh.batch'", "allowed keys: bad_if, description, explain, host_devices, requires, script"),
    ],
)
def test_a_script_check_mistake_stops_at_load_in_one_sentence(tmp_path: Path, table: dict, names: str,
                                                             tip: str) -> None:
    raw = _with_script_check(tmp_path, **table)
    with pytest.raises(ConfigError) as caught:
        parse_matrix(raw, tmp_path / "matrix.toml")
    assert names in caught.value.message
    assert tip in caught.value.tip
    assert caught.value.render().count("\n") == 1


def test_a_script_check_takes_extra_packages_and_a_bad_if_pattern(tmp_path: Path) -> None:
    raw = _with_script_check(tmp_path, requires=["optax>=0.2", "Flax"], bad_if="TypeError: .*argument 'f'")
    matrix = parse_matrix(raw, tmp_path / "matrix.toml")
    check = matrix.check("eigh")
    assert check.requires == ("flax", "optax>=0.2")  # one spelling: the set keys an environment
    assert check.bad_if is not None
    assert check.bad_if.search("TypeError: got multiple values for argument 'f'")
    # Both change what a run measures, so its records say them.
    assert configured_parameters(matrix, "eigh") == {
        "script": "checks/eigh.py", "script_sha256": configured_parameters(matrix, "eigh")["script_sha256"],
        "host_devices": None, "requires": ["flax", "optax>=0.2"], "bad_if": "TypeError: .*argument 'f'"}


def test_without_requires_or_bad_if_a_script_check_s_parameters_are_as_before(tmp_path: Path) -> None:
    # Records made before these settings existed stay current.
    matrix = parse_matrix(_with_script_check(tmp_path), tmp_path / "matrix.toml")
    assert set(configured_parameters(matrix, "eigh")) == {"script", "script_sha256", "host_devices"}


@pytest.mark.parametrize(("table", "names", "tip"), [
    ({"bad_if": "f(x"}, "checks.eigh.bad_if 'f(x' is not a regular expression (missing ), unterminated subpattern",
     "with a backslash"),
    ({"bad_if": ""}, "checks.eigh.bad_if must be a non-empty regular expression", "bad_if = "),
    ({"requires": ["jax"]}, "checks.eigh.requires 'jax' is part of the release under test", "jax and jaxlib"),
    ({"requires": "flax"}, "checks.eigh.requires must be a list of strings", "requires = "),
])
def test_a_bad_requires_or_bad_if_stops_at_load_in_one_sentence(tmp_path: Path, table: dict, names: str,
                                                                tip: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_matrix(_with_script_check(tmp_path, **table), tmp_path / "matrix.toml")
    assert caught.value.message.startswith(names)
    assert tip in caught.value.tip


def test_a_built_in_check_takes_no_extra_packages(tmp_path: Path) -> None:
    raw = _minimal()
    raw["checks"]["scaling"]["requires"] = ["flax"]
    with pytest.raises(ConfigError, match="unknown key 'checks.scaling.requires'"):
        parse_matrix(raw, tmp_path / "matrix.toml")


def test_a_built_in_check_cannot_be_replaced_by_a_script(tmp_path: Path) -> None:
    raw = _with_script_check(tmp_path)
    raw["checks"]["scaling"]["script"] = "checks/eigh.py"
    with pytest.raises(ConfigError, match="built-in check"):
        parse_matrix(raw, tmp_path / "matrix.toml")


@pytest.mark.parametrize("text", ["0", "-1", "soon", "1.5", "1e10", "inf", "nan"])
def test_a_timeout_is_a_whole_number_of_seconds_in_every_command(text: str) -> None:
    import argparse

    from kit.check_settings import timeout_seconds

    with pytest.raises(argparse.ArgumentTypeError, match="must be a whole number of seconds from 1 to 1000000000"):
        timeout_seconds(text)
    assert timeout_seconds("60") == 60
    assert timeout_seconds("1e9") == 10**9  # a whole number of seconds, however it is written


# --------------------------------------------------------------------------
# [[environment]]: a user's own installation, checked at load


def _with_environments(tmp_path: Path, *environments: dict) -> dict:
    script = tmp_path / "checks" / "slogdet.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("print('ok')\n")
    return {**_minimal(), "checks": {**_minimal()["checks"], "slogdet-time": {"script": "checks/slogdet.py"}},
            "environment": list(environments)}


def test_a_named_environment_is_read_with_its_python_relative_to_matrix_toml(tmp_path: Path) -> None:
    raw = _with_environments(tmp_path, {"name": "cluster-module", "python": "/opt/jax/bin/python", "note": "the module"},
                             {"name": "mine", "python": "venvs/mine/bin/python"})
    matrix = parse_matrix(raw, tmp_path / "matrix.toml")
    module, mine = matrix.environments
    assert (module.name, module.python, module.note) == ("cluster-module", Path("/opt/jax/bin/python"), "the module")
    assert mine.python == tmp_path / "venvs" / "mine" / "bin" / "python"
    assert matrix.environment("mine") is mine
    with pytest.raises(ConfigError, match="'other' is neither a JAX release number nor an \\[\\[environment\\]\\]"):
        matrix.environment("other")


@pytest.mark.parametrize(("environment", "names"), [
    ({"name": "my env", "python": "/p"}, "environment[0].name 'my env' cannot name sessions"),
    ({"name": "0.4.35", "python": "/p"}, "environment[0].name '0.4.35' cannot name sessions"),
    ({"name": "", "python": "/p"}, "environment[0].name '' cannot name sessions"),
    ({"name": "scaling", "python": "/p"}, "environment name 'scaling' is also a check's name"),
    ({"name": "mine.2", "python": "/p"}, "environment[0].name 'mine.2' cannot name sessions"),
    ({"name": "mine"}, "environment mine has no python"),
    ({"name": "mine", "python": 3}, "environment mine.python must be a string"),
    ({"name": "mine", "python": "/p", "pyhton": "/q"}, "unknown key 'environment[0].pyhton'"),
])
def test_an_environment_mistake_stops_at_load_in_one_sentence(tmp_path: Path, environment: dict, names: str) -> None:
    raw = _with_environments(tmp_path, environment)
    with pytest.raises(ConfigError) as caught:
        parse_matrix(raw, tmp_path / "matrix.toml")
    assert caught.value.message.startswith(names), caught.value.message
    assert "\n" not in caught.value.message


def test_two_environments_cannot_make_the_same_session(tmp_path: Path) -> None:
    # Check names hold "-" too: slogdet + time-mine and slogdet-time + mine are both slogdet-time-mine.
    raw = _with_environments(tmp_path, {"name": "time-mine", "python": "/a"}, {"name": "mine", "python": "/b"})
    raw["checks"]["slogdet"] = {"script": "checks/slogdet.py"}
    with pytest.raises(ConfigError, match="environment 'mine' would make session slogdet-time-mine, which is already "
                                          "check slogdet in environment time-mine"):
        parse_matrix(raw, tmp_path / "matrix.toml")


def test_an_environment_is_named_once(tmp_path: Path) -> None:
    raw = _with_environments(tmp_path, {"name": "mine", "python": "/a"}, {"name": "mine", "python": "/b"})
    with pytest.raises(ConfigError, match="environment mine is listed twice"):
        parse_matrix(raw, tmp_path / "matrix.toml")
