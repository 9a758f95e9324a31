"""kit.toml_tables: one sentence per mistake in matrix.toml or known_problems.toml, naming key, file and fix."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from kit import toml_tables
from kit.errors import ConfigError


def test_a_mistyped_key_gets_the_closest_allowed_one() -> None:
    with pytest.raises(ConfigError, match=r"^unknown key 'checks\.scaling\.devcies' in matrix\.toml$") as failed:
        toml_tables.known_keys({"devcies": [1]}, {"devices", "batch"}, "checks.scaling")
    assert failed.value.tip == "did you mean 'devices'?"


def test_a_key_like_none_lists_every_allowed_key_and_names_its_file() -> None:
    with pytest.raises(ConfigError, match=r"^unknown key 'problem\[2\]\.zzz' in known_problems\.toml$") as failed:
        toml_tables.known_keys({"zzz": 1}, {"key", "title"}, "problem[2]", "known_problems.toml")
    assert failed.value.tip == "allowed keys: key, title"


def test_a_top_level_key_is_named_bare() -> None:
    with pytest.raises(ConfigError, match=r"^unknown key 'relase' in matrix\.toml$"):
        toml_tables.known_keys({"relase": []}, {"release", "install"}, "")


@pytest.mark.parametrize(("read", "message"), [
    (lambda: toml_tables.table({"install": "x"}, "install", ""), r"^install must be a table$"),
    (lambda: toml_tables.table({"presets": 1}, "presets", "checks.scaling"), r"^checks\.scaling\.presets must be a table$"),
    (lambda: toml_tables.string({"note": 3}, "note", "release 0.6.0", ""), r"^release 0\.6\.0\.note must be a string$"),
    (lambda: toml_tables.strings({"links": "u"}, "links", "problem[0]"), r"^problem\[0\]\.links must be a list of strings$"),
    (lambda: toml_tables.strings({"links": [1]}, "links", "problem[0]"), r"must be a list of strings"),
])
def test_a_value_of_the_wrong_kind_is_named(read: Callable[[], object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        read()


def test_absent_values_take_their_defaults() -> None:
    assert toml_tables.table({}, "kit", "") == {}
    assert toml_tables.string({}, "note", "release 0.6.0", "none") == "none"
    assert toml_tables.strings({}, "pythons", "install", ("3.12",)) == ("3.12",)
    assert toml_tables.strings({"pythons": ["3.11"]}, "pythons", "install", ("3.12",)) == ("3.11",)


def test_a_file_that_is_not_toml_is_one_sentence_and_a_missing_one_is_the_callers(tmp_path: Path) -> None:
    broken = tmp_path / "matrix.toml"
    broken.write_text("[install\n")
    with pytest.raises(ConfigError, match=r"matrix\.toml is not valid TOML: .*line 1") as failed:
        toml_tables.read_toml(broken)
    assert failed.value.tip == "fix the line named above"
    with pytest.raises(FileNotFoundError):
        toml_tables.read_toml(tmp_path / "known_problems.toml")
    good = tmp_path / "good.toml"
    good.write_text('[[release]]\nversion = "0.6.0"\n', encoding="utf-8")
    assert toml_tables.read_toml(good) == {"release": [{"version": "0.6.0"}]}
