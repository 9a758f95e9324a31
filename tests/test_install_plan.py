"""Install plans: era cut-off, GPU extras by era, pins, and the not-installable reason."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kit.config import parse_matrix
from kit.errors import UsageError
from kit.install import plan as install
from kit.errors import IndexUnreachable
from kit.install.plan import JAX_CUDA_ARCHIVE_PAGE, InstallPlan, Resolution, parse_hashes, parse_versions, plan_install
from kit.install.plan import unresolvable_reason
from kit.install.uv_errors import raise_if_network_trouble, uv_error
from kit.install.key import InstallKey
from tests.metadata_index import TableIndex


def plan_index(extras: dict[str, set[str]] | None = None) -> TableIndex:
    """The two questions a plan asks of the index: jax 0.4.35's upload date and its extras."""
    return TableIndex(dates={"0.4.35": datetime(2024, 10, 22, 20, 56, tzinfo=timezone.utc)}, extras=extras)


MATRIX = parse_matrix({"release": [{"version": "0.4.35"}], "checks": {"scaling": {}}})


def test_cpu_plan_pins_the_release_and_cuts_the_rest_off_at_its_era() -> None:
    plan = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu"), plan_index())  # type: ignore[arg-type]
    assert plan.requirements == ("jax[cpu]==0.4.35", "scipy")
    assert plan.exclude_newer == "2024-11-05T20:56:00Z"  # upload date + 14 days of slack
    args = plan.uv_args()
    assert args[args.index("--exclude-newer") + 1] == "2024-11-05T20:56:00Z"
    # jax and jaxlib are pinned by the release itself, so they are exempt from the cut-off.
    assert "jaxlib=2100-01-01T00:00:00Z" in args


def test_a_pinned_package_is_required_at_its_version_whatever_the_era() -> None:
    plain = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu"), plan_index())  # type: ignore[arg-type]
    plan = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu", pins=("numpy==2.2.2",)), plan_index())  # type: ignore[arg-type]
    assert plan.requirements == ("jax[cpu]==0.4.35", "scipy", "numpy==2.2.2")
    assert plan.pins == ("numpy==2.2.2",)
    assert "numpy=2100-01-01T00:00:00Z" in plan.uv_args()  # numpy 2.2.2 came after jax 0.4.35's era
    # Another pin set is another plan (another environment folder); no pins is the plan as it always was.
    assert plan.fingerprint("3.12") != plain.fingerprint("3.12")
    assert "pins" not in plain.to_json()
    assert plan.to_json()["pins"] == ("numpy==2.2.2",)


def test_a_release_missing_from_the_index_is_planned_without_a_cutoff() -> None:
    plan = plan_install(MATRIX, MATRIX.release("9.9.9"), InstallKey("cpu"), plan_index())  # type: ignore[arg-type]
    assert plan.exclude_newer is None
    assert "--exclude-newer" not in plan.uv_args()
    assert any("not on" in note for note in plan.notes)


@pytest.mark.parametrize(
    ("extras", "requirement", "needs_archive_page"),
    [
        ({"cpu", "cuda", "cuda12", "cuda13"}, "jax[cuda13]==0.4.35", False),
        ({"cpu", "cuda", "cuda12", "cuda12_pip"}, "jax[cuda12]==0.4.35", False),
        ({"cpu", "cuda", "cuda11_pip", "cuda12_pip"}, "jax[cuda12_pip]==0.4.35", True),
    ],
)
def test_cuda_plan_uses_the_extra_the_release_declares(extras, requirement, needs_archive_page) -> None:
    index = plan_index({"0.4.35": extras})
    plan = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cuda"), index)  # type: ignore[arg-type]
    assert plan.requirements[0] == requirement
    assert (JAX_CUDA_ARCHIVE_PAGE in plan.find_links) is needs_archive_page


