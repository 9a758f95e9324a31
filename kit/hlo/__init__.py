"""Compiled HLO read from XLA's dump text (`repro.hlo_text`, the one reader) into each op's fingerprint (stdlib only)."""

from repro.hlo_text import Module, parse_module, read_module

from .fingerprints import COLLECTIVES, FLAGGED, Fingerprint, fingerprints

__all__ = ["COLLECTIVES", "FLAGGED", "Fingerprint", "Module", "fingerprints", "parse_module", "read_module"]
