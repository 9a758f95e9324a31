"""User checks against real releases: a script check's verdicts, metric bisection of a planted slowdown, and a
check that requires an extra package.

Installs jax 0.4.35, 0.5.2, 0.5.3 and 0.6.0 for real (shared environments,
so mostly hard links from uv's cache once the other integration tests ran),
and 0.4.35 and 0.6.0 once more each with optax (small: optax, chex, absl-py).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from kit.bisect import main as bisect_main
from kit.config import Matrix, parse_matrix
from kit.errors import UsageError
from kit.run.runner import RunRequest, run_check

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
USER_CHECKS = {
    "qr": {"script": str(ROOT / "examples" / "checks" / "qr_sharding.py"), "host_devices": 4, "timeout_s": 300},
    "planted": {"script": str(ROOT / "tests" / "fixtures" / "checks" / "slow_when_replicated.py"),
                "host_devices": 4, "timeout_s": 300},
    "optax-step": {"script": str(ROOT / "tests" / "fixtures" / "checks" / "optax_step.py"), "requires": ["optax"],
                   "timeout_s": 300},
}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    raw = tomllib.loads((ROOT / "matrix.toml").read_text())
    raw["checks"].update(USER_CHECKS)
    parsed = parse_matrix(raw, ROOT / "matrix.toml")  # environments shared with the sessions
    return dataclasses.replace(parsed, results_dir=tmp_path_factory.mktemp("reports") / "results")


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def test_a_user_check_gets_the_verdict_of_each_real_release(matrix: Matrix) -> None:
    verdicts = {}
    for version in ("0.4.35", "0.6.0"):
        record, path = run_check(matrix, RunRequest(check="qr", version=version), _log)
        assert record["status"] == "ran", record["reason"]
        assert record["check"] == "qr"
        assert path.name.startswith("qr-")
        assert record["environment"]["jax"] == version
        assert record["parameters"]["host_devices"] == 4
        assert len(record["parameters"]["script_sha256"]) == 64
        verdicts[version] = (record["verdict"], record["evidence"]["summary"]["batch_per_device"])
    assert verdicts == {"0.4.35": ("affected", 64), "0.6.0": ("unaffected", 16)}


def test_a_metric_bisect_names_the_release_where_the_planted_slowdown_ends(matrix: Matrix) -> None:
    argv = ["--check", "planted", "--metric", "step_ms", "--good", "0.6.0", "--bad", "0.5.2", "--fresh"]
    assert bisect_main(matrix, argv, _log) == 0
    reports = matrix.results_dir.parent
    found = json.loads(next(reports.glob("bisect-planted-*-step_ms-x1.5.json")).read_text())
    assert (found["last_same"], found["first_different"], found["ambiguous"]) == ("0.5.2", "0.5.3", [])
    installs = len(found["environments_built_now"]) + len(found["environments_reused_now"])
    assert installs <= math.ceil(math.log2(3)) + 2
    assert found["metric"]["worse"] == "higher"
    assert found["metric"]["step"] > 3
    assert [(s["before"], s["after"]) for s in found["metric"]["steps"]] == [("0.5.2", "0.5.3")]
    for version in found["probed_now"]:  # what each probe ran with and cost, not "0 s" and blanks
        seen = found["observations"][version]
        assert seen["installed"]["python"], seen
        assert seen["installed"]["jaxlib"], seen
        assert seen["cost"]["seconds"] > 0, seen
        assert seen["installed"]["environment"], seen
    # Run again (as after Ctrl-C): the kept samples answer, nothing is measured again.
    assert bisect_main(matrix, argv[:-1], _log) == 0
    again = json.loads(next(reports.glob("bisect-planted-*-step_ms-x1.5.json")).read_text())
    assert (again["first_different"], again["probed_now"]) == ("0.5.3", [])


def test_a_metric_bisect_over_a_flat_range_stops_saying_there_is_no_step(matrix: Matrix) -> None:
    argv = ["--check", "planted", "--metric", "step_ms", "--good", "0.6.0", "--bad", "0.5.3", "--fresh"]
    with pytest.raises(UsageError, match="no step: the bounds differ by 1.0"):
        bisect_main(matrix, argv, _log)


def test_a_check_that_requires_a_package_gets_the_one_of_each_release_s_era(matrix: Matrix) -> None:
    found = {}
    for version in ("0.4.35", "0.6.0"):
        record, _path = run_check(matrix, RunRequest(check="optax-step", version=version), _log)
        assert (record["status"], record["verdict"]) == ("ran", "unaffected"), record["reason"]
        assert record["install"]["requires"] == ["optax"]
        assert "optax" in record["install"]["requirements"]
        assert record["parameters"]["requires"] == ["optax"]
        found[version] = record["environment"]["packages"]["optax"]
        assert record["evidence"]["summary"]["optax"] == found[version]  # what the script itself imported
    # Resolved as of each release's date: jax 0.4.35 (Oct 2024) and 0.6.0 (Apr 2025) get different optax.
    assert found["0.4.35"] != found["0.6.0"], found
    assert Version(found["0.4.35"]) < Version(found["0.6.0"])


def test_a_check_that_lacks_a_package_is_inconclusive_naming_it(matrix: Matrix) -> None:
    # The same script without requires: its import fails, and that is never the bug.
    lacking = dataclasses.replace(matrix, checks={**matrix.checks, "optax-step": dataclasses.replace(
        matrix.checks["optax-step"], requires=())})
    record, _path = run_check(lacking, RunRequest(check="optax-step", version="0.6.0"), _log)
    assert (record["status"], record["verdict"]) == ("ran", "inconclusive")
    assert record["reason"] == "the script could not import optax; add it to requires"
    assert record["evidence"]["exception"]["type"] == "ModuleNotFoundError"
