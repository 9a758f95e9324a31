"""The scaling repro: does batch-sharded slogdet replicate its LU on every device?

    python -m repro.scaling --out RESULT.json [--preset thread] [--devices 1,2,4] ...

Runs the thread's workload (a small MLP whose output is reshaped into a batch
of n×n matrices, loss = mean slogdet, control loss = mean sum) for each device
count, mode (jit with a batch-sharded input, shard_map with pmean) and pass
(forward, grad). For each it records what the compiled HLO shows (collectives,
the LU custom call's per-device batch) and how long it takes. A positive
control (slogdet sharded on matrix rows) must show a collective, or the
detector is not trusted. Progress goes to stderr, a summary to stdout, and
RESULT.json follows docs/architecture.md.

On CPU the devices are host devices forced with XLA_FLAGS, so jax is imported
only inside main(), after the flag is set.

With ``--target`` (a chip this machine does not have, `repro.scaling_target`),
or on a real TPU with a single chip, the same programs are compiled for the
target's compile-only devices (`repro.target_devices`) and never run: the
inputs are shapes with shardings, not arrays, the positive control is compiled
for the target too, nothing is timed, and the reason says "compiled for ..., not run".
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from repro import compile_cache, scaling_target, hlo, verdicts
from repro import parameters as parameters_rules
from repro import scaling_figures as figures
from repro.cli import UsageError, checked_parameters, exit_now, parser, write_result
from repro.contract import EXIT_UNSUPPORTED, EXIT_USAGE
from repro.scaling_figures import LOSSES, Case

# Defaults, presets and limits live in repro/parameters.py, shared with the kit.
DEFAULTS: Dict[str, Any] = parameters_rules.DEFAULTS["scaling"]
PRESETS: Dict[str, Dict[str, Any]] = parameters_rules.PRESETS["scaling"]

MODES, PASSES, DTYPES = parameters_rules.MODES, parameters_rules.PASSES, parameters_rules.DTYPES

# --------------------------------------------------------------------------
# Command line


def parse_parameters(argv: Sequence[str]) -> Tuple[str, Dict[str, Any]]:
    """The output path and the full parameters: defaults, then preset, then flags (devices sorted, once)."""
    return checked_parameters("scaling", parser("scaling", __doc__.split("\n\n")[0]), argv)


# --------------------------------------------------------------------------
# Workload


def _layer_sizes(parameters: Dict[str, Any]) -> List[int]:
    n = parameters["matrix_size"]
    return [parameters["in_features"], *parameters["hidden"], n * n]


def _make_workload(jax: Any, compat: Any, parameters: Dict[str, Any]) -> Tuple[Any, Any]:
    """Params (list of (W, b)) and batch (inputs, targets), as in the thread."""
    jnp = jax.numpy
    dtype = jnp.dtype(parameters["dtype"])
    sizes = _layer_sizes(parameters)

    def draw(key: Any) -> Tuple[Any, Any]:
        keys = jax.random.split(key, 2 * len(sizes))
        params = []
        for index, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            weight = jax.random.normal(keys[2 * index], (n_in, n_out), dtype) / jnp.sqrt(n_in).astype(dtype)
            bias = jax.random.normal(keys[2 * index + 1], (n_out,), dtype)
            params.append((weight, bias))
        inputs = jax.random.normal(keys[-2], (parameters["batch"], sizes[0]), dtype)
        targets = jax.random.normal(keys[-1], (parameters["batch"], sizes[-1]), dtype)
        return params, (inputs, targets)

    # One program, not a dozen eager ones (0.19 s of a 3.4 s warm run): the same values (0.4.20, 0.6.0, 0.12.0.1).
    return jax.jit(draw)(compat.random_key(parameters["seed"]))


def _losses(jax: Any, matrix_size: int) -> Dict[str, Callable[..., Any]]:
    jnp = jax.numpy

    def matrices(params: Any, batch: Any) -> Any:
        inputs, targets = batch
        for weight, bias in params:
            outputs = jnp.dot(inputs, weight) + bias
            inputs = jnp.maximum(outputs, 0)
        return (outputs - targets).reshape((-1, matrix_size, matrix_size))

    def control(params: Any, batch: Any) -> Any:
        return jnp.mean(jnp.sum(matrices(params, batch), axis=(-1, -2)))

    def slogdet(params: Any, batch: Any) -> Any:
        return jnp.mean(jnp.linalg.slogdet(matrices(params, batch))[1])

    return {"control": control, "slogdet": slogdet}


def _in_mode(jax: Any, compat: Any, mode: str, loss: Callable[..., Any], mesh: Any) -> Callable[..., Any]:
    """The loss as the thread wrote it for this mode."""
    if mode == "jit":
        return loss  # sharding comes from the batch-sharded inputs
    P = jax.sharding.PartitionSpec

    def local(params: Any, batch: Any) -> Any:
        return jax.lax.pmean(loss(params, batch), "batch")

    return compat.shard_map(local, mesh, in_specs=(P(), P("batch")), out_specs=P())


def _run_case(jax: Any, compat: Any, function: Callable[..., Any], args: Tuple[Any, ...],
              parameters: Dict[str, Any]) -> Tuple[hlo.HloEvidence, Optional[float], List[float]]:
    """Compile once, read the HLO, then warm up and time the compiled program."""
    compiled = jax.jit(function).lower(*args).compile()
    evidence = hlo.read_evidence(compat.compiled_hlo_text(compiled))
    flops = compat.cost_analysis(compiled).get("flops")
    for _ in range(parameters["warmup"]):
        compat.block_until_ready(compiled(*args))
    times = []
    for _ in range(parameters["repeats"]):
        start = time.perf_counter()
        compat.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - start)
    return evidence, flops, times


def _compile_only_case(jax: Any, compat: Any, function: Callable[..., Any], args: Tuple[Any, ...],
                       parameters: Dict[str, Any]) -> Tuple[hlo.HloEvidence, Optional[float], List[float]]:
    """Compile for compile-only devices and read the HLO: they cannot run it, so nothing is timed."""
    return _run_case(jax, compat, function, args, {**parameters, "warmup": 0, "repeats": 0})


def _positive_control(setup: Setup, devices: Sequence[Any], parameters: Dict[str, Any]) -> Dict[str, Any]:
    """slogdet with matrix rows sharded: must be gathered, so must show a collective."""
    jax, compat = setup.jax, setup.compat
    jnp = jax.numpy
    n, count = parameters["matrix_size"], len(devices)
    record: Dict[str, Any] = {"devices": count, "sharded_axis": "matrix rows", "ok": False}
    if count < 2:
        record["why_not"] = "needs at least 2 devices"
        return record
    if n % count:
        # The repro's own mistake, never the release's: repro/parameters.py refuses these parameters
        # before anything runs, so reaching here is a bug in the repro, and it must crash, not judge JAX.
        raise ValueError(f"--matrix-size {n} does not split evenly over {count} devices: the positive control "
                         "splits each matrix's rows over the devices")
    P = jax.sharding.PartitionSpec
    mesh = compat.batch_mesh(devices)
    shape, dtype = (parameters["batch"], n, n), parameters["dtype"]
    try:
        # Only calls into JAX inside: what fails here is a fact about this release.
        rows = jax.sharding.NamedSharding(mesh, P(None, "batch"))
        x = (jax.ShapeDtypeStruct(shape, jnp.dtype(dtype), sharding=rows) if setup.target is not None
             else _put(setup, jnp.ones(shape, dtype), rows))
        compiled = jax.jit(lambda m: jnp.mean(jnp.linalg.slogdet(m)[1])).lower(x).compile()
    except Exception as error:
        record["why_not"] = f"{type(error).__name__}: {error}".splitlines()[0]
        return record
    evidence = hlo.read_evidence(compat.compiled_hlo_text(compiled))
    record.update(figures.structure_record(evidence))
    record["ok"] = evidence.collective_count > 0
    return record


def _progress(message: str) -> None:
    print(f"[scaling] {message}", file=sys.stderr, flush=True)


def _force_host_devices(count: int) -> None:
    """Ask XLA's CPU backend for `count` devices; must run before jax is imported."""
    flag = f"--xla_force_host_platform_device_count={count}"
    existing = os.environ.get("XLA_FLAGS", "")
    kept = [part for part in existing.split() if not part.startswith("--xla_force_host_platform_device_count=")]
    os.environ["XLA_FLAGS"] = " ".join(kept + [flag])


