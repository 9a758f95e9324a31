"""What ran where: versions, backend, devices and host of one repro run.

Call `describe_environment()` after jax has been imported (and after any
XLA_FLAGS were set), so the device count reflects the run itself.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from typing import Any, Dict, Mapping, Optional

# The environment variables that can change what JAX does, and so a run's outcome: a run's
# identity holds every one of them that is set (docs/bisect.md, "What a probe depends on").
# JAX reads each config option from JAX_<OPTION> (JAX_ENABLE_X64, JAX_THREEFRY_PARTITIONABLE,
# JAX_PLATFORMS, ...); XLA reads XLA_FLAGS and the client's XLA_PYTHON_CLIENT_*; TF_CPP_* set
# XLA's logging (and, with VMODULE, what it dumps); TPU_*/LIBTPU_*, NCCL_* and PJRT_* configure
# the accelerator runtimes; the *_VISIBLE_DEVICES choose the devices; NVIDIA_TF32_OVERRIDE
# changes matmul precision on Ampere and later GPUs.
IDENTITY_PREFIXES = ("JAX_", "XLA_", "TF_CPP_", "TPU_", "LIBTPU_", "NCCL_", "PJRT_")
IDENTITY_NAMES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                  "NVIDIA_TF32_OVERRIDE", "ENABLE_PJRT_COMPATIBILITY")


def _version_of(module_name: str) -> Optional[str]:
    """The module's __version__, or None when it is absent or broken."""
    try:
        module = __import__(module_name)
    except Exception:  # an unimportable optional package is just "not there"
        return None
    return getattr(module, "__version__", None)


def _jaxlib_version() -> Optional[str]:
    # jaxlib.version is the stable spelling across releases; plain jaxlib
    # lacked __version__ in some early wheels.
    try:
        from jaxlib import version as jaxlib_version  # type: ignore[import-not-found]
    except Exception:
        return _version_of("jaxlib")
    return getattr(jaxlib_version, "__version__", None)


def cpu_model() -> str:
    """The CPU's marketing name; timings mean little without it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def jax_variables(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """Every set variable JAX, XLA or their runtimes read (``IDENTITY_PREFIXES``, ``IDENTITY_NAMES``), sorted."""
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in sorted(environ)
            if name.startswith(IDENTITY_PREFIXES) or name in IDENTITY_NAMES}


_GPU_FACTS: Dict[str, Optional[str]] = {}


def gpu_facts() -> Dict[str, Optional[str]]:
    """The GPUs nvidia-smi lists (``2 x NVIDIA H100 80GB HBM3``) and the driver; both None without one.

    Read once per process: the hardware does not change under a run.
    """
    if not _GPU_FACTS:
        _GPU_FACTS.update(_query_nvidia_smi())
    return dict(_GPU_FACTS)


def _query_nvidia_smi() -> Dict[str, Optional[str]]:
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {"gpu": None, "gpu_driver": None}
    rows = [[part.strip() for part in line.split(",")] for line in done.stdout.splitlines() if "," in line]
    if done.returncode != 0 or not rows:
        return {"gpu": None, "gpu_driver": None}
    names = sorted({row[0] for row in rows})
    gpu = "; ".join(f"{sum(1 for row in rows if row[0] == name)} x {name}" for name in names)
    return {"gpu": gpu, "gpu_driver": ", ".join(sorted({row[1] for row in rows}))}


def _device_facts() -> Dict[str, Any]:
    try:
        import jax
    except Exception:
        return {"backend": None, "device_kind": None, "device_count": None}
    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "device_kind": devices[0].device_kind if devices else None,
        "device_count": len(devices),
    }


def describe_environment() -> Dict[str, Any]:
    """Versions, backend, devices and host, as the RESULT.json `environment`."""
    facts: Dict[str, Any] = {
        "jax": _version_of("jax"),
        "jaxlib": _jaxlib_version(),
        "numpy": _version_of("numpy"),
        "scipy": _version_of("scipy"),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    facts.update(_device_facts())
    facts["cpu_model"] = cpu_model()
    facts["hostname"] = socket.gethostname()
    facts["executable"] = sys.executable
    facts["variables"] = jax_variables()  # what this process saw, the kit's own additions (XLA_FLAGS) included
    found = facts["variables"].get("TPU_LIBRARY_PATH", "")
    if found.startswith(os.path.realpath(sys.prefix) + os.sep) or found.startswith(sys.prefix + os.sep):
        # Set by jax itself, to the libtpu of this environment: a path of this machine, not a setting of the user's.
        facts["variables"]["TPU_LIBRARY_PATH"] = "<the environment's own libtpu>"
    dump = os.environ.get("KIT_TARGET_DUMP", "")
    if dump and dump in facts["variables"].get("XLA_FLAGS", ""):
        # A GPU target's scratch dump (repro.target_devices.prepare_gpu_process): a temp folder of this run.
        facts["variables"]["XLA_FLAGS"] = facts["variables"]["XLA_FLAGS"].replace(dump, "<the run's scratch dump>")
    if facts.get("backend") == "gpu":
        facts.update(gpu_facts())
    return facts
