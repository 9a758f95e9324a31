"""kit/triage/block_choice.py: which block is the repro, said with why, or a question for --block N.

Each report below would fool a naive choice (the first block, the last one, the one labelled python).
"""

from __future__ import annotations

import pytest

from kit.errors import UsageError
from kit.triage.block_choice import choose_block
from kit.triage.issue_text import code_blocks

REPRO = "import jax\n\ndef f(x):\n    return jax.numpy.sin(x)\n\nprint(jax.jit(f)(1.0))"
OTHER = "import jax\n\ndef g(y):\n    return y + 1\n\nprint(jax.jit(g)(2.0))"
TRACEBACK_OF_REPRO = ("Traceback (most recent call last):\n  File \"/home/me/r.py\", line 6, in <module>\n"
                      "    print(jax.jit(f)(1.0))\n          ^^^^^^^^^^^^^^^\nTypeError: bad")


def _choose(text: str, asked: int | None = None):  # type: ignore[no-untyped-def]
    blocks = code_blocks(text)
    return choose_block(blocks, "\n".join(b.text for b in blocks if b.kind == "traceback"), asked)


def test_shell_and_environment_blocks_before_the_repro_are_not_taken() -> None:
    text = (f"```\npip install -U jax\n```\n```python\nimport jax; jax.print_environment_info()\n```\n"
            f"```python\n{REPRO}\n```\n")
    choice = _choose(text)
    assert choice.block.number == 3
    assert choice.why == "block 3: the only block of Python (block 2 only prints the environment)"


def test_a_traceback_labelled_python_is_not_the_repro() -> None:
    choice = _choose(f"```python\n{TRACEBACK_OF_REPRO}\n```\n```\n{REPRO}\n```\n")
    assert choice.block.number == 2


def test_of_two_blocks_the_one_that_imports_jax_is_taken_and_the_other_named() -> None:
    choice = _choose(f"```python\n{REPRO}\n```\nand my helper:\n```python\nx = [1, 2]\nprint(sum(x))\n```\n")
    assert choice.block.number == 1
    assert choice.why == "block 1: the only block that imports jax (block 2 does not import jax)"


def test_of_two_jax_blocks_the_one_the_traceback_shows_is_taken() -> None:
    text = f"```python\n{OTHER}\n```\n```python\n{REPRO}\n```\n```\n{TRACEBACK_OF_REPRO}\n```\n"
    choice = _choose(text)
    assert choice.block.number == 2
    assert "the traceback shows its lines" in choice.why


def test_two_jax_blocks_the_text_cannot_tell_apart_ask_for_block() -> None:
    with pytest.raises(UsageError) as asked:
        _choose(f"```python\n{OTHER}\n```\n```python\n{REPRO}\n```\n")
    assert "2 blocks of Python that could be the repro: block 1 ('import jax'); block 2 ('import jax')" in str(asked.value)
    assert asked.value.tip == "say which with --block N, e.g. --block 2"
    assert _choose(f"```python\n{OTHER}\n```\n```python\n{REPRO}\n```\n", asked=1).why == "block 1: as --block asked"


def test_no_runnable_block_is_said_with_what_the_blocks_are() -> None:
    with pytest.raises(UsageError) as none:
        _choose(f"it fails:\n```\n{TRACEBACK_OF_REPRO}\n```\n")
    assert str(none.value) == "the report holds no block of Python to run (block 1: traceback)"


@pytest.mark.parametrize(("asked", "message"), [
    (5, "--block 5: the report has 2 blocks"),
    (2, "--block 2 is not Python that compiles: it looks like traceback"),
])
def test_a_block_asked_for_must_be_there_and_be_python(asked: int, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        _choose(f"```python\n{REPRO}\n```\n```\n{TRACEBACK_OF_REPRO}\n```\n", asked=asked)
    assert str(refused.value) == message
