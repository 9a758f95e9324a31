"""A metric bisect's kept samples file holding the wrong types (docs/faults.md, "Bisect"): the file is not reused,
the log says why, and the bounds are measured again; never a traceback (``"started": "yesterday"``, NaN, rounds
that are not lists) nor a read that waits forever (a named pipe)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kit import __version__
from kit.bisect.probe.metric_samples import SCHEMA, MetricSamples

ROOT = Path(__file__).resolve().parents[2]
IDENTITY = {"subject": "table", "metric": "t_ms", "good": "0.6.0", "bad": "0.4.35", "backend": "cpu"}
BOUNDS = {"0.6.0": ("3.12", "0.6.0"), "0.4.35": ("3.12", "0.4.35")}


def _samples(folder: Path, read: bool = True) -> MetricSamples:
    return MetricSamples(folder / "metric", IDENTITY, "this-machine", BOUNDS, "test-bisect", read=read, log=lambda _line: None)


def _kept(**changes: Any) -> dict[str, Any]:
    kept: dict[str, Any] = {"schema": SCHEMA, "machine": "this-machine", "kit_version": __version__,
                            "environments": {v: list(env) for v, env in BOUNDS.items()}, "started": time.time(),
                            "by": "an earlier bisect", "pairs": {},
                            "rounds": [{"good": [1.0, 1.1], "bad": [2.0, 2.1], "good_s": 0.5, "bad_s": 0.5}]}
    kept.update(changes)
    return kept


HOSTILE = {
    "a start time in words": json.dumps(_kept(started="yesterday")),
    "a NaN start time": json.dumps(_kept(started=float("nan"))),
    "a NaN start time on another machine": json.dumps(_kept(started=float("nan"), machine="elsewhere")),
    "rounds that are a number": json.dumps(_kept(rounds=5)),
    "a round without the bad side": json.dumps(_kept(rounds=[{"good": [1.0]}])),
    "samples in words": json.dumps(_kept(rounds=[{"good": ["fast"], "bad": [2.0]}])),
    "seconds in words": json.dumps(_kept(rounds=[{"good": [1.0], "bad": [2.0], "good_s": "long"}])),
    "pairs that are a number": json.dumps(_kept(pairs={"0.5.0": 3})),
    "an environment that is a number": json.dumps(_kept(environments={"0.6.0": 3, "0.4.35": ["3.12", "0.4.35"]})),
    "a list": "[1, 2]",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_kept_file_of_the_wrong_types_is_measured_again_and_said(tmp_path: Path, case: str) -> None:
    path = _samples(tmp_path, read=False).path
    path.parent.mkdir(parents=True)
    path.write_text(HOSTILE[case])
    samples = _samples(tmp_path)
    assert not samples.reused
    assert samples.rounds() == []
    assert samples.pairs("0.5.0", ("3.12", "0.5.0")) == []
    assert samples.note.startswith(f"not reusing the metric samples in {path.name} (")
    assert samples.note.endswith("): measuring afresh")


def test_a_sound_file_is_still_reused(tmp_path: Path) -> None:
    path = _samples(tmp_path, read=False).path
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_kept()))
    samples = _samples(tmp_path)
    assert samples.reused
    assert samples.rounds() == [([1.0, 1.1], [2.0, 2.1], 0.5, 0.5)]


READ = """
import json, sys
from pathlib import Path
from kit.bisect.probe.metric_samples import MetricSamples
folder, identity, bounds = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
print(MetricSamples(folder, identity, "this-machine", bounds, "test-bisect", read=True, log=print).note)
"""


@pytest.mark.real_time  # waits out a real time limit
def test_a_named_pipe_as_the_kept_file_is_not_waited_on(tmp_path: Path) -> None:
    path = _samples(tmp_path, read=False).path
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    # In a child, so that a read that blocks fails this test at its timeout instead of hanging the suite.
    done = subprocess.run([sys.executable, "-c", READ, str(path.parent), json.dumps(IDENTITY), json.dumps(BOUNDS)],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"not reusing the metric samples in {path.name} (unreadable: not a regular file "
                                   "(a pipe, a device or a socket)): measuring afresh")