# --------------------------------------------------------------------------
# Main


@dataclass
class Setup:
    """What one run (or one process of a multi-process run) works with."""

    jax: Any
    compat: Any
    environment: Dict[str, Any]
    processes: int
    process: Optional[Dict[str, Any]]  # this process's facts in a multi-process run
    notes: List[str]
    compile_cache: compile_cache.CompileCache = field(default_factory=compile_cache.CompileCache.unasked)
    target: Optional[Dict[str, Any]] = None
    """What it compiles for instead of running (`repro.scaling_target`); None: it runs on ``jax.devices()``."""
    compile_only: List[Any] = field(default_factory=list)
    """The target's compile-only devices, never run on."""
    single_chip: Optional[str] = None
    """The device kind of the one TPU chip that made it compile for a target (None: asked with --target)."""


def run(parameters: Dict[str, Any]) -> Dict[str, Any]:
    """Measure everything: the RESULT.json dict, plus the cases and scaling rows for the summary.

    Raises `distributed.Unsupported` when a multi-process run cannot form its mesh.
    """
    setup = _start(parameters)
    cannot = _compile_only_devices(setup) if setup.target is not None else ""
    if cannot:
        return _cannot_compile_for(setup, parameters, cannot)
    measured = _device_counts(setup, parameters)
    cases = _measure(setup, parameters, measured)
    largest = max(measured) if measured else 0
    _progress(f"positive control at {largest} devices")
    control = _positive_control(setup, _mesh_devices(setup, largest), parameters)
    rows = figures.scaling_rows(cases)
    primary = figures.primary(cases, largest)
    verdict, reason = _verdict(primary, control, rows, parameters, setup.environment["backend"])
    if setup.target is not None:
        reason = scaling_target.judged_reason(reason, setup.target, setup.single_chip)
    evidence = _evidence(setup, parameters, cases, rows, control, primary, measured)
    evidence["compile_cache"] = setup.compile_cache.figures()
    _progress(compile_cache.summary(evidence["compile_cache"]))
    result: Dict[str, Any] = {"check": "scaling", "verdict": verdict, "reason": reason, "environment": setup.environment,
              "parameters": dict(parameters), "evidence": evidence, "metrics": figures.metrics(cases)}
    if setup.process is not None:
        result["environment"]["process_count"] = setup.processes
        result["process"] = setup.process
    return {"result": result, "cases": cases, "rows": rows}


