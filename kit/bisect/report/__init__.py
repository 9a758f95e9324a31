"""What a bisect found, written down: the finding, the markdown and JSON report, and what they quote.

* :mod:`.finding`: what the search found and what it cost, the facts both reports are written from;
* :mod:`.markdown`: the markdown and JSON ready to paste into an issue;
* :mod:`.summary`: the report's first 10 lines (the answer, the reproduce command, the deciding probes);
* :mod:`.inputs`: what a report is written from besides the finding (``--out``, the script, the notes);
* :mod:`.what_changed`: what else changed between the last good and the first bad;
* :mod:`.changelog`: compare links and release notes; :mod:`.changelog_entries` the entries worth quoting;
* :mod:`.advice`: the tip when the bounds do not hold, following what is already known.
"""

from .advice import scan_tip
from .finding import BisectFinding
from .inputs import bisected, release_notes, reports_dir, shown_paths
from .markdown import candidate_table, publish_report

__all__ = [
    "BisectFinding", "bisected", "candidate_table", "publish_report", "release_notes",
    "reports_dir", "scan_tip", "shown_paths",
]
