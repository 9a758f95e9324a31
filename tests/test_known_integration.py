"""The catalogue against real releases: audit on jax 0.4.35 and 0.6.0 agrees with the ranges the kit measured.

Uses environments the rest of the integration lane builds (0.4.35 and 0.6.0 on CPU); three of the
catalogue's checks, about 20 s; and the entries compiled for a chip (jax[tpu] 0.12.0.1, the CUDA plugin's 0.5.1,
0.5.3 and 0.7.0: each side of both GPU fixes), about 60 s with those environments built (58 s on 2026-12-06).
The whole catalogue's re-measure is `nox -s known -- --verify` (minutes); one entry's, on releases this lane
builds anyway, is below.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from kit.config import Matrix, load_matrix
from kit.known.command import audit_main, known_main
from kit.known.catalogue import load_catalogue
from kit.known.measured import load_measurements, ranges

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
ONLY = "sharded-slogdet,dctn-s-default-axes,singular-triangular-solve"


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    return dataclasses.replace(load_matrix(str(ROOT / "matrix.toml")),
                               results_dir=tmp_path_factory.mktemp("reports") / "results")


def _log(message: str) -> None:
    print(message, file=sys.stderr)


@pytest.mark.parametrize(("release", "present"), [("0.4.35", ["dctn-s-default-axes", "sharded-slogdet"]),
                                                  ("0.6.0", ["dctn-s-default-axes"])])
def test_audit_of_a_real_release_finds_what_the_measured_ranges_hold(matrix: Matrix, release: str,
                                                                     present: list[str]) -> None:
    assert audit_main(matrix, [release, "--only", ONLY], _log) == 1  # a problem is present: exit 1
    # A selection's report carries a digest of its ids (two audits of one release keep two reports).
    (written,) = matrix.results_dir.parent.glob(f"audit-jax-{release}-cpu-only-*.json")
    report = json.loads(written.read_text())
    assert report["schema"] == "jax-kit-audit/1" and report["present"] == present
    by_id = {f["id"]: f for f in report["findings"]}
    for entry in load_catalogue(ROOT / "known"):
        if entry.id in by_id:
            (span,) = ranges(load_measurements(ROOT / "known", entry.id))
            assert by_id[entry.id]["outcome"] == ("present" if span.holds(release) else "absent"), entry.id
    assert by_id["sharded-slogdet"]["fixed_in"] == "0.5.3"  # as measured: the safe release the audit names


@pytest.mark.parametrize(("release", "target", "present"), [
    ("0.12.0.1", "tpu:v5e:2x2", ["tpu-sharded-eigh", "tpu-sharded-slogdet-lu"]),
    ("0.5.1", "gpu:a100:4", ["gpu-sharded-lu-solve-triangular", "gpu-sharded-slogdet-getrf"]),
    ("0.5.3", "gpu:a100:4", ["gpu-sharded-lu-solve-triangular"]),  # getrf split, its triangular solves not yet
    ("0.7.0", "gpu:a100:4", [])])
def test_audit_for_a_chip_compiles_its_entries_for_it_and_agrees_with_their_measured_ranges(
        matrix: Matrix, release: str, target: str, present: list[str]) -> None:
    """The release installed with the chip's compiler (jax[tpu], or the CUDA plugin), nothing run on the chip."""
    assert audit_main(matrix, [release, "--target", target], _log) == (1 if present else 0)
    report = json.loads((matrix.results_dir.parent / f"audit-jax-{release}-{target.replace(':', '-')}.json")
                        .read_text())
    assert report["present"] == present
    assert all(f["compiled_not_run"].endswith(", not run") for f in report["findings"])
    assert report["installation"]["target"]["name"] == target


def test_verify_measures_an_entrys_range_again_on_every_release_it_names(
        matrix: Matrix, capsys: pytest.CaptureFixture[str]) -> None:
    """`known --verify` on real releases: while-loop-keyed-pytree on every release its bisect measured (0.4.13,
    0.4.35, 0.4.36, 0.5.3 and 0.12.0.1 the lane builds for other tests; 0.4.37 besides), each outcome as measured,
    exit 0; the repository's measured file is left as it is."""
    measured = ROOT / "known" / "measured" / "while-loop-keyed-pytree.json"
    before = measured.read_text()
    assert known_main(matrix, ["--verify", "--only", "while-loop-keyed-pytree"], _log) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("while-loop-keyed-pytree on jax")]
    stored = load_measurements(ROOT / "known", "while-loop-keyed-pytree")
    assert len(said) == len(stored) == 6, said
    for line, was in zip(said, stored):
        assert f"measured {was.outcome.value}, now {was.outcome.value}" in line, line
    assert measured.read_text() == before