def test_cuda_plan_for_a_release_without_gpu_extras_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="declares no CUDA extra"):
        plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cuda"), plan_index({"0.4.35": {"cpu", "tpu"}}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("extras", "requirements"),
    [
        ({"cpu", "cuda12", "cuda12-local"},
         ("jax[cuda12-local]==0.4.35", "scipy", "flatbuffers", "absl-py", "nvidia-cuda-nvcc-cu12")),
        ({"cpu", "cuda13", "cuda13-local"},
         ("jax[cuda13-local]==0.4.35", "scipy", "flatbuffers", "absl-py", "nvidia-cuda-nvcc", "nvidia-nvvm")),
    ],
)
def test_a_compile_only_gpu_plan_brings_the_plugin_and_ptxas_without_the_rest_of_cuda(extras, requirements) -> None:
    index = plan_index({"0.4.35": extras})
    plan = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cuda-compile"), index)  # type: ignore[arg-type]
    assert plan.requirements == requirements


def test_parse_versions_reads_uv_compile_output() -> None:
    text = "jax==0.4.35\njaxlib==0.4.35\nml-dtypes==0.5.0\nnumpy==2.1.3 ; python_version >= '3.10'\n# comment\n"
    assert parse_versions(text) == {"jax": "0.4.35", "jaxlib": "0.4.35", "ml-dtypes": "0.5.0", "numpy": "2.1.3"}


def test_parse_hashes_reads_uv_compile_output() -> None:
    text = ("jax==0.6.0 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
            "numpy==2.2.5 ; python_version >= '3.10' \\\n    --hash=sha256:cc\n")
    assert parse_hashes(text) == {"jax": ("sha256:aa", "sha256:bb"), "numpy": ("sha256:cc",)}
    assert parse_versions(text) == {"jax": "0.6.0", "numpy": "2.2.5"}


UV_NO_INDEX = ("error: Request failed after 3 retries\n  cause: Failed to fetch: `https://pypi.org/simple/jax/`\n"
               "  cause: error sending request for url (https://pypi.org/simple/jax/)\n"
               "  cause: tcp connect error\n  cause: Connection refused (os error 111)\n")
UV_NO_PAGE = ("error: Failed to read `--find-links` URL: https://example.invalid/jax_cuda_releases.html\n"
              "  cause: Request failed after 3 retries\n  cause: dns error\n"
              "  cause: failed to lookup address information: Name or service not known\n")


def test_uv_failing_to_reach_the_index_is_the_network_not_the_release() -> None:
    with pytest.raises(IndexUnreachable, match=r"over the network \(Connection refused \(os error 111\)\)"):
        raise_if_network_trouble(UV_NO_INDEX)
    raise_if_network_trouble("Because there is no version of jaxlib==0.4.16 ...")  # an answer: no error


def test_uv_failing_to_reach_a_find_links_page_is_the_network_too_and_names_the_page() -> None:
    # The pages are probed before uv runs; this is a page that went away in between.
    with pytest.raises(IndexUnreachable, match=r"uv could not reach the find-links page "
                                               r"https://example.invalid/jax_cuda_releases.html over the network "
                                               r"\(failed to lookup address information"):
        raise_if_network_trouble(UV_NO_PAGE)


def test_a_find_links_page_that_answered_with_an_error_is_named_in_the_reason() -> None:
    plan = InstallPlan(jax="0.4.18", backend="cuda", requirements=("jax[cuda12_pip]==0.4.18",), exclude_newer=None,
                       index_url="https://pypi.org/simple", pythons=("3.11",))
    uv_said = ("error: Failed to read `--find-links` URL: https://example.org/wheels.html\n"
               "  cause: HTTP status client error (404 Not Found) for url (https://example.org/wheels.html)\n")
    raise_if_network_trouble(uv_said)  # the page answered: not the network's
    assert unresolvable_reason(plan, [Resolution("3.11", False, error=uv_error(uv_said))]) == (
        "the find-links page https://example.org/wheels.html could not be read (HTTP status client error "
        "(404 Not Found) for url (https://example.org/wheels.html); tried Python 3.11)")


def test_not_installable_reason_names_the_missing_wheel_and_where_it_looked() -> None:
    plan = InstallPlan(jax="0.4.16", backend="cpu", requirements=("jax[cpu]==0.4.16",), exclude_newer=None,
                       index_url="https://pypi.org/simple", pythons=("3.12", "3.11"))
    error = "Because there is no version of jaxlib==0.4.16 and jax[cpu]==0.4.16 depends on jaxlib==0.4.16, ..."
    attempts = [Resolution("3.12", False, error=error), Resolution("3.11", False, error=error)]
    reason = unresolvable_reason(plan, attempts)
    assert reason == "https://pypi.org/simple has no jaxlib 0.4.16 wheels (tried Python 3.12, 3.11)"
    assert unresolvable_reason(plan, []) == "none of Python 3.12, 3.11 is installed here"


