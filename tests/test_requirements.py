"""kit/requirements.py: a check's extra packages, one spelling for each set, refused in one sentence."""

from __future__ import annotations

import pytest

from kit import requirements
from kit.errors import ConfigError, UsageError


@pytest.mark.parametrize(("given", "normal"), [
    ("flax", "flax"),
    ("Flax >= 0.8", "flax>=0.8"),
    ("optax>=0.2,<1", "optax<1,>=0.2"),
    ("Flax_Extra[All]==0.1", "flax-extra[all]==0.1"),
    ("equinox; python_version >= '3.10'", 'equinox; python_version >= "3.10"'),
])
def test_a_requirement_has_one_normal_form(given: str, normal: str) -> None:
    assert requirements.requirement(given, "--requires") == normal


def test_a_set_is_sorted_and_has_each_requirement_once() -> None:
    assert requirements.requirements(["optax", "Flax", "flax"], "requires") == ("flax", "optax")
    assert requirements.merged(("optax",), ("flax", "optax")) == ("flax", "optax")


@pytest.mark.parametrize(("given", "problem", "tip"), [
    ("flax>=", "is not a package requirement", "write it as pip does"),
    ("jaxlib==0.4.30", "is part of the release under test", "jax and jaxlib"),
    ("jax[cpu]", "is part of the release under test", "jax and jaxlib"),
    ("flax @ https://example.org/flax.whl", "names a URL or path", "as of each release's date"),
])
def test_what_cannot_be_an_extra_package_is_refused_in_one_sentence(given: str, problem: str, tip: str) -> None:
    with pytest.raises(ConfigError, match=problem) as error:
        requirements.requirement(given, "checks.x.requires", ConfigError)
    assert str(error.value).startswith(f"checks.x.requires {given!r}")
    assert tip in error.value.tip


def test_a_command_line_mistake_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--requires 'jax'"):
        requirements.requirements(["flax", "jax"], "--requires")


def test_installed_versions_name_each_required_package_by_its_canonical_name() -> None:
    pins = {"flax": "0.10.1", "optax": "0.2.3", "numpy": "2.1.3"}
    assert requirements.installed_versions(("flax>=0.8", "Optax", "equinox"), pins) == {
        "equinox": None, "flax": "0.10.1", "optax": "0.2.3"}
    assert requirements.versions_text({"flax": "0.10.1", "equinox": None}) == "flax 0.10.1, equinox missing"


def test_a_module_is_named_by_the_package_that_provides_it() -> None:
    assert requirements.package_for_module("sklearn") == "scikit-learn"
    assert requirements.package_for_module("flax") == "flax"
