"""What an interpreter has: its Python, its installed packages, and what its JAX reports.

The kit runs this with a user's own interpreter (``--python PATH``, an
``[[environment]]`` in matrix.toml) before a check, as ``python -m
repro.inventory``, to say what is there before anything runs. It prints two
lines, each ``KIT-INVENTORY <json>``:

1. the interpreter and every installed distribution, read from their metadata
   (``importlib.metadata``: nothing is imported), so this line comes even when
   JAX is broken;
2. what ``import jax`` reports: its backend and devices, or why it did not
   import. A JAX that crashes or hangs while starting (a GPU node's driver)
   still leaves the first line.

This file must at least parse and print on any Python, so the kit can say "this
is Python 2.7, the checks need 3.9+" instead of showing a SyntaxError: no
f-strings, no annotations, no imports beyond what Python 2.7 has, above the
version check.
"""

import json
import platform
import re
import sys

PREFIX = "KIT-INVENTORY "
OLDEST = (3, 9)


def _say(facts):
    sys.stdout.write(PREFIX + json.dumps(facts, sort_keys=True) + "\n")
    sys.stdout.flush()


def _normal_name(name):
    """A distribution's name as PEP 503 compares them: ``Jax_Cuda12-Plugin`` is ``jax-cuda12-plugin``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _distributions():
    """Every installed distribution and its version; the first on sys.path wins, as for imports."""
    from importlib import metadata

    found = {}  # type: dict
    for dist in metadata.distributions():
        # A broken install's leftover folder lacks them; asked first, since Python 3.13 warns on a missing key.
        fields = dist.metadata
        name = fields["Name"] if "Name" in fields else None
        version = fields["Version"] if "Version" in fields else None
        if name and version:
            found.setdefault(_normal_name(name), version)
    return found


def _jax_report():
    """The backend and devices JAX reports here, or why it could not say."""
    try:
        import jax

        devices = jax.devices()
        return {
            "jax_version": getattr(jax, "__version__", None),
            "backend": jax.default_backend(),
            "device_kind": devices[0].device_kind if devices else None,
            "device_count": len(devices),
        }
    except BaseException as error:  # an import that fails in any way is a fact to report, not a crash
        lines = str(error).strip().splitlines()
        return {"error": type(error).__name__ + (": " + lines[0] if lines else "")}


def main():
    facts = {"python": platform.python_version(), "executable": sys.executable, "prefix": sys.prefix,
             "supported": tuple(sys.version_info[:2]) >= OLDEST}
    if not facts["supported"]:
        _say(facts)
        return 0
    facts["packages"] = _distributions()
    _say(facts)
    _say(_jax_report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
