"""kit.install.key: one value for the install settings, from the command line down to the lock."""

from __future__ import annotations

from typing import Any

import pytest

from kit.config import BACKENDS, parse_matrix
from kit.errors import UsageError
from kit.install import lockfile
from kit.install.key import InstallKey, normal_pin, pinned_name


def matrix() -> Any:
    return parse_matrix({"release": [{"version": "0.4.35", "python": "3.13"}], "checks": {"scaling": {}}})


def test_pins_are_one_spelling_whatever_they_were_given_as() -> None:
    assert normal_pin("ML_Dtypes==0.5.1") == "ml-dtypes==0.5.1"
    assert pinned_name("Opt.Einsum==3.4") == "opt-einsum"
    given = InstallKey("cpu", pins=("numpy==2.2.1", "ML_Dtypes==0.5.1"))
    assert given.pins == ("ml-dtypes==0.5.1", "numpy==2.2.1")
    assert given == InstallKey("cpu", pins=("ml-dtypes==0.5.1", "numpy==2.2.1"))  # so the same lock answers


def test_an_unknown_backend_is_refused_where_the_key_is_made() -> None:
    assert set(BACKENDS) == {"cpu", "cuda", "tpu"}
    with pytest.raises(UsageError, match="unknown backend 'rocm'"):
        InstallKey("rocm")


def test_the_python_tried_first_is_a_preference_not_a_lock_setting() -> None:
    m = matrix()
    release = m.release("0.4.35")
    plain = lockfile.install_settings(m, release, InstallKey("cpu"))
    assert lockfile.install_settings(m, release, InstallKey("cpu", python="3.12")) == plain
    # Every other field is one: another key, another lock.
    for other in (InstallKey("cuda"), InstallKey("cpu", ("/wheels",)), InstallKey("cpu", pins=("numpy==2.2.1",)),
                  InstallKey("cpu", requires=("flax",))):
        assert lockfile.install_settings(m, release, other) != plain
    assert "pins" not in plain
    assert "requires" not in plain  # locks made before either existed still answer
