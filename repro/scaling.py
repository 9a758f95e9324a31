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
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from repro import hlo, verdicts
from repro import parameters as parameters_rules
from repro.cli import EXIT_USAGE, Parser, UsageError, int_list, merge_parameters, name_list, write_result

# Defaults, presets and limits live in repro/parameters.py, shared with the kit.
DEFAULTS: Dict[str, Any] = parameters_rules.DEFAULTS["scaling"]
PRESETS: Dict[str, Dict[str, Any]] = parameters_rules.PRESETS["scaling"]

MODES, PASSES, DTYPES = parameters_rules.MODES, parameters_rules.PASSES, parameters_rules.DTYPES
LOSSES = ("control", "slogdet")
DTYPES = ("float32", "float64")


# --------------------------------------------------------------------------
# Command line


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m repro.scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="where to write RESULT.json")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="a named workload; flags override it")
    parser.add_argument("--devices", type=int_list, help="device counts, e.g. 1,2,4")
    parser.add_argument("--batch", type=int, help="global batch of matrices")
    parser.add_argument("--matrix-size", type=int, help="n of the n×n matrices")
    parser.add_argument("--in-features", type=int, help="MLP input width")
    parser.add_argument("--hidden", type=int_list, help="hidden layer widths, '' for none")
    parser.add_argument("--dtype", choices=DTYPES)
    parser.add_argument("--repeats", type=int, help="timed runs per case")
    parser.add_argument("--warmup", type=int, help="untimed runs before timing")
    parser.add_argument("--modes", type=name_list, help="jit,shard_map")
    parser.add_argument("--passes", type=name_list, help="forward,grad")
    parser.add_argument("--seed", type=int)
    return parser


def parse_parameters(argv: Sequence[str]) -> Tuple[str, Dict[str, Any]]:
    """The output path and the full parameters: defaults, then preset, then flags."""
    out, parameters = merge_parameters(_parser(), argv, DEFAULTS, PRESETS)
    _validate(parameters)
    return out, parameters


def _validate(parameters: Dict[str, Any]) -> None:
    broken = parameters_rules.problems("scaling", parameters)
    if broken:
        raise UsageError(broken[0])
    parameters["devices"] = sorted(set(parameters["devices"]))


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
    key = compat.random_key(parameters["seed"])
    keys = jax.random.split(key, 2 * len(sizes))
    params = []
    for index, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        weight = jax.random.normal(keys[2 * index], (n_in, n_out), dtype) / jnp.sqrt(n_in).astype(dtype)
        bias = jax.random.normal(keys[2 * index + 1], (n_out,), dtype)
        params.append((weight, bias))
    inputs = jax.random.normal(keys[-2], (parameters["batch"], sizes[0]), dtype)
    targets = jax.random.normal(keys[-1], (parameters["batch"], sizes[-1]), dtype)
    return params, (inputs, targets)


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


@dataclass
class Case:
    mode: str
    pass_: str
    loss: str
    devices: int
    evidence: hlo.HloEvidence
    flops: Optional[float]
    times_s: List[float]


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


def _positive_control(jax: Any, compat: Any, devices: Sequence[Any], parameters: Dict[str, Any]) -> Dict[str, Any]:
    """slogdet with matrix rows sharded: must be gathered, so must show a collective."""
    jnp = jax.numpy
    n, count = parameters["matrix_size"], len(devices)
    record: Dict[str, Any] = {"devices": count, "sharded_axis": "matrix rows", "ok": False}
    if count < 2:
        record["why_not"] = "needs at least 2 devices"
        return record
    P = jax.sharding.PartitionSpec
    mesh = compat.batch_mesh(devices)
    try:
        shape = (parameters["batch"], n, n)
        x = jax.device_put(jnp.ones(shape, parameters["dtype"]), jax.sharding.NamedSharding(mesh, P(None, "batch")))
        compiled = jax.jit(lambda m: jnp.mean(jnp.linalg.slogdet(m)[1])).lower(x).compile()
    except Exception as error:  # e.g. rows that do not split evenly on an old release
        record["why_not"] = f"{type(error).__name__}: {error}".splitlines()[0]
        return record
    evidence = hlo.read_evidence(compat.compiled_hlo_text(compiled))
    record.update(_structure_record(evidence))
    record["ok"] = evidence.collective_count > 0
    return record


# --------------------------------------------------------------------------
# Figures


def _fed_by(evidence: hlo.HloEvidence) -> List[str]:
    """The collectives upstream of the LU's operand, by name."""
    return sorted({name for call in evidence.lu_calls for name in call.fed_by})


def _structure_record(evidence: hlo.HloEvidence) -> Dict[str, Any]:
    return {
        "collectives": dict(evidence.collectives),
        "lu_batch": evidence.lu_batch,
        "lu_fed_by": _fed_by(evidence),
        "linalg_calls": [
            {"target": call.target, "kind": call.kind, "operand_shape": list(call.operand_shape or []),
             "batch": call.batch, "shape_source": call.shape_source, "fed_by": list(call.fed_by)}
            for call in evidence.linalg_calls
        ],
    }


