"""kit.arguments: every command's mistake is one sentence and a TIP; every --backend offers config.BACKENDS."""

from __future__ import annotations

from typing import Any

import argparse

import pytest

from kit import commands
from kit.arguments import Parser
from kit.bisect.options import make_parser
from kit.config import BACKENDS, parse_matrix
from kit.errors import UsageError
from kit.matrix import sweep


def matrix() -> Any:
    return parse_matrix({"release": [{"version": "0.4.35", "python": "3.13"}], "checks": {"scaling": {}}})


def test_a_mistake_is_a_usage_error_with_the_parser_s_tip() -> None:
    parser = Parser(prog="nox -s x --", tip="see the docs")
    parser.add_argument("--jobs", type=int)
    with pytest.raises(UsageError) as raised:
        parser.parse_args(["--jobs", "many"])
    assert "invalid int value" in str(raised.value)
    assert raised.value.tip == "see the docs"


def _backend_choices(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    (action,) = [a for a in parser._actions if "--backend" in a.option_strings]
    return tuple(action.choices or ())


def test_every_backend_option_offers_the_backends_config_knows() -> None:
    parsers = [make_parser(), commands.run_parser("scaling")]
    for parser in parsers:
        assert _backend_choices(parser) == BACKENDS
    with pytest.raises(UsageError, match="invalid choice: 'rocm'"):
        sweep.parse_options(matrix(), ["--backend", "rocm"])
    with pytest.raises(UsageError, match="invalid choice: 'rocm'"):
        commands.cmd_plan(matrix(), ["0.4.35", "--backend", "rocm"], lambda line: None)