def _start(parameters: Dict[str, Any]) -> Setup:
    """Force the host devices, import jax, join the other processes if there are any.

    With a target: no host devices (nothing runs), libtpu told it is not on a TPU VM, and no compile cache
    (compile-only executables are not ones to keep).
    """
    processes = parameters.get("processes", 1)
    target = parameters_rules.target_of(parameters.get("target"))
    if target is None:
        _force_host_devices(max(parameters["devices"]) // processes)
    else:
        from repro import target_devices

        if target["platform"] == "cuda":  # the plugin on CPU, its dump read where a compile gives no text
            dump = tempfile.mkdtemp(prefix="kit-target-dump-")
            atexit.register(shutil.rmtree, dump, True)
            target_devices.prepare_gpu_process(dump)
        target_devices.prepare_process()  # before jax is imported
    import jax

    cache = compile_cache.enable(jax) if target is None else compile_cache.CompileCache.unasked()
    if parameters["dtype"] == "float64":
        jax.config.update("jax_enable_x64", True)
    process = None
    if processes > 1:
        from repro import distributed

        _progress(f"joining {processes} processes through jax.distributed")
        process = distributed.join(jax, processes)  # before anything touches a device
    from repro import compat
    from repro.environment import describe_environment

    setup = Setup(jax, compat, describe_environment(), processes, process, [], cache, target)
    if target is None and processes == 1:
        _single_chip_target(setup)
    return setup


def _single_chip_target(setup: Setup) -> None:
    """On one real TPU chip: compile for that kind's 2x2 instead, since one device cannot show replication."""
    env = setup.environment
    target = scaling_target.single_chip_slice(env.get("backend"), env.get("device_kind"), env.get("device_count"))
    if target is None:
        return
    setup.target, setup.single_chip = target, env.get("device_kind")
    setup.notes.append(scaling_target.why_this_target(target, setup.single_chip))
    _progress(setup.notes[-1])


def _compile_only_devices(setup: Setup) -> str:
    """Find the target's compile-only devices and say so in the environment; why not, where they cannot be had.

    A release without ``jax.experimental.topologies``, or without the target's compiler (jax[tpu] before 0.5.3
    names libtpu-nightly, which the index does not serve), cannot compile for it: that is no verdict on JAX.
    """
    from repro import target_devices

    target = setup.target
    assert target is not None
    try:
        setup.compile_only = list(target_devices.compile_only_devices(setup.jax, target))
    except Exception as error:  # ImportError, a libtpu that is missing or refuses the topology: all the same here
        return f"{type(error).__name__}: {error}".splitlines()[0]
    kind = target_devices.device_kind(setup.compile_only)
    setup.environment.update(
        host_backend=setup.environment.get("backend"), backend=target["platform"],
        device_kind=kind["kind"] or None, device_count=kind["count"], compiled_for=target["title"],
        target=target["name"])
    return ""


def _cannot_compile_for(setup: Setup, parameters: Dict[str, Any], why: str) -> Dict[str, Any]:
    """The result where the target's devices could not be had: inconclusive, never a verdict on JAX."""
    assert setup.target is not None
    result = scaling_target.cannot_compile_result(setup.target, why, setup.environment, parameters, setup.notes)
    _progress(result["reason"])
    return {"result": result, "cases": [], "rows": []}


def _device_counts(setup: Setup, parameters: Dict[str, Any]) -> List[int]:
    """The requested device counts this run can measure; notes say why any are left out."""
    available = len(setup.compile_only) if setup.target is not None else len(setup.jax.devices())
    requested = parameters["devices"]
    measured = [count for count in requested if count <= available]
    if len(measured) < len(requested):
        where = setup.target["title"] if setup.target is not None else setup.environment["backend"]
        setup.notes.append(f"requested {[c for c in requested if c > available]} devices but only {available} "
                           f"exist on {where}; measured {measured or 'nothing'}")
    if setup.processes > 1:
        even = [count for count in measured if count % setup.processes == 0]
        if len(even) < len(measured):
            setup.notes.append(f"{[c for c in measured if c not in even]} devices cannot be shared equally by "
                               f"{setup.processes} processes; measured {even or 'nothing'}")
        measured = even
    on = (f"on {setup.environment['backend']}" if setup.target is None
          else f"compiling for {setup.target['title']}, running nothing")
    _progress(f"jax {setup.environment['jax']} {on}: {available} devices"
              + (f" over {setup.processes} processes" if setup.processes > 1 else "") + f", measuring {measured}")
    return measured


def _mesh_devices(setup: Setup, count: int) -> List[Any]:
    if setup.target is not None:
        return setup.compile_only[:count]
    if setup.processes > 1:
        from repro import distributed

        return distributed.mesh_devices(setup.jax, count, setup.processes)
    return list(setup.jax.devices()[:count])


def _put(setup: Setup, value: Any, sharding: Any) -> Any:
    """``value`` laid out by ``sharding``; across processes each one supplies its own shards."""
    if setup.processes == 1:
        return setup.jax.device_put(value, sharding)
    from repro import distributed

    return setup.jax.tree_util.tree_map(lambda leaf: distributed.global_array(setup.jax, leaf, sharding), value)


def _workload_shapes(jax: Any, parameters: Dict[str, Any]) -> Tuple[Any, Any]:
    """The workload's params and batch as shapes (`_make_workload`'s, without drawing a value)."""
    dtype = jax.numpy.dtype(parameters["dtype"])
    sizes = _layer_sizes(parameters)
    params = [(jax.ShapeDtypeStruct((n_in, n_out), dtype), jax.ShapeDtypeStruct((n_out,), dtype))
              for n_in, n_out in zip(sizes[:-1], sizes[1:])]
    rows = parameters["batch"]
    return params, (jax.ShapeDtypeStruct((rows, sizes[0]), dtype), jax.ShapeDtypeStruct((rows, sizes[-1]), dtype))


def _placed(setup: Setup, value: Any, sharding: Any) -> Any:
    """``value`` laid out by ``sharding``: shapes given the sharding for a target, arrays put on devices otherwise."""
    if setup.target is None:
        return _put(setup, value, sharding)
    jax = setup.jax
    return jax.tree_util.tree_map(lambda leaf: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding), value)


