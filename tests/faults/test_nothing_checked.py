"""A correctness run in which every case failed (``ulimit -v``, too little memory): never "all 0 values are fine".

Under a memory limit each case's batch fails to allocate (MemoryError, or
XLA's RESOURCE_EXHAUSTED); the run is cut short and nothing is compared.
Its reason used to read "All 0 checked values are within tolerance": true of
no value, and read as a near-pass. Now it says nothing was checked, which case
failed first and with what. docs/faults.md, "Result files".
"""

from __future__ import annotations

from repro import correctness, tolerance
from repro.verdicts import INCONCLUSIVE

ERROR = "MemoryError: Unable to allocate 2.24 GiB for an array with shape (1500000, 20, 20) and data type float32"


def test_a_run_whose_every_case_failed_says_nothing_was_checked_and_why() -> None:
    failed = [{"dtype": "float32", "batch": batch, "n": 20, "bytes": batch * 1600, "memory": {}, "error": ERROR}
              for batch in (1_000_000, 1_500_000)]
    summary = correctness.summarize(failed)
    verdict, reason = tolerance.correctness_verdict(
        backend="cpu", bad_count=summary["bad_count"], checked_count=summary["checked_count"],
        checked_past_boundary=0, crossed_boundary=summary["crossed_boundary"], completed=False,
        largest_bytes=summary["largest_bytes"], max_rel_error=summary["max_rel_error"],
        first_bad_index=None, first_bad_byte_offset=None, first_failure=ERROR)
    assert verdict == INCONCLUSIVE
    assert reason.startswith("No det/slogdet value was checked: every case failed before its values were compared; "
                             f"the first failed with {ERROR} (this machine's memory ran out: a limit such as ulimit "
                             "-v, or too little free), so this says nothing about the release; ran on CPU")
    assert "All 0" not in reason
