"""repro/kitcheck.py: the helper a user's check script imports, run in-process (no JAX needed).

tests/test_kitcheck_outside.py runs a script that uses it by hand and under the kit; here are its functions'
own rules: what is timed and what is not, the metric's shape, the exit code per verdict, KIT_RESULT written
whole or not at all, and what it says of a JAX that cannot start.
"""

from __future__ import annotations

import json
import sys
import time
import types
from pathlib import Path

import pytest

from repro import kitcheck
from repro.contract import EXIT_AFFECTED, EXIT_INCONCLUSIVE, EXIT_UNAFFECTED


def test_warmup_calls_run_untimed_and_each_repeat_is_one_sample() -> None:
    calls: list[float] = []
    samples = kitcheck.time_ms(lambda: calls.append(time.perf_counter()), repeats=3, warmup=2)
    assert len(calls) == 5
    assert len(samples) == 3  # a warmup counted as a sample would carry the compile time
    assert kitcheck.time_ms(lambda: None, repeats=0, warmup=0) == []


def test_a_sample_is_in_milliseconds() -> None:
    # 20 ms of sleep is at least 20 in the unit the name promises (seconds would read 0.02).
    (sample,) = kitcheck.time_ms(lambda: time.sleep(0.02), repeats=1, warmup=0)
    assert 20 <= sample < 2000


def test_a_metric_s_samples_are_plain_floats_and_its_direction_is_checked() -> None:
    made = kitcheck.metric([3, 2.5], unit="s", better="higher")
    assert made == {"unit": "s", "samples": [3.0, 2.5], "better": "higher"}
    assert all(type(x) is float for x in made["samples"])  # JSON of a numpy scalar would fail: floats go through
    with pytest.raises(ValueError, match="better must be 'lower' or 'higher'"):
        kitcheck.metric([1.0], better="faster")


@pytest.mark.parametrize(("verdict", "code"), [("unaffected", EXIT_UNAFFECTED), ("affected", EXIT_AFFECTED),
                                               ("inconclusive", EXIT_INCONCLUSIVE)])
def test_finish_writes_the_result_whole_and_exits_with_the_verdict_s_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], verdict: str,
        code: int) -> None:
    result = tmp_path / "result.json"
    monkeypatch.setenv("KIT_RESULT", str(result))
    monkeypatch.setitem(sys.modules, "jax", None)  # no JAX here: the environment is empty, not an error
    with pytest.raises(SystemExit) as exited:
        kitcheck.finish(verdict, "why", summary={"n": 2}, metrics={"t": kitcheck.metric([1.0])})
    assert exited.value.code == code
    assert json.loads(result.read_text()) == {"verdict": verdict, "reason": "why", "summary": {"n": 2},
                                              "metrics": {"t": {"unit": "ms", "samples": [1.0], "better": "lower"}},
                                              "environment": {}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]  # the temp file was moved, not left
    assert capsys.readouterr().out == f"{verdict.upper()}: why\n"


def test_an_unknown_verdict_is_refused_before_anything_is_written(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Exiting with some code for a misspelt verdict would be read as "affected": a ValueError instead.
    monkeypatch.setenv("KIT_RESULT", str(tmp_path / "result.json"))
    with pytest.raises(ValueError, match="verdict must be one of unaffected, affected, inconclusive"):
        kitcheck.finish("Affected")
    assert not any(tmp_path.iterdir())


def test_without_kit_result_finish_only_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KIT_RESULT", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(SystemExit):
        kitcheck.finish("unaffected")
    assert capsys.readouterr().out == "UNAFFECTED: \n"
    assert not any(tmp_path.iterdir())


def test_a_jax_whose_backend_does_not_start_still_names_its_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # A GPU build without its driver: jax imports, jax.devices() raises; the verdict must still be written.
    def no_backend() -> list[object]:
        raise RuntimeError("Unable to initialize backend 'cuda'")

    broken = types.SimpleNamespace(__version__="0.5.0", devices=no_backend, default_backend=lambda: "cuda")
    monkeypatch.setitem(sys.modules, "jax", broken)
    assert kitcheck.environment() == {"jax": "0.5.0"}


def test_a_working_jax_is_described_by_its_backend_and_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    device = types.SimpleNamespace(device_kind="NVIDIA H100")
    working = types.SimpleNamespace(__version__="0.6.0", devices=lambda: [device, device], default_backend=lambda: "gpu")
    monkeypatch.setitem(sys.modules, "jax", working)
    assert kitcheck.environment() == {"jax": "0.6.0", "backend": "gpu", "device_count": 2, "device_kind": "NVIDIA H100"}
    none = types.SimpleNamespace(__version__="0.6.0", devices=lambda: [], default_backend=lambda: "cpu")
    monkeypatch.setitem(sys.modules, "jax", none)
    assert kitcheck.environment()["device_kind"] is None  # no devices: no index error
