"""The lanes say what they are: a module named end to end in conftest.py exists, so a rename cannot quietly move
its slow tests back into the unit lane."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import END_TO_END

HERE = Path(__file__).parent


def test_every_end_to_end_module_named_in_conftest_exists() -> None:
    missing = [name for name in END_TO_END if not (HERE / name).is_file()]
    assert missing == []


def test_each_end_to_end_module_says_why() -> None:
    assert all(len(why.split()) >= 4 for why in END_TO_END.values())
