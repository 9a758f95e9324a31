"""ddmin over a list, against fake tests: 1-minimal results, order kept, batches asked in order."""

from __future__ import annotations

from hypothesis import given, strategies as st

from kit.reduce.ddmin import chunks, ddmin


def first_kept(holds):
    def judge(batch):
        return next((i for i, subset in enumerate(batch) if holds(subset)), None)
    return judge


def test_chunks_cover_the_list_in_order() -> None:
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2, 3], [4, 5]]
    assert chunks([1, 2], 5) == [[1], [2]]


def test_two_needed_items_are_all_that_is_left() -> None:
    items = list(range(20))
    assert ddmin(items, first_kept(lambda s: 3 in s and 17 in s)) == [3, 17]


def test_nothing_needed_leaves_nothing() -> None:
    assert ddmin([1, 2, 3], first_kept(lambda s: True)) == []


def test_every_item_needed_keeps_every_item() -> None:
    assert ddmin([1, 2, 3, 4], first_kept(lambda s: len(s) == 4)) == [1, 2, 3, 4]


@given(st.lists(st.integers(0, 30), unique=True, max_size=25), st.sets(st.integers(0, 30), max_size=4))
def test_result_is_one_minimal_and_keeps_order(items: list[int], needed: set[int]) -> None:
    needed &= set(items)
    holds = lambda s: needed <= set(s)  # noqa: E731
    result = ddmin(items, first_kept(holds))
    assert holds(result)
    assert result == [x for x in items if x in result]
    assert all(not holds(result[:i] + result[i + 1:]) for i in range(len(result)))
