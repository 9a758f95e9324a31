"""kit/install/refusals.py: a uv refusal that is the user's (UV_OFFLINE, a --requires or --pin) and not the release's.

Whose input each common refusal blames is a table in tests/faults/test_inputs.py; here the cases around it:
the words UV_OFFLINE takes, names as uv spells them, several Pythons, and where the index is named.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kit.errors import IndexUnreachable
from kit.install.plan import InstallPlan, Resolution
from kit.install.refusals import blamed_input, offline_setting, raise_if_offline

PLAN = InstallPlan(jax="0.6.0", backend="cpu", requirements=("jax[cpu]==0.6.0",), exclude_newer="2025-04-30T00:00:00Z",
                   index_url="https://pypi.org/simple", pythons=("3.11", "3.12"))


def _failed(error: str, python: str = "3.11") -> Resolution:
    return Resolution(python, ok=False, error=error)


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " yes ", "on", "y", "t"])
def test_uv_offline_words_that_turn_it_on(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("UV_OFFLINE", value)
    assert offline_setting() == f"UV_OFFLINE={value}"


@pytest.mark.parametrize("value", ["", "0", "false", "no", "off", "offline"])
def test_uv_offline_words_that_leave_it_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    # "false" must not count: reading any set value as on would blame the user for a release that truly fails.
    monkeypatch.setenv("UV_OFFLINE", value)
    assert offline_setting() is None
    raise_if_offline(PLAN)  # nothing raised: the refusal is the release's


def test_an_offline_refusal_is_an_outage_that_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_OFFLINE", "1")
    with pytest.raises(IndexUnreachable) as raised:
        raise_if_offline(PLAN)
    assert str(raised.value).startswith("jax 0.6.0 did not resolve with uv offline (UV_OFFLINE=1 in the environment)")
    assert raised.value.tip.startswith("unset UV_OFFLINE")


def test_a_required_package_is_matched_by_its_normal_name_whatever_the_spelling() -> None:
    plan = replace(PLAN, requires=("Scikit_Learn>=1.0",), extra_index_urls=("https://extra/simple",),
                   find_links=("wheels",))
    found = blamed_input(plan, [_failed("cause: Because scikit-learn was not found in the package registry and you "
                                        "require scikit-learn>=1.0, we can conclude ...")])
    assert found is not None
    assert found.message == ("the check requires Scikit_Learn>=1.0, and scikit-learn is not on the package index "
                             "(https://pypi.org/simple, https://extra/simple, wheels)")


def test_a_package_not_found_that_the_user_did_not_ask_for_blames_no_input() -> None:
    plan = replace(PLAN, requires=("flax",), pins=("numpy==2.0.0",))
    assert blamed_input(plan, [_failed("cause: Because jaxlib was not found in the package registry ...")]) is None


def test_a_pin_is_not_blamed_for_a_longer_name_that_starts_like_it() -> None:
    # numpy-financial in uv's words is not numpy: only whole names count.
    plan = replace(PLAN, pins=("numpy==2.0.0",))
    error = "cause: Because all versions of jax depend on numpy-financial>=2 and scipy, we can conclude ..."
    assert blamed_input(plan, [_failed(error)]) is None


def test_a_pin_named_at_the_end_of_uvs_sentence_is_found_and_every_python_tried_is_named() -> None:
    plan = replace(PLAN, pins=("ml_dtypes==0.1.0",))
    error = "cause: Because jax==0.6.0 depends on a newer ml-dtypes."
    found = blamed_input(plan, [_failed("cause: Because Python 3.11 is too old", "3.11"), _failed(error, "3.12")])
    assert found is not None
    assert found.message == ("the pin ml_dtypes==0.1.0 cannot be installed with jax 0.6.0 on Python 3.11, 3.12: "
                             "Because jax==0.6.0 depends on a newer ml-dtypes.")
    assert found.tip == "drop or change --pin ml_dtypes==0.1.0"


def test_no_attempt_blames_nothing() -> None:
    assert blamed_input(replace(PLAN, pins=("numpy==2.0.0",)), []) is None
