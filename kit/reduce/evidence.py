"""The reproducer of an ``--op`` reduction made to print its evidence, so that plain ``python`` shows it.

The op's problem is in what XLA compiled, not in anything the program prints: the held-out trial's reduced
cholesky printed nothing on either release, and a maintainer saw the difference only through the kit. So the
reproducer asks XLA to dump what it compiled into a folder of its own (``--xla_dump_to``, beside the host
device count it sets already: a flag every release from 0.4.13 on reads) and ends by printing, from the
optimised HLO, each custom call's shape as one device holds it (its result's first array: the dump writes no
operand's shape) and how many all-gathers there are, e.g. ``custom calls, shape on each device: ['f32[4,1,1]']
all-gathers: 1`` where every device factorises the
whole batch, ``['f32[1,1,1]'] all-gathers: 0`` where the batch is split. Its check (``bisect --script``) then
judges that line. Under the kit's own explained runs the kit's dump flags take the place of these
(`repro.program_watch`): the program then prints no custom call, and explain reads the kit's dump.
"""

from __future__ import annotations

import ast

from .program import Program

DUMP = "DUMP"
"""The reproducer's variable holding its dump folder."""
PRINTED = "custom calls, shape on each device:"
_READ = (f"print({PRINTED!r}, re.findall(r'= \\(?(\\w+\\[[\\d,]*\\])[^=]*? custom-call\\(', hlo := ''.join("
         f"open(path).read() for path in sorted(glob.glob({DUMP}.name + '/*after_optimizations.txt')))), "
         "'all-gathers:', len(re.findall(r' all-gather(?:-start)?\\(', hlo)))\n")
ADDED = 2
"""Statements the evidence adds: the dump folder made, the line printed (its imports join ``os``'s)."""


def printing_evidence(program: Program) -> Program:
    """``program`` with its own XLA dump asked for before JAX is imported, and the evidence printed at its end."""
    out = program.copy()
    body = out.tree.body
    at = _flags_assignment(body)
    # A folder removed as the program exits (the object lives as long as the program).
    folder = ast.parse(f"import glob, re, tempfile\n{DUMP} = tempfile.TemporaryDirectory(prefix='xla-dump-')\n").body
    value = _value(body[at]) if at is not None else None
    if at is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
        assignment = body[at]
        assert isinstance(assignment, ast.Assign)
        flags = f"{value.value} --xla_dump_to="
        assignment.value = ast.BinOp(ast.Constant(flags), ast.Add(), _folder())
        body[at:at] = folder
    else:
        asked = ast.parse("import os\nos.environ['XLA_FLAGS'] = os.environ.get('XLA_FLAGS', '') + "
                          f"' --xla_dump_to=' + {DUMP}.name\n").body
        body[0:0] = folder + asked
    body += ast.parse(_READ).body
    return _imports_joined(Program(out.tree))


def _folder() -> ast.expr:
    return ast.Attribute(ast.Name(DUMP, ast.Load()), "name", ast.Load())


def _flags_assignment(body: list[ast.stmt]) -> int | None:
    """Where the module's body sets ``os.environ['XLA_FLAGS']`` (the last such, before anything imports JAX)."""
    found = None
    for at, statement in enumerate(body):
        if isinstance(statement, (ast.Import, ast.ImportFrom)) and "jax" in ast.unparse(statement):
            break
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        if (isinstance(target, ast.Subscript) and ast.unparse(target.value) == "os.environ"
                and isinstance(target.slice, ast.Constant) and target.slice.value == "XLA_FLAGS"):
            found = at
    return found


def _value(statement: ast.stmt) -> ast.expr | None:
    return statement.value if isinstance(statement, ast.Assign) else None


def _imports_joined(program: Program) -> Program:
    """``import os`` and the evidence's ``import glob, re, tempfile`` as one statement where both are there."""
    body = program.tree.body
    plain = [s for s in body if isinstance(s, ast.Import) and [a.name for a in s.names] == ["os"]
             and not s.names[0].asname]
    ours = [s for s in body if isinstance(s, ast.Import) and [a.name for a in s.names] == ["glob", "re", "tempfile"]]
    if plain and ours and body.index(plain[0]) < body.index(ours[0]):
        plain[0].names += ours[0].names
        body.remove(ours[0])
    return Program(program.tree)
