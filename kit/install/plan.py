"""How to install one JAX release, era-correctly, and whether the index can.

An install plan is data: requirements, the era cut-off date, the indexes and
wheel folders. ``resolve`` asks uv to solve it without downloading the large
wheels, which is how we tell "not installable here" apart from a crash, and
how we pick a Python that the release's jaxlib has wheels for.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from typing import Collection, Sequence

from packaging.utils import canonicalize_name

from ..config import Matrix, Release
from ..errors import UsageError
from ..json_types import JsonObject
from ..requirements import package_name
from .index import PackageIndex
from .installer_env import uv_env
from .key import InstallKey, pinned_name
from .resolutions import Once, ResolutionStore, era_closed
from .uv_cache import holds_era
from .uv_errors import (CACHE_PREDATES_ERA, FIND_LINKS_UNREADABLE, NONE_OF_ITS_ERA, NOT_ON_INDEX, RELEASE_MISSING,
                        cache_gap, raise_if_network_trouble, uv_cause, uv_error)
from .uv_failures import raise_if_this_machine

# JAX's installation guide names these pages for wheels the index no longer has
# ("Installing older jaxlib wheels") and for the CUDA builds of the cuda*_pip era.
JAX_ARCHIVE_PAGE = "https://storage.googleapis.com/jax-releases/jax_releases.html"
JAX_CUDA_ARCHIVE_PAGE = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"

# These are pinned by the release itself, so they are exempt from the era
# cut-off (pruned wheels are sometimes re-uploaded years later).
_OWN_PACKAGES = ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt",
                 "libtpu", "libtpu-nightly")

# The extra each backend installs through, GPU ones newest first: the first one
# a release declares is the one to use (for the plan and for bisect's candidate list).
EXTRAS = {"cpu": ("cpu",), "cuda": ("cuda13", "cuda12", "cuda12_pip", "cuda"), "tpu": ("tpu",),
          # Compiling for a GPU without one (`kit.targets`): the plugin alone, without NVIDIA's libraries.
          "cuda-compile": ("cuda12-local", "cuda12_local", "cuda13-local")}

# What a target's compile needs besides the release: `jax.export` serializes through flatbuffers, and up to at
# least 0.5.3 imports absl's logging.
TARGET_PACKAGES = ("flatbuffers", "absl-py")

# What XLA's GPU compiler runs besides the plugin, by the extra that installs it: NVIDIA's ptxas, and libdevice
# (read up to jax 0.6), both from the nvcc wheel. Without them a compile-only compile fails ("libdevice not
# found" on 0.5.3, "No PTX compilation provider" on 0.12.0.1; measured 2026-12-05 with no CUDA toolkit in
# sight). The rest of NVIDIA's libraries (cuDNN, cuBLAS, NCCL: gigabytes) are loaded only to run. The names are
# the plugin's own `with-cuda` extra's; CUDA 13 moved libdevice to its own wheel (jax[cuda13-local] 0.12.0.1
# without nvidia-nvvm: "libdevice not found").
GPU_COMPILER_PACKAGES = {"cuda12-local": ("nvidia-cuda-nvcc-cu12",), "cuda12_local": ("nvidia-cuda-nvcc-cu12",),
                         "cuda13-local": ("nvidia-cuda-nvcc", "nvidia-nvvm")}

# Platform to resolve GPU plans for: the wheels clusters run.
GPU_PLATFORM = "x86_64-manylinux_2_28"


@dataclass(frozen=True)
class InstallPlan:
    jax: str
    backend: str
    requirements: tuple[str, ...]
    exclude_newer: str | None
    index_url: str
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    pythons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    pins: tuple[str, ...] = ()
    """``NAME==VERSION`` held fixed (bisect's ``--pin``), also in ``requirements``; exempt from the era cut-off."""
    requires: tuple[str, ...] = ()
    """The check's extra packages (`kit.requirements`), also in ``requirements``: resolved as of the same era."""

    def to_json(self) -> JsonObject:
        data: JsonObject = asdict(self)
        # A plan without pins or extras keeps the exact form (so the fingerprint, the environment
        # folder and the lock) it had before either existed.
        for name in ("pins", "requires"):
            if not data[name]:
                del data[name]
        return data

    def fingerprint(self, python: str) -> str:
        blob = json.dumps([self.to_json(), python], sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:10]

    def source_args(self) -> list[str]:
        """Where packages come from, as flags both uv and pip read: the index, extra indexes, find-links."""
        args = ["--index-url", self.index_url]
        for url in self.extra_index_urls:
            args += ["--extra-index-url", url]
        for link in self.find_links:
            args += ["--find-links", link]
        return args

    def uv_args(self, builds: bool = False) -> list[str]:
        """The resolver flags shared by ``uv pip compile`` and ``uv pip install``.

        A plan with extra packages installs wheels only, unless ``builds``
        (only to learn which versions are of the era: see `_era_wheels`).
        """
        args = self.source_args()
        if self.exclude_newer:
            args += ["--exclude-newer", self.exclude_newer]
            # A pinned version is asked for by name: it may be newer than the release's era.
            for name in (*_OWN_PACKAGES, *(pinned_name(pin) for pin in self.pins)):
                args += ["--exclude-newer-package", f"{name}=2100-01-01T00:00:00Z"]
        if self.requires and not builds:
            # Wheels only: an extra package of an old era often has no wheel for the newest Python
            # (tensorstore 0.1.66, flax's dependency for jax 0.4.34, has none for 3.13), and building
            # its sdist needs compilers and the network.
            args += ["--only-binary", ":all:"]
        return args


@dataclass(frozen=True)
class Resolution:
    python: str
    ok: bool
    versions: dict[str, str] = field(default_factory=dict)
    """Every package resolved and its exact version: the *versions*, of which a user's *pins* held some."""
    error: str = ""
    hashes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """sha256 of each resolved package's files, where the index gives them (see `_resolve`)."""
    kept: str = ""
    """When this answer was made, where it was kept from an earlier run (`kit.install.resolutions`); "" if now."""


def plan_install(matrix: Matrix, release: Release, key: InstallKey, index: PackageIndex) -> InstallPlan:
    """The requirements and era cut-off that install ``release`` as ``key`` asks: its backend, with its pins held
    fixed and a check's extra packages.

    ``key.requires`` is resolved with everything else, under the same cut-off, so
    the extra packages are of the release's era and fit its numpy and scipy.
    """
    notes: list[str] = []
    date = index.release_date(release.version)
    if date is None:
        exclude_newer = None
        notes.append(f"jax {release.version} is not on {matrix.install.index_url}; resolving without an era cut-off")
    else:
        cutoff = date + timedelta(days=matrix.install.era_slack_days)
        exclude_newer = cutoff.strftime("%Y-%m-%dT%H:%M:%SZ")
    backend, pins, requires = key.backend, key.pins, key.requires
    find_links = matrix.install.find_links + release.find_links + key.find_links
    jax_req = _jax_requirement(release.version, backend, index, notes)
    if "cuda12_pip]" in jax_req:
        # The cuda*_pip extras only resolve against JAX's own page of CUDA jaxlibs.
        find_links = find_links + (JAX_CUDA_ARCHIVE_PAGE,)
    pythons = (release.python,) if release.python else matrix.install.pythons
    return InstallPlan(
        jax=release.version,
        backend=backend,
        requirements=(jax_req, "scipy", *(TARGET_PACKAGES if backend in ("tpu", "cuda-compile") else ()),
                      *_compiler_packages(backend, jax_req), *requires, *pins),
        exclude_newer=exclude_newer,
        index_url=matrix.install.index_url,
        extra_index_urls=matrix.install.extra_index_urls + release.extra_index_urls,
        find_links=find_links,
        pythons=pythons,
        notes=tuple(notes),
        pins=pins,
        requires=requires,
    )


def _jax_requirement(version: str, backend: str, index: PackageIndex, notes: list[str]) -> str:
    if backend == "cpu":
        # jax[cpu] pins the matching jaxlib; for jax-only releases (0.4.37,
        # 0.5.2) it pins the jaxlib they were released against.
        return f"jax[cpu]=={version}"
    if backend in ("cuda", "tpu", "cuda-compile"):
        extras = index.jax_extras(version)
        extra = backend_extra(backend, extras)
        if extra is not None:
            notes.append(f"{'TPU' if backend == 'tpu' else 'GPU'} build through the jax[{extra}] extra, "
                         f"as declared by jax {version}")
            # Taken as declared, pins and all: jax 0.4.35's cuda12 extra pins
            # jaxlib 0.4.34, and that is what its GPU users got.
            return f"jax[{extra}]=={version}"
        raise UsageError(no_extra(version, backend), f"its extras are: {', '.join(sorted(extras))}")
    raise UsageError(f"unknown backend {backend!r}", "use --backend cpu, cuda or tpu")


def _compiler_packages(backend: str, jax_req: str) -> tuple[str, ...]:
    """What the GPU compiler of ``jax[extra]==version`` needs beside it, for a compile-only environment."""
    if backend != "cuda-compile" or "[" not in jax_req:
        return ()
    return GPU_COMPILER_PACKAGES.get(jax_req[jax_req.index("[") + 1:jax_req.index("]")], ())


def backend_extra(backend: str, declared: Collection[str]) -> str | None:
    """The extra of ``declared`` that installs ``backend``, or None when the release declares none."""
    return next((extra for extra in EXTRAS.get(backend, ()) if extra in declared), None)


# The sentences that say why a release does not install here: one wording whether
# the resolver found it out (`unresolvable_reason`) or the index's metadata did
# (kit.install.prediction, for bisect's candidate list).


def no_extra(version: str, backend: str) -> str:
    named = {"cuda": "CUDA", "tpu": "TPU", "cuda-compile": "CUDA plugin (compile-only)"}
    return f"jax {version} declares no {named.get(backend, backend)} extra"


def no_python(pythons: tuple[str, ...] | list[str]) -> str:
    return f"none of Python {', '.join(pythons)} is installed here"


def no_wheels(where: str, package: str, version: str, tried: str, *, on_this_platform: bool = False) -> str:
    if on_this_platform:
        return f"{where} has no {package} {version} wheels for Python {tried} on this platform"
    return f"{where} has no {package} {version} wheels (tried Python {tried})"


# Answers already given in this process, each asked once however many threads want it: a bisect lists
# its candidates, resolves ahead of its rounds and then prepares some of them; a sweep plans every release
# and then runs some; a release that resolves on no Python costs a uv call per interpreter each time.
_RESOLVED: Once[Resolution] = Once()


def resolve(plan: InstallPlan, python: str, uv: str | None = None, platform: str | None = None,
            offline: bool = False, store: ResolutionStore | None = None) -> Resolution:
    """Solve the plan for one Python without installing (metadata only).

    ``offline`` answers from uv's cache alone, in hundredths of a second
    instead of ten against a slow index, and only where the cache holds the
    whole era (`kit.install.uv_cache`); otherwise it does not resolve, and the
    caller asks the index. ``store`` keeps and gives back answers of closed eras.
    """
    if platform is None and plan.backend == "cuda":
        platform = GPU_PLATFORM
    key = (json.dumps(plan.to_json(), sort_keys=True), python, platform or "", offline)
    return _RESOLVED.get(key, lambda: _kept_or_resolved(plan, python, uv, platform, offline, store))


def _kept_or_resolved(plan: InstallPlan, python: str, uv: str | None, platform: str | None, offline: bool,
                      store: ResolutionStore | None) -> Resolution:
    """The store's answer where it has one for this closed era; else uv's, kept when it installs."""
    inputs: JsonObject = {"plan": plan.to_json(), "python": python, "platform": platform or ""}
    keep = store is not None and era_closed(plan.exclude_newer)
    kept = store.get(inputs) if store is not None and keep else None
    if kept is not None:
        return Resolution(python, ok=True, versions=dict(kept.versions), kept=kept.resolved_at,
                          hashes=dict(kept.hashes))
    resolution = (_era_wheels(plan, python, uv, platform, offline) if plan.requires
                  else _resolve(plan, python, uv, platform, offline))
    if store is not None and keep and resolution.ok:
        store.put(inputs, resolution.versions, resolution.hashes, "uv's cache, read after the era's cut-off" if offline else "the index")
    return resolution


# How `_era_wheels` says the era's extra packages have no wheels for a Python (`unresolvable_reason` reads it).
_NO_ERA_WHEELS = "has no wheels for Python "


def _era_wheels(plan: InstallPlan, python: str, uv: str | None, platform: str | None, offline: bool) -> Resolution:
    """A plan with extra packages: their versions of the release's era, as wheels for this Python.

    Asked for wheels alone, uv reaches back years for a version whose
    dependencies have wheels for this Python (flax 0.6.1, of 2022, for
    jax 0.4.34 on Python 3.13); asked with builds allowed, it names the era's
    versions (flax 0.10.0), whose tensorstore has no wheel for 3.13 and would
    be built from source. So the era's versions come first, then those exact
    versions as wheels; where they have none, the next Python is tried.
    """
    era = _resolve(plan, python, uv, platform, offline, builds=True)
    if not era.ok:
        return era
    names = sorted({package_name(text) for text in plan.requires})
    pinned = tuple(f"{name}=={era.versions[name]}" for name in names if name in era.versions)
    wheels = _resolve(replace(plan, requirements=plan.requirements + pinned), python, uv, platform, offline)
    if wheels.ok:
        return wheels
    return Resolution(python, ok=False, error=f"{', '.join(pinned)} (of jax {plan.jax}'s era) or a package it "
                                              f"needs {_NO_ERA_WHEELS}{python}; uv: {wheels.error}")


def _resolve(plan: InstallPlan, python: str, uv: str | None, platform: str | None, offline: bool,
             builds: bool = False) -> Resolution:
    uv = uv or find_uv()
    # Requirements on stdin: no temp folder for a killed session to leave behind. Offline, uv's log is read
    # too: where the cache lacks a version's metadata, uv passes over that version without a word (`-v` alone
    # shows it) and answers an older one, so optax 0.2.3 stood for jax 0.6.0's era, whose optax is 0.2.4.
    cmd = [uv, "pip", "compile", "-v" if offline else "--quiet", "--no-header", "--no-annotate",
           "--python-version", python, *plan.uv_args(builds), "-"]
    if not plan.find_links:
        # The index lists every file's sha256, so hashes cost nothing; a find-links
        # page may not, and uv would then download the wheels to hash them.
        cmd.append("--generate-hashes")
    if platform:
        cmd += ["--python-platform", platform]
    env = uv_env()
    if offline:
        env["UV_OFFLINE"] = "1"
    proc = subprocess.run(cmd, input="\n".join(plan.requirements) + "\n", capture_output=True, text=True, env=env)
    passed_over = _PASSED_OVER.findall(proc.stderr) if offline else []
    if proc.returncode != 0 and offline:  # uv's own words for the error, without its log
        cmd[3] = "--quiet"
        proc = subprocess.run(cmd, input="\n".join(plan.requirements) + "\n", capture_output=True, text=True,
                              env=env)
    if proc.returncode != 0:
        raise_if_this_machine(proc.stderr)  # a cut download, a cache uv cannot write: no answer about the release
        if not offline:
            raise_if_network_trouble(proc.stderr)
        return Resolution(python=python, ok=False, error=uv_error(proc.stderr))
    versions = parse_versions(proc.stdout)
    if passed_over:  # a version of the era was skipped for want of its metadata here: ask the index
        return Resolution(python=python, ok=False, error=CACHE_PREDATES_ERA)
    if offline and not holds_era(plan.index_url, bool(plan.extra_index_urls or plan.find_links), plan.exclude_newer,
                                 versions, uv):
        return Resolution(python=python, ok=False, error=CACHE_PREDATES_ERA)
    return Resolution(python=python, ok=True, versions=versions, hashes=parse_hashes(proc.stdout))


_PASSED_OVER = re.compile(r"`([^`]+)` needs to be downloaded from a registry")
"""uv's log line (``-v``) for a version it passed over offline because its metadata is not in the cache."""

def choose_python(plan: InstallPlan, available: list[str], offline: bool = False, first: str | None = None,
                  store: ResolutionStore | None = None) -> tuple[Resolution | None, list[Resolution]]:
    """The most preferred available interpreter the release installs on, and every attempt.

    One interpreter after another: concurrent uv calls contend for its cache
    and took five times longer here than the same calls in a row. ``first``
    is tried before the plan's order: a caller that already knows from the
    index which Python the jaxlib has wheels for (bisect's candidate list)
    skips the resolves that must fail, which took 40 s for jax 0.4.20 here.
    """
    attempts = []
    order = ([first] if first in plan.pythons else []) + [p for p in plan.pythons if p != first]
    for python in order:
        if python not in available:
            continue
        resolution = resolve(plan, python, offline=offline, store=store)
        attempts.append(resolution)
        if resolution.ok:
            return resolution, attempts
        if missing_everywhere(resolution, (*plan.requires, *plan.pins)):
            break  # the index has no such version for any Python: asking again costs a uv call each
        if offline and cache_gap(resolution.error):
            break  # the cache cannot choose among the Pythons: the index will be asked
    return None, attempts


def missing_everywhere(resolution: Resolution, requires: tuple[str, ...] = ()) -> bool:
    """uv found no version of the pinned jax or jaxlib at all (not merely none for this Python), or none of
    an extra package or ``--pin`` in ``requires`` (before the era's cut-off, for an extra package)."""
    if RELEASE_MISSING.search(resolution.error):
        return True
    if "Python" in resolution.error or "wheel" in resolution.error:
        return False  # the interpreter may be what does not fit: another Python is worth a try
    named = NOT_ON_INDEX.search(resolution.error) or NONE_OF_ITS_ERA.search(resolution.error)
    return named is not None and package_name(named.group(1)) in {package_name(text) for text in requires}


def parse_hashes(text: str) -> dict[str, tuple[str, ...]]:
    """``name==1.0 \\`` followed by ``--hash=sha256:...`` lines → {name: (sha256:..., ...)}."""
    hashes: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==", line)
        if pin:
            current = str(canonicalize_name(pin.group(1)))
        for found in re.findall(r"--hash=(\S+)", line):
            if current:
                hashes.setdefault(current, []).append(found)
    return {name: tuple(found) for name, found in hashes.items()}


def parse_versions(text: str) -> dict[str, str]:
    """``uv pip compile``'s ``name==1.0`` lines → {name: version}, names canonical."""
    versions = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;]+)", line.strip())
        if m:
            versions[str(canonicalize_name(m.group(1)))] = m.group(2)
    return versions


