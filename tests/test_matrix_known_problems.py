"""known_problems.toml: the report's citations are data a user extends next to their own check."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.errors import ConfigError
from kit.matrix.known_problems import DEFAULT_PATH, load_known_problems
from kit.matrix.markdown import render_markdown
from kit.matrix.model import build_report


def test_the_shipped_file_cites_both_upstream_fixes() -> None:
    problems = {p.key: p for p in load_known_problems(DEFAULT_PATH)}
    assert problems["sharded-slogdet-all-gather"].fix.release == "0.5.3"  # type: ignore[union-attr]
    assert problems["jax-24843"].fix.release == "0.4.36"  # type: ignore[union-attr]
    assert problems["jax-24843"].shows_on == ("gpu",)
    assert problems["sharded-slogdet-all-gather"].check == "scaling"


def _record(version: str, verdict: str) -> dict:
    return {"schema": 1, "check": "qr", "status": "ran", "verdict": verdict, "created": "2026-11-30T00:00:00Z",
            "requested": {"jax": version, "backend": "cpu"}, "environment": {"backend": "cpu"},
            "host": {"machine_id": "m"}}


def test_a_users_open_bug_is_cited_with_the_range_its_check_measured(tmp_path: Path) -> None:
    path = tmp_path / "known_problems.toml"
    path.write_text('[[problem]]\nkey = "qr-gather"\ncheck = "qr"\ntitle = "Sharded QR gathers the batch"\n'
                    'links = ["https://example.org/issue/1"]\n')
    problems = load_known_problems(path)
    report = build_report([_record("0.4.35", "affected"), _record("0.6.0", "unaffected")],
                          known_problems=problems)
    text = render_markdown(report)
    assert "**Sharded QR gathers the batch** — check `qr`; <https://example.org/issue/1>" in text
    assert "upstream: no fix recorded in known_problems.toml" in text
    assert "0.4.35" in text.split("Sharded QR gathers the batch")[1].split("upstream")[0]


def test_a_project_without_the_file_cites_nothing(tmp_path: Path) -> None:
    assert load_known_problems(tmp_path / "known_problems.toml") == ()


@pytest.mark.parametrize(("text", "message"), [
    ('[[problem]]\nkey = "a"\ncheck = "qr"\ntitle = "t"\nlink = []\n', r"unknown key 'problem\[0\]\.link' in known_problems.toml"),
    ('[[problem]]\nkey = "a"\ntitle = "t"\n', "needs check"),
    ('[[problem]]\nkey = "a"\ncheck = "qr"\ntitle = "t"\n[problem.fix]\nurl = "u"\ntitle = "t"\n', "needs release"),
])
def test_a_bad_entry_is_one_sentence_naming_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "known_problems.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_known_problems(path)
