"""Compiled HLO read from XLA's dump text (`repro.hlo_text`, the one reader) into each op's fingerprint (stdlib only)."""

from repro.hlo_text import Module, parse_module, read_module

from .fingerprints import COLLECTIVES, FLAGGED, HOLDS_WHOLE, Fingerprint, FingerprintState, fingerprints, uncompiled

__all__ = ["COLLECTIVES", "FLAGGED", "HOLDS_WHOLE", "Fingerprint", "FingerprintState", "Module", "fingerprints",
           "parse_module", "read_module", "uncompiled"]
