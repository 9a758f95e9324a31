"""A check as the kit runs it: a built-in repro's parameters and presets, or a user's script.

From a ``[checks.*]`` table of matrix.toml (`parse_any_check`, called by
`config.parse_matrix` and for each built-in check it does not list) or from
the command line (``--script``: `script_check`, the one shape for both). Every
value is checked where it enters; a mistake is one sentence naming the key
(``ConfigError`` from matrix.toml, ``UsageError`` from the command line).
"""

from __future__ import annotations

import argparse
import difflib
import enum
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from repro import parameters as parameter_rules

from . import requirements as extra_packages
from .checks import Parameters, builtin, names as builtin_names
from .errors import ConfigError, KitError, UsageError
from .json_types import TomlTable

# The TOML table checks are shared with the catalogue's entries; the short names keep this module's calls as they read.
from .toml_tables import known_keys as _known_keys, string as _string, strings as _strings, table as _table
from .toml_tables import whole_number as _whole
from .user_paths import script_with_code

# The built-in checks, one module each under kit/checks/. The parameters each understands, their shapes, limits
# and normal form are registered with repro/parameters.py, shared with the repros so that both halves accept and
# refuse the same values. They are checked and normalised here, once, where matrix.toml enters; the command
# line's go through the same functions.
BUILTIN_CHECKS = builtin_names()

# A check's name becomes a nox session name and part of every record's file
# name: ASCII letters, digits, - and _ keep it the same in both.
CHECK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


# The longest time limit a run can have: Python's waits overflow near 292 years,
# and a limit past a human life means "no limit" anyway.
MAX_TIMEOUT_S = 10**9



