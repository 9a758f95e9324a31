"""kit/triage/failure_pattern.py: a bad_if from the reported exception that matches the same failure elsewhere.

Each case pairs the reporter's exception with the line another release or run printed for the same failure
(other addresses, ids, shapes, module paths) and with a different failure it must not match. A naive pattern,
``re.escape`` of the reported line, misses every "same" line here.
"""

from __future__ import annotations

import re

import pytest

from kit.run.failures import RaisedException, exception_chain
from kit.triage.failure_pattern import MESSAGE_CHARS, bad_if_for
from tests.tracer_reprs import ONE_FAILURE_FOUR_REPRS

CASES = [
    # (reported type, reported message, the same failure elsewhere, another failure)
    ("TypeError", "result_paths() got multiple values for argument 'f'",
     "TypeError: result_paths() got multiple values for argument 'f'",
     "TypeError: result_paths() got multiple values for argument 'g'"),  # a quoted name stays literal
    ("jax.errors.TracerBoolConversionError", "Attempted boolean conversion of traced array with shape bool[].",
     "jax._src.errors.TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[3].",
     "jax.errors.TracerArrayConversionError: Attempted boolean conversion of traced array with shape bool[]."),
    ("jax._src.core.InconclusiveDimensionOperation", "Cannot divide evenly the sizes of shapes (7,) and (3, 5)",
     "InconclusiveDimensionOperation: Cannot divide evenly the sizes of shapes (8, 2) and (3,)",
     "InconclusiveDimensionOperation: Cannot multiply the sizes of shapes (7,) and (3, 5)"),
    ("TypeError", "unhashable type: <function loss at 0x7f3a2b8c1d30> passed as 'jit_loss_12'",
     "TypeError: unhashable type: <function loss at 0x55d1e0a4b0f0> passed as 'jit_loss_7'",
     "TypeError: unhashable type: <function loss at 0x7f3a2b8c1d30> passed as static"),
    ("jax.errors.UnexpectedTracerError", "Encountered an unexpected tracer, level=1/0, from line 42",
     "jax.errors.UnexpectedTracerError: Encountered an unexpected tracer, level=3/1, from line 17",
     "jax.errors.UnexpectedTracerError: Encountered a leaked tracer, level=1/0, from line 42"),
]


@pytest.mark.parametrize(("kind", "message", "same", "other"), CASES)
def test_the_pattern_matches_the_same_failure_with_other_values_and_not_another(
        kind: str, message: str, same: str, other: str) -> None:
    pattern = re.compile(bad_if_for([RaisedException(kind, message)]))
    assert pattern.search(f"{kind}: {message}")
    assert pattern.search(f"some output\n{same}\nFor simplicity, JAX has removed its internal frames")
    assert not pattern.search(other)
    if same != f"{kind}: {message}":
        assert not re.search(re.escape(f"{kind}: {message}"), same)  # the naive pattern misses it


def test_only_the_first_line_of_the_message_is_kept_and_a_long_one_is_cut_at_a_word() -> None:
    long = "word " * 60 + "tail"
    pattern = bad_if_for([RaisedException("ValueError", f"{long}\nSee https://docs.jax.dev/en/latest/errors.html")])
    assert "docs" not in pattern
    assert "tail" not in pattern
    assert len(pattern) < MESSAGE_CHARS + 40
    assert re.search(pattern, f"ValueError: {long}\nSee another link")


def test_a_chain_gives_one_alternative_per_link_so_either_ending_matches() -> None:
    chain = [RaisedException("StopIteration", ""), RaisedException("RuntimeError", "generator raised StopIteration")]
    pattern = re.compile(bad_if_for(chain))
    assert pattern.search("Traceback (most recent call last):\n  File \"x\", line 1\nStopIteration")
    assert pattern.search("RuntimeError: generator raised StopIteration")
    assert not pattern.search("StopIterationError: no")
    assert not pattern.search("RuntimeError: other")


def test_the_pattern_matches_a_link_as_the_kit_searches_it() -> None:
    """Anchored at a line's start: it matches the link text `kit.run.failures` builds, `Type: message`."""
    lines = ["Traceback (most recent call last):", '  File "t.py", line 3, in <module>',
             "    jax.jit(loss)(x, f=2.0)",
             "TypeError: result_paths() got multiple values for argument 'f'"]
    (raised,) = exception_chain(lines)
    pattern = bad_if_for([raised])
    assert pattern.startswith("(?m)^")
    assert re.search(pattern, f"{raised.type}: {raised.message}")


def test_no_exception_is_no_pattern() -> None:
    with pytest.raises(ValueError):
        bad_if_for([])


def test_an_assertion_quoting_the_reporters_floats_matches_this_machines_low_digits() -> None:
    import re

    from kit.run.failures import RaisedException
    from kit.triage.failure_pattern import bad_if_for

    pattern = bad_if_for([RaisedException("AssertionError", "0.12345678 != 0.5 at step 3")])
    assert re.search(pattern, "AssertionError: 0.1234912 != 0.5 at step 3")  # another machine's low digits
    assert not re.search(pattern, "AssertionError: 0.1234912 != 0.5 at step 4")  # integers stay literal


@pytest.mark.parametrize("quoted", sorted(ONE_FAILURE_FOUR_REPRS))
def test_a_reported_tracer_repr_matches_the_same_failure_in_every_releases_repr(quoted: str) -> None:
    pattern = bad_if_for([RaisedException("TypeError", ONE_FAILURE_FOUR_REPRS[quoted])])
    # Was: each pattern matched its own release only, and a bisect skipped the others as "failed otherwise".
    assert [v for v, message in ONE_FAILURE_FOUR_REPRS.items() if re.search(pattern, f"TypeError: {message}")] == \
        sorted(ONE_FAILURE_FOUR_REPRS, key=lambda v: tuple(map(int, v.split("."))))
    assert not re.search(pattern, "TypeError: Shapes must be 1D sequences of concrete values of float type, got (x,).")
    assert not re.search(pattern, "ValueError: Shapes must be 1D sequences of concrete values of integer type, got (x,).")
