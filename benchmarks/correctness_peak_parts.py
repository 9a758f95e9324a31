"""What the correctness repro's peak memory is made of, and whether buffer donation could cut it.

    python benchmarks/correctness_peak_parts.py --python .nox/jax-envs/jax-0.4.35-cpu-py3.13-*/bin/python
        [--batch 1500000]

In the given interpreter (a child process, on CPU), with the repro's own draw
(`repro.correctness_draw.draw`) of BATCH × 20×20 float32 (default: the
`issue-24843` preset's 1,500,000, 2.24 GiB), it prints the resident memory
after the runtime starts, after the draw, and at the peak of the repro's
`jax.jit(jnp.linalg.slogdet)(x)` and `jax.jit(jnp.linalg.det)(x)`, each over
the input's size; then, from the compiled HLO, what feeds LAPACK's getrf (a
copy of the parameter into another layout is a fresh buffer as big as the
input), how many LU calls one jit of both functions compiles to, and whether
donating the batch to `jit(slogdet)` is accepted. Needs about 2.3× the input
free (5.2 GiB at the default): run it once, on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import gc, json, resource, sys, warnings
    import numpy as np
    import jax, jax.numpy as jnp
    from repro import compat, correctness_draw, hlo, hlo_text

    def rss():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))

    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def lu_feed(text):
        # The getrf call's matrix operand and the entry parameter: their layouts say whether XLA copied.
        module = hlo_text.read_text(text)
        by_name = {i.name: i for _, i in module.instructions()}
        lu = next(i for i in by_name.values() if "getrf" in i.target)
        # The matrix operand: old releases pass the sizes as scalar operands first.
        feed = next((by_name[n] for n in lu.operands
                     if n in by_name and by_name[n].arrays and len(by_name[n].arrays[0].dims) >= 2), None)
        param = next(i for c, i in module.instructions() if i.opcode == "parameter" and c.entry)
        return {"feed": feed.opcode if feed else "?", "feed_shape": feed.shape if feed else "?",
                "param_shape": param.shape}

    jax.jit(lambda a: a + 1)(jnp.zeros(3)).block_until_ready()
    figures = {"jax": jax.__version__, "runtime": rss()}
    x = correctness_draw.draw(jax, compat, {"n": 20, "dtype": "float32", "batch": int(sys.argv[1])}, 0)
    compat.block_until_ready(x)
    gc.collect()
    figures.update(input=x.nbytes, after_draw=rss(), draw_peak=peak())
    sign, logabsdet = jax.jit(jnp.linalg.slogdet)(x)
    outputs = [np.asarray(sign), np.asarray(logabsdet)]
    del sign, logabsdet
    gc.collect()
    figures.update(slogdet_peak=peak(), after_slogdet=rss())
    outputs.append(np.asarray(jax.jit(jnp.linalg.det)(x)))
    figures.update(det_peak=peak())
    figures["lu_feed"] = lu_feed(jax.jit(jnp.linalg.slogdet).lower(x).compile().as_text())
    both = jax.jit(lambda a: (jnp.linalg.slogdet(a), jnp.linalg.det(a))).lower(x).compile().as_text()
    figures["lu_calls_in_one_jit"] = len(hlo.read_evidence(both).lu_calls)
    del x
    small = correctness_draw.draw(jax, compat, {"n": 20, "dtype": "float32", "batch": 1000}, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compat.block_until_ready(jax.jit(jnp.linalg.slogdet, donate_argnums=0)(small))
    figures["donation_taken"] = small.is_deleted()
    figures["donation_warning"] = next((str(w.message).splitlines()[0] for w in caught
                                        if "donated" in str(w.message)), None)
    print(json.dumps(figures))
""")


def measure(python: str, batch: int) -> Dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([python, "-c", CHILD, str(batch)], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    figures: Dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def render(figures: Dict[str, Any], batch: int) -> str:
    size = figures["input"]

    def line(label: str, key: str) -> str:
        return f"{label:<40} {figures[key] / 2**30:6.2f} GiB {figures[key] / size:5.2f}x"

    feed = figures["lu_feed"]
    donation = ("taken" if figures["donation_taken"]
                else f"refused ({figures['donation_warning'] or 'no warning'})")
    return "\n".join([
        f"jax {figures['jax']}, batch {batch} x 20x20 float32: input {size / 2**30:.2f} GiB",
        line("runtime (jax started, one jit run)", "runtime"),
        line("after the draw", "after_draw"),
        line("peak of the draw", "draw_peak"),
        line("peak of jit(slogdet)(x)", "slogdet_peak"),
        line("resident after slogdet", "after_slogdet"),
        line("peak of jit(det)(x) (whole run)", "det_peak"),
        f"getrf's operand: {feed['feed']} {feed['feed_shape']} (the parameter: {feed['param_shape']})",
        f"LU calls when one jit returns slogdet and det: {figures['lu_calls_in_one_jit']}",
        f"donating the batch to jit(slogdet): {donation}",
    ])


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="the environment's python, with jax and numpy")
    parser.add_argument("--batch", type=int, default=1_500_000, help="matrices in the batch (the preset's)")
    args = parser.parse_args(argv)
    print(render(measure(args.python, args.batch), args.batch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