def _measure(setup: Setup, parameters: Dict[str, Any], measured: List[int]) -> List[Case]:
    """Every device count × mode × pass × loss: compiled HLO and timings."""
    jax, compat = setup.jax, setup.compat
    # A target's devices cannot hold arrays: its programs are compiled from shapes alone.
    params, batch = (_workload_shapes(jax, parameters) if setup.target is not None
                     else _make_workload(jax, compat, parameters))
    losses = _losses(jax, parameters["matrix_size"])
    P = jax.sharding.PartitionSpec
    NamedSharding = jax.sharding.NamedSharding
    run_case = _compile_only_case if setup.target is not None else _run_case
    cases: List[Case] = []
    for count in measured:
        mesh = compat.batch_mesh(_mesh_devices(setup, count))
        sharded_batch = _placed(setup, batch, NamedSharding(mesh, P("batch")))
        replicated_params = _placed(setup, params, NamedSharding(mesh, P()))
        for mode in parameters["modes"]:
            for pass_ in parameters["passes"]:
                for loss_name in LOSSES:
                    function = _in_mode(jax, compat, mode, losses[loss_name], mesh)
                    if pass_ == "grad":
                        function = jax.grad(function)
                    _progress(f"{count} dev, {mode}, {pass_}, {loss_name}")
                    evidence, flops, times = run_case(
                        jax, compat, function, (replicated_params, sharded_batch), parameters)
                    cases.append(Case(mode, pass_, loss_name, count, evidence, flops, times))
    return cases


