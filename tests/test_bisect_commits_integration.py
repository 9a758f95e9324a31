"""``--commits`` for real: the scaling check narrowed to the commit over JAX's own history.

CI cannot reach GitHub, so it uses the bundle of ``jax-v0.5.2..jax-v0.5.3``
in ``shared/jax-history/`` (found through ``$KIT_JAX_HISTORY_BUNDLE``, else
``<repo>/../shared/jax-history/``, else ``/work/shared/jax-history/``): real
commits with filtered trees, so hashes differ from upstream and
``upstream-commits.txt`` maps them. The scaling check runs with small
parameters (two devices only, a batch of 64: seconds per probe, the same
structural verdict). With ``KIT_JAX_REPO`` naming a whole clone of JAX, the
fuller test runs the same search over the real history (a release cut on a
branch) and a behaviour only jaxlib's binary changed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kit.bisect import driver
from kit.config import Matrix, parse_matrix

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
FIX = "f93c2a1aa51d0d124bf0632eacbe95c261dacd57"
FIX_TITLE = "Add and test support for partitioning of batch dimensions in lax.linalg."
SMALL_SCALING = {"devices": [2], "batch": 64, "matrix_size": 8, "in_features": 8, "hidden": [], "repeats": 1,
                 "warmup": 0, "modes": ["jit"], "passes": ["forward"], "timeout_s": 600}
CUMSUM_SCRIPT = REPO / "examples" / "sharded_cumsum_21403.py"  # jax#21403: fixed in jaxlib 0.4.29's XLA only


def bundle() -> Path | None:
    """The bundle file, where ``$KIT_JAX_HISTORY_BUNDLE`` (only there, when set), the checkout's neighbour
    or this machine keeps it."""
    named = os.environ.get("KIT_JAX_HISTORY_BUNDLE")
    for place in [named] if named else [REPO.parent / "shared" / "jax-history", "/work/shared/jax-history"]:
        path = Path(place)
        found = [path] if path.is_file() else sorted(path.glob("*.bundle")) if path.is_dir() else []
        if found:
            return found[0]
    return None


def small_matrix(tmp_path: Path) -> Matrix:
    """matrix.toml with a small scaling check; records and probes in ``tmp_path``, the real environments."""
    raw = tomllib.loads((REPO / "matrix.toml").read_text(encoding="utf-8"))
    raw["checks"]["scaling"] = {k: v for k, v in raw["checks"]["scaling"].items() if k == "presets"} | SMALL_SCALING
    matrix = parse_matrix(raw, REPO / "matrix.toml")
    return dataclasses.replace(matrix, results_dir=tmp_path / "reports" / "results")


def bisect(matrix: Matrix, *argv: str) -> dict[str, Any]:
    assert driver.main(matrix, list(argv), print) == 0
    path = max(matrix.results_dir.parent.glob("bisect-*.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(path.read_text())


def assert_fix_named(data: dict[str, Any], commits_in_range: int) -> dict[str, Any]:
    commits = data["commits"]
    assert (data["last_same"], data["first_different"]) == ("0.5.2", "0.5.3")
    assert commits["verdict"] == "commit", commits
    assert commits["first_different"]["title"] == FIX_TITLE
    assert commits["first_different"]["author"].startswith("Dan Foreman-Mackey")
    assert commits["first_different"]["jaxlib"] == "0.5.1"  # the bad side's build: no new environment
    assert len(commits["probed_now"]) <= math.ceil(math.log2(commits_in_range)) + 3
    assert all(p["jaxlib"] in ("0.5.1", "0.5.3") for p in commits["probes"])
    assert not [p for p in commits["probes"] if p["key"] in commits["probed_now"] and p["environment"] == "built"]
    assert any(line.startswith("## jax 0.5.3") for line in data["release_notes"])  # the clone's CHANGELOG.md
    old_end = commits["range"]["old_end"]
    if "was cut on a release branch" in commits["range"]["shape"]:  # the old end is no release's own commit
        assert commits["levels"][0]["old_end_taken"] == old_end
        assert old_end not in commits["probed_now"]
    return commits


@pytest.mark.integration
def test_scaling_fix_narrowed_to_its_commit_over_the_ci_bundle(tmp_path: Path) -> None:
    found = bundle()
    if found is None and os.environ.get("KIT_JAX_HISTORY_BUNDLE"):
        pytest.fail(f"KIT_JAX_HISTORY_BUNDLE={os.environ['KIT_JAX_HISTORY_BUNDLE']} names no bundle")  # .ci/run sets it
    if found is None:
        pytest.skip("no jax-history bundle: set KIT_JAX_HISTORY_BUNDLE or put shared/jax-history/ beside the repo")
    clone = tmp_path / "jax.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(found), str(clone)], check=True, capture_output=True)
    matrix = small_matrix(tmp_path)
    argv = ["--check", "scaling", "--good", "0.5.3", "--bad", "0.5.2", "--commits", "--jax-repo", str(clone)]
    commits = assert_fix_named(bisect(matrix, *argv), 480)
    upstream = dict(line.split()[:2] for line in (found.parent / "upstream-commits.txt").read_text().splitlines()
                    if len(line.split()) >= 2)
    assert upstream[commits["first_different"]["hash"]] == FIX  # hashes differ in the bundle: map back
    again = bisect(matrix, *argv)
    assert again["probed_now"] == []
    assert again["commits"]["probed_now"] == []  # an identical rerun runs nothing


@pytest.mark.integration
def test_full_clone_names_the_fix_and_a_binary_only_change(tmp_path: Path) -> None:
    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    matrix = small_matrix(tmp_path)
    data = bisect(matrix, "--check", "scaling", "--good", "0.5.3", "--bad", "0.5.2", "--commits", "--jax-repo", clone)
    commits = assert_fix_named(data, 480)
    assert commits["first_different"]["hash"] == FIX
    assert "was cut on a release branch" in commits["range"]["shape"]  # jax-v0.5.2 is a patch release on a branch
    binary = bisect(matrix, "--script", str(CUMSUM_SCRIPT), "--good", "0.4.29", "--bad", "0.4.28", "--commits",
                    "--jax-repo", clone)["commits"]
    # jax-v0.4.29's Python is bad on jaxlib 0.4.28 and good on its own 0.4.29; but the 335 commits before
    # 9e3f290de3 cannot run on 0.4.29, not even forced past JAX's version check (jaxlib.cpu._ducc_fft is gone),
    # so a Python change that needs jaxlib 0.4.29 was never ruled out: the build matters, the span untested.
    assert binary["verdict"] == "build-matters", binary
    assert binary["tie_break"]["untested"]["build"] == "0.4.29"
    assert any(probe["forced"] for probe in binary["tie_break"]["evidence"])
    assert binary["not_in_python"]["xla_compare"].startswith("https://github.com/openxla/xla/compare/")
    assert "jaxlib/BUILD" in binary["not_in_python"]["compiled_files"]


# Real changes over JAX's whole history, one or more per era, each with its ground truth and how it was
# established. Each script exits 0 (good) once the change is in, 1 before; bisected --good NEW --bad OLD.
ERAS: dict[str, tuple[str, ...]] = {
    # 0.4.2x. CHANGELOG 0.4.21: "Added jax.nn.squareplus"; `git log -S "def squareplus" jax-v0.4.20..jax-v0.4.21
    # -- jax/_src/nn/functions.py` gives one commit, "Add nn.squareplus." (pure Python).
    "squareplus": ("0.4.20", "0.4.21", "import sys, jax\nsys.exit(0 if hasattr(jax.nn, 'squareplus') else 1)\n",
                   "9f8e1bc34a"),
    # 0.4.3x. CHANGELOG 0.4.31: "jax.numpy.ceil, floor and trunc now return the output with the same dtype as the
    # input" for ints; `git log --grep ceil -i jax-v0.4.30..jax-v0.4.31` gives 70b4823348 ("Updated
    # jnp.ceil/floor/trunc to preserve int dtypes"), brought in by the merge of PR #21441 (e34ba4aa0d): the search
    # opens the merge and names the commit on its branch.
    "ceil-int": ("0.4.30", "0.4.31", "import sys, jax.numpy as jnp\n"
                 "sys.exit(0 if jnp.issubdtype(jnp.ceil(jnp.arange(3)).dtype, jnp.integer) else 1)\n", "70b4823348"),
    # 0.5.x. CHANGELOG 0.5.1: "Added low-level reduction APIs in jax.lax: jax.lax.reduce_sum, ..."; `git log -S
    # reduce_sum jax-v0.5.0..jax-v0.5.1 -- jax/lax/__init__.py` gives e389b707ba ("Add public APIs for jax.lax
    # monoidal reductions").
    "reduce-sum": ("0.5.0", "0.5.1", "import sys, jax\nsys.exit(0 if hasattr(jax.lax, 'reduce_sum') else 1)\n",
                   "e389b707ba"),
    # 0.6. CHANGELOG 0.6.1: "Added jax.lax.axis_size"; `git log -S axis_size jax-v0.6.0..jax-v0.6.1 --
    # jax/lax/__init__.py` gives c576d328bd, six days before the _jax rename: it runs on jaxlib 0.6.0.
    "axis-size": ("0.6.0", "0.6.1", "import sys, jax\nsys.exit(0 if hasattr(jax.lax, 'axis_size') else 1)\n",
                  "c576d328bd"),
    # 0.6, after the rename. CHANGELOG 0.6.1: "jax.sharding.PartitionSpec no longer inherits from a tuple";
    # `git log --grep PartitionSpec jax-v0.6.0..jax-v0.6.1` gives 17b02ecb1b ("Make PartitionSpec not inherit from
    # a tuple at runtime"), 2025-05-07: no commit after 2025-04-23 imports on jaxlib 0.6.0 (version.py says it
    # would), so this one must be found on jaxlib 0.6.1. Good here is "still a tuple": a regression.
    "partitionspec": ("0.6.1", "0.6.0", (REPO / "examples" / "partitionspec_tuple.py").read_text(), "17b02ecb1b"),
    # Build-dependent. d3850e7fdd ("Support optimization_level ... XLA compilation options", 0.5.0..0.5.1) sets the
    # option on XLA's build options behind `xla_extension_version >= 316` (its diff); jaxlib 0.5.0 is 303 and 0.5.1
    # is 317 (`xla_client._version` in each environment). Run by hand: jax 0.5.1 compiles with it, 0.5.0 says "No such
    # compile option", and so does every commit before d3850e7fdd on jaxlib 0.5.1.
    "optimization-level": ("0.5.0", "0.5.1", (REPO / "examples" / "optimization_level.py").read_text(),
                           "d3850e7fdd", "commit-with-newer-jaxlib"),
    # Binary only, by construction: the script reads the compiled jaxlib's own version number (jaxlib 0.4.35 is
    # 293), which no commit's Python changes. The kit cannot know that: the same Python is bad on 0.4.35 and good
    # on 0.4.36, but the 220 commits before 0bb30f0777 cannot run on 0.4.36, not even forced (the old end dies on
    # a binary call's arguments there), so it says the build matters, with that span untested.
    "binary-version": ("0.4.35", "0.4.36", "import sys\nfrom jaxlib import xla_client\n"
                       "sys.exit(0 if xla_client._version > 293 else 1)\n", "", "build-matters"),
    # Binary only, for real. CHANGELOG 0.8.3: "JAX v0.8.3 is identical to v0.8.2 with the following two bug fixes
    # patched in" (openxla/xla 4bc723da, 21552fd8: third_party/xla/coordination_service_config_fix.patch, the XLA
    # revision unchanged); one halves the distributed client's heartbeat interval. By hand: jax 0.8.3's wheel beats
    # every 2.0 s on jaxlib 0.8.2 and every 1.0 s on jaxlib 0.8.3. Its Python is the old end's but for version.py.
    "heartbeat": ("0.8.2", "0.8.3", (REPO / "examples" / "heartbeat_interval_0_8_3.py").read_text(), "",
                  "not-in-python"),
    # jax/ alone (issue 49). `jax.scipy.fft.dctn` with `s` and no `axes`: wrong shape on 0.9.2, right on 0.10.0;
    # `git log jax-v0.9.2..jax-v0.10.0 -- jax/_src/scipy/fft.py` gives 2d252fb19d ("Fix default axes in dctn and
    # idctn when s is specified but axes is None."). From 9a5876499e on, a commit's jaxlib/mosaic/python/mosaic_gpu.py
    # subclasses a WarpMapOp jaxlib 0.9.2's generated module lacks: only its jax/ runs there. Run here on
    # 2026-12-05: 2d252fb19d exactly, its pair on jaxlib 0.9.2 with jax/ alone, 10 commit probes, 7 minutes.
    "dctn-jax-alone": ("0.9.2", "0.10.0", (REPO / "examples" / "dctn_s_axes.py").read_text(), "2d252fb19d"),
}


@pytest.mark.integration
@pytest.mark.parametrize("case", sorted(ERAS))
def test_full_clone_names_real_changes_of_each_era(tmp_path: Path, case: str) -> None:
    clone = os.environ.get("KIT_JAX_REPO")
    if not clone:
        pytest.skip("KIT_JAX_REPO does not name a clone of https://github.com/jax-ml/jax")
    bad, good, body, expected, *verdict = ERAS[case]
    script = tmp_path / f"{case}.py"
    script.write_text(body)
    data = bisect(small_matrix(tmp_path), "--script", str(script), "--good", good, "--bad", bad, "--commits",
                  "--jax-repo", clone)
    commits = data["commits"]
    assert commits["verdict"] == (verdict[0] if verdict else "commit"), commits["verdict"]
    if expected:
        assert commits["first_different"]["hash"].startswith(expected)
    if commits["verdict"] in ("not-in-python", "build-matters"):
        assert commits["not_in_python"]["extension_versions"]  # each build's binary said its version
    if case == "heartbeat":  # both pairs printed: the same Python on both builds, the old end's Python on each
        shown = [(p["commit"][:10], p["jaxlib"], p["outcome"]) for p in commits["tie_break"]["evidence"]]
        assert ("2184c1ecb7", "0.8.2", "bad") in shown
        assert ("2184c1ecb7", "0.8.3", "good") in shown
        assert ("3f125024ec", "0.8.2", "bad") in shown
        assert commits["not_in_python"]["xla_patches"] == ["third_party/xla/coordination_service_config_fix.patch"]
    if case == "dctn-jax-alone":
        pair = [p for p in commits["probes"] if p["key"] in (commits["levels"][-1]["last_same"],
                                                             commits["levels"][-1]["first_different"])]
        assert [p["laid"] for p in pair] == ["jax/ alone", "jax/ alone"]
    counted = [p for p in commits["probes"] if p["outcome"] in ("good", "bad")]
    assert not [p for p in counted if p["jax_cannot_run"]]  # no import failure of JAX counted either way


# Issue 49's two commit cases, run for real in CI over the kit's own slice of JAX's history
# (tests/data/jax-history/, cut by scripts/make-history-bundle.py from a full clone: jax-v0.9.2..jax-v0.10.0 and
# jax-v0.10.1..jax-v0.10.2, filtered trees, so hashes differ and the .upstream-commits.txt maps them), each
# search narrowed with --good-commit/--bad-commit to a few commits around its answer so that it costs about a
# minute, two release environments included. The whole-range runs are the KIT_JAX_REPO cases above.
KIT_HISTORY = REPO / "tests" / "data" / "jax-history" / "issue-49.bundle"


def kit_history(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A bare clone of the kit's bundle, and the maps upstream -> here and here -> upstream."""
    clone = tmp_path / "jax.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(KIT_HISTORY), str(clone)], check=True,
                   capture_output=True)
    pairs = [line.split() for line in KIT_HISTORY.with_suffix(".upstream-commits.txt").read_text().splitlines()]
    return clone, {up: here for here, up in pairs}, {here: up for here, up in pairs}


