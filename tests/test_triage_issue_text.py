"""kit/triage/issue_text.py: a report's fenced blocks, classed by what they hold, not by their label."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.triage.issue_text import code_blocks, imports_jax, only_prints_the_environment

ISSUES = Path(__file__).resolve().parent.parent / "examples" / "issues"


def test_the_example_reports_blocks_are_classed_by_content() -> None:
    kinds = {path.stem: [b.kind for b in code_blocks(path.read_text())] for path in sorted(ISSUES.glob("*.md"))}
    assert kinds == {
        "custom-remat-random-line": ["python", "output"],
        "device-put-none-segfault": ["python", "output", "environment"],  # the shell said "Segmentation fault"
        "jit-kwarg-named-f": ["python", "traceback", "python", "environment"],
        "normal-draws-assert": ["python", "traceback", "output"],
        "pad-eager-jit-numpy": ["python", "output", "output"],
        "permutation-shuffle-order": ["python", "output", "output", "output"],
        "random-uniform-values": ["python", "output"],  # a shell line and what it printed
        # the traceback is fenced as ```python: its label does not make it code
        "shapedtypestruct-immutable": ["python", "traceback"],
        "sharded-slogdet-collective": ["python", "output", "output"],
        "tracer-arraylike-isinstance": ["python", "traceback"],  # unlabelled, read by what it holds
    }


def test_a_blocks_lines_keep_their_indentation_and_an_indented_fence_takes_its_own_off() -> None:
    text = "intro\n```python\ndef f(x):\n    return x\n```\n  ```\n  import jax\n    x = 1\n  ```\n"
    first, second = code_blocks(text)
    assert first.text == "def f(x):\n    return x"
    assert first.kind == "python"
    assert first.line == 2
    assert second.text == "import jax\n  x = 1"


def test_an_unclosed_fence_runs_to_the_end_and_a_longer_fence_holds_a_shorter_one() -> None:
    (block,) = code_blocks("````\n```python\nimport jax\n```\n````\n")
    assert block.text == "```python\nimport jax\n```"
    assert code_blocks("```py\nimport jax\nprint(1)")[0].text == "import jax\nprint(1)"


@pytest.mark.parametrize(("text", "kind"), [
    ("pip install -U jax\npip install flax", "shell"),
    ("$ python repro.py\n[1. 2. 3.]", "output"),
    ("[0.9653214  0.31468165 0.63302994]", "output"),  # it compiles, but it is a printed value, not code
    ("0.4.36", "output"),
    ("TypeError: bad operand", "traceback"),  # a pasted last line, without its frames
    (">>> import jax\n>>> jax.numpy.ones(3).sum()\nArray(3., dtype=float32)", "console"),
    ("jax:    0.4.36\njaxlib: 0.4.36\nnumpy:  2.2.0", "environment"),
])
def test_blocks_that_are_not_code_are_told_apart(text: str, kind: str) -> None:
    assert code_blocks(f"```\n{text}\n```")[0].kind == kind


def test_a_console_sessions_code_is_its_input_lines() -> None:
    (block,) = code_blocks("```\n>>> import jax\n>>> def f(x):\n...     return x\n>>> f(1)\n1\n```")
    assert block.code == "import jax\ndef f(x):\n    return x\nf(1)"


def test_imports_and_environment_blocks() -> None:
    assert imports_jax("import numpy as np\nimport jax.numpy as jnp")
    assert imports_jax("from jax import lax")
    assert not imports_jax("import jaxtyping\nx = 'import jax'")
    assert only_prints_the_environment("import jax; jax.print_environment_info()")
    assert not only_prints_the_environment("import jax\njax.print_environment_info()\njax.jit(f)(1)")
