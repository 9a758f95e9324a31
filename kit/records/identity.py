"""A run's identity: everything that can change its outcome, and one answer to "is that the same run?".

An outcome depends on more than the release: what ran (a check and its
parameters, or a script's content), the release or commit, every package
installed beside it, the backend and the hardware under it (the CPU model;
the GPU model and its driver), and the environment variables JAX, XLA and
their runtimes read (`repro.environment.jax_variables`). A bisect's probe
cache (`kit.bisect.probe.cache`) and the matrix's "is this record current"
(`kit.records.currency`) both ask `same` of two identities made by
`run_identity`, so a probe or a record is reused exactly when nothing that
could change its outcome differs, and `mismatch` says what did when it is not.

Not in it on purpose: the machine's name and id (two nodes with the same
hardware and packages measure the same thing; one id can hide two CPU models,
as a container's /etc/machine-id does), the bisect's bounds and name, and the
time of day.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

from packaging.utils import canonicalize_name

from ..json_types import JsonObject, as_object

IDENTITY_SCHEMA = 2
"""Bump when a field changes meaning: identities of another schema are never the same as this one's, unless
`Identity.from_json` migrates them. 2: package names in `canonicalize_name`'s form (``ml-dtypes``); schema 1
spelled them with underscores (``ml_dtypes``) and is read back renamed, so its records and probes still answer."""

_MIGRATED_SCHEMAS = (1,)
"""Earlier schemas `Identity.from_json` reads (and `Identity.earlier_forms` writes, to find their files)."""

HEADLINE_PACKAGES = ("jax", "jaxlib", "numpy", "scipy", "ml-dtypes")
"""The packages a one-line summary names; every package counts in `same`."""


@dataclass(frozen=True)
class Identity:
    """What one run's outcome depends on. Build it with `run_identity`; compare with `same` and `mismatch`."""

    subject: Mapping[str, object]
    """What ran: ``{"check", "parameters", "preset", "kit_version"}`` or ``{"script_sha256"}``."""
    jax: str
    """The release asked for (a commit's own version for a commit)."""
    backend: str
    python: str | None
    packages: Mapping[str, str]
    """Every installed package and its version (pins held with ``--pin`` included); empty when none installed."""
    install: Mapping[str, object]
    """How it was installed: the requirements (pins included) and the era cut-off."""
    hardware: Mapping[str, object]
    """The CPU model, and for a GPU backend the GPUs and their driver (`kit.run.facts.hardware_facts`)."""
    variables: Mapping[str, str]
    """Every JAX/XLA variable that was set, with its value."""
    commit: str | None = None
    """The JAX commit whose sources ran over the release, for a commit probe."""
    schema: int = IDENTITY_SCHEMA

    def to_json(self) -> JsonObject:
        data: JsonObject = json.loads(json.dumps(asdict(self), sort_keys=True, default=dict))  # plain JSON values
        return data

    def digest(self) -> str:
        """A file-name-safe hash of the whole identity."""
        return _hash(self.to_json(), 24)

    def question(self) -> str:
        """A hash of what is asked (what ran, on which release or commit, which backend), not where or with what.

        Identities with the same question are the runs that could have answered
        it: the probe cache keeps them together, to say why one was not reused.
        """
        data = self.to_json()
        return _hash({key: data[key] for key in ("subject", "jax", "commit", "backend", "schema")}, 16)

    @classmethod
    def from_json(cls, data: object) -> Identity:
        """An identity read back from a record or a probe file (schema 1 migrated); ValueError when it is not one."""
        if not isinstance(data, Mapping) or data.get("schema") not in (IDENTITY_SCHEMA, *_MIGRATED_SCHEMAS):
            raise ValueError(f"not an identity of schema {IDENTITY_SCHEMA}")
        try:
            packages = {_package_name(name): str(version) for name, version in sorted(data["packages"].items())}
            return cls(subject=dict(data["subject"]), jax=str(data["jax"]), backend=str(data["backend"]),
                       python=data.get("python"), packages=packages, install=dict(data["install"]),
                       hardware=dict(data["hardware"]), variables=dict(data["variables"]),
                       commit=data.get("commit"))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"an identity without a usable {error}") from None

    def earlier_forms(self) -> list[Identity]:
        """This identity as the earlier schemas `from_json` migrates wrote it: where their files are (their
        `digest` and `question`), so a probe kept before the bump is still found."""
        underscored = {name.replace("-", "_"): version for name, version in sorted(self.packages.items())}
        return [replace(self, packages=underscored, schema=schema) for schema in _MIGRATED_SCHEMAS]


def run_identity(*, subject: Mapping[str, object], jax: str, backend: str, python: str | None,
                 packages: Mapping[str, str], requirements: Sequence[str], exclude_newer: str | None,
                 hardware: Mapping[str, object], variables: Mapping[str, str], commit: str | None = None) -> Identity:
    """The one way to make an identity, for a probe and for a record alike (values in their normal form)."""
    return Identity(
        subject=json.loads(json.dumps(subject, sort_keys=True)),  # as it reads back from a file
        jax=jax, backend=backend, python=python,
        packages={_package_name(name): str(version) for name, version in sorted(packages.items())},
        install={"requirements": sorted(requirements), "exclude_newer": exclude_newer},
        hardware={key: value for key, value in sorted(hardware.items()) if value is not None},
        variables=dict(sorted(variables.items())), commit=commit)


