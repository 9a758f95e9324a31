"""kit.layout: every folder the kit writes, derived once from matrix.toml's two, and never rewritten."""

from __future__ import annotations

from pathlib import Path

from kit.bisect.probe.judges import release_prober
from kit.bisect.run_spec import run_spec
from kit.bisect.options import parse_options
from kit.bisect.probe.cache import ProbeCache
from kit.config import parse_matrix
from kit.layout import Layout


def _matrix(tmp_path: Path, kit: dict[str, str]):
    raw = {"kit": kit, "release": [{"version": "0.6.0"}], "checks": {"scaling": {"devices": [1, 2], "batch": 64}}}
    return parse_matrix(raw, tmp_path / "matrix.toml")


def test_the_defaults_are_the_folders_the_docs_name(tmp_path: Path) -> None:
    layout = _matrix(tmp_path, {}).layout
    shown = {name: str(path.relative_to(tmp_path)) for name, path in vars(layout).items()}
    assert shown == {
        "results": "reports/results", "envs": ".nox/jax-envs", "reports": "reports",
        "probe_cache": "reports/bisect/probes", "script_records": "reports/bisect/script-records",
        "commit_records": "reports/bisect/commit-records", "runnable": "reports/bisect/runnable",
        "metric_samples": "reports/bisect/metric", "triage_records": "reports/triage/records", "slurm": ".nox/slurm", "commit_bytecode": ".nox/commit-bytecode",
        "jax_history": ".nox/jax-history/jax.git"}


def test_everything_moves_with_the_two_configured_folders(tmp_path: Path) -> None:
    layout = _matrix(tmp_path, {"results_dir": "out/records", "envs_dir": "/scratch/kit/envs"}).layout
    assert layout == Layout.of(tmp_path / "out" / "records", Path("/scratch/kit/envs"))
    assert layout.probe_cache == tmp_path / "out" / "bisect" / "probes"  # beside the records, read back later
    assert layout.slurm == Path("/scratch/kit/slurm")  # beside the environments, rebuilt at will


def test_a_script_prober_sends_its_records_apart_without_rewriting_the_matrix(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path, {})
    script = tmp_path / "repro.py"
    script.write_text("raise SystemExit(0)\n")
    for argv, records in ((["--script", str(script)], matrix.layout.script_records),
                          (["--check", "scaling"], matrix.layout.results)):
        options = parse_options(matrix, [*argv, "--good", "0.6.0", "--bad", "0.5.0"])
        prober = release_prober(matrix, options.specs, run_spec(matrix, options.specs.runs), [], ProbeCache(matrix.layout.probe_cache), "t",
                                None, print)  # type: ignore[arg-type]
        assert prober.subject.matrix is matrix
        assert matrix.results_dir == tmp_path / "reports" / "results"
        assert (prober.subject.request("0.6.0").records_dir or matrix.results_dir) == records
