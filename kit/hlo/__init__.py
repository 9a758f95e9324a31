"""Compiled HLO read from XLA's dump text (`repro.hlo_text`, the one reader) into each op's fingerprint (stdlib only)."""

from repro.hlo_text import Module, parse_module, read_module

from .fingerprint import FLAGGED, HOLDS_WHOLE, Fingerprint, FingerprintState
from .fingerprints import fingerprints, uncompiled
from .instructions import COLLECTIVES
from .sharding import extents, whole_where_the_program_shards
from .source_lines import UNTOLD

__all__ = ["COLLECTIVES", "FLAGGED", "HOLDS_WHOLE", "Fingerprint", "FingerprintState", "Module", "fingerprints",
           "parse_module", "read_module", "uncompiled", "UNTOLD", "extents", "whole_where_the_program_shards"]
