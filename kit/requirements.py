"""A check's extra packages (``requires``): parsed once where they enter, named in what a run records.

Real repros import flax, optax or equinox. Such packages are installed into
the release's environment with the same era cut-off as numpy and scipy
(`kit.install`), so jax 0.4.30 gets a flax of its time. Here they are only
text: each requirement is checked once, where it enters (matrix.toml's
``requires``, a ``--requires`` flag), and put in one normal form, so the same
set always keys the same environment and lock, whatever order or spelling
it was given in.

The tuple this returns is general on purpose: anything a run must have
besides the release's own packages (a library, or a pin held fixed across
probes such as ``numpy==1.26.4``) travels as the same sorted tuple of
requirement strings.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .errors import KitError, UsageError

# The release under test brings these; a check asking for its own would test something else.
RELEASE_PACKAGES = frozenset({"jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin",
                              "jax-cuda13-pjrt", "jax-plugins"})

# Import names that differ from the package that provides them: the few a JAX user meets.
_PACKAGE_OF_MODULE = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python",
                      "absl": "absl-py", "google.protobuf": "protobuf", "tf": "tensorflow", "skimage": "scikit-image"}


def requirement(text: str, where: str, error: type[KitError] = UsageError) -> str:
    """``text`` as one requirement in its normal form (``Flax >= 0.8`` -> ``flax>=0.8``), or ``error``.

    Refused: what is not a requirement, a URL or path (the era cut-off cannot
    apply to it), and the release's own packages.
    """
    try:
        parsed = Requirement(text) if isinstance(text, str) else None
    except InvalidRequirement as exc:
        raise error(f"{where} {text!r} is not a package requirement ({exc})",
                    'write it as pip does: "flax", "optax>=0.2", "equinox==0.11.4"') from None
    if parsed is None:
        raise error(f"{where} {text!r} is not a package requirement", 'write it as a string, e.g. "flax"')
    name = canonicalize_name(parsed.name)
    if parsed.url:
        raise error(f"{where} {text!r} names a URL or path",
                    "give a package name and version range: the kit resolves it as of each release's date")
    if name in RELEASE_PACKAGES:
        raise error(f"{where} {text!r} is part of the release under test",
                    "the kit installs each release's own jax and jaxlib; list only other packages")
    extras = f"[{','.join(sorted(canonicalize_name(extra) for extra in parsed.extras))}]" if parsed.extras else ""
    marker = f"; {parsed.marker}" if parsed.marker else ""
    return f"{name}{extras}{parsed.specifier}{marker}"


def requirements(texts: Iterable[str], where: str, error: type[KitError] = UsageError) -> tuple[str, ...]:
    """Each requirement in its normal form, once each, sorted: the one spelling of a requirement set."""
    return tuple(sorted({requirement(text, where, error) for text in texts}))


def merged(*sets: Iterable[str]) -> tuple[str, ...]:
    """Requirement sets (each already in normal form) as one."""
    return tuple(sorted({text for found in sets for text in found}))


def package_name(normal: str) -> str:
    """The package a requirement in normal form names (``optax>=0.2`` -> ``optax``)."""
    return str(canonicalize_name(Requirement(normal).name))


def installed_versions(requires: Iterable[str], versions: Mapping[str, str]) -> dict[str, str | None]:
    """The version of each required package in ``versions`` (None where it is missing), by package name."""
    found: dict[str, str] = {canonicalize_name(name): version for name, version in versions.items()}
    return {name: found.get(name) for name in sorted({package_name(text) for text in requires})}


def package_for_module(module: str) -> str:
    """The package that most likely provides a top-level module (``sklearn`` -> ``scikit-learn``)."""
    return _PACKAGE_OF_MODULE.get(module, module)


def versions_text(versions: Mapping[str, str | None]) -> str:
    """``flax 0.10.1, optax 0.2.3``: what the extra packages were, for a probe line or a matrix cell."""
    return ", ".join(f"{name} {version or 'missing'}" for name, version in versions.items())
