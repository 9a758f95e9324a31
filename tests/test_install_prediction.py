"""kit.install.prediction: what a release would install here, from the index's metadata alone."""

from __future__ import annotations

from typing import Any

from packaging.version import Version

import pytest

from kit.errors import UsageError
from kit.install import release
from kit.install.index import DistFile, Project
from kit.install.plan import Resolution, unresolvable_reason
from kit.install.prediction import predict
from kit.install.key import InstallKey
from tests.metadata_index import UPLOADED, MetadataIndex, candidates_matrix


@pytest.fixture
def matrix() -> Any:
    return candidates_matrix()


@pytest.fixture(autouse=True)
def only_python_312_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release, "available_pythons", lambda wanted: [p for p in wanted if p == "3.12"])


def test_metadata_and_the_resolver_say_why_in_the_same_words(matrix: Any) -> None:
    index: Any = MetadataIndex()
    predicted = predict(matrix, "0.4.32", InstallKey("cpu"), index)
    resolver_error = "Because there is no version of jaxlib==0.4.32 and jax[cpu]==0.4.32 depends on it, ..."
    assert predicted.problem == unresolvable_reason(predicted.plan, [Resolution("3.12", False, error=resolver_error)])
    assert predicted.problem == "https://pypi.org/simple has no jaxlib 0.4.32 wheels (tried Python 3.12)"


class ExtrasIndex(MetadataIndex):
    def jax_extras(self, version: str) -> set[str]:
        return {"cpu", "cuda12"} if version == "0.4.31" else {"cpu"}


def test_a_backend_the_release_declares_no_extra_for(matrix: Any) -> None:
    index: Any = ExtrasIndex()
    with pytest.raises(UsageError, match="^jax 0.4.32 declares no CUDA extra$"):  # the plan's own sentence
        predict(matrix, "0.4.32", InstallKey("cuda"), index)
    assert (predict(matrix, "0.4.31", InstallKey("cuda"), index).jaxlib, predict(matrix, "0.4.31", InstallKey("cuda"), index).problem) \
        == ("0.4.31", "")


class SdistOnlyIndex(MetadataIndex):
    """jax 0.4.13 and 0.4.14 are on PyPI as sdists only: no wheel, so no METADATA to read."""

    def __init__(self) -> None:
        super().__init__()
        sdist = DistFile("jax-0.4.13.tar.gz", Version("0.4.13"), "https://files/jax-0.4.13.tar.gz", UPLOADED, False, ())
        self.projects["jax"] = Project("jax", self.projects["jax"].files + (sdist,))


def test_an_sdist_only_release_is_left_to_the_probe_not_ruled_out(matrix: Any) -> None:
    index: Any = SdistOnlyIndex()
    predicted = predict(matrix, "0.4.13", InstallKey("cpu"), index)
    assert predicted.problem == ""  # a check session builds it from the sdist; so does the probe
    assert (predicted.python, predicted.jaxlib) == ("3.12", None)
    assert index.metadata_reads == []