def timeout_value(value: object) -> int | None:
    """A time limit in whole seconds, or None when ``value`` is not one (1 to `MAX_TIMEOUT_S`)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)  # 1e9 written as a float is still a whole number of seconds
    seconds = _whole(value)
    return seconds if seconds is not None and 1 <= seconds <= MAX_TIMEOUT_S else None


_TIMEOUT_WORDS = f"a whole number of seconds from 1 to {MAX_TIMEOUT_S}"


def timeout_seconds(text: str) -> int:
    """``--timeout`` as argparse reads it, in every command: a whole number of seconds."""
    value = timeout_value(parameter_rules.scalar(text))
    if value is None:
        raise argparse.ArgumentTypeError(f"must be {_TIMEOUT_WORDS}, got {text!r}")
    return value


def parameter_problems(check: str, parameters: Parameters) -> list[str]:
    """What the repro would refuse in ``parameters`` (its defaults filled in), one sentence each."""
    return parameter_rules.problems(check, {**parameter_rules.DEFAULTS.get(check, {}), **parameters})



SCRIPT_CHECK_KEYS = ("script", "explain", "description", "host_devices", "timeout_s", "requires", "bad_if")  # user checks

DEFAULT_TIMEOUT_S = 1800
"""A check's time limit when its block (or ``--script``'s ``--timeout``) names none."""


def bad_if_pattern(text: object, where: str, error: type[KitError] = UsageError) -> re.Pattern[str]:
    """``bad_if`` / ``--bad-if``: a regular expression, compiled once here; else ``error`` naming it."""
    if not isinstance(text, str) or not text:
        raise error(f"{where} must be a non-empty regular expression", 'e.g. bad_if = "TypeError: .*argument"')
    try:
        return re.compile(text)
    except re.error as exc:
        raise error(f"{where} {text!r} is not a regular expression ({exc})",
                    r"escape what should match literally with a backslash, e.g. 'index\[0\]' or 'f\(x\)'") from None


class CheckKind(enum.Enum):
    """What a check is, the tag the kit branches on (never a check's name, nor a key of its parameters)."""

    BUILTIN = "built-in"
    """A repro of ``repro/``, run as ``python -m MODULE`` with its parameters as flags."""
    SCRIPT = "script"
    """A user's script, run as ``python SCRIPT``: its exit status (and ``$KIT_RESULT``) is the verdict."""
    EXPLAIN = "explain"
    """A user's program judged by the HLO it compiled (``explain = ...``, bisect's ``--explain``: kit/run/explained.py)."""


@dataclass(frozen=True)
class ExplainedProgram:
    """What makes a script check an explain check: its program is judged by the HLO it compiled."""

    op: str | None = None
    """bisect's ``--op FILE:LINE[:OP]``: that line's (op's) fingerprints alone decide, and the release's compile is
    kept for the other ops' probes; "" every op, kept alike (the bounds' look); None every op, nothing kept (a
    matrix check, an explain run)."""

    def as_parameters(self) -> dict[str, object]:
        """How a record says it (``{"explain": true, "op": ...}``), the words records have held from the first."""
        return {"explain": True, **({"op": self.op} if self.op is not None else {})}


@dataclass(frozen=True)
class Check:
    """A built-in repro (``python -m repro.<name>``), a user's script (``script`` is set), or a program explained
    (``script`` and ``explain`` set): `kind` tells which."""

    name: str
    parameters: Parameters
    """A built-in check's parameters in their normal form; a script's: none (what identifies it is
    `kit.config.script_parameters`'s)."""
    presets: Mapping[str, Parameters]
    timeout_s: int
    description: str
    script: Path | None = None
    """Absolute path of a user check's script; None for the built-in checks."""
    host_devices: int | None = None
    """CPU runs of a script check get this many forced host devices."""
    requires: tuple[str, ...] = ()
    """Extra packages the script imports, in normal form (`kit.requirements`), installed for each release's era."""
    bad_if: re.Pattern[str] | None = None
    """A script check is affected only when it fails and its output matches this; another failure is inconclusive."""
    explain: ExplainedProgram | None = None
    """Set where the script is a program judged by its compiled HLO."""

    @property
    def kind(self) -> CheckKind:
        if self.script is None:
            return CheckKind.BUILTIN
        return CheckKind.EXPLAIN if self.explain is not None else CheckKind.SCRIPT

    @property
    def builtin(self) -> bool:
        return self.kind is CheckKind.BUILTIN


def script_check(name: str, script: Path, *, description: str = "", host_devices: int | None = None,
                 timeout_s: int = DEFAULT_TIMEOUT_S, requires: tuple[str, ...] = (),
                 bad_if: re.Pattern[str] | None = None, explain: ExplainedProgram | None = None) -> Check:
    """A user's script as a check, from matrix.toml or from the command line (``--script``, ``--explain``): one
    shape for both.

    Every value has been checked where it entered; ``script`` is made absolute.
    """
    return Check(name=name, parameters={}, presets={}, timeout_s=timeout_s,
                 description=description or f"{name} check ({script.name})", script=script_with_code(script),
                 host_devices=host_devices, requires=requires, bad_if=bad_if, explain=explain)



def parse_any_check(name: str, table: TomlTable, path: Path) -> Check:
    """A built-in check by its name, anything else by its ``script``."""
    if name in BUILTIN_CHECKS:
        if "script" in table:
            raise ConfigError(f"checks.{name} is a built-in check and cannot have a script",
                              f"give your check another name, e.g. [checks.my-{name}]")
        return parse_check(name, table)
    if "script" not in table and "explain" not in table:
        close = difflib.get_close_matches(name, sorted(BUILTIN_CHECKS), n=1)
        hint = f"did you mean the built-in {close[0]!r}? " if close else ""
        raise ConfigError(f"checks.{name} has no script (and is not a built-in check)",
                          hint + f'add script = "checks/{name}.py" (relative to matrix.toml)')
    return _parse_script_check(name, table, path)


def _parse_script_check(name: str, table: TomlTable, path: Path) -> Check:
    where = f"checks.{name}"
    if not CHECK_NAME.fullmatch(name):
        raise ConfigError(f"check name {name!r} has characters a session or record file name cannot hold",
                          "use ASCII letters, digits, - and _ (starting with a letter or digit)")
    _known_keys(table, set(SCRIPT_CHECK_KEYS), where)
    script = path.parent / _string(table, key := "explain" if "explain" in table else "script", where, "")
    if not script.is_file():
        raise ConfigError(f"{where}.{key} {str(table[key])!r} is not a file (looked at {script})",
                          "the path is relative to matrix.toml; copy an example from examples/checks/")
    given = table.get("host_devices")
    devices = _whole(given)
    if given is not None and not (devices is not None and 0 < devices <= parameter_rules.MAX_HOST_DEVICES):
        raise ConfigError(f"{where}.host_devices must be 1 to {parameter_rules.MAX_HOST_DEVICES}", "e.g. host_devices = 4")
    requires = extra_packages.requirements(_strings(table, "requires", where, ()), f"{where}.requires", ConfigError)
    bad_if = bad_if_pattern(table["bad_if"], f"{where}.bad_if", ConfigError) if "bad_if" in table else None
    return script_check(name, script, description=_string(table, "description", where, f"{name} check ({table[key]})"),
                        host_devices=devices, timeout_s=_timeout(table, where), requires=requires, bad_if=bad_if,
                        explain=ExplainedProgram() if key == "explain" else None)  # kit/run/explained.py


def _timeout(table: TomlTable, where: str) -> int:
    timeout = timeout_value(table.get("timeout_s", DEFAULT_TIMEOUT_S))
    if timeout is None:
        raise ConfigError(f"{where}.timeout_s = {table['timeout_s']!r} is not {_TIMEOUT_WORDS}",
                          "e.g. timeout_s = 900")
    return timeout


def parse_check(name: str, table: TomlTable) -> Check:
    """A built-in check: its parameters and presets checked and put in their normal form, once."""
    where = f"checks.{name}"
    rules = parameter_rules.RULES[name]
    meta = {"presets", "timeout_s", "description"}
    _known_keys(table, set(rules) | meta, where)
    parameters = _checked_parameters(name, {k: v for k, v in table.items() if k not in meta}, {}, where)
    presets_raw = _table(table, "presets", where)
    presets: dict[str, Parameters] = {}
    for preset, values in presets_raw.items():
        pwhere = f"{where}.presets.{preset}"
        if not isinstance(values, dict):
            raise ConfigError(f"{pwhere} must be a table", f"write it as [{pwhere}]")
        _known_keys(values, set(rules), pwhere)
        presets[preset] = _checked_parameters(name, values, parameters, pwhere)
    return Check(
        name=name,
        parameters=parameters,
        presets=presets,
        timeout_s=_timeout(table, where),
        description=_string(table, "description", where, _builtin_description(name)),
    )


def _builtin_description(name: str) -> str:
    check = builtin(name)
    return check.description if check is not None else f"{name} check"


def _checked_parameters(check: str, values: TomlTable, under: Parameters, where: str) -> dict[str, object]:
    """``values`` in their normal form, or ConfigError: a value of the wrong shape, or values fine alone but
    not together with ``under`` (a batch that does not split over a device count)."""
    rules = parameter_rules.RULES[check]
    for key, value in values.items():
        if not rules[key].valid(value):
            raise ConfigError(f"{where}.{key} = {value!r} is not valid", f"{key} must be {rules[key].expected}")
    normal = parameter_rules.normalise(check, values)
    broken = parameter_problems(check, {**under, **normal})
    if broken:
        raise ConfigError(f"[{where}] in matrix.toml: {broken[0]}", "change the values named above")
    return normal


