"""A real GPU compile without a GPU: jax 0.12.0.1 with the CUDA plugin compiles for gpu:a100:4 (slow; needs the index).

The environment is the kit's own ``cuda-compile`` install (the plugin, ptxas, no CUDA runtime); the compile
runs in it, as the kit's target compiles do, and its HLO is XLA's GPU compiler's: the batch-sharded slogdet
factors 256 of the 1024 matrices on each of the 4 devices, with no all-gather.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kit.config import load_matrix
from kit.errors import IndexUnreachable
from kit.install.environment import prepare
from kit.install.key import InstallKey
from kit.targets import parse_target

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent

# Runs in the release's environment: compile-only devices, a sharded compile, what XLA made of it.
_COMPILE = """
import json, re, sys
from repro import target_devices
target, dump = json.loads(sys.argv[1]), sys.argv[2]
target_devices.prepare_process(dump)
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
devices = target_devices.compile_only_devices(jax, target)
mesh = Mesh(np.array(devices), ("batch",))
x = jax.ShapeDtypeStruct((1024, 16, 16), jnp.float32, sharding=NamedSharding(mesh, P("batch")))
loss = lambda m: jnp.mean(jnp.linalg.slogdet(m)[1])
lowered = jax.jit(jax.grad(loss)).lower(x)
before, after = target_devices.compiled_texts(lowered, lowered.compile(), dump)
getrf = [line for line in after.splitlines() if "getrf" in line]
print(json.dumps({"kind": target_devices.device_kind(devices), "getrf": getrf,
                  "all_gathers": len(re.findall(r"all-gather(-start)?\\(", after))}))
"""


def cuda_compile_python(version: str) -> Path:
    """The interpreter of jax ``version`` with the CUDA plugin for compiling only, built here first if need be."""
    try:
        prepared = prepare(load_matrix(ROOT / "matrix.toml"), version, InstallKey("cuda-compile"), lambda line: None)
    except IndexUnreachable as exc:
        pytest.skip(f"jax {version}'s CUDA plugin is not installed here and the index is out of reach: {exc}")
    assert prepared.environment is not None, f"jax {version} with the CUDA plugin did not install: {prepared.problem}"
    return prepared.environment.python


def test_jax_0_12_0_1_compiles_the_sharded_slogdet_for_four_a100s_with_the_lu_split(tmp_path: Path) -> None:
    python = cuda_compile_python("0.12.0.1")
    target = parse_target("gpu:a100:4").to_json()
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT)}  # no GPU: the compile is the plugin's
    done = subprocess.run([str(python), "-c", _COMPILE, json.dumps(target), str(tmp_path / "dump")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["kind"] == {"count": 4, "kind": "NVIDIA A100-SXM4-80GB"}
    assert result["getrf"] and all("f32[256,16,16]" in line for line in result["getrf"]), result["getrf"]
    assert result["all_gathers"] == 0
