"""The kit's own exit codes, one name and one value each (docs/sessions.md's table says what each means).

What the kit and the repros (or a user's check script) both name, such as a
repro's "unsupported" or a script's "inconclusive" (125), is in
repro/contract.py instead: one place for each side of the subprocess boundary.
"""

EXIT_OK = 0
"""The command did its work (a check ran, whatever its verdict)."""
EXIT_FAILED = 1
"""A check crashed, timed out or refused a size; ``--fail-on-affected`` and affected; a record went elsewhere."""
EXIT_USAGE = 2
"""Bad input: one ERROR line and a TIP (`kit.errors.KitError`)."""
EXIT_NOT_INSTALLABLE = 3
"""The index answered and has no usable wheels for the release (a record says why)."""
EXIT_NETWORK = 4
"""The index could not be reached and the release's environment is not built yet (no record)."""
EXIT_UNSUPPORTED = 5
"""The release cannot run what was asked here, e.g. ``--processes 2`` without CPU collectives (a record)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT): everything finished before it is kept."""