def unresolvable_reason(plan: InstallPlan, attempts: list[Resolution] | tuple[Resolution, ...]) -> str:
    """Why no Python could install the plan, in one sentence (uv's words go to the record)."""
    if not attempts:
        return no_python(plan.pythons)
    tried = ", ".join(a.python for a in attempts)
    where = ", ".join((plan.index_url, *plan.extra_index_urls, *plan.find_links))
    page = FIND_LINKS_UNREADABLE.search(attempts[-1].error)
    if page:  # it answered (a network failure stops at raise_if_network_trouble), with an error
        cause = attempts[-1].error.rsplit("cause:", 1)[-1].strip()
        return f"the find-links page {page.group(1)} could not be read ({cause}; tried Python {tried})"
    missing = RELEASE_MISSING.search(attempts[-1].error)
    if missing:
        return no_wheels(where, missing.group(1), missing.group(2), tried)
    extra = _unsatisfied_extra(plan, attempts[-1].error)
    if extra and _NO_ERA_WHEELS in attempts[-1].error:
        return f"the check requires {extra}: {attempts[-1].error.split(_NO_ERA_WHEELS, 1)[0]}{_NO_ERA_WHEELS}{tried}"
    if extra:
        era = f"uploaded before {plan.exclude_newer[:10]}, jax {plan.jax}'s era" if plan.exclude_newer else "on the index"
        return (f"the check requires {extra}, and no release of {package_name(extra)} {era}, installs with "
                f"jax {plan.jax} (tried Python {tried}): {uv_cause(attempts[-1].error)}")
    wheels = re.search(r"(\S+) \(v([\w.]+)\) with the following Python ABI tags: (.*?)(?:$|\s*hint)",
                       attempts[-1].error)
    if wheels:
        return f"{wheels.group(1).strip('`')} {wheels.group(2)} has wheels only for {wheels.group(3)} (tried Python {tried})"
    return f"no installed Python ({tried}) can install it; see install.resolver_error"


