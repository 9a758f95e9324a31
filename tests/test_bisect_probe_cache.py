"""kit.bisect.probe.cache: one cache keyed by a probe's identity, shared by every bisect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit.bisect.probe.cache import ProbeCache
from kit.records import Identity, run_identity
from tests.observations import observed

SUBJECT = {"script_sha256": "abc"}


def identity(**changes: Any) -> Identity:
    fields: dict[str, Any] = {
        "subject": SUBJECT, "jax": "0.5.0", "backend": "cpu", "python": "3.12",
        "packages": {"jax": "0.5.0", "jaxlib": "0.5.0", "numpy": "2.2.2"}, "requirements": ["jax[cpu]==0.5.0"],
        "exclude_newer": "2025-01-20T00:00:00Z", "hardware": {"cpu": "AMD EPYC 7B13"}, "variables": {}, **changes}
    return run_identity(**fields)


def test_an_observation_reads_back_under_its_identity_only(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    seen = observed("ran", "affected", "exit 1", python="3.12", jaxlib="0.5.0", by="bisect-a", seconds=12.5)
    cache.put(identity(), seen)
    assert cache.get(identity(), timeout_s=60) == seen
    for other in (identity(jax="0.5.1"), identity(python="3.13"), identity(backend="cuda"),
                  identity(subject={"script_sha256": "def"}), identity(packages={"jax": "0.5.0", "jaxlib": "0.5.0"}),
                  identity(hardware={"cpu": "Intel(R) Xeon(R) Processor"}),
                  identity(variables={"JAX_THREEFRY_PARTITIONABLE": "1"}), identity(commit="f93c2a1a")):
        assert cache.get(other, timeout_s=60) is None


def test_a_probe_of_another_identity_says_why_it_was_not_reused(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    cache.put(identity(), observed("ran", "unaffected", "exit 0", by="bisect-a", ran_at="2026-11-30T09:00:00Z"))
    with_variable = identity(variables={"JAX_THREEFRY_PARTITIONABLE": "1"})
    assert cache.why_not(with_variable) == ("an earlier probe by bisect-a (2026-11-30T09:00:00Z) was not reused: "
                                            "JAX_THREEFRY_PARTITIONABLE unset there, 1 here")
    assert cache.why_not(identity()) == ""  # the same identity: nothing to explain
    assert cache.why_not(identity(jax="0.5.1")) == ""  # another release is another question
    cache.put(identity(hardware={"cpu": "other"}, packages={}), observed("ran", "affected", "exit 1"))
    # The nearest of two earlier probes is named (one difference, not three), and that there were two.
    assert cache.why_not(with_variable).endswith("JAX_THREEFRY_PARTITIONABLE unset there, 1 here "
                                                 "(2 earlier probes of it, none the same)")
    assert ProbeCache(tmp_path, read=False).why_not(with_variable) == ""


def test_the_log_lies_beside_the_probe(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    path = cache.put(identity(), observed("ran", "unaffected", "exit 0"))
    assert path is not None
    assert cache.log_path(identity()) == path.with_suffix(".log")
    assert path.parent.name == identity().question()
    assert path.stem == identity().digest()


def test_a_timeout_is_known_only_up_to_its_limit(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    cache.put(identity(), observed("timed-out", None, "did not finish", timeout_s=60))
    assert cache.get(identity(), timeout_s=60) is not None
    assert cache.get(identity(), timeout_s=30) is not None
    assert cache.get(identity(), timeout_s=120) is None


def test_fresh_ignores_and_a_torn_file_is_no_answer(tmp_path: Path) -> None:
    ProbeCache(tmp_path).put(identity(), observed("ran", "unaffected", "exit 0"))
    assert ProbeCache(tmp_path, read=False).get(identity(), timeout_s=60) is None
    ProbeCache(tmp_path).path(identity()).write_text("{torn")
    assert ProbeCache(tmp_path).get(identity(), timeout_s=60) is None


def test_a_probe_kept_under_identity_schema_1_is_still_found(tmp_path: Path) -> None:
    """A kit of identity schema 1 filed probes under underscored package names; bumping it must not rerun them."""
    cache = ProbeCache(tmp_path)
    here = identity(packages={"jax": "0.5.0", "jaxlib": "0.5.0", "ml-dtypes": "0.5.1"})
    (as_schema_1,) = here.earlier_forms()
    seen = observed("ran", "unaffected", "exit 0", python="3.12", jaxlib="0.5.0")
    cache.put(as_schema_1, seen)  # exactly the file (path and content) the earlier kit wrote
    assert '"ml_dtypes"' in cache.path(as_schema_1).read_text()
    assert not cache.path(here).exists()
    assert cache.get(here, timeout_s=60) == seen
    other = identity(packages={"jax": "0.5.0", "jaxlib": "0.5.0", "ml-dtypes": "0.5.2"})
    assert cache.get(other, timeout_s=60) is None
