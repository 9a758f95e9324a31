"""kit.history.xla: the XLA revision a JAX commit pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_jax import XLA_NEW, XLA_OLD, make_repo
from kit.history.source import History
from kit.history.xla import parse_xla_commit, xla_compare_url, xla_revision

WORKSPACE = ('# To update XLA to a new revision,\n# a) update XLA_COMMIT to the new git commit hash\n\n'
             'XLA_COMMIT = "df971129bd82e381954da0185b534220e21798a4"\nXLA_SHA256 = "11e9"\n')
REVISION = 'XLA_COMMIT = "9f150f6b75c08d6ea7b97697c4f393f1a0eb6121"\nXLA_SHA256 = "523d"\n'
LOADS_IT = 'load("//third_party/xla:revision.bzl", "XLA_COMMIT", "XLA_SHA256")\n'


@pytest.mark.parametrize(("text", "expected"), [(WORKSPACE, "df971129bd82e381954da0185b534220e21798a4"),
                                                (REVISION, "9f150f6b75c08d6ea7b97697c4f393f1a0eb6121"),
                                                (LOADS_IT, None)])
def test_parse_the_pin(text: str, expected: str | None) -> None:
    assert parse_xla_commit(text) == expected


def test_revision_at_tags_and_the_link(tmp_path: Path) -> None:
    history = History(make_repo(tmp_path / "jax"), "test")
    assert (xla_revision(history, "jax-v0.1.0"), xla_revision(history, "jax-v0.2.0")) == (XLA_OLD, XLA_NEW)
    assert xla_compare_url("a", "b") == "https://github.com/openxla/xla/compare/a...b"
