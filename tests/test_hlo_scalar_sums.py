"""Issue 58's held-out trial t10 (`exciton_fit.py`, here): svd under vmap, batch-sharded over a 2x2 mesh, compiled by
hand for tpu:v5e:2x2 with jax 0.12.0.1 (libtpu 0.0.50.1; tests/data/hlo/exciton_fit-tpu-v5e-2x2-0.12.0.1/, gzipped:
README.md there).

* svd's QDWH and eigh loops agree on their stopping tests with four ``u32[]`` all-reduces, one of them named
  ``.../eigh``: said "communication" (16 B) where 0.7.0, naming the same sums ``while``, said expected. A sum of
  scalars holds no batch, whatever it is named for.
* libtpu 0.0.2x writes an instruction's own HLO name as a collective's op name (``reduce.113``): no op of the
  program, and it was shown where a line is promised.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from kit.hlo import FingerprintState, fingerprints, parse_module, read_module

DATA = Path(__file__).parent / "data" / "hlo" / "exciton_fit-tpu-v5e-2x2-0.12.0.1"


def _module(tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    text = gzip.decompress((DATA / f"{name}.gz").read_bytes())
    (tmp_path / name).write_bytes(text)
    return read_module(tmp_path / name)


def test_scalar_sums_of_an_svds_loops_are_expected_whatever_they_are_named_for(tmp_path: Path) -> None:
    lines = (DATA / "exciton_fit.py").read_text(encoding="utf-8").splitlines()
    after, before = _module(tmp_path, "fit_step.after.hlo.txt"), _module(tmp_path, "fit_step.before.hlo.txt")
    named = [i.op_name for _, i in after.instructions() if i.opcode == "all-reduce" and i.op_name.endswith("/eigh")]
    assert named, "the fixture holds a u32[] all-reduce named for eigh: the trap"
    prints = fingerprints(after, before, read_line=lambda file, n: lines[n - 1] if file.endswith(
        "/exciton_fit.py") and 0 < n <= len(lines) else None)
    sums = [(f.location, f.state, f.bytes_per_device, f.count) for f in prints if f.op == "all-reduce"]
    assert ("exciton_fit.py:25", FingerprintState.EXPECTED, 16, 4) in sums
    assert all(state is FingerprintState.EXPECTED for _, state, _, _ in sums)
    qdwh = [f.state for f in prints if f.location == "exciton_fit.py:25" and f.op in ("eigh", "cholesky")]
    assert qdwh == [FingerprintState.SPLIT] * 2  # svd's own work: still split


def test_an_hlo_name_written_as_the_op_name_is_no_op_name() -> None:
    # The line of t10's 0.7.0 dump (libtpu 0.0.2x), less its backend config.
    module = parse_module(
        "HloModule jit_loss\n\n%region_37.829.clone.clone (a: u32[], b: u32[]) -> u32[] {\n"
        "  %a = u32[] parameter(0)\n  %b = u32[] parameter(1)\n  ROOT %add = u32[] add(%a, %b)\n}\n\n"
        "ENTRY %main (p: u32[]) -> u32[] {\n  %p = u32[] parameter(0)\n"
        "  ROOT %all-reduce.10 = u32[]{:T(128)} all-reduce(%p), channel_id=7, replica_groups=[1,4]<=[4], "
        "use_global_device_ids=true, to_apply=%region_37.829.clone.clone, metadata={op_name=\"reduce.113\"}\n}\n"
        .splitlines())
    (collective,) = [i for _, i in module.instructions() if i.opcode == "all-reduce"]
    assert collective.op_name == ""
    kept = parse_module("HloModule m\n\nENTRY %main (p: u32[]) -> u32[] {\n  ROOT %p = u32[] parameter(0), "
                        "metadata={op_name=\"while\" source_file=\"x.py\" source_line=3}\n}\n".splitlines())
    assert [i.op_name for _, i in kept.instructions()] == ["while"]
