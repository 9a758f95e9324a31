"""Where a verdict is for: the backends the kit runs on, and the chips it compiles for without having them.

A *backend* is where a check runs: ``cpu``, ``cuda`` (a GPU node) or ``tpu``
(a TPU machine). A *target* is a chip the kit compiles for without the
hardware (``tpu:v5e:2x2``, ``gpu:a100:4``): the program still runs on CPU host
devices, to find what it compiles, and each compiled computation is compiled
again by the target's own compiler (libtpu, or XLA's GPU compiler in the CUDA
plugin) over the target's compile-only devices (``jax.experimental.topologies``);
the kit reads that compiler's HLO. A verdict for a target says so: "compiled for
TPU v5e 2x2 (4 devices), not run".

This module is the one place in the kit that knows the names; everything else asks it. The TPU slices and their
wording are repro/tpu_slices.py's, one table both halves read (repro/ never imports the kit).
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from packaging.version import Version

from repro.parameters import target_text
from repro.tpu_slices import TPU_SLICES, compiled_not_run, tpu_title  # the one table of slices, read by both halves

from .errors import ConfigError, UsageError
from .json_types import JsonObject
from .target_files import invented_slice, looks_like_file, read_target_file

BACKENDS = ("cpu", "cuda", "tpu")
"""What ``--backend`` takes: where the check runs."""

JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
"""A backend as ``jax.default_backend()`` names it."""

# What an environment can be installed for: a backend, or a target's compiler without its hardware.
INSTALLED_FOR = BACKENDS + ("cuda-compile",)

# What each target platform installs beside jax and jaxlib, as the release's extra (`kit.install.plan`).
TARGET_EXTRAS = {"tpu": "tpu", "cuda": "cuda-compile"}

# The lowest release whose target compile the kit supports: `jax.export` (the bridge from the program's CPU run
# to the target's compiler) is public from 0.4.30, and jax[tpu] below 0.5.3 names libtpu-nightly, which the
# package index does not serve. The CUDA plugin compiles for compile-only devices from 0.4.38 (jaxlib 0.4.36's
# fails: "could not find registered platform" without a GPU; measured 2026-12-05), so a GPU target sees both
# sides of the sharded slogdet's fix (0.4.38 and 0.5.0: getrf on all 1024 matrices after an all-gather; 0.5.3:
# 256 a device on 4 A100s).
LOWEST_RELEASE = {"tpu": "0.5.3", "cuda": "0.4.38"}

# GPU models whose target description ships with the kit (repro/targets/*.txtpb: public hardware figures).
_GPUS = {"a100": "NVIDIA A100", "h100": "NVIDIA H100"}
MAX_GPUS = 8


@dataclass(frozen=True)
class Target:
    """A chip the kit compiles for without having it."""

    name: str
    """As the user gives it: ``tpu:v5e:2x2``, ``gpu:a100:4``."""
    platform: str
    """``tpu`` or ``cuda``: the compiler that compiles for it."""
    chip: str
    """``v5e``, ``a100``."""
    devices: int
    topology: str
    """TPU: the topology name libtpu takes (``v5e:2x2``); GPU: ``1xNx1``."""
    host_bounds: str = ""
    """TPU: chips per host, ``2,2,1``."""
    description: str = ""
    """GPU: the target description file (a GpuTargetConfigProto in text form), relative to repro/targets/."""
    description_text: str = ""
    """GPU, from a user's target file (`kit.target_files`): the description itself, carried to the repro."""

    @property
    def title(self) -> str:
        """``TPU v5e 2x2 (4 chips)``, ``4 NVIDIA A100 GPUs``."""
        if self.platform == "tpu":
            return tpu_title(self.chip, self.topology, self.devices)
        return f"{self.devices} {_GPUS.get(self.chip, self.chip.upper())} GPU{'s' if self.devices > 1 else ''}"

    @property
    def compiled_not_run(self) -> str:
        """What every verdict for it says about where it came from."""
        return compiled_not_run(self.title)

    @property
    def install_extra(self) -> str:
        return TARGET_EXTRAS[self.platform]

    @property
    def lowest_release(self) -> str:
        """The lowest release the kit compiles for it with (`LOWEST_RELEASE`)."""
        return LOWEST_RELEASE[self.platform]

    def compiles_on(self, release: str) -> bool:
        """Whether jax ``release`` can be installed with its compiler here; below `lowest_release` it is not
        installable for it, said before anything is resolved."""
        return Version(release) >= Version(self.lowest_release)

    def to_json(self) -> JsonObject:
        return {"name": self.name, "platform": self.platform, "chip": self.chip, "devices": self.devices,
                "topology": self.topology, "host_bounds": self.host_bounds, "description": self.description,
                "title": self.title, **({"description_text": self.description_text} if self.description_text else {})}

    @property
    def as_parameter(self) -> str:
        """The target as text, where it becomes text: the repro's ``--target`` and the record's ``parameters``
        (`repro.parameters.target_text`'s one spelling). Everywhere before, it travels as this `Target`."""
        return target_text(self.to_json())

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Target:
        """The target `to_json` wrote (a record's, a check's parameter); KeyError, TypeError or ValueError else."""
        devices = data["devices"]
        if not isinstance(devices, (int, float, str)):
            raise TypeError(f"a target's devices are a number, not {devices!r}")
        return cls(name=str(data["name"]), platform=str(data["platform"]), chip=str(data["chip"]),
                   devices=int(devices), topology=str(data["topology"]),
                   host_bounds=str(data.get("host_bounds") or ""), description=str(data.get("description") or ""),
                   description_text=str(data.get("description_text") or ""))


