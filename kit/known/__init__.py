"""The catalogue of known JAX problems: its entries, what the kit measured of them, and the audit of one installation.

`catalogue`, `measured` and `listing` only read files (the report cites them: the foundation layer);
`command` and the modules under it run checks (a driver).
"""