def _summary(parameters: Dict[str, Any], cases: List[Case], rows: List[Dict[str, Any]],
             control: Dict[str, Any], largest: int) -> Dict[str, Any]:
    jit_forward = next((c for c in cases if (c.mode, c.pass_, c.loss, c.devices)
                        == ("jit", "forward", "slogdet", largest)), None)
    return {
        "all_gathers": jit_forward.evidence.all_gathers if jit_forward else None,
        "collectives": jit_forward.evidence.collective_count if jit_forward else None,
        "lu_batch_per_device": jit_forward.evidence.lu_batch if jit_forward else None,
        # Which collectives feed the LU's operand ("" for none): old releases
        # replicate with an all-reduce, later ones with an all-gather.
        "lu_fed_by": ",".join(figures.fed_by(jit_forward.evidence)) if jit_forward else None,
        "global_batch": parameters["batch"],
        "devices": largest or None,
        **figures.speedup_summary(rows),
        "positive_control_ok": bool(control["ok"]),
    }


def _evidence(setup: Setup, parameters: Dict[str, Any], cases: List[Case], rows: List[Dict[str, Any]],
              control: Dict[str, Any], primary: Optional[Case], measured: List[int]) -> Dict[str, Any]:
    return {
        "summary": _summary(parameters, cases, rows, control, max(measured) if measured else 0),
        "verdict_from": None if primary is None else
        {"mode": primary.mode, "pass": primary.pass_, "devices": primary.devices},
        "devices_requested": parameters["devices"],
        "devices_measured": measured,
        "shard_map": setup.compat.shard_map_location(),
        "positive_control": control,
        "structure": [
            {"mode": c.mode, "pass": c.pass_, "loss": c.loss, "devices": c.devices,
             "flops": c.flops, **figures.structure_record(c.evidence)} for c in cases
        ],
        "timings": [
            {"mode": c.mode, "pass": c.pass_, "loss": c.loss, "devices": c.devices,
             **figures.timing_record(c.times_s)} for c in cases
        ],
        "scaling": rows,
        "notes": setup.notes,
        **({"compiled_for": {**setup.target, "not_run": True, "single_chip": setup.single_chip}}
           if setup.target is not None else {}),
    }


