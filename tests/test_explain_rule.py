"""`kit.explain.rule`: the one rule from the per-release tables to explain's answer, held to its promises by
properties over any tables (issue 58: an answer said "no measured release splits lu" under a 0.5.3 column saying
split, and "no release is safe" of releases it never measured)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kit.explain import rule

POOL = ("0.4.35", "0.5.1", "0.5.3", "0.6.0", "0.7.0", "0.8.0", "0.8.3", "0.10.2", "0.12.0.1")
STATES = (rule.SPLIT, rule.WHOLE, rule.UNTOLD, None)  # None: the op is not in that release's table


@st.composite
def tables(draw: st.DrawFn) -> tuple[rule.Table, str]:
    chosen = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=6, unique=True))
    releases = tuple(r for r in POOL if r in chosen)  # oldest first, as the tables are ordered
    rows = []
    for number in range(draw(st.integers(1, 5))):
        states = {r: s for r in releases if (s := draw(st.sampled_from(STATES))) is not None}
        rows.append(rule.OpRow(f"train.py:{10 + number} lu", states))
    untold = {r: draw(st.sampled_from((0, 0, 0, 1, 2))) for r in releases}
    fix = draw(st.sampled_from(("", *POOL)))
    return rule.Table(releases, tuple(rows), untold), fix


def _affected(table: rule.Table, release: str) -> bool:
    """What the tables call not safe: an op whole or untold there, or a computation nothing was read of."""
    return bool(table.untold.get(release)) or any(row.states.get(release) in (rule.WHOLE, rule.UNTOLD)
                                                  for row in table.rows)


def _every_op_split(table: rule.Table, release: str) -> bool:
    held = [row.states[release] for row in table.rows if release in row.states]
    return bool(held) and all(s == rule.SPLIT for s in held) and not table.untold.get(release)


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@settings(max_examples=200, deadline=None)
@given(tables())
def test_no_release_the_tables_call_affected_is_ever_named_safe(drawn: tuple[rule.Table, str]) -> None:
    table, fix = drawn
    answer = rule.derive(table)
    line = rule.answer_line(answer, fix=fix)
    for release in answer.clean:
        assert not _affected(table, release)
    if answer.pick:
        assert not any(_affected(table, r) for r in table.releases if _order(r) >= _order(answer.pick))
    for picked in re.findall(r"pick jax >= ([\d.]+)", line):
        assert not any(_affected(table, r) for r in table.releases if _order(r) >= _order(picked)), line
    for told in answer.split_where_told:
        assert _affected(table, told) and told not in answer.clean
    for named in re.findall(r"every op is split on ([\d., ]+?)(?: \(|:|,? but|$|;)", line):
        for release in named.split(", "):
            assert release in answer.clean, line


@settings(max_examples=200, deadline=None)
@given(tables())
def test_a_release_whose_table_splits_every_op_is_never_denied(drawn: tuple[rule.Table, str]) -> None:
    table, fix = drawn
    answer = rule.derive(table)
    line = rule.answer_line(answer, fix=fix)
    split_everywhere = [r for r in table.releases if _every_op_split(table, r)]
    assert list(answer.clean) == split_everywhere
    if split_everywhere:
        assert "none of the measured releases" not in line and "no measured release" not in line
        assert "does not split" not in line
        assert any(release in line for release in split_everywhere), line
    assert "no release is safe" not in line


@settings(max_examples=200, deadline=None)
@given(tables())
def test_per_op_the_lowest_measured_release_that_splits_it(drawn: tuple[rule.Table, str]) -> None:
    table, _ = drawn
    answer = rule.derive(table)
    for row, op in zip(table.rows, answer.ops):
        splitting = [r for r in table.releases if row.states.get(r) == rule.SPLIT]
        assert op.first_split == (splitting[0] if splitting else "")
        assert set(op.untold) == {r for r in table.releases if row.states.get(r) == rule.UNTOLD}
    said = rule.op_line(answer)
    for op in answer.ops:
        if op.first_split and op.whole_on and not op.whole_after and op.name in said:
            assert f"split from {op.first_split}" in said


@settings(max_examples=200, deadline=None)
@given(tables())
def test_nothing_is_claimed_of_releases_not_measured(drawn: tuple[rule.Table, str]) -> None:
    table, fix = drawn
    line = rule.answer_line(rule.derive(table), fix=fix)
    named = set(re.findall(r"\b\d+\.\d+\.\d+(?:\.\d+)?\b", line))
    # Only the measured releases, and a known fix where the line says it is one (to try, or the pick it makes).
    assert named <= {*table.releases, fix}, line
    if fix in named and fix not in table.releases:
        assert re.search(rf"known fix (is )?in {re.escape(fix)}\b", line), line
    if not rule.derive(table).clean:
        assert f"releases after {table.releases[-1]} were not measured" in line
        assert "pick" not in line


def test_the_issue_58_gpu_tables_name_the_lu_from_0_5_3_and_claim_nothing_past_it() -> None:
    # As compiled by hand for 4 A100s: 0.5.1 every op whole; 0.5.3 the LU split, the solves after it whole.
    table = rule.Table(("0.5.1", "0.5.3"), (
        rule.OpRow("train.py:15 lu", {"0.5.1": rule.WHOLE, "0.5.3": rule.SPLIT}),
        rule.OpRow("train.py:15 triangular_solve (backward)", {"0.5.1": rule.WHOLE, "0.5.3": rule.WHOLE})))
    answer = rule.derive(table)
    assert rule.answer_line(answer, "for 4 NVIDIA A100 GPUs (compiled for it, not run)") == (
        "answer: for 4 NVIDIA A100 GPUs (compiled for it, not run), none of the measured releases 0.5.1..0.5.3 "
        "splits train.py:15 triangular_solve (backward); releases after 0.5.3 were not measured")
    assert rule.op_line(answer) == ("per op, the lowest measured release that splits it: split from 0.5.3: "
                                    "train.py:15 lu; split on none of 0.5.1..0.5.3: train.py:15 triangular_solve "
                                    "(backward)")
    # With 0.7.0, where every op splits, measured too: that is the pick.
    table = rule.Table(("0.5.1", "0.5.3", "0.7.0"), tuple(
        rule.OpRow(row.name, {**row.states, "0.7.0": rule.SPLIT}) for row in table.rows))
    assert rule.answer_line(rule.derive(table)) == ("answer: every op is split on 0.7.0: pick jax >= 0.7.0 of those "
                                                    "measured")


def test_a_release_split_as_far_as_it_compiled_is_said_so_and_never_picked() -> None:
    # As explain measured for 4 A100s (2026-12-06): on 0.7.0 every op that compiled is split, and the cholesky's
    # compile failed there too ("cuSolver internal error"): 0.7.0 is not called safe.
    table = rule.Table(("0.5.3", "0.7.0"), (
        rule.OpRow("train.py:15 lu", {"0.5.3": rule.SPLIT, "0.7.0": rule.SPLIT}),
        rule.OpRow("train.py:15 triangular_solve (backward)", {"0.5.3": rule.WHOLE, "0.7.0": rule.SPLIT}),
        rule.OpRow("train.py:19 cholesky", {"0.5.3": rule.UNTOLD, "0.7.0": rule.UNTOLD})), {"0.5.3": 1, "0.7.0": 1})
    answer = rule.derive(table)
    assert (answer.clean, answer.pick, answer.split_where_told) == ((), "", ("0.7.0",))
    assert rule.answer_line(answer) == (
        "answer: every op that compiled is split on 0.7.0, but what could not be compiled there cannot be told, so "
        "no measured release of 0.5.3..0.7.0 is known to split every op; releases after 0.7.0 were not measured")
