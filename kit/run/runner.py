"""Run one check for one release: plan, install, run the repro, keep a record.

Every path ends in exactly one record: ``ran``, ``not-installable``,
``crashed``, ``refused`` (the size does not fit this machine) or
``timed-out``. Each step gives the run's `RunOutcome` (kit/records/outcome.py)
to the next: the exit read, a failure classed, JAX found unable to run, the
kit's files changed under it; `run_check` makes the record of the last one
with `records.new_record`. The repro's own output streams to the terminal as it comes
(the long runs need progress), each line bounded, and its last lines are kept
for the record when it crashes; whatever it started ends with it
(kit/run/child_processes.py).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping


from repro.compile_cache import ENV as COMPILE_CACHE_ENV
from repro.contract import EXIT_REFUSED, json_safe
from repro.known_target import ENV as KNOWN_TARGET_ENV
from repro.parameters import flag, shown, to_flags

from ..checks import builtin_repro
from ..log_events import Log, detail
from ..records import RunOutcome, RecordHead, Status, Verdict, new_record
from ..json_types import JsonObject, as_object, as_text
from .. import __version__, records
from . import child_processes, multiprocess, protocol
from .child_processes import repro_env
from .compile_cache import compile_cache_env
from .explained import explain_runner
from .kit_files import watching
from ..config import Matrix, configured_parameters, script_parameters
from ..check_settings import Check, CheckKind, parameter_problems
from ..text_bounds import bound_record
from ..user_paths import shown_path
from ..errors import UsageError, child_refused_write
from ..install import (
    drop_damaged_bytecode, Environment, ExistingPython, how_to_supply, how_to_supply_extra, install_facts,
    InstallKey, InstallPlan, open_index, PackageIndex, Prepared, release_bytecode_env, unsatisfied_extra,
)
from ..install import prepare as prepare_environment
from ..requirements import merged
from ..records import Identity
from ..targets import Target, target_parameter
from .facts import host_facts, identity_here, job_facts, require_platform
from .script_runs import last_line, leftover_evidence, run_script, unless_jax_failed
# Imported from here by kit/known (another engineer's folder) and by the runner itself: exported by name.
from .script_runs import run_child, scratch_dir


@dataclass
class RunRequest:
    check: str
    version: str
    backend: str = "cpu"
    preset: str | None = None
    overrides: JsonObject = field(default_factory=dict)
    find_links: tuple[str, ...] = ()
    timeout_s: int | None = None
    reproduce: str = ""
    refresh: bool = False
    """Resolve again even where the environment's lock answers."""
    output_log: Path | None = None
    """Where to append the run's whole output (a bisect probe's log), besides the terminal."""
    echo: bool = True
    """Show the run's output on the terminal as it comes; False keeps it in ``output_log`` only (a quiet bisect)."""
    install: InstallKey | None = None
    """How it installs, where the caller made the key (a bisect's run spec, the pins held in it); None: made in
    `prepare` from ``backend``, ``find_links`` and the check's ``requires``."""
    existing: ExistingPython | None = None
    """Run with this interpreter as it is (``--python``, an ``[[environment]]``); ``version`` is then ""
    or the release it must hold."""
    launcher: str | None = None
    """How a check's ``processes`` > 1 start (``--launcher``, `kit.launch`); None: srun in a SLURM task, else local."""
    hosts: tuple[str, ...] = ()
    """``--hosts`` for ``--launcher ssh``."""
    requires: tuple[str, ...] = ()
    """Extra packages from the command line (``--requires``), in `kit.requirements`' normal form: added to the
    check's own ``requires``."""
    script: Check | None = None
    """The check as one value where the caller made it: a script given on the command line (bisect's
    ``--script``, `kit.check_settings.script_check`), a bisect's run spec; None: the check named ``check`` in matrix.toml."""
    records_dir: Path | None = None
    """Where the record goes; None: the matrix's ``results_dir`` (bisect keeps scripts' and commits' apart)."""
    target: Target | None = None
    """``--target``: the chip a built-in check compiles for and never runs on. It travels as this value from the
    command line (a session, the sweep, a bisect) and becomes text only in the run's parameters, which are the
    repro's argv and the record's (`parameters_for`)."""


