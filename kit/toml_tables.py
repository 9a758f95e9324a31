"""Reading the kit's TOML files (matrix.toml, the catalogue's entries): one sentence per mistake.

The people who edit these files add a release or cite a bug; a mistyped key
or a value of the wrong kind must stop with a `ConfigError` naming the key,
the file and the fix ("did you mean 'devices'?"), never with a traceback.
Each helper takes ``where``, the dotted place of the table in its file
(``"checks.scaling"``, ``"problem[0]"``; ``""`` for the top level), and
``source``, the file's name as the user knows it.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from .errors import ConfigError
from .json_types import TomlTable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib


def read_toml(path: Path) -> dict[str, object]:
    """The file's tables (the TOML edge: read into typed values by the caller, key by key with the helpers here); `ConfigError` when it is not TOML (FileNotFoundError passes: callers differ)."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", "fix the line named above") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 by definition
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path} is not UTF-8 text (byte {exc.start}, line {line}), and a TOML file must be",
                          "save it as UTF-8 (e.g. iconv -f latin1 -t utf-8), or fix that line") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder, not a TOML file", "point at the file itself") from None
    except PermissionError as exc:
        raise ConfigError(f"{path} could not be read ({exc.strerror})", "make it readable") from None


def dotted(where: str, key: str) -> str:
    """``checks.scaling`` + ``devices`` → ``checks.scaling.devices``; a top-level key stays bare."""
    return f"{where}.{key}" if where else key


def known_keys(table: TomlTable, allowed: set[str], where: str, source: str = "matrix.toml") -> None:
    """`ConfigError` for the first key not in ``allowed``, with the closest allowed one or the whole list."""
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, sorted(allowed), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(sorted(allowed))}"
            raise ConfigError(f"unknown key {dotted(where, key)!r} in {source}", hint)


def table(raw: TomlTable, key: str, where: str) -> TomlTable:
    """The sub-table ``key`` (empty when absent)."""
    value = raw.get(key, {})
    if not isinstance(value, dict):
        name = dotted(where, key)
        raise ConfigError(f"{name} must be a table", f"write it as [{name}]")
    return value


def string(raw: TomlTable, key: str, where: str, default: str) -> str:
    """The string ``key``, or ``default`` when absent."""
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"{dotted(where, key)} must be a string", f'e.g. {key} = "..."')
    return value


def strings(raw: TomlTable, key: str, where: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The list of strings ``key``, or ``default`` when absent."""
    value = raw.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{dotted(where, key)} must be a list of strings", f'e.g. {key} = ["..."]')
    return tuple(value)


def whole_number(value: object) -> int | None:
    """``value`` where it is a whole number (a bool is not one), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
