"""Run one check, keep one record: the runner, the check protocol, N processes, the facts of the process."""