def check_for(matrix: Matrix, request: RunRequest) -> Check:
    """The check the request runs, as one value: matrix.toml's block or the ``--script``, with ``--requires`` added.

    The one answer the runner, the environment step and the probe cache ask,
    so a script from the command line and the same script in a check block
    run the same way.
    """
    check = request.script if request.script is not None else matrix.check(request.check)
    if not request.requires:
        return check
    if check.kind is CheckKind.BUILTIN:
        raise UsageError(f"{request.check} is a built-in check: it imports only jax, numpy and scipy",
                         "--requires is for script checks (docs/checks.md)")
    return dataclasses.replace(check, requires=merged(check.requires, request.requires))


def parameters_for(matrix: Matrix, request: RunRequest, check: Check | None = None) -> JsonObject:
    """What the run asks of its check: matrix.toml's parameters, then the preset's, then the command line's.

    Each of these was parsed and put in its normal form where it entered
    (`kit.config` for matrix.toml, `repro.parameters.parse_value` for the
    command line); here they are merged and judged together, once, before
    anything is resolved or installed. ``check``: `check_for` the request, where the caller already asked.
    """
    check = check or check_for(matrix, request)
    if check.script is not None:
        if request.preset or request.overrides:
            raise UsageError(f"{request.check} is a script check: it takes no preset or parameters",
                             "put the script's settings in the script itself")
        return {**script_parameters(check, matrix.path.parent), **target_parameter(request.target)}
    params = configured_parameters(matrix, request.check)
    if request.preset:
        if request.preset not in check.presets:
            known = ", ".join(sorted(check.presets)) or "none"
            raise UsageError(f"{request.check} has no preset {request.preset!r}", f"presets: {known}")
        params.update(check.presets[request.preset])
    params.update(request.overrides)
    params.update(target_parameter(request.target))
    broken = parameter_problems(request.check, params)
    if broken:
        given = " ".join(f"{flag(k)} {shown(v)}" for k, v in request.overrides.items()) or "no overrides"
        raise UsageError(broken[0], f"the repro would refuse it after the install; you gave {given}, "
                                    f"the rest is [checks.{request.check}] in matrix.toml")
    return params


def check_subject(request: RunRequest, parameters: Mapping[str, object]) -> JsonObject:
    """What a check run runs, for its identity: the check, the parameters asked (merged, judged), preset, kit.

    ``processes`` absent means one process, for every check (as `records.differences` reads a record).
    """
    return {"check": request.check, "parameters": {"processes": 1, **parameters}, "preset": request.preset,
            "kit_version": __version__}


def prepared_identity(subject: Mapping[str, object], version: str, backend: str, prepared: Prepared) -> Identity:
    """The identity of running ``subject`` in a prepared environment here (`kit.records.identity`)."""
    resolution = prepared.resolution
    versions = prepared.environment.versions if prepared.environment else (resolution.versions if resolution else {})
    # An existing interpreter was not planned: what it has (its packages, its Python) is its install.
    return installed_identity(subject, prepared.jax or version, prepared.backend or backend, _python(prepared), versions,
                              prepared.plan)


def installed_identity(subject: Mapping[str, object], version: str, backend: str, python: str | None,
                       versions: Mapping[str, str], plan: InstallPlan | None) -> Identity:
    """The identity of running ``subject`` here on ``version``, installed as ``plan`` asked, resolved to ``versions``."""
    return identity_here(subject=subject, jax=version, backend=backend, python=python, packages=versions,
                         requirements=plan.requirements if plan else (),
                         exclude_newer=plan.exclude_newer if plan else None)


