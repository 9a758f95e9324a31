"""An instruction's ``op_name`` read as the program's op path: the outer jits stripped, a combined name's first
part, the forward call a backward path transposes, the JAX function a path names."""

from __future__ import annotations

import re

EXPORTED_CALL = "call_exported"  # the op path's step into a module compiled from a jax.export

_JIT_ANY = re.compile(r"^p?jit\(.*\)$")
_MAIN = frozenset({"jit(main)", "pjit(main)"})
_FUNCTION = re.compile(r"jit\(([A-Za-z_]\w*)\)")


def module_jits(module_name: str) -> frozenset[str]:
    """The jits every op path of a module starts with: the program's own (``jit(loss)`` of ``jit_loss``), JAX's."""
    return frozenset({f"jit({module_name.removeprefix('jit_')})", "jit(main)", "pjit(main)"})


def op_path(op_name: str, jits: frozenset[str]) -> str:
    """``op_name`` without the module's outer ``jits`` (and an export's call): the path the program's ops share."""
    parts = first_combined(op_name).split("/")
    while len(parts) > 1 and (parts[0] in jits or parts[1] in (*_MAIN, EXPORTED_CALL) and _JIT_ANY.match(parts[0])):
        # The program's outer jit, whatever it is called (``jit(<lambda>)`` of a jitted lambda, as the issue-58
        # program's dict of losses has: its function was said as "main"), then JAX's own ``jit(main)``.
        parts = parts[1:]
    if len(parts) > 2 and parts[0] == EXPORTED_CALL:
        # Compiled for a target from an export (`repro.target_compile`): the program's own jit is one level down.
        parts = parts[2:] if parts[1].startswith(("jit(", "pjit(")) else parts[1:]
    return "/".join(parts)


def without_outer_jit(path: str) -> str:
    """A path before optimizations without the program's own jit (``jit(<lambda>)``), which compiled paths lack."""
    head, _, rest = path.partition("/")
    return rest if _JIT_ANY.match(head) else path


def function_of(path: str) -> str:
    """The JAX function an op path names (``slogdet`` of ``jvp(jit(slogdet))/lu``), else its last step."""
    return next(iter(_FUNCTION.findall(path)), "") or path.rsplit("/", 1)[-1]


def first_combined(op_name: str) -> str:
    """The op name of the first op an instruction XLA combined from several stands for, the name itself otherwise.

    jax 0.12 names a combined all-reduce by its parts in parentheses, ``:`` between them:
    ``jit(f)/(jvp()/reduce_sum:transpose(jvp(btc,dc->btd))/dot_general)``; split at ``/`` that was read as the
    function ``dot_general)`` on the backward pass (the trial's spectral_windows.py:24 on 0.12.0), a row of its own
    beside 0.8.0's ``reduce_sum`` (forward) of the same line. Its source line is the first part's."""
    return combined_parts(op_name)[0]


def combined_parts(op_name: str) -> list[str]:
    """Each op a combined instruction's name stands for, in the order of its tuple's elements (``jit(f)/a/b`` and
    ``jit(f)/c`` of ``jit(f)/(a/b:c)``); the name alone where it combines nothing."""
    start = op_name.find("/(") + 1 if not op_name.startswith("(") else 0
    if not op_name.endswith(")") or (start == 0 and not op_name.startswith("(")):
        return [op_name]
    inner = op_name[start + 1:-1]
    depth, parts, begun = 0, [], 0
    for index, char in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return [op_name]  # the first parenthesis closes before the end: not one combined name
        if depth == 0 and char == ":":
            parts.append(inner[begun:index])
            begun = index + 1
    parts.append(inner[begun:])
    if len(parts) < 2 or depth:
        return [op_name]  # one part in parentheses: nothing was combined
    return [op_name[:start] + part for part in parts]


def untransposed(path: str) -> str:
    """The forward call a backward op path transposes: ``jvp(jit(inv))/x`` for ``transpose(jvp(jit(inv)))/x``
    (the same line of the program)."""
    head, _, rest = path.partition("/")
    if head.startswith("transpose(") and head.endswith(")"):
        return head[len("transpose("):-1] + ("/" + rest if rest else "")
    return path
