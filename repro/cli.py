"""Command-line plumbing the repros share: flags, parameters, the result file.

Each repro is ``python -m repro.<check> --out RESULT.json [--preset NAME]
[--key value ...]``; parameters are the repro's defaults, then the preset's,
then the flags'. Bad input is one ``error:`` line and exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, Mapping, NoReturn, Sequence, Tuple

from repro import parameters as parameter_rules
from repro.contract import strict_json


class UsageError(Exception):
    """A bad command line; reported as one line with exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        raise UsageError(message)


def parser(check: str, description: str) -> argparse.ArgumentParser:
    """``python -m repro.<check>``'s parser: ``--out``, ``--preset`` and one option per parameter rule."""
    made = Parser(prog=f"python -m repro.{check}", description=description)
    made.add_argument("--out", required=True, help="where to write RESULT.json")
    made.add_argument("--preset", choices=sorted(parameter_rules.PRESETS[check]),
                      help="a named workload; flags override it")
    parameter_rules.add_flags(made, check)
    return made


def checked_parameters(check: str, parser: argparse.ArgumentParser,
                       argv: Sequence[str]) -> Tuple[str, Dict[str, Any]]:
    """The output path and the full parameters of ``check`` (defaults, then preset, then flags, in their
    normal form), judged by the rules the kit applies too.

    Defaults, presets, shapes and limits all come from repro/parameters.py, so a
    value the kit let through is never refused here, and the other way round.
    """
    args = parser.parse_args(list(argv))
    parameters = parameter_rules.merged(check, args.preset, parameter_rules.given(check, args))
    broken = parameter_rules.problems(check, parameters)
    if broken:
        raise UsageError(broken[0])
    parameters["preset"] = args.preset  # the record says which preset ran
    return args.out, parameters


def write_result(path: str, result: Mapping[str, Any]) -> None:
    """Write RESULT.json atomically, as strict JSON (NaN and infinities become null)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(strict_json(result, sort_keys=False))
    os.replace(temporary, path)


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` once its output is flushed, without the interpreter's teardown.

    Once the result file is written nothing else of the run matters to the
    kit, and tearing JAX down (its exit hooks, the backend's threads, every
    module's finalisation) took 0.16 s of a 3.4 s warm scaling run here. Only
    for a run in one process: processes joined by jax.distributed leave
    together first (`repro.distributed.leave`) and exit normally.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
