"""`jax-kit reduce` against shrinkray and pysource-minimize, each given the kit's own interestingness test.

    python benchmarks/reduce_tools.py --tools-venv DIR [--time-limit S] [CASE ...]

CASE is ``PROGRAM:BAD:GOOD`` (default: the two output cases of the held-out trial in tests/data/reduce/, an
exception under jit and a wrong printed value). DIR is a virtual environment holding ``shrinkray`` (not the kit's requirements): ``uv venv DIR --python 3.13
&& uv pip install --python DIR/bin/python "shrinkray<26"`` (shrinkray 26 needs llama-cpp-python built from
source). pysource-minimize is imported into this process, so ``--pysource-venv DIR2`` is a venv of this
Python's version holding it (``uv venv DIR2 --python "$(which python)" && uv pip install --python
DIR2/bin/python pysource-minimize``; run under another version its AST handling refuses every candidate).

Per case, in one run: the releases' environments and one pool of warm workers (`kit.reduce.workers`), the
problem read off the original's runs as `reduce` reads it, then each tool from the same starting text with the
same time limit and a fresh candidate cache (the compile cache is shared: a later tool finds the compiles of an
earlier one, so the kit runs first). The kit's test is the `Tester` itself: pysource-minimize calls it in this
process; shrinkray runs a small client per candidate that asks this process over a unix socket. Printed: each
tool's statements left, seconds, candidates judged; then the table docs/reduce.md quotes. Every result is
checked again with the test. The machine may be shared: read the seconds side by side, not alone.
"""

from __future__ import annotations

import argparse
import ast
import os
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kit import scratch  # noqa: E402
from kit.config import load_matrix  # noqa: E402
from kit.reduce import command  # noqa: E402
from kit.reduce.options import parse  # noqa: E402
from kit.reduce.program import Program  # noqa: E402
from kit.reduce.search import Reducer  # noqa: E402
from kit.reduce.trials import Sides, Tester  # noqa: E402
from kit.reduce.workers import Pool  # noqa: E402

CASES = ["tests/data/reduce/wright_fisher.py:0.5.0:0.5.1", "tests/data/reduce/mlp_dead_units.py:0.4.33:0.4.34"]
CLIENT = '''import socket, sys
text = open(sys.argv[1], "rb").read()
with socket.socket(socket.AF_UNIX) as s:
    s.connect({path!r}); s.sendall(text); s.shutdown(socket.SHUT_WR)
    sys.exit(0 if s.recv(1) == b"1" else 1)
'''


@dataclass
class Result:
    tool: str
    statements: int
    seconds: float
    judged: int
    run: int
    holds: bool


def statements(text: str) -> int:
    try:
        return sum(1 for node in ast.walk(ast.parse(text)) if isinstance(node, ast.stmt))
    except SyntaxError:
        return -1


def keeps(tester: Tester, text: str, deadline: float) -> bool:
    """The kit's test on any text (a tool's candidate may not parse); nothing is run past the deadline."""
    if time.monotonic() > deadline:
        return False
    try:
        program = Program(ast.parse(text))
    except (SyntaxError, ValueError):
        return False
    return tester.keeps(program)


def run_kit(tester: Tester, start: Program, limit: float) -> str:
    return Reducer(start, tester, time.monotonic() + limit).reduce().text


