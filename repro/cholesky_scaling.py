"""The cholesky sharding repro: does a batch-sharded jnp.linalg.cholesky factorise the whole batch on every device?

    python -m repro.cholesky_scaling --out RESULT.json [--devices 1,2,4] [--batch 4096] [--matrix-size 32] ...

The scaling check's question for another linear-algebra op. A batch of
symmetric positive-definite matrices is sharded over its batch axis and
factorised under jit, once per device count. The compiled (partitioned) HLO
decides: the Cholesky custom call (LAPACK potrf on CPU) holding the whole batch
on each device, or fed by a collective, is the bug; holding one device's share
and fed by none is its absence. A positive control (each matrix's rows sharded,
which the factorisation cannot do locally) must show a collective, or the
detector is not trusted. Timings are shown beside, never weighed: forced host
CPU devices share the same cores. Progress goes to stderr, a summary to stdout.

Its parameters are scaling's rules for the keys it shares with it, registered
once in `repro.parameters`, where the kit reads them too. jax is imported only inside `run`, after the host devices are forced, so
this module imports with the standard library alone.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from repro import compile_cache, hlo, verdicts
from repro import parameters as parameter_rules
from repro.cli import UsageError, checked_parameters, exit_now, parser, write_result
from repro.contract import EXIT_USAGE

CHECK = "cholesky"
DEFAULTS: Dict[str, Any] = parameter_rules.DEFAULTS[CHECK]  # registered once, in repro/parameters.py


def _progress(message: str) -> None:
    print(f"[cholesky] {message}", file=sys.stderr, flush=True)


def _force_host_devices(count: int) -> None:
    """Ask XLA's CPU backend for ``count`` devices; must run before jax is imported."""
    existing = os.environ.get("XLA_FLAGS", "").split()
    kept = [part for part in existing if not part.startswith("--xla_force_host_platform_device_count=")]
    os.environ["XLA_FLAGS"] = " ".join(kept + [f"--xla_force_host_platform_device_count={count}"])


def _spd_batch(jax: Any, compat: Any, parameters: Dict[str, Any]) -> Any:
    """``batch`` symmetric positive-definite n×n matrices: X Xᵀ/n + I, drawn in one program."""
    jnp = jax.numpy
    n, dtype = parameters["matrix_size"], jnp.dtype(parameters["dtype"])

    def draw(key: Any) -> Any:
        x = jax.random.normal(key, (parameters["batch"], n, n), dtype)
        return jnp.matmul(x, jnp.swapaxes(x, -1, -2)) / n + jnp.eye(n, dtype=dtype)

    return jax.jit(draw)(compat.random_key(parameters["seed"]))


def _cholesky_figures(evidence: hlo.HloEvidence) -> Dict[str, Any]:
    """What the compiled module shows about its Cholesky calls: the largest batch per device, what feeds them."""
    calls = [call for call in evidence.linalg_calls if call.kind == "cholesky"]
    batches = [call.batch for call in calls if call.batch is not None]
    return {"collectives": dict(evidence.collectives), "cholesky_calls": [call.target for call in calls],
            "cholesky_batch": max(batches) if batches else None,
            "cholesky_fed_by": sorted({name for call in calls for name in call.fed_by}),
            "program": evidence.program}


def _timed(compat: Any, compiled: Any, x: Any, parameters: Dict[str, Any]) -> List[float]:
    for _ in range(parameters["warmup"]):
        compat.block_until_ready(compiled(x))
    times = []
    for _ in range(parameters["repeats"]):
        start = time.perf_counter()
        compat.block_until_ready(compiled(x))
        times.append(time.perf_counter() - start)
    return times


def _case(jax: Any, compat: Any, matrices: Any, devices: Sequence[Any], parameters: Dict[str, Any]) -> Dict[str, Any]:
    """The batch sharded over ``devices``, factorised under jit: its compiled HLO and its timings."""
    P = jax.sharding.PartitionSpec
    mesh = compat.batch_mesh(devices)
    x = jax.device_put(matrices, jax.sharding.NamedSharding(mesh, P("batch")))
    compiled = jax.jit(jax.numpy.linalg.cholesky).lower(x).compile()
    figures = _cholesky_figures(hlo.read_evidence(compat.compiled_hlo_text(compiled)))
    times = _timed(compat, compiled, x, parameters)
    return {"devices": len(devices), **figures, "median_s": statistics.median(times) if times else None,
            "times_s": times}


def _positive_control(jax: Any, compat: Any, matrices: Any, devices: Sequence[Any]) -> Dict[str, Any]:
    """Each matrix's rows sharded: the factorisation needs whole matrices, so a collective must show."""
    record: Dict[str, Any] = {"devices": len(devices), "sharded_axis": "matrix rows", "ok": False}
    if len(devices) < 2:
        record["why_not"] = "needs at least 2 devices"
        return record
    P = jax.sharding.PartitionSpec
    try:  # only calls into JAX inside: what fails here is a fact about this release
        x = jax.device_put(matrices, jax.sharding.NamedSharding(compat.batch_mesh(devices), P(None, "batch")))
        compiled = jax.jit(jax.numpy.linalg.cholesky).lower(x).compile()
    except Exception as error:
        record["why_not"] = f"{type(error).__name__}: {error}".splitlines()[0]
        return record
    evidence = hlo.read_evidence(compat.compiled_hlo_text(compiled))
    record.update(_cholesky_figures(evidence), ok=evidence.collective_count > 0)
    return record


