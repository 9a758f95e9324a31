"""Is a record current, and which records ran the matrix's own parameters: one answer to each.

`nox -s matrix` runs every check with matrix.toml's parameters; a one-off
(``nox -s scaling-0.6.0 -- --devices 1``, or a preset) measures something
else. Such an *ad-hoc* record is kept and listed, but it neither changes the
matrix's answer (`split_ad_hoc`) nor decides whether a cell is current
(`newest_records_here` looks only at the records that ran what was asked).
A record is *current* (`is_current`) when running its cell again would
measure nothing new: same kit and the same identity (`kit.records.identity`,
the one a bisect's probe cache asks too); `staleness` says why not.

A record made with a user's own interpreter (``--python``) measures that
installation, not the kit's build of its release: it differs from what the
matrix asks whatever its parameters (`origin_difference`), so it is ad-hoc,
never current and never in the answer. A named ``[[environment]]``'s records
count for that environment's own row when the caller names it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from repro.parameters import flag, shown, target_of

from .verdict import Status
from .. import __version__
from .cells import backend_name, machine_id, newest_per_cell
from .identity import Identity, mismatch, same, same_install
from .origin import environment_name, existing_interpreter
from .record import LoadedRecord, Record
from ..json_types import as_object
from .store import load_records

Configured = Mapping[str, Mapping[str, object]]
"""Per check, the parameters asked for (matrix.toml's: no preset, no command-line overrides)."""


def origin_difference(record: Mapping[str, object], environment: str | None = None) -> str:
    """How the record's environment differs from the one asked for, in words; "" when it is that one.

    ``environment`` None asks for the kit's own build of the release: a record
    made with an existing interpreter differs (``--python /opt/jax/bin/python``).
    A name asks for that ``[[environment]]``: any other record differs.
    """
    interpreter = existing_interpreter(record)
    name = environment_name(record)
    if environment is None:
        if interpreter is None:
            return ""
        return f"environment {name} ({interpreter})" if name else f"--python {interpreter}"
    return "" if name == environment else f"not environment {environment}"


def differences(record: Mapping[str, object], parameters: Mapping[str, object], preset: str | None = None,
                environment: str | None = None) -> str:
    """How the record's run differs from asking ``parameters`` (and ``preset``, in ``environment``) as flags;
    "" when it ran them.

    Every parameter asked for must have that value in the record (the record
    also holds the defaults the repro filled in, so extra keys there are
    fine). ``processes`` counts for every check: a record from before it
    existed, or of a check without it, ran one process, and a multi-process
    run measures another cell than a single-process one, configured or not.
    A release that could not be installed says so whatever was asked of it:
    such a record differs from nothing but another environment
    (`origin_difference`: an existing interpreter without jax says nothing
    about the release).
    """
    origin = origin_difference(record, environment)
    used = {"processes": 1, **as_object(record.get("parameters"))}
    wanted = {"processes": 1, **parameters}
    # Compiled for a chip, not run: never the matrix's own cell, not even "not installable" (that is for the target).
    target = f"--target {_shown('target', used['target'])}" if used.get("target") and "target" not in wanted else ""
    if record.get("status") == Status.NOT_INSTALLABLE:
        return " ".join(filter(None, [origin, target]))
    ran_preset = as_object(record.get("requested")).get("preset")
    changed = [f"--preset {ran_preset}" if ran_preset else "no --preset"] if ran_preset != preset else []
    changed += [f"{flag(key)} {_shown(key, used[key])}" if key in used else f"no {flag(key)}"
                for key, value in wanted.items() if used.get(key) != value]
    return " ".join(filter(None, [origin, *changed, target]))


def _shown(key: str, value: object) -> str:
    """A parameter as a flag's value; a target by its name and what it means, not its JSON."""
    if key == "target":
        try:
            target = target_of(value) or {}
        except ValueError:
            return shown(value)
        return f"{target['name']} (compiled for {target['title']}, not run)"
    return shown(value)


def split_ad_hoc(entries: Iterable[LoadedRecord], configured: Configured | None,
                 environments: Collection[str] = (), checks: Collection[str] | None = None,
                 ) -> tuple[list[LoadedRecord], list[tuple[LoadedRecord, str]]]:
    """Records of the matrix's parameters, and the others with how they differ.

    ``checks`` (matrix.toml's check names, when known): a record of another
    check is listed, never counted: a check removed from matrix.toml must not
    go on deciding the answer from its old records.

    A check the matrix does not configure has nothing to differ from: its
    records all count, unless they ran in an existing interpreter. Records of
    the named ``environments`` (matrix.toml's ``[[environment]]`` names) count
    too, for their environment's row: tell them apart with
    `kit.records.environment_name`. Without ``environments`` every record of
    an existing interpreter is ad-hoc.
    """
    in_matrix: list[LoadedRecord] = []
    ad_hoc: list[tuple[LoadedRecord, str]] = []
    for entry in entries:
        check = str(entry.record.get("check"))
        name = environment_name(entry.record)
        asked = name if name in environments else None
        if checks is not None and check not in checks:
            differs = f"its check, {check}, is not in matrix.toml"
        elif configured and check in configured:
            differs = differences(entry.record, configured[check], environment=asked)
            if differs and asked is not None:  # listed as ad-hoc: say whose environment, not only the flags
                differs = differences(entry.record, configured[check])
        else:
            differs = origin_difference(entry.record, asked)
        if differs:
            ad_hoc.append((entry, differs))
        else:
            in_matrix.append(entry)
    return in_matrix, ad_hoc


def newest_records_here(results_dir: Path, backend: str, asked: Configured,
                        preset: str | None = None) -> dict[tuple[str, str], Record]:
    """This machine's newest record per (check, release) on ``backend``, among those that ran what was asked.

    ``asked`` names the checks to look at and the parameters each must have
    run (with ``preset``); a record of other parameters never stands for the
    cell, so an ad-hoc run neither makes a cell current nor makes it stale.
    """
    wanted = backend_name(backend)  # cuda -> gpu, as the stored keys name it
    machine = machine_id()
    entries = [entry for entry in load_records(results_dir).entries
               if str(entry.record.get("check")) in asked
               and not differences(entry.record, asked[str(entry.record.get("check"))], preset)]
    newest, _older = newest_per_cell(entries)
    return {(key.check, key.jax): entry.record for key, entry in newest.items()
            if key.backend == wanted and key.machine == machine}


def record_identity(record: Mapping[str, object]) -> Identity | None:
    """The identity a record was made under (`kit.records.identity`); None for a record without a usable one."""
    try:
        return Identity.from_json(record.get("identity"))
    except ValueError:
        return None


def staleness(record: Mapping[str, object], here: Identity) -> str:
    """Why running the record's cell again, as ``here`` describes it, could measure something new; "" when current.

    Current means: the same kit, and the same identity (`kit.records.identity`:
    what ran, the release, every installed package, the hardware, the JAX/XLA
    variables set). A run that crashed or timed out is never current: it is
    worth another try. A release that could not be installed stays current
    until its install request changes (what was asked of it, the hardware and
    the variables cannot make the index hold its wheels). A record that does
    not say what it depended on (made before records held their identity) is
    never current.
    """
    status = record.get("status")
    if status not in (Status.RAN, Status.NOT_INSTALLABLE):
        return f"it {status}: worth another try"
    origin = origin_difference(record)
    if origin:
        return f"it ran in another environment ({origin})"
    if record.get("kit_version") != __version__:
        return f"made by kit {record.get('kit_version')}, this is kit {__version__}"
    earlier = record_identity(record)
    if earlier is None:
        return "it does not say what its outcome depended on (made before records held their identity)"
    if status == Status.NOT_INSTALLABLE:
        if same_install(earlier, here):
            return ""
        earlier = replace(earlier, subject=here.subject, python=here.python, packages=here.packages,
                          hardware=here.hardware, variables=here.variables)
    elif same(earlier, here):
        return ""
    return "; ".join(mismatch(earlier, here))


def is_current(record: Mapping[str, object], here: Identity) -> bool:
    """Would running the record's cell again, as ``here`` describes it, measure nothing new? (`staleness`)"""
    return not staleness(record, here)
