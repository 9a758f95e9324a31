"""The catalogue of known JAX problems: its entries, what the kit measured of them, and the audit of one installation."""

from .command import audit_main, known_main

__all__ = ["audit_main", "known_main"]