def prepare(matrix: Matrix, request: RunRequest, log: Log, index: PackageIndex | None = None) -> Prepared:
    """The request's environment, as `kit.install.environment.prepare` (the one place that answers it) gives it."""
    key = request.install or InstallKey(request.backend, request.find_links,
                                        requires=check_for(matrix, request).requires)
    return prepare_environment(matrix, request.version, key, log, index=index, refresh=request.refresh,
                               existing=request.existing, check=request.check)


def run_check(matrix: Matrix, request: RunRequest, log: Log, index: PackageIndex | None = None,
              prepared: Prepared | None = None, parameters: Mapping[str, object] | None = None,
              check: Check | None = None) -> tuple[JsonObject, Path]:
    """Run the check and write its record; return the record and where it went.

    ``parameters``, ``check``: `parameters_for` and `check_for` the request,
    where the caller already asked (a bisect's run spec); otherwise they are
    asked here, before anything is installed.
    """
    started = time.monotonic()
    require_platform(request.backend if request.existing is None else request.existing.backend)
    check = check or check_for(matrix, request)
    params = parameters if parameters is not None else parameters_for(matrix, request, check)
    too_old = too_old_for_target(request)
    if request.existing is None and not too_old:  # an existing interpreter is never resolved: no index to open
        index = index or open_index(matrix)
    prepared = prepared or (Prepared(None, None, None, problem=too_old) if too_old else
                            prepare(matrix, request, log, index))
    head = record_head(request, params, prepared)
    if prepared.environment is None:
        outcome = RunOutcome(Status.NOT_INSTALLABLE, reason=prepared.problem)
        head = dataclasses.replace(head, install={**head.install, **_install_advice(request, params, prepared, index,
                                                                                      too_old)})
    elif prepared.cannot_test:
        # As a script's exit 125 ("cannot test here"): it ran as far as it could, and the evidence decides nothing.
        outcome = RunOutcome(Status.RAN).inconclusive(prepared.cannot_test)
    else:
        env = prepared.environment
        outcome = watching(matrix, log, lambda: _run_in(env, matrix, request, check, params,  # kit files watched
                                                        str(head.requested["backend"]), log))
    environment = dict(outcome.environment) if outcome.environment is not None else host_facts(_python(prepared))
    if prepared.environment is not None and not prepared.cannot_test:
        environment["python"] = environment.get("python") or head.install.get("python")
    executable = environment.get("executable")
    if isinstance(executable, str):  # records are pasted into bug threads: no absolute path of this machine
        environment["executable"] = shown_path(executable, matrix.path.parent)
    made = new_record(head, dataclasses.replace(outcome, environment=environment), parameters=dict(params),
                      slurm=job_facts(),  # which job, array task and node ran it
                      duration_s=round(time.monotonic() - started, 2))
    # A script's 20 MB line or reason must not become a 20 MB record.
    record: JsonObject = json_safe(bound_record(made))
    folder = request.records_dir or matrix.results_dir
    path = records.save_record(record, folder)  # StorageError says where it went instead
    return record, path


def _install_advice(request: RunRequest, params: Mapping[str, object], prepared: Prepared, index: PackageIndex | None,
                    too_old: str) -> JsonObject:
    """What a record of a release that could not be installed adds to its ``install``: what to do about it."""
    advice: JsonObject = {}
    if prepared.plan is not None and index is not None:  # a release the index lacks: what to do about it
        advice["resolver_error"] = prepared.attempts[-1].error if prepared.attempts else ""
        extra = unsatisfied_extra(prepared.plan, prepared.attempts)
        # The release's neighbours and its wheels answer a missing jaxlib, not a missing flax.
        advice["neighbours"] = [] if extra else _neighbours(index, request.version)
        advice["how_to_supply"] = (how_to_supply_extra(prepared.plan, extra) if extra
                                   else how_to_supply(request.version))
    if too_old:
        lowest = request.target.lowest_release if request.target else "?"
        advice["how_to_supply"] = f"compile for it with jax {lowest} or later"
    return advice


