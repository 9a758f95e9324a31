"""The words an outcome is told in are spelt once, in kit/records/verdict.py: everywhere else names the member.

A misspelt ``"afected"`` compared against a record never matches and never fails; ``Verdict.AFECTED`` fails at
import. Parsed, not imported, like tests/test_layers.py. The words of a status that are also JSON keys of a
child's result (``{"unsupported": ...}``) are keys there, not statuses, and stay words.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kit.records import STATUSES, VERDICTS, Source, Status, Verdict
from kit.records.verdict import joined, sources
from tests.source_trees import nodes

KIT = Path(__file__).resolve().parent.parent / "kit"
HOME = KIT / "records" / "verdict.py"
WORDS = {str(word) for word in (*Verdict, *STATUSES)}  # a record's words; the index's "yanked" is its own
KEYS = {"unsupported"}  # kit/run/multiprocess.py reads each process's {"unsupported": why}


def _spelt(path: Path, root: Path = KIT.parent) -> list[str]:
    every = nodes(path)
    keys = {id(node.slice) for node in every if isinstance(node, ast.Subscript)}
    keys |= {id(node.args[0]) for node in every
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
             and node.args}
    return [f"{path.relative_to(root)}:{node.lineno} {node.value!r}" for node in every
            if isinstance(node, ast.Constant) and node.value in WORDS
            and not (node.value in KEYS and id(node) in keys)]


def test_no_module_but_verdict_py_spells_a_status_or_a_verdict() -> None:
    spelt = [line for path in sorted(KIT.rglob("*.py")) if path != HOME for line in _spelt(path)]
    assert spelt == []


def test_the_guard_sees_a_spelt_word(tmp_path: Path) -> None:
    module = tmp_path / "kit" / "m.py"
    module.parent.mkdir()
    module.write_text('def f(r):\n    return r.get("verdict") == "affected", r.get("unsupported")\n')
    assert _spelt(module, tmp_path) == ["kit/m.py:2 'affected'"]


@pytest.mark.parametrize("member", [*Verdict, *Status, *Source])
def test_a_member_is_its_word_in_json_text_and_lookups(member: Verdict) -> None:
    word = member.value
    assert json.dumps({"v": member}) == json.dumps({"v": word})
    assert f"{member}" == word
    assert f"{member:>20}" == f"{word:>20}"
    assert {word: 1}[member] == 1
    assert {member: 1}[word] == 1
    assert type(member).of(word) is member


def test_a_word_from_a_file_that_is_none_of_them_is_none() -> None:
    assert Verdict.of("afected") is None
    assert Verdict.of(None) is None
    assert Status.of(["ran"]) is None


def test_records_hold_only_a_records_words() -> None:
    assert Status.YANKED not in STATUSES
    assert Status.RAN in STATUSES
    assert None in VERDICTS


def test_sources_told_in_steps_read_back_in_order() -> None:
    assert joined([Source.RECORD, Source.RUN, Source.RUN]) == "record+run"
    assert sources("record+run") == (Source.RECORD, Source.RUN)
    assert sources("record+nonsense") == (Source.RECORD,)


RECORD_READERS = ("bisect", "matrix")
"""The drivers: a record reaches them as a `Record`, never as the JSON object a run wrote."""


def _untyped_records(path: Path) -> list[str]:
    found = []
    for node in nodes(path):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            if "record" in arg.arg and ("[str, Any]" in text or "RecordJson" in text):
                found.append(f"{path.relative_to(KIT.parent)}:{node.lineno} {node.name}({arg.arg}: {text})")
        returned = ast.unparse(node.returns) if node.returns is not None else ""
        if "RecordJson" in returned or node.name.endswith(("record", "records")) and "[str, Any]" in returned:
            found.append(f"{path.relative_to(KIT.parent)}:{node.lineno} {node.name} -> {returned}")
    return found


def test_no_json_object_record_crosses_into_the_drivers() -> None:
    untyped = [line for package in RECORD_READERS for path in sorted((KIT / package).rglob("*.py"))
               for line in _untyped_records(path)]
    assert untyped == []


def test_a_typed_record_reads_an_edited_file_without_raising() -> None:
    from kit.records import Record

    record = Record({"check": "scaling", "status": "ran", "verdict": "afected", "evidence": [1], "requested": "x",
                     "duration_s": True})
    assert record.ran
    assert record.verdict is None
    assert record.evidence == {}
    assert record.jax == ""
    assert record.duration_s is None
    assert record["verdict"] == "afected"
