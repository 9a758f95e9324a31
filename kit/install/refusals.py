"""A uv refusal that is not about the release: uv kept offline by the user, or the user's own input to blame.

`kit.install.release` asks these once no Python resolved a plan, before the
refusal becomes "not installable" (a record that blames the release). uv's
network failures are read earlier, as each call fails
(`uv_errors.raise_if_network_trouble`); the sentence for a release that truly
does not install is `plan.unresolvable_reason`.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

from packaging.utils import canonicalize_name

from ..errors import IndexUnreachable, UsageError
from ..requirements import package_name
from .plan import InstallPlan, Resolution
from .uv_errors import NOT_ON_INDEX, uv_cause

# The values uv reads as true in a boolean variable such as UV_OFFLINE (clap's "boolish" words).
_TRUE_WORDS = ("1", "true", "yes", "on", "y", "t")


def offline_setting() -> str | None:
    """``UV_OFFLINE=VALUE`` when the user's environment turns every uv call offline (`uv_env` passes it on)."""
    value = os.environ.get("UV_OFFLINE", "")
    return f"UV_OFFLINE={value}" if value.strip().lower() in _TRUE_WORDS else None


def raise_if_offline(plan: InstallPlan) -> None:
    """`IndexUnreachable` when the plan resolved on no Python while the user's environment kept uv offline.

    uv then reads its cache alone, and a cache that lacks the release (an
    empty one says "there is no version of jax[cpu]==0.6.0") says nothing
    about the release: as for an outage, exit 4 and no record.
    """
    setting = offline_setting()
    if setting:
        raise IndexUnreachable(f"jax {plan.jax} did not resolve with uv offline ({setting} in the environment): uv "
                               "read only its cache, which may lack what the release needs, so nothing is known "
                               "about the release", "unset UV_OFFLINE so that uv can ask the index (nothing was "
                               "recorded); releases whose environment is already built run offline")


# uv's words when a pinned version (exempt from the era's cut-off) is not on the index at all.
_NO_SUCH_VERSION = re.compile(r"there is no version of ([A-Za-z0-9_.\-]+)==")


def blamed_input(plan: InstallPlan, attempts: Sequence[Resolution]) -> UsageError | None:
    """The user's own input that uv's refusal blames, as the UsageError to stop with; None when it blames the release.

    A package the check requires (``--requires``, ``requires``) that is not on
    the index at all, a ``--pin`` whose version is not there, or a pin that
    cannot be installed with the release on any Python tried: each is about
    that input, whatever the release, and a not-installable record would pin
    the blame on the release's era. A required package that has no version of
    the release's era is the era's (`unresolvable_reason` says so).
    """
    where = ", ".join((plan.index_url, *plan.extra_index_urls, *plan.find_links))
    for attempt in attempts:
        unknown = NOT_ON_INDEX.search(attempt.error)
        absent = unknown or _NO_SUCH_VERSION.search(attempt.error)
        for text in plan.requires:
            if unknown and canonicalize_name(unknown.group(1)) == package_name(text):
                return UsageError(f"the check requires {text}, and {unknown.group(1)} is not on the package index "
                                  f"({where})", "check the name (the one pip installs, e.g. scikit-learn for sklearn) "
                                                "in --requires or the check's requires in matrix.toml")
        for pin in plan.pins:
            if absent and canonicalize_name(absent.group(1)) == package_name(pin):
                return UsageError(f"--pin {pin}: {pin.replace('==', ' ')} is not on the package index ({where})",
                                  f"drop or change --pin {pin}")
    tried = ", ".join(attempt.python for attempt in attempts)
    for attempt in attempts:
        for pin in plan.pins:
            if _names(attempt.error, pin):  # the pin is in the conflict uv found, with jax or with the Python
                return UsageError(f"the pin {pin} cannot be installed with jax {plan.jax} on Python {tried}: "
                                  f"{uv_cause(attempt.error)}", f"drop or change --pin {pin}")
    return None


def _names(error: str, requirement: str) -> bool:
    """Does uv's ``error`` name the package of ``requirement`` (as uv spells it: ``ml-dtypes`` for ``ml_dtypes``)?"""
    named = {canonicalize_name(word.rstrip(".")) for word in re.findall(r"[A-Za-z][A-Za-z0-9._-]*", error)}
    return package_name(requirement) in named
