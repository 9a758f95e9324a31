"""A user's own target: ``--target ./mychip.toml`` describes a chip the kit's table does not name.

A TPU slice::

    platform = "tpu"
    chip = "v5e"                       # the chip's kind, as the topology name starts
    topology = "v5e:4x4"               # as libtpu names it (jax.experimental.topologies)
    chips_per_host_bounds = [2, 2, 1]  # chips per host, x y z
    devices = 16                       # optional: the devices JAX shows (default: the topology's chips)

A set of GPUs, either a model whose description ships with the kit or your own description (a
GpuTargetConfigProto in text form, as XLA's xla/backends/gpu/target_config/specs/ hold them)::

    platform = "gpu"
    model = "a100"                     # or: description = "rtx6000.txtpb" (read from this file's folder)
    devices = 4
    chip = "rtx6000"                   # optional: how verdicts name it (default: the model, or the file's stem)

Each mistake is one sentence (`ConfigError`, exit 2) where the file is read. A GPU description of the
user's is carried in the target's JSON (``description_text``), so a record holds what it was compiled for
and an edited description makes earlier records stale; named targets keep their JSON as it was.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Collection, TypedDict

from .errors import ConfigError
from .json_types import TomlTable
from .toml_tables import known_keys, read_toml
from .user_paths import file_problem, relative_to_what, shown_path

TPU_KEYS = {"platform", "chip", "topology", "chips_per_host_bounds", "devices"}
GPU_KEYS = {"platform", "model", "description", "devices", "chip"}
_CHIP = re.compile(r"^[a-z][a-z0-9]{0,15}$")
_TOPOLOGY = re.compile(r"^([a-z][a-z0-9]*):(\d+(?:x\d+){1,2})$")
MAX_DESCRIPTION_BYTES = 64 * 1024
"""A GpuTargetConfigProto in text form is a few KB (XLA's own are under 3)."""


class _Fields(TypedDict):
    name: str
    platform: str
    chip: str
    devices: int
    topology: str


class TargetFields(_Fields, total=False):
    """A target file read and checked: `kit.targets.Target`'s fields (the keys it sets only for its platform)."""

    host_bounds: str
    description: str
    description_text: str


def looks_like_file(text: str) -> bool:
    """Whether ``--target`` names a description file rather than a target of the table (``tpu:v5e:2x2``)."""
    return text.strip().endswith(".toml") or "/" in text or os.sep in text


def read_target_file(text: str, folder: Path | None, gpu_models: Collection[str], max_gpus: int) -> TargetFields:
    """The target a description file names, as `kit.targets.Target`'s fields; ConfigError for each mistake.

    ``folder``: where a relative path is read from (the caller's folder for ``explain``, matrix.toml's for its
    ``[kit] targets``); the current folder otherwise. ``gpu_models``, ``max_gpus``: `kit.targets`' table.
    """
    path = Path(os.path.expanduser(text.strip()))
    full = path if path.is_absolute() else (folder or Path.cwd()) / path
    problem = file_problem(full)
    if problem:
        raise ConfigError(f"--target {text.strip()} {problem}{relative_to_what(path) if folder is None else ''}",
                          "give a target's name (tpu:v5e:2x2) or the path of a TOML file describing one "
                          "(docs/targets.md)")
    raw: TomlTable = read_toml(full)
    platform = raw.get("platform")
    # Its name in records and reproduce lines: as given, never this machine's absolute path (`shown_path`).
    source = shown_path(full, folder or Path.cwd()) if path.is_absolute() else str(path)
    if platform == "tpu":
        known_keys(raw, TPU_KEYS, "", source)
        return _tpu(raw, source)
    if platform in ("gpu", "cuda"):
        known_keys(raw, GPU_KEYS, "", source)
        return _gpu(raw, source, full.parent, sorted(gpu_models), max_gpus)
    raise ConfigError(f"{source}: platform must be \"tpu\" or \"gpu\", {_not(platform)}",
                      'start the file with platform = "tpu" or platform = "gpu" (docs/targets.md)')


def invented_slice(topology: str) -> str:
    """A caution for a TPU topology no slice has ("" for one that may exist): libtpu compiles for any shape it is
    given (``v5e:3x3`` compiles), while Cloud TPU slices have a power of two chips along each axis."""
    shape = _TOPOLOGY.match(topology)
    if shape is None:
        return ""
    dims = [int(part) for part in shape.group(2).split("x")]
    if all(d >= 1 and d & (d - 1) == 0 for d in dims):
        return ""
    return (f"caution: topology {topology} is not the shape of any TPU slice (slices have a power of two chips along "
            f"each axis, e.g. {shape.group(1)}:2x2 or {shape.group(1)}:4x4): libtpu compiles for it all the same, so "
            "what is said is for a slice no machine has")


def _tpu(raw: TomlTable, source: str) -> TargetFields:
    chip = raw.get("chip")
    if not isinstance(chip, str) or not _CHIP.match(chip):
        raise ConfigError(f"{source}: chip must be a TPU kind such as \"v5e\", {_not(chip)}", 'e.g. chip = "v5e"')
    given = raw.get("topology")
    topology = given if isinstance(given, str) else ""
    shape = _TOPOLOGY.match(topology) if isinstance(given, str) else None
    if shape is None:
        raise ConfigError(f"{source}: topology must be a name such as \"v5e:2x2\" or \"v4:2x2x1\", {_not(given)}",
                          "write it as libtpu names it: the chip's kind, a colon, the chips along each axis")
    if shape.group(1) != chip:
        raise ConfigError(f"{source}: topology {topology!r} is for a {shape.group(1)} chip, and chip is {chip!r}",
                          f'make them the same kind, e.g. topology = "{chip}:{shape.group(2)}"')
    dims = [int(part) for part in shape.group(2).split("x")]
    if min(dims) < 1:
        raise ConfigError(f"{source}: topology {topology!r} has an axis of no chips", "each axis needs 1 or more")
    bounds = raw.get("chips_per_host_bounds")
    if (not isinstance(bounds, list) or len(bounds) != 3
            or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in bounds)):
        raise ConfigError(f"{source}: chips_per_host_bounds must be three whole numbers of 1 or more, {_not(bounds)}",
                          "e.g. chips_per_host_bounds = [2, 2, 1] (a v5e or v6e host holds up to 2x2x1)")
    if math.prod(bounds) > math.prod(dims):
        raise ConfigError(f"{source}: chips_per_host_bounds {bounds} holds more chips than topology {topology!r} has",
                          "a host holds at most the slice's chips")
    devices = _devices(raw, source, math.prod(dims), limit=4096)
    return {"name": source, "platform": "tpu", "chip": chip, "devices": devices, "topology": topology,
            "host_bounds": ",".join(str(b) for b in bounds)}