def test_a_plan_is_resolved_once_per_python_in_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import kit.install.plan as install

    calls: list[str] = []

    def fake_uv(plan: InstallPlan, python: str, uv: str, platform: str | None, offline: bool) -> Resolution:
        calls.append(python)
        return Resolution(python, ok=python == "3.11")

    monkeypatch.setattr(install, "_resolve", fake_uv)
    monkeypatch.setattr(install, "_RESOLVED", install.Once())
    plan = InstallPlan(jax="0.4.13", backend="cpu", requirements=("jax[cpu]==0.4.13",), exclude_newer=None,
                       index_url="https://pypi.org/simple", pythons=("3.13", "3.12", "3.11", "3.10"))
    first, attempts = install.choose_python(plan, ["3.13", "3.11", "3.10"], offline=False)
    again, _ = install.choose_python(plan, ["3.13", "3.11", "3.10"], offline=False)
    assert first == again
    assert first is not None
    assert first.python == "3.11"
    assert [a.python for a in attempts] == ["3.13", "3.11"]  # in preference order, stopping at the first
    assert calls == ["3.13", "3.11"]  # the second choice asked uv nothing


def test_a_python_known_to_fit_is_tried_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import kit.install.plan as install

    calls: list[str] = []

    def fake_uv(plan: InstallPlan, python: str, uv: str, platform: str | None, offline: bool) -> Resolution:
        calls.append(python)
        return Resolution(python, ok=python in ("3.12", "3.11"))

    monkeypatch.setattr(install, "_resolve", fake_uv)
    monkeypatch.setattr(install, "_RESOLVED", install.Once())
    plan = InstallPlan(jax="0.4.20", backend="cpu", requirements=("jax[cpu]==0.4.20",), exclude_newer=None,
                       index_url="https://pypi.org/simple", pythons=("3.13", "3.12", "3.11"))
    chosen, attempts = install.choose_python(plan, ["3.13", "3.12", "3.11"], first="3.12")
    assert chosen is not None
    assert chosen.python == "3.12"
    assert calls == ["3.12"]  # no resolve that must fail
    unknown, _ = install.choose_python(plan, ["3.13", "3.12", "3.11"], first="2.7")  # not in the plan: ignored
    assert unknown is not None
    assert unknown.python == "3.12"
    assert calls == ["3.12", "3.13"]


# --------------------------------------------------------------------------
# A check's extra packages (requires)


def test_extra_packages_are_resolved_with_the_release_under_its_era_cut_off() -> None:
    plan = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu", requires=("flax", "optax>=0.2")), plan_index())  # type: ignore[arg-type]
    assert plan.requirements == ("jax[cpu]==0.4.35", "scipy", "flax", "optax>=0.2")
    assert plan.requires == ("flax", "optax>=0.2")
    args = plan.uv_args()
    # Not exempt from the cut-off, as jax and jaxlib are: jax 0.4.35 gets a flax of its time.
    assert args[args.index("--exclude-newer") + 1] == "2024-11-05T20:56:00Z"
    assert "flax=2100-01-01T00:00:00Z" not in args
    # Wheels only, so a Python the era's wheels fit is chosen instead of building an sdist.
    assert args[args.index("--only-binary") + 1] == ":all:"
    assert "--only-binary" not in plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu"),  # type: ignore[arg-type]
                                               plan_index()).uv_args()


def test_a_plan_without_extras_keeps_its_fingerprint_and_one_with_them_gets_its_own() -> None:
    plain = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu"), plan_index())  # type: ignore[arg-type]
    assert "requires" not in plain.to_json()  # environments built before requires existed are still found
    with_flax = plan_install(MATRIX, MATRIX.release("0.4.35"), InstallKey("cpu", requires=("flax",)), plan_index())  # type: ignore[arg-type]
    assert with_flax.fingerprint("3.12") != plain.fingerprint("3.12")


