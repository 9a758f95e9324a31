"""The record store and record currency: what every folder of the kit reads.

One JSON record per run under ``reports/results/``. Below install, run,
matrix and bisect, next to config: they all write or read records, and none
of them answers these questions on its own.

* `verdict`: the words an outcome is told in (`Status`, `Verdict`, `Source`),
  the only place they are spelt;
* `record`: `Record`, a record's typed fields over its JSON object, which it owns;
* `schema`: what a record is, its fields, migrations, and `parse_record`,
  which turns any file's text into a record or one sentence saying why not;
* `json_text`: JSON read from files anyone can write, never raising (`kit.json_types` narrows what it gives);
* `outcome`: `RunOutcome`, what became of one run (status, verdict, reason, evidence), and the named steps
  that override it;
* `making`: `new_record`, the one constructor of every record (a check's and explain's), from its
  `RecordHead` and its `RunOutcome`;
* `cells`: which cell a record measures and on which machine; the newest per cell;
* `origin`: whose environment a record ran in (the kit's build, or a user's
  own interpreter), and a named environment's cells;
* `store`: writing records atomically, keeping them elsewhere when the disk
  is full, loading a folder of them;
* `identity`: everything a run's outcome depends on, and whether two runs are the same;
  `packages_fingerprint`, the name of an installed package set;
* `currency`: which records ran the matrix's parameters (the rest are
  ad-hoc), and whether a record is still current (the same identity).
"""

from .currency import (
    Configured,
    differences,
    is_current,
    newest_records_here,
    origin_difference,
    record_identity,
    split_ad_hoc,
    staleness,
)
from .identity import Identity, mismatch, packages_fingerprint, run_identity, same, same_install, summary
from .cells import (
    CellKey,
    backend_name,
    cell_key,
    created_at,
    machine_id,
    newest_per_cell,
    record_backend,
    record_jax,
    record_machine,
    release_key,
)
from .origin import (
    EXISTING,
    EnvironmentCell,
    environment_cell,
    environment_name,
    existing_interpreter,
    newest_per_environment,
)
from .record import LoadedRecord, LoadResult, Record
from .schema import (
    MIGRATIONS,
    SCHEMA,
    STATUSES,
    VERDICTS,
    RecordError,
    RecordJson,
    UnusableFile,
    migrate,
    parse_record,
    validate,
)
from .json_text import JsonTextError, decode, read_json
from .outcome import RunOutcome
from .making import RecordHead, new_record, now, this_host
from .verdict import EXPLAIN_STATUSES, Source, Status, Verdict, Word, joined, sources
from .store import UNSAVED_DIR_NAME, load_records, record_filename, save_record, write_record

__all__ = [
    "EXISTING", "EnvironmentCell", "environment_cell", "environment_name", "existing_interpreter",
    "newest_per_environment", "origin_difference", "packages_fingerprint",
    "CellKey", "Configured", "Identity", "JsonTextError", "LoadResult", "LoadedRecord", "MIGRATIONS", "Record",
    "RecordError", "RecordJson", "SCHEMA", "STATUSES", "UNSAVED_DIR_NAME", "UnusableFile", "VERDICTS", "backend_name",
    "cell_key", "created_at", "differences", "is_current", "load_records", "machine_id", "migrate", "mismatch",
    "newest_per_cell", "newest_records_here", "parse_record", "read_json", "record_backend", "record_filename",
    "record_identity", "record_jax", "record_machine", "release_key", "run_identity", "same", "same_install",
    "save_record", "split_ad_hoc", "staleness", "summary", "validate", "write_record",
    "RunOutcome", "RecordHead", "new_record", "now", "this_host",
    "EXPLAIN_STATUSES", "Source", "Status", "Verdict", "Word", "decode", "joined", "sources",
]
