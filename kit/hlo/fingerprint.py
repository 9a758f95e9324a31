"""One fingerprint: a (source line, function, op, pass) of one compiled module, how its work lies on the devices.

kit.hlo.fingerprints makes them from a module's HLO; a record, a kept run and a catalogue entry hold them as JSON.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..json_types import JsonObject


class FingerprintState(str, enum.Enum):
    """How one fingerprint's work is laid over the devices (kit.hlo.fingerprints' docstring says each).

    A `str` enum: a member is equal to (and hashes as) the word a record, a
    kept run or a catalogue entry holds, so what was written before this type
    existed compares equal, and ``json.dumps`` writes the word.
    """

    SPLIT = "split"
    WHOLE = "whole"
    GATHERED = "gathered"
    REPLICATED = "replicated"
    ONE_DEVICE = "one device"
    EXPECTED = "expected"
    COMMUNICATION = "communication"
    CANNOT_TELL = "cannot tell"
    """In a module that was not compiled (the target's compiler refused it): read before optimizations only."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return format(str.__str__(self), spec)


HOLDS_WHOLE = frozenset({FingerprintState.WHOLE, FingerprintState.GATHERED})
"""A linalg op that holds the whole batch on every device: what the explain check and a per-op bisect flag."""
FLAGGED = frozenset({*HOLDS_WHOLE, FingerprintState.COMMUNICATION})

@dataclass
class Fingerprint:
    """One (source line, function, op, pass) of one module, with its state and figures."""

    module: str
    location: str | None
    """``file:line`` of the program ("" where JAX's own code made it: then the op path names it)."""
    function: str
    """The JAX function the op belongs to (``slogdet``), from the op path."""
    op: str
    """The primitive (``lu``, ``triangular_solve``) or the collective (``all-gather``)."""
    pass_: str
    """``forward`` or ``backward`` (the op path is under ``transpose(...)``)."""
    state: FingerprintState
    op_path: str
    count: int = 0
    bytes_per_device: int = 0
    """A collective's result bytes on each device (every array of one XLA combined), summed over its instructions;
    for an op, what fed it."""
    global_batch: int | None = None
    device_batch: int | None = None
    fed_by: list[str] = field(default_factory=list)
    dims: list[int] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    in_loop: bool = False
    """Some of its instructions sit in a loop or another called computation: they may run more than once."""
    fed: dict[str, int] = field(default_factory=dict)
    """For an op, each collective that fed it (``3/all-gather-start``: module 3's instruction) and the bytes it
    delivered to each device: ops of one line fed by the same all-gather count it once."""

    def __post_init__(self) -> None:
        # The word a kept run, a record or a test hands in is read as its member here, once (ValueError for a
        # word that is none), so every reader may ask ``state is FingerprintState.SPLIT``.
        self.state = FingerprintState(self.state)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What the same op in another release's compile is matched by."""
        return (self.location or self.op_path, self.function, self.op, self.pass_)

    @property
    def flagged(self) -> bool:
        return self.state in FLAGGED

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Fingerprint:
        """`to_json`'s dict back (KeyError, TypeError or ValueError, for an unknown state, for one that is not)."""
        fields = {**data, "pass_": data["pass"]}
        del fields["pass"]
        return cls(**fields)  # type: ignore[arg-type]  # the JSON edge: a wrong field is the TypeError said above

    def to_json(self) -> JsonObject:
        return {"module": self.module, "location": self.location, "function": self.function, "op": self.op,
                "pass": self.pass_, "state": self.state, "op_path": self.op_path, "count": self.count,
                "bytes_per_device": self.bytes_per_device, "global_batch": self.global_batch,
                "device_batch": self.device_batch, "fed_by": self.fed_by, "dims": self.dims,
                "targets": self.targets, "in_loop": self.in_loop, **({"fed": dict(self.fed)} if self.fed else {})}
