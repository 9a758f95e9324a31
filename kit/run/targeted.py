"""A program explained for a chip this machine does not have: run on CPU, exported, compiled for the target.

Three steps, each in the release's environment built with the target's
compiler (`kit.targets.Target.install_extra`: jax[tpu], or the CUDA plugin):

1. the program runs unmodified on CPU host devices (``JAX_PLATFORMS=cpu``, so
   the target's compiler never loads into it), with `repro.target_export`
   armed: each jitted computation it calls is exported for the target's
   platform into a scratch folder;
2. `repro.target_compile` compiles every export over the target's
   compile-only devices, each input laid out as the program laid it out, and
   writes the compiler's HLO as XLA's dump would;
3. the caller reads that dump as it reads a CPU run's (`kit.run.explained`).

Nothing runs on the target: its verdicts say "compiled for ..., not run".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Protocol

from repro.target_export import EXPORTS_ENV, MAX_EXPORTS, PLATFORM_ENV, manifest

from ..install import Environment
from ..json_types import JsonObject, as_object
from .child_processes import Ended
from ..log_events import Log, detail
from ..package_files import repro_root
from ..targets import LOWEST_RELEASE, Target

class RunChild(Protocol):
    """`script_runs.run_child`, handed in by the runner's side (which imports this module: no import circle)."""

    def __call__(self, cmd: list[str], timeout: int, log: Log, extra_env: Mapping[str, str] | None = None,
                 pythonpath: tuple[Path, ...] = (), output_log: Path | None = None, echo: bool = True,
                 cwd: Path | None = None) -> Ended: ...


def program_env(target: Target, exports: Path) -> dict[str, str]:
    """What the program's run is told besides: CPU only, and where its exports go."""
    return {"JAX_PLATFORMS": "cpu", EXPORTS_ENV: str(exports), PLATFORM_ENV: target.platform,
            "JAX_ENABLE_COMPILATION_CACHE": "false",  # a compile loaded from a cache dumps no text to read
            # Added after the environment's own paths (`repro_env`): its sitecustomize arms the export.
            "PYTHONPATH": str(repro_root() / "repro" / "target_site")}


def compile_exports(run_child: RunChild, env: Environment, target: Target, exports: Path, scratch: Path,
                    dump: Path, timeout: int, log: Log) -> JsonObject:
    """Compile what the program exported for ``target`` into ``dump``; the compile's result (what compiled,
    what failed and why, the devices), or one saying why there is none."""
    exported = [entry for entry in manifest(str(exports)) if "file" in entry]
    if not exported:
        errors = [entry["error"] for entry in manifest(str(exports)) if "error" in entry]
        why = (f"its export for {target.platform} failed: {errors[0]}" if errors
               else "the program called no jitted function on arrays")
        return {"modules": [], "failed": [], "none_exported": why}
    described = scratch / "target.json"
    described.write_text(target.as_parameter, encoding="utf-8")  # the one spelling, where it leaves the kit
    out = scratch / "target-result.json"
    cmd = [str(env.python), "-m", "repro.target_compile", "--exports", str(exports), "--target", str(described),
           "--dump", str(dump), "--out", str(out)]
    log(detail(f"compiling {len(exported)} exported computation(s) for {target.title}"))
    # Its output (libtpu's start-up warnings among it) goes to a log in the scratch folder, not the console.
    ended = run_child(cmd, timeout, log, {"JAX_PLATFORMS": "cpu", "JAX_ENABLE_COMPILATION_CACHE": "false"},
                      env.pythonpath, scratch / "compile.log",
                      echo=False)
    try:
        result = json.loads(out.read_text(encoding="utf-8"))  # repro/target_compile.py's object: the JSON edge
        if not isinstance(result, dict):
            raise ValueError("not an object")
    except (OSError, ValueError):
        last = next((line for line in reversed(ended.tail) if line.strip()), "no output")
        how = "did not finish" if ended.timed_out else f"exited {ended.code}"
        return {"modules": [], "failed": [], "compile_crashed": f"the compile for {target.title} {how}: {last}"}
    return as_object(result)


def compile_sentence(target: Target, result: Mapping[str, object]) -> str:
    """How the compile for the target went, in one clause for the record's reason: how many computations the
    program called, how many compiled, and every gap between them with its cause."""
    for key in ("no_devices", "none_exported", "compile_crashed"):
        if result.get(key):
            return f"nothing compiled for {target.title}: {result[key]}"
    failed, modules = result.get("failed"), result.get("modules")
    compiled = len(modules) if isinstance(modules, list) else 0
    counts = as_object(result.get("counts"))
    called = _count(counts, "called")
    said = f"{compiled} computation(s) {target.compiled_not_run}"
    if called:
        same = _count(counts, "same")
        said = (f"{'at least ' if _count(counts, 'uncounted') else ''}{called} jitted computation(s) called"
                + (f" ({same} the same as another)" if same else "") + f"; {said}")
    gaps = missing_sentences(counts, failed if isinstance(failed, list) else [])
    return said + "".join(f"; {gap}" for gap in gaps)


def missing_sentences(counts: Mapping[str, object], failed: list[object]) -> list[str]:
    """Each reason a computation the program called was not compiled for the target, one clause each."""
    gaps = []
    if failed:
        gaps.append(f"{len(failed)} could not be compiled for it, so what they do there cannot be told "
                    f"(e.g. {as_object(failed[0]).get('error')})")
    if _count(counts, "failed"):
        gaps.append(f"{_count(counts, 'failed')} could not be exported for it (not examined)")
    if _count(counts, "over_limit"):
        gaps.append(f"{_count(counts, 'over_limit')} past the kit's {MAX_EXPORTS} exports were not examined")
    return gaps


def _count(counts: Mapping[str, object], key: str) -> int:
    value = counts.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def release_too_old(target: Target, release: str) -> str:
    """Why ``release`` cannot compile for ``target`` here ("" when it can be tried)."""
    lowest = LOWEST_RELEASE[target.platform]
    if not release or _order(release) >= _order(lowest):
        return ""
    if target.platform == "tpu":
        return (f"jax {release} cannot compile for {target.title} here: jax[tpu] before {lowest} needs "
                "libtpu-nightly, which the package index does not serve")
    return f"jax {release} cannot compile for {target.title} here: the kit compiles for GPUs from jax {lowest}"


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))