def _timing_record(times: List[float]) -> Dict[str, Any]:
    ordered = sorted(times)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {"median_s": statistics.median(ordered), "q1_s": q1, "q3_s": q3,
            "min_s": ordered[0], "max_s": ordered[-1], "runs": len(ordered)}


def _scaling_rows(cases: List[Case]) -> List[Dict[str, Any]]:
    """Speedup vs 1 device for each loss, and efficiency = slogdet ÷ control speedup."""
    median = {(c.mode, c.pass_, c.loss, c.devices): statistics.median(c.times_s) for c in cases}
    rows = []
    for mode, pass_, loss, devices in median:
        if loss != "slogdet":
            continue
        row: Dict[str, Any] = {"mode": mode, "pass": pass_, "devices": devices,
                               "control_speedup": None, "slogdet_speedup": None, "efficiency": None}
        for name in LOSSES:
            base = median.get((mode, pass_, name, 1))
            here = median.get((mode, pass_, name, devices))
            if base is not None and here:
                row[f"{name}_speedup"] = base / here
        if row["control_speedup"] and row["slogdet_speedup"] is not None:
            row["efficiency"] = row["slogdet_speedup"] / row["control_speedup"]
        rows.append(row)
    return rows


def _find(rows: List[Dict[str, Any]], mode: str, pass_: str, devices: int) -> Dict[str, Any]:
    for row in rows:
        if (row["mode"], row["pass"], row["devices"]) == (mode, pass_, devices):
            return row
    return {}


def _primary(cases: List[Case], largest: int) -> Optional[Case]:
    """The case the verdict rests on: jit forward slogdet at the largest count."""
    slogdet = [c for c in cases if c.loss == "slogdet" and c.devices == largest]
    for mode, pass_ in (("jit", "forward"), ("jit", "grad")):
        for case in slogdet:
            if (case.mode, case.pass_) == (mode, pass_):
                return case
    return slogdet[0] if slogdet else None


# --------------------------------------------------------------------------
# Output


