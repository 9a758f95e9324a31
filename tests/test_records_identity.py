"""kit.records.identity: what a run's outcome depends on, and one answer to "is it the same run?"."""

from __future__ import annotations

from typing import Any

import pytest

from kit.records import Identity, mismatch, packages_fingerprint, run_identity, same, same_install, summary
from repro.environment import jax_variables


def identity(**changes: Any) -> Identity:
    fields: dict[str, Any] = {
        "subject": {"script_sha256": "0123456789abcdef"}, "jax": "0.5.0", "backend": "cpu", "python": "3.13",
        "packages": {"jax": "0.5.0", "jaxlib": "0.5.0", "numpy": "2.2.2", "scipy": "1.15.1", "ml-dtypes": "0.5.1",
                     "opt-einsum": "3.4.0"},
        "requirements": ["scipy", "jax[cpu]==0.5.0"], "exclude_newer": "2025-01-24T00:00:00Z",
        "hardware": {"cpu": "AMD EPYC 7B13"}, "variables": {}, **changes}
    return run_identity(**fields)


def test_one_identity_reads_back_as_itself_and_hashes_the_same() -> None:
    made = identity(variables={"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}, commit="f93c2a1a")
    again = Identity.from_json(made.to_json())
    assert same(made, again)
    assert made.digest() == again.digest()
    # Normal forms: requirement order and package spelling do not make another identity.
    assert same(identity(requirements=["jax[cpu]==0.5.0", "scipy"]), identity())
    assert identity().packages["ml-dtypes"] == "0.5.1"


@pytest.mark.parametrize("change", [
    {"subject": {"script_sha256": "fedcba"}}, {"jax": "0.5.1"}, {"commit": "f93c2a1a"}, {"backend": "cuda"},
    {"python": "3.12"}, {"packages": {"jax": "0.5.0", "jaxlib": "0.5.0", "numpy": "2.2.1"}},
    {"exclude_newer": None}, {"requirements": ["jax[cpu]==0.5.0", "scipy", "numpy==1.26.4"]},
    {"hardware": {"cpu": "Intel(R) Xeon(R) Processor"}}, {"hardware": {"cpu": "AMD EPYC 7B13", "gpu": "1 x H100"}},
    {"variables": {"JAX_ENABLE_X64": "1"}},
])
def test_anything_that_can_change_the_outcome_makes_another_identity(change: dict[str, Any]) -> None:
    other = identity(**change)
    assert not same(identity(), other)
    assert identity().digest() != other.digest()
    assert mismatch(identity(), other)  # and it is said


def test_the_question_is_what_ran_on_which_release_not_where() -> None:
    assert identity().question() == identity(variables={"JAX_ENABLE_X64": "1"}, python="3.12").question()
    assert identity().question() != identity(jax="0.5.1").question()
    assert identity().question() != identity(subject={"script_sha256": "fedcba"}).question()


def test_a_mismatch_names_each_difference_with_both_values() -> None:
    other = identity(variables={"JAX_THREEFRY_PARTITIONABLE": "1"}, hardware={"cpu": "Intel(R) Xeon(R) Processor"},
                     packages={**identity().packages, "numpy": "2.2.1"})
    assert mismatch(identity(), other) == [
        "numpy 2.2.2 there, 2.2.1 here", "cpu AMD EPYC 7B13 there, Intel(R) Xeon(R) Processor here",
        "JAX_THREEFRY_PARTITIONABLE unset there, 1 here"]
    assert mismatch(identity(), identity(subject={"script_sha256": "fedcba9876543210"})) == [
        "the script's content (sha256 0123456789ab there, fedcba987654 here)"]
    # The same script with another --bad-if is another run, and says so.
    with_bad_if = identity(subject={"script_sha256": "0123456789abcdef", "bad_if": "argument 'f'"})
    assert mismatch(identity(), with_bad_if) == ["what ran: bad_if none there, argument 'f' here"]
    assert summary(with_bad_if).startswith("script sha256 0123456789ab (bad_if=argument 'f'); ")


def test_the_summary_says_why_two_runs_matched() -> None:
    assert summary(identity(variables={"JAX_ENABLE_X64": "1"})) == (
        "script sha256 0123456789ab; jax 0.5.0 on Python 3.13 with jax 0.5.0, jaxlib 0.5.0, numpy 2.2.2, "
        "scipy 1.15.1, ml-dtypes 0.5.1 and 1 more packages; cpu on AMD EPYC 7B13; JAX/XLA variables: JAX_ENABLE_X64=1")
    check = identity(subject={"check": "scaling", "parameters": {"devices": [1, 2]}, "preset": None,
                              "kit_version": "0.1.0"}, variables={})
    assert summary(check).startswith("check scaling (devices=[1, 2], kit 0.1.0); ")
    assert summary(check).endswith("JAX/XLA variables: none set")


def test_a_release_that_installed_nothing_is_the_same_while_its_install_request_is() -> None:
    nothing = identity(python=None, packages={})
    assert same_install(nothing, identity(variables={"JAX_ENABLE_X64": "1"}, subject={"x": 1}))
    assert not same_install(nothing, identity(exclude_newer="2026-01-01T00:00:00Z"))


def test_what_is_not_an_identity_is_refused_in_one_sentence() -> None:
    for bad in (None, [], {"schema": 1}, {"schema": 2}, {**identity().to_json(), "packages": 3}):
        with pytest.raises(ValueError):
            Identity.from_json(bad)


def test_the_variables_jax_and_xla_read_are_the_identity_s() -> None:
    environ = {"JAX_ENABLE_X64": "1", "XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false", "TF_CPP_MIN_LOG_LEVEL": "0",
               "CUDA_VISIBLE_DEVICES": "0,1", "NCCL_DEBUG": "INFO", "HOME": "/root", "PATH": "/bin",
               "KIT_RESULT": "/tmp/x", "JAXLIB_X": "no"}
    assert jax_variables(environ) == {"CUDA_VISIBLE_DEVICES": "0,1", "JAX_ENABLE_X64": "1", "NCCL_DEBUG": "INFO",
                                      "TF_CPP_MIN_LOG_LEVEL": "0", "XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"}


def test_a_package_set_has_one_fingerprint_however_it_is_spelled_or_ordered() -> None:
    one = packages_fingerprint({"jax": "0.4.35", "Jax_Cuda12.Plugin": "0.4.35", "numpy": "2.1.3"})
    same = packages_fingerprint({"numpy": "2.1.3", "jax-cuda12-plugin": "0.4.35", "JAX": "0.4.35"})
    assert one == same
    assert len(one) == 16
    assert packages_fingerprint({"jax": "0.4.35", "jax-cuda12-plugin": "0.4.35", "numpy": "2.2.0"}) != one
    assert packages_fingerprint({"jax": "0.4.35", "jax-cuda12-plugin": "0.4.35"}) != one


def test_an_identity_of_schema_1_reads_back_renamed_and_is_the_same_run() -> None:
    """Schema 1 spelled package names with underscores; records and probes made then must still answer."""
    made = identity()
    stored = {**made.to_json(), "schema": 1,
              "packages": {name.replace("-", "_"): version for name, version in made.packages.items()}}
    read = Identity.from_json(stored)
    assert same(read, made)
    assert read.packages["ml-dtypes"] == "0.5.1"
    assert "ml_dtypes" not in read.packages
    # Where a schema-1 kit filed it: its digest is that of the underscored, schema-1 form.
    (earlier,) = made.earlier_forms()
    assert earlier.to_json() == dict(sorted(stored.items()))
    assert earlier.digest() != made.digest()
    with pytest.raises(ValueError):
        Identity.from_json({**made.to_json(), "schema": 3})  # a later kit's: not guessed at
