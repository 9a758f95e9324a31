"""The jax-kit command's project (kit/project.py), its user cache (kit/user_cache.py) and the package's own
files (kit/package_files.py): from the user's folder, with the package's defaults, sharing one cache.

scripts/check-installed.sh does the same with a real wheel and real releases; these need neither.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kit import __version__, cli
from kit.config import load_matrix
from kit.errors import UsageError
from kit.layout import Layout
from kit.config import bisect_command, catalogue_folders, index_pages, run_command
from kit.package_files import PACKAGE_ROOT, catalogue_folder, default_file, in_checkout, lay_repro
from kit.project import REPORTS_FOLDER, USAGE, ProjectOptions, merged_tables, project_matrix, project_options
from kit.toml_tables import read_toml
from kit.user_cache import cache_dir, tagged
from kit.user_paths import relative_to_what

ROOT = Path(__file__).resolve().parent.parent


def _options(config: str | None = None, out: str | None = None) -> ProjectOptions:
    return ProjectOptions(Path(config) if config else None, Path(out) if out else None, ())


# --- the command line -----------------------------------------------------------------------------

def test_config_and_out_are_taken_wherever_they_stand() -> None:
    options = project_options(["--out", "here", "bisect", "--script", "./x.py", "--config=m.toml", "--good", "0.6.0"])
    assert options == ProjectOptions(Path("m.toml"), Path("here"), ("bisect", "--script", "./x.py", "--good", "0.6.0"))


@pytest.mark.parametrize("argv", [["scaling", "0.6.0", "--out"], ["--config", "--out", "x"], ["--out="]])
def test_a_flag_without_its_value_is_one_usage_error(argv: list[str]) -> None:
    with pytest.raises(UsageError, match=r"--(out|config) needs a (folder|file)"):
        project_options(argv)


def test_slurm_is_refused_in_words_rather_than_failing_on_a_node() -> None:
    with pytest.raises(UsageError, match="jax-kit does not submit to SLURM yet"):
        project_options(["matrix", "--slurm"])


def test_version_and_help_need_no_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAX_KIT_CACHE", str(tmp_path / "cache"))
    assert cli.main(["--version"], project=True) == 0
    assert capsys.readouterr().out == f"jax-kit {__version__}\n"
    assert cli.main([], project=True) == 0
    assert capsys.readouterr().out == USAGE + "\n"
    assert list(tmp_path.iterdir()) == []  # neither made the cache nor a reports folder


def test_the_usage_names_every_session_of_the_repository() -> None:
    for command in ("scaling VERSION", "correctness VERSION", "run CHECK --python PATH", "bisect", "triage",
                    "explain", "reduce", "matrix", "report", "plan VERSION", "--out DIR", "--config FILE", "--version"):
        assert command in USAGE


def test_usage_lines_and_tips_name_jax_kit_s_commands_while_it_runs() -> None:
    from kit.wording import AS_JAX_KIT, as_spoken

    text = ("nox -s bisect -- --check scaling; `nox -s scaling-VERSION -- --help`; see `nox -l`; nox -s tests; "
            "(e.g. nox -s qr-0.4.13), nox -s report.\nusage: nox -s reduce -- PROGRAM")
    assert as_spoken(text) == text
    token = AS_JAX_KIT.set(True)
    try:
        assert as_spoken(text) == ("jax-kit bisect --check scaling; `jax-kit scaling VERSION --help`; "
                                   "see `jax-kit --help`; nox -s tests; (e.g. jax-kit qr 0.4.13), jax-kit report."
                                   "\nusage: jax-kit reduce PROGRAM")
    finally:
        AS_JAX_KIT.reset(token)


def test_a_relative_config_that_is_not_there_says_what_it_was_read_from(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=re.escape(f"--config 'm.toml' does not exist (relative to the current "
                                                   f"folder, {tmp_path})")):
        project_matrix(_options(config="m.toml"), tmp_path, {"JAX_KIT_CACHE": str(tmp_path / "cache")})


def test_a_relative_script_that_is_not_there_says_what_it_was_read_from(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert relative_to_what(Path("/abs/x.py")) == ""
    assert relative_to_what("checks/x.py") == f" (a relative path, read from the current folder {tmp_path})"
    (tmp_path / "noxfile.py").write_text("")
    assert "nox runs from the noxfile's folder" in relative_to_what("checks/x.py")


def test_a_bisect_of_a_missing_relative_script_says_from_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAX_KIT_CACHE", str(tmp_path / "cache"))
    code = cli.main(["bisect", "--script", "checks/x.py", "--good", "0.6.0", "--bad", "0.4.35"], project=True)
    assert code == 2
    assert f"checks/x.py does not exist (a relative path, read from the current folder {tmp_path})" \
        in capsys.readouterr().err


# --- the project's matrix -------------------------------------------------------------------------

def test_a_folder_without_matrix_toml_gets_the_package_defaults(tmp_path: Path) -> None:
    matrix = project_matrix(_options(), tmp_path, {"JAX_KIT_CACHE": str(tmp_path / "cache")})
    package = load_matrix(default_file("matrix.toml"))
    assert matrix.releases == package.releases
    assert matrix.checks == package.checks
    cache = tmp_path / "cache"
    assert matrix.layout == Layout.of(tmp_path / REPORTS_FOLDER / "results", cache / "jax-envs", cache)
    assert matrix.layout.probe_cache == cache / "bisect" / "probes"  # shared by every project
    assert matrix.layout.runnable == cache / "bisect" / "runnable"
    assert matrix.layout.script_records == tmp_path / REPORTS_FOLDER / "bisect" / "script-records"
    assert matrix.layout.jax_history == cache / "jax-history" / "jax.git"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert catalogue_folders(matrix) == [catalogue_folder()]  # the kit's own: no known/ in the folder
    assert bisect_command(matrix) == "jax-kit bisect"
    assert (run_command(matrix, "scaling", "0.6.0") == \
        "jax-kit scaling 0.6.0")


def test_the_index_s_pages_go_to_the_user_cache_unless_kit_cache_dir_says_otherwise(tmp_path: Path) -> None:
    matrix = project_matrix(_options(), tmp_path, {"JAX_KIT_CACHE": str(tmp_path / "cache")})
    assert index_pages(matrix, {}) == tmp_path / "cache" / "index-pages"
    assert index_pages(matrix, {"KIT_CACHE_DIR": "/elsewhere"}) is None  # PackageIndex reads it
    assert index_pages(load_matrix(ROOT / "matrix.toml"), {}) is None  # the repository's ./.cache/kit


def test_out_is_read_from_the_current_folder(tmp_path: Path) -> None:
    matrix = project_matrix(_options(out="../elsewhere"), tmp_path / "p", {"JAX_KIT_CACHE": str(tmp_path / "c")})
    assert matrix.layout.reports == tmp_path / "p" / ".." / "elsewhere"
    assert matrix.results_dir == tmp_path / "p" / ".." / "elsewhere" / "results"


def test_a_matrix_toml_in_the_folder_adds_releases_and_checks(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "qr.py").write_text("raise SystemExit(0)\n")
    (tmp_path / "matrix.toml").write_text(
        '[[release]]\nversion = "0.4.20"\nnote = "ours"\n\n[[release]]\nversion = "0.6.0"\nnote = "mine"\n\n'
        '[checks.qr]\nscript = "checks/qr.py"\n\n[checks.scaling]\ndevices = [1, 2]\n\n'
        '[checks.scaling.presets.mine]\nbatch = 64\n\n[install]\nera_slack_days = 3\n')
    matrix = project_matrix(_options(), tmp_path, {"JAX_KIT_CACHE": str(tmp_path / "cache")})
    package = load_matrix(default_file("matrix.toml"))
    versions = [release.version for release in matrix.releases]
    assert set(versions) == {release.version for release in package.releases} | {"0.4.20"}
    assert matrix.release("0.6.0").note == "mine"
    assert matrix.checks["qr"].script == tmp_path / "checks" / "qr.py"  # relative to the project's matrix.toml
    scaling = matrix.checks["scaling"]
    assert scaling.parameters["devices"] == [1, 2]
    assert scaling.parameters["batch"] == package.checks["scaling"].parameters["batch"]
    assert set(scaling.presets) == set(package.checks["scaling"].presets) | {"mine"}
    assert matrix.install.era_slack_days == 3
    assert matrix.install.index_url == package.install.index_url
    assert matrix.results_dir == tmp_path / REPORTS_FOLDER / "results"  # its own [kit] would decide


def test_the_project_s_own_folders_win_over_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "matrix.toml").write_text('[kit]\nresults_dir = "records"\nenvs_dir = "envs"\n')
    matrix = project_matrix(_options(), tmp_path, {"JAX_KIT_CACHE": str(tmp_path / "cache")})
    assert (matrix.results_dir, matrix.envs_dir) == (tmp_path / "records", tmp_path / "envs")
    assert not (tmp_path / "cache").exists()  # asked for nothing there yet


def test_the_package_s_kit_folders_never_reach_a_project() -> None:
    merged = merged_tables({"kit": {"results_dir": "reports/results"}, "release": [{"version": "0.6.0"}]},
                           {"release": [{"version": "0.6.0", "note": "n"}, {"version": "0.7.0"}]})
    assert merged["kit"] == {}
    assert merged["release"] == [{"version": "0.6.0", "note": "n"}, {"version": "0.7.0"}]


def test_the_repository_s_own_matrix_is_untouched() -> None:
    matrix = load_matrix(ROOT / "matrix.toml")
    assert matrix.shared_dir is None
    assert matrix.envs_dir == ROOT / ".nox" / "jax-envs"
    assert matrix.layout.probe_cache == ROOT / "reports" / "bisect" / "probes"
    assert bisect_command(matrix) == "nox -s bisect --"
    assert catalogue_folders(matrix) == [ROOT / "known"]  # the checkout's own, read once


# --- the user cache -------------------------------------------------------------------------------

def test_the_cache_is_the_variable_s_else_the_platform_s(tmp_path: Path) -> None:
    home = Path.home()
    assert cache_dir({"JAX_KIT_CACHE": "~/kc"}, "linux") == home / "kc"
    assert cache_dir({"XDG_CACHE_HOME": "/x/cache"}, "linux") == Path("/x/cache/jax-kit")
    assert cache_dir({"XDG_CACHE_HOME": "relative"}, "linux") == home / ".cache" / "jax-kit"  # invalid: ignored
    assert cache_dir({}, "linux") == home / ".cache" / "jax-kit"
    assert cache_dir({}, "darwin") == home / "Library" / "Caches" / "jax-kit"
    assert cache_dir({"LOCALAPPDATA": "C:/Users/me/AppData/Local"}, "win32") == \
        Path("C:/Users/me/AppData/Local") / "jax-kit" / "Cache"
    assert tagged(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b" / "CACHEDIR.TAG").is_file()


# --- the package's own files ----------------------------------------------------------------------

def test_the_checkout_is_found_and_its_files_are_the_defaults(tmp_path: Path) -> None:
    assert in_checkout()
    assert PACKAGE_ROOT == ROOT
    assert default_file("matrix.toml") == ROOT / "matrix.toml"
    (tmp_path / "kit").mkdir()
    assert not in_checkout(tmp_path)  # a site-packages: kit/ without the noxfile and matrix.toml beside it


def test_repro_is_laid_alone_named_by_its_content_and_importable_from_there(tmp_path: Path) -> None:
    source = tmp_path / "site-packages" / "repro"
    (source / "__pycache__").mkdir(parents=True)
    (source / "__init__.py").write_text("WHERE = __file__\n")
    (source / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"stale")
    (tmp_path / "site-packages" / "numpy").mkdir()  # what a JAX child must not see
    laid = lay_repro(source, tmp_path / "cache" / "repro")
    assert sorted(str(p.relative_to(laid)) for p in laid.rglob("*")) == ["repro", "repro/__init__.py"]
    assert lay_repro(source, tmp_path / "cache" / "repro") == laid  # the same content: the same copy
    (source / "__init__.py").write_text("WHERE = 'changed'\n")
    assert lay_repro(source, tmp_path / "cache" / "repro") != laid
    assert sorted(p.name for p in (tmp_path / "cache" / "repro").iterdir()) == sorted(
        [laid.name, lay_repro(source, tmp_path / "cache" / "repro").name])  # no staging folder left behind
    found = subprocess.run([sys.executable, "-c", "import repro; print(repro.WHERE)"], cwd=laid, text=True,
                           capture_output=True, env={"PYTHONPATH": str(laid)}, check=True).stdout.strip()
    assert Path(found) == laid / "repro" / "__init__.py"


# --- the package itself ---------------------------------------------------------------------------

def test_the_package_depends_on_what_requirements_txt_names() -> None:
    project = read_toml(ROOT / "pyproject.toml")["project"]
    wanted = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    assert [d.replace("'", '"').replace(" ", "") for d in project["dependencies"]] == \
        [w.replace(" ", "") for w in wanted if w]
    assert project["scripts"] == {"jax-kit": "kit.cli:entry"}


# --- two projects, one machine --------------------------------------------------------------------

def test_two_projects_share_one_build_of_a_release(fake_releases, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    releases = fake_releases(["0.6.0"], built=[])  # built by the kit when first asked for
    monkeypatch.setenv("JAX_KIT_CACHE", str(tmp_path / "user-cache"))
    own = (f'[install]\nindex_url = "{releases.index.url}"\njaxlib_archive = ""\npythons = ["3.11"]\n\n'
           '[checks.scaling]\ndevices = [1, 2]\n')
    records = []
    for name in ("project-a", "project-b"):
        project = tmp_path / name
        project.mkdir()
        (project / "matrix.toml").write_text(own)
        monkeypatch.chdir(project)
        assert cli.main(["scaling", "0.6.0"], project=True) == 0
        found = list((project / REPORTS_FOLDER / "results").glob("scaling-0.6.0-*.json"))
        assert len(found) == 1, f"{name}: {found}"
        records.append(json.loads(found[0].read_text()))
    built = sorted(p.name for p in (tmp_path / "user-cache" / "jax-envs").glob("jax-0.6.0-*") if p.is_dir())
    assert len(built) == 1
    assert [record["install"]["environment"] for record in records] == ["built", "reused"]
    assert records[1]["reproduce"] == "jax-kit scaling 0.6.0"
    assert "reusing environment" in capsys.readouterr().err
    # The matrix from the project: its record is current (not run again), the report lands beside it.
    assert cli.main(["matrix", "--only", "0.6.0", "--checks", "scaling"], project=True) == 0
    assert releases.runs == [("0.6.0", "scaling")] * 2
    report = (tmp_path / "project-b" / REPORTS_FOLDER / "matrix.md").read_text()
    assert "`jax-kit scaling 0.6.0`" in report


def test_reduce_keeps_its_own_out_and_the_reports_folder_stays_global_before_it() -> None:
    # A held-out fault trial: `jax-kit reduce prog.py --bad R1 --good R2 --out min` (as docs/reduce.md says) was
    # refused with "reduce needs --out": the global --out (the reports' folder) had taken it.
    options = project_options(["reduce", "prog.py", "--bad", "0.4.35", "--good", "0.5.3", "--out", "min"])
    assert options.out is None and options.argv == ("reduce", "prog.py", "--bad", "0.4.35", "--good", "0.5.3",
                                                     "--out", "min")
    options = project_options(["--out", "reports", "reduce", "prog.py", "--out=min"])
    assert options.out == Path("reports") and options.argv == ("reduce", "prog.py", "--out=min")