def _verdict(primary: Optional[Case], control: Dict[str, Any], rows: List[Dict[str, Any]],
             parameters: Dict[str, Any], backend: str) -> Tuple[str, str]:
    if primary is None:
        return verdicts.INCONCLUSIVE, "Nothing was measured: no requested device count exists here."
    row = figures.find(rows, primary.mode, primary.pass_, primary.devices)
    verdict, reason = verdicts.scaling_verdict(
        devices=primary.devices,
        global_batch=parameters["batch"],
        lu_batch=primary.evidence.lu_batch,
        lu_fed_by=[name for call in primary.evidence.lu_calls for name in call.fed_by],
        positive_control_ok=bool(control["ok"]),
        efficiency=row.get("efficiency"),
        control_speedup=row.get("control_speedup"),
        # Forced host devices all run on the same cores: one rule with the probes that skip timing there.
        timing_is_evidence=parameters_rules.timing_weighed("scaling", backend),
    )
    return verdict, f"{primary.mode} {primary.pass_}: {reason}"


def main(argv: Optional[Sequence[str]] = None, script: bool = False) -> int:
    """The repro; ``script``: run as ``python -m repro.scaling``, so a one-process run ends as soon as its result
    is out (`repro.cli.exit_now`)."""
    try:
        out, parameters = parse_parameters(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    if parameters["processes"] > 1:
        return _main_in_process(out, parameters)
    outcome = run(parameters)
    write_result(out, outcome["result"])
    print(figures.human_summary(outcome["result"], outcome["cases"], outcome["rows"]))
    # Its name only: the kit passes a path in its scratch folder, gone once the run is over,
    # and these last lines are quoted in reports (a bisect's probe output).
    _progress(f"wrote {os.path.basename(out)}")
    if script:
        exit_now(0)
    return 0


def _main_in_process(out: str, parameters: Dict[str, Any]) -> int:
    """One of N processes: its own result file, named for its rank; the kit merges them."""
    from repro import distributed

    path = process_result_path(out, distributed.process_rank_hint())
    try:
        outcome = run(parameters)
    except distributed.Unsupported as why:
        write_result(path, {"check": "scaling", "verdict": None, "unsupported": str(why),
                            "parameters": dict(parameters)})
        print(f"cannot run {parameters['processes']} processes: {why}", flush=True)
        return EXIT_UNSUPPORTED
    import jax

    distributed.leave(jax)
    path = process_result_path(out, jax.process_index())
    write_result(path, outcome["result"])
    if jax.process_index() == 0:
        print(figures.human_summary(outcome["result"], outcome["cases"], outcome["rows"]))
    # Its name only: the kit passes a path in its scratch folder, gone once the run is over,
    # and these last lines are quoted in reports (a bisect's probe output).
    _progress(f"wrote {os.path.basename(path)}")
    return 0


def process_result_path(out: str, rank: int) -> str:
    """``result.json`` → ``result.p1.json``: where process ``rank`` writes (the kit reads them all)."""
    stem, dot, suffix = out.rpartition(".")
    return f"{stem}.p{rank}.{suffix}" if dot else f"{out}.p{rank}"


if __name__ == "__main__":
    sys.exit(main(script=True))
