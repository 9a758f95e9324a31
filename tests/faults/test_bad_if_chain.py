"""One failure, two endings: ``RuntimeError: generator raised StopIteration`` on a release,
``StopIteration`` itself on a commit's overlay. One ``bad_if`` written for the cause matches both, because it is
matched against each link of the exception chain, not only the output's last exception line. docs/faults.md, "Output".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.config import parse_matrix
from kit.run import runner
from tests.fake_index import refused_url
from tests.faults.script_checks import prepared_here

CHAINED = "def numbers():\n    yield 1\n    raise StopIteration\n\nprint(list(numbers()))\n"  # PEP 479: RuntimeError
BARE = "raise StopIteration\n"  # what the overlay printed: the cause alone


@pytest.mark.parametrize("body", [CHAINED, BARE], ids=["chained-as-on-a-release", "bare-as-on-an-overlay"])
def test_one_bad_if_matches_the_failure_whichever_link_it_ends_with(tmp_path: Path, body: str) -> None:
    script = tmp_path / "gen.py"
    script.write_text(body)
    matrix = parse_matrix({"kit": {"results_dir": str(tmp_path / "results"), "envs_dir": str(tmp_path / "envs")},
                           "install": {"index_url": refused_url()}, "release": [{"version": "0.6.0"}],
                           "checks": {"gen": {"script": str(script), "bad_if": "^StopIteration$"}}},
                          tmp_path / "matrix.toml")
    record, _ = runner.run_check(matrix, runner.RunRequest("gen", "0.6.0"), lambda _m: None,
                                 prepared=prepared_here(tmp_path))
    assert (record["status"], record["verdict"]) == ("ran", "affected"), record["reason"]
    assert record["evidence"]["bad_if"]["matched"] == "StopIteration"
