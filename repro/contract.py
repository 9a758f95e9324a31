"""What the kit and the repros agree on: exit codes (and, next to them, the parameter rules).

Standard library only, so the kit (in nox's process) imports it too: one
name and one value per exit code, on both sides of the subprocess boundary.
"""

EXIT_OK = 0
"""The check ran, whatever its verdict; RESULT.json is written."""
EXIT_USAGE = 2
"""Bad arguments: one ``error:`` line, no RESULT.json."""
EXIT_REFUSED = 3
"""The requested size does not fit this machine's memory: refused before any work, no RESULT.json."""