def verdict(devices: int, global_batch: int, batch: Optional[int], fed_by: Sequence[str],
            control_ok: bool) -> Tuple[str, str]:
    """The verdict and its reason for the compiled Cholesky at ``devices`` (``batch``: per device; None: no call)."""
    if not control_ok:
        return verdicts.INCONCLUSIVE, ("The positive control (cholesky sharded on matrix rows) showed no collective, "
                                       "so the detector cannot be trusted on this release.")
    if devices < 2:
        return verdicts.INCONCLUSIVE, f"Only {devices} device was measured; replication needs at least 2 to show."
    if batch is None:
        return verdicts.INCONCLUSIVE, ("No Cholesky custom call (potrf) was found in the compiled program, so this "
                                       "release lowers it differently and the check does not apply.")
    share = global_batch // devices
    figures = (f"at {devices} devices the Cholesky factorises {batch} of {global_batch} matrices per device "
               f"(an even share is {share}), fed by {', '.join(fed_by) or 'no collective'}")
    if batch >= global_batch or (fed_by and batch > share):
        return verdicts.AFFECTED, f"Every device factorises the whole batch: {figures}."
    if not fed_by and batch == share:
        return verdicts.UNAFFECTED, f"Each device factorises only its own share: {figures}."
    return verdicts.INCONCLUSIVE, f"The structure fits neither pattern: {figures}."


def _speedups(cases: List[Dict[str, Any]]) -> Dict[str, Optional[float]]:
    """Speedup over one device at 2 and 4 devices (time on 1 ÷ time on N), where both were timed."""
    medians = {case["devices"]: case["median_s"] for case in cases if case["median_s"]}
    return {f"cholesky_speedup_{n}": medians[1] / medians[n] if 1 in medians and n in medians else None
            for n in (2, 4)}


def run(parameters: Dict[str, Any]) -> Dict[str, Any]:
    """Every device count, then the positive control at the largest: the RESULT.json dict."""
    _force_host_devices(max(parameters["devices"]))
    import jax

    cache = compile_cache.enable(jax)
    if parameters["dtype"] == "float64":
        jax.config.update("jax_enable_x64", True)
    from repro import compat
    from repro.environment import describe_environment

    environment = describe_environment()
    available = len(jax.devices())
    measured = [count for count in parameters["devices"] if count <= available]
    notes = [] if measured == parameters["devices"] else [
        f"requested {parameters['devices']} devices but only {available} exist; measured {measured or 'nothing'}"]
    matrices = _spd_batch(jax, compat, parameters)
    cases = []
    for count in measured:
        _progress(f"{count} dev: jit(cholesky) of a batch-sharded {parameters['batch']}×{parameters['matrix_size']}²")
        cases.append(_case(jax, compat, matrices, jax.devices()[:count], parameters))
    largest = max(measured) if measured else 0
    control = _positive_control(jax, compat, matrices, jax.devices()[:largest])
    at = next((case for case in cases if case["devices"] == largest), None)
    judged = (verdicts.INCONCLUSIVE, "Nothing was measured: no requested device count exists here.") if at is None \
        else verdict(largest, parameters["batch"], at["cholesky_batch"], at["cholesky_fed_by"], bool(control["ok"]))
    summary = {"all_gathers": at["collectives"].get("all-gather") if at else None,
               "collectives": sum(at["collectives"].values()) if at else None,
               "cholesky_batch_per_device": at["cholesky_batch"] if at else None,
               "cholesky_fed_by": ",".join(at["cholesky_fed_by"]) if at else None,
               "global_batch": parameters["batch"], "devices": largest or None, **_speedups(cases),
               "positive_control_ok": bool(control["ok"])}
    evidence = {"summary": summary, "structure": cases, "positive_control": control, "notes": notes,
                "devices_requested": parameters["devices"], "devices_measured": measured,
                "compile_cache": cache.figures()}
    metrics = {f"cholesky_{case['devices']}dev_ms": {"unit": "ms", "samples": [t * 1e3 for t in case["times_s"]],
                                                     "better": "lower"} for case in cases if case["times_s"]}
    return {"check": CHECK, "verdict": judged[0], "reason": judged[1], "environment": environment,
            "parameters": dict(parameters), "evidence": evidence, "metrics": metrics}


def _human_summary(result: Dict[str, Any]) -> str:
    lines = [f"{'devices':>7}  {'cholesky batch/device':>21}  {'fed by':<12}  {'median ms':>9}"]
    for case in result["evidence"]["structure"]:
        median = f"{case['median_s'] * 1e3:.2f}" if case["median_s"] else "-"
        lines.append(f"{case['devices']:>7}  {str(case['cholesky_batch']):>21}  "
                     f"{','.join(case['cholesky_fed_by']) or '-':<12}  {median:>9}")
    control = result["evidence"]["positive_control"]
    lines.append(f"positive control (rows sharded): {'collective seen' if control['ok'] else 'FAILED'}"
                 + (f" ({control['why_not']})" if control.get("why_not") else ""))
    lines.append(f"verdict: {result['verdict']}: {result['reason']}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None, script: bool = False) -> int:
    try:
        out, parameters = checked_parameters(CHECK, parser(CHECK, __doc__.split("\n\n")[0]),
                                             sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    result = run(parameters)
    write_result(out, result)
    print(_human_summary(result))
    _progress(f"wrote {os.path.basename(out)}")  # its name only: the kit's scratch folder is gone after the run
    if script:
        exit_now(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(script=True))
