"""Run one check, keep one record: the runner, the check protocol, N processes, the record store."""