def here(upstream: dict[str, str], short: str) -> str:
    [found] = [h for u, h in upstream.items() if u.startswith(short)]
    return found


@pytest.mark.integration
def test_pure_python_fix_found_with_jax_alone_over_the_kit_history(tmp_path: Path) -> None:
    # dctn with `s` and no `axes` (wrong on 0.9.2, right on 0.10.0), fixed in jax/_src/scipy/fft.py by
    # 2d252fb19d. Its jaxlib Python cannot import on jaxlib 0.9.2 (Mosaic GPU's WarpMapOp), so only `jax/` alone
    # runs there: the kit once blamed the binary. The window: 85591b8ef1 (4 first-parent commits before) to
    # 17f8cdcf32 (3 after).
    clone, to_here, to_upstream = kit_history(tmp_path)
    data = bisect(small_matrix(tmp_path), "--script", str(REPO / "examples" / "dctn_s_axes.py"), "--good", "0.10.0",
                  "--bad", "0.9.2", "--commits", "--jax-repo", str(clone),
                  "--good-commit", here(to_here, "17f8cdcf32"), "--bad-commit", here(to_here, "85591b8ef1"))
    commits = data["commits"]
    assert commits["verdict"] == "commit", commits["verdict"]
    assert to_upstream[commits["first_different"]["hash"]].startswith("2d252fb19d")
    pair = [p for p in commits["probes"] if p["key"] in (commits["levels"][-1]["last_same"],
                                                         commits["levels"][-1]["first_different"])]
    assert [(p["outcome"], p["laid"], p["jaxlib"]) for p in pair] == [("bad", "jax/ alone", "0.9.2"),
                                                                     ("good", "jax/ alone", "0.9.2")]