def _gpu(raw: TomlTable, source: str, folder: Path, models: list[str], max_gpus: int) -> TargetFields:
    model, description = raw.get("model"), raw.get("description")
    if (model is None) == (description is None):
        raise ConfigError(f"{source}: a GPU target needs either model or description, and one only",
                          f"model = one of {', '.join(models)}, or description = \"FILE.txtpb\" (a "
                          "GpuTargetConfigProto in text form)")
    devices = _devices(raw, source, None, limit=max_gpus)
    chip = raw.get("chip")
    if chip is not None and (not isinstance(chip, str) or not _CHIP.match(chip)):
        raise ConfigError(f"{source}: chip must be a short name such as \"rtx6000\", {_not(chip)}",
                          "lower-case letters and digits, a letter first")
    if model is not None:
        if model not in models:
            raise ConfigError(f"{source}: model {model!r} is no GPU the kit has a description of",
                              f"use one of {', '.join(models)}, or description = \"FILE.txtpb\" of your own")
        return {"name": source, "platform": "cuda", "chip": chip or str(model), "devices": devices,
                "topology": f"1x{devices}x1", "description": f"{model}.txtpb"}
    text = _description(description, source, folder)
    return {"name": source, "platform": "cuda", "chip": chip or Path(str(description)).stem.lower()[:16] or "gpu",
            "devices": devices, "topology": f"1x{devices}x1", "description": str(description),
            "description_text": text}


def _devices(raw: TomlTable, source: str, default: int | None, limit: int) -> int:
    devices = raw.get("devices", default)
    if devices is None:
        raise ConfigError(f"{source}: a GPU target needs devices, how many GPUs", "e.g. devices = 4")
    if isinstance(devices, bool) or not isinstance(devices, int) or not 1 <= devices <= limit:
        raise ConfigError(f"{source}: devices must be a whole number from 1 to {limit}, {_not(devices)}",
                          "e.g. devices = 4")
    return devices


def _description(value: object, source: str, folder: Path) -> str:
    """The GpuTargetConfigProto text a GPU target file names, checked as far as the kit can without XLA."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{source}: description must be the path of a GpuTargetConfigProto text file",
                          'e.g. description = "rtx6000.txtpb", read from this file\'s folder')
    path = folder / os.path.expanduser(value)
    problem = file_problem(path)
    if problem:
        raise ConfigError(f"{source}: description {value} {problem} (read from {folder})",
                          "give the path of the description, relative to the target file's folder")
    if path.stat().st_size > MAX_DESCRIPTION_BYTES:
        raise ConfigError(f"{source}: description {value} is over {MAX_DESCRIPTION_BYTES // 1024} KB, and a "
                          "GpuTargetConfigProto is a few", "point at the description itself")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: description {value} is not UTF-8 text", "save it as UTF-8") from None
    if "gpu_device_info" not in text:
        raise ConfigError(f"{source}: description {value} has no gpu_device_info block, so it is no "
                          "GpuTargetConfigProto", "start from repro/targets/a100.txtpb or XLA's "
                                                  "xla/backends/gpu/target_config/specs/")
    return text


def _not(value: object) -> str:
    """The end of a sentence refusing ``value``: what was written, or that nothing was."""
    return "and it is missing" if value is None else f"not {value!r}"
