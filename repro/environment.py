"""What ran where: versions, backend, devices and host of one repro run.

Call `describe_environment()` after jax has been imported (and after any
XLA_FLAGS were set), so the device count reflects the run itself.
"""

from __future__ import annotations

import platform
import socket
import sys
from typing import Any, Dict, Optional


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
    return facts
