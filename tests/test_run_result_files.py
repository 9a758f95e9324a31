"""kit/run/result_files.py: a result file's content is a JSON object, None when missing, or one sentence.

The odd files a real script leaves are run end to end in tests/faults/test_result_files.py; here the
reader is called directly, for its boundaries and the cases those runs do not reach.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.run import result_files
from kit.run.result_files import ResultFileError, read_json_object, read_or_why


def test_an_object_is_returned_as_read(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text('{"verdict": "affected", "summary": {"n": 3}}')
    assert read_json_object(path, "RESULT.json") == {"verdict": "affected", "summary": {"n": 3}}


def test_a_missing_file_is_none_and_no_reason(tmp_path: Path) -> None:
    # A script need not write KIT_RESULT: missing is not an error, read_or_why must not invent one.
    assert read_json_object(tmp_path / "absent.json", "KIT_RESULT") is None
    assert read_or_why(tmp_path / "absent.json", "KIT_RESULT") == (None, "")


def test_a_dangling_link_reads_as_missing(tmp_path: Path) -> None:
    link = tmp_path / "result.json"
    link.symlink_to(tmp_path / "nowhere")
    assert read_json_object(link, "KIT_RESULT") is None


def test_a_file_of_exactly_max_bytes_is_read_and_one_more_is_refused(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Boundary of the size check: an off-by-one would refuse a result of exactly the limit.
    monkeypatch.setattr(result_files, "MAX_BYTES", 20)
    path = tmp_path / "result.json"
    path.write_text('{"a": "' + "x" * 11 + '"}')  # 20 bytes
    assert read_json_object(path, "KIT_RESULT") == {"a": "x" * 11}
    path.write_text('{"a": "' + "x" * 12 + '"}')  # 21 bytes
    with pytest.raises(ResultFileError, match=r"^KIT_RESULT holds 21 bytes, more than the 20 bytes a result may hold$"):
        read_json_object(path, "KIT_RESULT")


@pytest.mark.parametrize("text, kind", [("[1]", "an array"), ('"s"', "a string"), ("true", "a boolean"),
                                        ("null", "null"), ("3", "a number"), ("2.5", "a number")])
def test_a_value_that_is_not_an_object_is_named_by_its_kind(tmp_path: Path, text: str, kind: str) -> None:
    # true is an int in Python: a kind looked up by isinstance would call it a number.
    path = tmp_path / "result.json"
    path.write_text(text)
    assert read_or_why(path, "KIT_RESULT") == (None, f"KIT_RESULT must hold a JSON object, not {kind}")


def test_nan_in_a_result_reads_as_null(tmp_path: Path) -> None:
    # json_text's rule applies here too: NaN would make the record strict JSON no more.
    path = tmp_path / "result.json"
    path.write_text('{"summary": {"t": NaN, "u": Infinity}}')
    assert read_json_object(path, "KIT_RESULT") == {"summary": {"t": None, "u": None}}


def test_empty_and_blank_files_are_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text("")
    assert read_or_why(path, "RESULT.json") == (None, "RESULT.json: empty file")
    path.write_text(" \n\t")
    assert read_or_why(path, "RESULT.json") == (None, "RESULT.json: empty file")


def test_latin1_bytes_are_named_with_their_offset(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_bytes(b'{"a": "\xe9"}')  # Latin-1 é: not UTF-8, at offset 7
    assert read_or_why(path, "KIT_RESULT") == (None, "KIT_RESULT is not UTF-8 text (byte 0xe9 at offset 7)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_that_cannot_be_opened_is_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text("{}")
    path.chmod(0)
    assert read_or_why(path, "KIT_RESULT") == (None, "KIT_RESULT could not be read (Permission denied)")


def test_a_folder_that_cannot_be_searched_is_a_sentence_not_missing(tmp_path: Path) -> None:
    # stat failing for another reason than "no such file" must not read as "the script wrote nothing".
    path = tmp_path / "result.json" / "below"
    (tmp_path / "result.json").write_text("{}")
    found, why = read_or_why(path, "KIT_RESULT")
    assert found is None
    assert why == "KIT_RESULT could not be read (Not a directory)"