def same(earlier: Identity, here: Identity) -> bool:
    """True when nothing that could change the outcome differs."""
    return earlier.to_json() == here.to_json()


def same_install(earlier: Identity, here: Identity) -> bool:
    """For a run that installed nothing (not installable): the same release, backend and install request.

    What was asked of it, the hardware and the variables cannot change
    whether the index has its wheels.
    """
    return (earlier.jax, earlier.commit, earlier.backend, dict(earlier.install)) == \
        (here.jax, here.commit, here.backend, dict(here.install))


def mismatch(earlier: Identity, here: Identity) -> list[str]:
    """What differs, one phrase each, earlier value first: ``JAX_ENABLE_X64 unset there, 1 here``."""
    found: list[str] = []
    if dict(earlier.subject) != dict(here.subject):
        found.append(_subject_change(earlier.subject, here.subject))
    for what, there, now in (("jax", earlier.jax, here.jax), ("commit", earlier.commit, here.commit),
                             ("backend", earlier.backend, here.backend), ("Python", earlier.python, here.python)):
        if there != now:
            found.append(f"{what} {there or 'none'} there, {now or 'none'} here")
    for there_, now_ in ((earlier.packages, here.packages), (earlier.install, here.install),
                         (earlier.hardware, here.hardware)):
        found += [f"{name} {_value(a)} there, {_value(b)} here" for name, a, b in _changed(there_, now_)]
    found += [f"{name} {_value(a, 'unset')} there, {_value(b, 'unset')} here"
              for name, a, b in _changed(earlier.variables, here.variables)]
    return found


def summary(identity: Identity) -> str:
    """Why two runs matched, in one line: what the identity holds, headline packages named."""
    subject = identity.subject
    what = (f"script sha256 {str(subject.get('script_sha256'))[:12]}{_script_settings(subject)}"
            if "script_sha256" in subject
            else f"check {subject.get('check')} ({_parameters_text(subject)}, kit {subject.get('kit_version')})")
    named = [f"{name} {identity.packages[name]}" for name in HEADLINE_PACKAGES if name in identity.packages]
    others = len(identity.packages) - len(named)
    packages = ", ".join(named) + (f" and {others} more packages" if others > 0 else "") if named else "nothing installed"
    hardware = ", ".join(f"{value}" for value in identity.hardware.values()) or "unknown hardware"
    variables = ", ".join(f"{k}={v}" for k, v in identity.variables.items()) or "none set"
    release = f"jax {identity.jax}" + (f" at commit {identity.commit[:12]}" if identity.commit else "")
    return (f"{what}; {release} on Python {identity.python or '—'} with {packages}; {identity.backend} on "
            f"{hardware}; JAX/XLA variables: {variables}")


def _script_settings(subject: Mapping[str, object]) -> str:
    """A script's settings that are set (``--host-devices``, ``--requires``, ``--bad-if``), as `` (name=value)``."""
    settings = [f"{key}={_value(value)}" for key, value in sorted(subject.items())
                if key != "script_sha256" and value is not None]
    return f" ({', '.join(settings)})" if settings else ""


def _subject_change(there: Mapping[str, object], here: Mapping[str, object]) -> str:
    if ("script_sha256" in there or "script_sha256" in here) \
            and there.get("script_sha256") != here.get("script_sha256"):
        return (f"the script's content (sha256 {str(there.get('script_sha256'))[:12]} there, "
                f"{str(here.get('script_sha256'))[:12]} here)")
    return "what ran: " + "; ".join(f"{name} {_value(a)} there, {_value(b)} here" for name, a, b in _changed(there, here))


def _changed(there: Mapping[str, object], here: Mapping[str, object]) -> list[tuple[str, object, object]]:
    return [(key, there.get(key), here.get(key)) for key in sorted(set(there) | set(here))
            if there.get(key) != here.get(key)]


def _value(value: object, none: str = "none") -> str:
    if value is None:
        return none
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _parameters_text(subject: Mapping[str, object]) -> str:
    parameters = as_object(subject.get("parameters"))
    text = ", ".join(f"{k}={_value(v)}" for k, v in sorted(parameters.items()) if k != "script_sha256")
    preset = f"preset {subject['preset']}; " if subject.get("preset") else ""
    return preset + (text or "no parameters")


def packages_fingerprint(packages: Mapping[str, str]) -> str:
    """A short hash naming an installed package set: equal sets, equal fingerprints.

    Names compare as PEP 503 normalises them (``Jax_Cuda12-Plugin`` is
    ``jax-cuda12-plugin``) and order does not matter, so the same installation
    read twice gets the same name, and any added, removed or changed package
    gets another. A user's own interpreter (`kit.records.origin`) is named by it;
    its identity holds the packages themselves.
    """
    normal = {_package_name(name): str(version) for name, version in packages.items()}
    return hashlib.sha256(json.dumps(sorted(normal.items())).encode()).hexdigest()[:16]


def _package_name(name: str) -> str:
    """The one normal form of a package name, so ``ml-dtypes``, ``ml_dtypes`` and ``ML.Dtypes`` are one package."""
    return str(canonicalize_name(name))


def _hash(data: object, length: int) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:length]


__all__ = ["HEADLINE_PACKAGES", "IDENTITY_SCHEMA", "Identity", "mismatch", "packages_fingerprint", "run_identity",
           "same", "same_install", "summary"]
