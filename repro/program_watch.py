"""Watches a program the kit explains, from inside it: keeps XLA's dump on, and says what JAX had.

The kit asks XLA for its HLO dump through ``XLA_FLAGS``. A program that
assigns ``XLA_FLAGS`` itself before JAX starts its backend (the common
``os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"``)
would drop the kit's dump flags, and the run would read as "compiled
nothing". `install` makes ``os.environ`` merge them back into any value the
program gives: the program's own flags are kept, the kit's dump flags are
added, and what the program set is written down so the kit can say so.

At the program's end it also writes what JAX actually had (the device count
and platform, where a backend was started): a program may set
``jax_num_cpu_devices`` or its own device-count flag, and the kit must not
report its own default instead.

Stdlib only, and no JAX import of its own: it runs in every release from
0.4.13 on and only reads what the program already started.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Dict

from repro import launch_rank

DUMP_FLAGS_ENV = "KIT_XLA_DUMP_FLAGS"
"""The kit's dump flags (``--xla_dump_to=DIR --xla_dump_hlo_as_text``)."""
FACTS_ENV = "KIT_PROGRAM_FACTS"
"""Where the facts go: a JSON file the kit reads after the run."""

_DUMP = re.compile(r"--xla_dump_(?:to|hlo_as_text)(?:=\S*)?")
_facts: Dict[str, Any] = {}


def merged_flags(program: str, dump: str) -> str:
    """The program's XLA_FLAGS with the kit's dump flags in place of any dump flags of its own."""
    kept = _DUMP.sub("", program).split()
    return " ".join([*kept, *dump.split()])


def install() -> None:
    """Arm the watch where the kit asked for it (``KIT_XLA_DUMP_FLAGS`` set); else do nothing.

    A process the program starts inherits the dump flags and is watched the same, but only the program's own
    process writes the facts (a spawned or forked worker must not overwrite them).
    """
    dump, facts = os.environ.get(DUMP_FLAGS_ENV), os.environ.get(FACTS_ENV)
    if not dump:
        return
    # One of several processes (`kit.launch`): its dump and facts go to its own rank's folder.
    dump, facts = launch_rank.per_rank(dump), launch_rank.per_rank(facts or "") or None
    flags = os.environ.get("XLA_FLAGS", "")
    if launch_rank.RANK_PLACEHOLDER in flags:
        os.environ["XLA_FLAGS"] = launch_rank.per_rank(flags)
    _watch_environ(dump)
    if facts:
        del os.environ[FACTS_ENV]
        armed = os.getpid()
        _at_exit(lambda: _write_facts(facts) if os.getpid() == armed else None)


def _watch_environ(dump: str) -> None:
    base = type(os.environ)

    class _KeepingDump(base):  # type: ignore[misc, valid-type]
        def __setitem__(self, key: str, value: str) -> None:
            if key == "XLA_FLAGS" and isinstance(value, str) and not set(dump.split()) <= set(value.split()):
                _facts.setdefault("xla_flags_set", []).append(value)
                value = merged_flags(value, dump)
            base.__setitem__(self, key, value)

        def __delitem__(self, key: str) -> None:
            if key == "XLA_FLAGS":  # the dump stays asked for; the program's removal is noted
                _facts.setdefault("xla_flags_set", []).append("")
                base.__setitem__(self, key, dump)
                return
            base.__delitem__(self, key)

    os.environ.__class__ = _KeepingDump


def _at_exit(callback: Any) -> None:
    """Run ``callback`` as the interpreter ends, before JAX's own atexit handlers clear its backends.

    ``threading._register_atexit`` (3.9 on) runs before every ``atexit`` handler; where it is
    missing, ``atexit`` is the fallback (the devices may then read as unknown).
    """
    import threading

    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(callback)
            return
        except Exception:
            pass
    import atexit

    atexit.register(callback)


def devices() -> Dict[str, Any]:
    """The devices JAX had, where the program started a backend; ``{}`` where it did not (none is started here)."""
    jax, bridge = sys.modules.get("jax"), sys.modules.get("jax._src.xla_bridge")
    if jax is None or bridge is None:
        return {}
    started = getattr(bridge, "backends_are_initialized", None)
    if not (started() if callable(started) else bool(getattr(bridge, "_backends", None))):
        return {}
    found = jax.devices()
    had = {"count": len(found), "platform": str(found[0].platform) if found else ""}
    if jax.process_count() > 1:  # one of several processes: its own share, and who it was
        had.update(local=len(jax.local_devices()), process_index=jax.process_index(),
                   process_count=jax.process_count())
    return had


def _write_facts(path: str) -> None:
    facts = dict(_facts)
    facts.update(launch_rank.facts)
    try:
        facts["devices"] = devices()
    except Exception as error:  # the program's JAX is its own business: say what went wrong, nothing more
        facts["devices_error"] = f"{type(error).__name__}: {error}"[:500]
    try:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(facts, out)
    except OSError:
        pass