def target_parameter(target: Target | None) -> JsonObject:
    """Where the target becomes text, for every kind of check: a built-in repro's ``--target`` and every record's
    ``parameters`` (a probe compiled for another chip is another measurement), and the key a program's kept
    compile is found by. Before here it is a `Target`, from the command line on."""
    return {"target": target.as_parameter} if target is not None else {}


def named_targets() -> list[str]:
    """Every name `parse_target` knows, as ``--help`` lists them."""
    return [f"tpu:{name}" for name in TPU_SLICES] + [f"gpu:{chip}:N" for chip in _GPUS]


_CAUTIONED: set[str] = set()


def parse_target(text: str, folder: Path | None = None) -> Target:
    """``tpu:v5e:2x2`` or ``gpu:a100:4`` as a Target; UsageError naming the nearest known one otherwise.

    A path (``./mychip.toml``) is a user's own description (`kit.target_files`), read from ``folder`` (default
    the current one); ConfigError naming each mistake in it.
    """
    if looks_like_file(text):
        target = Target(**read_target_file(text, folder, tuple(_GPUS), MAX_GPUS))
        caution = invented_slice(target.topology) if target.platform == "tpu" else ""
        if caution and caution not in _CAUTIONED:  # once per process: the file is read where each option enters
            _CAUTIONED.add(caution)
            print(f"kit: {text}: {caution}", file=sys.stderr, flush=True)
        return target
    words = text.strip().lower().split(":")
    if words[0] == "tpu" and ":".join(words[1:]) in TPU_SLICES:
        chip, topology, bounds, devices = TPU_SLICES[":".join(words[1:])]
        return Target(text.strip().lower(), "tpu", chip, devices, topology, host_bounds=bounds)
    if words[0] in ("gpu", "cuda") and len(words) == 3 and words[1] in _GPUS:
        count = int(words[2]) if words[2].isdigit() else 0
        if not 1 <= count <= MAX_GPUS:
            raise UsageError(f"--target {text}: the GPU count must be 1 to {MAX_GPUS}", f"e.g. gpu:{words[1]}:4")
        return Target(f"gpu:{words[1]}:{count}", "cuda", words[1], count, f"1x{count}x1",
                      description=f"{words[1]}.txtpb")
    known = named_targets()
    near = difflib.get_close_matches(text.strip().lower(), known, n=1, cutoff=0.5)
    raise UsageError(f"unknown --target {text!r}",
                     (f"did you mean {near[0]}? " if near else "") + "known targets: " + ", ".join(known))


def configured_targets(names: tuple[str, ...], folder: Path) -> tuple[Target, ...]:
    """matrix.toml's ``[kit] targets``: each a target `parse_target` knows (a file read from ``folder``, matrix.toml's);
    ConfigError naming the first that is not."""
    try:
        return tuple(dict.fromkeys(parse_target(name, folder) for name in names))
    except (UsageError, ConfigError) as exc:
        raise ConfigError(f"kit.targets in matrix.toml: {exc.message}", exc.tip) from None