def _python(prepared: Prepared) -> str | None:
    """The Python the run's environment has (or would have had), as its record says it."""
    resolution = prepared.resolution
    return prepared.interpreter.python_version if prepared.interpreter else resolution.python if resolution else None


def too_old_for_target(request: RunRequest) -> str:
    """Why ``request``'s release cannot compile for its ``--target`` at all ("" where it may): said before anything
    is installed. jax[tpu] before 0.5.3 names libtpu-nightly, which the index does not serve (`kit.targets`)."""
    target = request.target
    if target is None or request.existing is not None or not request.version or target.compiles_on(request.version):
        return ""
    return (f"jax {request.version} cannot compile for {target.title}: the kit compiles for "
            f"{target.platform} targets from jax {target.lowest_release} on (kit.targets.LOWEST_RELEASE), "
            "so nothing was installed")


def _run_in(env: Environment, matrix: Matrix, request: RunRequest, check: Check, params: Mapping[str, object],
            backend: str, log: Log) -> RunOutcome:
    """The check's outcome: its script, or its repro, run in ``env`` on ``backend``."""
    timeout = request.timeout_s or check.timeout_s
    told = {**env.isolating_env(), **release_bytecode_env(env)}  # what every run in it is told besides
    for line in child_processes.dropped_variables(told):
        log(line)
    for _ in range(2):
        if check.kind is CheckKind.BUILTIN:
            outcome = _run_repro(env, request, params, timeout, log,
                                 {**told, **compile_cache_env(matrix.envs_dir, env, backend)})
        else:  # a program to explain (explain = ..., bisect --explain) reads its HLO too
            shared = matrix.layout.probe_cache.parent / "explained-runs"  # bisect --explain --op: shared by the ops
            run = (explain_runner(run_script, scratch_dir, shared, run_child, request.target)
                   if check.kind is CheckKind.EXPLAIN else run_script)
            outcome = run(env, check, backend, timeout, log, request.output_log, echo=request.echo,
                          extra_env={**told, **target_env(check, request.target)})
        died_of = as_text(outcome.evidence_object("jax_cannot_run").get("error"))
        if not drop_damaged_bytecode(env, died_of):  # a cache that fails is dropped, and the run made again
            return outcome
        log(f"the environment's kept bytecode was damaged ({died_of}): dropped; running again")
    return outcome


def target_env(check: Check, target: Target | None) -> dict[str, str]:
    """What a script compiled for a chip is told (a catalogue entry's ``targets``, `repro.known_target`): the
    target as text, where it leaves the kit for the child. A program explained for a target is compiled for it by
    the kit instead (`kit.run.targeted`)."""
    if check.kind is not CheckKind.SCRIPT or target is None:
        return {}
    return {KNOWN_TARGET_ENV: target.as_parameter}


def record_head(request: RunRequest, params: Mapping[str, object], prepared: Prepared) -> RecordHead:
    """What the check's record says before it runs: what was asked of which release, how it installs, its identity."""
    requested: JsonObject = {"jax": prepared.jax or request.version,
                             "backend": prepared.backend or request.backend, "preset": request.preset}
    if request.existing is not None:  # what was asked was an interpreter, not a release
        requested.update(python=str(request.existing.python), environment=request.existing.name)
    if request.target is not None:  # compiled for, not run
        requested["target"] = request.target.to_json()
    identity = prepared_identity(check_subject(request, params), str(requested["jax"]), str(requested["backend"]),
                                 prepared)
    return RecordHead({"check": request.check}, requested, install_facts(prepared), identity.to_json(),
                      request.reproduce)


