"""``reduce PROGRAM --bad R1 --good R2 --out DIR``: the smallest program that still shows PROGRAM's problem on
R1 and still does not on R2, and the issue text around it (docs/reduce.md).

`problem` reads what to keep off the original's runs, `passes` and `ddmin` make the variants, `search`
walks them, `trials` judges each on both releases (`workers`: a warm interpreter per release, `runs`:
one run read), `issue` writes the three files; `command` is the flow.
"""

from .command import main
from .issue import add_bisect

__all__ = ["add_bisect", "main"]
