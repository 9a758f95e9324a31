"""Write reports/matrix.md and reports/matrix.json (and the plots) from records alone.

No installs and no JAX: the report reads ``reports/results/`` and answers the
question users ask ("which release can I use?") before showing the evidence.
`kit.matrix.model` builds what the records say, `kit.matrix.markdown` renders
it; this module writes both files so that they always describe the same
records: both are written to temp files first and only then put in place.

Run through the command line: ``python -m kit report [--results DIR] [--out DIR] [--no-plots]``
(``nox -s report`` does that).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Sequence

from repro.contract import strict_json

from ..atomic_files import atomic_write_texts
from ..errors import StorageError
from ..known.catalogue import load_catalogues
from ..package_files import catalogue_folder
from ..known.listing import entry_json
from .known_problems import cited
from .markdown import render_markdown
from .metric_series import plot_metrics
from .model import PlotRef, Report, build_report
from ..records import Configured, LoadedRecord, UnusableFile, load_records, split_ad_hoc


@dataclass
class WriteResult:
    markdown: Path
    json: Path
    plots: list[Path]
    unusable: list[UnusableFile]
    report: Report


def write_report(
    results_dir: Path,
    out_dir: Path,
    matrix_releases: Sequence[str] | None = None,
    plots: bool = True,
    configured: Configured | None = None,
    environments: Sequence[str] = (),
    sessions: Collection[str] | None = None,
    checks: Collection[str] | None = None,
    catalogue: Path | Sequence[Path] | None = None,
) -> WriteResult:
    """Load records, build the report and plots, write matrix.md and matrix.json.

    ``configured`` (per check, matrix.toml's parameters) keeps ad-hoc runs out
    of the answer, the rows and the plots; they are listed on their own.
    ``environments`` (matrix.toml's ``[[environment]]`` names) get rows of their
    own; the plots, like the answer, are of the releases alone.
    ``sessions``: the nox sessions that exist, so every Reproduce cell runs as written.
    ``checks``: matrix.toml's check names; records of a check no longer there are listed, not counted.
    ``catalogue``: the catalogue folders of known problems (default: the kit's own), the one source of both the
    answer's known problems (entries with a ``matrix_check``) and the catalogue's section with its measured ranges.
    """
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    folders = [catalogue] if isinstance(catalogue, Path) else list(catalogue or [catalogue_folder()])
    entries = load_catalogues(folders)
    loaded = load_records(results_dir)
    report = build_report(loaded.entries, matrix_releases=matrix_releases, unusable=loaded.unusable,
                          configured=configured, sessions=sessions,
                          known_problems=cited(entries), environments=environments, checks=checks)
    # Each entry and its ranges; the measurements behind them stay in known/measured/ (`known --json` lists them).
    report.catalogue = [{k: v for k, v in entry_json(entry, entry.check.parent).items() if k != "measurements"}
                        for entry in entries]
    in_matrix, _ad_hoc = split_ad_hoc(loaded.entries, configured, checks=checks)  # no environments: not releases
    for unusable in report.unusable_files:
        try:
            unusable["file"] = str(Path(unusable["file"]).relative_to(results_dir))
        except ValueError:
            pass
    try:
        written = _write_files(report, in_matrix, out_dir, plots)
    except OSError as error:
        raise StorageError(
            f"could not write the report into {out_dir} ({error.strerror or error}); "
            "matrix.md and matrix.json were left as they were",
            "free some space (or fix the folder's permissions), then run nox -s report again",
        ) from None
    markdown, data = out_dir / "matrix.md", out_dir / "matrix.json"
    return WriteResult(markdown, data, written, loaded.unusable, report)


def _write_files(report: Report, in_matrix: list[LoadedRecord], out_dir: Path, plots: bool) -> list[Path]:
    """The plots, then matrix.md and matrix.json together; the images written."""
    written: list[Path] = []
    if plots:
        from .plots import make_plots

        outcome = make_plots(in_matrix, out_dir / "plots")
        written = [image.path for image in outcome.images]
        report.plots = [
            PlotRef(image.title, image.path.relative_to(out_dir).as_posix()) for image in outcome.images
        ]
        report.plot_notes = list(outcome.notes)
        written += plot_metrics(report.metrics, out_dir / "plots", out_dir)  # linked from the Metrics section
    else:
        report.plot_notes = ["Plots skipped (--no-plots)."]
    atomic_write_texts({
        out_dir / "matrix.md": render_markdown(report),
        out_dir / "matrix.json": strict_json(report.to_json(), default=str),
    })
    return written