def run_pysource_minimize(tester: Tester, start: Program, limit: float, venv: Path) -> str:
    # Imported into this process: its site-packages must be this Python's version (its AST code is per version).
    sys.path.append(str(venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"))
    from pysource_minimize import minimize  # type: ignore[import-not-found]
    deadline = time.monotonic() + limit
    best = [start.text]

    def checker(text: str) -> bool:
        if time.monotonic() > deadline:  # past the limit: only the last text kept holds (it re-checks it), so it ends
            return text == last[0]
        kept = keeps(tester, text, deadline)
        if kept:
            last[0] = text
            if statements(text) <= statements(best[0]):
                best[0] = text
        return kept

    last = [start.text]
    try:
        minimize(start.text, checker)
    except Exception as error:  # noqa: BLE001 (it gives up with its own exception; the best so far stands)
        print(f"  pysource-minimize ended: {type(error).__name__}: {error}", flush=True)
    return best[0]


def run_shrinkray(tester: Tester, start: Program, limit: float, venv: Path, folder: Path, jobs: int) -> str:
    socket_path = str(folder / "judge.sock")
    deadline = time.monotonic() + limit

    class Judge(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            text = self.rfile.read().decode("utf-8", "replace")
            self.wfile.write(b"1" if keeps(tester, text, deadline) else b"0")

    server = socketserver.ThreadingUnixStreamServer(socket_path, Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = folder / "client.py"
    client.write_text(CLIENT.format(path=socket_path), encoding="utf-8")
    test = folder / "interesting.sh"
    test.write_text(f'#!/bin/sh\nexec {sys.executable} {client} "$1"\n', encoding="utf-8")
    test.chmod(0o755)
    target = folder / "program.py"
    target.write_text(start.text, encoding="utf-8")
    try:
        subprocess.run([str(venv / "bin" / "shrinkray"), "--input-type", "arg", "--ui", "basic", "--parallelism",
                        str(jobs), "--timeout", "0", str(test), str(target)], cwd=folder,
                       timeout=limit + 30, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pass  # the file holds the best so far
    finally:
        server.shutdown()
        server.server_close()
    return target.read_text(encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="*", default=CASES)
    parser.add_argument("--tools-venv", required=True, type=Path, help="holds shrinkray (its command)")
    parser.add_argument("--pysource-venv", type=Path, default=None,
                        help="holds pysource-minimize for this Python's version (default: --tools-venv)")
    parser.add_argument("--time-limit", type=float, default=200.0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    matrix = load_matrix(str(ROOT / "matrix.toml"))
    rows = []
    for case in args.cases:
        program, bad, good = case.split(":")
        with tempfile.TemporaryDirectory() as out, scratch.folder("reduce-bench") as folder:
            options = parse(matrix, [str(ROOT / program), "--bad", bad, "--good", good, "--out", out])
            envs = {r: command.environment(matrix, options, r, print) for r in (bad, good)}
            start = command.starting_program(options)
            pool = Pool(envs, folder, args.jobs, cache=True)
            try:
                sides = Sides(bad, good, options.program.name, folder, options.timeout_s, False)
                problem = command.problem_of(options, Tester(None, pool, sides, args.jobs), start)
                sides.timeout = command.candidate_timeout(options.timeout_s, problem)  # as reduce itself sets it
                print(f"{program}: {problem.sentence()}", flush=True)
                tools = [("jax-kit reduce", lambda t: run_kit(t, start, args.time_limit)),
                         ("pysource-minimize", lambda t: run_pysource_minimize(t, start, args.time_limit,
                                                                                args.pysource_venv or args.tools_venv)),
                         ("shrinkray", lambda t: run_shrinkray(t, start, args.time_limit, args.tools_venv, folder,
                                                               args.jobs))]
                for name, tool in tools:
                    tester = Tester(problem, pool, sides, args.jobs)
                    if not keeps(tester, start.text, float("inf")):  # the tool's first question, asked here
                        bad, good = tester.run_both(start)
                        print(f"  {name}: the original no longer keeps the problem: {bad.said(4)!r} / "
                              f"{good.said(4)!r}", flush=True)
                        continue
                    tester = Tester(problem, pool, sides, args.jobs)
                    began = time.monotonic()
                    try:
                        text = tool(tester)
                    except Exception as error:  # a tool that gives up says so; the others still run
                        print(f"  {name}: stopped: {type(error).__name__}: {error}", flush=True)
                        continue
                    seconds = time.monotonic() - began
                    again = Tester(problem, pool, sides, args.jobs)
                    result = Result(name, statements(text), seconds, tester.counts.tried, tester.counts.run,
                                    keeps(again, text, float("inf")))
                    rows.append((program, start.statements, result))
                    print(f"  {name}: {result.statements} statements, {seconds:.0f} s, {result.judged} judged, "
                          f"{result.run} run, problem {'kept' if result.holds else 'LOST'}", flush=True)
            finally:
                pool.close()
    print(f"\n| program | statements before | tool | statements after | seconds | candidates judged (run) | "
          f"problem kept |\n|---|---|---|---|---|---|---|")
    for program, before, r in rows:
        print(f"| {Path(program).name} | {before} | {r.tool} | {r.statements} | {r.seconds:.0f} | {r.judged} ({r.run}) "
              f"| {'yes' if r.holds else 'NO'} |")
    print(f"\n(time limit {args.time_limit:.0f} s each, --jobs {args.jobs}, {time.strftime('%Y-%m-%d')}, "
          f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