def _run_repro(env: Environment, request: RunRequest, params: Mapping[str, object], timeout: int,
               log: Log, extra_env: Mapping[str, str] | None = None) -> RunOutcome:
    """The repro in ``env``; ``extra_env``: what it is told besides (where its compiles are kept)."""
    with scratch_dir() as tmp:
        out = tmp / "result.json"
        cmd = [str(env.python), "-m", builtin_repro(request.check), "--out", str(out), *to_flags(params)]
        log(detail("running " + " ".join(cmd[1:])))
        processes = params.get("processes")  # judged an integer where it entered (`parameters_for`)
        if isinstance(processes, int) and processes > 1:
            # Their bytecode, not the compile cache: it was never proven with jax.distributed's processes.
            bytecode = {k: v for k, v in (extra_env or {}).items() if k != COMPILE_CACHE_ENV}
            return _run_processes(cmd, out, processes, timeout, env.pythonpath, log, bytecode, request)
        ended = run_child(cmd, timeout, log, extra_env, pythonpath=env.pythonpath, output_log=request.output_log,
                          echo=request.echo)
        if ended.timed_out:
            return RunOutcome(Status.TIMED_OUT, reason=f"the repro did not finish within {timeout} s",
                           evidence={"output_tail": ended.tail, **leftover_evidence(ended)})
        result, unusable = multiprocess.read_result(out, f"its {out.name}")
    code, tail = ended.code, ended.tail
    refused = child_refused_write(last_line(tail), out.parent) if code != 0 else None
    if refused is not None:
        raise refused
    if code != 0 or result is None:
        failed = _repro_failure(code, tail, unusable, leftover_evidence(ended))
        # A repro that exited 0 ran JAX; one that crashed may never have got past `import jax`.
        return unless_jax_failed(failed, env, log) if failed.status is Status.CRASHED and code != 0 else failed
    outcome = RunOutcome(Status.RAN, Verdict.of(result.get("verdict")), as_text(result.get("reason")),
                      {**as_object(result.get("evidence")), **leftover_evidence(ended)},
                      environment={**host_facts(None), **as_object(result.get("environment"))},
                      parameters=as_object(result["parameters"]) if "parameters" in result else None)
    try:
        protocol.check_metrics(result.get("metrics", {}))
        return dataclasses.replace(outcome, metrics=protocol.normalise_metrics(as_object(result.get("metrics"))))
    except protocol.ResultError as exc:
        log(f"ignoring the repro's metrics: {exc}")
    return outcome


def _repro_failure(code: int | None, tail: list[str], unusable: str, more: JsonObject) -> RunOutcome:
    """A repro that exited non-zero or left no usable result: refused (the size), else crashed, with why."""
    evidence: JsonObject = {"output_tail": tail, **more}
    last = last_line(tail) or "no output"
    if code == EXIT_REFUSED:  # a size this machine cannot hold: a fact about the machine, not a crash
        return RunOutcome(Status.REFUSED, reason=f"the repro refused the size: {last}", evidence=evidence)
    assert code is not None
    if code == 0:
        why = f"the repro exited 0, but {unusable}" if unusable else f"the repro exited 0 without a result: {last}"
        return RunOutcome(Status.CRASHED, reason=why, evidence=evidence)
    how = f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
    return RunOutcome(Status.CRASHED, reason=f"the repro crashed ({how}): {unusable or last}", evidence=evidence)


def _run_processes(cmd: list[str], out: Path, processes: int, timeout: int, pythonpath: tuple[Path, ...],
                   log: Log, extra_env: Mapping[str, str] | None = None,
                   request: RunRequest | None = None) -> RunOutcome:
    """The repro as N processes joined by jax.distributed (kit/run/multiprocess.py), merged into one outcome."""
    child_processes.end_abandoned_trees(log)
    outcome = multiprocess.run_processes(cmd, out, processes, timeout, repro_env(extra_env, pythonpath), log,
                                         request.launcher if request else None, request.hosts if request else ())
    if outcome.ran:
        return outcome.ran_on({**host_facts(None), **(outcome.environment or {})})
    return outcome


def _neighbours(index: PackageIndex, version: str) -> list[str]:
    try:
        return index.neighbours(version)
    except Exception:  # the record is still worth writing without them
        return []
