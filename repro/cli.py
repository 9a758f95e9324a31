"""Command-line plumbing the repros share: flags, parameters, the result file.

Each repro is ``python -m repro.<check> --out RESULT.json [--preset NAME]
[--key value ...]``; parameters are the repro's defaults, then the preset's,
then the flags'. Bad input is one ``error:`` line and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, Dict, List, Mapping, NoReturn, Sequence, Tuple

from repro import parameters as parameter_rules
from repro.contract import EXIT_USAGE  # noqa: F401  (the repros' one usage exit code)
from repro.contract import json_safe


class UsageError(Exception):
    """A bad command line; reported as one line with exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        raise UsageError(message)


def int_list(text: str) -> List[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def name_list(text: str) -> List[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def checked_parameters(check: str, parser: argparse.ArgumentParser,
                       argv: Sequence[str]) -> Tuple[str, Dict[str, Any]]:
    """The output path and the full parameters of ``check``, judged by the rules the kit applies too.

    Defaults, presets and limits all come from repro/parameters.py, so a value
    the kit let through is never refused here, and the other way round.
    """
    out, parameters = merge_parameters(parser, argv, parameter_rules.DEFAULTS[check], parameter_rules.PRESETS[check])
    broken = parameter_rules.problems(check, parameters)
    if broken:
        raise UsageError(broken[0])
    return out, parameters


def merge_parameters(parser: argparse.ArgumentParser, argv: Sequence[str], defaults: Mapping[str, Any],
                     presets: Mapping[str, Mapping[str, Any]]) -> Tuple[str, Dict[str, Any]]:
    """The output path and the full parameters: defaults, then preset, then flags."""
    args = parser.parse_args(list(argv))
    parameters = dict(defaults)
    parameters["preset"] = args.preset
    if args.preset:
        parameters.update(presets[args.preset])
    for key in defaults:
        value = getattr(args, key, None)
        if value is not None:
            parameters[key] = value
    return args.out, parameters


def write_result(path: str, result: Mapping[str, Any]) -> None:
    """Write RESULT.json atomically, as strict JSON (NaN and infinities become null)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(json_safe(result), handle, indent=2, allow_nan=False)
        handle.write("\n")
    os.replace(temporary, path)
