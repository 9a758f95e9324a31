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

import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from repro import compile_cache, scaling_target, hlo, verdicts
from repro import parameters as parameters_rules
from repro import scaling_figures as figures
from repro.cli import UsageError, checked_parameters, exit_now, parser, write_result
from repro.contract import EXIT_UNSUPPORTED, EXIT_USAGE
from repro.scaling_figures import LOSSES, Case
from repro import scaling_setup as setups
from repro.scaling_setup import Setup

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
             else setups.put(setup, jnp.ones(shape, dtype), rows))
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


# --------------------------------------------------------------------------
# Main


def run(parameters: Dict[str, Any]) -> Dict[str, Any]:
    """Measure everything: the RESULT.json dict, plus the cases and scaling rows for the summary.

    Raises `distributed.Unsupported` when a multi-process run cannot form its mesh.
    """
    setup = setups.start(parameters)
    cannot = setups.compile_only_devices(setup) if setup.target is not None else ""
    if cannot:
        return setups.cannot_compile_for(setup, parameters, cannot)
    measured = setups.device_counts(setup, parameters)
    cases = _measure(setup, parameters, measured)
    largest = max(measured) if measured else 0
    _progress(f"positive control at {largest} devices")
    control = _positive_control(setup, setups.mesh_devices(setup, largest), parameters)
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


def _workload_shapes(jax: Any, parameters: Dict[str, Any]) -> Tuple[Any, Any]:
    """The workload's params and batch as shapes (`_make_workload`'s, without drawing a value)."""
    dtype = jax.numpy.dtype(parameters["dtype"])
    sizes = _layer_sizes(parameters)
    params = [(jax.ShapeDtypeStruct((n_in, n_out), dtype), jax.ShapeDtypeStruct((n_out,), dtype))
              for n_in, n_out in zip(sizes[:-1], sizes[1:])]
    rows = parameters["batch"]
    return params, (jax.ShapeDtypeStruct((rows, sizes[0]), dtype), jax.ShapeDtypeStruct((rows, sizes[-1]), dtype))


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
        mesh = compat.batch_mesh(setups.mesh_devices(setup, count))
        sharded_batch = setups.placed(setup, batch, NamedSharding(mesh, P("batch")))
        replicated_params = setups.placed(setup, params, NamedSharding(mesh, P()))
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
