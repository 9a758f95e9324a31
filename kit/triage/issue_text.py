"""What a bug report's text holds: its code blocks, the failure it reports, and which JAX it ran.

A report is markdown (a GitHub issue's body) or plain text. Its fenced blocks
are classed by what they hold, not by their fence's label (people label a
traceback ``python`` and leave code unlabelled): a traceback, the output of
``jax.print_environment_info()``, shell lines, Python that compiles, or other
output. Nothing here runs or guesses code; it only reads what the text says.

Only what a reader of the report sees counts: an HTML comment (``<!-- ... -->``,
invisible on GitHub) is blanked before anything is read (`visible_text`), and a
block fenced as another language (```` ```text ````, ```` ```console ````) is never
Python, whatever it holds: only unlabelled blocks and those labelled as Python run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

TRACEBACK_HEADER = "Traceback (most recent call last):"

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\s`]*)[^`\n]*$")
_ENVIRONMENT_LINE = re.compile(r"^\s*(jax|jaxlib|numpy|python|device info|process_count|platform):", re.M)
_SHELL_LINE = re.compile(r"^\s*(\$ |pip3? |python3? -m pip |conda |uv |git |nox |cd |export )")
_PROMPT = re.compile(r"^(>>>|\.\.\.)( |$)")
PYTHON_LABELS = ("", "python", "py", "python3", "py3", "pycon", "ipython", "ipython3")
"""The fence labels whose blocks may be Python to run; any other label says the block is something else."""

_LAST_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|"
                                  r"StopIteration|Failure)(?::.*)?$")


@dataclass(frozen=True)
class Block:
    """One fenced block of the report, numbered from 1 in the order the text holds them."""

    number: int
    language: str
    """The fence's label, lower case ("" when none)."""
    text: str
    line: int
    """The line of the report its fence opens on (from 1)."""

    @property
    def kind(self) -> str:
        """``traceback``, ``environment``, ``shell``, ``python``, ``console`` (a ``>>>`` session) or ``output``."""
        lines = [line for line in self.text.splitlines() if line.strip()]
        if not lines:
            return "output"
        if any(line.strip() == TRACEBACK_HEADER for line in lines) or _ends_in_exception(lines):
            return "traceback" if not _PROMPT.match(lines[0]) else "console"
        if len(_ENVIRONMENT_LINE.findall(self.text)) >= 2:
            return "environment"
        if self.language not in PYTHON_LABELS:
            return "shell" if self.language in ("sh", "bash", "shell", "console", "zsh") else "output"
        if _PROMPT.match(lines[0]):
            return "console"
        if self.language in ("sh", "bash", "shell", "console", "zsh") or all(_SHELL_LINE.match(x) for x in lines):
            return "shell"
        return "python" if compiles(self.text) and _looks_like_code(lines) else "output"

    @property
    def code(self) -> str:
        """The Python it holds: the text itself, or a ``>>>`` session's input lines without their prompts."""
        if self.kind != "console":
            return self.text
        return "\n".join(line[4:] if len(line) > 3 else "" for line in self.text.splitlines() if _PROMPT.match(line))

    @property
    def fenced_away(self) -> bool:
        """Python fenced as another language (```` ```text ````): the reader is told it is not code, so it never runs."""
        return self.language not in PYTHON_LABELS and self.kind in ("output", "shell") and (
            compiles(self.text) and _looks_like_code([line for line in self.text.splitlines() if line.strip()])
            or bool(self.text.strip()) and bool(_PROMPT.match(self.text.strip())))

    def first_line(self) -> str:
        return next((line.strip() for line in self.code.splitlines() if line.strip()), "")


def code_blocks(text: str) -> list[Block]:
    """Every fenced block (```` ``` ```` or ``~~~``, as CommonMark closes them), in order; an unclosed one runs to
    the end of the text."""
    blocks: list[Block] = []
    lines = text.splitlines()
    at = 0
    while at < len(lines):
        opened = _FENCE.match(lines[at])
        if not opened:
            at += 1
            continue
        fence, indent = opened.group("fence"), len(opened.group("indent"))
        body, end = [], at + 1
        while end < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[end]):
            line = lines[end]  # CommonMark: a fence indented N spaces takes up to N spaces off each line
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            end += 1
        blocks.append(Block(len(blocks) + 1, opened.group("info").lower(), "\n".join(body), at + 1))
        at = end + 1
    return blocks


def visible_text(text: str) -> str:
    """``text`` with every HTML comment outside a fenced block blanked (its line breaks kept, so lines keep their
    numbers): what GitHub shows. A fence inside a comment is no fence, and ``<!--`` inside a fence is code."""
    out: list[str] = []
    fence = ""  # the open fence's characters, "" outside a fenced block
    hidden = False
    for line in text.splitlines():
        if fence:
            out.append(line)
            if re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", line):
                fence = ""
            continue
        shown, rest = "", line
        while rest:
            if hidden:
                end = rest.find("-->")
                rest, hidden = ("", True) if end < 0 else (rest[end + 3:], False)
                continue
            start = rest.find("<!--")
            if start < 0:
                shown, rest = shown + rest, ""
            else:
                shown, rest, hidden = shown + rest[:start], rest[start + 4:], True
        opened = _FENCE.match(shown) if shown == line else None
        fence = opened.group("fence") if opened else ""
        out.append(shown)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def prose_lines(text: str, blocks: list[Block]) -> list[tuple[int, str]]:
    """The report's lines outside its fenced blocks (fences included in the blocks), with their index from 0."""
    inside = {at for block in blocks for at in range(block.line - 1, block.line + block.text.count("\n") + 2)}
    return [(at, line) for at, line in enumerate(text.splitlines()) if at not in inside]


def compiles(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def imports_jax(code: str) -> bool:
    """Does the code import jax (``import jax``, ``from jax... import``, ``import jax.numpy as jnp``)?"""
    return bool(re.search(r"^\s*(import\s+jax\b|from\s+jax[\w.]*\s+import\b)", code, re.M))


def has_assert(code: str) -> bool:
    """Does the code check its result with an ``assert`` statement (then a failed assert is what it reports)?"""
    return any(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(code)))


def only_prints_the_environment(code: str) -> bool:
    """A block whose only work is ``jax.print_environment_info()``: it says which JAX ran, it is not the bug."""
    calls = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Call)]
    return bool(calls) and all(ast.unparse(call.func).endswith(("print_environment_info", "print")) for call in calls) \
        and "print_environment_info" in code


def _ends_in_exception(lines: list[str]) -> bool:
    """A pasted failure without its frames: the block's last line is ``SomeError: message``."""
    last = lines[-1].strip()
    return bool(_LAST_EXCEPTION_LINE.match(last)) and not compiles(last)


def _looks_like_code(lines: list[str]) -> bool:
    """Compiling is not enough: ``0.4.36`` or ``[1. 2. 3.]`` compile too. Code calls, assigns, imports or defines."""
    text = "\n".join(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return any(isinstance(node, (ast.Call, ast.Assign, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assert,
                                 ast.AugAssign, ast.ClassDef, ast.With, ast.For)) for node in ast.walk(tree))