@pytest.mark.integration
def test_binary_only_change_said_not_in_python_over_the_kit_history(tmp_path: Path) -> None:
    # jax#39103's matvec-sum miscompile: jaxlib 0.10.2's binary, not JAX's Python. From 9e4cdbd789 on, a commit
    # needs jaxlib 0.10.2 (extension version 457); the window 3c67451c7f .. a53ab3e259 crosses that. The answer
    # must rest on one Python run on both builds, good on 0.10.1 and bad on 0.10.2.
    clone, to_here, to_upstream = kit_history(tmp_path)
    data = bisect(small_matrix(tmp_path), "--script", str(REPO / "examples" / "matvec_sum_39103.py"),
                  "--good", "0.10.1", "--bad", "0.10.2", "--commits", "--jax-repo", str(clone),
                  "--good-commit", here(to_here, "3c67451c7f"), "--bad-commit", here(to_here, "a53ab3e259"))
    commits = data["commits"]
    assert commits["verdict"] == "not-in-python", commits["verdict"]
    assert "first_different" not in commits or not commits.get("first_different")
    shown = {(p["commit"], p["jaxlib"], p["outcome"]) for p in commits["tie_break"]["evidence"]}
    same_python = {c for c, build, outcome in shown if (c, "0.10.1", "good") in shown and (c, "0.10.2", "bad") in shown}
    assert same_python, shown  # one commit's Python, good on jaxlib 0.10.1 and bad on 0.10.2: the build decided
    assert all(to_upstream.get(c) for c in same_python)
