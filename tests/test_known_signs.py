"""What an entry says its problem looks like, and how well a finding matches it: explain's [fingerprint], triage's
[difference], each against a fixture catalogue (tests/fixtures/known, hermetic), never the shipped one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kit.errors import ConfigError
from kit.explain.known import load as load_fingerprints
from kit.hlo import Fingerprint
from kit.known.catalogue import read_entry
from kit.known.signs import DifferenceSign, FingerprintSign, difference_match, fingerprint_match
from kit.triage import block_outcome
from kit.triage.check_writer import Judged
from kit.triage.known_match import known_lines, matched_entries

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "known"
SIGN = FingerprintSign(("lu", "cholesky"), ("gathered", "whole"), "all-gather")


def _print(op: str = "lu", state: str = "gathered", fed_by: tuple[str, ...] = ("all-gather",)) -> Fingerprint:
    return Fingerprint("jit_loss", "train.py:39", "slogdet", op, "forward", state, "jit(loss)/slogdet",
                       global_batch=1024, device_batch=1024, fed_by=list(fed_by))


def test_a_fingerprint_matching_every_part_says_so_and_a_partial_one_says_what_did_not() -> None:
    lu = _print()
    full = fingerprint_match("e", SIGN, ("cpu", "cuda"), lu, [lu], "cpu")
    assert full is not None and full.full
    assert full.how_well() == "matches all 4 parts: op lu, state gathered, fed by all-gather, on cpu"
    alone = _print(state="whole", fed_by=())
    part = fingerprint_match("e", SIGN, ("cpu", "cuda"), alone, [alone], "tpu")
    assert part is not None and not part.full
    assert part.how_well() == ("matches 2 of 4 parts: op lu, state whole; not: fed by all-gather, "
                               "on tpu (it shows on cpu, gpu)")


def test_a_fingerprint_of_another_op_or_a_split_one_is_no_match() -> None:
    assert fingerprint_match("e", SIGN, ("cpu",), _print(op="qr"), [], "cpu") is None
    assert fingerprint_match("e", SIGN, ("cpu",), _print(state="split"), [], "cpu") is None


def test_explain_reads_the_fingerprints_of_a_catalogue_and_never_an_entry_without_one() -> None:
    known = {k.key: k for k in load_fingerprints([FIXTURES], "cpu")}
    # jit-argument-named-f carries a [difference], gpu-batched-det-overflow neither: explain never matches them.
    assert list(known) == ["gpu-sharded-slogdet-getrf", "sharded-slogdet", "tpu-sharded-slogdet-lu"]
    problem = known["sharded-slogdet"]
    match = problem.matches(_print(), [_print()], "cpu")
    assert match is not None
    said = problem.sentence(match)
    assert said.startswith("known problem sharded-slogdet (matches all 4 parts: op lu, state gathered, fed by "
                           "all-gather, on cpu): measured cpu: present in 0.4.13, 0.4.35; absent in 0.5.3")
    assert "; upstream fix f93c2a1aa5 (first in 0.5.3); workaround shard_map" in said
    # Never measured on GPUs: the CPU fix's release is not the GPU's (t9: the solves split from 0.7.0 there).
    on_gpu = {k.key: k for k in load_fingerprints([FIXTURES], "gpu")}["sharded-slogdet"]
    said = on_gpu.sentence(on_gpu.matches(_print(), [_print()], "gpu"))  # type: ignore[arg-type]
    assert "not measured on this platform" in said and "first in" not in said
    assert "upstream fix f93c2a1aa5 for the platforms measured, untested on this one" in said


def _judged(bad_error: BaseException | None, printed: str = "", good_printed: str = "ok 3\n") -> Judged:
    bad = block_outcome.outcome(1 if bad_error else 0, printed, bad_error)
    good = block_outcome.outcome(0, good_printed)
    return Judged(bad, good, tuple(block_outcome.features(bad, good)), "0.4.36", "0.4.37")


def test_triage_names_the_entry_whose_exception_and_message_the_bad_run_shows() -> None:
    judged = _judged(TypeError("result_paths() got multiple values for argument 'f'"))
    [(entry, match)] = matched_entries([FIXTURES], judged)
    assert entry.id == "jit-argument-named-f" and match.full
    [line] = known_lines([FIXTURES], judged)
    assert line.startswith("known problem jit-argument-named-f (matches all 2 parts: exception TypeError, "
                           "message /got multiple values for argument 'f'/): measured cpu: present in 0.4.36")
    assert line.endswith("; workaround pass it by position, or rename the parameter")


def test_triage_says_a_partial_match_and_nothing_where_no_part_agrees_or_nothing_was_judged() -> None:
    other = _judged(ValueError("got multiple values for argument 'f'"))
    [(_, match)] = matched_entries([FIXTURES], other)
    assert match.how_well() == ("matches 1 of 2 parts: message /got multiple values for argument 'f'/; "
                                "not: exception TypeError (it raised ValueError)")
    assert matched_entries([FIXTURES], _judged(KeyError("x"))) == []
    # The type alone, its message another's, is another problem (TypeError is raised for many).
    assert matched_entries([FIXTURES], _judged(TypeError("'NoneType' object is not iterable"))) == []
    assert known_lines([FIXTURES], None) == []


def test_an_output_pattern_matches_the_bad_runs_differing_lines_only() -> None:
    sign = DifferenceSign(output=r"bool cumsum: \[False")
    judged = _judged(None, "bool cumsum: [False, True]\n", "bool cumsum: [True, True]\n")
    lines = [block_outcome.filled(judged.bad["lines"][f["bad"]]) for f in judged.features if f["what"] == "line"]
    match = difference_match("e", sign, None, None, lines)  # neither run raised
    assert match is not None and match.how_well() == r"matches its one part: output /bool cumsum: \[False/"
    assert difference_match("e", sign, None, None, ["bool cumsum: [True, True]"]) is None


GOOD = """title = "t"
kind = "exception"
upstream = "https://github.com/jax-ml/jax/issues/1"
fix_commit = "0123456789"
measure_on = ["0.4.35"]
"""


@pytest.mark.parametrize(("table", "said"), [
    ('[fingerprint]\nstates = ["whole"]\n', r"\[fingerprint\] needs ops"),
    ('[fingerprint]\nops = ["lu"]\nstates = ["entire"]\n', "state 'entire' is not one explain gives"),
    ('[fingerprint]\nops = ["lu"]\nfed = "all-gather"\n', r"unknown key 'fed' in \[fingerprint\]"),
    ('[difference]\n', r"\[difference\] says nothing"),
    ('[difference]\nmessage = "got (multiple"\n', r"\[difference\] message is not a regular expression"),
    ('[difference]\nexception = 3\n', r"\[difference\] exception must be a line of text"),
])
def test_a_bad_sign_is_one_sentence_naming_the_file(tmp_path: Path, table: str, said: str) -> None:
    path = tmp_path / "one.toml"
    path.write_text(GOOD + table)
    (tmp_path / "one.py").write_text("")
    with pytest.raises(ConfigError, match=said) as failed:
        read_entry(path)
    assert failed.value.args[0].startswith("one.toml")


def test_the_signs_are_optional_so_an_entry_of_yesterday_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "one.toml"
    path.write_text(GOOD)
    (tmp_path / "one.py").write_text("")
    entry: Any = read_entry(path)
    assert (entry.fingerprint, entry.difference, entry.matrix_check, entry.fix) == (None, None, "", None)
    assert entry.links == ("https://github.com/jax-ml/jax/issues/1",)


def test_known_json_carries_what_explain_and_triage_match() -> None:
    from kit.known.catalogue import load_catalogue

    listed = {e.id: json.loads(json.dumps(e.to_json())) for e in load_catalogue(FIXTURES)}
    assert listed["sharded-slogdet"]["fingerprint"] == {"ops": ["lu", "cholesky", "triangular_solve", "qr",
                                                                 "householder_product", "eigh", "svd"],
                                                         "states": ["gathered", "whole"], "fed_by": "all-gather"}
    assert listed["sharded-slogdet"]["matrix_check"] == "scaling" and listed["sharded-slogdet"]["difference"] is None
    assert listed["jit-argument-named-f"]["difference"] == {
        "exception": "TypeError", "message": "got multiple values for argument 'f'", "output": ""}
