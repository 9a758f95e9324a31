"""``python -m kit``: the command line (kit/cli.py), its exit code the process's."""

import sys

from .cli import main

sys.exit(main())