def _human_summary(result: Dict[str, Any], cases: List[Case], rows: List[Dict[str, Any]]) -> str:
    env = result["environment"]
    lines = [
        f"scaling check: jax {env.get('jax')} on {env.get('backend')} ({env.get('device_count')} devices)",
        f"verdict: {result['verdict']}",
        f"reason: {result['reason']}",
        "",
        "structure (compiled HLO, per device):",
        f"  {'mode':<10}{'pass':<9}{'loss':<9}{'dev':>4}{'all-gather':>11}{'collectives':>12}{'LU batch':>10}  LU fed by",
    ]
    for case in cases:
        fed = sorted({n for call in case.evidence.lu_calls for n in call.fed_by})
        lu_batch = case.evidence.lu_batch
        lines.append(
            f"  {case.mode:<10}{case.pass_:<9}{case.loss:<9}{case.devices:>4}{case.evidence.all_gathers:>11}"
            f"{case.evidence.collective_count:>12}{'-' if lu_batch is None else lu_batch:>10}  {', '.join(fed) or '-'}"
        )
    control = result["evidence"]["positive_control"]
    lines.append(f"  positive control (rows sharded, {control['devices']} dev): "
                 f"{'collective seen' if control['ok'] else 'NO collective: ' + control.get('why_not', 'detector blind')}")
    lines += ["", "timings (ms; median [IQR]; speedup vs 1 device; efficiency = slogdet ÷ control speedup):"]
    lines.append(f"  {'mode':<10}{'pass':<9}{'dev':>4}{'control':>24}{'slogdet':>24}{'ctl x':>7}{'det x':>7}{'eff':>6}")
    timing = {(c.mode, c.pass_, c.loss, c.devices): _timing_record(c.times_s) for c in cases}
    for row in rows:
        cells = []
        for loss in LOSSES:
            t = timing[(row["mode"], row["pass"], loss, row["devices"])]
            cells.append(f"{t['median_s'] * 1e3:.2f} [{t['q1_s'] * 1e3:.2f}-{t['q3_s'] * 1e3:.2f}]")
        lines.append(
            f"  {row['mode']:<10}{row['pass']:<9}{row['devices']:>4}{cells[0]:>24}{cells[1]:>24}"
            f"{_fmt(row['control_speedup']):>7}{_fmt(row['slogdet_speedup']):>7}{_fmt(row['efficiency']):>6}"
        )
    for note in result["evidence"]["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _fmt(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


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


def run(parameters: Dict[str, Any]) -> Dict[str, Any]:
    """Measure everything: the RESULT.json dict, plus the cases and scaling rows for the summary."""
    _force_host_devices(max(parameters["devices"]))
    import jax

    if parameters["dtype"] == "float64":
        jax.config.update("jax_enable_x64", True)
    from repro import compat
    from repro.environment import describe_environment

    environment = describe_environment()
    available = jax.devices()
    notes: List[str] = []
    measured = [count for count in parameters["devices"] if count <= len(available)]
    skipped = [count for count in parameters["devices"] if count > len(available)]
    if skipped:
        notes.append(f"requested {skipped} devices but only {len(available)} exist on "
                     f"{environment['backend']}; measured {measured or 'nothing'}")
    _progress(f"jax {environment['jax']} on {environment['backend']}: {len(available)} devices, "
              f"measuring {measured}")

    params, batch = _make_workload(jax, compat, parameters)
    losses = _losses(jax, parameters["matrix_size"])
    P = jax.sharding.PartitionSpec
    NamedSharding = jax.sharding.NamedSharding
    cases: List[Case] = []
    for count in measured:
        mesh = compat.batch_mesh(available[:count])
        sharded_batch = jax.device_put(batch, NamedSharding(mesh, P("batch")))
        replicated_params = jax.device_put(params, NamedSharding(mesh, P()))
        for mode in parameters["modes"]:
            for pass_ in parameters["passes"]:
                for loss_name in LOSSES:
                    function = _in_mode(jax, compat, mode, losses[loss_name], mesh)
                    if pass_ == "grad":
                        function = jax.grad(function)
                    _progress(f"{count} dev, {mode}, {pass_}, {loss_name}")
                    evidence, flops, times = _run_case(
                        jax, compat, function, (replicated_params, sharded_batch), parameters)
                    cases.append(Case(mode, pass_, loss_name, count, evidence, flops, times))

    largest = max(measured) if measured else 0
    _progress(f"positive control at {largest} devices")
    control = _positive_control(jax, compat, available[:largest], parameters)
    rows = _scaling_rows(cases)
    primary = _primary(cases, largest)
    verdict, reason = _verdict(primary, control, rows, parameters, environment["backend"])

    jit_forward = next((c for c in cases if (c.mode, c.pass_, c.loss, c.devices)
                        == ("jit", "forward", "slogdet", largest)), None)
    summary = {
        "all_gathers": jit_forward.evidence.all_gathers if jit_forward else None,
        "collectives": jit_forward.evidence.collective_count if jit_forward else None,
        "lu_batch_per_device": jit_forward.evidence.lu_batch if jit_forward else None,
        # Which collectives feed the LU's operand ("" for none): old releases
        # replicate with an all-reduce, later ones with an all-gather.
        "lu_fed_by": ",".join(_fed_by(jit_forward.evidence)) if jit_forward else None,
        "global_batch": parameters["batch"],
        "devices": largest or None,
        "efficiency_2": _find(rows, "jit", "forward", 2).get("efficiency"),
        "efficiency_4": _find(rows, "jit", "forward", 4).get("efficiency"),
        "positive_control_ok": bool(control["ok"]),
    }
    result = {
        "check": "scaling",
        "verdict": verdict,
        "reason": reason,
        "environment": environment,
        "parameters": dict(parameters),
        "evidence": {
            "summary": summary,
            "verdict_from": None if primary is None else
            {"mode": primary.mode, "pass": primary.pass_, "devices": primary.devices},
            "devices_requested": parameters["devices"],
            "devices_measured": measured,
            "shard_map": compat.shard_map_location(),
            "positive_control": control,
            "structure": [
                {"mode": c.mode, "pass": c.pass_, "loss": c.loss, "devices": c.devices,
                 "flops": c.flops, **_structure_record(c.evidence)} for c in cases
            ],
            "timings": [
                {"mode": c.mode, "pass": c.pass_, "loss": c.loss, "devices": c.devices,
                 **_timing_record(c.times_s)} for c in cases
            ],
            "scaling": rows,
            "notes": notes,
        },
    }
    return {"result": result, "cases": cases, "rows": rows}


def _verdict(primary: Optional[Case], control: Dict[str, Any], rows: List[Dict[str, Any]],
             parameters: Dict[str, Any], backend: str) -> Tuple[str, str]:
    if primary is None:
        return verdicts.INCONCLUSIVE, "Nothing was measured: no requested device count exists here."
    row = _find(rows, primary.mode, primary.pass_, primary.devices)
    verdict, reason = verdicts.scaling_verdict(
        devices=primary.devices,
        global_batch=parameters["batch"],
        lu_batch=primary.evidence.lu_batch,
        lu_fed_by=[name for call in primary.evidence.lu_calls for name in call.fed_by],
        positive_control_ok=bool(control["ok"]),
        efficiency=row.get("efficiency"),
        control_speedup=row.get("control_speedup"),
        # Forced host devices all run on the same cores.
        timing_is_evidence=backend != "cpu",
    )
    return verdict, f"{primary.mode} {primary.pass_}: {reason}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        out, parameters = parse_parameters(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    outcome = run(parameters)
    write_result(out, outcome["result"])
    print(_human_summary(outcome["result"], outcome["cases"], outcome["rows"]))
    _progress(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
