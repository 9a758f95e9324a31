"""The kit's own exit codes: the values of repro/contract.py's one table that the kit's command exits with.

One table for both halves, so a value means one thing whichever process exits with it (docs/sessions.md's table
says what each means to a user). It lives in repro/ because repro/ never imports the kit; the kit reads repro's
standard-library modules. A user's check script speaks `git bisect run`'s protocol instead (0, 1-127, 125: also in
repro/contract.py).
"""

from repro.contract import EXIT_FAILED as EXIT_FAILED
from repro.contract import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from repro.contract import EXIT_NETWORK as EXIT_NETWORK
from repro.contract import EXIT_NOT_INSTALLABLE as EXIT_NOT_INSTALLABLE
from repro.contract import EXIT_OK as EXIT_OK
from repro.contract import EXIT_UNSUPPORTED as EXIT_UNSUPPORTED
from repro.contract import EXIT_USAGE as EXIT_USAGE
