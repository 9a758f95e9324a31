"""Compiled HLO read from XLA's dump text: modules, instructions, and each op's fingerprint (stdlib only)."""

from .fingerprints import COLLECTIVES, FLAGGED, Fingerprint, fingerprints
from .text import Module, parse_module, read_module

__all__ = ["COLLECTIVES", "FLAGGED", "Fingerprint", "Module", "fingerprints", "parse_module", "read_module"]