# uv's words, as `uv pip compile` said them for jax 0.4.30 with flax>=0.10 as of its era.
UV_NO_FLAX_OF_ITS_ERA = (
    "error: No solution found when resolving dependencies cause: Because only flax<=0.8.5 is available and you "
    "require flax>=0.10, we can conclude that your requirements are unsatisfiable. hint: `flax` was filtered by "
    "`exclude-newer` to only include packages uploaded before 2024-07-02T00:00:00Z.")


def test_an_extra_package_no_release_of_its_era_satisfies_is_named_in_the_reason() -> None:
    # The check's "flax" and the command line's "flax>=0.10": the one uv quotes is named.
    plan = InstallPlan(jax="0.4.30", backend="cpu", requirements=("jax[cpu]==0.4.30", "scipy", "flax", "flax>=0.10"),
                       exclude_newer="2024-07-02T00:00:00Z", index_url="https://pypi.org/simple",
                       pythons=("3.12",), requires=("flax", "flax>=0.10"))
    reason = unresolvable_reason(plan, [Resolution("3.12", False, error=UV_NO_FLAX_OF_ITS_ERA)])
    assert reason == ("the check requires flax>=0.10, and no release of flax uploaded before 2024-07-02, "
                      "jax 0.4.30's era, installs with jax 0.4.30 (tried Python 3.12): Because only flax<=0.8.5 "
                      "is available and you require flax>=0.10, we can conclude that your requirements are "
                      "unsatisfiable.")


@pytest.mark.parametrize(("error", "everywhere"), [
    (UV_NO_FLAX_OF_ITS_ERA, True),  # no other Python brings a newer flax: stop asking
    ("Because nosuch was not found in the package registry and you require nosuch, ...", False),  # not required
    ("Because flaxx was not found in the package registry and you require flaxx, ...", True),
    # The interpreter may be what does not fit: another Python is worth a try.
    ("Because only flax<=0.8.5 is available and flax==0.8.5 depends on Python>=3.9,<3.13, ...", False),
])
def test_an_extra_package_missing_for_every_python_is_not_asked_again(error: str, everywhere: bool) -> None:
    assert install.missing_everywhere(Resolution("3.13", False, error=error), ("flax>=0.10", "flaxx")) is everywhere


def test_extra_packages_are_the_era_s_versions_in_wheels_for_the_python_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    # As uv answered for jax 0.4.34 with flax: builds allowed, flax 0.10.0 (tensorstore 0.1.66, no 3.13 wheel);
    # wheels only, uv would reach back to flax 0.6.1 on 3.13. The era's flax, as wheels, fits Python 3.12.
    asked: list[tuple[str, tuple[str, ...], bool]] = []

    def fake_uv(plan: InstallPlan, python: str, uv: str, platform: str | None, offline: bool,
                builds: bool = False) -> Resolution:
        asked.append((python, plan.requirements, builds))
        if builds:
            return Resolution(python, ok=True, versions={"jax": "0.4.34", "flax": "0.10.0", "tensorstore": "0.1.66"})
        if python == "3.13":
            return Resolution(python, ok=False, error="Because tensorstore==0.1.66 has no wheels with a matching "
                                                      "Python ABI tag (cp313) ...")
        return Resolution(python, ok=True, versions={"jax": "0.4.34", "flax": "0.10.0", "tensorstore": "0.1.66"})

    monkeypatch.setattr(install, "_resolve", fake_uv)
    monkeypatch.setattr(install, "_RESOLVED", install.Once())
    plan = InstallPlan(jax="0.4.34", backend="cpu", requirements=("jax[cpu]==0.4.34", "scipy", "flax"),
                       exclude_newer="2024-10-18T14:37:10Z", index_url="https://pypi.org/simple",
                       pythons=("3.13", "3.12"), requires=("flax",))
    chosen, attempts = install.choose_python(plan, ["3.13", "3.12"])
    assert chosen is not None
    assert chosen.python == "3.12"
    assert chosen.versions["flax"] == "0.10.0"
    assert asked[:2] == [("3.13", plan.requirements, True), ("3.13", (*plan.requirements, "flax==0.10.0"), False)]
    assert unresolvable_reason(plan, attempts[:1]) == (
        "the check requires flax: flax==0.10.0 (of jax 0.4.34's era) or a package it needs has no wheels for "
        "Python 3.13")