def _unsatisfied_extra(plan: InstallPlan, error: str) -> str | None:
    """The extra requirement uv's refusal names (as written where uv quotes it), or None when it names none."""
    named = [text for text in plan.requires
             if re.search(rf"(?<![\w.-]){re.escape(package_name(text))}(?![\w-])", error, re.IGNORECASE)]
    quoted = sorted((text for text in named if text in error), key=len, reverse=True)  # "flax>=0.10" over "flax"
    return quoted[0] if quoted else (named[0] if named else None)


def unsatisfied_extra(plan: InstallPlan, attempts: Sequence[Resolution]) -> str | None:
    """The check's extra requirement that kept the plan from resolving, or None when the release itself did."""
    if not plan.requires or not attempts or RELEASE_MISSING.search(attempts[-1].error):
        return None
    return _unsatisfied_extra(plan, attempts[-1].error)


def how_to_supply_extra(plan: InstallPlan, requirement: str) -> str:
    """What to do when a check's extra package has no release of the era that installs with the release."""
    era = f"uploaded by {plan.exclude_newer[:10]}" if plan.exclude_newer else "on the index"
    return (f"Ask for a {package_name(requirement)} {era} (loosen or drop the pin in requires / --requires), or run "
            f"a later jax release, whose era has the {package_name(requirement)} you need.")


def how_to_supply(version: str) -> str:
    return (
        f"Put a jaxlib {version} wheel for your Python in a folder and run again with "
        f"`-- --find-links DIR` (or add find_links = [\"DIR\"] to its [[release]] in matrix.toml). "
        f"JAX's installation guide keeps pruned jaxlib wheels at {JAX_ARCHIVE_PAGE} "
        f"(CUDA builds at {JAX_CUDA_ARCHIVE_PAGE}); where that page is reachable, use it as the find-links."
    )


def find_uv() -> str:
    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin  # the PyPI 'uv' package ships the binary

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        raise UsageError("uv is not installed", "run: python3 -m pip install -r requirements.txt") from None
