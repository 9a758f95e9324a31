"""The reproducer of an --op reduction prints what XLA compiled: its own dump asked for before JAX is imported,
read at its end; the op's statement stays marked."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kit.reduce.evidence import ADDED, printing_evidence
from kit.reduce.program import Program

CHOL = """import os
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'
import jax
cov = jax.numpy.ones((4, 1, 1), jax.numpy.float32)
cov = jax.device_put(cov, jax.sharding.NamedSharding(jax.sharding.Mesh(jax.devices(), ('sites',)), jax.sharding.PartitionSpec('sites')))
chol = jax.numpy.linalg.cholesky(cov)
"""
"""The held-out trial's reduced sharded cholesky (t4, case a): it printed nothing on either release."""


def test_the_dump_is_asked_for_in_the_flags_the_program_sets_and_read_at_its_end() -> None:
    program = Program.parse(CHOL, 6)
    shown = printing_evidence(program)
    lines = shown.text.splitlines()
    assert lines[0] == "import os, glob, re, tempfile"
    assert lines[2] == "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4 --xla_dump_to=' + DUMP.name"
    assert lines[3] == "import jax" and lines[-1].startswith("print('custom calls, shape on each device:'")
    assert shown.statements == program.statements + ADDED
    assert shown.marked_lines() == (7, 7)  # the op's statement, moved by the folder's line, still the one judged
    compile(shown.text, "chol_min.py", "exec")


def test_a_program_that_sets_no_flags_gets_its_dump_asked_for_first() -> None:
    shown = printing_evidence(Program.parse("import jax\nprint(jax.numpy.linalg.cholesky(jax.numpy.ones((2, 2))))\n", 2))
    lines = shown.text.splitlines()
    assert lines[:3] == ["import glob, re, tempfile", "DUMP = tempfile.TemporaryDirectory(prefix='xla-dump-')",
                         "import os"]
    assert lines[3] == "os.environ['XLA_FLAGS'] = os.environ.get('XLA_FLAGS', '') + ' --xla_dump_to=' + DUMP.name"
    assert lines.index("import jax") > 3


@pytest.mark.integration
def test_plain_python_shows_the_gathered_batch_on_the_bad_release_and_the_split_on_the_good(tmp_path: Path) -> None:
    from tests.real_releases import release_python
    (tmp_path / "chol_min.py").write_text(printing_evidence(Program.parse(CHOL, 6)).text)
    printed = {}
    for release in ("0.4.35", "0.5.3"):
        ran = subprocess.run([str(release_python(release)), "chol_min.py"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, env={"PATH": "/usr/bin:/bin"})
        assert ran.returncode == 0, ran.stderr
        printed[release] = ran.stdout.strip().splitlines()[-1]
    assert printed == {"0.4.35": "custom calls, shape on each device: ['f32[4,1,1]'] all-gathers: 1",
                       "0.5.3": "custom calls, shape on each device: ['f32[1,1,1]'] all-gathers: 0"}
