"""kit.bisect.probe_cache: one cache keyed by what ran, shared by every bisect."""

from __future__ import annotations

from pathlib import Path

from kit.bisect.outcomes import Observation
from kit.bisect.probe_cache import ProbeCache, ProbeKey

SUBJECT = {"script_sha256": "abc"}


def key(**changes: object) -> ProbeKey:
    fields = {"subject": SUBJECT, "jax": "0.5.0", "backend": "cpu", "python": "3.12", "jaxlib": "0.5.0",
              "machine": "m1", **changes}
    return ProbeKey(**fields)  # type: ignore[arg-type]


def test_an_observation_reads_back_under_its_key_only(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    seen = Observation("ran", "affected", "exit 1", python="3.12", jaxlib="0.5.0", by="bisect-a", seconds=12.5)
    cache.put(key(), seen)
    assert cache.get(key(), timeout_s=60) == seen
    for other in (key(jax="0.5.1"), key(python="3.13"), key(jaxlib="0.4.38"), key(backend="cuda"),
                  key(machine="m2"), key(subject={"script_sha256": "def"})):
        assert cache.get(other, timeout_s=60) is None


def test_a_timeout_is_known_only_up_to_its_limit(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    cache.put(key(), Observation("timed-out", None, "did not finish", timeout_s=60))
    assert cache.get(key(), timeout_s=60) is not None and cache.get(key(), timeout_s=30) is not None
    assert cache.get(key(), timeout_s=120) is None


def test_fresh_ignores_and_a_torn_file_is_no_answer(tmp_path: Path) -> None:
    ProbeCache(tmp_path).put(key(), Observation("ran", "unaffected", "exit 0"))
    assert ProbeCache(tmp_path, read=False).get(key(), timeout_s=60) is None
    (tmp_path / f"{key().digest()}.json").write_text("{torn")
    assert ProbeCache(tmp_path).get(key(), timeout_s=60) is None
