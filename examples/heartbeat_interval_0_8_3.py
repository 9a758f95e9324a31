"""Bisect script: does JAX's distributed client heartbeat more often than its timeout? (0.8.2 → 0.8.3, binary only)

    nox -s bisect -- --script examples/heartbeat_interval_0_8_3.py --good 0.8.3 --bad 0.8.2 --commits --jax-repo DIR

JAX 0.8.3's changelog: "JAX v0.8.3 is identical to v0.8.2 with the following two bug fixes patched
in" (openxla/xla 4bc723da, 21552fd8), applied to XLA as `third_party/xla/coordination_service_config_fix.patch`.
One of them is in `CoordinationServiceAgent::StartSendingHeartbeats`: jaxlib 0.8.2's agent sends a
heartbeat once every `heartbeat_timeout` (so one late beat and the service may call the process
dead); from 0.8.3 it sends one every half of it. The change is in the compiled jaxlib alone: the
same jax 0.8.3 Python beats every 2.0 s on jaxlib 0.8.2 and every 1.0 s on jaxlib 0.8.3
(`heartbeat_timeout_seconds=2`), measured by hand with `uv pip install jax==0.8.3 jaxlib==0.8.2`
and `jaxlib==0.8.3`.

How it is seen on one CPU machine: a one-process `jax.distributed.initialize` on localhost,
heartbeat timeout 2 s, kept alive 5.5 s, in a child interpreter whose agent logs each
`HeartbeatRequest` (`TF_CPP_VMODULE=coordination_service_agent=10`); the median gap between the
logged beats is compared with the timeout.

    exit 0   beats at most 0.75 of the timeout apart (good: the fix)
    exit 1   beats further apart than that (bad: one beat per timeout)
    exit 125 fewer than 2 beats logged (cannot tell: skip); a child the service ended for a late beat (the
             bug's own consequence under load) is judged by the beats it logged first
"""

import os
import re
import socket
import statistics
import subprocess
import sys
import time

TIMEOUT_S = 2
ALIVE_S = 5.5
BEAT = re.compile(r"^I\d{4} (\d\d):(\d\d):(\d\d\.\d+) .*coordination_service_agent\.cc:\d+\] HeartbeatRequest", re.M)


def child(port: int) -> None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.distributed.initialize(f"localhost:{port}", num_processes=1, process_id=0,
                               heartbeat_timeout_seconds=TIMEOUT_S)
    time.sleep(ALIVE_S)
    jax.distributed.shutdown()
    print(f"jax {jax.__version__}, jaxlib {jax.lib.__version__ if hasattr(jax.lib, '__version__') else '?'}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def main() -> int:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0", TF_CPP_VMODULE="coordination_service_agent=10")
    run = subprocess.run([sys.executable, __file__, "--child", str(free_port())], env=env,
                         capture_output=True, text=True, timeout=120)
    print(run.stdout.strip())
    beats = [int(h) * 3600 + int(m) * 60 + float(s) for h, m, s in BEAT.findall(run.stderr)]
    gaps = [b - a for a, b in zip(beats, beats[1:]) if b > a]
    if run.returncode != 0:
        # One beat per timeout is the bug: on a loaded machine one late beat and the service calls the process
        # dead and ends it. The beats it logged before that still tell the interval.
        dead = "stopped sending heartbeats" in run.stderr
        print(f"the child failed ({run.returncode}){': the service found it stopped sending heartbeats' if dead else ''}")
        if not gaps:
            print(run.stderr[-1500:])
    if not gaps:
        print(f"{len(beats)} heartbeat(s) logged in {ALIVE_S} s: cannot tell the interval")
        return 125
    gap = statistics.median(gaps)
    print(f"{len(beats)} heartbeats in {ALIVE_S} s, median gap {gap:.2f} s, timeout {TIMEOUT_S} s")
    return 0 if gap <= 0.75 * TIMEOUT_S else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]))
    else:
        sys.exit(main())
